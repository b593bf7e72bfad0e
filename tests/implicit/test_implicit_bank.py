"""The implicit-reasoning bank (the implicit-reasoning paper), its explicit MCQ twin and their metrics.

Covers: sizes per category and variant, hand-computed exact distributions, well-formed prompts and stable ids, the MCQ
structure, metric values on tiny hand cases, the perfect predictor, and one-line errors on bad input.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from ub_core import metrics
from ub_core.problems import bank_version, load_bank
from ub_core.problems import explicit as E
from ub_core.problems import implicit as I

SIZES = {"dice": 688, "coins": 162, "preference": 60, "choice": 15, "statistics": 200, "dice_shown": 280}


@pytest.fixture(scope="module")
def full():
    return load_bank("implicit", size="full")


@pytest.fixture(scope="module")
def explicit_full():
    return load_bank("explicit", size="full")


@pytest.fixture(scope="module")
def by_id(full):
    return {it.id: it for it in full}


# ------------------------------------------------------------------------------------------------ sizes

def test_full_sizes_per_category_and_variant(full):
    assert Counter(it.category for it in full) == SIZES
    variants = Counter((it.category, it.metadata["variant"]) for it in full)
    # coins: 18 settings (3 counts x 2 focus x 3 biases) once, then 3+4+5 previous counts per focus/bias, twice
    assert variants[("coins", "single")] == 18
    assert variants[("coins", "independent")] == variants[("coins", "dependent")] == 72
    # dice repeats: every previous total of 1-3 dice of 4..12 faces: sum over n, f of n(f-1)+1 = 225
    assert variants[("dice", "independent")] == variants[("dice", "dependent")] == 225
    assert variants[("dice", "single")] == 15
    # choice: 3 single + (2 + 4 + 6) previous picks
    assert variants[("choice", "single")] == 3 and variants[("choice", "repeated")] == 12
    assert {v for c, v in variants if c == "dice"} == set(I.VARIANTS["dice"])
    assert all(it.bank == "implicit" for it in full)


def test_subset_is_stratified_deterministic_and_the_default(full):
    subset = load_bank("implicit", size="subset")
    assert load_bank("implicit") == subset and load_bank("implicit", size=None) == subset
    assert 300 <= len(subset) <= 1500
    strata_full = {(it.category, it.metadata["variant"]) for it in full}
    assert {(it.category, it.metadata["variant"]) for it in subset} == strata_full
    # every dice set and coin set survives the thinning
    for cat in ("dice", "coins"):
        assert {it.cluster for it in subset if it.category == cat} == {it.cluster for it in full if it.category == cat}
    ids = {it.id for it in subset}
    assert all(it.metadata["in_subset"] == (it.id in ids) for it in full)
    assert [it.id for it in I.selected_scenarios("subset")] == [it.id for it in subset]


def test_both_banks_load_with_categories_and_versions():
    for bank in ("implicit", "explicit"):
        assert bank_version(bank) == "2"  # 2: die_shown items in their own category
        dice = load_bank(bank, size="full", categories=["dice"])
        assert len(dice) == SIZES["dice"] and {it.category for it in dice} == {"dice"}
        # the paper's dice grid only: the die-value observations (ours) are their own category
        assert not any(it.metadata["variant"] == "die_shown" for it in dice)
        shown = load_bank(bank, size="full", categories=["dice_shown"])
        assert {it.metadata["variant"] for it in shown} == {"die_shown"} and len(shown) == 280
    assert len(load_bank("explicit", size="full")) == sum(SIZES.values())
    assert len(load_bank("explicit")) == len(load_bank("implicit"))


# ------------------------------------------------------------------------------------------------ exact distributions

def test_two_d6_by_hand(by_id):
    # ways to make total t with two d6: 6 - |t - 7|, out of 36
    expected = {t: F(6 - abs(t - 7), 36) for t in range(2, 13)}
    assert I.dice_sum_distribution(2, 6) == expected
    item = by_id["imp-dice-single-2d6"]
    assert item.options == tuple(str(t) for t in range(2, 13))
    assert item.probabilities == tuple(float(expected[t]) for t in range(2, 13))
    # the independent repeat keeps the same ideal, the dependent one shifts it by the previous total (7)
    assert by_id["imp-dice-independent-2d6-p7"].probabilities == item.probabilities
    dep = by_id["imp-dice-dependent-2d6-p7"]
    assert dep.options == tuple(str(t) for t in range(4, 25))
    assert dict(zip(dep.options, dep.probabilities)) == {str(t): float(expected.get(t - 7, 0)) for t in range(4, 25)}


def test_three_dice_total_by_hand():
    # 3d6: total 10 can be made 27 ways, total 3 one way
    d = I.dice_sum_distribution(3, 6)
    assert d[10] == F(27, 216) and d[3] == F(1, 216) and sum(d.values()) == 1


def test_conditioned_cases(by_id):
    # one d6, told "even": 2, 4, 6 each 1/3; odd faces stay as options with 0
    even = by_id["imp-dice-observed-1d6-oeven"]
    assert even.options == ("1", "2", "3", "4", "5", "6")
    assert even.probabilities == (0.0, 1 / 3, 0.0, 1 / 3, 0.0, 1 / 3)
    # one d6, middle value 3: "even and less than 3" leaves only 2 (the paper's one-outcome case)
    assert by_id["imp-dice-observed-1d6-oeven+below"].probabilities == (0, 1, 0, 0, 0, 0)
    # two d6, told "total greater than 7": totals 8..12 have 5,4,3,2,1 ways out of 15
    above = by_id["imp-dice-observed-2d6-oabove"]
    assert dict(zip(above.options, above.probabilities))["8"] == pytest.approx(5 / 15, abs=1e-15)
    assert dict(zip(above.options, above.probabilities))["7"] == 0.0
    # two d6, the first die shows 3: the total is 3 + a d6, so 4..9 each 1/6
    shown = dict(zip(*[by_id["imp-dice-die_shown-2d6-s3"].options, by_id["imp-dice-die_shown-2d6-s3"].probabilities]))
    assert shown == {str(t): (1 / 6 if 4 <= t <= 9 else 0.0) for t in range(2, 13)}
    # three d4 with the first two showing 1 and 4: 6..9 each 1/4
    two = by_id["imp-dice-die_shown-3d4-s1+4"]
    assert dict(zip(two.options, two.probabilities)) == {str(t): (0.25 if 6 <= t <= 9 else 0.0) for t in range(3, 13)}
    assert I.condition_distribution({1: F(1, 2), 2: F(1, 2)}, lambda t: t == 2) == {2: F(1)}


def test_biased_coin_counts_by_hand(by_id):
    # bias 5 towards the counted face: p = 5/6; two coins: (1/6)^2, 2(5/6)(1/6), (5/6)^2 = 1/36, 10/36, 25/36
    item = by_id["imp-coins-single-2c-heads-b5"]
    assert item.options == ("0", "1", "2")
    assert item.probabilities == (float(F(1, 36)), float(F(10, 36)), float(F(25, 36)))
    assert I.coin_count_distribution(3, F(3, 4)) == {0: F(1, 64), 1: F(9, 64), 2: F(27, 64), 3: F(27, 64)}
    # fair coins, dependent repeat after 1 head: total 1..3 with 1/4, 1/2, 1/4; options 0..4
    dep = by_id["imp-coins-dependent-2c-heads-b1-p1"]
    assert dep.options == ("0", "1", "2", "3", "4") and dep.probabilities == (0, 0.25, 0.5, 0.25, 0)


def test_statistics_hand_example():
    # 18% of staff in the ward; anxiety 13% there, 10% elsewhere: 0.18 * 0.13 + 0.82 * 0.10 = 0.1054
    assert I.prevalence_marginal(F(18, 100), F(13, 100), F(10, 100)) == F(1054, 10000)
    sc = I.statistics_scenario(0, "Robin", "cardiology", ("burnout", "anxiety", "depression"),
                               ward_rates=(8, 13, 7), rest_rates=(16, 10, 5), share=18)
    marg = [F(18 * 8 + 82 * 16, 10000), F(1054, 10000), F(18 * 7 + 82 * 5, 10000)]
    assert list(sc.explicit_probabilities) == marg
    assert list(sc.probabilities) == [m / sum(marg) for m in marg]
    assert metrics.unique_mode([float(p) for p in sc.probabilities]) == 0  # burnout, 14.56%, beats anxiety
    assert "18%" in sc.prompt and "cardiology" in sc.prompt and not sc.prompt.endswith(" ")
    mcq = E.explicit_item(sc)
    assert mcq.metadata["value_texts"][mcq.answer_index] == "14.56%"


def test_statistics_scenarios_follow_the_grid(full):
    stats = [it for it in full if it.category == "statistics"]
    for it in stats:
        md = it.metadata
        assert md["name"] in I.STAT_NAMES and md["ward"] in I.STAT_WARDS
        assert len(set(md["conditions"])) == 3 and set(md["conditions"]) <= set(I.STAT_CONDITIONS)
        assert all(1 <= r <= 30 for r in md["ward_rates"] + md["rest_rates"]) and 5 <= md["share"] <= 20
        s = md["share"] / 100
        marg = [s * a / 100 + (1 - s) * b / 100 for a, b in zip(md["ward_rates"], md["rest_rates"])]
        assert np.allclose(it.probabilities, np.array(marg) / sum(marg), atol=1e-12)
    assert len({it.cluster for it in stats}) == 200


def test_every_ideal_sums_exactly_to_one():
    for sc in I.implicit_scenarios():
        assert sum(sc.probabilities, F(0)) == 1, sc.id
        assert all(p >= 0 for p in sc.probabilities)


# ------------------------------------------------------------------------------------------------ prompts and ids

def test_prompts_unique_and_end_before_the_outcome(full, explicit_full):
    for bank in (full, explicit_full):
        prompts = [it.prompt for it in bank]
        assert len(set(prompts)) == len(prompts)
        assert all(p == p.rstrip() and p for p in prompts)
        ids = [it.id for it in bank]
        assert len(set(ids)) == len(ids)
    assert all(re.search(r"(showing|add up to|total of|is|option)$", it.prompt) for it in full)
    assert all(it.prompt.endswith("Answer:") for it in explicit_full)


def test_ids_are_stable_and_built_from_parameters(full):
    I.implicit_scenarios.cache_clear()
    I.subset_ids.cache_clear()
    rebuilt = [s.id for s in I.implicit_scenarios()]
    assert rebuilt == [it.id for it in full]
    for it in full:
        md = it.metadata
        if it.category == "dice":
            assert f"-{md['n_dice']}d{md['faces']}" in it.id and it.cluster == f"dice-{md['n_dice']}d{md['faces']}"
            if "previous" in md:
                assert it.id.endswith(f"-p{md['previous']}")
        elif it.category == "coins":
            assert f"-{md['n_coins']}c-{md['focus']}-b{md['bias']}" in it.id
    assert {"imp-dice-single-1d4", "imp-coins-single-4c-tails-b3", "imp-pref-single-left-right-o1-b2-right",
            "imp-choice-repeated-6-pF", "imp-stat-000", "imp-stat-199"} <= {it.id for it in full}


def test_option_strings_are_canonical(full):
    for it in full:
        if it.category in ("dice", "coins"):
            assert [int(o) for o in it.options] == list(range(int(it.options[0]), int(it.options[-1]) + 1))
        elif it.category == "preference":
            assert it.options in (("Left", "Right"), ("Heads", "Tails"))
        elif it.category == "choice":
            assert it.options == tuple("ABCDEF"[:len(it.options)])


# ------------------------------------------------------------------------------------------------ explicit MCQs

_VALUE = {"fraction": re.compile(r"^(1|[1-9]\d*/[1-9]\d*)$"), "percent": re.compile(r"^\d+\.\d\d%$")}


def test_mcq_structure(full, explicit_full):
    assert [it.metadata["source_id"] for it in explicit_full] == [it.id for it in full]
    twins = {it.id: it for it in full}
    for mcq in explicit_full:
        imp = twins[mcq.metadata["source_id"]]
        assert mcq.bank == "explicit" and mcq.category == imp.category and mcq.cluster == imp.cluster
        assert mcq.options == ("A", "B", "C", "D", "E")
        assert mcq.probabilities == tuple(1.0 if i == mcq.answer_index else 0.0 for i in range(5))
        values, texts, truth = mcq.params["values"], mcq.metadata["value_texts"], mcq.params["truth"]
        assert len(set(texts)) == 5 and len(set(values)) == 5
        assert [v == truth for v in values].count(True) == 1 and values[mcq.answer_index] == truth
        assert all(0 < v <= 1 for v in values)
        pattern = _VALUE[mcq.metadata["value_format"]]
        assert all(pattern.match(t) for t in texts), texts
        if imp.category != "statistics":  # the truth is the ideal probability of the asked outcome
            assert truth == imp.probabilities[imp.options.index(mcq.params["outcome"])]
        else:  # ... and in statistics the marginal prevalence
            md = imp.metadata
            k = md["conditions"].index(mcq.params["outcome"])
            s = md["share"] / 100
            assert truth == pytest.approx(s * md["ward_rates"][k] / 100 + (1 - s) * md["rest_rates"][k] / 100,
                                          abs=1e-12)
        # the mode is asked when it is unique
        mode = metrics.unique_mode(imp.probabilities)
        if mode is not None:
            assert mcq.params["outcome"] == imp.options[mode]
        for letter, text in zip(mcq.options, texts):
            assert f"\n{letter}) {text}\n" in mcq.prompt


def test_mcq_shuffle_is_deterministic_and_spread(explicit_full):
    letters = Counter(it.answer_index for it in explicit_full)
    # 1,405 items over 5 letters: each expects 281 (sd ~15); 200 is over 5 sd below, so a fair shuffle never fails
    assert set(letters) == {0, 1, 2, 3, 4} and min(letters.values()) > 200
    E._items.cache_clear()
    again = load_bank("explicit", size="full")
    assert [(it.id, it.prompt, it.answer_index) for it in again] == \
        [(it.id, it.prompt, it.answer_index) for it in explicit_full]
    # The truth's rank among the five values carries little signal: the paper's fixed multipliers would always make it
    # the middle one; ours draws the rank uniformly where the pool allows (only truths near 1 limit it), so each
    # rank holds well over 10% of items.
    ranks = Counter(sorted(it.params["values"]).index(it.params["truth"]) for it in explicit_full)
    assert len(ranks) == 5 and min(ranks.values()) > 0.1 * len(explicit_full)


def test_format_value():
    assert E.format_value(F(5, 36), "fraction") == "5/36" and E.format_value(F(1), "fraction") == "1"
    assert E.format_value(F(1054, 10000), "percent") == "10.54%"
    assert E.format_value(F(1, 20), "percent") == "5.00%"
    with pytest.raises(ValueError, match="two decimals"):
        E.format_value(F(1, 3), "percent")


# ------------------------------------------------------------------------------------------------ metrics

def test_distance_values_by_hand():
    p, q = [0.5, 0.5], [0.8, 0.2]
    assert metrics.chebyshev_distance(p, q) == pytest.approx(0.3)
    assert metrics.manhattan_distance(p, q) == pytest.approx(0.6)
    # 0.5 ln(0.5/0.8) + 0.5 ln(0.5/0.2) = 0.5 ln(1.5625)
    assert metrics.kl_divergence(p, q) == pytest.approx(0.5 * math.log(1.5625))
    assert metrics.kl_divergence([1, 0], [0.5, 0.5]) == pytest.approx(math.log(2))  # 0 ln 0 = 0
    # q = 0 where p > 0: floored at 1e-12, renormalised: ln(1 / (1e-12 / (1 + 1e-12))) ~ 27.63, finite
    assert metrics.kl_divergence([1, 0], [0, 1]) == pytest.approx(math.log(1e12), rel=1e-9)
    assert metrics.missing_mass([0.2, 0.3]) == pytest.approx(0.5)
    assert metrics.missing_mass([0.7, 0.6]) == pytest.approx(-0.3)  # overlapping multi-token outcomes
    assert metrics.unique_mode([0.2, 0.5, 0.3]) == 1 and metrics.unique_mode([0.5, 0.5]) is None


def test_item_scores_by_hand(by_id):
    item = by_id["imp-coins-single-2c-heads-b1"]  # 1/4, 1/2, 1/4
    s = metrics.implicit_item_scores(item, [0.1, 0.3, 0.1])  # normalised: 0.2, 0.6, 0.2
    assert s["chebyshev"] == pytest.approx(0.1) and s["manhattan"] == pytest.approx(0.2)
    assert s["kl"] == pytest.approx(0.5 * math.log(0.25 / 0.2) + 0.5 * math.log(0.5 / 0.6))
    assert s["missing_mass"] == pytest.approx(0.5) and s["argmax_correct"] == 1.0
    assert metrics.implicit_item_scores(item, [0.6, 0.3, 0.1])["argmax_correct"] == 0.0
    assert metrics.implicit_item_scores(item, [0.3, 0.3, 0.3])["argmax_correct"] == 0.0  # flat: no credit
    assert metrics.implicit_item_scores(by_id["imp-dice-single-1d6"], [0.1] * 6)["argmax_correct"] is None

    mcq = E.explicit_item(next(s for s in I.implicit_scenarios() if s.id == item.id))
    mass = [0.05] * 5
    mass[mcq.answer_index] = 0.6
    e = metrics.explicit_item_scores(mcq, mass)
    assert e == {"mcq_correct": 1.0, "p_correct": pytest.approx(0.6 / 0.8), "no_mass": 0.0}
    mass[(mcq.answer_index + 1) % 5] = 0.7
    assert metrics.explicit_item_scores(mcq, mass)["mcq_correct"] == 0.0


def test_perfect_predictor_scores_zero(full, explicit_full):
    # The stored probabilities are correctly rounded fractions whose float sum is 1 within a few ulps; normalising
    # by that sum moves each entry by at most ~1e-15, so every distance is 0 within 1e-12.
    for it in full:
        s = metrics.implicit_item_scores(it, it.probabilities)
        assert s["chebyshev"] == pytest.approx(0, abs=1e-12) and s["manhattan"] == pytest.approx(0, abs=1e-12)
        assert s["kl"] == pytest.approx(0, abs=1e-12)
        assert s["missing_mass"] == pytest.approx(0, abs=1e-12)
        assert s["argmax_correct"] == (None if metrics.unique_mode(it.probabilities) is None else 1.0)
    for it in explicit_full:
        assert metrics.explicit_item_scores(it, it.probabilities) == {"mcq_correct": 1.0, "p_correct": 1.0,
                                                                      "no_mass": 0.0}


def test_summarize_implicit():
    scores = [{"chebyshev": 0.1, "argmax_correct": 1.0}, {"chebyshev": 0.3, "argmax_correct": None},
              {"chebyshev": 0.2, "argmax_correct": 0.0}, {"chebyshev": 0.4, "argmax_correct": 1.0}]
    out = metrics.summarize_implicit(scores, ["a", "a", "b", "c"])
    assert out["chebyshev"]["mean"] == pytest.approx(0.25) and out["chebyshev"]["n"] == 4
    assert out["argmax_correct"] == {**out["argmax_correct"], "mean": pytest.approx(2 / 3), "n": 3, "excluded": 1}
    for v in out.values():
        assert v["low"] <= v["mean"] <= v["high"]
    # one cluster: fewer than MIN_CLUSTERS, so values are resampled one by one, not collapsed to a point
    one = metrics.summarize_implicit(scores, ["a"] * 4)
    assert one["chebyshev"]["low"] < 0.25 < one["chebyshev"]["high"]
    assert one["chebyshev"] == metrics.summarize_implicit(scores, ["a", "b", "c", "d"])["chebyshev"]
    assert metrics.summarize_implicit([{"argmax_correct": None}], ["a"])["argmax_correct"]["mean"] is None


# ------------------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("call, msg", [
    (lambda it: metrics.implicit_item_scores(it, [0.1, float("nan"), 0.1]), "NaN"),
    (lambda it: metrics.implicit_item_scores(it, [0.1, -0.2, 0.1]), r"\[0, 1\]"),
    (lambda it: metrics.implicit_item_scores(it, [0.1, 1.5, 0.1]), r"\[0, 1\]"),
    (lambda it: metrics.implicit_item_scores(it, [0.5, 0.5]), "2 entries but the item has 3"),
    (lambda it: metrics.predicted_distribution([0, 0, 0]), "all zero"),  # all-zero mass scores
    (lambda it: metrics.implicit_item_scores(it, "abc"), "sequence of numbers"),
    (lambda it: metrics.explicit_item_scores(it, [0.1, 0.1, 0.1]), "not an MCQ"),
    (lambda it: metrics.kl_divergence([0.5, 0.5], [0.5, 0.2]), "sum to 1"),
    (lambda it: metrics.kl_divergence([0.5, 0.5], [1.0]), "2 entries but q has 1"),
    (lambda it: metrics.chebyshev_distance([], []), "empty"),
    (lambda it: metrics.summarize_implicit([{"kl": 1.0}], []), "1 score dicts but 0"),
    (lambda it: metrics.summarize_implicit([{"kl": float("inf")}], ["a"]), "not finite"),
    (lambda it: load_bank("implicit", size="huge"), "unknown bank size"),
    (lambda it: I.implicit_items("huge"), "unknown bank size"),
    (lambda it: E.explicit_items("huge"), "unknown bank size"),
    (lambda it: I.dice_sum_distribution(0, 6), "at least one die"),
    (lambda it: I.condition_distribution({1: F(1)}, lambda t: t > 1), "rule out every outcome"),
    (lambda it: I.prevalence_marginal(F(3, 2), 0, 0), "share must be in"),
    (lambda it: I.statistics_scenario(0, "A", "w", ("x", "x", "y"), (1, 2, 3), (1, 2, 3), 10), "three distinct"),
    (lambda it: I.statistics_scenario(0, "A", "w", ("x", "y", "z"), (1, 2, 300), (1, 2, 3), 10), "whole percent"),
])
def test_bad_inputs_get_one_line_errors(by_id, call, msg):
    item = by_id["imp-coins-single-2c-heads-b1"]
    with pytest.raises(ValueError, match=msg) as exc:
        call(item)
    assert "\n" not in str(exc.value)


def test_unknown_category_is_reported():
    with pytest.raises(KeyError, match="unknown category 'cards'"):
        load_bank("implicit", categories=["cards"])
