"""A problem with no valid answer, in the listed and the tree route, in Inspect, lm-eval and ``ub report``: where
the bounds settle it (P(KS@N passes) at most the target width above 0) it scores 0, as the sampled run fails it,
and stays in the mean; where they do not (mass the route could not read may still be valid) it is *unresolved*:
left out of the means (NaN) and counted by ``unresolved`` beside them, never a sure fail. The model here
(``support.mute_models``) is the oracle except on ``ce-binomial-conc``, where it writes no valid answer; the other
problem is the oracle's (``p_pass`` near 1)."""

from __future__ import annotations

import math

import pytest

from support.mute_models import INVALID_SHARE, MUTE, mute_inspect_model, mute_lm
from ub_core.logprob.ksn_logprob import score_candidate_logprobs
from ub_core.metrics import DEFAULT_NS, p_enough_valid
from ub_core.problems import get_problem
from ub_core.problems.candidates import candidate_set
from ub_core.logprob.reply_tree import ReplyTree, score_reply_tree

(MUTE_ID,) = MUTE
IDS = (MUTE_ID, "sh-integer-01")  # both listed: the tree route reaches them too


def test_core_listed_route_leaves_an_unlisted_mass_unresolved_and_counts_malformed_log_probabilities_as_fails():
    p = get_problem(MUTE_ID)
    n = len(candidate_set(p))
    scores, payload = score_candidate_logprobs(p, [-math.inf] * n)  # no candidate: all the mass unlisted
    assert scores["unresolved"] == 1.0 and scores["no_mass"] == 0.0
    assert all(math.isnan(scores[f"p_pass@{k}"]) for k in DEFAULT_NS), scores
    assert payload["p_pass_bounds@100"][1] > 0.9
    scores, payload = score_candidate_logprobs(p, [float("nan")] * n)
    assert scores["bad_logprobs"] == 1.0 and scores["unresolved"] == 0.0
    assert all(scores[f"p_pass@{k}"] == 0.0 for k in DEFAULT_NS), scores
    assert math.isnan(scores["ks_distance"])  # a distance stays undefined (left out, counted by the flag)


def test_core_tree_route_scores_a_settled_problem_zero_and_leaves_an_open_one_unresolved():
    """A tree with valid mass ~0 and missing mass ~0.95 at the budget must not report p_pass@N = 0 and
    no_mass = 1 into the headline mean, or a writer whose true pass rate is 0.93 and one whose replies are all
    invalid give identical output: the open one is unresolved with its bounds; the settled one a fail."""
    p = get_problem(MUTE_ID)
    tree = ReplyTree(leaves={"?": INVALID_SHARE}, missing_mass=1 - INVALID_SHARE, stopped="budget")
    scores, payload = score_reply_tree(p, tree, ns=(1, 10))
    assert scores["unresolved"] == 1.0 and scores["no_mass"] == 0.0
    assert math.isnan(scores["p_pass@1"]) and math.isnan(scores["p_pass@10"])
    for n in (1, 10):  # the missing half could still be valid: the upper bound is P(enough valid | V = 0.5)
        lo, hi = payload[f"p_pass_bounds@{n}"]
        assert lo == 0.0 and hi == pytest.approx(p_enough_valid(1 - INVALID_SHARE, n, 100, 5)) and hi > 0.9
        assert payload[f"p_pass_unresolved@{n}"] == 0.0
    settled, _ = score_reply_tree(p, ReplyTree(leaves={"?": 1.0}, missing_mass=0.0, stopped="exhausted"), ns=(1, 10))
    assert settled["no_mass"] == 1.0 and settled["unresolved"] == 0.0 and settled["p_pass@10"] == 0.0
    assert (scores["unresolved"], scores["p_pass@10"]) != (settled["unresolved"], settled["p_pass@10"])


def test_a_distance_from_a_small_valid_mass_carries_its_bounds_not_a_point_in_the_mean():
    """A KS distance from a valid mass of 0.0077 (0.497 against a true 0.203) stays out of the KS mean."""
    p = get_problem("te-normal-conc")
    tree = ReplyTree(leaves={"{0.5}": 0.0077, "?": 0.04}, missing_mass=0.9523, stopped="budget")
    scores, payload = score_reply_tree(p, tree, ns=(100,))
    assert math.isnan(scores["ks_distance"]) and scores["unresolved"] == 1.0
    lo, hi = payload["ks_distance_bounds"]
    assert lo <= payload["ks_distance_unresolved"] <= hi and hi - lo > 0.5


def _sample_values(log):
    return {s.id: s.scores["ksn_logprob_scorer"].value for s in log.samples}


@pytest.mark.parametrize("enumeration", ["listed", "tree"])
def test_inspect_leaves_an_unresolved_problem_out_of_the_mean_and_counts_it(enumeration, tmp_path):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob import ksn_logprob

    log = inspect_eval(ksn_logprob(ids=",".join(IDS), enumeration=enumeration, ks_ns="1,10"),
                       model=mute_inspect_model(), log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    values = _sample_values(log)
    mute = values[MUTE_ID]
    assert values[IDS[1]]["p_pass@10"] > 0.9
    metrics = log.results.scores[0].metrics
    if mute["unresolved"]:  # left out of every p_pass mean, counted beside the headline and by the flag
        assert math.isnan(mute["p_pass@10"]) and mute["no_mass"] == 0.0
        for n in (1, 10):
            assert metrics[f"p_pass@{n}"].value == pytest.approx(values[IDS[1]][f"p_pass@{n}"])
        assert metrics["left_out"].value == 1.0 and metrics["unresolved"].value == 1.0
    else:  # settled: a fail, in the mean (no valid mass, or a malformed list: the tree's stand-in lists one token
        # holding half the mass where 20 were asked, a truncated list, counted by bad_logprobs)
        assert mute["no_mass"] + mute["bad_logprobs"] == 1.0 and mute["p_pass@10"] == 0.0
        assert metrics["p_pass@10"].value == pytest.approx(sum(v["p_pass@10"] for v in values.values()) / 2)
        assert metrics["left_out"].value == 0.0 and metrics["unresolved"].value == 0.0
    if enumeration == "listed":  # every candidate at -inf: all the mass unlisted, so the bounds are open
        assert mute["unresolved"] == 1.0
    else:
        assert mute["bad_logprobs"] == 1.0 and metrics["bad_logprobs"].value == 1.0
    # the mute problem has no KS distance: the mean is the other's, and says it left one out
    assert metrics["ks_distance"].value == pytest.approx(values[IDS[1]]["ks_distance"])
    assert metrics["ks_distance_left_out"].value == 1.0


@pytest.mark.slow
def test_lmeval_leaves_an_unresolved_problem_out_of_the_mean_and_counts_it():
    from lm_eval import simple_evaluate

    from support.lmeval_tasks import ub_task_manager

    res = simple_evaluate(model=mute_lm(), tasks=["ub_ksn_logprob"], task_manager=ub_task_manager({"ids": list(IDS)}),
                          log_samples=True)
    per_doc = {s["doc"]["id"]: s for task in res["samples"].values() for s in task}
    assert math.isnan(per_doc[MUTE_ID]["p_pass@10"]) and per_doc[IDS[1]]["p_pass@10"] > 0.9
    other = res["results"]["ub_ksn_logprob_shuffling"]
    for n in DEFAULT_NS:  # the task's mean is over its resolved document
        assert other[f"p_pass@{n},none"] == pytest.approx(per_doc[IDS[1]][f"p_pass@{n}"])
    assert res["results"]["ub_ksn_logprob_code_explicit"]["unresolved,none"] == 1.0
    assert res["results"]["ub_ksn_logprob_code_explicit"]["no_mass,none"] == 0.0


def test_report_reads_a_missing_p_pass_as_a_fail():
    """``ub report`` of a log where the mute problem's ``p_pass@N`` is NaN (or null)."""
    from ub_core.report.eval_families import extract_all

    old = {"valid_mass": 0.0, "ks_distance": math.nan, "p_pass@10": math.nan, "p_pass@100": None, "no_mass": 1.0,
           "bad_logprobs": 0.0, "jsd": math.nan, "entropy_ratio": math.nan}
    ((family, (_, metrics, _)),) = extract_all(old, {}, {"category": "code_explicit"})
    assert family == "ksn_logprob" and metrics["p_pass@10"] == 0.0 and metrics["p_pass@100"] == 0.0
    assert math.isnan(metrics["ks_distance"])


def test_report_means_leave_an_unresolved_problem_out_and_count_it(tmp_path):
    import json

    from inspect_ai import eval as inspect_eval

    from ub_core.report import build_report
    from ub_inspect.ksn_logprob import ksn_logprob

    log = inspect_eval(ksn_logprob(ids=",".join(IDS), ks_ns="10"), model=mute_inspect_model(),
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    values = _sample_values(log)
    build_report([tmp_path / "logs"], tmp_path / "out")
    table = json.loads((tmp_path / "out/summary.json").read_text())["tables"]["ksn_logprob_by_category"]
    (overall,) = [r for r in table["rows"] if r["category"] == "all"]
    assert overall["items"] == 2
    resolved = [v for v in values.values() if not v["unresolved"]]
    assert overall["p_pass@10"] == pytest.approx(sum(v["p_pass@10"] for v in resolved) / len(resolved))
    open_ = sum(v["unresolved"] for v in values.values())
    assert overall["unresolved"] == pytest.approx(open_ / 2)  # the share left out as unresolved
    assert overall.get("p_pass@10_left_out", 0) == open_  # counted beside the mean
    # a distance is undefined there: left out of its mean, counted beside it, and the note says why
    assert overall["ks_distance"] == values[IDS[1]]["ks_distance"] and overall["ks_distance_left_out"] == 1
