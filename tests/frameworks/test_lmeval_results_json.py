"""lm-eval's results JSON, as a dashboard reads it. Every reported metric has its true direction
(two-sided ``re`` is null, ``abs_re`` ranked); per-document lists are no metric (they stay in the sample log);
``<metric>_stderr`` is filled for the NaN-skipping means and is the clustered SE for the logit banks; the offline
models get a stable name; lm-eval's ``dummy`` model is counted invalid on the logit tasks, never an abort."""

from __future__ import annotations

import json
import logging
import math

import pytest

pytest.importorskip("lm_eval")

from lm_eval import simple_evaluate  # noqa: E402

import ub_lmeval  # noqa: E402, F401  (imported for its side effect: registers the ub-* models with lm-eval)
from ub_core.metric_spec import direction, find_metric  # noqa: E402
from ub_core.metrics import clustered_stderr  # noqa: E402
from ub_core.logprob.option_logprob import COUNT_KEYS  # noqa: E402
from ub_lmeval.cli import with_stable_model_name  # noqa: E402
from ub_lmeval.ksn_hooks import nanmean, nanmean_stderr  # noqa: E402
from ub_lmeval.results_json import ClusteredValue  # noqa: E402

LISTS = {"values", "q", "option_mass", "predicted"}
EVAL_FAMILY = {"ub_calibration": "calibration", "ub_implicit": "implicit", "ub_ksn_logprob": "ksn_logprob",
          "ub_ksn": "ksn"}


@pytest.fixture(scope="module")
def oracle_run(task_manager):
    tasks = ["ub_calibration_colors", "ub_implicit_coins", "ub_ksn_logprob_text_explicit", "ub_ksn_text_explicit"]
    return simple_evaluate(model="ub-oracle", tasks=tasks, task_manager=task_manager, limit=8, log_samples=True)


def _eval_family(task: str) -> str:
    return next(f for prefix, f in sorted(EVAL_FAMILY.items(), key=lambda kv: -len(kv[0])) if task.startswith(prefix))


def _metrics(row: dict) -> dict[str, object]:
    return {k.split(",")[0]: v for k, v in row.items() if "," in k and "_stderr," not in k}


@pytest.mark.slow
def test_every_metric_has_its_true_direction_and_no_list_is_a_metric(oracle_run):
    hib = oracle_run["higher_is_better"]
    for task, row in oracle_run["results"].items():
        metrics = _metrics(row)
        assert not LISTS & set(metrics), (task, LISTS & set(metrics))
        assert not [m for m in metrics if m.endswith("_clustered_se")], task
        for m in metrics:
            spec = find_metric(_eval_family(task), m)
            if m.startswith("grid_"):
                spec = find_metric(_eval_family(task), "behaviour_" + m[5:])
            if m in ("bad_logprobs", "grid_undetermined") or m in COUNT_KEYS.get(_eval_family(task), ()):
                # counts, and the share of grids too unbalanced to label: fewer is better
                assert hib[task][m] is False
                continue
            assert spec is not None, (task, m)
            assert hib[task][m] is direction(spec), (task, m, hib[task][m])
    cal = hib["ub_calibration_colors"]
    assert cal["re"] is None and cal["abs_re"] is False  # RE is two-sided (target 0); |RE| is ranked


def test_stderr_is_filled_for_nanmean_metrics_and_is_clustered_for_logit_banks(oracle_run):
    res = oracle_run["results"]
    for task, keys in [("ub_calibration_colors", ("pm", "wd", "re", "abs_re")),
                       ("ub_implicit_coins", ("chebyshev", "manhattan", "kl", "missing_mass")),
                       ("ub_ksn_logprob_text_explicit", ("ks_distance", "p_pass@100", "jsd")),
                       ("ub_ksn_text_explicit", ("jsd", "ks@100"))]:
        for k in keys:
            se = next(v for key, v in res[task].items() if key.split(",")[0] == f"{k}_stderr")
            assert isinstance(se, float) and math.isfinite(se), (task, k, se)
    # the clustered SE of pm, recomputed from the sample log (values and clusters)
    rows = oracle_run["samples"]["ub_calibration_colors"]
    pm = [(r["pm"], r["doc"]["cluster"]) for r in rows if math.isfinite(r["pm"])]
    assert len({c for _, c in pm}) >= 2
    want = clustered_stderr([v for v, _ in pm], [c for _, c in pm])
    assert res["ub_calibration_colors"]["pm_stderr,none"] == pytest.approx(want, rel=1e-12)
    # the lists stay in the sample log, with the document
    assert all(len(r["doc"]["ub_sample"]["option_mass"]) == len(r["doc"]["options"]) for r in rows)
    assert all(len(r["doc"]["ub_sample"]["values"]) == 100 for r in oracle_run["samples"]["ub_ksn_text_explicit"])


def test_nanmean_stderr_formula():
    """Independent documents: std(ddof=1)/sqrt(n) over the defined values; clustered: CR1 by cluster."""
    xs = [0.1, 0.4, float("nan"), 0.9, None, 0.2]
    vals = [0.1, 0.4, 0.9, 0.2]
    mean = sum(vals) / 4
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / 3)
    assert nanmean(xs) == pytest.approx(mean) and nanmean_stderr(xs) == pytest.approx(sd / 2)
    # two clusters: fewer than MIN_CLUSTERS, the unclustered error
    clustered = [ClusteredValue(v, c) for v, c in zip(vals, "aabb")]
    assert nanmean_stderr(clustered) == pytest.approx(sd / 2)
    # ten clusters of two: CR1 by cluster
    many = [0.1, 0.4, 0.9, 0.2, 0.3, 0.8, 0.5, 0.5, 0.0, 1.0, 0.6, 0.7, 0.2, 0.2, 0.9, 0.1, 0.4, 0.3, 0.8, 0.6]
    m = sum(many) / 20
    sums = [(many[2 * i] - m) + (many[2 * i + 1] - m) for i in range(10)]
    labelled = [ClusteredValue(v, str(i // 2)) for i, v in enumerate(many)]
    assert nanmean_stderr(labelled) == pytest.approx(math.sqrt(10 / 9 * sum(s * s for s in sums)) / 20)
    assert json.dumps(clustered[0]) == "0.1"  # the sample log shows the number


@pytest.mark.slow
def test_dummy_model_is_counted_invalid_not_an_abort(task_manager, caplog):
    """lm-eval's dummy model returns -random() for every variant: the variants of one option sum above 1. Before:
    ``ValueError: option_mass sums to 6.9 > 1`` aborted the run."""
    with caplog.at_level(logging.WARNING, logger="ub_lmeval.option_logprob_hooks"):
        res = simple_evaluate(model="dummy", tasks=["ub_calibration_colors", "ub_implicit_coins"],
                              task_manager=task_manager, limit=3, log_samples=True)
    for task in ("ub_calibration_colors", "ub_implicit_coins"):
        row = res["results"][task]
        assert row["bad_logprobs,none"] == 3.0
        first = "pm,none" if task.startswith("ub_calibration") else "chebyshev,none"
        assert math.isnan(row[first])
        reasons = [s["doc"]["ub_sample"]["bad_logprobs_reason"] for s in res["samples"][task]]
        assert len(reasons) == 3 and all(reasons)
    assert sum("counted in bad_logprobs" in r.getMessage() for r in caplog.records) == 6


def test_oracle_logit_run_has_no_bad_item(oracle_run):
    assert oracle_run["results"]["ub_calibration_colors"]["bad_logprobs,none"] == 0.0


def test_offline_models_get_a_stable_name():
    assert with_stable_model_name(["--model", "ub-oracle", "--tasks", "x"])[-2:] == ["--model_args", "model=ub-oracle"]
    assert with_stable_model_name(["--model=ub-collapse", "--model_args", "seed=3"])[-1] == "seed=3,model=ub-collapse"
    assert with_stable_model_name(["--model", "ub-oracle", "--model_args=seed=1"])[-1] == \
        "--model_args=seed=1,model=ub-oracle"
    keep = ["--model", "hf", "--model_args", "pretrained=x"]
    assert with_stable_model_name(keep) == keep


# ``ub-lm-eval`` names the offline model in its results (folder and model_name ``ub-oracle``): checked on the one
# ub-lm-eval command-line run, tests/frameworks/test_lmeval.py::test_ub_lm_eval_command_line


def test_stderr_hook_keeps_lm_evals_own_lookup():
    """Our aggregations bring their stderr; lm-eval's own keep theirs; --bootstrap_iters 0 still turns all off."""
    import lm_eval.evaluator_utils as evaluator_utils
    from lm_eval.api.metrics import mean, mean_stderr

    lookup = evaluator_utils.stderr_for_metric
    assert getattr(lookup, "ub_wrapped", False)
    assert lookup(nanmean, 100)([0.1, 0.5, float("nan"), 0.9]) == pytest.approx(nanmean_stderr([0.1, 0.5, 0.9]))
    assert lookup(nanmean, 100)([0.5]) == "N/A"  # one value: no spread to measure (never NaN in the JSON)
    assert lookup(mean, 100) is mean_stderr
    assert lookup(nanmean, 0) is None and lookup(mean, 0) is None
    assert ub_lmeval.results_json.install_stderr_hook() and evaluator_utils.stderr_for_metric is lookup  # idempotent
