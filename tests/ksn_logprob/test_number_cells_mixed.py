"""Cells on the permutation test: ``cell_p_pass_permutation`` and ``tied_critical_bracket``.

The mixed supports' truth draws have one point mass, at their minimum (the atom: zeros of a rectified Gaussian or
a compound Poisson), and are continuous elsewhere; KS@N scores them with the exact permutation test under ties.
The critical values are checked against that test on random samples with the same tie structure, and the bounds
against laws whose cells are placed by the test (each placed law's own pass rate, by the real test, inside)."""

from __future__ import annotations

import numpy as np
import pytest

from ub_core.logprob.number_cells import (cell_p_pass_permutation, clopper_pearson, tied_critical_bracket,
                                          truth_atom)
from ub_core.logprob.oracle_replies import OracleReplyLaw
from ub_core.logprob.reply_tree import TIGHT_GIVEN_MEASURED_GRAMMAR, enumerate_problem_tree_sync, score_reply_tree
from ub_core.metrics import ks_at_n
from ub_core.problems import get_problem

EOS = "</s>"


def test_the_truths_atom_is_found_only_at_its_minimum():
    assert truth_atom(np.array([0.0, 0.0, 0.5, 1.0])) == (0.0, 2)
    assert truth_atom(np.array([0.1, 0.5, 1.0])) == (None, 0)
    assert truth_atom(np.array([0.0, 0.0, 0.5, 0.5])) is None  # a second tie
    assert truth_atom(np.array([0.0, 0.5, 0.5])) is None  # a tie above the minimum


@pytest.mark.slow
@pytest.mark.parametrize("n, t0, k0", [(100, 683, 5), (100, 4567, 45), (100, 0, 0), (10, 3000, 3)])
def test_the_tied_critical_values_are_the_tests_own(n, t0, k0):
    """Random samples with the tie structure (t0 truth draws and k0 answers at the truth's minimum, all else
    continuous): every statistic at most c_pass passes and every one from c_fail on fails, as ks_at_n decides;
    the bracket is one statistic step (1 / 10,000) wide, so nothing attainable lies strictly inside."""
    m = 10_000
    c_pass, c_fail = tied_critical_bracket(n, m, t0, k0, 1e-4)
    assert 0 < c_pass < c_fail <= c_pass + 1 / m + 1e-12
    rng = np.random.default_rng(t0 + k0)
    truth = np.concatenate([np.zeros(t0), rng.exponential(size=m - t0)])
    seen = 0
    for scale in np.geomspace(0.3, 3.0 if n >= 100 else 30.0, 25):  # the rest compressed or stretched
        sample = np.concatenate([np.zeros(k0), rng.exponential(scale, size=n - k0)])
        res = ks_at_n(sample, truth, ns=(n,), threshold=1e-4, method="paper", support="mixed")[n]
        if res["statistic"] <= c_pass + 1e-12:
            assert res["pass"], (res, c_pass)
        else:
            assert res["statistic"] >= c_fail - 1e-12 and not res["pass"], (res, c_fail)
        seen += res["pass"]
    assert 0 < seen < 25  # both sides were tried


@pytest.mark.slow
def test_the_critical_value_does_not_grow_with_the_tie_block():
    """c(B) is non-increasing in the first block's size B (the bounds take it at the range's ends): a larger
    block's passing statistics are below a smaller block's failing ones."""
    brackets = [tied_critical_bracket(100, 10_000, 4567, k0, 1e-4) for k0 in (20, 45, 70, 95)]
    for (_, fail_small), (pass_large, _) in zip(brackets, brackets[1:]):
        assert pass_large < fail_small


def _mixed_law():
    """A law on [0, 3) in cells of 0.25 with an atom leaf at 0 (mass 0.1) and the bottom cell holding 0 too,
    missing mass 0.02, against a truth with 30% zeros and an exponential rest: the model has too few zeros and a
    stretched rest, so at N = 30 it passes sometimes (pass rates 0.4 to 0.9 by placement)."""
    a = np.arange(0.0, 3.0, 0.25)
    mass = np.exp(-(a + 0.125) / 3.0)
    cells = np.column_stack([a, a + 0.25, 0.88 * mass / mass.sum()])
    return np.array([0.0]), np.array([0.1]), cells, 0.02


def _placed_draw(rng, leaves, w, cells, missing, how, size):
    """``size`` answers of a law with the cells placed: ``low``/``high`` just inside an end (a continuous law
    within 1e-7 of it; the bottom cell's mass on the atom itself for ``low``), ``random`` anywhere; the missing
    mass valid and spread over [0, 3]."""
    probs = np.concatenate([w, cells[:, 2], [missing]])
    pick = rng.choice(probs.size, p=probs / probs.sum(), size=size)
    out = np.empty(size)
    nl = leaves.size
    for i, j in enumerate(pick.tolist()):
        if j < nl:
            out[i] = leaves[j]
        elif j < nl + len(cells):
            lo, hi = cells[j - nl, :2]
            if how == "low":
                out[i] = lo if lo == 0.0 else lo + 1e-7 * rng.uniform()
            elif how == "high":
                out[i] = hi - 1e-7 * rng.uniform()
            else:
                out[i] = rng.uniform(lo, hi)
        else:
            out[i] = rng.uniform(0.0, 3.0)
    return out


@pytest.fixture(scope="module")
def mixed_truth():
    rng = np.random.default_rng(7)
    return np.sort(np.concatenate([np.zeros(600), rng.exponential(1.0, size=1400)]))


@pytest.mark.slow
@pytest.mark.parametrize("how, second_leaf", [("low", False), ("high", False), ("random", False), ("high", True)])
def test_p_pass_bounds_hold_the_placed_laws_pass_rate(how, second_leaf, mixed_truth):
    """A law whose cells sit at their bottoms (the atom cell's mass on the atom: more ties), tops, or anywhere has
    its pass rate by the real permutation test (Monte Carlo, its own 99.9% Clopper-Pearson interval) inside the
    bounds computed without the placement. With a second leaf (off the atom, mass 0.06) samples that draw it twice
    have a tie the atom does not explain: no sure pass, a possible one."""
    leaves, w, cells, missing = _mixed_law()
    if second_leaf:
        leaves, w = np.array([0.0, 1.3]), np.array([0.1, 0.06])
        cells[:, 2] *= 0.82 / 0.88
    n = 30
    r = cell_p_pass_permutation(leaves, w, cells, missing, mixed_truth, n, 1e-4, low=0.0, draws=2000, seed=0)
    assert 0.02 < r["lo"] < r["hi"] < 0.99, r  # informative: neither end is the trivial one
    assert (r["odd_share"] > 0.1) == second_leaf  # P(the leaf twice in 30) = 0.55
    rng = np.random.default_rng({"low": 1, "high": 2, "random": 3}[how])
    runs = 300
    passed = sum(ks_at_n(_placed_draw(rng, leaves, w, cells, missing, how, n), mixed_truth, ns=(n,),
                         support="mixed")[n]["pass"] for _ in range(runs))
    p_lo, p_hi = clopper_pearson(passed, runs, level=0.999)
    assert p_hi >= r["lo"] and p_lo <= r["hi"], (p_lo, p_hi, r)


def _law_of(problem, texts):
    u, c = np.unique(np.asarray(texts, dtype=object), return_counts=True)
    return OracleReplyLaw({str(t): k / len(texts) for t, k in zip(u, c)}, problem.id, exact=False)


@pytest.mark.slow
@pytest.mark.parametrize("pid", ["te-rectified_gaussian-conc", "ti-compound_poisson-conc"])
def test_the_oracle_at_full_precision_is_bounded_on_a_mixed_support(pid):
    """On a mixed support the cells' mass must not count as unplaced (the oracle's p_pass@100 bounds would be
    [0, 1]): with the permutation test's critical values the problem's tree stops tight and
    the bounds are at most 0.1 wide, at the oracle's near-certain pass."""
    from ub_core.oracle import oracle_values, render_value

    p = get_problem(pid)
    law = _law_of(p, [render_value(p, v) for v in oracle_values(p, 20_000, seed=3)])
    tree = enumerate_problem_tree_sync(p, lambda pre: law.next_tokens(pre, 20), ends=[EOS], ns=(100,),
                                       sample=law.sampler(0))
    assert tree.stopped == TIGHT_GIVEN_MEASURED_GRAMMAR and tree.cells
    scores, payload = score_reply_tree(p, tree, ns=(100,))
    lo, hi = payload["p_pass_bounds@100"]
    assert hi - lo <= 0.1 and lo >= 0.95 and lo <= scores["p_pass@100"] <= hi


@pytest.mark.slow
def test_the_exact_method_on_a_continuous_support_gets_the_tie_free_critical_value():
    """``method="exact"`` scores a continuous problem with the permutation test; its truth has no tie, so the
    critical value is the tie-free one, which is scipy's exact test's: the cells bound p_pass as tightly as on
    the paper's test (before, their mass counted as unplaced)."""
    from ub_core.oracle import oracle_values, render_value

    p = get_problem("ci-triangular-conc")
    law = _law_of(p, [render_value(p, v) for v in oracle_values(p, 20_000, seed=3)])
    bounds = {}
    for method in ("paper", "exact"):
        tree = enumerate_problem_tree_sync(p, lambda pre: law.next_tokens(pre, 20), ends=[EOS], ns=(100,),
                                           sample=law.sampler(0), method=method)
        assert tree.stopped == TIGHT_GIVEN_MEASURED_GRAMMAR and tree.cells
        bounds[method] = score_reply_tree(p, tree, ns=(100,), method=method)[1]["p_pass_bounds@100"]
    lo, hi = bounds["exact"]
    assert hi - lo <= 0.1 and lo >= 0.95
    assert bounds["exact"] == pytest.approx(bounds["paper"], abs=1e-12)
