"""Issue 33 item 1: a problem with no valid answer scores P(KS@N passes) = 0, as the sampled run fails it, in the
listed and the tree route, in Inspect, lm-eval and ``ub report``; it never leaves the mean. Before the fix it was
NaN and ``nan_mean`` left it out: the tiny model's ``p_pass@10`` was 1.000 on two problems where sampled KS@10 was
0.5. The model here (``support.mute_models``) is the oracle except on ``ce-binomial-conc``, where it writes no
valid answer; the other problem is the oracle's (``p_pass`` near 1), so the honest mean is about half."""

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


def test_core_listed_route_scores_no_mass_and_malformed_log_probabilities_as_fails():
    p = get_problem(MUTE_ID)
    n = len(candidate_set(p))
    for lps in ([-math.inf] * n, [float("nan")] * n):
        scores, _ = score_candidate_logprobs(p, lps)
        assert scores["no_mass"] + scores["bad_logprobs"] == 1.0
        assert all(scores[f"p_pass@{k}"] == 0.0 for k in DEFAULT_NS), scores
        assert math.isnan(scores["ks_distance"])  # a distance stays undefined (left out, counted by the flag)


def test_core_tree_route_scores_zero_with_bounds_up_to_the_missing_mass():
    p = get_problem(MUTE_ID)
    tree = ReplyTree(leaves={"?": INVALID_SHARE}, missing_mass=1 - INVALID_SHARE)
    scores, payload = score_reply_tree(p, tree, ns=(1, 10))
    assert scores["no_mass"] == 1.0 and scores["p_pass@1"] == scores["p_pass@10"] == 0.0
    for n in (1, 10):  # the missing half could still be valid: the upper bound is P(enough valid | V = 0.5)
        lo, hi = payload[f"p_pass_bounds@{n}"]
        assert lo == 0.0 and hi == pytest.approx(p_enough_valid(1 - INVALID_SHARE, n, 100, 5)) and hi > 0.9


def _sample_values(log):
    return {s.id: s.scores["ksn_logprob_scorer"].value for s in log.samples}


@pytest.mark.parametrize("enumeration", ["listed", "tree"])
def test_inspect_counts_the_mute_problem_as_a_fail(enumeration, tmp_path):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob import ksn_logprob

    log = inspect_eval(ksn_logprob(ids=",".join(IDS), enumeration=enumeration, ks_ns="1,10"),
                       model=mute_inspect_model(), log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    values = _sample_values(log)
    assert values[MUTE_ID]["no_mass"] == 1.0 and values[MUTE_ID]["p_pass@10"] == 0.0
    assert values[IDS[1]]["p_pass@10"] > 0.9
    metrics = log.results.scores[0].metrics
    for n in (1, 10):  # both problems in every mean: the mute one as 0
        assert metrics[f"p_pass@{n}"].value == pytest.approx(sum(v[f"p_pass@{n}"] for v in values.values()) / 2)
    assert metrics["left_out"].value == 0.0  # beside the headline: no problem left out
    # the mute problem has no KS distance: the mean is the other's, and says it left one out (issue 42)
    assert metrics["ks_distance"].value == pytest.approx(values[IDS[1]]["ks_distance"])
    assert metrics["ks_distance_left_out"].value == 1.0
    assert metrics["no_mass"].value == 1.0


@pytest.mark.slow
def test_lmeval_counts_the_mute_problem_as_a_fail():
    from lm_eval import simple_evaluate

    from support.lmeval_tasks import ub_task_manager

    res = simple_evaluate(model=mute_lm(), tasks=["ub_ksn_logprob"], task_manager=ub_task_manager({"ids": list(IDS)}),
                          log_samples=True)
    per_doc = {s["doc"]["id"]: s for task in res["samples"].values() for s in task}
    assert per_doc[MUTE_ID]["p_pass@10"] == 0.0 and per_doc[IDS[1]]["p_pass@10"] > 0.9
    group = res["results"]["ub_ksn_logprob"]
    for n in DEFAULT_NS:  # the group's mean over both documents, the mute one as 0
        assert group[f"p_pass@{n},none"] == pytest.approx(sum(s[f"p_pass@{n}"] for s in per_doc.values()) / 2)
    assert res["results"]["ub_ksn_logprob_code_explicit"]["no_mass,none"] == 1.0


def test_report_reads_a_missing_p_pass_as_a_fail():
    """``ub report`` of a log written before the fix, where the mute problem's ``p_pass@N`` is NaN (or null)."""
    from ub_core.report.eval_families import extract_all

    old = {"valid_mass": 0.0, "ks_distance": math.nan, "p_pass@10": math.nan, "p_pass@100": None, "no_mass": 1.0,
           "bad_logprobs": 0.0, "jsd": math.nan, "entropy_ratio": math.nan}
    ((family, (_, metrics, _)),) = extract_all(old, {}, {"category": "code_explicit"})
    assert family == "ksn_logprob" and metrics["p_pass@10"] == 0.0 and metrics["p_pass@100"] == 0.0
    assert math.isnan(metrics["ks_distance"])


def test_report_means_count_the_mute_problem(tmp_path):
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
    assert overall["p_pass@10"] == pytest.approx(sum(v["p_pass@10"] for v in values.values()) / 2)
    # a distance is undefined there: left out of its mean, counted beside it, and the note says why
    assert overall["ks_distance"] == values[IDS[1]]["ks_distance"] and overall["ks_distance_left_out"] == 1
    assert "p_pass@10_left_out" not in table["columns"]
    assert "ks_distance_left_out counts the others (no mass on any valid answer (no_mass)" in table["note"]
