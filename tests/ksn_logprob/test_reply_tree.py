"""The reply-tree route of sampling-free KS@N (``ub_core.logprob.reply_tree``, Inspect
``ub_inspect/ksn_logprob -T enumeration=tree|auto``).

A scripted token model with a known reply law checks the enumeration exactly (token paths that spell one text,
stops, top-k cuts, the budget); the missing-mass bounds are checked against the full law they bound; the oracle's
prefix law is checked against the truth with a tolerance derived from the rounding and two DKW terms; the Inspect
task runs end to end on ``ub/oracle`` and ``ub/collapse``; hostile next-token lists are a counted reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ub_core.metrics.answer_distribution import p_pass_at_n
from ub_core.problems import get_problem
from ub_core.logprob.oracle_replies import OracleReplyLaw, oracle_reply_law, round_significant
from ub_core.logprob.reply_tree import (TIGHT_GIVEN_MEASURED_GRAMMAR, ReplyTree,
                                        enumerate_reply_tree_sync, ks_distance_to_draws, missing_mass_bounds,
                                        read_leaves, score_reply_tree)

EOS = "</s>"


class ScriptedModel:
    """A token model given as a table: prefix text -> [(token, probability)]. Missing prefixes end the reply."""

    def __init__(self, table):
        self.table = table
        self.asked = []

    def __call__(self, prefix):
        self.asked.append(prefix)
        return [(t, math.log(p)) for t, p in self.table.get(prefix, [(EOS, 1.0)])]


# The replies and their probabilities: " {1}" 0.3 (by two token paths: " {1" then "}", or " {" "1}"), " {2}" 0.4,
# " {12}" 0.1, " {2} and more" 0.1 (continues after a valid answer: invalid), " x" 0.1 (cut at the stop "\n\n").
TABLE = {
    "": [(" {1", 0.15), (" {", 0.75), (" x\n\nignored", 0.1)],
    " {1": [("}", 1.0)],
    " {": [("1}", 0.15 / 0.75), ("2}", 0.5 / 0.75), ("12}", 0.1 / 0.75)],
    " {2}": [(EOS, 0.4 / 0.5), (" and more", 0.1 / 0.5)],
}
LAW = {" {1}": 0.3, " {2}": 0.4, " {12}": 0.1, " {2} and more": 0.1, " x": 0.1}


def test_enumeration_recovers_the_law_exactly():
    model = ScriptedModel(TABLE)
    tree = enumerate_reply_tree_sync(model, ends=[EOS], stops=["\n\n"], max_missing=0.0)
    assert tree.stopped in ("covered", "exhausted") and tree.bad is None
    assert tree.leaves == pytest.approx(LAW)
    assert tree.missing_mass == pytest.approx(0.0, abs=1e-12)
    # one request per distinct prefix: " {1}" is reached by two token paths but asked once
    assert len(model.asked) == len(set(model.asked)) == tree.requests


def test_missing_mass_is_what_was_not_enumerated():
    # stop early: the finished replies hold at least 1 - max_missing, and the rest is reported, not dropped
    tree = enumerate_reply_tree_sync(ScriptedModel(TABLE), ends=[EOS], stops=["\n\n"], max_missing=0.5)
    assert tree.stopped == "covered"
    assert 1 - tree.missing_mass >= 0.5 - 1e-12
    assert tree.missing_mass == pytest.approx(1 - sum(tree.leaves.values()))
    # a budget of one request: only the root's stop-cut reply is finished
    small = enumerate_reply_tree_sync(ScriptedModel(TABLE), ends=[EOS], stops=["\n\n"], max_requests=1)
    assert small.stopped == "budget" and small.requests == 1
    assert small.leaves == pytest.approx({" x": 0.1}) and small.missing_mass == pytest.approx(0.9)
    # a top-k list (k tokens, as asked) that does not sum to 1 leaves its remainder missing
    cut = enumerate_reply_tree_sync(ScriptedModel({"": [(" {1", 0.15)], " {1": [("}", 1.0)]}), ends=[EOS], top_k=1)
    assert cut.leaves == pytest.approx({" {1}": 0.15}) and cut.missing_mass == pytest.approx(0.85)
    assert cut.stopped == "exhausted"


def test_depth_and_node_mass_limits_keep_the_frontier_bounded():
    # an endless reply: every prefix continues with "1" (0.5) or ends (0.5)
    def endless(prefix):
        return [("1", math.log(0.5)), (EOS, math.log(0.5))]

    tree = enumerate_reply_tree_sync(endless, ends=[EOS], max_missing=0.0, max_tokens=10)
    assert tree.stopped == "exhausted" and len(tree.leaves) == 10
    assert tree.missing_mass == pytest.approx(0.5 ** 10)


@pytest.mark.parametrize("bad", [
    [("1", float("nan"))], [("1", 0.5)], [("1", "x")], "not a list", [("1",)], [(1, -0.1)],
    [("1", math.log(0.7)), ("2", math.log(0.7))], [("1", True)], [("1", 10 ** 400)],
])
def test_hostile_next_token_lists_are_a_reason_never_a_crash(bad):
    tree = enumerate_reply_tree_sync(lambda prefix: bad, ends=[EOS])
    assert tree.bad and tree.stopped == "bad" and tree.leaves == {} and tree.missing_mass == 1.0
    scores, payload = score_reply_tree(get_problem("te-poisson-conc"), tree, ns=(10,))
    assert scores["bad_logprobs"] == 1.0 and math.isnan(scores["ks_distance"]) and payload["bad_logprobs"]


def test_leaves_are_read_by_the_problems_parser():
    p = get_problem("te-poisson-conc")
    values, masses, invalid = read_leaves(p, {" {1}": 0.3, "{1}": 0.1, " {2}": 0.4, " {1} {1, 2}": 0.1, "x": 0.1})
    assert values.tolist() == [1.0, 2.0] and masses.tolist() == pytest.approx([0.4, 0.4])
    assert invalid == pytest.approx(0.2)


def test_ks_distance_to_draws_is_the_two_sample_statistic_in_the_limit():
    from scipy import stats

    rng = np.random.default_rng(0)
    truth = rng.normal(size=500)
    sample = np.round(rng.normal(size=300), 1)
    values, counts = np.unique(sample, return_counts=True)
    assert ks_distance_to_draws(counts, values, truth) == pytest.approx(stats.ks_2samp(sample, truth).statistic)


@pytest.mark.parametrize("seed", range(5))
def test_bounds_contain_the_full_laws_values(seed):
    """Cut a known law (support 6 values, a truth that differs from it) at random: the bounds computed from the
    cut law hold the KS distance and p_pass@N of the whole law, whatever the cut mass was (valid or not)."""
    rng = np.random.default_rng(seed)
    values = np.arange(6.0)
    truth = rng.choice(values, size=400, p=[0.1, 0.2, 0.3, 0.2, 0.1, 0.1])
    full = rng.dirichlet(np.ones(6)) * 0.9  # 0.1 of the replies invalid
    kept = full.copy()
    cut = rng.choice(6, size=2, replace=False)
    kept[cut] *= rng.uniform(0, 0.3, size=2)  # part of two values' mass is not enumerated
    missing = float(full.sum() - kept.sum()) + 0.02  # and some invalid mass too
    invalid = 0.1 - 0.02
    d_full = ks_distance_to_draws(full, values, truth)
    d_kept = ks_distance_to_draws(kept, values, truth)
    ns = (2, 5)
    p_full = {n: p_pass_at_n(full, values, truth, n, support="discrete", mode="exact")["p_pass"] for n in ns}
    p_kept = {n: p_pass_at_n(kept, values, truth, n, support="discrete", mode="exact")["p_pass"] for n in ns}
    b = missing_mass_bounds(d_kept, p_kept, float(kept.sum()), invalid, missing, slots=10, max_attempts=1)
    lo, hi = b["ks_distance_bounds"]
    assert lo - 1e-12 <= d_full <= hi + 1e-12
    from ub_core.metrics.answer_distribution import p_enough_valid

    for n in ns:
        truth_pass = p_enough_valid(float(full.sum()), n, 10, 1) * p_full[n]
        lo, hi = b[f"p_pass_bounds@{n}"]
        assert lo - 1e-12 <= truth_pass <= hi + 1e-12


def test_round_significant():
    assert round_significant(np.array([1534.0, 0.004249, -3.14159, 0.0, 99.96]), 2) == [
        "{1500}", "{0.0042}", "{-3.1}", "{0}", "{100}"]


def test_the_oracles_prefix_law_is_the_truth_within_rounding_and_sampling():
    """te-normal-conc is continuous: under ``-M digits=2`` the oracle's law is 100,000 true draws written with 2
    significant digits. Its distance to the 10,000 truth draws is at most the rounding's own distance on those draws
    plus two DKW terms (100,000 and 10,000 draws, each at 1e-6)."""
    p = get_problem("te-normal-conc")
    law = oracle_reply_law(p, digits=2)
    assert not law.exact
    tree = enumerate_reply_tree_sync(lambda prefix: law.next_tokens(prefix), ends=[EOS])
    assert tree.stopped == "covered" and tree.missing_mass <= 0.01
    values, masses, invalid = read_leaves(p, tree.leaves)
    assert invalid == 0.0
    from ub_core.oracle import oracle_values

    draws = np.asarray(oracle_values(p, 100_000, seed=0), dtype=float)
    rounded = np.array([float(t.strip("{}")) for t in round_significant(draws, 2)])
    r_vals, r_counts = np.unique(rounded, return_counts=True)
    rounding = ks_distance_to_draws(r_counts, r_vals, draws)
    dkw = sum(math.sqrt(math.log(2 / 1e-6) / (2 * n)) for n in (100_000, 10_000))
    eps = tree.missing_mass / (1 - invalid)
    assert ks_distance_to_draws(masses, values, p.truth()) <= rounding + dkw + eps


def test_listed_problems_give_the_oracle_their_exact_law():
    p = get_problem("te-poisson-conc")
    law = OracleReplyLaw.for_problem(p)
    assert law.exact
    tree = enumerate_reply_tree_sync(lambda prefix: law.next_tokens(prefix), ends=[EOS], max_missing=1e-9)
    from ub_core.problems.candidates import candidate_set

    cs = candidate_set(p)
    assert tree.leaves == pytest.approx({t: q / cs.p.sum() for t, q in zip(cs.texts, cs.p) if q > 0}, abs=1e-12)
    # multi-digit answers are several tokens: "{12}" is "{", "1", "2", "}"
    assert [t for t, _ in law.next_tokens("{1")][:2] and all(len(t) == 1 or t == EOS for t, _ in law.next_tokens("{1"))


def test_collapse_law_is_one_reply():
    p = get_problem("te-normal-conc")
    law = OracleReplyLaw.for_problem(p, "collapse")
    tree = enumerate_reply_tree_sync(lambda prefix: law.next_tokens(prefix), ends=[EOS])
    assert len(tree.leaves) == 1 and tree.missing_mass == pytest.approx(0.0, abs=1e-12)
    scores, _ = score_reply_tree(p, tree, ns=(10, 100))
    assert scores["ks_distance"] >= 0.3 and scores["p_pass@100"] == 0.0


@pytest.mark.slow
def test_inspect_tree_route_end_to_end(tmp_path):
    """``-T enumeration=auto``: a listable problem takes the listed route, a continuous one the tree; the oracle
    (writing full-precision numbers, as its sampled replies: no leaf is reached, the cells bound them) passes
    within the bounds' targets, the collapsed model fails, and the tree's bounds reach the log."""
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob.ksn_logprob import ksn_logprob

    ids = "te-poisson-conc,te-normal-conc"
    logs = {}
    for model in ("ub/oracle", "ub/collapse"):
        (log,) = inspect_eval(ksn_logprob(enumeration="auto", ids=ids, ks_ns=[10]), model=model,
                              log_dir=str(tmp_path), display="none")
        assert log.status == "success", log.error
        logs[model] = {s.id: next(iter(s.scores.values())) for s in log.samples}
    oracle, collapse = logs["ub/oracle"], logs["ub/collapse"]
    tree = oracle["te-normal-conc"]
    assert tree.metadata["ub"]["route"] == "tree" and 0 <= tree.value["missing_mass"] <= 0.01
    assert tree.value["p_pass@10"] >= 0.95 and tree.value["ks_distance"] <= 0.05
    ub = tree.metadata["ub"]
    lo, hi = ub["ks_distance_bounds"]
    g_lo, g_hi = ub["ks_distance_bounds_given_grammar"]
    assert lo <= tree.value["ks_distance"] <= hi and g_hi - g_lo <= 0.02  # the stop's target: what expansion narrows
    # the reported bounds add the probe's measured escape of the cells (at most e on each side)
    assert hi - lo <= g_hi - g_lo + 2 * ub["grammar_probe"]["escape_bound"] + 1e-12
    assert tree.metadata["ub"]["stopped"] == TIGHT_GIVEN_MEASURED_GRAMMAR and tree.metadata["ub"]["cells"] > 0
    p_lo, p_hi = tree.metadata["ub"]["p_pass_bounds@10"]
    assert p_hi - p_lo <= 0.1
    # the listed route: only the cut mass is unlisted
    assert 0.0 <= oracle["te-poisson-conc"].value["missing_mass"] <= 1e-6
    assert collapse["te-normal-conc"].value["ks_distance"] >= 0.3
    assert collapse["te-normal-conc"].value["missing_mass"] == pytest.approx(0.0, abs=1e-9)


def test_inspect_tree_route_options_are_checked():
    from ub_inspect._options import OptionError
    from ub_inspect.ksn_logprob.ksn_logprob import ksn_logprob

    with pytest.raises(OptionError, match="enumeration"):
        ksn_logprob(enumeration="all")
    with pytest.raises(OptionError, match="end_of_answer=none"):
        ksn_logprob(enumeration="tree", end_of_answer="none")
    with pytest.raises(OptionError, match="max_missing"):
        ksn_logprob(enumeration="tree", max_missing=1.5)
    with pytest.raises(OptionError, match="cells: true or false"):
        ksn_logprob(enumeration="tree", cells="maybe")
    with pytest.raises(OptionError, match="target_ks_width"):
        ksn_logprob(enumeration="tree", target_ks_width=2)
    assert len(ksn_logprob(enumeration="tree").dataset) == 448


def test_every_problem_is_scored_by_default(caplog):
    """``enumeration=auto`` is the default, so no problem is left out: the first two problems of
    every category, listable or not, each on its route (the listed one where its answers can be listed), with no
    warning and nothing in ``left_out`` (all 448 with no option: the tree's count above)."""
    from ub_inspect.ksn.ksn import load_problems
    from ub_inspect.ksn_logprob.ksn_logprob import ksn_logprob
    from ub_core.problems.candidates import candidate_set

    task = ksn_logprob(limit_per_category=2)
    firsts: dict[str, list] = {}
    for p in load_problems():
        firsts.setdefault(p.category, []).append(p)
    want = {p.id: "listed" if candidate_set(p) is not None else "tree" for ps in firsts.values() for p in ps[:2]}
    got = {s.id: s.metadata["ub"].get("route", "listed") for s in task.dataset}
    assert got == want and set(want.values()) == {"listed", "tree"}
    assert task.metadata["enumeration"] == "auto" and task.metadata["left_out"]["problems"] == []
    assert "left out" not in caplog.text


def test_a_reply_tree_record_scores_like_the_tree():
    p = get_problem("te-poisson-conc")
    tree = ReplyTree(leaves={"{1}": 0.5, "{2}": 0.3, "oops": 0.1}, missing_mass=0.1, requests=3, stopped="covered")
    scores, payload = score_reply_tree(p, tree, ns=(5,))
    assert scores["valid_mass"] == pytest.approx(0.8) and scores["missing_mass"] == pytest.approx(0.1)
    assert payload["q"] == pytest.approx([0.625, 0.375]) and payload["requests"] == 3
    lo, hi = payload["p_pass_bounds@5"]
    assert lo <= payload.get("p_pass_unresolved@5", scores["p_pass@5"]) <= hi
    assert scores["unresolved"] == float(hi - lo > 0.1)


@pytest.mark.slow
@pytest.mark.parametrize("where", ["far", "near"])
def test_shift_bounds_hold_the_full_laws_pass_rate_on_a_continuous_support(where):
    """The KS-shift bound (``_shift_bounds``: K of N draws replaced moves D by at most K/N) on the paper's
    continuous test: cut 3% of a law's mass (moved far into a tail, or spread near the centre) and the bounds from
    the cut law hold the whole law's pass rate, within the two Monte-Carlo errors (4 standard errors each)."""
    rng = np.random.default_rng(7)
    truth = rng.normal(size=2000)
    values = np.round(np.linspace(-3, 3, 121), 2)
    kept = np.exp(-0.5 * (values - 0.65) ** 2)  # shifted: the pass rate at N = 50 is intermediate (~0.4)
    kept = 0.97 * kept / kept.sum()
    extra = np.zeros_like(kept)
    if where == "far":
        extra[-1] = 0.03
    else:
        extra[55:66] = 0.03 / 11
    full = kept + extra
    n, draws = 50, 4000
    res = p_pass_at_n(kept, values, truth, n, support="continuous", draws=draws, seed=1, mode="mc",
                      keep_statistics=True)
    b = missing_mass_bounds(0.0, {n: res["p_pass"]}, float(kept.sum()), 0.0, 0.03, slots=100, max_attempts=5,
                            statistics={n: res["statistics"]})
    lo, hi = b[f"p_pass_bounds@{n}"]
    whole = p_pass_at_n(full, values, truth, n, support="continuous", draws=draws, seed=2, mode="mc")["p_pass"]
    se = math.sqrt(0.25 / draws)
    assert lo - 4 * 2 * se <= whole <= hi + 4 * 2 * se
    # and the bound is informative: narrower than the total-variation one (delta_50 = 1 - 0.97^50 = 0.78)
    assert hi - lo < 0.5


def test_ks_distance_has_one_definition_per_problem_on_either_route():
    """One ``ks_distance`` per problem whatever the route, so ``enumeration=auto`` never averages two quantities and
    a listed problem the tree completes keeps its definition: a listable problem is measured against its pmf on
    both routes, an unlistable one against the 10,000 truth draws. The oracle's exact law scored by both routes
    gives the same distance (0 for q = p, not the draws' own distance from the pmf, about 0.005 here)."""
    from ub_core.logprob.ksn_logprob import RAW_DELIMITER, oracle_candidate_logprob, score_candidate_logprobs
    from ub_core.problems.candidates import candidate_set

    p = get_problem("te-poisson-conc")
    cs = candidate_set(p)
    listed, listed_payload = score_candidate_logprobs(
        p, [oracle_candidate_logprob(p, RAW_DELIMITER + t) for t in cs.texts], ns=(10,))
    tree = ReplyTree(leaves={t: float(q) for t, q in zip(cs.texts, cs.p)},
                     missing_mass=max(0.0, 1.0 - float(cs.p.sum())))
    scores, payload = score_reply_tree(p, tree, ns=(10,))
    assert payload["ks_distance_to"] == listed_payload["ks_distance_to"] == "pmf"
    assert scores["ks_distance"] == pytest.approx(listed["ks_distance"], abs=1e-9)
    lo, hi = payload["ks_distance_bounds"]
    assert lo <= listed["ks_distance"] + 1e-9 and listed["ks_distance"] <= hi + 1e-9
    draws = ks_distance_to_draws(cs.p, cs.values, p.truth(size=10_000, seed=0))
    assert draws > 1e-3  # the other definition differs measurably: the test can tell them apart
    continuous = score_reply_tree(get_problem("te-normal-conc"), ReplyTree(leaves={"{0.5}": 1.0}, missing_mass=0.0),
                                  ns=(10,))[1]
    assert continuous["ks_distance_to"] == "draws"
