"""The 30 real-world scenarios and the 20 shuffling problems of the KS@N bank.

Tolerances. Where an exact probability p is compared with a frequency f over N independent runs, f has standard
error sqrt(p (1 - p) / N); we accept |f - p| <= 5 standard errors (and f == 0 exactly where p == 0). A correct
implementation fails one such check with probability about 5.7e-7 (normal approximation); over the few hundred
checks below that is below 1e-3, and every random stream is seeded, so the outcome is deterministic anyway.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from ub_core import distributions as D
from ub_core.problems.exact_pmf import convolve, interleave, markov_distribution, metropolis_kernel, pmf_modality
from ub_core.problems.ksn.realworld import SUBCATEGORY_COUNTS, realworld_problems, realworld_specs
from ub_core.problems.ksn.shuffling import release_uid, SHUFFLE_LISTS, TYPE_COUNTS, shuffling_problems, z1_pmf

Z = 5.0
N_SIM = 200_000

EXPECTED_RW_IDS = [f"rw-{sub}-{i:02d}" for sub, k in SUBCATEGORY_COUNTS.items() for i in range(1, k + 1)]
EXPECTED_SH_IDS = ([f"sh-integer-{i:02d}" for i in range(1, 7)] + [f"sh-ordinal-{i:02d}" for i in range(1, 7)]
                   + [f"sh-word-{i:02d}" for i in range(1, 6)] + [f"sh-decimal-{i:02d}" for i in range(1, 4)])


@pytest.fixture(scope="module")
def rw():
    return {p.id: p for p in realworld_problems()}


@pytest.fixture(scope="module")
def sh():
    return {p.id: p for p in shuffling_problems()}


def exact_pmf(problem) -> dict:
    """The exact pmf from the metadata, keyed by label or by the integer value written as a string."""
    return {str(k): Fraction(v) for k, v in problem.metadata["exact_pmf_fraction"].items()}


def assert_freqs_match(counts: Counter, total: int, pmf: dict, what: str) -> None:
    """Every outcome frequency within Z standard errors of its exact probability; nothing outside the support."""
    assert set(counts) <= set(pmf), (what, set(counts) - set(pmf))
    for key, p in pmf.items():
        p = float(p)
        f = counts.get(key, 0) / total
        if p == 0.0:
            assert f == 0.0, (what, key)
            continue
        se = math.sqrt(p * (1 - p) / total)
        assert abs(f - p) <= Z * se + 1e-12, (what, key, f, p, se)


# ------------------------------------------------------------------------------------------------ composition

def test_realworld_composition_and_ids(rw):
    problems = realworld_problems()
    assert len(problems) == 30
    assert Counter(p.subcategory for p in problems) == {"os_concurrency": 6, "garbage_collection": 6,
                                                        "network": 5, "distributed_systems": 5, "hashing": 4,
                                                        "mcmc": 4}
    assert [p.id for p in problems] == EXPECTED_RW_IDS          # stable ids, stable order
    assert [p.id for p in realworld_problems()] == EXPECTED_RW_IDS
    assert [p.prompt for p in realworld_problems()] == [p.prompt for p in problems]
    for p in problems:
        assert (p.bank, p.category, p.task_type, p.regime) == ("ksn", "real_world", "real_world", "none")
        assert p.modality in ("unimodal", "multimodal")
        if p.answer_format == "option":
            assert (p.family, p.support) == ("categorical", "categorical")
            assert list(p.options) == p.params["labels"] == list(p.metadata["exact_pmf"])
            assert (p.low, p.high) == (0.0, len(p.options) - 1)
            assert p.modality == "unimodal"
        else:
            assert (p.answer_format, p.family, p.support) == ("integer", "empirical_discrete", "discrete")
            assert p.options == ()
            assert (p.low, p.high) == (min(p.params["values"]), max(p.params["values"]))
        D.validate(p.family, p.params)                       # the parameters are valid for the named family
    kinds = Counter(p.answer_format for p in problems)
    assert kinds["option"] >= 10 and kinds["integer"] >= 10
    assert sum("\n" in lab for p in problems for lab in p.options) >= 6   # some multi-line printed outputs
    assert any(p.modality == "multimodal" for p in problems)
    forms = Counter(p.metadata["form"] for p in problems)
    assert forms["code"] >= 10 and forms["text"] >= 10


def test_shuffling_composition_and_ids(sh):
    problems = shuffling_problems()
    assert sorted(p.id for p in problems) == sorted(EXPECTED_SH_IDS)
    # in the release's row order: row i carries the uid of shuffling_human/questions.json:<i>
    assert [p.uid for p in problems] == [release_uid("shuffling_human", i) for i in range(20)]
    assert Counter(p.subcategory for p in problems) == TYPE_COUNTS == {"integer": 6, "ordinal": 6, "word": 5,
                                                                       "decimal": 3}
    lengths = [len(p.options) for p in problems]
    assert min(lengths) >= 2 and max(lengths) <= 4
    assert sum(lengths) == 60  # the release's lists (the paper counts 59)
    ordinals = {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                "forth"}  # the release spells "fourth" so in one list; we keep its items
    for p in problems:
        n = len(p.options)
        assert len(set(p.options)) == n
        assert (p.category, p.task_type, p.family, p.support, p.answer_format) == (
            "shuffling", "shuffling", "uniform_permutation", "permutation", "permutation")
        assert p.params["n"] == n and [str(x) for x in p.params["items"]] == list(p.options)
        assert (p.low, p.high, p.regime, p.modality) == (0.0, 1.0, "none", "unimodal")
        kind = p.subcategory
        if kind == "integer":
            assert all(isinstance(x, int) for x in p.params["items"])
        elif kind == "decimal":
            assert all(isinstance(x, float) and not x.is_integer() for x in p.params["items"])
        elif kind == "ordinal":
            assert set(p.options) <= ordinals
        else:
            assert all(o.isalpha() and o not in ordinals for o in p.options)
    assert [tuple(p.params["items"]) for p in problems] == [items for _, items in SHUFFLE_LISTS]


# ------------------------------------------------------------------------------------------------ prompts

FORMAT_WORDS = re.compile(r"curly|brace|comma-separated|answer with|answer format|and nothing else|\{\}", re.I)


def test_prompts_nonempty_distinct_and_format_free(rw, sh):
    problems = [*rw.values(), *sh.values()]
    for p in problems:
        assert len(p.prompt.strip()) >= 40, p.id
        assert not FORMAT_WORDS.search(p.prompt), p.id
        assert p.full_prompt.startswith(p.prompt) and len(p.full_prompt) > len(p.prompt)
    assert len({p.prompt for p in problems}) == len(problems)
    assert len({p.full_prompt for p in problems}) == len(problems)
    # prompts make clear that one outcome of one run is wanted
    for p in rw.values():
        assert re.search(r"\bone\b|\bonce\b|single", p.prompt, re.I), p.id
    # the shuffling templates vary
    assert len({p.prompt.split(":")[0][:30] for p in sh.values()}) >= 8


# ------------------------------------------------------------------------------------------------ exact pmfs

def test_every_pmf_sums_to_one_exactly(rw, sh):
    for p in rw.values():
        fractions = {k: Fraction(v) for k, v in p.metadata["exact_pmf_fraction"].items()}
        assert sum(fractions.values()) == 1, p.id
        assert all(q >= 0 for q in fractions.values())
        assert list(fractions) == list(p.metadata["exact_pmf"])
        assert all(float(q) == p.metadata["exact_pmf"][k] for k, q in fractions.items())
    for p in sh.values():
        fractions = {Fraction(k): Fraction(v) for k, v in p.metadata["exact_pmf_fraction"].items()}
        assert fractions == z1_pmf(len(p.options)) and sum(fractions.values()) == 1
    for spec in realworld_specs():
        assert sum(spec["pmf"].values()) == 1
        assert all(isinstance(q, Fraction) for q in spec["pmf"].values())
    for p in rw.values():
        pvals = p.params["pvals"]
        assert abs(sum(pvals) - 1.0) < 1e-12
        assert pvals == [float(q) for q in exact_pmf(p).values()]
        if p.answer_format == "integer":
            assert p.params["values"] == [int(k) for k in exact_pmf(p)]


def test_hand_checked_pmfs(rw):
    """A few values worked out by hand, independently of the enumeration code."""
    def pmf(pid):
        return exact_pmf(rw[pid])

    # T2 loads first (1/2), then T1 doubles before T2's store (1/4: x = 4) or after (1/4: x = 8); T1 first: 5.
    assert pmf("rw-os_concurrency-05") == {"4": Fraction(1, 4), "5": Fraction(1, 2), "8": Fraction(1, 4)}
    # The reader's single step lands uniformly-at-random-scheduled among the writer's 3 steps.
    assert pmf("rw-os_concurrency-03") == {"0": Fraction(1, 2), "1": Fraction(1, 4), "2": Fraction(1, 8),
                                           "3": Fraction(1, 8)}
    assert pmf("rw-os_concurrency-06")["r1=0 r2=0"] == 0
    # power of two choices: alpha wins 3 of the 6 pairs, bravo 2, charlie 1, delta none
    assert list(pmf("rw-network-04").values()) == [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6), 0]
    # backoff: P(k collisions) = prod of clash probabilities 1/2, 1/4, 1/8
    assert pmf("rw-network-05") == {"1": Fraction(1, 2), "2": Fraction(3, 8), "3": Fraction(7, 64),
                                    "4": Fraction(1, 64)}
    # hypergeometric: C(2,k) C(3,3-k) / C(5,3)
    assert pmf("rw-distributed_systems-03") == {str(k): Fraction(math.comb(2, k) * math.comb(3, 3 - k), 10)
                                                for k in range(3)}
    # Binomial(6, 1/4)
    assert pmf("rw-garbage_collection-02") == {str(k): Fraction(math.comb(6, k) * 3 ** (6 - k), 4 ** 6)
                                               for k in range(7)}
    # truncated geometric retransmissions
    assert pmf("rw-network-02") == {"0": Fraction(7, 10), "1": Fraction(21, 100), "2": Fraction(63, 1000),
                                    "3": Fraction(27, 1000)}
    # Gibbs sweep: x | y=0 is (4/5, 1/5); y | x is (4/5, 1/5) or (1/5, 4/5)
    assert list(pmf("rw-mcmc-03").values()) == [Fraction(16, 25), Fraction(4, 25), Fraction(1, 25),
                                                Fraction(4, 25)]
    # 3 keys into 4 buckets: all distinct 4*3*2/64, all equal 4/64
    assert pmf("rw-hashing-01") == {"1": Fraction(4, 64), "2": Fraction(36, 64), "3": Fraction(24, 64)}
    # Bloom filter: P(maybe) = E[(set bits / 8)^2] with 4 uniform positions; via the occupancy law
    occupancy = {k: Fraction(math.comb(8, k) * _surjections(4, k), 8 ** 4) for k in range(1, 5)}
    assert pmf("rw-hashing-03")["maybe"] == sum(q * Fraction(k, 8) ** 2 for k, q in occupancy.items())


def _surjections(n: int, k: int) -> int:
    return sum((-1) ** j * math.comb(k, j) * (k - j) ** n for j in range(k + 1))


def test_machinery_small_cases():
    # one step each: the first step decides, 1/2 each
    say = lambda w: (lambda sh, lo: sh["out"].append(w))  # noqa: E731
    assert interleave([[say("a")], [say("b")]], {"out": []}, lambda s: "".join(s["out"])) == {
        "ab": Fraction(1, 2), "ba": Fraction(1, 2)}
    assert convolve({0: Fraction(1, 2), 1: Fraction(1, 2)}, {0: Fraction(1, 2), 1: Fraction(1, 2)}) == {
        0: Fraction(1, 4), 1: Fraction(1, 2), 2: Fraction(1, 4)}
    kern = metropolis_kernel([1, 1], [[Fraction(0), Fraction(1)], [Fraction(1), Fraction(0)]])
    assert markov_distribution(kern, 0, 3) == [0, 1]
    # the stationary law of a Metropolis kernel is the target
    w = [1, 2, 3, 4]
    half = Fraction(1, 2)
    prop = [[half if abs(i - j) == 1 else 0 for j in range(4)] for i in range(4)]
    prop[0][0] = prop[3][3] = half
    kern = metropolis_kernel(w, prop)
    pi = [Fraction(x, 10) for x in w]
    assert [sum(pi[i] * kern[i][j] for i in range(4)) for j in range(4)] == pi
    assert pmf_modality({0: Fraction(1, 2), 1: Fraction(1, 10), 2: Fraction(2, 5)}) == "multimodal"
    assert pmf_modality({0: Fraction(1, 4), 1: Fraction(1, 2), 2: Fraction(1, 4)}) == "unimodal"


# ------------------------------------------------------------------------------------------------ brute force

def _scheduler_sim(rng, n_runs, programs, init, outcome):
    """Vectorised Monte Carlo of the uniform random scheduler: every run picks among its runnable threads."""
    state = {k: np.full(n_runs, v) for k, v in init.items()}
    pcs = np.zeros((n_runs, len(programs)), dtype=int)
    lengths = np.array([len(p) for p in programs])
    regs = [dict() for _ in programs]
    for _ in range(lengths.sum()):
        runnable = pcs < lengths
        k = runnable.sum(axis=1)
        pick_rank = np.floor(rng.random(n_runs) * k).astype(int)
        # the pick_rank-th runnable thread
        chosen = np.argmax(np.cumsum(runnable, axis=1) > pick_rank[:, None], axis=1)
        for t, prog in enumerate(programs):
            for step_no, step in enumerate(prog):
                mask = (chosen == t) & (pcs[:, t] == step_no)
                if mask.any():
                    step(state, regs[t], mask)
        pcs[np.arange(n_runs), chosen] += 1
    return outcome(state)


def test_racy_counter_matches_simulation(rw):
    rng = np.random.default_rng(20240601)

    def read(state, reg, m):
        reg.setdefault("tmp", np.zeros(m.size, dtype=int))
        reg["tmp"][m] = state["counter"][m]

    def write(state, reg, m):
        state["counter"][m] = reg["tmp"][m] + 1

    final = _scheduler_sim(rng, N_SIM, [[read, write, read, write]] * 2, {"counter": 0}, lambda s: s["counter"])
    assert_freqs_match(Counter(str(int(v)) for v in final), N_SIM, exact_pmf(rw["rw-os_concurrency-01"]),
                       "racy counter")


def test_check_then_act_and_litmus_match_simulation(rw):
    rng = np.random.default_rng(7)

    def check(state, reg, m):
        reg.setdefault("seen", np.zeros(m.size, dtype=bool))
        reg["seen"][m] = state["ready"][m]

    def act(state, reg, m):
        go = m & ~reg["seen"]
        state["ready"][go] = True
        state["inits"][go] += 1

    final = _scheduler_sim(rng, N_SIM, [[check, act]] * 3, {"ready": False, "inits": 0}, lambda s: s["inits"])
    assert_freqs_match(Counter(str(int(v)) for v in final), N_SIM, exact_pmf(rw["rw-os_concurrency-04"]),
                       "check-then-act")

    def store(var):
        def f(state, reg, m):
            state[var][m] = 1
        return f

    def load(var, dst):
        def f(state, reg, m):
            state[dst][m] = state[var][m]
        return f

    out = _scheduler_sim(rng, N_SIM, [[store("x"), load("y", "r1")], [store("y"), load("x", "r2")]],
                         {"x": 0, "y": 0, "r1": 0, "r2": 0}, lambda s: (s["r1"], s["r2"]))
    labels = Counter(f"r1={a} r2={b}" for a, b in zip(*out))
    assert_freqs_match(labels, N_SIM, exact_pmf(rw["rw-os_concurrency-06"]), "store buffering")


def test_network_and_hashing_match_simulation(rw):
    rng = np.random.default_rng(11)
    # backoff collisions
    collisions = np.ones(N_SIM, dtype=int)
    going = np.ones(N_SIM, dtype=bool)
    for window in (2, 4, 8):
        same = rng.integers(0, window, N_SIM) == rng.integers(0, window, N_SIM)
        collisions += going & same
        going &= same
    assert_freqs_match(Counter(str(v) for v in collisions), N_SIM, exact_pmf(rw["rw-network-05"]), "backoff")
    # packets with jitter
    a = 2 + rng.integers(0, 4, N_SIM)
    b = 2 + rng.integers(0, 4, N_SIM)
    assert_freqs_match(Counter(np.where(a <= b, "A\nB", "B\nA")), N_SIM, exact_pmf(rw["rw-network-01"]), "jitter")
    # Bloom filter: 4 insert positions, 2 query positions
    bits = rng.integers(0, 8, (N_SIM, 4))
    query = rng.integers(0, 8, (N_SIM, 2))
    hit = np.all((query[:, :, None] == bits[:, None, :]).any(axis=2), axis=1)
    assert_freqs_match(Counter(np.where(hit, "maybe", "no")), N_SIM, exact_pmf(rw["rw-hashing-03"]), "bloom")
    # longest chain
    keys = rng.integers(0, 4, (N_SIM, 6))
    longest = np.stack([(keys == b).sum(axis=1) for b in range(4)], axis=1).max(axis=1)
    assert_freqs_match(Counter(str(v) for v in longest), N_SIM, exact_pmf(rw["rw-hashing-04"]), "chains")
    # three routers
    q = rng.choice([0, 1, 6], size=(N_SIM, 3), p=[1 / 2, 1 / 3, 1 / 6])
    assert_freqs_match(Counter(str(v) for v in 6 + q.sum(axis=1)), N_SIM, exact_pmf(rw["rw-network-03"]),
                       "routers")


def test_distributed_and_gc_match_simulation(rw):
    rng = np.random.default_rng(12)
    # gossip: 6 nodes, 3 rounds of push
    informed = np.zeros((N_SIM, 6), dtype=bool)
    informed[:, 0] = True
    for _ in range(3):
        start = informed.copy()
        for node in range(6):
            pick = rng.integers(0, 5, N_SIM)
            pick = pick + (pick >= node)          # uniform over the other five nodes
            informed[np.flatnonzero(start[:, node]), pick[start[:, node]]] = True
    assert_freqs_match(Counter(str(v) for v in informed.sum(axis=1)), N_SIM,
                       exact_pmf(rw["rw-distributed_systems-04"]), "gossip")
    # leader election with re-draws
    leader = np.full(N_SIM, "", dtype=object)
    todo = np.arange(N_SIM)
    while todo.size:
        t = np.stack([rng.integers(1, 4, todo.size), rng.integers(1, 5, todo.size), rng.integers(2, 7, todo.size)],
                     axis=1)
        best = t.min(axis=1)
        unique = (t == best[:, None]).sum(axis=1) == 1
        leader[todo[unique]] = np.array(list("PQR"))[t[unique].argmin(axis=1)]
        todo = todo[~unique]
    assert_freqs_match(Counter(leader), N_SIM, exact_pmf(rw["rw-distributed_systems-02"]), "election")
    # reordering channel
    arrive = np.stack([0 + rng.integers(1, 5, N_SIM), 1 + rng.integers(1, 5, N_SIM), 2 + rng.integers(1, 5, N_SIM)],
                      axis=1)
    order = np.argsort(arrive * 10 + np.arange(3), axis=1)
    labels = Counter("\n".join(f"m{i + 1}" for i in row) for row in order)
    assert_freqs_match(labels, N_SIM, exact_pmf(rw["rw-distributed_systems-05"]), "channel")
    # toy allocator
    free = np.full(N_SIM, 8)
    allocs = np.zeros(N_SIM, dtype=int)
    alive = np.ones(N_SIM, dtype=bool)
    while alive.any():
        size = rng.integers(1, 4, N_SIM)
        fits = alive & (size <= free)
        free[fits] -= size[fits]
        allocs[fits] += 1
        alive = fits
    assert_freqs_match(Counter(str(v) for v in allocs), N_SIM, exact_pmf(rw["rw-garbage_collection-05"]),
                       "allocator")


def test_mcmc_matches_simulation(rw):
    rng = np.random.default_rng(13)
    for pid, w, start, steps in (("rw-mcmc-01", [1, 2, 3, 4], 0, 3), ("rw-mcmc-02", [6, 1, 1, 1, 6], 2, 4)):
        w = np.asarray(w, dtype=float)
        state = np.full(N_SIM, start)
        for _ in range(steps):
            prop = state + rng.choice([-1, 1], N_SIM)
            ok = (prop >= 0) & (prop < w.size)
            ratio = np.where(ok, w[np.clip(prop, 0, w.size - 1)] / w[state], 0.0)
            accept = ok & (rng.random(N_SIM) < np.minimum(1.0, ratio))
            state = np.where(accept, prop, state)
        assert_freqs_match(Counter(str(v) for v in state), N_SIM, exact_pmf(rw[pid]), pid)
    target = {"A": 1 / 2, "B": 1 / 3, "C": 1 / 6}
    names = np.array(["A", "B", "C"])
    tv = np.array([target[x] for x in names])
    state = np.full(N_SIM, 2)
    for _ in range(2):
        prop = rng.integers(0, 3, N_SIM)
        accept = rng.random(N_SIM) < np.minimum(1.0, tv[prop] / tv[state])
        state = np.where(accept, prop, state)
    assert_freqs_match(Counter(names[state]), N_SIM, exact_pmf(rw["rw-mcmc-04"]), "independence sampler")


# ------------------------------------------------------------------------------------------------ draws

def test_draw_frequencies_match_pmf(rw):
    n = 10_000
    for p in rw.values():
        draws = p.draw(n, seed=0)
        assert draws.shape == (n,) and draws.dtype == float
        assert np.array_equal(draws, p.draw(n, seed=0))
        pmf = exact_pmf(p)
        if p.answer_format == "option":
            keys = Counter(p.options[int(v)] for v in draws)
        else:
            keys = Counter(str(int(v)) for v in draws)
        assert_freqs_match(keys, n, pmf, p.id)
        # the same law as the registered family's own sampler
        ours = p.sampler(np.random.default_rng(5), 1000)
        theirs = D.sample(p.family, p.params, 1000, np.random.default_rng(5))
        assert np.array_equal(ours, np.asarray(theirs, dtype=float)), p.id


def test_shuffling_draws_match_uniform_z1(sh):
    n = 10_000
    for p in sh.values():
        k = len(p.options)
        draws = p.draw(n, seed=0)
        expected = {z: q for z, q in z1_pmf(k).items()}
        counts = Counter(Fraction(round(v * (k - 1)), k - 1) for v in draws)
        assert np.allclose(draws * (k - 1), np.round(draws * (k - 1)))
        assert_freqs_match(counts, n, expected, p.id)
        assert sum(exact_pmf(p).values()) == 1


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_z1_law_equals_uniform_permutation_law(n):
    from ub_core.metrics import lehmer_z1, lehmer_z1_many

    # exact: enumerate every permutation
    exact = Counter()
    for perm in itertools.permutations(range(n)):
        exact[Fraction(lehmer_z1(list(perm))).limit_denominator(n - 1)] += Fraction(1, math.factorial(n))
    assert dict(exact) == z1_pmf(n)
    # the registered permutation sampler passed through lehmer_z1_many has the same law as our sampler
    size = 20_000
    perms = D.sample("uniform_permutation", {"n": n}, size, 3)
    z = np.asarray(lehmer_z1_many(perms), dtype=float)
    counts = Counter(Fraction(int(round(v * (n - 1))), n - 1) for v in z)
    assert_freqs_match(counts, size, z1_pmf(n), f"uniform_permutation n={n}")
    ours = np.random.default_rng(4).integers(0, n, size=size) / (n - 1)
    counts = Counter(Fraction(int(round(v * (n - 1))), n - 1) for v in ours)
    assert_freqs_match(counts, size, z1_pmf(n), f"sampler n={n}")


# ------------------------------------------------------------------------------------------------ parsing

def test_option_labels_round_trip(rw):
    for p in rw.values():
        if p.answer_format != "option":
            continue
        for i, label in enumerate(p.options):
            res = p.parse("{" + label + "}")
            assert res.ok and res.value == float(i), (p.id, label, res)
        assert not p.parse("{zzz-unknown-outcome}").ok, p.id
    # printouts made of the right lines that are not possible outputs
    bogus = {"rw-os_concurrency-02": "ping\nping\npong", "rw-garbage_collection-03": "gone\nalive\nalive",
             "rw-network-01": "A\nA", "rw-distributed_systems-05": "m1\nm1\nm2"}
    assert set(bogus) == {p.id for p in rw.values() if any("\n" in lab for lab in p.options)}
    for pid, text in bogus.items():
        assert not rw[pid].parse("{" + text + "}").ok, pid


def test_integer_answers_parse_and_respect_support(rw):
    for p in rw.values():
        if p.answer_format != "integer":
            continue
        for v in p.params["values"]:
            res = p.parse("{" + str(v) + "}")
            assert res.ok and res.value == float(v), (p.id, v, res)
        assert not p.parse("{" + str(int(p.high) + 1) + "}").ok, p.id
        assert not p.parse("{" + str(int(p.low) - 1) + "}").ok, p.id


def _z1_reference(order: list[int]) -> float:
    first = order[0]
    return sum(1 for x in order[1:] if x < first) / (len(order) - 1)


def test_shuffling_parse_gives_z1(sh):
    for p in sh.values():
        k = len(p.options)
        for perm in itertools.permutations(range(k)):
            text = "{" + ", ".join(p.options[i] for i in perm) + "}"
            res = p.parse(text)
            assert res.ok, (p.id, text, res)
            assert res.value == pytest.approx(_z1_reference(list(perm))), (p.id, text)
        assert not p.parse("{" + ", ".join(p.options[:-1]) + "}").ok or k == 1   # an item missing
        assert not p.parse("{" + ", ".join([*p.options, "zebra"]) + "}").ok     # an unknown item
