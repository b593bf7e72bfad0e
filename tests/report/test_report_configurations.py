"""A report row is one evaluation configuration.

Before: two runs of ``ub/oracle`` on overlapping problems, one with 100 answers per problem and one with 50, went into
one leaderboard row (the first run's other problems plus the second's), marked complete, with both runs among its
sources, while ``ub report`` said it had skipped the first run. Now runs whose settings change a number are separate
rows, named by the settings that differ; same-settings runs (a split or resumed run) share a row that says so; every
message tells what was used."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("jinja2")

from ub_core.report import build_report  # noqa: E402
from ub_core.report.records import RunInfo, configuration_settings  # noqa: E402

IDS = ("sh-integer-01", "sh-integer-02", "sh-integer-03")


def _run(log_dir: Path, ids, **task_args) -> Path:
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401  (registers ub/oracle)
    from ub_inspect.ksn import ksn

    log = inspect_eval(ksn(ids=list(ids), **task_args), model="ub/oracle", log_dir=str(log_dir), display="none")[0]
    assert log.status == "success", log.error
    return Path(log.location)


def _age(path: Path, seconds: float) -> None:
    """Make ``path`` look ``seconds`` older (the newer run wins among runs of one configuration)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("configs")
    a = _run(root / "a", IDS[:2])  # 100 answers per problem
    b = _run(root / "b", IDS[1:], n_samples=50)  # overlaps a on one problem, 50 answers
    c = _run(root / "c", IDS[1:])  # a's settings: a split run of the same configuration
    _age(a, 60)
    return {"a": a, "b": b, "c": c, "root": root}


def _leaderboard(res):
    lead = next(t for t in res.tables["ksn"] if t.name == "ksn_leaderboard")
    return {r["model"]: r for r in lead.rows}


@pytest.mark.slow
def test_runs_with_other_settings_are_separate_rows(logs, tmp_path, capsys):
    res = build_report([logs["a"], logs["b"]], tmp_path / "r")
    rows = _leaderboard(res)
    assert set(rows) == {"ub-oracle (n_samples=100)", "ub-oracle (n_samples=50)"}
    full, half = rows["ub-oracle (n_samples=100)"], rows["ub-oracle (n_samples=50)"]
    # each row is exactly its own run: a's two problems, b's two problems; no source shared
    assert full["problems"] == 2 and half["problems"] == 2
    assert full["provenance"]["source"] == str(logs["a"]) and half["provenance"]["source"] == str(logs["b"])
    assert full["provenance"]["settings"]["n_samples"] == 100 and half["provenance"]["settings"]["n_samples"] == 50
    # the headline is fixed by the family (KS@100); the 50-answer run has its own KS@50 columns, and each
    # derived column belongs to the metric beside it (the mde of KS@100, the ks@50_mde of KS@50)
    assert full["ks@100"] == 1.0 and full.get("ks@50") is None and full["mde"] is not None
    assert half["ks@100"] is None and half["ks@50"] == 1.0 and half.get("mde") is None and half["ks@50_mde"] > 0
    assert half["ks@50_ci_low"] < half["ks@50_ci_high"] == 1.0 and half["ci_low"] is None
    # nothing was skipped, and the messages say so
    assert res.table.skips == []
    assert res.table.notes == ["ub-oracle [inspect] ksn: 2 configurations, shown as separate rows (they differ in "
                               "n_samples)"]
    doc = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert doc["inputs"]["notes"] == res.table.notes and doc["inputs"]["skipped"] == []
    assert "How the runs were combined" in (tmp_path / "r" / "index.html").read_text()
    curve = {r["model"]: r for r in doc["tables"]["ksn_curve"]["rows"]}
    assert curve["ub-oracle (n_samples=100)"]["ks@100"] == 1.0 and curve["ub-oracle (n_samples=50)"]["ks@100"] is None


@pytest.mark.slow
def test_same_settings_runs_share_a_row_that_says_so(logs, tmp_path):
    res = build_report([logs["a"], logs["c"]], tmp_path / "r")
    rows = _leaderboard(res)
    assert list(rows) == ["ub-oracle"]
    row = rows["ub-oracle"]
    assert row["problems"] == 3  # a's first problem, and c's two (c is newer on the shared one)
    prov = row["provenance"]
    assert prov["runs"] == 2 and sorted(prov["source"]) == sorted([str(logs["a"]), str(logs["c"])])
    assert prov["complete"] is False  # each run is a selection of ids
    assert res.table.skips == []
    assert res.table.notes == [f"{logs['a']}: 1 of its 2 samples are also in a newer run of the same model and "
                               f"settings (1 in {logs['c']}) and are taken from there; its other 1 samples are used, "
                               "in the same row"]


@pytest.mark.slow
def test_a_run_wholly_replaced_is_one_truthful_skip(logs, tmp_path):
    res = build_report([logs["c"], logs["c"].parent], tmp_path / "r")  # one run given under two names is read once
    assert [r["problems"] for r in _leaderboard(res).values()] == [2] and res.table.skips == []
    copy = logs["root"] / "copy" / logs["c"].name
    copy.parent.mkdir(exist_ok=True)
    copy.write_bytes(logs["c"].read_bytes())
    _age(logs["c"], 30)
    res = build_report([logs["c"], copy], tmp_path / "r2")
    assert [str(s) for s in res.table.skips] == [
        f"{logs['c']}: every sample of this run is also in a newer run of the same model and settings (2 in {copy}); "
        "the newer one is used"]
    assert _leaderboard(res)["ub-oracle"]["provenance"]["source"] == str(copy)


def test_configuration_keeps_what_changes_a_number():
    """Selection, seed, bookkeeping and connection settings do not split a row; everything else does, unknown keys
    included."""
    args = {"categories": "shuffling", "ids": None, "seed": 3, "n_samples": 100, "threshold": 1e-4,
            "config_source": "/x.yaml", "model": "m", "version": 2.0}
    gen = {"temperature": 1.0, "max_connections": 32, "timeout": 9}
    assert configuration_settings(args, gen, {"base_url": "http://h", "digits": 3}) == \
        {"digits": 3, "n_samples": 100, "temperature": 1.0, "threshold": 1e-4}
    one = RunInfo("a", bank_version="2", settings={"n_samples": 100})
    assert one.configuration() == RunInfo("b", bank_version="2", settings={"n_samples": 100}).configuration()
    assert one.configuration() != RunInfo("b", bank_version="3", settings={"n_samples": 100}).configuration()
    assert RunInfo("c").configuration() is None


def test_a_category_selection_is_partial(logs):
    from inspect_ai.log import read_eval_log

    from ub_core.report.readers import _inspect_run

    ok = _inspect_run(read_eval_log(str(logs["a"]), header_only=True), logs["a"])
    assert ok.complete is False  # ids
    log = read_eval_log(str(logs["a"]), header_only=True)
    log.eval.task_args = {**log.eval.task_args, "ids": None, "categories": "shuffling"}
    assert _inspect_run(log, logs["a"]).complete is False  # before: complete, though 428 problems were not run


@pytest.mark.slow
def test_a_limited_odds_run_is_partial_in_every_odds_table(tmp_path):
    """Before: the odds tables' rows are keyed by the odds task (percentile), not the Inspect task, so they found no
    run: provenance empty and complete unknown, while every other family's limited run is PARTIAL."""
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401
    from ub_inspect.odds import odds

    log = inspect_eval(odds(limit=2), model="ub/oracle", log_dir=str(tmp_path / "logs"), display="none")[0]
    res = build_report([log.location], tmp_path / "r")
    rows = [r for t in res.tables["odds"] for r in t.rows]
    assert rows and all(r["complete"] is False for r in rows)
    assert all(r["provenance"]["source"] == log.location and r["provenance"]["limit"] is None for r in rows)
    assert all(r["provenance"]["task_args"]["limit"] == 2 for r in rows)
