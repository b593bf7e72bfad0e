"""The 30 real-world scenarios of the KS@N bank, one per real-world program of the UnpredictaBench release: each
builder returns its scenarios as dicts (uid, release_index, title, form, kind, prompt and exact pmf; permutation
scenarios also give their items and, where each line is decorated, a line format). The systems and their
parameters are those the release programs simulate; the wording is ours. :mod:`.realworld` turns them into problems.
"""

from __future__ import annotations

import itertools
import math
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


# ============================================================================================ exact helpers

def _poly_mul(a: list, b: list) -> list:
    out = [F(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _poly_add(a: list, b: list) -> list:
    n = max(len(a), len(b))
    return [(a[i] if i < len(a) else F(0)) + (b[i] if i < len(b) else F(0)) for i in range(n)]


def _shifted_power(knot: Fraction, m: int, scale: Fraction) -> list:
    """Coefficients (constant term first) of scale * (t - knot) ** m."""
    return [scale * math.comb(m, r) * (-knot) ** (m - r) for r in range(m + 1)]


def _uniform_sum_pieces(offset, widths_from) -> tuple[list, int, Fraction]:
    """The sum ``offset + U(a_1, b_1) + ... + U(a_n, b_n)`` (independent continuous uniforms) as truncated powers.

    Its CDF is ``sum_J (-1)**|J| (t - L - w_J)_+**n / (n! prod w)`` over the subsets J of the terms, with L the
    lowest value and w_J the summed widths of J. Returns the knots ``(L + w_J, sign)``, n and ``n! prod w``.
    """
    lows = [F(a) for a, _ in widths_from]
    widths = [F(b) - F(a) for a, b in widths_from]
    low = F(offset) + sum(lows, F(0))
    knots = []
    for size in range(len(widths) + 1):
        for subset in itertools.combinations(widths, size):
            knots.append((low + sum(subset, F(0)), (-1) ** size))
    norm = F(math.factorial(len(widths)))
    for w in widths:
        norm *= w
    return knots, len(widths), norm


def _first_of_uniform_sums(arrivals: dict) -> dict:
    """Exact probability that each competitor is the first to arrive.

    ``arrivals[label] = (offset, [(a, b), ...])``: the arrival time is the offset plus independent continuous
    uniforms on [a, b]. ``P(i first) = integral f_i(t) prod_{j != i} (1 - F_j(t)) dt``; every density and CDF is a
    polynomial between consecutive knots, so the integral is evaluated exactly, piece by piece, in Fractions.
    Ties have probability zero.
    """
    pieces = {k: _uniform_sum_pieces(off, terms) for k, (off, terms) in arrivals.items()}
    points = sorted({x for knots, _, _ in pieces.values() for x, _ in knots})
    out = {k: F(0) for k in arrivals}
    for lo, hi in zip(points, points[1:]):
        cdf, pdf = {}, {}
        for k, (knots, n, norm) in pieces.items():
            c, d = [F(0)], [F(0)]
            for x, sign in knots:
                if x <= lo:       # the truncated power (t - x)_+ is active on the whole piece [lo, hi]
                    c = _poly_add(c, _shifted_power(x, n, F(sign) / norm))
                    d = _poly_add(d, _shifted_power(x, n - 1, F(sign * n) / norm))
            cdf[k], pdf[k] = c, d
        for k in arrivals:
            integrand = pdf[k]
            for j in arrivals:
                if j != k:
                    integrand = _poly_mul(integrand, _poly_add([F(1)], [-x for x in cdf[j]]))
            out[k] += sum((q / (r + 1) * (hi ** (r + 1) - lo ** (r + 1)) for r, q in enumerate(integrand)), F(0))
    return out


def _ordered(pmf: dict, order: list) -> dict:
    """The pmf with its keys in ``order`` (the release's label order); every outcome must be listed."""
    missing = set(pmf) - set(order)
    if missing:
        raise RuntimeError(f"outcomes missing from the label order: {sorted(missing)}")
    return {k: pmf.get(k, F(0)) for k in order}


def _shuffled_lines(lines_pmf: dict) -> dict:
    """Law of the printed output when a random list of lines (``lines_pmf``: tuple of lines -> probability) is shown
    in a uniformly random order of its lines."""
    acc: dict = defaultdict(Fraction)
    for lines, q in lines_pmf.items():
        perms = list(itertools.permutations(lines))
        for perm in perms:
            acc["\n".join(perm) if perm else ""] += q / len(perms)
    return dict(acc)


def _uniform_order(lines: list) -> dict:
    """Law of the printed output when the given lines come out in a uniformly random order."""
    return _shuffled_lines({tuple(lines): F(1)})


def _scenario(uid: str, release_index: int, **fields) -> dict:
    return dict(uid=uid, release_index=release_index, **fields)


# ============================================================================================ scenarios

def _os_concurrency() -> list[dict]:
    out = []

    # release 4: four workers sleep for iid U(0, 100) ms; the first to wake wins.
    order = ["Red", "Blue", "Yellow", "Green"]
    pmf = _first_of_uniform_sums({k: (0, [(0, 100)]) for k in order})
    out.append(_scenario(
        "e5938429-19e0-5ae4-adec-831c3b693b26", 4, title="first of four sleeping workers (U(0,100) ms each)",
        form="text", kind="option", pmf=_ordered(pmf, order),
        prompt=_text(
            "A program starts four worker threads at the same instant, named Red, Blue, Yellow and Green. Each "
            "worker begins by sleeping for a random time drawn from the continuous uniform distribution on 0 to "
            "100 milliseconds; the four sleep times are independent. On waking, a worker tries to grab a shared "
            "token; grabbing is instantaneous, only the first worker to wake gets the token, and the main thread "
            "then prints the name of the worker holding it. Nothing else delays any of the workers.",
            "Which name is printed: Red, Blue, Yellow or Green? " + _closing(0))))

    # release 5: a read-modify-write that overlaps a slow one with probability 1/10.
    # The fast thread's instant T is uniform on [0, 10] ms; it loses the slow thread's update exactly when
    # T < 1 ms (the slow thread's read-to-write window), so P(x == 1) = (1 - 0) / (10 - 0), an exact length ratio.
    p_lost = F(1 - 0, 10 - 0)
    out.append(_scenario(
        "24dd7917-2799-5782-93ec-3c7e2f244700", 5, title="lost update inside a 1 ms window out of 10 ms",
        form="code", kind="integer", pmf={1: p_lost, 2: 1 - p_lost},
        prompt=_text(
            "Two threads update a shared integer `x` without any lock. Times are measured from the moment both "
            "threads are started, and `x` is 0 at that moment:",
            _code("""
                # slow thread: a read-modify-write stretched over one millisecond
                snapshot = x              # happens at t = 0 ms
                wait_until(1.0)           # the thread is busy until t = 1 ms
                x = snapshot + 1          # happens at t = 1 ms

                # fast thread: wakes at a random instant and increments in one go
                T = uniform(0.0, 10.0)    # continuous uniform on [0, 10] ms
                wait_until(T)
                x = x + 1                 # read and write happen together, instantly, at time T
                """),
            "Both threads run on their own cores, so each action happens exactly at the time stated. When both "
            "threads have finished, the main thread prints `x`.",
            "What number is printed (1 or 2)? " + _closing(1))))

    # release 6: two threads each write one character with no newline.
    def put(ch):
        def step(sh, lo):
            sh["out"] += ch
        return step

    pmf = interleave([[put("A")], [put("B")]], {"out": ""}, lambda sh: sh["out"])
    out.append(_scenario(
        "9ee2ce7d-6481-54a4-8c8f-7672bf081f88", 6, title="two threads writing one letter each, no newline",
        form="code", kind="option", pmf=_ordered(pmf, ["AB", "BA"]),
        prompt=_text(
            "A program spawns two threads and then waits for both of them:",
            _code("""
                def first_thread():
                    stdout.write("A")     # one step, no newline

                def second_thread():
                    stdout.write("B")     # one step, no newline

                # after joining both threads, the main thread writes a single newline
                """),
            _SCHEDULER,
            "The program is started once. What line does it print? Answer AB or BA.")))

    # release 7: a parent and a child process, each logging one or both of its thread names.
    parent = {("parent-thread-1", "parent-thread-2"): F(1, 10),
              ("parent-thread-1",): F(9, 20), ("parent-thread-2",): F(9, 20)}
    child = {("child-thread-1", "child-thread-2"): F(1, 10),
             ("child-thread-1",): F(9, 20), ("child-thread-2",): F(9, 20)}
    logged: dict = defaultdict(Fraction)
    for (pl, pq), (cl, cq) in itertools.product(parent.items(), child.items()):
        logged[pl + cl] += pq * cq
    pmf = _shuffled_lines(dict(logged))
    order = ["\n".join(perm)
             for pl in (["parent-thread-1"], ["parent-thread-2"], ["parent-thread-1", "parent-thread-2"])
             for cl in (["child-thread-1"], ["child-thread-2"], ["child-thread-1", "child-thread-2"])
             for perm in itertools.permutations(pl + cl)]
    out.append(_scenario(
        "99ba8a6f-4c30-5cea-89e3-53896f7d1cc9", 7, title="parent and child processes logging thread names",
        form="text", kind="option", pmf=_ordered(pmf, order),
        prompt=_text(
            "A service forks into a parent and a child process. Each process owns two threads: the parent's are "
            "called parent-thread-1 and parent-thread-2, the child's are called child-thread-1 and "
            "child-thread-2. A thread writes its own name as one line when it gets through a start-up race, and "
            "the race goes as follows in each process, independently of the other process: with probability 1/10 "
            "both of the process's threads get through and log their names; otherwise exactly one of them does, "
            "each of the two being equally likely to be that one.",
            "All the logged lines of both processes go to the same terminal, and the terminal shows them in an "
            "order that is uniformly random among all orderings of those lines (lines of the same process are not "
            "kept in any particular order either).",
            "Write the complete terminal output, one thread name per line, in the order it appears. "
            + _closing(2))))

    # release 8: parent and child after fork, each printing one line.
    out.append(_scenario(
        "8843cf28-759f-5780-a801-581d993bce84", 8, title="parent and child printing after fork",
        form="code", kind="permutation", items=["parent", "child"], pmf=_uniform_order(["parent", "child"]),
        prompt=_text(
            "Consider this POSIX-style program:",
            _code("""
                pid = fork()
                if pid == 0:
                    print("child")        # runs in the new process
                    exit(0)
                print("parent")           # runs in the original process
                wait_for_children()
                """),
            "After the fork the two processes compete for the CPU, and whichever prints first is a matter of "
            "chance: each of the two possible orders of the lines is equally likely.",
            "What does one run print? Write the two lines, parent and child, one per line in the order they "
            "appear.")))

    # release 9: a reader multiplexing two pipes that carry AAA and BBB.
    # Taking the next byte from a uniformly chosen non-empty pipe is the uniform scheduler over two "threads"
    # of three steps each, so `interleave` gives the exact law.
    def take(ch):
        def step(sh, lo):
            sh["out"] += ch
        return step

    pmf = interleave([[take("A")] * 3, [take("B")] * 3], {"out": ""}, lambda sh: sh["out"])
    order = ["".join("A" if i in pos else "B" for i in range(6)) for pos in itertools.combinations(range(6), 3)]
    out.append(_scenario(
        "c0c46088-4b80-5299-8ecf-f2be5d7eff4e", 9, title="select() loop draining two pipes (AAA and BBB)",
        form="code", kind="option", pmf=_ordered(pmf, order),
        prompt=_text(
            "Two producer processes have each already written three one-byte messages into their own pipe: the "
            "first pipe holds A, A, A and the second holds B, B, B. A consumer drains both pipes with a "
            "readiness loop:",
            _code("""
                received = ""
                while pipe_a.has_data() or pipe_b.has_data():
                    ready = select([pipe_a, pipe_b])   # the pipes that still hold data
                    source = pick_one(ready)           # if both are ready, each is taken with probability 1/2
                    received += source.read(1)
                print(received)
                """),
            "`pick_one` chooses uniformly at random, independently on every pass; when only one pipe still holds "
            "data, that pipe is read.",
            "The consumer runs once. What six-letter string does it print? It is one of the 20 strings with "
            "three A and three B: " + ", ".join(order) + ". " + _closing(3))))

    # release 21: three threads race a compare-and-swap on an empty owner slot.
    def cas(name):
        def step(sh, lo):
            if sh["owner"] is None:
                sh["owner"] = name
        return step

    pmf = interleave([[cas("A")], [cas("B")], [cas("C")]], {"owner": None}, lambda sh: sh["owner"])
    out.append(_scenario(
        "6ab4349d-0565-57fd-a674-f08c09949c10", 21, title="three threads racing a compare-and-swap",
        form="code", kind="option", pmf=_ordered(pmf, ["A", "B", "C"]),
        prompt=_text(
            "A shared slot `owner` starts empty. Three threads named A, B and C are started together and each "
            "executes a single instruction:",
            _code("""
                # thread <name>, for name in "A", "B", "C"
                compare_and_swap(owner, expected=EMPTY, new=name)   # one atomic step
                """),
            "Only the first compare-and-swap to execute finds the slot empty and stores its name; the later ones "
            "fail and change nothing. " + _SCHEDULER,
            "After joining the three threads, the program prints `owner`. What does it print: A, B or C? "
            + _closing(4))))
    return out


def _garbage_collection() -> list[dict]:
    out = []

    # release 10: a two-object reference cycle, finalised in random order.
    out.append(_scenario(
        "a99b8031-15b0-5052-bc77-05301e1c19f6", 10, title="two-object cycle, finaliser order",
        form="code", kind="permutation", items=["A", "B"], pmf=_uniform_order(["A", "B"]),
        prompt=_text(
            "In a Python-like runtime with a cycle collector:",
            _code("""
                class Node:
                    def __init__(self, label):
                        self.label = label
                        self.peer = None
                    def __del__(self):
                        print(self.label)

                a, b = Node("A"), Node("B")
                a.peer, b.peer = b, a     # a and b now keep each other alive
                del a, b                  # the pair is unreachable, but only as a cycle
                collect_cycles()          # finds the pair and destroys both objects
                """),
            "The runtime promises nothing about which member of a cycle is finalised first; here both orders are "
            "equally likely.",
            "Write what the two finalisers print, A and B, one per line in the order printed. " + _closing(0))))

    # release 11: a three-object cycle; each finaliser prints "Deleting <name>".
    items = ["A", "B", "C"]
    out.append(_scenario(
        "c24f0c53-22dc-5a8d-a23a-874d3ac319ca", 11, title="three-object cycle, 'Deleting' lines",
        form="code", kind="permutation", items=items, line_format="Deleting {x}",
        pmf=_uniform_order([f"Deleting {x}" for x in items]),
        prompt=_text(
            "Three objects form a ring of references in a runtime with a cycle-detecting collector:",
            _code("""
                class Resource:
                    def __init__(self, name):
                        self.name = name
                        self.next = None
                    def __del__(self):
                        print(f"Deleting {self.name}")

                x, y, z = Resource("A"), Resource("B"), Resource("C")
                x.next, y.next, z.next = y, z, x   # A -> B -> C -> A
                x = y = z = None                   # only the ring keeps them alive now
                run_cycle_collector()              # all three are reclaimed together
                """),
            "The collector finalises the members of the ring in an order that is uniformly random among the six "
            "possible orders.",
            "Give the three lines printed (Deleting A, Deleting B and Deleting C in some order), one per line, in "
            "the order they appear. " + _closing(1))))

    # release 12: finalisers that may or may not run, Java-style.
    pmf = _shuffled_lines({subset: F(1, 4) / math.comb(3, k)
                           for k in range(4) for subset in itertools.combinations("ABC", k)})
    pmf = {("(no output)" if k == "" else k): q for k, q in pmf.items()}
    order = ["(no output)"] + ["\n".join(p) for k in (1, 2, 3) for p in itertools.permutations("ABC", k)]
    out.append(_scenario(
        "41b48a16-5c9a-5854-baad-20a4594e88ce", 12, title="finalize() may run for none, some or all of 3 objects",
        form="text", kind="option", pmf=_ordered(pmf, order),
        prompt=_text(
            "A Java-style program creates three objects named A, B and C whose finalize() methods each print the "
            "object's name on its own line. It then drops all references to them, requests a collection and exits "
            "shortly afterwards. Whether finalizers get to run before the exit is up to the runtime; model it as "
            "follows. The number of these objects whose finalizer runs is 0, 1, 2 or 3, each with probability "
            "1/4. Given that number, which objects they are is uniformly random among the sets of that size, and "
            "the chosen finalizers run in a uniformly random order. When no finalizer runs at all, the program's "
            "output is reported as the text (no output).",
            "What is the output of one run? Write the printed names one per line in order, or (no output) if "
            "nothing was printed. " + _closing(2))))

    # release 13: five unreachable objects, finalised in a random order.
    items = ["A", "B", "C", "D", "E"]
    out.append(_scenario(
        "055818d5-9fb7-5245-9a38-3051f2123f31", 13, title="five finalisers in random order",
        form="text", kind="permutation", items=items, pmf=_uniform_order(items),
        prompt=_text(
            "Five objects labelled A, B, C, D and E become unreachable at the same moment, and the next garbage "
            "collection queues all five finalisers together. Each finaliser prints its object's label on its own "
            "line. The runtime runs the queued finalisers one after another in an order chosen uniformly at "
            "random among all 120 possible orders.",
            "Write the five letters A, B, C, D, E one per line in the order the finalisers print them. "
            + _closing(3))))

    # release 22: which member of a three-object cycle is torn down first.
    pmf = _enumerate([_uniform(list(itertools.permutations("ABC")))], lambda perm: perm[0])
    out.append(_scenario(
        "69a1d67d-bef2-55d7-a1c6-5195c587f8e5", 22, title="first cleanup hook in a three-object cycle",
        form="text", kind="option", pmf=_ordered(pmf, ["A", "B", "C"]),
        prompt=_text(
            "Objects A, B and C refer to each other in a loop (A to B, B to C, C to A) and no other object or "
            "variable refers to them. To reclaim the loop, the collector must break it at some object: "
            "it runs the cleanup hooks of "
            "the three objects one at a time, in an order that is uniformly random among the six possible orders. "
            "Each hook logs its object's letter.",
            "Which letter is logged first? Answer A, B or C. " + _closing(4))))
    return out


def _network() -> list[dict]:
    out = []

    # release 0: two packets, base latencies 50 and 70 ms, each with U(-20, 20) jitter.
    pmf = _first_of_uniform_sums({"A": (50, [(-20, 20)]), "B": (70, [(-20, 20)])})
    out.append(_scenario(
        "bf34e215-c929-532a-8b68-ad9c72c0f6c7", 0, title="two paths, 50 and 70 ms base, U(-20,20) jitter",
        form="code", kind="option", pmf=_ordered(pmf, ["A", "B"]),
        prompt=_text(
            "Two packets leave a host at the same moment over two different routes:",
            _code("""
                # latency of a route = its base latency + jitter, jitter ~ continuous Uniform(-20, 20) ms,
                # drawn independently for each packet
                latency_a = 50 + jitter()    # packet A, route with 50 ms base latency
                latency_b = 70 + jitter()    # packet B, route with 70 ms base latency
                print("A" if latency_a < latency_b else "B")   # the packet that arrives first
                """),
            "What does one execution print, A or B? " + _closing(0))))

    # release 1: two packets over identical links, then a router delay each.
    link, router = (-10, 10), (0, 20)
    pmf = _first_of_uniform_sums({"X": (40, [link, router]), "Y": (40, [link, router])})
    out.append(_scenario(
        "9843572d-2cf3-50e9-a451-2cde2fa83cef", 1, title="two packets, identical links plus router delay",
        form="text", kind="option", pmf=_ordered(pmf, ["X", "Y"]),
        prompt=_text(
            "Packets X and Y are sent at the same time over two separate links of the same kind. Crossing a link "
            "takes 40 ms plus a variation that is uniformly distributed between -10 and +10 ms. At the far end "
            "each packet is handled by a router, which adds a processing delay uniformly distributed between 0 "
            "and 20 ms. All four random delays are continuous and independent. The application logs the name of "
            "the packet whose processing finishes first.",
            "Which packet is logged, X or Y? " + _closing(1))))

    # release 2: four packets through channel, switch and server delays.
    bases = {"P1": 20, "P2": 35, "P3": 25, "P4": 30}
    pmf = _first_of_uniform_sums({k: (b, [(-10, 10), (0, 10), (0, 10)]) for k, b in bases.items()})
    out.append(_scenario(
        "b3c2bd87-c198-5203-8238-8b388acdd4b1", 2, title="four packets: channel, switch and server delays",
        form="text", kind="option", pmf=_ordered(pmf, list(bases)),
        prompt=_text(
            "Four packets P1, P2, P3 and P4 are sent at the same instant, each over its own channel. The channels "
            "have nominal delays of 20 ms (P1), 35 ms (P2), 25 ms (P3) and 30 ms (P4), and each transmission "
            "deviates from its nominal delay by an amount uniformly distributed between -10 and +10 ms. Every "
            "packet then passes a switch, adding a delay uniform between 0 and 10 ms, and finally a server, adding "
            "another delay uniform between 0 and 10 ms. All twelve random delays are continuous and independent.",
            "The server reports the packet whose total delay is smallest. Which packet is that? Answer P1, P2, P3 "
            "or P4. " + _closing(2))))

    # release 14: two stations after a collision, re-drawing backoff slots until they differ.
    slots = _uniform(range(4))
    draw = _enumerate([slots, slots], lambda a, b: "tie" if a == b else ("A" if a < b else "B"))
    pmf = {k: draw[k] / (1 - draw["tie"]) for k in ("A", "B")}   # repeated until the slots differ
    out.append(_scenario(
        "7a1fe43e-6e94-5270-b3f0-110ee213ee6e", 14, title="backoff slots after a collision, redrawn on ties",
        form="text", kind="option", pmf=pmf,
        prompt=_text(
            "Two stations, A and B, share an Ethernet segment and their frames have just collided. Each station "
            "now picks a backoff slot uniformly at random from 0, 1, 2 and 3, independently. If both pick the same "
            "slot they collide again and both pick afresh in the same way, as many times as needed. As soon as "
            "their slots differ, the station with the lower slot transmits its frame successfully.",
            "Which station gets its frame through first, A or B? " + _closing(3))))

    # release 27: a delivery counter at 100, then 100 packets each delivered with probability 9/10.
    pmf = {100 + k: q for k, q in convolve(*([{0: F(1, 10), 1: F(9, 10)}] * 100)).items()}
    out.append(_scenario(
        "495df063-5b30-5914-a253-747827705c50", 27, title="delivery counter: 100 + deliveries of 100 packets",
        form="text", kind="integer", pmf=pmf,
        prompt=_text(
            "A receiver keeps a counter of delivered packets, which currently reads 100. The sender now transmits "
            "100 further packets over a lossy link with no retransmission. Each packet independently arrives with "
            "probability 0.9 and is lost with probability 0.1, and the counter goes up by one for every packet "
            "that arrives.",
            "What does the counter read after the 100 packets have been sent? "
            + _closing(4))))
    return out


def _distributed_systems() -> list[dict]:
    out = []

    # release 3: four replies with iid U(0, 100) ms delays; the first one wins.
    order = ["Alpha", "Beta", "Gamma", "Delta"]
    pmf = _first_of_uniform_sums({k: (0, [(0, 100)]) for k in order})
    out.append(_scenario(
        "4328470e-d5e2-5be9-9db8-637dd4fe1e53", 3, title="first of four replies (U(0,100) ms each)",
        form="text", kind="option", pmf=_ordered(pmf, order),
        prompt=_text(
            "A coordinator sends the same query to four nodes named Alpha, Beta, Gamma and Delta at once. The "
            "reply of each node reaches the coordinator after a delay drawn from the continuous uniform "
            "distribution between 0 and 100 ms, independently for the four nodes. The coordinator uses the first "
            "reply it receives and records the name of the node that sent it.",
            "Which node's name is recorded? Answer Alpha, Beta, Gamma or Delta. " + _closing(0))))

    # release 15: randomised election timeouts with re-elections on a shared minimum.
    timeouts = range(150, 301)
    n_t = len(timeouts)

    def unique_min_prob() -> Fraction:
        # one given node draws t and both others draw more than t
        return sum((F(1, n_t) * F(300 - t, n_t) ** 2 for t in timeouts), F(0))

    win = unique_min_prob()
    pmf = {k: win / (3 * win) for k in ("A", "B", "C")}   # a round without a unique minimum is repeated
    out.append(_scenario(
        "bf238170-34e1-5acb-8b15-0cc1e27f5111", 15, title="leader election with random timeouts, 3 nodes",
        form="text", kind="option", pmf=pmf,
        prompt=_text(
            "A three-node cluster with nodes A, B and C has lost its leader. Each node draws an election timeout "
            "uniformly at random from the whole milliseconds 150, 151, ..., 300, independently of the others. The "
            "node whose timeout is strictly the smallest fires first, gathers the votes and becomes leader. If the "
            "smallest timeout is shared by two or more nodes, the votes split, no leader emerges, and all three "
            "nodes draw new timeouts in the same way and try again, until some node has the unique smallest "
            "timeout.",
            "Which node becomes leader: A, B or C? " + _closing(1))))

    # release 20: a load balancer with the random policy over two replicas.
    pmf = _enumerate([_uniform(["Replica A", "Replica B"])], lambda r: r)
    out.append(_scenario(
        "e329c07f-2431-59a2-9cc1-4506484ee4f6", 20, title="random load-balancing policy, two replicas",
        form="code", kind="option", pmf=_ordered(pmf, ["Replica A", "Replica B"]),
        prompt=_text(
            "A load balancer is configured with the 'random' policy:",
            _code("""
                backends = ["Replica A", "Replica B"]

                def route(request):
                    target = backends[randint(0, 1)]   # 0 or 1, equally likely, fresh for every request
                    log(target)
                    return target.handle(request)
                """),
            "One request arrives. Which backend name is logged? Answer Replica A or Replica B. "
            + _closing(2))))

    # release 23: two clients racing for a lease; request latencies iid U(10, 30) ms.
    pmf = _first_of_uniform_sums({"A": (0, [(10, 30)]), "B": (0, [(10, 30)])})
    out.append(_scenario(
        "22b4c8f7-9935-5e7b-84ab-5afed1027417", 23, title="two clients racing for a lease",
        form="text", kind="option", pmf=_ordered(pmf, ["A", "B"]),
        prompt=_text(
            "Clients A and B ask a lock service for the same lease at the same moment. Each request needs a "
            "network time drawn from the continuous uniform distribution between 10 and 30 ms to reach the "
            "service, independently for the two clients. The service grants the lease to the request that "
            "arrives first and rejects the other one.",
            "Which client holds the lease, A or B? " + _closing(3))))

    # release 24: a hedged read sent to three replicas; reply latency 5 ms + U(0, 10) ms each.
    pmf = _first_of_uniform_sums({k: (5, [(0, 10)]) for k in ("A", "B", "C")})
    out.append(_scenario(
        "ac50a73d-e91d-53aa-b7d6-27b62b878397", 24, title="hedged read over three replicas",
        form="code", kind="option", pmf=_ordered(pmf, ["A", "B", "C"]),
        prompt=_text(
            "A client issues a hedged read: it sends the same request to three replicas and keeps whichever "
            "answer comes back first.",
            _code("""
                replicas = ["A", "B", "C"]
                # each reply takes 5 ms plus a continuous Uniform(0, 10) ms extra, independently per replica
                reply_time = {r: 5.0 + uniform(0.0, 10.0) for r in replicas}
                winner = min(replicas, key=lambda r: reply_time[r])
                print(winner)
                """),
            "What does one execution print: A, B or C? " + _closing(4))))
    return out


def _hashing() -> list[dict]:
    out = []

    # release 17: three sections iterated in a hash-seed-dependent order, a random member each.
    members = {"vowels": ["A", "E", "I"], "consonants": ["B", "C", "D"], "digits": ["1", "2", "3"]}
    pmf: dict = defaultdict(Fraction)
    orders = list(itertools.permutations(members))
    for names in orders:
        for picks in itertools.product(*(members[n] for n in names)):
            pmf["\n".join(f"{n}: {v}" for n, v in zip(names, picks))] += F(1, len(orders)) * F(1, 27)
    order = ["\n".join(f"{n}: {v}" for n, v in zip(names, picks))
             for names in orders for picks in itertools.product(*(members[n] for n in names))]
    out.append(_scenario(
        "0c05ec86-9376-5d2a-a871-be7152f00ef0", 17, title="hash-ordered sections, one random member each",
        form="code", kind="option", pmf=_ordered(dict(pmf), order),
        prompt=_text(
            "The section names of a small configuration are kept in a hash set, and each run of the interpreter "
            "uses a fresh random hash seed:",
            _code("""
                sections = {"vowels", "consonants", "digits"}      # a set: iteration order depends on the seed
                pools = {"vowels": "AEI", "consonants": "BCD", "digits": "123"}
                for name in sections:
                    print(f"{name}: {random_member(pools[name])}")
                """),
            "Model the set's iteration order as uniformly random among the six possible orders of the three names, "
            "and `random_member` as a uniform choice of one character of its string, independent of everything "
            "else. Each printed line therefore reads vowels: A, vowels: E or vowels: I; consonants: B, "
            "consonants: C or consonants: D; digits: 1, digits: 2 or digits: 3.",
            "Write the three lines of one run, in the order printed. " + _closing(0))))

    # release 18: two inner sets in a hash-ordered outer set; the first element of each inner set is printed.
    pmf = _enumerate([_uniform([("L", "D"), ("D", "L")]), _uniform(["A", "B"]), _uniform(["1", "2"])],
                     lambda outer, letter, digit: "\n".join(letter if g == "L" else digit for g in outer))
    order = ["A\n1", "A\n2", "B\n1", "B\n2", "1\nA", "2\nA", "1\nB", "2\nB"]
    out.append(_scenario(
        "06484ed3-0621-5309-8a15-75c84393ca5a", 18, title="nested hash sets, first element of each",
        form="code", kind="option", pmf=_ordered(pmf, order),
        prompt=_text(
            "With string hashing randomised per process, this program prints one element from each of two small "
            "sets:",
            _code("""
                groups = {frozenset({"A", "B"}), frozenset({"1", "2"})}
                for group in groups:            # order of the two groups depends on the hash seed
                    print(next(iter(group)))    # the element the group yields first, also seed-dependent
                """),
            "Model it like this: the two groups are visited in one of their two orders with probability 1/2 each, "
            "and within each group either element comes first with probability 1/2, all independently.",
            "Write the two lines printed by one run (one of A or B, and one of 1 or 2, in the order printed). "
            + _closing(1))))

    # release 19: a 12-valued seeded hash reduced modulo 3 buckets.
    pmf = _enumerate([_uniform(range(12))], lambda h: "ABC"[h % 3])
    out.append(_scenario(
        "975577ef-5b14-533d-b8bf-abac1db32ebc", 19, title="seeded hash modulo 3 buckets",
        form="text", kind="option", pmf=_ordered(pmf, ["A", "B", "C"]),
        prompt=_text(
            "A hash table has three buckets named A, B and C, at indices 0, 1 and 2. It hashes keys with a seeded "
            "hash function; because the seed is chosen at random when the table is created, the hash of a given "
            "key is, from the caller's point of view, uniformly distributed over the twelve values 0, 1, ..., 11. "
            "The key goes into the bucket whose index is the hash value modulo 3.",
            "A freshly created table receives its first key. Which bucket does it land in: A, B or C? "
            + _closing(2))))

    # release 29: a consistent-hash ring with three servers at 0, 120 and 240.
    servers = {0: "A", 120: "B", 240: "C"}

    def owner(pos: int) -> str:
        for point in sorted(servers):
            if point >= pos:
                return servers[point]
        return servers[min(servers)]   # wrap around past 359

    pmf = _enumerate([_uniform(range(360))], owner)
    out.append(_scenario(
        "db145ef3-4f12-5cb1-8d97-721cc7670352", 29, title="consistent-hash ring with three servers",
        form="text", kind="option", pmf=_ordered(pmf, ["A", "B", "C"]),
        prompt=_text(
            "A cache cluster uses consistent hashing on a ring of 360 positions numbered 0 to 359. Server A sits "
            "at position 0, server B at 120 and server C at 240. A key is hashed to a position that is uniformly "
            "random among the 360, and it is stored on the first server found at that position or after it going "
            "clockwise (increasing positions, wrapping from 359 back to 0).",
            "Which server stores a new key: A, B or C? " + _closing(3))))
    return out


def _mcmc() -> list[dict]:
    out = []

    # release 16: a Metropolis sampler with a flat target and a uniform proposal over all three states.
    proposal = [[F(1, 3)] * 3 for _ in range(3)]
    dist = markov_distribution(metropolis_kernel([1, 1, 1], proposal), start=0, steps=5)
    out.append(_scenario(
        "2ae92ae8-9af3-5c5a-adca-a2d21faedea6", 16, title="Metropolis on 3 states, flat target, 5 steps",
        form="text", kind="option", pmf=dict(zip("ABC", dist)),
        prompt=_text(
            "A Metropolis sampler explores three states A, B and C whose target weights are all equal. At every "
            "step it proposes a state chosen uniformly at random from all three (the current state included) and "
            "accepts the proposal with probability min(1, target(proposed) / target(current)); otherwise it stays "
            "where it is. The chain starts in state A and makes 5 steps.",
            "In which state is the chain after the 5 steps: A, B or C? " + _closing(4))))

    # release 25: one step of a three-state Markov chain from state A (row 0.2 / 0.5 / 0.3).
    kernel = [[F(2, 10), F(5, 10), F(3, 10)],
              [F(1, 10), F(6, 10), F(3, 10)],
              [F(4, 10), F(4, 10), F(2, 10)]]
    dist = markov_distribution(kernel, start=0, steps=1)
    out.append(_scenario(
        "abe99455-0911-5801-a5d6-3de71d69a1c7", 25, title="one step of a 3-state Markov chain from A",
        form="code", kind="option", pmf=dict(zip("ABC", dist)),
        prompt=_text(
            "A service's health is modelled as a Markov chain over the states A, B and C. The transition "
            "probabilities (row = current state, column = next state) are:",
            _code("""
                        A     B     C
                  A   0.2   0.5   0.3
                  B   0.1   0.6   0.3
                  C   0.4   0.4   0.2
                """),
            "The chain is in state A now and takes exactly one transition.",
            "Which state is it in afterwards: A, B or C? " + _closing(0))))

    # release 26: random-walk Metropolis for N(0, 1) started from an exact N(0, 1) draw, final state bucketed.
    # Started in stationarity, every state of the chain is exactly N(0, 1), so the buckets have probabilities
    # 1/2, Phi(1) - 1/2 and 1 - Phi(1); Phi(1) - 1/2 = erf(1 / sqrt 2) / 2 is irrational, taken as the nearest
    # double (math.erf, correct to 1 ulp) and completed so that the three probabilities sum to exactly 1.
    mid = F(math.erf(1 / math.sqrt(2)) / 2)
    out.append(_scenario(
        "64b5842a-f46a-5667-ba30-6493ed689bb5", 26, title="random-walk Metropolis for N(0,1), final state bucketed",
        form="code", kind="option", pmf={"A": F(1, 2), "B": mid, "C": F(1, 2) - mid},
        prompt=_text(
            "The following sampler targets the standard normal density pi(x) proportional to exp(-x*x/2):",
            _code("""
                x = gauss(0.0, 1.0)                      # start from an exact draw of the target
                for step in range(1000):
                    y = x + uniform(-1.0, 1.0)           # symmetric random-walk proposal
                    if uniform(0.0, 1.0) < min(1.0, exp((x * x - y * y) / 2)):
                        x = y                            # accept; otherwise keep x
                if x < 0:
                    print("A")
                elif x < 1:
                    print("B")
                else:
                    print("C")
                """),
            "All random numbers are independent. What letter does one run print: A, B or C? " + _closing(1))))

    # release 28: an automation workflow as a Markov chain; one transition out of "triage".
    states = ["triage", "validate_input", "retry_request", "escalate_issue"]
    kernel = [[F(0), F(1, 3), F(1, 3), F(1, 3)]] + [[F(1), F(0), F(0), F(0)]] * 3
    dist = markov_distribution(kernel, start=0, steps=1)
    out.append(_scenario(
        "ffff0598-5fe2-52a4-829a-2b2a17c7f043", 28, title="workflow Markov chain, next action after triage",
        form="text", kind="option", pmf={s: q for s, q in zip(states[1:], dist[1:])},
        prompt=_text(
            "A support-ticket automation is modelled as a Markov chain. From the state triage it moves to one of "
            "three actions, validate_input, retry_request or escalate_issue, each with probability 1/3; after any "
            "action it returns to triage. A ticket is currently in triage.",
            "Which action does the chain move to next? Answer validate_input, retry_request or escalate_issue. "
            + _closing(2))))
    return out
