"""Replicates (two seeds of one configuration) stand side by side, whatever the
files' modification times; ``inspect eval-set``'s own bookkeeping files are recognised, not skipped as logs."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("inspect_ai")

from ub_core.report.readers import load_inputs  # noqa: E402

IDS = ["te-normal-conc", "te-normal-spread"]


def _run(out, seed):
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401
    from ub_inspect.ksn import ksn

    log = inspect_eval(ksn(ids=IDS, seed=seed), model="ub/oracle", log_dir=str(out), display="none", seed=seed)[0]
    assert log.status == "success", log.error
    return log.location


@pytest.mark.slow
def test_two_seeds_are_replicates_side_by_side_and_touch_changes_nothing(tmp_path):
    a, b = _run(tmp_path / "s0", 0), _run(tmp_path / "s1", 1)
    rows = []
    for newer in (a, b):
        os.utime(newer, (2_000_000_000, 2_000_000_000))
        table = load_inputs([tmp_path])
        models = sorted({r.model for r in table.records})
        assert len(models) == 2 and all("seed" in m for m in models), models
        assert len(table.records) == 4 and table.skips == []
        assert any("replicates" in n for n in table.notes)
        rows.append(sorted((r.model, r.problem_id, r.metric("wdz")) for r in table.records))
    assert rows[0] == rows[1]


def test_eval_set_bookkeeping_files_are_not_skipped_as_logs(tmp_path):
    (tmp_path / "eval-set.json").write_text('{"eval_set_id": "x", "tasks": []}')
    (tmp_path / "logs.json").write_text('{"a.eval": {"version": 2, "eval": {}}}')
    table = load_inputs([tmp_path])
    assert table.skips == [] and table.records == []
    alone = load_inputs([tmp_path / "logs.json"])
    assert len(alone.skips) == 1 and "eval-set" in alone.skips[0].reason
