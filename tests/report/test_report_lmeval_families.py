"""``ub report`` on ONE real lm-eval run of several families (``ub_ksn_shuffling``, two ``ub_tar_*`` subtasks and
``ub_dice_batch``, on the offline oracle): each task's row carries its own configuration, read from the results
file's ``configs.<task>``; and the page opens with what a lab's dashboard shows.

A results file holds every task's own ``configs.<task>``: its stability values labelled with another task's
settings (``ub_ksn``'s temperature 1.0, sampling, 64 tokens) would show each ``ub_tar_*`` subtask twice, once with
its own settings (temperature 0, no sampling, 256 tokens) and once with the other's. The first screen is one compact
leaderboard per family, the notes on how the runs were combined folded below it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")
pytest.importorskip("jinja2")

from ub_core.report import build_report  # noqa: E402
from ub_core.report.html import OVERVIEW_MAX_COLUMNS, overview  # noqa: E402
from ub_core.report.readers import _lm_run, _small_dict, _version  # noqa: E402
from ub_core.report.records import configuration_settings  # noqa: E402

TASKS = ("ub_ksn_shuffling", "ub_tar_navigate", "ub_tar_ruin_names", "ub_dice_batch")


@pytest.fixture(scope="module")
def lm_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm_families")
    lm = shutil.which("ub-lm-eval")
    cmd = ([lm] if lm else [sys.executable, "-m", "ub_lmeval.cli"]) + [
        "--model", "ub-oracle", "--tasks", ",".join(TASKS), "--limit", "2", "--output_path", str(root / "lm"),
        "--log_samples"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=root, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (results_file,) = (root / "lm").rglob("results_*.json")
    res = build_report([root / "lm"], root / "out")
    return json.loads(results_file.read_text()), res


def _own_settings(results: dict, task: str) -> dict:
    cfg = results["configs"][task]
    meta = {k: v for k, v in cfg["metadata"].items() if k != "config_source"}
    return configuration_settings(_small_dict(meta), _small_dict(cfg["generation_kwargs"]))


@pytest.mark.slow  # one real lm-eval run (module fixture), shared by the three
def test_each_task_of_the_file_is_labelled_with_its_own_configuration(lm_run):
    results, _ = lm_run
    assert set(TASKS) <= set(results["configs"])
    for task in results["configs"]:
        run = _lm_run(results, task, "x")
        assert run.settings == _own_settings(results, task), task
        assert run.task == task and run.samples == results["n-samples"][task]["effective"]


@pytest.mark.slow  # one real lm-eval run (module fixture), shared by the three
def test_each_stability_subtask_is_one_row_with_its_own_settings(lm_run):
    results, res = lm_run
    (stab,) = [t for t in res.tables["stability"] if t.name == "stability"]
    rows = {(r["model"], r["task"]): r for r in stab.rows}
    assert sorted(rows) == [("ub-oracle", "ub_tar_navigate"), ("ub-oracle", "ub_tar_ruin_names")], sorted(rows)
    for row in rows.values():
        settings = row["provenance"]["settings"]
        assert settings["temperature"] == 0.0 and settings["do_sample"] is False and settings["max_gen_toks"] == 256
        assert row["provenance"]["runs"] == 1  # the results file's values and the samples file: one run
    assert not [n for n in res.table.notes if "configurations" in n], res.table.notes


def test_a_groups_row_stands_for_its_subtasks_configuration():
    """A group's values (``ub_tar`` in a results file) carry its subtasks' settings, never the file's first task's."""
    gen_tar = {"temperature": 0.0, "do_sample": False, "max_gen_toks": 256}
    results = {"configs": {"ub_ksn_shuffling": {"metadata": {"version": 2.0},
                                                "generation_kwargs": {"temperature": 1.0}},
                           "ub_tar_navigate": {"metadata": {"version": 1.0, "subtask": "navigate"},
                                               "generation_kwargs": gen_tar}},
               "group_subtasks": {"ub_tar": ["ub_tar_navigate"], "ub_ksn_shuffling": []},
               "n-samples": {"ub_ksn_shuffling": {"original": 20, "effective": 20},
                             "ub_tar_navigate": {"original": 50, "effective": 50}},
               "config": {"model": "ub-oracle", "limit": None}}
    run = _lm_run(results, "ub_tar", "x")
    assert run.settings == configuration_settings(gen_tar) and run.bank_version == _version(1.0)
    assert run.complete is True and run.samples == 50


class _Page(HTMLParser):
    """The page's elements in document order: (tag, attributes), and the columns of every table."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[tuple[str, dict]] = []
        self.tables: list[tuple[dict, int]] = []
        self._th = 0
        self._table: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.order.append((tag, a))
        if tag == "table":
            self._table, self._th = a, 0
        elif tag == "th" and self._table is not None:
            self._th += 1
        elif tag == "tbody" and self._table is not None:
            self.tables.append((self._table, self._th))
            self._table = None


def _index_of(page: _Page, pred) -> int:
    return next(i for i, (tag, a) in enumerate(page.order) if pred(tag, a))


def _check_first_screen(res) -> _Page:
    page = _Page()
    page.feed(res.index.read_text())
    first_section = _index_of(page, lambda t, a: t == "section")
    assert page.order[first_section][1].get("id") == "overview", page.order[first_section]
    shown = [a["data-overview"] for a, _ in page.tables if "data-overview" in a]
    assert shown == list(res.tables), (shown, list(res.tables))  # one leaderboard per family, in section order
    for a, columns in page.tables:
        if "data-overview" in a:
            assert 3 <= columns <= OVERVIEW_MAX_COLUMNS, (a, columns)
    # the notes, skips and runs are folded below the leaderboards, before the families' full tables
    for ident in ("notes", "skipped", "runs"):
        found = [i for i, (t, a) in enumerate(page.order) if t == "details" and a.get("id") == ident]
        for i in found:
            assert "open" not in page.order[i][1], ident
            assert first_section < i < _index_of(page, lambda t, a: t == "section" and a.get("class") == "family")
    return page


@pytest.mark.slow  # one real lm-eval run (module fixture), shared by the three
def test_the_first_screen_is_one_compact_leaderboard_per_family(lm_run):
    _, res = lm_run
    page = _check_first_screen(res)
    assert any(a.get("id") == "runs" for t, a in page.order if t == "details")
    lead = {o["family"]: o for o in overview(res.tables)}
    assert set(lead) == {"ksn", "stability", "dice"}, set(lead)
    (ksn,) = lead["ksn"]["rows"]
    assert ksn["cells"] == ["ub-oracle", "lm-eval"] and ksn["headline"] == 1.0 and ksn["complete"] is False
    assert ksn["interval"].startswith("[") and ksn["interval"].endswith("1.000]")  # Wilson, 2 problems


def test_every_familys_overview_is_compact(tmp_path):
    """The synthetic inputs of every other family (test_report.py's), one page: the same bounds."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import support.report_synthetic as rs

    rs.write_lmeval_families(tmp_path / "lm")
    rs.write_stability_results_only(tmp_path / "stab")
    res = build_report([tmp_path / "lm", tmp_path / "stab"], tmp_path / "out")
    assert len(res.tables) >= 5
    _check_first_screen(res)
    for o in overview(res.tables):
        assert len(o["columns"]) <= OVERVIEW_MAX_COLUMNS and all(
            len(r["cells"]) + 3 == len(o["columns"]) for r in o["rows"]), o
