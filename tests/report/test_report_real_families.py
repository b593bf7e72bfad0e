"""``ub report`` on REAL logs of every family, written by the real adapters with the offline oracle: Inspect
``eval()`` of calibration, implicit, explicit, odds and stability, and ``ub-lm-eval`` on the matching lm-eval tasks.
The synthetic inputs in test_report.py fix the layout; this test checks that the readers agree with what the
adapters actually log (key names, payloads, metadata) and that the oracle's perfect scores survive the trip."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # runs every family in both frameworks first

pytest.importorskip("inspect_ai")
pytest.importorskip("lm_eval")

from ub_core.report import build_report  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

LM_TASKS = ("ub_calibration_colors,ub_implicit_coins,ub_explicit_dice,ub_odds_percentile,ub_odds_sampling,"
            "ub_tar_navigate")


@pytest.fixture(scope="module")
def real_report(tmp_path_factory):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.calibration.calibration import calibration
    from ub_inspect.explicit.explicit import explicit
    from ub_inspect.implicit.implicit import implicit
    from ub_inspect.odds.odds import odds
    from ub_inspect.stability.stability import stability

    root = tmp_path_factory.mktemp("real_report")
    tasks = [calibration(categories="colors,distributions", limit_per_category=4),
             implicit(categories="dice,coins", limit_per_category=4),
             explicit(categories="dice", limit_per_category=4),
             odds(task="percentile", limit=6),
             stability(epochs=3, subtasks="navigate", limit=5)]
    logs = inspect_eval(tasks, model="ub/oracle", log_dir=str(root / "inspect"), display="none", seed=0)
    assert all(log.status == "success" for log in logs), [log.error for log in logs]

    lm = shutil.which("ub-lm-eval")
    cmd = ([lm] if lm else [sys.executable, "-m", "ub_lmeval.cli"]) + [
        "--model", "ub-oracle", "--tasks", LM_TASKS, "--limit", "3", "--output_path", str(root / "lm"),
        "--log_samples"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return build_report([root / "inspect", root / "lm"], root / "out")


def _rows(res, name):
    return [r for ts in res.tables.values() for t in ts if t.name == name for r in t.rows]


def test_every_family_section_is_built_from_real_logs(real_report):
    assert real_report.skipped == 0
    assert set(real_report.tables) == {"calibration", "implicit", "explicit", "odds", "stability"}
    html = (real_report.out_dir / "index.html").read_text()
    for title in ("Numeric calibration", "Implicit probabilistic reasoning", "Explicit MCQ", "What are the odds",
                  "Run-to-run stability"):
        assert title in html


def test_every_figure_is_drawn_from_real_payloads(real_report):
    """The figures read the adapters' real payloads (option masses, ideal probabilities, odds shots): one heatmap
    per (model, framework), the behaviour bars, implicit bars for both scenarios, the odds plot, all referenced by
    the page."""
    out = real_report.out_dir
    html = (out / "index.html").read_text()
    heatmaps = sorted(p.name for p in (out / "calibration").glob("heatmap_*.png"))
    assert len(heatmaps) == 2, heatmaps  # ub/oracle in Inspect, ub-oracle in lm-eval
    assert (out / "calibration" / "behaviours.png").is_file() and (out / "odds_shots.png").is_file()
    bars = sorted(p.name for p in (out / "implicit").glob("*.png"))
    assert len(bars) >= 2, bars  # the worst item of each scenario (dice, coins)
    for png in [*(out / "calibration").glob("*.png"), *(out / "implicit").glob("*.png"), out / "odds_shots.png"]:
        assert png.stat().st_size > 5_000, png  # a drawn figure, not an empty canvas
        assert png.relative_to(out).as_posix() in html, png


def test_the_oracle_is_perfect_in_every_section_and_framework(real_report):
    cal = _rows(real_report, "calibration_leaderboard")
    assert {r["framework"] for r in cal} == {"inspect", "lm-eval"}
    for r in cal:
        # the oracle's masses equal the ideal up to float rounding of exp(log p)
        assert r["pm"] == pytest.approx(1.0, abs=1e-9) and r["wd"] == pytest.approx(0.0, abs=1e-9)
        assert r["behaviour_calibrated"] == 1.0
        # grid rates come from each sample's behaviour entry, which both adapters log
        # (a limited run keeps part of some grids: those are undetermined; every other one is calibrated)
        assert r["grid_calibrated"] + r["grid_undetermined"] == pytest.approx(1.0) and r["grid_pick_first"] == 0.0, r
        # the first 4 (3) scored colors items are ordered pairs of one item each, every grid undetermined, now that the
        # equal-count items (one-order grids of equal counts) are left out; a balanced grid's label
        # is tested in tests/calibration/test_option_logprob_real_banks.py
        assert r["grid_calibrated"] > 0 or r["grid_undetermined"] == 1.0, r
        # no spread is no certainty: the interval keeps a width from its floor, inside the range
        assert 0.0 < r["pm_ci_low"] < 1.0 and r["pm_ci_high"] == pytest.approx(1.0, abs=1e-9)
    imp = [r for r in _rows(real_report, "implicit_by_category") if r["category"] == "all"]
    assert {r["framework"] for r in imp} == {"inspect", "lm-eval"}
    for r in imp:
        assert r["chebyshev"] == pytest.approx(0.0, abs=1e-9) and r["kl"] == pytest.approx(0.0, abs=1e-9)
    exp = [r for r in _rows(real_report, "explicit_by_category") if r["category"] == "all"]
    assert {r["framework"] for r in exp} == {"inspect", "lm-eval"} and all(r["mcq_acc"] == 1.0 for r in exp)
    odds = _rows(real_report, "odds_by_family")
    assert {r["framework"] for r in odds} == {"inspect", "lm-eval"}
    for r in odds:
        if r["task"] == "sampling":
            # 1,000 oracle draws vs 10,000 truth draws: the KS statistic's 99.9% point is about
            # 1.95 * sqrt(1/1000 + 1/10000) = 0.065
            assert r["ks_stat"] < 0.065
        else:
            assert r["mae"] == pytest.approx(0.0, abs=1e-6)


def test_stability_rows_come_from_both_frameworks(real_report):
    rows = [r for ts in real_report.tables.get("stability", []) for r in ts.rows]
    assert {r["framework"] for r in rows} == {"inspect", "lm-eval"}
    for fw in ("inspect", "lm-eval"):  # every key is present for each framework somewhere, and perfect
        for key in ("tar_r", "tar_a", "best_acc", "worst_acc"):
            assert any(r.get(key) is not None for r in rows if r["framework"] == fw), (fw, key)
    for r in rows:
        for key in ("tar_r", "tar_a", "best_acc", "worst_acc"):
            if r.get(key) is not None:
                assert r[key] == 1.0, (key, r)
    for fw in ("inspect", "lm-eval"):  # the share of unreadable replies sits next to TARa; the oracle has none
        assert any(r.get("parse_failure_rate") is not None for r in rows if r["framework"] == fw), fw
    assert all(r.get("parse_failure_rate") in (None, 0.0) for r in rows)


def test_no_family_leaks_into_the_ksn_leaderboard(real_report):
    # odds sampling rows carry ks@N too: they must stay in the odds section
    assert not _rows(real_report, "ksn_leaderboard")
