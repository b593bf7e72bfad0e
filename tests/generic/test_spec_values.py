"""The KS@N metric spec drives the values, not only the metric lists (issue 29, item 1): a metric added to the spec,
here a toy one registered by a fixture, reaches Inspect's ``Score.value``, lm-eval's results (template and group)
and ``ub score --json`` with no adapter edit; and every spec key reaches all three, so an adapter that drops one
fails here (deleting the ``wdz`` row from a YAML copy, or a key from the scorer, was seen to fail this test)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from ub_core import cli, metric_spec
from ub_core.ksn_scoring import DEFAULT_NS, score_values
from ub_core.metric_spec import UNIT, MetricSpec, is_ks_key, run_specs
from ub_core.oracle import oracle_replies, oracle_values
from ub_core.problems import get_problem

IDS = ("te-beta-conc", "sh-integer-01")
N = 20


def share_above_truth_median(values: np.ndarray, truth: np.ndarray) -> float:
    """Toy metric: the share of the values above the truth's median, ``mean(x_i > median(truth))``."""
    return float(np.mean(values > np.median(truth)))


TOY = MetricSpec("toy_above_median", "share above the truth's median", True, bounds=UNIT,
                 compute=share_above_truth_median)


@pytest.fixture
def toy_metric(monkeypatch):
    """The KS@N spec with :data:`TOY` appended, for this test only. The Inspect scorer's metric list is built when
    its module is imported (Inspect's decorator): import it first, so that it never holds the toy."""
    pytest.importorskip("inspect_ai")
    import ub_inspect.ksn.scorer  # noqa: F401

    monkeypatch.setitem(metric_spec._SPECS_BY_EVAL_FAMILY, "ksn", (*metric_spec.KSN_METRICS, TOY))
    return TOY


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


def test_a_spec_entry_without_a_value_is_named(monkeypatch):
    monkeypatch.setitem(metric_spec._SPECS_BY_EVAL_FAMILY, "ksn",
                        (*metric_spec.KSN_METRICS, MetricSpec("orphan", "o", True)))
    p = get_problem(IDS[0])
    with pytest.raises(RuntimeError, match="'orphan' is in the spec but has no value"):
        score_values(p, oracle_values(p, 5, seed=1), ns=(1,))


def _inspect_values(tmp_path) -> list[dict]:
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn import ksn

    log = inspect_eval(ksn(ids=list(IDS), n_samples=N), model="ub/oracle", log_dir=str(tmp_path / "inspect"),
                       display="none")[0]
    assert log.status == "success", log.error
    assert log.results.scores[0].metrics and next(iter(log.results.scores[0].metrics)) == f"ks@{N}"  # headline
    return [s.scores["ksn_scorer"].value for s in log.samples]


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
    return simple_evaluate(model="ub-oracle", tasks=["ub_ksn"], task_manager=manager)["results"]


def _ub_score(tmp_path, capsys) -> dict:
    lines = [json.dumps({"id": pid, "outputs": oracle_replies(get_problem(pid), N, seed=2)}) for pid in IDS]
    (tmp_path / "replies.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert cli.main(["score", "--samples", str(tmp_path / "replies.jsonl"), "--json", "--ns", f"1,{N}",
                     "--workers", "1"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_spec_key_reaches_inspect_lmeval_and_ub_score(toy_metric, tmp_path, capsys):
    ns = (1, 2, 5, 10, N)  # the default Ns that n_samples=20 reaches
    # Inspect: every key of the spec in Score.value, in spec order (each ks@N followed by its p-value)
    for value in _inspect_values(tmp_path):
        assert [k for k in value if not k.startswith("p@")] == [k for k, _ in run_specs("ksn", ns)]
        assert 0.0 <= value["toy_above_median"] <= 1.0

    # lm-eval: every lm-eval metric of the spec in each task's results, the rates in the group's
    results = _lmeval_results(tmp_path)
    for task in ("ub_ksn_text_explicit", "ub_ksn_shuffling"):
        assert {f"{k},take_100" for k, _ in run_specs("ksn", DEFAULT_NS, adapter="lmeval")} <= set(results[task])
        assert 0.0 <= results[task]["toy_above_median,take_100"] <= 1.0
    rates = [m.key for m in metric_spec.metric_specs("ksn") if m.aggregation == "mean" and m.bounds == UNIT]
    assert "toy_above_median" in rates and {f"{k},take_100" for k in rates} <= set(results["ub_ksn"])

    # ub score --json: each problem's row, the aggregate (overall and per category) and the metric descriptions
    report = _ub_score(tmp_path, capsys)
    ub_keys = [k for k, _ in run_specs("ksn", (1, N), adapter="ub", source="score")]
    for row in report["problems"]:
        assert set(row) >= {k for k, _ in run_specs("ksn", (1, N), source="score")}
    for group in (report["aggregate"]["overall"], *report["aggregate"]["by_category"].values()):
        assert {"n_constant" if k == "constant" else k for k in ub_keys} <= set(group)
    assert report["metrics"]["toy_above_median"] == {"display": TOY.display, "aggregation": "mean",
                                                     "higher_is_better": True}
    assert 0.0 <= report["aggregate"]["overall"]["toy_above_median"]["mean"] <= 1.0


def test_ub_score_table_has_one_column_per_spec_metric(toy_metric, tmp_path, capsys):
    lines = [json.dumps({"id": pid, "values": oracle_values(get_problem(pid), N, seed=3)}) for pid in IDS]
    (tmp_path / "values.jsonl").write_text("\n".join(lines) + "\n")
    assert cli.main(["score", "--samples", str(tmp_path / "values.jsonl"), "--ns", f"1,{N}", "--workers", "1"]) == 0
    head = capsys.readouterr().out.splitlines()[0].split("  ")
    head = [h.strip() for h in head if h.strip()]
    specs = run_specs("ksn", (1, N), adapter="ub", source="score")
    assert head == ["category", "n", *(spec.heading for _, spec in specs)]
    assert head[2:4] == ["KS@1", f"KS@{N}"] and head[-1] == TOY.display and not any(is_ks_key(h) for h in head)
