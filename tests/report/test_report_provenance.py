"""``ub report`` for dashboards. Every row carries its runs' provenance (source, date, bank and task
version, task arguments, limit, dataset, generation settings, ``complete``); a partial run (``--limit``) is listed after
the complete ones and marked on the page; ``summary.json`` says per column whether higher is better; one model under
the offline models' several names is one name, and ``--model-alias`` folds others; the leaderboard fits a 1280-px
page in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("lm_eval")

from ub_core import cli  # noqa: E402
from ub_core.report import build_report  # noqa: E402
from ub_core.report.records import model_alias  # noqa: E402
from ub_core.report.summary import column_direction  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal", "real_world",
              "shuffling")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A partial run of both frameworks (the ksn example: 2 shuffling problems, ``--limit 2`` / ``limit_per_category``)
    and, through ``ub-lm-eval``, a complete lm-eval run of ub-collapse on all 20 shuffling problems."""
    import importlib.util

    out = tmp_path_factory.mktemp("prov")
    spec = importlib.util.spec_from_file_location("run_ksn", ROOT / "examples/ksn_offline/run_ksn.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.run_inspect(["shuffling"], 2, out / "inspect_logs")
    example.run_lmeval(["shuffling"], 2, out / "lm_eval")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    full = subprocess.run([sys.executable, "-m", "ub_lmeval.cli", "--model", "ub-collapse", "--tasks",
                           "ub_ksn_shuffling", "--output_path", str(out / "full"), "--log_samples"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert full.returncode == 0, full.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def report(runs):
    return build_report([runs / "inspect_logs", runs / "lm_eval", runs / "full"], runs / "report")


@pytest.mark.slow
def test_partial_runs_are_listed_after_complete_ones_and_marked(report, runs):
    """Before: the leaderboard sorted by KS@100 alone, so the 2-problem oracle runs ranked above a complete run
    with no flag. Now the complete ub-collapse run (KS@100 = 0) comes first, then the partial runs, each marked."""
    lead = next(t for t in report.tables["ksn"] if t.name == "ksn_leaderboard")
    order = [(r["model"], r["framework"], r["complete"], r["problems"]) for r in lead.rows]
    assert order[0] == ("ub-collapse", "lm-eval", True, 20)
    assert {o[:3] for o in order[1:]} == {("ub-oracle", "inspect", False), ("ub-oracle", "lm-eval", False),
                                          ("ub-collapse", "inspect", False)}
    assert [r["ks@100"] for r in lead.rows[1:3]] == [1.0, 1.0]  # ranked by score within the partial runs
    assert lead.columns[:3] == ["model", "framework", "complete"]
    page = (runs / "report" / "index.html").read_text()
    board = page.split('data-table="ksn_leaderboard"')[1].split("</table>")[0]
    assert board.count('<tr class="partial"') == 3 and board.count("PARTIAL") == 3
    assert 'id="complete-legend"' in page and 'id="table-runs"' in page
    import csv

    with (runs / "report" / "summary.csv").open(newline="") as fh:
        flags = {(r["model"], r["framework"]): r["value"] for r in csv.DictReader(fh)
                 if r["table"] == "ksn_leaderboard" and r["metric"] == "complete"}
    assert flags == {("ub-collapse", "lm-eval"): "1", ("ub-oracle", "lm-eval"): "0", ("ub-oracle", "inspect"): "0",
                     ("ub-collapse", "inspect"): "0"}
    md = (runs / "report" / "summary.md").read_text()
    assert "| ub-collapse | lm-eval | yes | 20 |" in md and "| ub-oracle | inspect | PARTIAL | 2 |" in md


def test_every_row_carries_its_runs_provenance(report, runs):
    doc = json.loads((runs / "report" / "summary.json").read_text())
    rows = {(r["model"], r["framework"]): r for r in doc["tables"]["ksn_leaderboard"]["rows"]}
    full = rows[("ub-collapse", "lm-eval")]["provenance"]
    assert full["complete"] is True and full["limit"] is None and full["samples"] == full["samples_total"] == 20
    assert Path(full["source"]).parent.name == "ub-collapse" and Path(full["source"]).name.startswith("samples_")
    assert full["task"] == "ub_ksn_shuffling" and full["task_version"] == full["bank_version"] == "2"
    assert full["dataset"] == "builtin" and full["date"].endswith("+00:00")
    assert full["generation"]["temperature"] == 1.0 and full["generation"]["max_gen_toks"] == 64
    assert full["task_args"]["category"] == "shuffling" and "config_source" not in full["task_args"]
    lm = rows[("ub-oracle", "lm-eval")]["provenance"]
    assert lm["complete"] is False and lm["limit"] == 2 and (lm["samples"], lm["samples_total"]) == (2, 20)
    ins = rows[("ub-oracle", "inspect")]["provenance"]
    assert ins["complete"] is False and ins["run_id"] and ins["source"].endswith(".eval")
    assert ins["task_args"]["limit_per_category"] == 2 and ins["bank_version"] == "2"
    assert ins["dataset"] == "builtin" and isinstance(ins["generation"], dict)
    # the by-category table narrows to the runs of that category
    cat = {(r["model"], r["framework"]): r for r in doc["tables"]["ksn_by_category"]["rows"]}
    assert cat[("ub-collapse", "lm-eval")]["provenance"]["source"] == full["source"]
    assert len(doc["inputs"]["runs"]) == 4  # 2 Inspect logs, 2 lm-eval samples files (the superseded one left)


def test_summary_json_says_which_direction_is_better(report, runs):
    doc = json.loads((runs / "report" / "summary.json").read_text())
    hib = doc["tables"]["ksn_leaderboard"]["higher_is_better"]
    assert hib["ks@100"] is True and hib["ks@100 shuffling"] is True
    assert hib["wdz"] is False and hib["jsd"] is False and hib["invalid_rate"] is False
    assert hib["ci_low"] is None and hib["problems"] is None and hib["complete"] is None
    assert "model" not in hib  # keys are not values
    assert column_direction("calibration", "re") is None  # two-sided, target 0
    assert column_direction("calibration", "abs_re") is False and column_direction("calibration", "pm") is True
    assert column_direction("calibration", "grid_calibrated") is True
    assert column_direction("calibration", "grid_pick_first") is False
    assert column_direction("odds", "mae") is False and column_direction("odds", "ks_stat") is False
    assert column_direction("stability", "tar_a") is True and column_direction("stability", "acc_spread") is False


def test_offline_model_names_fold_into_one_and_aliases_apply(report):
    names = {m for m, _ in report.table.models()}
    assert names == {"ub-oracle", "ub-collapse"}  # before: ub/oracle (Inspect) beside ub-oracle (lm-eval)
    assert model_alias("ub/oracle") == model_alias("ub-oracle") == model_alias("ub-oracle/lm-oracle") == "ub-oracle"
    assert model_alias("ub-oracle-ish") == "ub-oracle-ish" and model_alias("vllm/x") == "vllm/x"
    assert model_alias("ub/oracle", {"ub/oracle": "random machine"}) == "random machine"
    assert model_alias("ub-oracle/x", {"ub-oracle": "Oracle"}) == model_alias("ub/oracle", {"ub-oracle": "Oracle"}) \
        == "Oracle"  # an alias of the folded name renames every spelling


def test_model_alias_option(runs, tmp_path, capsys):
    assert cli.main(["report", str(runs / "inspect_logs"), "--out", str(tmp_path / "r"),
                     "--model-alias", "ub-collapse=Collapsed", "--model-alias", "ub/oracle=Oracle"]) == 0
    doc = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert {r["model"] for r in doc["tables"]["ksn_leaderboard"]["rows"]} == {"Collapsed", "Oracle"}
    assert cli.main(["report", str(runs / "inspect_logs"), "--out", str(tmp_path / "bad"),
                     "--model-alias", "no-equals-sign"]) != 0
    assert "--model-alias: expected NAME=ALIAS" in capsys.readouterr().err


def _wide_lm_eval(root: Path) -> Path:
    """lm-eval samples of a long-named model on all seven ksn categories: the widest leaderboard."""
    out = root / "wide"
    out.mkdir()
    stamp = "2026-01-02T03-04-05.000001"
    (out / f"results_{stamp}.json").write_text(json.dumps({
        "results": {}, "config": {"model": "vllm", "model_args": "pretrained=meta-llama/Llama-3.1-70B-Instruct"}}))
    for i, cat in enumerate(CATEGORIES):
        line = {"doc_id": 0, "doc": {"id": f"p-{cat}", "category": cat}, "filter": "take_100",
                "metrics": ["ks@100", "wdz", "jsd", "n_valid", "n_failed"], "ks@100": float(i % 2), "wdz": 0.5,
                "jsd": 0.1, "n_valid": 100, "n_failed": 3}
        (out / f"samples_ub_ksn_{cat}_{stamp}.jsonl").write_text(json.dumps(line) + "\n")
    return out


@pytest.mark.slow
def test_leaderboard_fits_a_1280_px_page_in_chromium(runs, tmp_path):
    """Seven per-category columns, a 40-character model name and the provenance column: every table of the KS@N
    section fits its 1280-px page without a horizontal scroll bar (measured by the browser, not guessed)."""
    chromium = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                    None)
    if chromium is None:
        pytest.fail("headless Chromium is not installed: `apt-get install -y chromium` (scripts/test.sh does)")
    res = build_report([runs / "inspect_logs", runs / "full", _wide_lm_eval(tmp_path)], tmp_path / "rep")
    lead = next(t for t in res.tables["ksn"] if t.name == "ksn_leaderboard")
    assert len(lead.columns) >= 20
    page = tmp_path / "rep" / "measure.html"
    probe = ("<script>window.addEventListener('load', function () { var out = [];"
             "document.querySelectorAll('section .table-wrap').forEach(function (w) {"
             "out.push(w.querySelector('table').id + '=' + (w.scrollWidth - w.clientWidth)); });"
             "document.body.setAttribute('data-overflow', out.join(';'));"
             "document.body.setAttribute('data-page', document.documentElement.scrollWidth); });</script>")
    page.write_text((tmp_path / "rep" / "index.html").read_text().replace("</body>", probe + "</body>"))
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1280,2000",
            f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=3000"]
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = dom.stdout.split("<body", 1)[1].split(">", 1)[0]
    overflow = dict(kv.split("=") for kv in body.split('data-overflow="')[1].split('"')[0].split(";"))
    assert overflow["table-ksn_leaderboard"] == "0", overflow
    assert all(v == "0" for v in overflow.values()), overflow
    assert int(body.split('data-page="')[1].split('"')[0]) <= 1280
    shot = tmp_path / "shot.png"
    done = subprocess.run(base + [f"--screenshot={shot}", (tmp_path / "rep" / "index.html").as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and shot.stat().st_size > 10_000
