"""Hostile log-probabilities in sampling-free KS@N: whatever a model or server returns for a candidate
(NaN, +inf, a positive value, a mass above 1, None, a string, a huge integer) is counted per problem as
``bad_logprobs`` with a reason, in the core and through both frameworks, never an exception that aborts a run
after every request was made; and candidates all far below ``exp``'s range keep their relative law."""

from __future__ import annotations

import math

import pytest

from corpus import HOSTILE_LOGPROBS
from ub_core.logprob.ksn_logprob import METRIC_KEYS, score_candidate_logprobs
from ub_core.problems import get_problem
from ub_core.problems.candidates import candidate_set

PID = "rw-mcmc-01"


@pytest.mark.parametrize("name", sorted(HOSTILE_LOGPROBS))
def test_core_counts_each_hostile_value_with_its_reason(name):
    bad, reason = HOSTILE_LOGPROBS[name]
    p = get_problem(PID)
    n = len(candidate_set(p))
    scores, payload = score_candidate_logprobs(p, [bad] + [-1.0] * (n - 1))
    assert scores["bad_logprobs"] == 1.0 and scores["no_mass"] == 0.0 and reason in payload["bad_logprobs"]
    assert tuple(scores) == METRIC_KEYS
    assert all(math.isnan(scores[k]) for k in ("valid_mass", "ks_distance"))
    assert scores["p_pass@100"] == 0.0  # a counted failure, never left out of the mean


def test_mass_above_one_is_counted():
    """Each value a log-probability, but together more than certain: disjoint replies cannot sum above 1."""
    p = get_problem(PID)
    n = len(candidate_set(p))
    scores, payload = score_candidate_logprobs(p, [-0.1] * n)
    assert scores["bad_logprobs"] == 1.0 and "sum to" in payload["bad_logprobs"]
    ok, _ = score_candidate_logprobs(p, [math.log(1 / n)] * n)  # exactly 1: fine
    assert ok["bad_logprobs"] == 0.0 and ok["valid_mass"] == pytest.approx(1.0)


def test_log_sum_exp_keeps_the_law_when_every_candidate_underflows():
    """Every log-probability below -745 (exp underflows to 0 in double precision): the relative law is still
    defined and scored; the valid mass is 0 (below the smallest double) and the rest unlisted, so the problem is
    unresolved: its point values (p_pass@N 0) and bounds stay in the payload, out of the means."""
    p = get_problem("te-bernoulli-spread")
    shift = -2000.0
    scores, payload = score_candidate_logprobs(p, [shift + math.log(0.5), shift + math.log(0.5)])
    assert scores["no_mass"] == 0.0 and payload["q"] == pytest.approx([0.5, 0.5])
    assert payload["ks_distance_unresolved"] == pytest.approx(0.0, abs=1e-12) and scores["valid_mass"] == 0.0
    assert payload["p_pass_given_valid@100"] >= 0.98 and payload["p_pass_unresolved@100"] == 0.0
    assert scores["unresolved"] == 1.0 and math.isnan(scores["p_pass@100"])


@pytest.mark.parametrize("name", sorted(HOSTILE_LOGPROBS))
def test_lmeval_hook_counts_instead_of_aborting(name):
    from ub_lmeval.ksn_logprob_hooks import ksn_logprob_docs, process_results_ksn_logprob

    bad, _ = HOSTILE_LOGPROBS[name]
    (doc,) = ksn_logprob_docs("real_world", ids=PID)
    n = len(doc["choices"])
    row = process_results_ksn_logprob(doc, [(bad, False)] + [(-1.0, False)] * (n - 1))
    assert row["bad_logprobs"] == 1.0 and math.isnan(row["ks_distance"])
    logged = doc["ub_sample"]  # the sample log line keeps the reason; q is empty
    assert logged["q"] == [] and "log-probability 0" in logged["bad_logprobs_reason"]
    # None from lm-eval's results is not "probability 0": it is a missing value
    row = process_results_ksn_logprob(doc, [(None, False)] * n)
    assert row["bad_logprobs"] == 1.0


@pytest.mark.parametrize("value", [0.5, float("inf")])
def test_inspect_run_counts_a_hostile_provider_and_scores_the_rest(tmp_path, monkeypatch, value):
    """A provider whose log-probability for one problem's candidates is above 0 or +inf: that sample is a counted
    bad_logprobs item with the reason in its score metadata; the run succeeds and the other problem is scored."""
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers as providers
    from ub_inspect.ksn_logprob import ksn_logprob

    real = providers.oracle_candidate_logprob

    def hostile(problem, continuation, mode="oracle", delimiter=" "):
        return value if problem.id == PID else real(problem, continuation, mode, delimiter)

    monkeypatch.setattr(providers, "oracle_candidate_logprob", hostile)
    log = inspect_eval(ksn_logprob(ids=f"{PID},te-bernoulli-spread"), model="ub/oracle", log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success", log.error
    by_id = {s.id: s.scores["ksn_logprob_scorer"] for s in log.samples}
    assert by_id[PID].value["bad_logprobs"] == 1.0 and by_id[PID].metadata["ub"]["bad_logprobs"]
    assert by_id["te-bernoulli-spread"].value["bad_logprobs"] == 0.0
    assert by_id["te-bernoulli-spread"].value["ks_distance"] == pytest.approx(0.0, abs=1e-9)
