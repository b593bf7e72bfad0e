"""Extreme-but-finite inputs and collapsed samples.

* No metric may raise, return inf or an out-of-range p-value for any finite input: hypothesis draws mixes of
  extreme magnitudes (1e-300 .. 1.7e308, both signs, zeros, repeats) through KS@N (both methods, continuous and
  tied supports), WDZ and JSD. Settings are derandomized, so the run is deterministic.
* A reply beyond the usable magnitude (|x| > 1e150) is an out-of-support failure with a reason, not a value.
* A WDZ whose permutation null has zero spread is NaN (never +/-inf), counted as ``wdz_undefined`` and left out
  of the mean; a constant sample is counted as ``n_constant`` and keeps a finite JSD.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ub_core import ksn_scoring as scoring
from ub_core import metrics as M
from ub_core.problems import get_problem

LN2 = math.log(2.0)

_EXTREMES = [0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e-10, 1.0, -1.0, 2.5, 1e10, 1e150, -1e150, 1e200, -1e200,
             1e300, 1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308]
_value = st.one_of(st.sampled_from(_EXTREMES),
                   st.floats(allow_nan=False, allow_infinity=False),
                   st.floats(min_value=-1e3, max_value=1e3, allow_nan=False))
_sample = st.lists(_value, min_size=1, max_size=25)
_ROBUST = settings(derandomize=True, database=None, max_examples=150, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _check_p(p):
    assert p is not None and isinstance(p, float) and not math.isnan(p) and 0.0 <= p <= 1.0, p


@_ROBUST
@given(a=_sample, b=_sample)
def test_ks_at_n_never_raises_on_extreme_finite_values(a, b):
    ns = (1, 2, 5, 10)
    for method in M.KS_METHODS:
        for support in ("continuous", "discrete"):
            res = M.ks_at_n(a, b, ns=ns, method=method, support=support)
            for n in ns:
                if n <= len(a):
                    _check_p(res[n]["pvalue"])
                    assert 0.0 <= res[n]["statistic"] <= 1.0


@_ROBUST
@given(a=_sample, b=_sample)
def test_wdz_never_raises_or_returns_inf(a, b):
    res = M.wdz(a, b, resamples=49, seed=0)
    assert not math.isinf(res["z"])
    sd_zero = res["null_sd"] == 0.0 or res["null_sd"] <= 1e-12 * max(abs(res["w1"]), abs(res["null_mean"]))
    if math.isnan(res["z"]):
        assert sd_zero  # NaN only where the null has no spread
    with np.errstate(over="ignore"):
        pooled_range = float(np.ptp(np.concatenate([a, b])))
    if math.isfinite(pooled_range):  # W1 <= pooled range: finite whenever the range is
        for key in ("w1", "w1_debiased", "null_mean", "null_sd"):
            assert math.isfinite(res[key]), (key, res)
        assert res["w1"] >= 0.0 and res["null_sd"] >= 0.0


@_ROBUST
@given(a=_sample, b=_sample)
def test_jsd_never_raises_and_stays_in_range(a, b):
    v = M.jsd(a, b)
    assert math.isfinite(v) and 0.0 <= v <= LN2


@pytest.mark.parametrize("a,b", [
    ([1e308], [1.0, 2.0, 3.0]),
    ([1e200, 1.0], [1.0, 2.0, 3.0]),
    ([1e-300, 1e150, 1e-300, 3e-300], [0.0, 1e-300, 2e-300]),
    ([-1.7976931348623157e308, 1.7976931348623157e308], [0.0]),
    ([7.0], [7.0]),
    ([1e150 + 2.0 ** 450 * k for k in range(5)], [1e150] * 3),  # huge values, tiny gaps
])
def test_named_extreme_cases(a, b):
    for method in M.KS_METHODS:
        _check_p(M.ks_at_n(a, b, ns=(1,), method=method)[1]["pvalue"])
    assert not math.isinf(M.wdz(a, b, resamples=49)["z"])
    assert 0.0 <= M.jsd(a, b) <= LN2


def test_scale_invariance_of_the_fixed_metrics():
    """KS and z are scale free, W1 scales with the data, JSD is scale free: the same sample at 1e-300 and at
    1e150 scores as at 1 (powers of two so the rescaled samples are exact)."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 1, 40), rng.normal(0.3, 1, 300)
    base_w = M.wdz(a, b, resamples=99, seed=2)
    base_j = M.jsd(a, b)
    for e in (-990, 490):
        s = 2.0 ** e
        w = M.wdz(a * s, b * s, resamples=99, seed=2)
        assert w["z"] == pytest.approx(base_w["z"], rel=1e-9)
        assert w["w1"] == pytest.approx(base_w["w1"] * s, rel=1e-12)
        assert M.jsd(a * s, b * s) == pytest.approx(base_j, abs=1e-12)
        assert M.ks_2samp_exact(a * s, b * s) == M.ks_2samp_exact(a, b)


# ------------------------------------------------------------------------------------------ usable values

def test_huge_replies_are_out_of_support_failures():
    p = get_problem("te-normal-conc")
    for text in ("{1e308}", "{1e200}", "{-1e151}"):
        res = p.parse(text)
        assert not res.ok and "1e+150" in res.error, (text, res.error)
    assert p.parse("{1e150}").ok or "support" in p.parse("{1e150}").error
    values, failures = p.check_values([1e200, 1.0, -1e300])
    assert values == [1.0] and len(failures) == 2


def test_score_outputs_survives_huge_replies():
    p = get_problem("te-normal-conc")
    row = scoring.score_outputs(p, ["{1e308}", "{1e200}"] + ["{0.5}"] * 3, ns=(1, 2), wdz_resamples=49,
                                truth_size=500)
    assert row["n_failed"] == 2 and row["n_valid"] == 3
    assert any("1e+150" in f for f in row["failures"])


def test_score_jsonl_does_not_crash_on_huge_values():
    lines = ['{"id": "te-normal-conc", "values": [1e308, 1e200, 0.1, 0.2]}',
             '{"id": "te-normal-conc", "outputs": ["{1e308}", "{1e200}"]}']
    run = scoring.score_jsonl(lines, ns=(1, 2))
    assert not run.errors and run.rows[0]["n_failed"] == 4 and run.rows[0]["n_valid"] == 2


# ------------------------------------------------------------------------------------------ collapsed samples

def test_wdz_with_zero_null_spread_is_nan_not_inf():
    # one model value vs a constant truth: every random split puts the odd value on the big side (p ~ 1e-4 each),
    # so the 999 null values are all equal while the observed W1 is far from them: z was +inf, now NaN
    res = M.wdz([5.0], [1.0] * 10_000, resamples=999, seed=0)
    assert res["null_sd"] <= 1e-12 * res["w1"] and res["w1"] == 4.0  # zero up to rounding noise
    assert math.isnan(res["z"])
    assert res["w1_debiased"] == pytest.approx(4.0 - res["null_mean"])


def _rows_with_one_collapsed():
    p = get_problem("te-normal-conc")
    rng = np.random.default_rng(0)
    truth = p.truth(size=2000)
    rows = []
    for _ in range(4):
        row = scoring.score_values(p, list(rng.choice(truth, 20)), ns=(1, 20), truth=truth, wdz_resamples=99)
        row["category"] = "text_explicit"
        rows.append(row)
    collapsed = scoring.score_values(p, [5.0], ns=(1, 20), truth=np.ones(10_000), wdz_resamples=999)
    collapsed["category"] = "text_explicit"
    constant = scoring.score_values(p, [0.5] * 20, ns=(1, 20), truth=truth, wdz_resamples=99)
    constant["category"] = "code_explicit"
    return rows + [collapsed, constant]


def test_score_values_flags_undefined_wdz_and_constant_samples():
    rows = _rows_with_one_collapsed()
    assert [r["wdz_undefined"] for r in rows] == [False] * 4 + [True, False]
    assert [r["constant"] for r in rows] == [False] * 4 + [True, True]
    assert rows[4]["wdz"] is None and all(math.isfinite(r["wdz"]) for i, r in enumerate(rows) if i != 4)
    assert math.isfinite(rows[5]["jsd"]) and 0.0 < rows[5]["jsd"] <= LN2  # constant sample keeps a finite JSD


def test_aggregate_mean_is_finite_with_a_collapsed_problem():
    rows = _rows_with_one_collapsed()
    agg = scoring.aggregate(rows, ns=(1, 20))
    te, overall = agg["by_category"]["text_explicit"], agg["overall"]
    assert te["wdz_undefined"] == 1 and overall["wdz_undefined"] == 1
    assert te["n_constant"] == 1 and agg["by_category"]["code_explicit"]["n_constant"] == 1
    assert overall["n_constant"] == 2
    finite = [r["wdz"] for r in rows if not r["wdz_undefined"]]
    assert overall["wdz"]["mean"] == pytest.approx(np.mean(finite), rel=1e-12)
    assert te["wdz"]["n"] == 4 and te["wdz"]["dropped"] == 1
    # an infinite WDZ from an older log is undefined too, never an infinite mean
    legacy = [dict(r) for r in rows[:4]] + [dict(rows[4], wdz=math.inf, wdz_undefined=None),
                                            dict(rows[4], wdz=math.nan, wdz_undefined=None)]
    agg2 = scoring.aggregate(legacy, ns=(1, 20))
    assert math.isfinite(agg2["overall"]["wdz"]["mean"]) and agg2["overall"]["wdz_undefined"] == 2
    table = scoring.format_table(agg, ns=(1, 20))
    head = table.splitlines()[0].split()
    assert "WDZ?" in head and "const" in head
    all_row = table.splitlines()[-1].split()
    assert all_row[head.index("WDZ?")] == "1" and all_row[head.index("const")] == "2"
    assert "inf" not in table


# ------------------------------------------------------------------------------------------ adapters

def _poison_first(real, first_id):
    """score_values, except that problem ``first_id`` gets the row of a collapsed problem with no WDZ."""

    def score(problem, values, **kw):
        row = real(problem, values, **kw)
        if problem.id == first_id:
            row.update(wdz=None, wdz_undefined=True)
        return row

    return score


@pytest.mark.slow
def test_inspect_metrics_leave_undefined_wdz_out_and_count_it(tmp_path, monkeypatch):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval

    import ub_inspect.ksn.scorer as scorers
    from ub_inspect.ksn import ksn

    task = ksn(categories="text_explicit,code_explicit", limit_per_category=3, n_samples=10, ks_ns="10")
    first = task.dataset[0].id
    monkeypatch.setattr(scorers, "score_values", _poison_first(scoring.score_values, first))
    log = inspect_eval(task, model="ub/collapse", log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    per = {s.id: s.scores["ksn_scorer"].value for s in log.samples}
    cat_of = {s.id: s.metadata["category"] for s in log.samples}
    assert math.isnan(per[first]["wdz"]) and per[first]["wdz_undefined"] == 1.0
    (score,) = log.results.scores  # every run metric in one score (ub_inspect.metrics)
    run = {k: m.value for k, m in score.metrics.items()}
    finite = [v["wdz"] for k, v in per.items() if k != first]
    # the undefined WDZ is left out of the mean and its standard error, and counted
    assert run["wdz"] == pytest.approx(np.mean(finite), rel=1e-12)
    assert run["wdz_stderr"] == pytest.approx(np.std(finite, ddof=1) / math.sqrt(len(finite)), rel=1e-9)
    assert run["wdz_undefined"] == 1.0
    # the collapse provider answers one value every time: every problem is a constant sample
    assert run["constant"] == 6.0
    assert all(math.isfinite(run[k]) for k in ("wdz", "wdz_stderr", "jsd", "jsd_stderr"))
    # per category, from the log's samples (ub_inspect.analysis): the undefined WDZ is left out there too
    from inspect_ai.analysis import SampleSummary, samples_df

    from ub_inspect.analysis import columns, per_category

    table = per_category(samples_df(log.location, columns=SampleSummary + columns("ksn"), quiet=True), "ksn")
    table = table.loc[(str(log.eval.model), log.eval.task)]  # one run: its model and task, then the categories
    cat = cat_of[first]
    assert table.loc[cat, "ksn_wdz"] == pytest.approx(
        np.mean([v["wdz"] for k, v in per.items() if k != first and cat_of[k] == cat]), rel=1e-12)


def test_lmeval_aggregation_leaves_undefined_wdz_out_and_counts_it(monkeypatch):
    pytest.importorskip("lm_eval")
    import ub_lmeval.ksn_hooks as hooks
    from ub_core.oracle import oracle_replies
    from ub_core.problems import load_bank

    problems = [p for p in load_bank("ksn", categories=["text_explicit"])][:4]
    monkeypatch.setattr(hooks, "score_values", _poison_first(scoring.score_values, problems[0].id))
    rows = [hooks.process_results_ksn({"id": p.id}, [oracle_replies(p, 100, seed=1)]) for p in problems]
    rows.append(hooks.process_results_ksn({"id": problems[1].id}, [["{0.5}"] * 100]))  # a collapsed sample
    assert math.isnan(rows[0]["wdz"]) and [r["wdz_undefined"] for r in rows] == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert [r["constant"] for r in rows] == [0.0] * 4 + [1.0]
    assert math.isfinite(rows[4]["jsd"])
    mean = hooks.nanmean([r["wdz"] for r in rows])
    assert math.isfinite(mean) and mean == pytest.approx(np.mean([r["wdz"] for r in rows[1:]]), rel=1e-12)
    assert hooks.total([r["wdz_undefined"] for r in rows]) == 1.0
    assert hooks.total([r["constant"] for r in rows]) == 1.0


def test_lmeval_tasks_report_the_counts_per_category():
    """Through lm-eval's own evaluate: the collapse model answers one value per problem, so every problem of the
    task is a constant sample; no WDZ is undefined; the means are finite."""
    pytest.importorskip("lm_eval")
    import json

    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    tm = ub_task_manager()
    res = simple_evaluate(model="ub-collapse", tasks=["ub_ksn_code_explicit", "ub_ksn_multimodal"], task_manager=tm,
                          limit=3)
    for task in ("ub_ksn_code_explicit", "ub_ksn_multimodal"):
        row = res["results"][task]
        assert row["constant,take_100"] == 3.0 and row["wdz_undefined,take_100"] == 0.0
        assert math.isfinite(row["wdz,take_100"]) and math.isfinite(row["jsd,take_100"])
        assert res["higher_is_better"][task]["wdz_undefined"] is False
    json.dumps(res["results"], allow_nan=False)


def test_report_summary_counts_and_never_averages_inf():
    from ub_core.report.records import SampleRecord
    from ub_core.report.summary import _ksn_tables

    def rec(pid, cat, wdz, **extra):
        m = {"ks@100": 0.0, "wdz": wdz, "jsd": 0.3, "n_valid": 100, "n_failed": 0, **extra}
        return SampleRecord("m", "inspect", "ksn", "ksn", cat, pid, metrics=m, payload={"values": [1.0, 2.0]})

    recs = [rec("a", "x", 1.0, wdz_undefined=0.0, constant=0.0), rec("b", "x", 3.0, wdz_undefined=0.0, constant=1.0),
            rec("c", "x", math.nan, wdz_undefined=1.0, constant=0.0),
            rec("d", "y", math.inf),  # an older log: no flags, an infinite WDZ
            SampleRecord("m", "inspect", "ksn", "ksn", "y", "e", metrics={"ks@100": 0.0, "wdz": -2.0, "jsd": 0.1,
                                                                           "n_valid": 3},
                         payload={"values": [4.0] * 3})]
    lead, _, by_cat = _ksn_tables(recs)
    row = lead.rows[0]
    assert row["wdz"] == pytest.approx((1.0 + 3.0 - 2.0) / 3) and row["wdz_undefined"] == 2
    assert row["n_constant"] == 2 and {"wdz_undefined", "n_constant"} <= set(lead.columns)
    cats = {r["category"]: r for r in by_cat.rows}
    assert (cats["x"]["wdz_undefined"], cats["x"]["n_constant"]) == (1, 1)
    assert (cats["y"]["wdz_undefined"], cats["y"]["n_constant"]) == (1, 1) and cats["y"]["wdz"] == -2.0
    assert all(math.isfinite(r["wdz"]) for r in [row, *by_cat.rows])


def test_ub_score_with_a_constant_truth_counts_the_undefined_wdz_and_stays_strict_json():
    """End to end through score_jsonl: a one-value sample against a constant truth (a deterministic target) has
    no z-score: NaN, counted, never +inf in the row or in the WDZ mean."""
    import dataclasses
    import json

    base = get_problem("te-normal-conc")
    const = dataclasses.replace(base, id="test-constant-truth", bank="test-only",
                                sampler=lambda rng, size: np.ones(size))
    problems = {base.id: base, const.id: const}
    lines = [json.dumps({"id": const.id, "values": [5.0]}),
             json.dumps({"id": base.id, "values": list(base.draw(50, seed=3))})]
    run = scoring.score_jsonl(lines, ns=(1, 50), problems=problems)
    assert not run.errors
    rows = {r["id"]: r for r in run.rows}
    assert rows[const.id]["wdz"] is None and rows[const.id]["wdz_undefined"] is True
    assert rows[const.id]["constant"] is True and math.isfinite(rows[const.id]["jsd"])
    overall = run.aggregate["overall"]
    assert overall["wdz_undefined"] == 1 and overall["wdz"]["mean"] == pytest.approx(rows[base.id]["wdz"])
    json.dumps({"aggregate": run.aggregate, "problems": run.rows}, allow_nan=False)  # no NaN / inf anywhere


def test_inspect_run_with_huge_replies_succeeds_and_retries_them(tmp_path):
    """A provider whose first request per problem answers {1e308} / {1e200} in every second slot and true draws
    otherwise: the run ends with status success, not error (OverflowError in JSD); the huge replies are failures,
    and their five slots are retried (the second request answers with true draws)."""
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, GenerateConfig, ModelAPI,
                                  ModelOutput, ModelUsage, modelapi)

    from ub_core.oracle import oracle_replies
    from ub_inspect.ksn import ksn
    from ub_inspect.providers import find_problem

    class _HugeAPI(ModelAPI):
        def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **kw):
            super().__init__(model_name, base_url, api_key, [], config)
            self.calls: dict[str, int] = {}

        async def generate(self, input, tools, tool_choice, config):
            text = input[-1].text
            calls = self.calls[text] = self.calls.get(text, 0) + 1
            n = max(1, config.num_choices or 1)
            good = oracle_replies(find_problem(text), n, seed=calls)
            huge = ("{1e308}", "{1e200}")
            replies = [huge[i % 4 // 2] if calls == 1 and i % 2 == 0 else good[i] for i in range(n)]
            return ModelOutput(model=self.model_name, choices=[
                ChatCompletionChoice(message=ChatMessageAssistant(content=r, source="generate"), stop_reason="stop")
                for r in replies], usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))

    modelapi(name="ubhuge")(lambda: _HugeAPI)
    # targets with no upper bound, so 1e200 and 1e308 are inside the distribution's own support
    log = inspect_eval(ksn(ids="te-normal-conc,ce-erlang-conc", n_samples=10, ks_ns="10"),
                       model="ubhuge/x", log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    assert len(log.samples) == 2
    for sample in log.samples:
        value, meta = sample.scores["ksn_scorer"].value, sample.scores["ksn_scorer"].metadata
        assert value["n_valid"] == 10 and value["n_failed"] == 5 and value["retried_slots"] == 5
        assert all("usable magnitude" in f for f in meta["failures"])
        assert math.isfinite(value["wdz"]) and math.isfinite(value["jsd"])


def test_lmeval_process_results_with_huge_replies():
    pytest.importorskip("lm_eval")
    from ub_core.oracle import oracle_replies
    from ub_lmeval.ksn_hooks import process_results_ksn

    p = get_problem("te-normal-conc")
    row = process_results_ksn({"id": p.id}, [["{1e308}", "{1e200}"] + oracle_replies(p, 98, seed=2)])
    assert row["n_failed"] == 2 and row["n_valid"] == 98
    assert math.isfinite(row["wdz"]) and math.isfinite(row["jsd"])


def test_no_adapter_mean_takes_an_infinite_value():
    """An infinite value (an old record's WDZ, a hostile log) is left out of every mean like NaN: the core
    summaries, Inspect's nan_mean/nan_stderr and lm-eval's nanmean/total, so no table can show +-inf."""
    from inspect_ai.scorer import Score, SampleScore

    from ub_inspect.metrics import nan_mean, nan_stderr
    from ub_lmeval.ksn_hooks import nanmean, total
    from ub_lmeval.odds_hooks import nanmean as odds_nanmean

    values = [1.0, float("inf"), float("nan"), 3.0, float("-inf"), None]
    s = M.summarize_values(values)
    assert (s["mean"], s["n"], s["dropped"]) == (2.0, 2, 4)
    assert np.isfinite(s["low"]) and np.isfinite(s["high"])
    assert nanmean(values) == 2.0 and odds_nanmean(values) == 2.0
    assert total([1.0, float("inf"), 1.0, float("nan")]) == 2.0
    scores = [SampleScore(score=Score(value=v), sample_id=i) for i, v in enumerate(values[:5])]
    assert nan_mean()(scores) == 2.0
    assert nan_stderr()(scores) == pytest.approx(1.0)  # sd of (1, 3) = sqrt(2), / sqrt(2)
