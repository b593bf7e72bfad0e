"""Numbers as intervals: ``ub_core.logprob.number_cells`` and the tree route's cells.

The bounds are checked against laws whose every detail is known: each cell's mass is placed inside its interval
by the test (at random, or at the extremes that move the statistic most) and the placed law's own KS distance and
pass rate must lie inside the bounds computed without knowing the placement."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ub_core.logprob.number_cells import (cell_p_pass, clopper_pearson, critical_bracket, interval_statistics,
                                          ks_distance_bounds, number_cell)
from ub_core.logprob.oracle_replies import OracleReplyLaw
from ub_core.logprob.reply_tree import (TIGHT_GIVEN_MEASURED_GRAMMAR, ReplyTree,
                                        enumerate_problem_tree_sync, enumerate_reply_tree_sync,
                                        ks_distance_to_draws, missing_mass_bounds, score_reply_tree)
from ub_core.metrics import ks_at_n
from ub_core.metrics.answer_distribution import p_pass_at_n
from ub_core.problems import get_problem

EOS = "</s>"


@pytest.mark.parametrize("text, interval", [
    ("{4.9", (4.9, 5.0)), (" {-4.9", (-5.0, -4.9)), ("{4.", (4.0, 5.0)), ("{0.0042", (0.0042, 0.0043)),
    ("{+12.50", (12.5, 12.51)), ("{4", None), ("{4.9}", None), ("{4.9e", None), ("4.9", None), ("{4.9 ", None)])
def test_a_numeric_prefix_is_the_interval_its_numbers_fill(text, interval):
    got = number_cell(text)
    if interval is None:
        assert got is None
    else:
        assert got[0] == pytest.approx(interval[0], abs=1e-9) and got[1] == pytest.approx(interval[1], abs=1e-9)
        assert got[0] <= interval[0] and got[1] >= interval[1]  # widened, never narrowed


@pytest.mark.parametrize("n", [10, 100])
def test_the_critical_bracket_is_the_tests_own(n):
    """Every statistic at most c_pass passes and every one from c_fail on fails, as ks_at_n decides on real
    samples; with 10,000 draws (a multiple of N) no statistic fits strictly between the two."""
    c_pass, c_fail = critical_bracket(n, 10_000, 1e-4)
    assert 0 < c_pass < c_fail <= c_pass + 1 / 10_000 + 1e-12
    rng = np.random.default_rng(n)
    truth = np.sort(rng.normal(size=10_000))
    seen = 0
    for shift in np.linspace(0.0, 1.5, 40):
        res = ks_at_n(rng.normal(shift, 1.0, size=n), truth, ns=(n,), threshold=1e-4, method="paper",
                      support="continuous")[n]
        if res["statistic"] <= c_pass + 1e-12:
            assert res["pass"]
        else:
            assert res["statistic"] >= c_fail - 1e-12 and not res["pass"]
        seen += res["pass"]
    assert 0 < seen < 40  # both sides were tried


def test_interval_statistics_hold_every_placement_and_meet_on_points():
    """A sample of N values each known only to an interval: the KS statistic of any placement lies in
    [D_lo, D_hi], the bounds are attained by the extreme placements where they are, and they meet on points."""
    rng = np.random.default_rng(0)
    truth = np.sort(rng.normal(size=500))
    for _ in range(100):
        n = int(rng.integers(1, 30))
        bottom = np.round(rng.normal(size=n), 1)  # ties on purpose
        top = bottom + np.where(rng.uniform(size=n) < 0.5, 0.0, rng.uniform(0, 0.5, size=n))
        lo, hi = interval_statistics(top[None], bottom[None], truth)
        for k in range(12):
            spots = bottom if k == 0 else top if k == 1 else rng.uniform(bottom, top)
            d = ks_distance_to_draws(np.ones(n), spots, truth)
            assert lo[0] - 1e-12 <= d <= hi[0] + 1e-12
        lo, hi = interval_statistics(bottom[None], bottom[None], truth)
        assert lo[0] == pytest.approx(ks_distance_to_draws(np.ones(n), bottom, truth), abs=1e-12) == hi[0]


def _random_law(rng, n_leaves=5, n_cells=6, missing=0.03):
    leaves = np.sort(rng.normal(size=n_leaves))
    a = np.sort(rng.normal(size=n_cells))
    cells = np.column_stack([a, a + rng.uniform(0.05, 0.6, size=n_cells), np.zeros(n_cells)])
    w = rng.dirichlet(np.ones(n_leaves + n_cells)) * (1 - missing)
    cells[:, 2] = w[n_leaves:]
    return leaves, w[:n_leaves], cells, missing


def _place(rng, leaves, w, cells, missing, how):
    """One law the bounds must hold: each cell's mass at one point of its interval, the missing mass at a random
    place (valid) or dropped (invalid)."""
    if how == "low":
        spots = cells[:, 0]
    elif how == "high":
        spots = cells[:, 1]
    else:
        spots = rng.uniform(cells[:, 0], cells[:, 1])
    values = np.concatenate([leaves, spots])
    masses = np.concatenate([w, cells[:, 2]])
    if how != "drop":
        values = np.append(values, rng.normal(0, 3))
        masses = np.append(masses, missing * rng.uniform())
    return values, masses


@pytest.mark.parametrize("seed", range(6))
def test_ks_distance_bounds_hold_every_placement(seed):
    rng = np.random.default_rng(seed)
    leaves, w, cells, missing = _random_law(rng)
    truth = np.sort(rng.normal(0.3, 1.2, size=400))
    lo, hi = ks_distance_bounds(leaves, w, cells, missing, truth)
    for how in ("low", "high", "drop", "random", "random", "random"):
        values, masses = _place(rng, leaves, w, cells, missing, how)
        d = ks_distance_to_draws(masses, values, truth)
        assert lo - 1e-12 <= d <= hi + 1e-12, (how, lo, d, hi)
    # a cell narrowed to a point and no missing mass: the bounds meet at the law's own distance
    pts = cells.copy()
    pts[:, 1] = pts[:, 0]
    lo, hi = ks_distance_bounds(leaves, w / w.sum() * (1 - cells[:, 2].sum() / 1), pts, 0.0, truth)
    exact = ks_distance_to_draws(np.concatenate([w / w.sum() * (1 - cells[:, 2].sum()), cells[:, 2]]),
                                 np.concatenate([leaves, pts[:, 0]]), truth)
    assert lo == pytest.approx(exact, abs=1e-9) and hi == pytest.approx(exact, abs=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["low", "high", "random"])
def test_p_pass_bounds_hold_the_placed_laws_pass_rate(how):
    """Cells on the paper's continuous test: a law whose cells sit at their bottoms, tops, or anywhere has its
    pass rate (Monte Carlo, its own 99.9% interval) inside the bounds (Monte-Carlo error already included)."""
    rng = np.random.default_rng(11)
    truth = np.sort(rng.normal(size=10_000))
    a = np.round(np.arange(-2.5, 2.5, 0.25), 2)
    cells = np.column_stack([a, a + 0.25, np.diff(np.append(a, 2.75)) * 0 + 1.0])
    centre = a + 0.125 - 1.0  # the model's law is shifted by one sd: an intermediate pass rate at N = 20
    cells[:, 2] = np.exp(-0.5 * centre ** 2)
    cells[:, 2] *= 0.98 / cells[:, 2].sum()
    missing, n = 0.02, 20
    r = cell_p_pass([], [], cells, missing, truth, n, critical_bracket(n, truth.size, 1e-4), draws=2000, seed=0)
    assert 0.05 < r["lo"] < r["hi"] < 0.999
    values, masses = _place(rng, np.array([]), np.array([]), cells, missing, how)
    placed = p_pass_at_n(masses, values, truth, n, support="continuous", draws=4000, seed=5, mode="mc")["p_pass"]
    p_lo, p_hi = clopper_pearson(placed * 4000, 4000, level=0.999)
    assert p_hi >= r["lo"] and p_lo <= r["hi"], (p_lo, p_hi, r)


def test_monte_carlo_error_is_inside_the_bounds():
    """A Monte-Carlo share of 1 (every draw passed) is not a certainty: the lower bound is its Clopper-Pearson
    bound, below 1; an exact sum keeps its value."""
    truth = np.sort(np.random.default_rng(0).normal(size=10_000))
    cells = np.array([[-0.01, 0.01, 1.0]])  # everything near the median: fails at N = 100, passes at N = 1
    r = cell_p_pass([], [], cells, 0.0, truth, 1, critical_bracket(1, truth.size, 1e-4), draws=2000)
    assert r["p"] == 1.0 and r["hi"] == 1.0 and r["lo"] == pytest.approx(0.005 ** (1 / 2000), rel=1e-6)
    b = missing_mass_bounds(0.1, {5: 1.0}, 1.0, 0.0, 0.0, draws={5: 2000})
    assert b["p_pass_bounds@5"][0] == pytest.approx(0.005 ** (1 / 2000), rel=1e-6)
    assert missing_mass_bounds(0.1, {5: 1.0}, 1.0, 0.0, 0.0)["p_pass_bounds@5"] == [1.0, 1.0]


def _law_of(problem, texts):
    u, c = np.unique(np.asarray(texts, dtype=object), return_counts=True)
    return OracleReplyLaw({str(t): k / len(texts) for t, k in zip(u, c)}, problem.id, exact=False)


@pytest.fixture(scope="module")
def full_precision():
    """ci-triangular-conc written at full precision (the sampled ub/oracle's repr), one digit per token: the
    problem a 2-digit tree fails."""
    from ub_core.oracle import oracle_values, render_value

    p = get_problem("ci-triangular-conc")
    return p, _law_of(p, [render_value(p, v) for v in oracle_values(p, 20_000, seed=3)])


def test_leaves_cannot_cover_full_precision_numbers_but_cells_bound_them(full_precision):
    """Enumerating leaves of full-precision numbers leaves most of the mass missing at the budget
    (every number is a leaf 17 digits deep). With cells the same model is bounded within the targets in a few
    dozen requests."""
    p, law = full_precision
    legacy = enumerate_reply_tree_sync(lambda pre: law.next_tokens(pre, 20), ends=[EOS], max_requests=300)
    assert legacy.stopped == "budget" and legacy.missing_mass > 0.9
    legacy_scores, legacy_payload = score_reply_tree(p, legacy, ns=(100,))
    lo, hi = legacy_payload["p_pass_bounds@100"]
    assert hi - lo > 0.5  # the leaves alone say almost nothing

    tree = enumerate_problem_tree_sync(p, lambda pre: law.next_tokens(pre, 20), ends=[EOS], ns=(100,),
                                       sample=law.sampler(0), max_requests=300)
    # tight only with the cells placed by the number grammar: the stop says so
    assert tree.stopped == TIGHT_GIVEN_MEASURED_GRAMMAR and tree.requests <= 100
    assert tree.cells and tree.missing_mass < 1e-9
    scores, payload = score_reply_tree(p, tree, ns=(10, 100))
    ks_lo, ks_hi = payload["ks_distance_bounds_given_grammar"]
    assert ks_hi - ks_lo <= 0.02
    e = payload["grammar_probe"]["escape_bound"]  # the probe's bound widens each envelope by at most e
    assert payload["ks_distance_bounds"][1] - payload["ks_distance_bounds"][0] <= 0.02 + 2 * e + 1e-9
    for n in (10, 100):
        lo, hi = payload[f"p_pass_bounds@{n}"]
        assert hi - lo <= 0.1 and lo >= 0.95 and lo <= scores[f"p_pass@{n}"] <= hi
    # the law's own distance (every leaf of the 20,000-text law) lies inside
    values = np.array([float(t.strip("{}")) for t in law.texts])
    d_law = ks_distance_to_draws(law.probs, values, p.truth(size=10_000, seed=0))
    assert ks_lo - 1e-12 <= d_law <= ks_hi + 1e-12
    # what the assumption buys, stated beside it: the cells' mass, and bounds without it that hold the law too
    assert payload["cell_mass"] == pytest.approx(sum(tree.cells.values()))
    u_lo, u_hi = payload["ks_distance_bounds_unassumed"]
    assert u_lo - 1e-12 <= d_law <= u_hi + 1e-12 and u_hi - u_lo >= ks_hi - ks_lo
    for n in (10, 100):
        lo, hi = payload[f"p_pass_bounds@{n}"]
        pu_lo, pu_hi = payload[f"p_pass_bounds_unassumed@{n}"]
        assert pu_lo <= lo + 1e-12 and pu_hi >= hi - 1e-12


def _three_digit_uniform(prefix: str, top_k: int):
    """A model whose replies are ``{0.ddd}`` with ddd one three-digit token, uniform over 000-999 (then ``}`` and
    the end): a digit position with 1,000 children."""
    if prefix == "":
        return [("{", 0.0)]
    if prefix == "{":
        return [("0", 0.0)]
    if prefix == "{0":
        return [(".", 0.0)]
    if prefix == "{0.":
        return [(f"{i:03d}", math.log(1e-3)) for i in range(1000)][:top_k]
    if len(prefix) == 6:
        return [("}", 0.0)]
    return [(EOS, 0.0)]


@pytest.mark.parametrize("top_k", [20, 1000])
def test_three_digit_tokens_are_bounded_honestly_with_top_20_and_resolved_with_more(top_k):
    """Uniform(0, 1) answers against te-beta-spread's Beta(1, 0.5): with top-20 only 2% of the mass is listed
    at the three-digit position; the rest stays a cell over [0, 1], and the bounds say so (wide, holding the
    model's true distance). With top-1000 every child is listed and the bounds close."""
    p = get_problem("te-beta-spread")
    rng = np.random.default_rng(0)
    tree = enumerate_problem_tree_sync(p, lambda pre: _three_digit_uniform(pre, top_k), ends=[EOS], ns=(100,),
                                       top_k=top_k, max_requests=200,
                                       sample=lambda k: [f"{{0.{i:03d}}}" for i in rng.integers(0, 1000, k)])
    scores, payload = score_reply_tree(p, tree, ns=(100,))
    truth = np.sort(p.truth(size=10_000, seed=0))
    grid = np.arange(1000) / 1000
    true_d = ks_distance_to_draws(np.full(1000, 1e-3), grid, truth)
    lo, hi = payload["ks_distance_bounds"]
    assert lo - 1e-9 <= true_d <= hi + 1e-9
    if top_k == 20:
        assert tree.cells.get("{0.", 0) == pytest.approx(0.98) and hi - lo > 0.5
        assert payload["p_pass_bounds@100"][1] - payload["p_pass_bounds@100"][0] > 0.5
    else:
        g_lo, g_hi = payload["ks_distance_bounds_given_grammar"]  # what expansion narrows; the probe's bound beside
        assert "{0." not in tree.cells and g_hi - g_lo <= 0.02 and tree.requests <= 20
        assert hi - lo <= 0.02 + 2 * payload["grammar_probe"]["escape_bound"] + 1e-9


def test_a_listed_exit_from_the_number_grammar_is_read_not_assumed():
    """A numeric node that lists an exponent: that branch is expanded and read by the parser (4.9e0 = 4.9, in the
    support; 5e1 = 50 is outside it, invalid), and its mass is reported as the grammar's escape."""
    table = {"": [("{", 1.0)], "{": [("4", 1.0)], "{4": [(".", 1.0)], "{4.": [("9", 0.8), ("9e0}", 0.1), ("5e1}", 0.1)],
             "{4.9e0}": [(EOS, 1.0)], "{4.5e1}": [(EOS, 1.0)]}

    def model(prefix):
        return [(t, math.log(q)) for t, q in table.get(prefix, [(EOS, 1.0)])]

    p = get_problem("ci-triangular-conc")
    tree = enumerate_problem_tree_sync(p, model, ends=[EOS], ns=(10,), max_requests=20)
    assert tree.leaves["{4.9e0}"] == pytest.approx(0.1) and tree.leaves["{4.5e1}"] == pytest.approx(0.1)
    assert tree.number_escape == pytest.approx(0.2)
    scores, payload = score_reply_tree(p, tree, ns=(10,))
    assert 4.9 in payload["values"] and payload["invalid_mass"] == pytest.approx(0.1)
    assert scores["valid_mass"] == pytest.approx(0.9)


def test_discrete_supports_expand_until_the_bound_is_tight():
    """A discrete support (the permutation test: no threshold on D): the old stop (the leaves hold 0.99) leaves
    p_pass bounds wider than the target; the problem's own stop expands until they are at most 0.1 wide."""
    p = get_problem("te-binomial-spread")
    law = OracleReplyLaw.for_problem(p)
    old = enumerate_reply_tree_sync(lambda pre: law.next_tokens(pre, 20), ends=[EOS], max_missing=0.01)
    _, old_payload = score_reply_tree(p, old, ns=(100,))
    tree = enumerate_problem_tree_sync(p, lambda pre: law.next_tokens(pre, 20), ends=[EOS], ns=(100,),
                                       sample=law.sampler(0))
    _, payload = score_reply_tree(p, tree, ns=(100,))
    old_lo, old_hi = old_payload["p_pass_bounds@100"]
    lo, hi = payload["p_pass_bounds@100"]
    assert hi - lo <= 0.1 < old_hi - old_lo
    assert tree.stopped in ("tight", "exhausted") and tree.requests > old.requests


def test_an_exact_sum_gets_the_shift_bound_too():
    """Two written values on a continuous support (a 1-digit writer): P(pass | N answers) is an exact sum, and
    its statistics' exact law tightens the bounds as a Monte-Carlo estimate's does; the whole law's exact pass
    rate lies inside."""
    rng = np.random.default_rng(2)
    truth = np.sort(rng.normal(size=10_000))
    values = np.array([-0.5, 0.5])
    kept = np.array([0.49, 0.49])
    n = 5
    res = p_pass_at_n(kept, values, truth, n, support="continuous", keep_statistics=True)
    assert res["exact"] and res["statistics"] and math.isclose(sum(s[2] for s in res["statistics"]), 1.0)
    plain = missing_mass_bounds(0.0, {n: res["p_pass"]}, 0.98, 0.0, 0.02)
    tight = missing_mass_bounds(0.0, {n: res["p_pass"]}, 0.98, 0.0, 0.02, statistics={n: res["statistics"]},
                                brackets={n: critical_bracket(n, truth.size, 1e-4)})
    (plo, phi), (tlo, thi) = plain[f"p_pass_bounds@{n}"], tight[f"p_pass_bounds@{n}"]
    assert plo <= tlo <= thi <= phi and thi - tlo < phi - plo
    from ub_core.metrics.answer_distribution import p_enough_valid

    for extra in (-5.0, 0.0, 5.0):  # the missing 2% anywhere
        full = p_pass_at_n(np.append(kept, 0.02), np.append(values, extra), truth, n, support="continuous",
                           mode="exact")["p_pass"]
        whole = p_enough_valid(1.0, n, 100, 5) * full
        assert tlo - 1e-9 <= whole <= thi + 1e-9


def test_a_tree_read_back_with_its_cells_reordered_scores_the_same(full_precision):
    """A log stores the tree's cells as a JSON object: read back, their order may differ. The Monte-Carlo draws
    must not depend on it (inspect score reproduces the scores of the run)."""
    p, law = full_precision
    tree = enumerate_problem_tree_sync(p, lambda pre: law.next_tokens(pre, 20), ends=[EOS], ns=(100,),
                                       sample=law.sampler(0))
    shuffled = ReplyTree(**{**tree.__dict__, "cells": dict(reversed(list(tree.cells.items())))})
    assert list(shuffled.cells) != list(tree.cells)
    assert score_reply_tree(p, shuffled, ns=(10, 100)) == score_reply_tree(p, tree, ns=(10, 100))
