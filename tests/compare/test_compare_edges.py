"""``ub compare`` at its edges, each case on the numbers that first showed it: one test for interval and p-value, a
difference kept in range, no certainty from no spread, round-off clipped and counted."""

from __future__ import annotations

import math

import pytest

from ub_core.compare import compare_records, paired_difference
from ub_core.report.eval_families import extract_all
from ub_core.report.records import SampleRecord


def _consistent(res, alpha=0.05):
    return (res["p_value"] < alpha) == (res["ci_low"] > 0 or res["ci_high"] < 0)


def test_interval_and_p_value_come_from_one_test():
    """5 discordant pairs one way of 50 (KS@10 of ub/oracle with and without digits=1 showed the shape): the old
    t interval excluded 0 while the exact McNemar p beside it was 0.0625."""
    a = [1.0] * 5 + [0.0] * 45
    b = [0.0] * 50
    res = paired_difference(a, b, bounds=(0.0, 1.0))
    assert _consistent(res), res
    assert res["test"] == "McNemar score (Tango interval)"
    # a near-boundary case both ways: 7 vs 1 discordant of 100
    res = paired_difference([1.0] * 7 + [0.0] * 93, [0.0] * 7 + [1.0] + [0.0] * 92, bounds=(0.0, 1.0))
    assert _consistent(res), res


def test_difference_interval_stays_in_range():
    """The README's example: 48 of 50 problems pass for the oracle only, 2 for both; the old interval reached
    +1.0163."""
    res = paired_difference([1.0] * 50, [1.0, 1.0] + [0.0] * 48, bounds=(0.0, 1.0))
    assert -1.0 <= res["ci_low"] < res["diff"] < res["ci_high"] <= 1.0, res
    cont = paired_difference([1.0] * 50, [0.99, 0.5] + [0.0] * 48, bounds=(0.0, 1.0))  # not pass/fail: t path
    assert cont["ci_high"] <= 1.0 and cont["test"].startswith("paired t")


def test_no_certainty_from_no_spread():
    """Oracle against collapse on the 20 shuffling problems ([+1, +1], MDE 0), oracle seed 0 against seed 1 (MDE 0),
    and a clustered argmax comparison with every item right for one model and wrong for the other (p = 0)."""
    all_pass = paired_difference([1.0] * 20, [0.0] * 20, bounds=(0.0, 1.0))
    assert all_pass["ci_high"] - all_pass["ci_low"] > 0.1 and all_pass["mde"] > 0 and all_pass["p_value"] > 0
    same = paired_difference([1.0] * 20, [1.0] * 20, bounds=(0.0, 1.0))
    assert same["ci_low"] < 0 < same["ci_high"] and same["mde"] > 0.1 and same["p_value"] == 1.0
    clusters = [i // 4 for i in range(528)]
    argmax = paired_difference([1.0] * 528, [0.0] * 528, clusters, bounds=(0.0, 1.0))
    assert argmax["clustered"] and argmax["p_value"] > 0 and argmax["ci_high"] - argmax["ci_low"] > 0
    assert argmax["ci_high"] <= 1.0


def _rec(model, pid, value):
    return SampleRecord(model, "inspect", "implicit", "implicit", "dice", pid, 1, {"manhattan": value},
                        {"cluster": pid}, "x.eval")


def test_round_off_is_clipped_and_counted_not_dropped():
    """The implicit scorer wrote Manhattan distances of 2.0000000000000004 (disjoint supports); the report and
    ub compare dropped those items, the collapse model's worst, so its mean improved."""
    worst = 2.0000000000000004
    refused, clipped = [], []
    found = extract_all({"chebyshev": 1.0, "manhattan": worst, "kl": 27.0}, {}, {"id": "d1"}, refused, clipped)
    (fam, (_, metrics, _)), = found
    assert fam == "implicit" and metrics["manhattan"] == 2.0 and refused == [] and clipped == ["implicit manhattan"]
    ra = [_rec("oracle", f"p{i}", 0.0) for i in range(12)]
    rb = [_rec("collapse", f"p{i}", worst if i < 6 else 1.0) for i in range(12)]
    cmp = compare_records("implicit", "manhattan", ra, rb)
    assert cmp.n_pairs == 12 and cmp.clipped == 6 and cmp.mean_b == pytest.approx(1.5)
    # further out is not round-off: one line, never a silent drop
    with pytest.raises(ValueError, match="outside"):
        paired_difference([2.5], [0.0], bounds=(0.0, 2.0))
    assert math.isclose(paired_difference([worst, 1.0], [0.0, 0.0], bounds=(0.0, 2.0))["mean_a"], 1.5)
