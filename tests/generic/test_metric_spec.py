"""The KS@N metric keys are spelled once, in ub_core.metric_spec: the lm-eval YAML, the lm-eval hooks, the Inspect
metrics and the report agree with it, and a new metric needs only a spec entry (plus its pure function)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ub_core import metric_spec
from ub_core.metric_keys import per_n_key
from ub_core.metric_spec import KSN_METRICS, MetricSpec, direction, metric, metric_keys, run_specs, split_key
from ub_core.metrics import DEFAULT_NS
from support.lmeval_tasks import LMEVAL_AGGREGATION, load_task_yaml

ROOT = Path(__file__).resolve().parents[2]


def check_ksn_metric_list(folder: Path) -> None:
    doc = load_task_yaml(folder / "ksn/_ub_ksn_template_yaml")
    listed = [(m["metric"], m["aggregation"], m["higher_is_better"]) for m in doc["metric_list"]]
    expected = [(k, LMEVAL_AGGREGATION[m.aggregation], direction(m)) for k, m in run_specs("ksn", adapter="lmeval")]
    assert listed == expected  # the parsed values are no metric: they go to the sample log


def check_ksn_group_list(folder: Path) -> None:
    """The expected list is derived from the spec (its rates), so a metric added by the README's recipe is
    expected here too (this test once pinned ks@1 ... ks@100)."""
    doc = load_task_yaml(folder / "ksn/ub_ksn.yaml")
    listed = [m["metric"] for m in doc["aggregate_metric_list"]]
    assert listed == [k for k, m in run_specs("ksn", adapter="lmeval") if m.kind == "rate"]
    assert {per_n_key("ks", n) for n in DEFAULT_NS} <= set(listed)
    assert all(m["filter_list"] == "take_100" and m["weight_by_size"] for m in doc["aggregate_metric_list"])


def test_ksn_yaml_metric_list_equals_the_spec():
    check_ksn_metric_list(ROOT / "ub_lmeval/task_yamls")


def test_ksn_group_yaml_aggregates_the_spec_rates():
    """The group's ``aggregate_metric_list`` (it was checked by no test) is the spec's rates, the KS@N."""
    check_ksn_group_list(ROOT / "ub_lmeval/task_yamls")


def _toy_ad(values, truth, *, n, threshold, method):
    """A toy per-N rate for the recipe's test (not Anderson-Darling: scipy's anderson_ksamp clips its p-value to
    [0.001, 0.25], so an AD@N built on it could never fail at the KS threshold 1e-4)."""
    return 1.0


def test_the_readme_recipe_for_a_per_n_metric_works_as_written(tmp_path):
    """Add a per-N rate as the README says (a spec entry, then ``python -m ub_lmeval.metric_lists
    --write``), on a copy of the task folder: the YAML tests above pass on what it wrote."""
    import shutil

    from ub_lmeval import metric_lists

    folder = tmp_path / "task_yamls"
    shutil.copytree(ROOT / "ub_lmeval/task_yamls", folder)
    metric_spec.register_metric("ksn", MetricSpec("toy", "TOY@{n}", True, "rate", per_n=True, compute=_toy_ad))
    try:
        for rel, key, family, filter_list in metric_lists.SPEC_YAMLS:
            metric_lists.sync(folder / rel, key, family, filter_list, write=True)
        check_ksn_metric_list(folder)
        check_ksn_group_list(folder)
        assert per_n_key("toy", 100) in metric_keys("ksn", "lmeval")
    finally:
        metric_spec.unregister_metric("ksn", "toy")
    assert per_n_key("toy", 100) not in metric_keys("ksn", "lmeval")


def test_lmeval_hooks_report_exactly_the_spec_keys():
    from ub_core.oracle import oracle_replies
    from ub_core.problems import load_bank
    from ub_lmeval.ksn_hooks import process_results_ksn

    p = load_bank("ksn")[0]
    doc = {"id": p.id}
    row = process_results_ksn(doc, [oracle_replies(p, 100, seed=1)])
    assert tuple(row) == metric_keys("ksn", "lmeval")
    assert len(doc["ub_sample"]["values"]) == 100  # logged with the doc, not a metric


def test_inspect_metrics_derive_from_the_spec():
    from ub_inspect.ksn.scorer import KSN_METRICS as INSPECT
    from ub_inspect.metrics import _spec_patterns
    from inspect_ai._util.registry import registry_params, registry_unqualified_name

    # plain metrics only (one score per scorer): the headline (KS@N at the largest N, per category), the mean of
    # every other key with its standard error where the spec asks, the retry metrics, the counts
    assert [registry_unqualified_name(m) for m in INSPECT] == ["headline", "means", "retry_rate",
                                                               "attempts_per_valid", "totals"]
    assert registry_params(INSPECT[0]) == {"key": "ks@*", "group": "category", "cluster": None}
    # the averaged keys and the flags are read from the spec when the metrics are computed (a registered metric is
    # there), a per-N entry as the pattern of its keys
    assert registry_params(INSPECT[1]) == {"cluster": None, "headline": "ks@*", "eval_family": "ksn"}
    assert registry_params(INSPECT[4]) == {"eval_family": "ksn"}
    keys, with_stderr, counted = _spec_patterns("ksn")
    averaged = [m for m in KSN_METRICS if "inspect" in m.adapters and m.kind != "flag"]
    assert keys == [f"{m.key}@*" if m.per_n else m.key for m in averaged] and keys[0] == "ks@*"
    assert with_stderr == [k for k in keys if metric("ksn", k.replace("@*", "@1")).stderr]
    assert counted == ["wdz_undefined", "constant"]


def test_report_keys_derive_from_the_spec():
    from ub_core.report.eval_families import KSN_KEYS

    assert KSN_KEYS == tuple(k for k in metric_keys("ksn") if split_key(k)[1] is None)
    assert set(KSN_KEYS) >= {"wdz", "jsd", "wdz_undefined", "constant", "w1_debiased", "attempts"}


def test_spec_refuses_unknown_kinds_and_keys():
    with pytest.raises(ValueError, match="unknown kind"):
        MetricSpec("x", "x", True, kind="median")
    with pytest.raises(KeyError, match="no metric"):
        metric("ksn", "nope")
    assert dataclasses.is_dataclass(KSN_METRICS[0]) and all(m.key for m in KSN_METRICS)


@pytest.mark.parametrize("eval_family, path", [
    ("calibration", "ub_lmeval/task_yamls/option_logprob/_ub_calibration_template_yaml"),
    ("implicit", "ub_lmeval/task_yamls/option_logprob/_ub_implicit_template_yaml"),
    ("explicit", "ub_lmeval/task_yamls/explicit/_ub_explicit_template_yaml"),
])
def test_logprob_yaml_metric_lists_equal_the_spec(eval_family, path):
    """The per-item means of the log-probability YAMLs are the spec's metrics, in its order and true direction
    (two-sided ``re``: null); the only companions are the grid rates and the counts (``bad_logprobs`` and
    ``ub_core.logprob.option_logprob.COUNT_KEYS``). No count of a per-item list and no ``_clustered_se`` row (the
    clustered SE is ``<metric>_stderr``)."""
    doc = load_task_yaml(ROOT / path)
    listed = [(m["metric"], m["aggregation"], m["higher_is_better"]) for m in doc["metric_list"]]
    heads = [row for row in listed if row[1] == "!function utils.nanmean"]
    spec = metric_spec._SPECS_BY_EVAL_FAMILY[eval_family]
    assert heads == [(m.key, LMEVAL_AGGREGATION[m.aggregation], direction(m)) for m in spec]
    rest = listed[len(heads):]
    grids = [r for r in rest if r[0].startswith("grid_")]
    from ub_core.logprob.option_logprob import COUNT_KEYS

    assert rest == grids + [(k, "!function utils.total", False) for k in ("bad_logprobs",) + COUNT_KEYS[eval_family]]
    for name, agg, hib in grids:
        assert agg == "!function utils.grid_behaviour_rate"
        if name == "grid_undetermined":  # grids too unbalanced to label: fewer is better
            assert hib is False
            continue
        assert hib == direction(metric(eval_family, "behaviour_" + name[5:]))


def test_logprob_keys_and_behaviours_derive_from_the_spec():
    from ub_core.logprob.option_logprob import BEHAVIOURS, METRIC_KEYS
    from ub_core.report import eval_families

    assert METRIC_KEYS == {b: metric_keys(b) for b in ("calibration", "implicit", "explicit")}
    assert BEHAVIOURS == metric_spec.BEHAVIOURS == eval_families.BEHAVIOURS
    assert eval_families.IMPLICIT_KEYS == metric_keys("implicit")
    assert eval_families.EXPLICIT_KEYS == metric_keys("explicit")
    assert eval_families.CALIBRATION_KEYS == ("wd", "pm", "re", "abs_re")  # WD, the headline, first


def _lmeval_rows(eval_family) -> list[tuple]:
    return [(k,
             f"!function utils.{m.lmeval_aggregation}" if m.lmeval_aggregation else LMEVAL_AGGREGATION[m.aggregation],
             direction(m)) for k, m in run_specs(eval_family, adapter="lmeval")]


@pytest.mark.parametrize("eval_family, path", [
    ("odds_question", "ub_lmeval/task_yamls/odds/_ub_odds_template_yaml"),
    ("odds_sampling", "ub_lmeval/task_yamls/odds/ub_odds_sampling.yaml"),
    ("stability", "ub_lmeval/task_yamls/stability/_ub_tar_template_yaml"),
    ("ksn_logprob", "ub_lmeval/task_yamls/ksn_logprob/_ub_ksn_logprob_template_yaml"),
])
def test_odds_stability_and_ksn_logprob_yaml_metric_lists_equal_the_spec(eval_family, path):
    doc = load_task_yaml(ROOT / path)
    listed = [(m["metric"], m["aggregation"], m["higher_is_better"]) for m in doc["metric_list"]]
    assert listed == _lmeval_rows(eval_family)  # no payload list counted as a metric


def test_inspect_odds_and_logprob_metrics_derive_from_the_spec():
    from inspect_ai._util.registry import registry_params
    from ub_inspect.option_logprob import _metrics
    from ub_inspect.odds.odds import QUESTION_METRICS, SAMPLING_METRICS

    from ub_inspect.metrics import _spec_patterns

    def keys(metrics):
        """The headline key, then the averaged keys."""
        return [registry_params(metrics[0])["key"], *_spec_patterns(registry_params(metrics[1])["eval_family"])[0]]

    assert keys(QUESTION_METRICS) == ["abs_error"] + list(metric_keys("odds_question", "inspect"))
    assert keys(SAMPLING_METRICS) == ["ks_stat", "ks_stat", "ks@*"] + [
        k for k in metric_keys("odds_sampling", "inspect") if split_key(k)[1] is None and k != "ks_stat"]
    # the paper's ± across distributions: an Inspect run metric; lm-eval's [distribution, value] documents
    assert registry_params(QUESTION_METRICS[2]) == {"key": "abs_error"}  # grouped by context, the default
    assert registry_params(SAMPLING_METRICS[2]) == {"key": "ks_stat"}
    assert "abs_error_dist_se" in metric_keys("odds_question", "lmeval")
    assert "abs_error_dist_se" not in metric_keys("odds_question", "inspect")
    for bank in ("calibration", "implicit", "explicit"):
        assert keys(_metrics(bank))[0] == metric_spec.HEADLINES[bank]
        assert sorted(keys(_metrics(bank))[1:]) == sorted(metric_keys(bank))
        assert registry_params(_metrics(bank)[1])["cluster"] == "cluster"
    # the headline by family (the odds paper's tables), then the means, with a standard error where the spec asks
    assert registry_params(QUESTION_METRICS[0]) == {"key": "abs_error", "group": "family", "cluster": None}
    assert _spec_patterns("odds_question")[1] == ["abs_error", "baseline_abs_error"]


def test_report_odds_and_stability_keys_derive_from_the_spec():
    from ub_core.report import eval_families

    assert eval_families.ODDS_KEYS == ("abs_error", "baseline_abs_error", "ks_stat")
    assert set(eval_families.STABILITY_KEYS) == (set(metric_keys("stability")) - {"acc"}) | {"run_accuracies"}
    with pytest.raises(KeyError, match="no metric spec for 'nope'"):
        metric_spec.metric_specs("nope")


def test_run_specs_follows_a_registration_and_hands_out_its_own_list(monkeypatch):
    """run_specs keeps its answer per arguments (a scorer asks it for every sample); a metric registered or removed
    afterwards is in (out of) the next answer, and a caller that changes its list changes no later answer."""
    from ub_core.metric_spec import MetricSpec, register_metric, run_specs, unregister_metric

    monkeypatch.setattr(metric_spec, "_SPECS_BY_EVAL_FAMILY", dict(metric_spec._SPECS_BY_EVAL_FAMILY))
    before = run_specs("calibration")
    first = run_specs("calibration")
    assert first == before
    first.clear()
    assert run_specs("calibration") == before
    register_metric("calibration", MetricSpec("extra_cached", "Extra", True, "score"))
    assert [k for k, _ in run_specs("calibration")] == [k for k, _ in before] + ["extra_cached"]
    unregister_metric("calibration", "extra_cached")
    assert run_specs("calibration") == before
    assert [k for k, _ in run_specs("ksn", ns=[100, 1])] == [k for k, _ in run_specs("ksn", ns=(1, 100))]
