"""``ub compare A B`` on real runs of both frameworks.

``ub/oracle`` against ``ub/collapse`` on KS@N: a large, significant difference; ``ub/oracle`` with seed 0 against
seed 1: nothing significant; runs whose settings change what is measured: refused with one line; an lm-eval run
against an Inspect run: matched problem by problem."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from ub_core import cli  # noqa: E402
from ub_core.compare import JSON_KEYS, CompareError  # noqa: E402
from ub_core.report.compare_runs import compare_runs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = ["shuffling"]  # 20 problems


def _inspect(out: Path, model: str, **task_args) -> Path:
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401
    from ub_inspect.ksn import ksn

    seed = task_args.pop("run_seed", 0)
    log = inspect_eval(ksn(categories=CATEGORIES, **task_args), model=model, log_dir=str(out), display="none",
                       seed=seed)[0]
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    out = {"oracle": _inspect(root / "oracle", "ub/oracle"),
           "oracle_seed1": _inspect(root / "oracle1", "ub/oracle", seed=1, run_seed=1),
           "collapse": _inspect(root / "collapse", "ub/collapse"),
           "oracle_50": _inspect(root / "oracle50", "ub/oracle", n_samples=50)}
    # complete lm-eval runs (ub_ksn_shuffling is a whole task) of ub-oracle and ub-collapse, as the example makes them
    spec = importlib.util.spec_from_file_location("run_ksn", ROOT / "examples/ksn_offline/run_ksn.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.run_lmeval(CATEGORIES, None, root / "lm")
    out["lm_oracle"], out["lm"] = root / "lm" / "ub-oracle", root / "lm"
    return out


@pytest.mark.slow
def test_oracle_against_collapse_is_a_large_significant_difference(runs, capsys):
    (row,), skipped = compare_runs(runs["oracle"], runs["collapse"])
    assert skipped == []
    assert row.metric == "ks@100" and row.family == "ksn" and row.n_pairs == 20 and row.n_unmatched == 0
    # 20 problems cannot give [+1, +1]; Tango's interval for 20 of 20 discordant pairs is [0.678, 1]
    assert row.mean_a == 1.0 and row.mean_b < 0.2 and row.diff > 0.8 and 0.6 < row.ci_low < row.diff
    assert row.ci_high <= 1.0 and row.mde > 0
    assert row.test == "McNemar score (Tango interval)" and row.p_value < 1e-5 and row.higher_is_better is True
    assert cli.main(["compare", str(runs["oracle"]), str(runs["collapse"]), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert isinstance(doc, list) and list(doc[0])[:len(JSON_KEYS)] == list(JSON_KEYS)
    assert doc[0]["diff"] == pytest.approx(row.diff) and doc[0]["n_pairs"] == 20


@pytest.mark.slow
def test_two_seeds_of_the_oracle_do_not_differ(runs):
    (row,), _ = compare_runs(runs["oracle"], runs["oracle_seed1"])
    assert row.n_pairs == 20 and row.p_value > 0.05 and row.ci_low <= 0 <= row.ci_high


@pytest.mark.slow
def test_runs_that_measure_different_things_are_refused(runs, capsys):
    with pytest.raises(CompareError, match=r"ksn: the runs differ in n_samples \(100 vs 50\)"):
        compare_runs(runs["oracle"], runs["oracle_50"])
    import logging

    level = logging.getLogger("ub_core.report").level
    assert cli.main(["compare", str(runs["oracle"]), str(runs["oracle_50"])]) == 2
    # the report's logger is as it was: a report built later in this process still prints its skips
    assert logging.getLogger("ub_core.report").level == level
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ub: error: ksn: the runs differ in n_samples")
    # a side holding two configurations of one model is refused too
    with pytest.raises(CompareError, match="holds 2 models or configurations"):
        compare_runs([runs["oracle"], runs["oracle_50"]], runs["collapse"])


@pytest.mark.slow
def test_an_lm_eval_run_against_an_inspect_run(runs):
    (row,), _ = compare_runs(runs["lm_oracle"], runs["collapse"])
    assert row.model_a == "ub-oracle" and row.model_b == "ub-collapse"
    assert row.n_pairs == 20 and row.n_unmatched == 0 and row.diff > 0.8 and row.p_value < 1e-5


@pytest.mark.slow
def test_unmatched_problems_are_counted_with_their_reason(runs, tmp_path):
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401
    from ub_inspect.ksn import ksn

    log = inspect_eval(ksn(ids=["sh-integer-01", "sh-integer-02"]), model="ub/collapse", log_dir=str(tmp_path),
                       display="none")[0]
    (row,), _ = compare_runs(runs["oracle"], log.location)
    assert row.n_pairs == 2 and row.n_unmatched == 18 and row.unmatched == {"only in A": 18}


@pytest.mark.slow
def test_report_pairs_complete_runs_of_one_configuration_only(runs, tmp_path):
    """The report's pairwise table: the complete lm-eval runs of ub-oracle and ub-collapse on ub_ksn_shuffling are
    paired (a large, significant difference after Holm's correction); the Inspect runs (a category selection, so
    PARTIAL) are not paired with anything."""
    from ub_core.report import build_report

    res = build_report([runs["lm"], runs["oracle"], runs["collapse"]], tmp_path / "report")
    pairs = next(t for t in res.tables["ksn"] if t.name == "ksn_pairwise")
    assert len(pairs.rows) == 1
    row = pairs.rows[0]
    assert {row["model_a"], row["model_b"]} == {"ub-oracle", "ub-collapse"}
    assert row["framework_a"] == row["framework_b"] == "lm-eval" and row["metric"] == "ks@100"
    assert row["n_pairs"] == 20 and abs(row["diff"]) > 0.8 and row["significant"] is True
    assert row["p_holm"] == row["p_value"] < 1e-5
    assert row["mde"] > 0.1  # every difference is 1: no spread, yet 20 problems cannot detect any difference (#44)
    doc = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert doc["tables"]["ksn_pairwise"]["higher_is_better"]["diff"] is None
    assert 'data-table="ksn_pairwise"' in (tmp_path / "report" / "index.html").read_text()


@pytest.mark.slow
def test_calibration_is_compared_with_errors_clustered_by_option_pair(tmp_path):
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401
    from ub_inspect.calibration import calibration

    logs = [inspect_eval(calibration(), model=m, log_dir=str(tmp_path / m.replace("/", "_")), display="none",
                         limit=40)[0] for m in ("ub/oracle", "ub/collapse")]
    assert all(log.status == "success" for log in logs)
    # the headline is WD (0 for the oracle, 0.71 for collapse), which tells them apart
    (head,), _ = compare_runs(logs[0].location, logs[1].location)
    assert head.family == "calibration" and head.metric == "wd" and head.n_pairs == 40
    assert head.higher_is_better is False and head.ci_high < 0 and head.p_value < 0.05
    (row,), _ = compare_runs(logs[0].location, logs[1].location, metrics=["pm"])
    assert row.family == "calibration" and row.metric == "pm" and row.n_pairs == 40
    assert row.clusters is not None and row.clusters >= 10 and row.clustered and row.test.startswith("paired t")
    # both runs put all mass on the options (PM 1 everywhere): no spread, so the floored SE
    assert -1.0 <= row.ci_low < 0 < row.ci_high <= 1.0 and row.mde > 0 and row.se_basis == "floor"
    assert row.higher_is_better is True
