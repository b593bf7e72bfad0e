"""The statistics of ``ub compare`` (``ub_core.compare``), checked by simulation with fixed seeds.

Tolerances are Monte-Carlo errors: a rate estimated from R replications has standard deviation
sqrt(r (1 - r) / R); every check allows 4 of them (a false alarm about once in 16,000 runs of a check)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ub_core.compare import (MIN_CLUSTERS, holm, mcnemar_exact, minimum_detectable_effect, paired_difference,
                             sampling_noise_removed)

R = 2000


def _mc(rate: float, reps: int = R) -> float:
    return 4 * math.sqrt(rate * (1 - rate) / reps)


def _rates(draw, reps: int = R, true_diff: float = 0.0, **kw):
    rng = np.random.default_rng(12345)
    covered = rejected = 0
    for _ in range(reps):
        a, b, clusters = draw(rng)
        res = paired_difference(a, b, clusters, **kw)
        covered += res["ci_low"] <= true_diff <= res["ci_high"]
        rejected += res["p_value"] < 0.05
    return covered / reps, rejected / reps


def _equal_continuous(rng, n=100):
    mu = rng.normal(0, 1, n)  # problem difficulty, shared: what pairing removes
    return mu + rng.normal(0, 0.5, n), mu + rng.normal(0, 0.5, n), None


@pytest.mark.slow
def test_equal_models_cover_zero_95_percent_and_reject_5_percent():
    coverage, type_one = _rates(_equal_continuous)
    assert abs(coverage - 0.95) <= _mc(0.95) and abs(type_one - 0.05) <= _mc(0.05), (coverage, type_one)


@pytest.mark.slow
def test_power_matches_the_formula_at_the_minimum_detectable_effect():
    n, sd = 100, 0.5
    se = math.sqrt(2) * sd / math.sqrt(n)
    delta = minimum_detectable_effect(se)  # 80% power by construction
    assert delta == pytest.approx((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * se)

    def draw(rng):
        mu = rng.normal(0, 1, n)
        return mu + delta + rng.normal(0, sd, n), mu + rng.normal(0, sd, n), None

    coverage, power = _rates(draw, true_diff=delta)
    z = stats.norm.ppf(0.975)
    predicted = stats.norm.cdf(delta / se - z) + stats.norm.cdf(-delta / se - z)
    assert predicted == pytest.approx(0.8, abs=1e-3)
    # the t test on 99 degrees of freedom is a little less powerful than the z formula (0.79 vs 0.80)
    assert abs(power - predicted) <= _mc(0.8) + 0.015 and abs(coverage - 0.95) <= _mc(0.95), (power, coverage)


@pytest.mark.slow
def test_pass_fail_scores_use_one_score_test_for_interval_and_p_value_and_hold_their_level():
    """Pass/fail scores get Tango's score interval and the asymptotic McNemar test, the same score test
    (the exact McNemar test beside a t interval contradicted it); both hold their level."""
    def draw(rng, n=200):
        p = rng.beta(2, 2, n)  # each problem's pass probability, the same for both models
        return (rng.random(n) < p).astype(float), (rng.random(n) < p).astype(float), None

    res = paired_difference(*draw(np.random.default_rng(1))[:2])
    assert res["test"] == "McNemar score (Tango interval)"
    coverage, type_one = _rates(draw)
    assert abs(type_one - 0.05) <= _mc(0.05), type_one
    assert abs(coverage - 0.95) <= _mc(0.95), coverage


def test_mcnemar_counts_only_discordant_pairs():
    a = [1, 1, 1, 1, 0, 0, 1, 0]
    b = [1, 0, 0, 0, 0, 1, 1, 0]
    assert mcnemar_exact(a, b) == pytest.approx(stats.binomtest(3, 4, 0.5).pvalue)  # 3 vs 1 discordant
    assert mcnemar_exact([1, 0], [1, 0]) == 1.0


@pytest.mark.slow
def test_clustered_errors_cover_where_plain_ones_do_not():
    k, per = 30, 10

    def draw(rng):
        shared = np.repeat(rng.normal(0, 0.3, k), per)  # a scenario helps one model on all its variants
        mu = rng.normal(0, 1, k * per)
        return mu + shared + rng.normal(0, 0.3, k * per), mu + rng.normal(0, 0.3, k * per), np.repeat(
            np.arange(k), per)

    coverage, type_one = _rates(draw, reps=1000)
    assert abs(coverage - 0.95) <= _mc(0.95, 1000) + 0.01, coverage
    naive, _ = _rates(lambda rng: (*draw(rng)[:2], None), reps=1000)
    assert naive < 0.75, naive  # ignoring the clusters: intervals far too narrow


def test_too_few_clusters_fall_back_to_the_plain_error():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=30), rng.normal(size=30)
    few = paired_difference(a, b, np.repeat([0, 1, 2], 10))
    assert few["clusters"] == 3 and not few["clustered"]
    assert few["se"] == pytest.approx(np.std(a - b, ddof=1) / math.sqrt(30))
    many = paired_difference(a, b, np.arange(30) % MIN_CLUSTERS)
    assert many["clustered"] and many["clusters"] == MIN_CLUSTERS


def test_degenerate_inputs():
    assert paired_difference([], [])["diff"] is None
    # no spread and no range: nothing to say (no zero-width interval, no p = 1 from nothing)
    same = paired_difference([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert same["se"] == 0 and same["p_value"] is None and same["ci_low"] is None and same["mde"] is None
    assert same["test"].startswith("none")
    # in a known range the same values get the floor's interval
    ranged = paired_difference([0.5, 0.5, 0.5], [0.5, 0.5, 0.5], bounds=(0.0, 1.0))
    assert ranged["p_value"] == 1.0 and ranged["ci_low"] < 0 < ranged["ci_high"] and ranged["mde"] > 0
    # every difference 1 with an open range: the floor from the observed range, not p = 0
    shifted = paired_difference([1.0, 2.0], [0.0, 1.0])
    assert 0 < shifted["p_value"] < 1 and shifted["diff"] == 1.0 and shifted["test"] == "paired t (SE floor)"
    with pytest.raises(ValueError, match="paired"):
        paired_difference([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        paired_difference([float("nan")], [1.0])


@pytest.mark.slow
def test_sampling_free_scores_remove_the_within_problem_noise():
    """p ~ Beta(2, 2): Var(p) = 0.05 and E[p(1-p)] = 0.2, so with n = 100 a sampled verdict's mean has SE 0.05 and
    the pass probabilities' mean 0.0224; simulated over fresh problems, the spread of each mean matches."""
    rng = np.random.default_rng(7)
    n = 100
    verdict_means, p_means = [], []
    for _ in range(R):
        p = rng.beta(2, 2, n)
        verdict_means.append(np.mean(rng.random(n) < p))
        p_means.append(p.mean())
    # the sample SD of R normal-ish means is within about 4 * SD / sqrt(2R) of the truth
    for observed, truth in ((np.std(verdict_means, ddof=1), 0.05), (np.std(p_means, ddof=1), math.sqrt(0.05 / n))):
        assert abs(observed - truth) <= 4 * truth / math.sqrt(2 * R), (observed, truth)
    est = sampling_noise_removed(rng.beta(2, 2, 100_000))
    assert est["se_sampled"] * math.sqrt(est["n"]) == pytest.approx(0.5, rel=0.02)
    assert est["se_free"] * math.sqrt(est["n"]) == pytest.approx(math.sqrt(0.05), rel=0.02)
    assert est["variance_ratio"] == pytest.approx(0.2, rel=0.03)
    pair = sampling_noise_removed(rng.beta(2, 2, 1000), rng.beta(2, 2, 1000))
    assert pair["se_free"] < pair["se_sampled"] and pair["mde_free"] < pair["mde_sampled"]


def test_holm():
    adjusted = holm([0.01, 0.04, 0.03, None])
    assert adjusted[:3] == pytest.approx([0.03, 0.06, 0.06]) and adjusted[3] is None
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
