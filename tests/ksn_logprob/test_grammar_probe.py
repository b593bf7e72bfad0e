"""The number grammar measured, not assumed: the reply tree's grammar probe
(``ub_core.logprob.reply_tree.grammar_escape``) and what its bound does to the bounds; an unresolved problem left out
of the means and counted.

Each writer is an offline model (``ub_core.logprob.oracle_replies.ReplyWriter``) whose reply law is known exactly:
its texts read by the problem's parser give its own KS distance to the truth, the number the bounds must hold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ub_core.logprob.eos import OFFLINE_EOS
from ub_core.logprob.number_cells import escape_eps, ks_distance_bounds, number_cell
from ub_core.logprob.oracle_replies import oracle_reply_law
from ub_core.logprob.reply_tree import (ESCAPE_STOP, TIGHT_GIVEN_MEASURED_GRAMMAR, ReplyTree,
                                        enumerate_problem_tree_sync, grammar_escape, ks_distance_to_draws, read_leaves,
                                        score_reply_tree, truth_reference)
from ub_core.problems import get_problem

NS = (100,)
#: true draws behind each writer's law (fewer than 100,000: the class of fault is the same, the tests faster)
DRAWS = 20_000


def _law_distance(problem, law) -> float:
    values, masses, _ = read_leaves(problem, dict(zip(law.texts, law.probs)))
    truth = np.sort(problem.truth())
    return ks_distance_to_draws(masses, values, truth, truth_reference(problem, truth)[0])


def _tree(problem, law, max_requests=400, sample=True, **kw):
    return enumerate_problem_tree_sync(problem, lambda pre: law.next_tokens(pre, 20), ends=[OFFLINE_EOS], ns=NS,
                                       max_requests=max_requests, sample=law.sampler(1) if sample else None, **kw)


@pytest.mark.parametrize("pid", ["te-chi_squared-conc", "te-normal-conc"])
def test_a_writer_in_scientific_notation_gets_bounds_that_hold_its_law(pid):
    """With the number grammar assumed, a writer of ``{4.5240E-01}`` gets p_pass@100 = 0 in [0, 0.0026] (exact:
    1.000) and a KS distance of 0.686 against 0.0114, labelled tight: ``{4.`` is placed in [4, 5]. The probe
    sees its replies leave their cells; the bounds carry the escape and hold the law, and the problem is unresolved
    (left out of the means), not a sure fail."""
    p = get_problem(pid)
    law = oracle_reply_law(p, style="scientific", draws=DRAWS)
    tree = _tree(p, law)
    scores, payload = score_reply_tree(p, tree, ns=NS)
    probe = payload["grammar_probe"]
    assert probe["probe"] > 0 and probe["escapes"] > 0.5 * probe["probe"] * (0.5 if "chi" in pid else 1.0)
    assert tree.stopped in (ESCAPE_STOP, "budget")
    lo, hi = payload["p_pass_bounds@100"]
    assert hi >= 0.99  # the writer's own pass rate is ~1 (its values are true draws)
    ks_lo, ks_hi = payload["ks_distance_bounds"]
    assert ks_lo <= _law_distance(p, law) <= ks_hi
    assert scores["unresolved"] == 1.0 and math.isnan(scores["p_pass@100"]) and scores["no_mass"] == 0.0
    # the bounds with the grammar assumed (no probe) put the pass rate near 0
    assert payload["p_pass_bounds_given_grammar@100"][1] < 0.05


@pytest.mark.parametrize("pid, digits", [("te-chi_squared-conc", 1), ("ce-chi_squared-conc", 1),
                                         ("te-chi_squared-conc", 3)])
def test_the_full_precision_oracles_distance_lies_in_its_bounds(pid, digits):
    """With the number grammar assumed, the full-precision oracle's KS distance (0.00812 on te-chi_squared-conc,
    0.00647 on ce-) lies outside its bounds ([0.00955, 0.0266], [0.00797, 0.0245]) with ``number_escape`` 0: ``repr``
    writes draws below 1e-4 with an exponent after a mantissa an unexpanded cell placed. The probe measures that
    escape and the bounds hold the law; the bounds with the grammar assumed (no escape) are kept beside them."""
    p = get_problem(pid)
    law = oracle_reply_law(p, number_token_digits=digits, draws=DRAWS)
    tree = enumerate_problem_tree_sync(p, lambda pre: law.next_tokens(pre, 1000 if digits >= 3 else 20),
                                       ends=[OFFLINE_EOS], ns=NS, top_k=1000 if digits >= 3 else 20,
                                       max_requests=400, sample=law.sampler(2))
    scores, payload = score_reply_tree(p, tree, ns=NS)
    d = _law_distance(p, law)
    ks_lo, ks_hi = payload["ks_distance_bounds"]
    assert ks_lo <= d <= ks_hi, (d, payload["ks_distance_bounds"], payload["ks_distance_bounds_given_grammar"])
    # the bounds with the grammar assumed (no probe) exclude the law's distance (with
    # 100,000 draws exactly [0.00955, 0.0266] against 0.00812), and number_escape sees nothing
    g_lo, g_hi = payload["ks_distance_bounds_given_grammar"]
    assert not g_lo <= d <= g_hi and tree.number_escape == 0.0
    assert payload["grammar_probe"]["escape_bound"] > 0
    lo, hi = payload["p_pass_bounds@100"]
    assert hi - lo <= 0.1 and hi >= 0.99 and scores["unresolved"] == 0.0
    assert tree.stopped == TIGHT_GIVEN_MEASURED_GRAMMAR


def test_no_stop_is_tight_on_an_untested_grammar():
    """Without a probe the cells' escape is unbounded (all their mass may leave): the tree cannot stop tight on
    them, and its p_pass bounds say so."""
    p = get_problem("te-normal-conc")
    law = oracle_reply_law(p, draws=DRAWS)
    tree = _tree(p, law, max_requests=120, sample=False)
    assert tree.probe is None and tree.stopped not in ("tight", TIGHT_GIVEN_MEASURED_GRAMMAR)
    scores, payload = score_reply_tree(p, tree, ns=NS)
    assert payload["grammar_probe"]["escape_bound"] == pytest.approx(sum(tree.cells.values()))
    assert scores["unresolved"] == 1.0


def test_the_escape_bound_is_a_clopper_pearson_bound_on_the_probes_escapes():
    """Hand tree: one cell ``{4.`` of mass 0.6; of 50 probe replies, 5 enter it and leave ([4, 5] does not hold
    0.45), 10 enter it and stay, 35 never enter a cell. The bound is the one-sided 95% Clopper-Pearson bound of
    5 in 50, at most the cells' mass."""
    from scipy import stats

    p = get_problem("te-chi_squared-conc")
    probe = ["{4.5E-01}"] * 5 + ["{4.5}"] * 10 + ["{0.45}"] * 35
    tree = ReplyTree(leaves={"{0.45}": 0.4}, cells={"{4.": 0.6}, missing_mass=0.0, probe=probe)
    out = grammar_escape(p, tree, 0.95)
    assert out["escapes"] == 5 and out["probe"] == 50
    assert out["escape_bound"] == pytest.approx(stats.beta.ppf(0.95, 6, 45))
    assert grammar_escape(p, ReplyTree(cells={"{4.": 0.1}, missing_mass=0.9, probe=probe))["escape_bound"] == 0.1


@pytest.mark.parametrize("seed", range(6))
def test_escaped_mass_anywhere_stays_inside_the_widened_envelopes(seed):
    """The class behind the KS bounds with escape: random leaves, cells and missing mass; a random part X of the
    cells' mass (|X| <= e) moved anywhere (valid or not), the rest placed anywhere in its cells. The true law's
    distance lies in ``ks_distance_bounds(..., escape=e)``, and TV(true, known) <= ``escape_eps``."""
    rng = np.random.default_rng(seed)
    truth = np.sort(rng.normal(size=2000))
    k_leaf, k_cell = 4, 5
    leaf_v, leaf_m = rng.normal(size=k_leaf), rng.dirichlet(np.ones(k_leaf)) * 0.3
    a = rng.normal(size=k_cell)
    cells = np.column_stack([a, a + rng.uniform(0.05, 1.0, k_cell), rng.dirichlet(np.ones(k_cell)) * 0.6])
    missing = 0.1
    e = float(rng.uniform(0, 0.3))
    lo, hi = ks_distance_bounds(leaf_v, leaf_m, cells, missing, truth, escape=e)
    for _ in range(40):
        take = rng.dirichlet(np.ones(k_cell)) * e
        take = np.minimum(take, cells[:, 2])
        placed = rng.uniform(cells[:, 0], cells[:, 1])
        valid_escape = take * rng.uniform(0, 1, k_cell)
        w = float(rng.uniform(0, missing))
        values = np.concatenate([leaf_v, placed, rng.normal(size=k_cell), rng.normal(size=1)])
        masses = np.concatenate([leaf_m, cells[:, 2] - take, valid_escape, [w]])
        d = ks_distance_to_draws(masses, values, truth)
        assert lo - 1e-9 <= d <= hi + 1e-9, (seed, lo, d, hi)
    known = float(leaf_m.sum() + cells[:, 2].sum())
    assert escape_eps(missing, known, e) == pytest.approx(min((missing + e) / (known + missing), 1.0))


def test_a_number_without_its_leading_zero_is_a_cell():
    assert number_cell("{.45") == pytest.approx((0.45, 0.46))
    assert number_cell("{-.4") == pytest.approx((-0.5, -0.4))
    assert number_cell("{.") == pytest.approx((0.0, 1.0))
