"""The KS@N metric spec drives the values, not only the metric lists: a metric added to the spec,
here a toy one registered by a fixture, reaches Inspect's ``Score.value``, lm-eval's results (template and group)
and ``ub score --json`` with no adapter edit; and every spec key reaches all three, so an adapter that drops one
fails here (deleting the ``wdz`` row from a YAML copy, or a key from the scorer, was seen to fail this test)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from scipy import stats

from ub_core import cli
from ub_core.ksn_scoring import DEFAULT_NS, score_values
from ub_core.metric_spec import MetricSpec, metric_specs, register_metric, run_specs, unregister_metric
from ub_core.oracle import oracle_replies, oracle_values
from ub_core.problems import get_problem

IDS = ("te-beta-conc", "sh-integer-01")
N = 20


def share_above_truth_median(values: np.ndarray, truth: np.ndarray) -> float:
    """Toy metric: the share of the values above the truth's median, ``mean(x_i > median(truth))``."""
    return float(np.mean(values > np.median(truth)))


def sign_test_passes(values: np.ndarray, truth: np.ndarray, *, n: int, threshold: float, method: str) -> float:
    """Toy per-N rate: 1.0 when the two-sided sign test of the first N values against the truth's median is not
    rejected at ``threshold`` (binomial p-value of the count above the median among the N, p = 1/2), else 0.0."""
    assert values.size == n  # a per-N compute gets exactly the first N valid values
    above = int(np.sum(values > np.median(truth)))
    return 1.0 if stats.binomtest(above, n, 0.5).pvalue >= threshold else 0.0


TOY = MetricSpec("toy_above_median", "share above the truth's median", True, bounds=(0.0, 1.0),
                 compute=share_above_truth_median)
TOY_PER_N = MetricSpec("toy_sign", "sign test@{n}", True, "rate", per_n=True, compute=sign_test_passes)


@pytest.fixture
def toy_metric():
    """The KS@N spec with :data:`TOY` and :data:`TOY_PER_N` registered through the public API, for this test only."""
    pytest.importorskip("inspect_ai")
    for spec in (TOY, TOY_PER_N):
        register_metric("ksn", spec)
    yield TOY
    for spec in (TOY, TOY_PER_N):
        unregister_metric("ksn", spec.key)


def test_lmeval_yaml_lists_are_generated_from_the_spec():
    from ub_lmeval import metric_lists, tasks_dir

    for rel, key, eval_family, filter_list in metric_lists.SPEC_YAMLS:
        assert metric_lists.sync(tasks_dir() / rel, key, eval_family, filter_list), rel
    assert metric_lists.main([]) == 0


def test_score_values_computes_every_spec_entry(toy_metric):
    p = get_problem(IDS[0])
    row = score_values(p, oracle_values(p, N, seed=1), ns=(1, N))
    assert set(row) >= {k for k, _ in run_specs("ksn", (1, N), source="score")}
    assert 0.0 <= row["toy_above_median"] <= 1.0
    assert row["toy_above_median"] == share_above_truth_median(np.asarray(oracle_values(p, N, seed=1), float),
                                                               p.truth())
    assert score_values(p, [], ns=(1,))["toy_above_median"] is None  # undefined without values: NaN downstream
    # the per-N entry: computed at each N on the first N values, with the run's threshold
    vals, truth = np.asarray(oracle_values(p, N, seed=1), float), p.truth()
    for threshold in (1e-4, 0.9):
        row = score_values(p, vals, ns=(1, 5, N), threshold=threshold)
        for n in (1, 5, N):
            assert row[f"toy_sign@{n}"] == sign_test_passes(vals[:n], truth, n=n, threshold=threshold, method="paper")
    assert score_values(p, vals, ns=(N,), threshold=0.9)["toy_sign@20"] == 0.0  # p-value < 0.9: the threshold is used
    assert score_values(p, vals, ns=(N,))["toy_sign@20"] == 1.0
    # a problem with no valid value, or fewer than N, is a fail of every per-N rate, as of ks@N
    assert score_values(p, [], ns=(1, N))["toy_sign@1"] == 0.0
    assert score_values(p, vals[:5], ns=(N,))["toy_sign@20"] == 0.0 == score_values(p, vals[:5], ns=(N,))["ks@20"]


def test_a_spec_that_cannot_be_honoured_is_an_error_when_it_is_written():
    """The silent trap: one entry per N with N bound in (``ad@1``) was copied to every N."""
    with pytest.raises(ValueError, match="declare it once as MetricSpec\\('ad', ..., per_n=True\\)"):
        MetricSpec("ad@1", "AD@1", True, "rate", compute=lambda values, truth: 1.0)
    with pytest.raises(ValueError, match="compute must take \\(values, truth, \\*, n, threshold, method\\)"):
        MetricSpec("ad", "AD@{n}", True, "rate", per_n=True, compute=lambda values, truth: 1.0)
    with pytest.raises(ValueError, match="display needs"):
        MetricSpec("ad", "AD", True, "rate", per_n=True, compute=sign_test_passes)
    with pytest.raises(ValueError, match="only the ksn scoring calls one"):
        register_metric("ksn_logprob", TOY)
    with pytest.raises(ValueError, match="declared twice"):
        register_metric("ksn", MetricSpec("wdz", "WDZ again", False))
    assert "wdz again" not in {m.display for m in metric_specs("ksn")}
    with pytest.raises(ValueError, match="built-in"):
        unregister_metric("ksn", "wdz")


def test_a_spec_entry_without_a_value_is_named():
    register_metric("ksn", MetricSpec("orphan", "o", True))
    try:
        p = get_problem(IDS[0])
        with pytest.raises(RuntimeError, match="'orphan' is in the spec but has no value"):
            score_values(p, oracle_values(p, 5, seed=1), ns=(1,))
    finally:
        unregister_metric("ksn", "orphan")


def _inspect_log(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn import ksn

    log = inspect_eval(ksn(ids=list(IDS), n_samples=N), model="ub/oracle", log_dir=str(tmp_path / "inspect"),
                       display="none")[0]
    assert log.status == "success", log.error
    assert log.results.scores[0].metrics and next(iter(log.results.scores[0].metrics)) == f"ks@{N}"  # headline
    return log


def _lmeval_results(tmp_path) -> dict:
    """lm-eval on a copy of the KS@N task folder whose lists were written from the (toy-extended) spec."""
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from ub_lmeval import metric_lists, tasks_dir

    folder = tmp_path / "tasks"
    shutil.copytree(tasks_dir() / "ksn", folder / "ksn")
    for rel, key, eval_family, filter_list in metric_lists.SPEC_YAMLS:
        if rel.startswith("ksn/"):
            metric_lists.sync(folder / rel, key, eval_family, filter_list, write=True)
    manager = TaskManager(include_path=str(folder), include_defaults=False, metadata={"ids": list(IDS)})
    return simple_evaluate(model="ub-oracle", tasks=["ub_ksn"], task_manager=manager)


def _ub_score(tmp_path, capsys) -> dict:
    lines = [json.dumps({"id": pid, "outputs": oracle_replies(get_problem(pid), N, seed=2)}) for pid in IDS]
    (tmp_path / "replies.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert cli.main(["score", "--samples", str(tmp_path / "replies.jsonl"), "--json", "--ns", f"1,{N}",
                     "--workers", "1"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_spec_key_reaches_inspect_lmeval_and_ub_score(toy_metric, tmp_path, capsys):
    """A toy per-N rate, defined through the public API only
    (:func:`ub_core.metric_spec.register_metric`), with its own use of N and the threshold, reaches Inspect's
    ``Score.value`` and metrics, lm-eval's task and group results with its direction, and ``ub score --json`` as a
    rate (Wilson interval; percent in the table)."""
    ns = (1, 2, 5, 10, N)  # the default Ns that n_samples=20 reaches
    # Inspect: every key of the spec in Score.value, in spec order; the toy's means among the run's metrics
    log = _inspect_log(tmp_path)
    for sample in log.samples:
        value = sample.scores["ksn_scorer"].value
        assert list(value) == [k for k, _ in run_specs("ksn", ns)]
        assert 0.0 <= value["toy_above_median"] <= 1.0 and value[f"toy_sign@{N}"] in (0.0, 1.0)
    metrics = log.results.scores[0].metrics
    assert {f"toy_sign@{n}" for n in ns} | {"toy_sign@20_stderr", "toy_above_median"} <= set(metrics)
    assert metrics["toy_sign@20"].value == np.mean([s.scores["ksn_scorer"].value["toy_sign@20"] for s in log.samples])

    # lm-eval: every lm-eval metric of the spec in each task's results, the rates (the toy's too) in the group's,
    # each with its direction
    out = _lmeval_results(tmp_path)
    results = out["results"]
    for task in ("ub_ksn_text_explicit", "ub_ksn_shuffling"):
        assert {f"{k},take_100" for k, _ in run_specs("ksn", DEFAULT_NS, adapter="lmeval")} <= set(results[task])
        assert results[task]["toy_sign@100,take_100"] in (0.0, 1.0)
        assert out["higher_is_better"][task]["toy_sign@100"] is True
    rates = [k for k, m in run_specs("ksn", DEFAULT_NS, adapter="lmeval") if m.kind == "rate"]
    assert "toy_sign@100" in rates and {f"{k},take_100" for k in rates} <= set(results["ub_ksn"])
    assert out["higher_is_better"]["ub_ksn"]["toy_sign@100"] is True

    # ub score --json: each problem's row, the aggregate (overall and per category) and the metric descriptions
    report = _ub_score(tmp_path, capsys)
    ub_keys = [k for k, _ in run_specs("ksn", (1, N), adapter="ub", source="score")]
    for row in report["problems"]:
        assert set(row) >= {k for k, _ in run_specs("ksn", (1, N), source="score")}
    for group in (report["aggregate"]["overall"], *report["aggregate"]["by_category"].values()):
        assert {"n_constant" if k == "constant" else k for k in ub_keys} <= set(group)
    assert report["metrics"]["toy_above_median"] == {"display": TOY.display, "kind": "score",
                                                     "aggregation": "nanmean", "higher_is_better": True}
    assert report["metrics"][f"toy_sign@{N}"] == {"display": f"sign test@{N}", "kind": "rate",
                                                  "aggregation": "mean", "higher_is_better": True}
    # the report ranks it at any N (a new per-N rate had no direction at other N)
    from ub_core.report.summary import column_direction

    assert column_direction("ksn", "toy_sign@37") is True and column_direction("ksn", "ks@37") is True
    toy = report["aggregate"]["overall"][f"toy_sign@{N}"]  # a rate: Wilson interval over the problems' 0/1 verdicts
    from ub_core.metrics import wilson_interval

    k = round(toy["mean"] * toy["n"])
    assert toy["n"] == len(IDS) and (toy["low"], toy["high"]) == pytest.approx(wilson_interval(k, toy["n"]))


def test_ub_score_table_has_one_column_per_spec_metric(toy_metric, tmp_path, capsys):
    lines = [json.dumps({"id": pid, "values": oracle_values(get_problem(pid), N, seed=3)}) for pid in IDS]
    (tmp_path / "values.jsonl").write_text("\n".join(lines) + "\n")
    assert cli.main(["score", "--samples", str(tmp_path / "values.jsonl"), "--ns", f"1,{N}", "--workers", "1"]) == 0
    table = capsys.readouterr().out.splitlines()
    head = [h.strip() for h in table[0].split("  ") if h.strip()]
    specs = run_specs("ksn", (1, N), adapter="ub", source="score")
    assert head == ["category", "n", *(spec.heading for _, spec in specs)]
    assert head[2:4] == ["KS@1", f"KS@{N}"] and head[-3:] == [TOY.display, "sign test@1", f"sign test@{N}"]
    assert not set(head) & {key for key, _ in specs}  # display names, not keys
    (all_row,) = [line for line in table if line.startswith("ALL ")]
    last = [c for c in all_row.split("  ") if c.strip()]  # the toy rate in percent, like KS@N
    assert last[-1].strip() in ("0.0", "50.0", "100.0")
