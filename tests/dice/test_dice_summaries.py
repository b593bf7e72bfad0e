"""Dice summaries that one heavy-tailed law cannot dominate.

The Cauchy law has no finite mean, so the W1 between draws and the law has no finite scale: one run's Cauchy W1
can be 1e6 while every other law's is below 1. The leaderboard's mean W1 over the laws was that one law's, and
``ub compare --metric w1`` pooled it with the others (the oracle and GPT-4o indistinguishable, p 0.84). The paper
reports W1 per law and model (its main table) and summarises a model by its pass rate; our run summary of W1 is
the median over the laws, and the mean is taken over the laws whose W1 has a finite scale (Cauchy named and left
out); per-law W1 stays in ``dice_by_law``."""

from __future__ import annotations

import numpy as np

from ub_core.compare import compare_records
from ub_core.metrics.dice import DICE_LAWS, DICE_ORDER, W1_WITHOUT_SCALE
from ub_core.problems.dice import dice_item
from ub_core.report.dice import dice_tables
from ub_core.report.records import SampleRecord


def _record(model: str, law: str, w1: float) -> SampleRecord:
    return SampleRecord(model, "inspect", "dice", "dice", DICE_LAWS[law].tier, dice_item(law).id, 1,
                        {"passed": 1.0, "w1": w1, "p_value": 0.5, "n_values": 1000.0, "count_error": 0.0},
                        {"law": law, "tier": DICE_LAWS[law].tier, "protocol": "batch", "n": 1000,
                         "convention": "default"}, f"{model}.eval")


def _run(model: str, base: float, cauchy: float, rng) -> list[SampleRecord]:
    return [_record(model, law, cauchy if law == "Cauchy" else base * float(rng.uniform(0.8, 1.2)))
            for law in DICE_ORDER]


def test_only_cauchy_lacks_a_w1_scale():
    assert W1_WITHOUT_SCALE == frozenset({"Cauchy"})


def test_one_cauchy_w1_does_not_move_the_run_summary():
    rng = np.random.default_rng(0)
    tame, wild = _run("tame", 0.05, 0.3, np.random.default_rng(1)), _run("wild", 0.05, 1e6, np.random.default_rng(1))
    lead = {r["model"]: r for r in dice_tables(tame + wild, None)[0].rows}
    for col in ("w1_median", "w1_finite_mean"):
        assert lead["wild"][col] == lead["tame"][col] < 0.1, col
    assert "w1" not in lead["wild"]  # the mean over every law, Cauchy's, is no column
    by_law = [r for r in dice_tables(wild, None)[1].rows if r["law"] == "Cauchy"]
    assert by_law[0]["w1"] == 1e6  # per law it is shown as it is
    del rng


def test_compare_on_w1_leaves_cauchy_out_and_says_so():
    rng = np.random.default_rng(2)
    oracle, model = _run("oracle", 0.02, 3e4, rng), _run("model", 0.5, 10.0, rng)
    res = compare_records("dice", "w1", oracle, model)
    assert res.n_pairs == 14 and res.unmatched == {"W1 without a finite scale (Cauchy: no mean)": 1}
    assert res.ci_high < 0 and res.p_value < 0.05


def _table(model: str, settings: dict):
    from ub_core.report.records import RunInfo, SampleTable

    table = SampleTable()
    src = f"{model}.eval"
    table.records += _run(model, 0.05, 0.3, np.random.default_rng(3))
    table.runs[src] = RunInfo(src, complete=True, task_args=dict(settings), settings=dict(settings))
    return table


def test_compare_prints_the_convention_of_the_tests():
    """`ub reproduce dice` defaults to the release convention (to reproduce the paper's figures), the tasks to ours:
    so every output that uses one names it; ub compare too, an unset convention read as the family's default."""
    from ub_core.compare import compare_tables, format_comparisons

    for settings, want in (({"protocol": "batch", "n": 1000, "convention": "release"}, "release"),
                           ({"protocol": "batch", "n": 1000}, "default")):
        rows = compare_tables(_table("a", settings), _table("b", settings))
        assert [r.convention for r in rows] == [want]
        assert f"convention: {want}" in format_comparisons(rows)
