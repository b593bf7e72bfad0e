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
    assert Counter(p.subcategory for p in problems) == {"os_concurrency": 7, "garbage_collection": 5,
                                                        "network": 5, "distributed_systems": 5, "hashing": 4,
                                                        "mcmc": 4} == SUBCATEGORY_COUNTS
    assert [p.id for p in problems] == EXPECTED_RW_IDS          # stable ids, stable order
    assert [p.id for p in realworld_problems()] == EXPECTED_RW_IDS
    assert [p.prompt for p in realworld_problems()] == [p.prompt for p in problems]
    assert len({p.uid for p in problems}) == 30 and all(p.uid for p in problems)
    for p in problems:
        assert (p.bank, p.category, p.task_type, p.regime) == ("ksn", "real_world", "real_world", "none")
        assert p.modality == "unimodal"                      # none of the 30 release laws has two separated peaks
        if p.answer_format == "option":
            assert (p.family, p.support) == ("categorical", "categorical")
            assert list(p.options) == p.params["labels"] == list(p.metadata["exact_pmf"])
            assert (p.low, p.high) == (0.0, len(p.options) - 1)
        elif p.answer_format == "permutation":
            assert (p.family, p.support) == ("uniform_permutation", "permutation")
            assert p.params == {"n": len(p.options), "items": list(p.options)}
            assert (p.low, p.high) == (0.0, 1.0)
        else:
            assert (p.answer_format, p.family, p.support) == ("integer", "empirical_discrete", "discrete")
            assert p.options == ()
            assert (p.low, p.high) == (min(p.params["values"]), max(p.params["values"]))
        # the parameters are valid for the named family (a permutation's items are ours, the family has n only)
        D.validate(p.family, {k: v for k, v in p.params.items() if k != "items"})
    kinds = Counter(p.answer_format for p in problems)
    assert kinds == {"option": 24, "integer": 2, "permutation": 4}
    assert sum(any("\n" in lab for lab in p.options) for p in problems if p.answer_format == "option") == 4
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
        if p.answer_format == "permutation":             # Z1 keys, as the shuffling problems have them
            assert {Fraction(k): q for k, q in fractions.items()} == z1_pmf(len(p.options))
            assert list(p.metadata["exact_pmf"]) == [float(Fraction(k)) for k in fractions]
            continue
        assert list(fractions) == list(p.metadata["exact_pmf"])
        assert all(float(q) == p.metadata["exact_pmf"][k] for k, q in fractions.items())
    for p in sh.values():
        fractions = {Fraction(k): Fraction(v) for k, v in p.metadata["exact_pmf_fraction"].items()}
        assert fractions == z1_pmf(len(p.options)) and sum(fractions.values()) == 1
    for spec in realworld_specs():
        assert sum(spec["pmf"].values()) == 1
        assert all(isinstance(q, Fraction) for q in spec["pmf"].values())
    for p in rw.values():
        if p.answer_format == "permutation":
            continue
        pvals = p.params["pvals"]
        assert abs(sum(pvals) - 1.0) < 1e-12
        assert pvals == [float(q) for q in exact_pmf(p).values()]
        if p.answer_format == "integer":
            assert p.params["values"] == [int(k) for k in exact_pmf(p)]


def test_hand_checked_pmfs(rw):
    """A few values worked out by hand, independently of the enumeration and integration code."""
    def pmf(pid):
        return exact_pmf(rw[pid])

    # jitter difference of two U(-20, 20) is triangular on (-40, 40): P(it exceeds 20) = 20**2 / (2 * 40**2)
    assert pmf("rw-network-01") == {"A": Fraction(7, 8), "B": Fraction(1, 8)}
    assert pmf("rw-network-02") == {"X": Fraction(1, 2), "Y": Fraction(1, 2)}
    # the fast thread lands inside the slow thread's 1 ms window out of 10 ms
    assert pmf("rw-os_concurrency-02") == {"1": Fraction(1, 10), "2": Fraction(9, 10)}
    # two pipes: a string is a path of fair choices until one pipe is empty
    merge = pmf("rw-os_concurrency-06")
    assert merge["AAABBB"] == merge["BBBAAA"] == Fraction(1, 8) and merge["ABABAB"] == Fraction(1, 32)
    assert merge["AABABB"] == Fraction(1, 16) and len(merge) == 20
    # parent and child: one line each w.p. (9/10)**2, then 2 orders; both lines each w.p. 1/100, then 24 orders
    logs = pmf("rw-os_concurrency-04")
    assert logs["parent-thread-1\nchild-thread-1"] == Fraction(9, 20) ** 2 / 2
    assert logs["child-thread-2\nparent-thread-1\nparent-thread-2"] == Fraction(9, 20) * Fraction(1, 10) / 6
    assert logs["parent-thread-1\nparent-thread-2\nchild-thread-1\nchild-thread-2"] == Fraction(1, 2400)
    # finalisers: a count 0..3 w.p. 1/4, a uniform subset, a uniform order
    fin = pmf("rw-garbage_collection-03")
    assert fin["(no output)"] == Fraction(1, 4) and fin["B"] == Fraction(1, 12)
    assert fin["C\nA"] == Fraction(1, 24) and fin["B\nC\nA"] == Fraction(1, 24)
    assert pmf("rw-network-05") == {str(100 + k): Fraction(math.comb(100, k) * 9 ** k, 10 ** 100)
                                    for k in range(101)}
    assert pmf("rw-mcmc-02") == {"A": Fraction(1, 5), "B": Fraction(1, 2), "C": Fraction(3, 10)}
    assert abs(float(pmf("rw-mcmc-03")["C"]) - 0.15865525393145707) < 1e-15
    for pid in ("rw-os_concurrency-07", "rw-garbage_collection-05", "rw-distributed_systems-02",
                "rw-distributed_systems-05", "rw-hashing-03", "rw-hashing-04", "rw-mcmc-01", "rw-mcmc-04"):
        assert set(pmf(pid).values()) == {Fraction(1, 3)}, pid
    assert set(pmf("rw-hashing-01").values()) == {Fraction(1, 162)}
    assert set(pmf("rw-hashing-02").values()) == {Fraction(1, 8)}


def test_first_arrival_integration_small_cases():
    from ub_core.problems.ksn.realworld_systems import _first_of_uniform_sums

    # X ~ U(0, 1) against Y ~ U(0, 1) + U(0, 1): P(Y < X) = integral of y**2 / 2 over (0, 1) = 1/6
    assert _first_of_uniform_sums({"X": (0, [(0, 1)]), "Y": (0, [(0, 1), (0, 1)])}) == {
        "X": Fraction(5, 6), "Y": Fraction(1, 6)}
    # disjoint supports: the earlier one always wins
    assert _first_of_uniform_sums({"a": (0, [(0, 1)]), "b": (5, [(0, 1)])}) == {"a": 1, "b": 0}
    # n iid competitors: 1/n each
    assert set(_first_of_uniform_sums({k: (3, [(0, 2), (-1, 1)]) for k in "pqrs"}).values()) == {Fraction(1, 4)}


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


def test_scheduler_scenarios_match_simulation(rw):
    rng = np.random.default_rng(20240601)

    def take(ch):
        def f(state, reg, m):
            state["out"][m] = state["out"][m] * 2 + ch      # the string as a base-2 number, A = 0, B = 1
        return f

    final = _scheduler_sim(rng, N_SIM, [[take(0)] * 3, [take(1)] * 3], {"out": 0}, lambda s: s["out"])
    labels = Counter(format(int(v), "06b").replace("0", "A").replace("1", "B") for v in final)
    assert_freqs_match(labels, N_SIM, exact_pmf(rw["rw-os_concurrency-06"]), "two pipes")

    def cas(code):
        def f(state, reg, m):
            empty = m & (state["owner"] == 0)
            state["owner"][empty] = code
        return f

    final = _scheduler_sim(rng, N_SIM, [[cas(1)], [cas(2)], [cas(3)]], {"owner": 0}, lambda s: s["owner"])
    assert_freqs_match(Counter(" ABC"[v] for v in final), N_SIM, exact_pmf(rw["rw-os_concurrency-07"]), "cas")


def test_os_and_gc_match_simulation(rw):
    rng = np.random.default_rng(7)
    # the lost update: fast thread at T ~ U(0, 10) ms loses the slow one's write when T < 1 ms
    t = rng.uniform(0, 10, N_SIM)
    assert_freqs_match(Counter(np.where(t < 1, "1", "2")), N_SIM, exact_pmf(rw["rw-os_concurrency-02"]), "race")
    # four sleepers
    names = np.array(["Red", "Blue", "Yellow", "Green"])
    first = names[rng.uniform(0, 100, (N_SIM, 4)).argmin(axis=1)]
    assert_freqs_match(Counter(first), N_SIM, exact_pmf(rw["rw-os_concurrency-01"]), "sleepers")
    # parent and child logging, lines shown in a uniformly random order
    logs = Counter()
    for _ in range(N_SIM // 4):
        lines = []
        for proc in ("parent", "child"):
            both = [f"{proc}-thread-1", f"{proc}-thread-2"]
            lines += both if rng.random() < 0.1 else [both[rng.integers(2)]]
        logs["\n".join(lines[i] for i in rng.permutation(len(lines)))] += 1
    assert_freqs_match(logs, N_SIM // 4, exact_pmf(rw["rw-os_concurrency-04"]), "logs")
    # finalisers that may not run
    fin = Counter()
    for _ in range(N_SIM // 4):
        k = rng.integers(4)
        chosen = list(rng.permutation(list("ABC"))[:k])
        fin["\n".join(chosen) if chosen else "(no output)"] += 1
    assert_freqs_match(fin, N_SIM // 4, exact_pmf(rw["rw-garbage_collection-03"]), "finalisers")


def test_network_and_distributed_match_simulation(rw):
    rng = np.random.default_rng(11)
    u = rng.uniform
    # four packets: channel, switch and server delays
    total = (np.array([20, 35, 25, 30]) + u(-10, 10, (N_SIM, 4)) + u(0, 10, (N_SIM, 4)) + u(0, 10, (N_SIM, 4)))
    first = np.array(["P1", "P2", "P3", "P4"])[total.argmin(axis=1)]
    assert_freqs_match(Counter(first), N_SIM, exact_pmf(rw["rw-network-03"]), "four packets")
    a, b = 50 + u(-20, 20, N_SIM), 70 + u(-20, 20, N_SIM)
    assert_freqs_match(Counter(np.where(a < b, "A", "B")), N_SIM, exact_pmf(rw["rw-network-01"]), "two paths")
    # backoff slots redrawn on ties
    winner = np.full(N_SIM, "", dtype=object)
    todo = np.arange(N_SIM)
    while todo.size:
        sa, sb = rng.integers(0, 4, todo.size), rng.integers(0, 4, todo.size)
        done = sa != sb
        winner[todo[done]] = np.where(sa[done] < sb[done], "A", "B")
        todo = todo[~done]
    assert_freqs_match(Counter(winner), N_SIM, exact_pmf(rw["rw-network-04"]), "backoff")
    delivered = 100 + rng.binomial(1, 0.9, (N_SIM // 4, 100)).sum(axis=1)
    assert_freqs_match(Counter(str(v) for v in delivered), N_SIM // 4, exact_pmf(rw["rw-network-05"]), "counter")
    # leader election with re-draws on a shared minimum
    leader = np.full(N_SIM, "", dtype=object)
    todo = np.arange(N_SIM)
    while todo.size:
        t = rng.integers(150, 301, (todo.size, 3))
        best = t.min(axis=1)
        unique = (t == best[:, None]).sum(axis=1) == 1
        leader[todo[unique]] = np.array(list("ABC"))[t[unique].argmin(axis=1)]
        todo = todo[~unique]
    assert_freqs_match(Counter(leader), N_SIM, exact_pmf(rw["rw-distributed_systems-02"]), "election")
    hedged = np.array(list("ABC"))[(5 + u(0, 10, (N_SIM, 3))).argmin(axis=1)]
    assert_freqs_match(Counter(hedged), N_SIM, exact_pmf(rw["rw-distributed_systems-05"]), "hedged read")


def test_hashing_and_mcmc_match_simulation(rw):
    rng = np.random.default_rng(13)
    # hash-ordered sections with a random member each
    pools = {"vowels": "AEI", "consonants": "BCD", "digits": "123"}
    names = list(pools)
    out = Counter()
    for _ in range(N_SIM // 4):
        order = [names[i] for i in rng.permutation(3)]
        out["\n".join(f"{n}: {pools[n][rng.integers(3)]}" for n in order)] += 1
    assert_freqs_match(out, N_SIM // 4, exact_pmf(rw["rw-hashing-01"]), "sections")
    pos = rng.integers(0, 360, N_SIM)
    ring = np.where((pos >= 1) & (pos <= 120), "B", np.where((pos >= 121) & (pos <= 240), "C", "A"))
    assert_freqs_match(Counter(ring), N_SIM, exact_pmf(rw["rw-hashing-04"]), "ring")
    # random-walk Metropolis for N(0, 1) started from the target; 200 steps are plenty to check invariance
    x = rng.standard_normal(N_SIM)
    for _ in range(200):
        y = x + rng.uniform(-1, 1, N_SIM)
        x = np.where(rng.random(N_SIM) < np.minimum(1.0, np.exp((x * x - y * y) / 2)), y, x)
    assert_freqs_match(Counter(np.where(x < 0, "A", np.where(x < 1, "B", "C"))), N_SIM,
                       exact_pmf(rw["rw-mcmc-03"]), "rwm")
    # flat-target Metropolis with a proposal over all three states, from A, 5 steps
    state = np.zeros(N_SIM, dtype=int)
    for _ in range(5):
        state = rng.integers(0, 3, N_SIM)          # the ratio is 1: every proposal is accepted
    assert_freqs_match(Counter(np.array(list("ABC"))[state]), N_SIM, exact_pmf(rw["rw-mcmc-01"]), "flat")


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
        elif p.answer_format == "permutation":            # Z1 draws, uniform on {k / (n - 1)}
            k = len(p.options)
            keys = Counter(str(Fraction(int(round(v * (k - 1))), k - 1)) for v in draws)
            assert_freqs_match(keys, n, pmf, p.id)
            continue
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
    bogus = {"rw-os_concurrency-04": "parent-thread-1\nparent-thread-1", "rw-garbage_collection-03": "A\nA",
             "rw-hashing-01": "vowels: A\nvowels: E\ndigits: 1", "rw-hashing-02": "A\nB"}
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
