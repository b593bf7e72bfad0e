"""The 30 real-world scenarios of the KS@N bank: each builder returns its scenarios as dicts (title, form, kind,
prompt and exact pmf). The wording and the systems are data; :mod:`.realworld` turns them into problems.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from fractions import Fraction
import textwrap

from ..exact_pmf import F, _enumerate, _uniform, convolve, interleave, markov_distribution, metropolis_kernel




# ============================================================================================ shared wording

_SCHEDULER = ("Scheduling model: execution proceeds one step at a time. At every step the scheduler chooses one of "
              "the threads that still have work left, each such thread being equally likely, and that thread "
              "performs its next step as a single indivisible operation. Statements run exactly in program order "
              "(no compiler or hardware reordering), and no other activity interferes.")

_CLOSINGS = (
    "Imagine this happens exactly once. Report the outcome of that single run.",
    "Think of one particular execution, with its own random choices, and tell me what it produced.",
    "Simulate a single run, making the random choices yourself as the process would, and give its result.",
    "Give the result of one run, picked at random the way the system itself would pick it.",
    "One run is performed. What is its outcome?",
)


def _closing(i: int) -> str:
    return _CLOSINGS[i % len(_CLOSINGS)]


def _code(src: str) -> str:
    return textwrap.indent(textwrap.dedent(src).strip("\n"), "    ")


def _text(*parts: str) -> str:
    return "\n\n".join(p.strip("\n").rstrip() for p in parts if p and p.strip())


# ============================================================================================ scenarios

def _os_concurrency() -> list[dict]:
    out = []

    # 01: lost updates, 2 threads x 2 non-atomic increments.
    def read(sh, lo):
        lo["tmp"] = sh["counter"]

    def write(sh, lo):
        sh["counter"] = lo["tmp"] + 1

    pmf = interleave([[read, write, read, write]] * 2, {"counter": 0}, lambda sh: sh["counter"])
    out.append(dict(title="racy counter, 2 threads x 2 increments", form="code", kind="integer", pmf=pmf,
                    prompt=_text(
                        "Two threads share a global `counter` that starts at 0. Both run this function, and there "
                        "is no lock:",
                        _code("""
                            def worker():
                                global counter
                                for _ in range(2):
                                    tmp = counter        # one step: read the shared value
                                    counter = tmp + 1    # one step: write the new value
                            """),
                        "The main thread starts both workers, waits for both to finish, then prints `counter`.",
                        _SCHEDULER,
                        "The program is run one time. What number does it print?")))

    # 02: interleaved prints, thread A prints two lines, thread B one.
    def say(word):
        def step(sh, lo):
            sh["out"].append(word)
        return step

    pmf = interleave([[say("ping"), say("pang")], [say("pong")]], {"out": []}, lambda sh: "\n".join(sh["out"]))
    order = ["ping\npang\npong", "ping\npong\npang", "pong\nping\npang"]
    out.append(dict(title="two threads printing, 3 lines", form="code", kind="option",
                    pmf={k: pmf.get(k, F(0)) for k in order},
                    prompt=_text(
                        "A program starts two threads at the same moment:",
                        _code("""
                            def thread_a():
                                print("ping")
                                print("pang")

                            def thread_b():
                                print("pong")
                            """),
                        "Each print call writes one whole line and counts as one step. " + _SCHEDULER,
                        "Consider one execution. Write down the complete output of that execution, all three "
                        "lines in the order they appear.")))

    # 03: an unsynchronised reader observes a writer mid-way.
    def inc(sh, lo):
        sh["hits"] += 1

    def peek(sh, lo):
        sh["seen"] = sh["hits"]

    pmf = interleave([[inc, inc, inc], [peek]], {"hits": 0, "seen": None}, lambda sh: sh["seen"])
    out.append(dict(title="reader sees a writer part-way", form="code", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A shared integer `hits` starts at 0. Two threads are launched together:",
                        _code("""
                            # writer thread: three atomic increments
                            for _ in range(3):
                                hits.atomic_add(1)      # one step each

                            # reader thread: a single atomic load, then it logs what it saw
                            seen = hits.atomic_load()   # one step
                            log(seen)
                            """),
                        "Only the three increments and the single load are steps that compete for the CPU (the "
                        "logging itself does not change anything). " + _SCHEDULER,
                        "What value does the reader log in one run of this program?")))

    # 04: check-then-act lazy initialisation, 3 threads.
    def check(sh, lo):
        lo["seen"] = sh["ready"]

    def act(sh, lo):
        if not lo["seen"]:
            sh["ready"] = True
            sh["inits"] += 1

    pmf = interleave([[check, act]] * 3, {"ready": False, "inits": 0}, lambda sh: sh["inits"])
    out.append(dict(title="check-then-act lazy init, 3 threads", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "Three worker threads each call the same lazy-initialisation routine of a shared cache "
                        "object once. The routine has two steps. Step one: the thread reads the shared flag "
                        "`ready` (initially false) into a private variable. Step two: if the value it read was "
                        "false, the thread builds the cache, sets `ready` to true and adds one to a shared counter "
                        "`builds` (initially 0); all of step two is one indivisible operation. If the value it "
                        "read was true, step two does nothing. There is no lock around the two steps, so several "
                        "threads may build the cache.",
                        _SCHEDULER,
                        "After all three threads have finished, the program prints `builds`. " + _closing(0))))

    # 05: atomic doubling races a non-atomic add.
    def double(sh, lo):
        sh["x"] *= 2

    def load(sh, lo):
        lo["t"] = sh["x"]

    def store3(sh, lo):
        sh["x"] = lo["t"] + 3

    pmf = interleave([[double], [load, store3]], {"x": 1}, lambda sh: sh["x"])
    out.append(dict(title="atomic x*=2 against non-atomic x+=3", form="code", kind="integer", pmf=pmf,
                    prompt=_text(
                        "Shared variable `x` starts at 1. Two threads run concurrently:",
                        _code("""
                            # thread T1 (the hardware does this in one atomic instruction)
                            x = x * 2            # one step

                            # thread T2 (compiled into a separate load and store)
                            r = x                # one step: load
                            x = r + 3            # one step: store
                            """),
                        _SCHEDULER,
                        "Once both threads are done, the program prints `x`. What is printed in one run?")))

    # 06: store buffering litmus test under a sequentially consistent, uniformly random schedule.
    def w(var):
        def step(sh, lo):
            sh[var] = 1
        return step

    def r(var, reg):
        def step(sh, lo):
            sh[reg] = sh[var]
        return step

    pmf = interleave([[w("x"), r("y", "r1")], [w("y"), r("x", "r2")]], {"x": 0, "y": 0, "r1": 0, "r2": 0},
                     lambda sh: f"r1={sh['r1']} r2={sh['r2']}")
    order = ["r1=0 r2=0", "r1=0 r2=1", "r1=1 r2=0", "r1=1 r2=1"]
    out.append(dict(title="store-buffering litmus test (sequentially consistent)", form="code", kind="option",
                    pmf={k: pmf.get(k, F(0)) for k in order},
                    prompt=_text(
                        "Shared variables x and y both start at 0. Two threads run once each:",
                        _code("""
                            # thread 1            # thread 2
                            x = 1                 y = 1
                            r1 = y                r2 = x
                            """),
                        "Every line is one step. " + _SCHEDULER,
                        "After both threads finish, the main thread prints one line of the form "
                        "`r1=<value of r1> r2=<value of r2>`. Give the line printed by one execution.")))
    return out


def _garbage_collection() -> list[dict]:
    out = []

    # 01: uniformly random finalisation order of 3 objects.
    names = ["buffer", "session", "socket"]
    pmf = _enumerate([_uniform(list(itertools.permutations(names)))], lambda perm: perm[1])
    out.append(dict(title="second finaliser among 3 objects", form="text", kind="option",
                    pmf={k: pmf[k] for k in names},
                    prompt=_text(
                        "A request handler creates three temporary objects named buffer, session and socket, and "
                        "drops every reference to them when it returns. The next collection finds all three "
                        "unreachable and queues their finalisers together. This runtime makes no ordering "
                        "promise: the finalisers run one after another in an order chosen uniformly at random "
                        "among all possible orders. Each finaliser logs its object's name.",
                        "Which object's name is logged second? " + _closing(1))))

    # 02: minor collections triggered by allocations, Binomial(6, 1/4).
    pmf = convolve(*([{0: F(3, 4), 1: F(1, 4)}] * 6))
    out.append(dict(title="minor GCs over 6 allocations (p=1/4 each)", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "In a generational runtime, a program performs six allocations in its hot loop. Because "
                        "of varying nursery usage by other code, each of these allocations independently finds "
                        "the young generation full with probability 1/4, and in that case it triggers one minor "
                        "collection before proceeding; otherwise no collection happens for that allocation.",
                        "How many minor collections occur during one pass of this loop? " + _closing(2))))

    # 03: a weak reference observed over three steps with random collections.
    def gc_trace(c1, c2, c3):
        alive, lines = True, []
        for c in (c1, c2, c3):
            alive = alive and not c
            lines.append("alive" if alive else "gone")
        return "\n".join(lines)

    coin = {True: F(1, 3), False: F(2, 3)}
    pmf = _enumerate([coin] * 3, gc_trace)
    order = ["alive\nalive\nalive", "alive\nalive\ngone", "alive\ngone\ngone", "gone\ngone\ngone"]
    out.append(dict(title="weak reference checked 3 times, GC w.p. 1/3 per check", form="code", kind="option",
                    pmf={k: pmf.get(k, F(0)) for k in order},
                    prompt=_text(
                        "Consider this Python-like program:",
                        _code("""
                            import random, weakref

                            obj = Payload()
                            ref = weakref.ref(obj)
                            del obj              # nothing else refers to the payload now

                            for step in range(3):
                                if random.random() < 1/3:   # independent each time
                                    collect_garbage()       # reclaims every unreachable object
                                print("alive" if ref() is not None else "gone")
                            """),
                        "Assume the payload can only be reclaimed by `collect_garbage()` (no reference counting), "
                        "and that a reclaimed object makes `ref()` return None from then on.",
                        "Run it once in your head with genuinely random coin flips. What are the three printed "
                        "lines?")))

    # 04: mark-and-sweep with randomly live roots.
    edges = {"A": ["B"], "B": ["C"], "C": ["A"], "D": ["C"], "E": ["F"], "F": []}
    roots = {"p": "A", "q": "D", "r": "E"}

    def swept(lp, lq, lr):
        live = [roots[v] for v, keep in zip("pqr", (lp, lq, lr)) if keep]
        seen, stack = set(), list(live)
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(edges[node])
        return len(edges) - len(seen)

    half = {True: F(1, 2), False: F(1, 2)}
    pmf = _enumerate([half] * 3, swept)
    out.append(dict(title="mark-and-sweep, roots live w.p. 1/2", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A heap holds six objects A, B, C, D, E and F with these references between them: A points "
                        "to B, B points to C, C points to A, D points to C, E points to F, and F points to nothing. "
                        "There are three local variables that might still be in use when a mark-and-sweep "
                        "collection starts: p refers to A, q refers to D and r refers to E. Each of the three "
                        "variables is still live with probability 1/2, independently of the others; live "
                        "variables are the only roots. The collector marks everything reachable from the roots and "
                        "frees every unmarked object.",
                        "How many objects does this collection free? " + _closing(3))))

    # 05: allocations until the heap cannot satisfy a request.
    def allocs_until_full(free: int) -> dict[int, Fraction]:
        dist: dict[int, Fraction] = defaultdict(Fraction)
        for size in (1, 2, 3):
            if size > free:
                dist[0] += F(1, 3)
            else:
                for k, q in allocs_until_full(free - size).items():
                    dist[k + 1] += F(1, 3) * q
        return dict(dist)

    pmf = allocs_until_full(8)
    out.append(dict(title="allocations of size U{1,2,3} before an 8-unit heap fills", form="code",
                    kind="integer", pmf=pmf,
                    prompt=_text(
                        "A toy allocator manages a heap of 8 free units and only calls the garbage collector when "
                        "a request does not fit:",
                        _code("""
                            import random

                            free = 8
                            allocations = 0
                            while True:
                                size = random.choice([1, 2, 3])   # each size equally likely, independent
                                if size > free:
                                    break                         # a collection would be triggered here
                                free -= size
                                allocations += 1
                            print(allocations)
                            """),
                        "Execute this program once, drawing the random sizes yourself. What does it print?")))

    # 06: total GC pause over 3 requests.
    pause = {0: F(2, 3), 5: F(1, 4), 20: F(1, 12)}
    pmf = convolve(pause, pause, pause)
    out.append(dict(title="total GC pause over 3 requests (0/5/20 ms)", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A web service handles three requests one after another. During each request the JVM "
                        "either does not pause for garbage collection (probability 2/3), performs a short young-"
                        "generation pause of exactly 5 ms (probability 1/4), or performs a full collection that "
                        "pauses for exactly 20 ms (probability 1/12). What happens during one request is "
                        "independent of the others, and there is never more than one pause per request.",
                        "Add up the garbage-collection pause time, in milliseconds, over the three requests. "
                        + _closing(4))))
    return out


def _network() -> list[dict]:
    out = []

    # 01: two packets with jitter, printed in arrival order.
    def arrival(j1, j2):
        t_a, t_b = 0 + 2 + j1, 1 + 1 + j2
        return "A\nB" if t_a <= t_b else "B\nA"

    jitter = _uniform([0, 1, 2, 3])
    pmf = _enumerate([jitter, jitter], arrival)
    order = ["A\nB", "B\nA"]
    out.append(dict(title="two packets with jitter, arrival order", form="code", kind="option",
                    pmf={k: pmf.get(k, F(0)) for k in order},
                    prompt=_text(
                        "The following pseudo-code simulates two packets crossing a congested link:",
                        _code("""
                            import random

                            def link_delay(base_ms):
                                # congestion adds 0, 1, 2 or 3 ms, each equally likely, independently per packet
                                return base_ms + random.choice([0, 1, 2, 3])

                            arrive_a = 0 + link_delay(2)   # packet A leaves at t = 0 ms
                            arrive_b = 1 + link_delay(1)   # packet B leaves at t = 1 ms
                            # the receiver prints the packets in arrival order; on a tie A is printed first
                            if arrive_a <= arrive_b:
                                print("A"); print("B")
                            else:
                                print("B"); print("A")
                            """),
                        "The script is executed once. What are the two lines it prints?")))

    # 02: retransmissions with loss 3/10 and at most 4 attempts.
    loss = F(3, 10)
    pmf = {k: loss ** k * (1 - loss) for k in range(3)}
    pmf[3] = loss ** 3
    out.append(dict(title="retransmissions, loss 0.3, at most 4 attempts", form="code", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A sender uses this stop-and-wait loop over a lossy radio link:",
                        _code("""
                            import random

                            retransmissions = 0
                            for attempt in range(4):              # at most 4 attempts in total
                                lost = random.random() < 0.3      # each attempt lost with probability 0.3,
                                                                  # independently of earlier attempts
                                if not lost:
                                    break                         # acknowledged, stop sending
                                if attempt < 3:
                                    retransmissions += 1          # the frame will be sent again
                            print(retransmissions)
                            """),
                        "What does one execution of this code print? " + _closing(0))))

    # 03: one-way latency over 3 routers with a heavy queueing component.
    queue = {0: F(1, 2), 1: F(1, 3), 6: F(1, 6)}
    pmf = convolve(*([{d + 2: q for d, q in queue.items()}] * 3))
    out.append(dict(title="one-way latency over 3 routers", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A request passes through three routers on its way from a client to a server. Each router "
                        "adds exactly 2 ms of processing time plus a queueing delay: the queue is empty (0 ms) with "
                        "probability 1/2, short (1 ms) with probability 1/3, or backed up (6 ms) with probability "
                        "1/6, independently at each router. Links themselves add no delay.",
                        "A single request is sent. How many milliseconds does its trip from client to server "
                        "take? " + _closing(1))))

    # 04: power-of-two-choices load balancing.
    loads = {"alpha": 1, "bravo": 3, "charlie": 4, "delta": 7}
    pairs = _uniform(list(itertools.combinations(loads, 2)))
    pmf = _enumerate([pairs], lambda pair: min(pair, key=loads.get))
    order = list(loads)
    out.append(dict(title="power of two choices over 4 servers", form="text", kind="option",
                    pmf={k: pmf.get(k, F(0)) for k in order},
                    prompt=_text(
                        "A load balancer fronts four servers whose current numbers of open connections are: "
                        "alpha 1, bravo 3, charlie 4 and delta 7. For an incoming request it samples two different "
                        "servers, every pair of servers being equally likely, and forwards the request to whichever "
                        "of the two has fewer open connections.",
                        "Which server receives the next request? " + _closing(2))))

    # 05: binary exponential backoff after a collision.
    def collisions() -> dict[int, Fraction]:
        dist: dict[int, Fraction] = defaultdict(Fraction)
        still = F(1)            # probability that all rounds so far collided
        count = 1
        for window in (2, 4, 8):
            clash = F(window, window * window)   # both stations pick the same slot
            dist[count] += still * (1 - clash)
            still *= clash
            count += 1
        dist[count] += still
        return dict(dist)

    pmf = collisions()
    out.append(dict(title="Ethernet-style backoff collisions", form="code", kind="integer", pmf=pmf,
                    prompt=_text(
                        "Two stations on a shared bus have just collided. Both run this backoff logic:",
                        _code("""
                            import random

                            collisions = 1                          # the collision that just happened
                            for window in (2, 4, 8):
                                slot_1 = random.randrange(window)   # station 1: uniform over 0 .. window-1
                                slot_2 = random.randrange(window)   # station 2: independent, same law
                                if slot_1 != slot_2:
                                    break                           # different slots: the earlier one succeeds
                                collisions += 1                     # same slot: they collide again
                            print(collisions)
                            """),
                        "In one run of this simulation, what number is printed?")))
    return out


def _distributed_systems() -> list[dict]:
    out = []

    # 01: first replica to answer.
    lat = {"A": _uniform(range(1, 7)), "B": _uniform([3, 4]), "C": _uniform([2, 4, 6])}
    pmf = _enumerate([lat["A"], lat["B"], lat["C"]],
                     lambda a, b, c: min(zip((a, b, c), "ABC"))[1])
    out.append(dict(title="first of 3 replicas to answer", form="text", kind="option",
                    pmf={k: pmf.get(k, F(0)) for k in "ABC"},
                    prompt=_text(
                        "A client reads a key from a store replicated on three servers, A, B and C, sending the "
                        "read to all three at once and using whichever reply arrives first. Response times, "
                        "independent of one another: A takes a whole number of milliseconds uniformly distributed "
                        "from 1 to 6; B takes 3 or 4 ms with equal probability; C takes 2, 4 or 6 ms with equal "
                        "probability. If several replies arrive in the same millisecond, the client takes the one "
                        "from the replica whose letter comes first in the alphabet.",
                        "Which replica's answer does the client use for this read? " + _closing(3))))

    # 02: leader election with randomised timeouts and re-draws on ties.
    timeouts = {"P": _uniform([1, 2, 3]), "Q": _uniform([1, 2, 3, 4]), "R": _uniform([2, 3, 4, 5, 6])}

    def winner(p, q, r):
        vals = {"P": p, "Q": q, "R": r}
        best = min(vals.values())
        lead = [n for n, v in vals.items() if v == best]
        return lead[0] if len(lead) == 1 else "retry"

    raw = _enumerate(list(timeouts.values()), winner)
    decided = 1 - raw.get("retry", F(0))
    pmf = {n: raw.get(n, F(0)) / decided for n in "PQR"}
    out.append(dict(title="leader election with randomised timeouts", form="text", kind="option", pmf=pmf,
                    prompt=_text(
                        "Three nodes P, Q and R elect a leader with randomised election timeouts, measured in "
                        "ticks. In every election round each node draws a fresh timeout independently: P uniformly "
                        "from {1, 2, 3}, Q uniformly from {1, 2, 3, 4} and R uniformly from {2, 3, 4, 5, 6}. The "
                        "node with the strictly smallest timeout wins and becomes leader. If two or more nodes "
                        "share the smallest timeout, the round is abandoned and a new round starts with new "
                        "draws, as many times as needed.",
                        "Which node ends up as the leader? " + _closing(4))))

    # 03: quorum read over 5 replicas, 2 up to date.
    fresh = ["r1", "r2"]
    quorums = _uniform(list(itertools.combinations(["r1", "r2", "r3", "r4", "r5"], 3)))
    pmf = _enumerate([quorums], lambda qs: sum(x in fresh for x in qs))
    out.append(dict(title="quorum read, 2 of 5 replicas up to date", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A key is stored on five replicas. A write has so far reached only two of them; the other "
                        "three still hold the old version. A client now performs a quorum read: it contacts three "
                        "distinct replicas chosen uniformly at random among the five (every set of three equally "
                        "likely) and collects their versions.",
                        "How many of the three replies carry the new version? " + _closing(0))))

    # 04: push gossip among 6 nodes for 3 rounds.
    nodes = 6

    def gossip(informed: frozenset, rounds: int) -> dict[int, Fraction]:
        if rounds == 0:
            return {len(informed): F(1)}
        spreaders = sorted(informed)
        targets = [[t for t in range(nodes) if t != s] for s in spreaders]
        # every combination of picks is equally likely: count the resulting informed sets, then recurse once each
        reached: dict[frozenset, int] = defaultdict(int)
        for pick in itertools.product(*targets):
            reached[informed | frozenset(pick)] += 1
        total = (nodes - 1) ** len(spreaders)
        acc: dict[int, Fraction] = defaultdict(Fraction)
        for nxt, count in reached.items():
            for k, q in gossip(nxt, rounds - 1).items():
                acc[k] += F(count, total) * q
        return dict(acc)

    pmf = gossip(frozenset({0}), 3)
    out.append(dict(title="push gossip, 6 nodes, 3 rounds", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A cluster of six nodes spreads an update by push gossip in synchronous rounds. At the "
                        "start only one node has the update. In each round, every node that had the update when "
                        "the round began picks one of the other five nodes uniformly at random (independently of "
                        "all other picks, and possibly a node that already has it) and sends it the update. Nodes "
                        "that receive the update during a round only start pushing from the next round.",
                        "After exactly three rounds, how many of the six nodes have the update? " + _closing(1))))

    # 05: three messages over a reordering channel.
    def delivery(d1, d2, d3):
        arrivals = sorted([(0 + d1, 1, "m1"), (1 + d2, 2, "m2"), (2 + d3, 3, "m3")])
        return "\n".join(name for _, _, name in arrivals)

    delay = _uniform([1, 2, 3, 4])
    pmf = _enumerate([delay] * 3, delivery)
    order = ["\n".join(p) for p in itertools.permutations(["m1", "m2", "m3"])]
    out.append(dict(title="three messages over a reordering channel", form="code", kind="option",
                    pmf={k: pmf.get(k, F(0)) for k in order},
                    prompt=_text(
                        "A sender emits three messages over an asynchronous channel that does not preserve order. "
                        "The receiver's behaviour is simulated by this code:",
                        _code("""
                            import random

                            send_time = {"m1": 0, "m2": 1, "m3": 2}      # ms
                            arrivals = []
                            for name in ["m1", "m2", "m3"]:
                                delay = random.choice([1, 2, 3, 4])      # ms, uniform and independent
                                arrivals.append((send_time[name] + delay, send_time[name], name))
                            arrivals.sort()     # by arrival time; equal arrival times keep sending order
                            for _, _, name in arrivals:
                                print(name)
                            """),
                        "Run the simulation once. What are the three lines it prints, in order?")))
    return out


def _hashing() -> list[dict]:
    out = []

    # 01: occupied buckets after 3 keys into 4 buckets.
    b4 = _uniform(range(4))
    pmf = _enumerate([b4] * 3, lambda a, b, c: len({a, b, c}))
    out.append(dict(title="non-empty buckets, 3 keys into 4", form="code", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A tiny hash set with 4 buckets receives three new, distinct keys. Assume the hash function "
                        "behaves like an ideal random function, so each key lands in each bucket with probability "
                        "1/4, independently of the other keys:",
                        _code("""
                            buckets = [[] for _ in range(4)]
                            for key in ["k1", "k2", "k3"]:
                                buckets[hash(key) % 4].append(key)
                            print(sum(1 for b in buckets if b))   # number of non-empty buckets
                            """),
                        "What does this print in one run (with one random draw of the hash values)?")))

    # 02: linear probing in a 7-slot table with slots 2 and 3 taken.
    def probe(taken: set, h: int) -> int:
        while h in taken:
            h = (h + 1) % 7
        return h

    def second_slot(h1, h2):
        taken = {2, 3}
        taken.add(probe(taken, h1))
        return probe(taken, h2)

    s7 = _uniform(range(7))
    pmf = _enumerate([s7, s7], second_slot)
    out.append(dict(title="linear probing, slot of the second insert", form="code", kind="integer", pmf=pmf,
                    prompt=_text(
                        "An open-addressing hash table has 7 slots numbered 0 to 6; slots 2 and 3 are already "
                        "occupied. Two new keys are inserted, first K1 and then K2, with linear probing:",
                        _code("""
                            def insert(table, key):
                                i = h(key)                   # home slot
                                while table[i] is not None:  # occupied: try the next slot, wrapping 6 -> 0
                                    i = (i + 1) % 7
                                table[i] = key
                                return i

                            insert(table, K1)
                            print(insert(table, K2))
                            """),
                        "Model h as uniformly random over 0..6 for each key, independently for K1 and K2.",
                        "Which slot number is printed? " + _closing(2))))

    # 03: Bloom filter query for an absent item: law of the number of set bits, then (set/8)^2 for the query.
    s8 = _uniform(range(8))
    filled = _enumerate([s8] * 4, lambda *pos: len(set(pos)))
    maybe = sum((q * F(k, 8) ** 2 for k, q in filled.items()), F(0))
    pmf = {"maybe": maybe, "no": 1 - maybe}
    out.append(dict(title="Bloom filter false positive (m=8, k=2, 2 items)", form="code", kind="option", pmf=pmf,
                    prompt=_text(
                        "A Bloom filter uses an array of 8 bits (all 0 at first) and two hash functions. Each hash "
                        "function maps any item to a bit position that is uniformly random over 0..7 and "
                        "independent across items and across the two functions (the two positions of one item may "
                        "coincide).",
                        _code("""
                            for item in ["alice", "bob"]:
                                bits[h1(item)] = 1
                                bits[h2(item)] = 1

                            # "carol" was never added
                            if bits[h1("carol")] == 1 and bits[h2("carol")] == 1:
                                print("maybe")
                            else:
                                print("no")
                            """),
                        "Execute this once with one random realisation of the hash functions. What gets "
                        "printed?")))

    # 04: longest chain, 6 keys into 4 buckets with separate chaining.
    b4 = _uniform(range(4))
    pmf = _enumerate([b4] * 6, lambda *hs: max(hs.count(b) for b in range(4)))
    out.append(dict(title="longest chain, 6 keys into 4 buckets", form="text", kind="integer", pmf=pmf,
                    prompt=_text(
                        "A hash map with separate chaining has 4 buckets and stores 6 distinct keys. Each key's "
                        "bucket is uniformly random over the 4 buckets and independent of the other keys (an "
                        "idealised hash function). The map does not resize.",
                        "What is the length of the longest chain (the largest number of keys sharing one bucket)? "
                        + _closing(3))))
    return out


def _mcmc() -> list[dict]:
    out = []
    half = F(1, 2)

    def walk_proposal(k: int) -> list[list[Fraction]]:
        # propose i-1 or i+1 with probability 1/2 each; a proposal off the ends means "stay" (rejected)
        prop = [[F(0)] * k for _ in range(k)]
        for i in range(k):
            for j in (i - 1, i + 1):
                if 0 <= j < k:
                    prop[i][j] = half
                else:
                    prop[i][i] += half
        return prop

    # 01: Metropolis random walk on 0..3 with target weights 1:2:3:4, three steps from 0.
    weights = [1, 2, 3, 4]
    kern = metropolis_kernel(weights, walk_proposal(4))
    dist = markov_distribution(kern, 0, 3)
    pmf = {i: q for i, q in enumerate(dist) if q}
    out.append(dict(title="Metropolis walk on 0..3, target 1:2:3:4, 3 steps", form="code", kind="integer",
                    pmf=pmf,
                    prompt=_text(
                        "The following Metropolis sampler targets the distribution on states 0, 1, 2, 3 with "
                        "unnormalised weights 1, 2, 3, 4:",
                        _code("""
                            import random

                            w = [1, 2, 3, 4]
                            state = 0
                            for _ in range(3):
                                proposal = state + random.choice([-1, 1])     # left or right, equally likely
                                if 0 <= proposal <= 3 and random.random() < min(1, w[proposal] / w[state]):
                                    state = proposal                          # accept
                                # otherwise (off the ends, or rejected) the chain stays where it is
                            print(state)
                            """),
                        "Note that only three steps are taken, so the chain is not yet in equilibrium. "
                        "Run the sampler once. What state does it print?")))

    # 02: bimodal target, start in the valley, four steps.
    weights = [6, 1, 1, 1, 6]
    kern = metropolis_kernel(weights, walk_proposal(5))
    dist = markov_distribution(kern, 2, 4)
    pmf = {i: q for i, q in enumerate(dist) if q}
    out.append(dict(title="Metropolis on a two-peaked target, 4 steps from the valley", form="text",
                    kind="integer", pmf=pmf,
                    prompt=_text(
                        "A Metropolis chain lives on the positions 0, 1, 2, 3, 4. Its target has unnormalised "
                        "weights 6, 1, 1, 1, 6 respectively, so most of the mass sits at the two ends. At each "
                        "step the chain proposes moving one position left or right with probability 1/2 each; a "
                        "proposal that would leave the range 0..4 is rejected, and otherwise the move is accepted "
                        "with probability min(1, target weight of the proposed position / target weight of the "
                        "current position). A rejected proposal leaves the chain in place for that step.",
                        "The chain starts at position 2 and performs exactly four steps. At which position is it "
                        "after the fourth step? " + _closing(4))))

    # 03: one systematic-scan Gibbs sweep on two correlated bits.
    joint = {(0, 0): F(4, 10), (0, 1): F(1, 10), (1, 0): F(1, 10), (1, 1): F(4, 10)}

    def cond_x(y):
        tot = joint[(0, y)] + joint[(1, y)]
        return {x: joint[(x, y)] / tot for x in (0, 1)}

    def cond_y(x):
        tot = joint[(x, 0)] + joint[(x, 1)]
        return {y: joint[(x, y)] / tot for y in (0, 1)}

    acc: dict[str, Fraction] = defaultdict(Fraction)
    for x, px in cond_x(0).items():
        for y, py in cond_y(x).items():
            acc[f"x={x} y={y}"] += px * py
    order = ["x=0 y=0", "x=0 y=1", "x=1 y=0", "x=1 y=1"]
    out.append(dict(title="one Gibbs sweep on two correlated bits", form="code", kind="option",
                    pmf={k: acc.get(k, F(0)) for k in order},
                    prompt=_text(
                        "Two binary variables have the joint distribution P(0,0) = 0.4, P(0,1) = 0.1, "
                        "P(1,0) = 0.1, P(1,1) = 0.4 (the first coordinate is x, the second y). A Gibbs sampler "
                        "starts at x = 0, y = 0 and performs one systematic sweep:",
                        _code("""
                            x, y = 0, 0
                            x = draw_from_conditional_x_given(y)   # exact draw from P(x | y)
                            y = draw_from_conditional_y_given(x)   # exact draw from P(y | x), using the new x
                            print(f"x={x} y={y}")
                            """),
                        "What line does one run of this sweep print? " + _closing(0))))

    # 04: independence Metropolis-Hastings over three labels, two steps from C.
    weights = [3, 2, 1]            # target A 1/2, B 1/3, C 1/6
    third = F(1, 3)
    kern = metropolis_kernel(weights, [[third] * 3 for _ in range(3)])
    dist = markov_distribution(kern, 2, 2)
    out.append(dict(title="independence sampler over A/B/C, 2 steps from C", form="code", kind="option",
                    pmf={k: q for k, q in zip("ABC", dist)},
                    prompt=_text(
                        "This Metropolis-Hastings sampler targets the distribution A: 1/2, B: 1/3, C: 1/6 using "
                        "a proposal that ignores the current state:",
                        _code("""
                            import random

                            target = {"A": 1/2, "B": 1/3, "C": 1/6}
                            state = "C"
                            for _ in range(2):
                                proposal = random.choice(["A", "B", "C"])   # uniform, may equal the current state
                                if random.random() < min(1, target[proposal] / target[state]):
                                    state = proposal
                            print(state)
                            """),
                        "Only two iterations are run. Execute the program once: which state is printed?")))
    return out
