"""The dice metrics (:mod:`ub_core.metrics.dice`) and the answer-key reader: the default convention's tests hold
their level under the law, reject what cannot come from it, and the MCQ uniformity test is scipy's. Fixed seeds;
tolerances from the binomial spread of the counts checked."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ub_core.metrics import dice as D
from ub_core.parsing.answer_key import read_answer_key


def test_fifteen_laws_in_three_tiers():
    assert len(D.DICE_ORDER) == 15 and D.DICE_ORDER[:3] == ("Bernoulli", "Binomial", "Poisson")
    assert {t: len(v) for t, v in D.DICE_TIERS.items()} == {"Tier I": 3, "Tier II": 4, "Tier III": 8}
    assert [n for n in D.DICE_ORDER if D.DICE_LAWS[n].discrete] == ["Bernoulli", "Binomial", "Poisson"]
    assert D.DICE_LAWS["Gamma"].dist.mean() == pytest.approx(4.0)  # shape 2, scale 2
    assert D.DICE_LAWS["Weibull"].dist.cdf(1.0) == pytest.approx(1 - math.exp(-1))


@pytest.mark.parametrize("name", ["Bernoulli", "Binomial", "Poisson"])
def test_discrete_monte_carlo_test_holds_its_level(name):
    """Under the law, P(p <= 0.05) = 0.05 (up to the Monte-Carlo ties of a discrete statistic, which only make it
    smaller): over 150 seeded samples the rejections stay under 0.05 + 4 binomial standard deviations."""
    rng = np.random.default_rng(7)
    law = D.DICE_LAWS[name].dist
    ps = [D.exact_pvalue(name, law.rvs(size=100, random_state=rng), seed=i, draws=1000) for i in range(150)]
    assert np.mean(np.asarray(ps) <= 0.05) <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / 150)
    assert abs(np.mean(ps) - 0.5) <= 4 * math.sqrt(1 / 12 / 150) + 0.05  # roughly uniform (discreteness: + 0.05)


def test_discrete_test_rejects_collapse_and_values_off_the_support():
    assert D.exact_pvalue("Poisson", [5.0] * 200, draws=999) == pytest.approx(1 / 1000)
    assert D.exact_pvalue("Binomial", [5.0] * 199 + [11.0]) == 0.0
    assert D.exact_pvalue("Binomial", [5.0] * 199 + [2.5]) == 0.0
    assert D.exact_pvalue("Bernoulli", [1.0] * 199 + [-1.0]) == 0.0
    assert D.exact_pvalue("Poisson", [5.0] * 199 + [40.0], draws=999) == pytest.approx(1 / 1000)  # tail cell
    # the same seed gives the same p-value
    x = D.law_draws("Binomial", 300, seed=3)
    assert D.exact_pvalue("Binomial", x, seed=1) == D.exact_pvalue("Binomial", x, seed=1)


def test_continuous_default_is_scipys_exact_one_sample_ks():
    for name in ("Uniform", "Cauchy", "FDistribution", "Weibull"):
        x = D.law_draws(name, 400, seed=11)
        law = D.DICE_LAWS[name].dist
        assert D.exact_pvalue(name, x) == pytest.approx(stats.kstest(x, law.cdf, method="exact").pvalue, rel=1e-12)


def test_dice_scores_in_both_conventions():
    x = D.law_draws("Gaussian", 5000, seed=1)
    s = D.dice_scores("Gaussian", x)
    # W1 of two samples of the same law: E ~ c / sqrt(n) (about 0.011 at n = 5000); 0.05 is far beyond it
    assert s["n"] == 5000 and s["w1"] < 0.05 and s["passed"] == (s["p_value"] > 0.01)
    ref = D.law_draws("Gaussian", 1000, seed=42)
    r = D.dice_scores("Gaussian", x, convention="release", reference=ref)
    assert r["p_value"] == pytest.approx(stats.ks_2samp(x, ref).pvalue, rel=1e-12)
    assert r["w1"] == pytest.approx(stats.wasserstein_distance(x, ref), rel=1e-12)
    with pytest.raises(ValueError, match="convention"):
        D.dice_scores("Gaussian", x, convention="paper")
    with pytest.raises(ValueError, match="reference"):
        D.dice_scores("Gaussian", x, convention="release")
    with pytest.raises(ValueError, match="continuous"):
        D.release_chi2("Gaussian", x)
    with pytest.raises(ValueError, match="finite"):
        D.dice_scores("Gaussian", [0.0, math.nan])
    with pytest.raises(ValueError, match="unknown dice law"):
        D.dice_scores("Zipf", x)


def test_release_chi2_bernoulli_counts_only_exact_zeros_and_ones():
    x = [0.0] * 30 + [1.0] * 60 + [0.5] * 10  # n = 100 includes the 0.5s, as the release's expected counts do
    chi2, p = D.release_chi2("Bernoulli", x)
    assert chi2 == pytest.approx((30 - 30) ** 2 / 30 + (60 - 70) ** 2 / 70)
    assert p == pytest.approx(stats.chi2.sf(chi2, 1))


def test_letter_uniformity_is_scipys_chisquare():
    res = D.letter_uniformity({"A": 126, "B": 468, "C": 351, "D": 55})
    ref = stats.chisquare([126, 468, 351, 55])
    assert res["chi2"] == pytest.approx(ref.statistic) and res["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert D.letter_uniformity([5, 5, 5, 5])["p_value"] == pytest.approx(1.0)
    for bad in ([1, 2, 3], [0, 0, 0, 0], [-1, 2, 3, 4]):
        with pytest.raises(ValueError, match="four non-negative"):
            D.letter_uniformity(bad)


@pytest.mark.parametrize("text,letter", [
    ("Question: ...\nA. x\nB. y\nC. z\nD. w\nCorrect Answer: C\nExplanation: ...", "C"),
    ("**Correct answer:** (B)", "B"),
    ("Correct Answer - D.", "D"),
    ("The correct answer is A", "A"),
    ("correct answer: b", None),  # a lower-case letter is a word, not a key
    ("Correct Answer: C\n... on reflection, Correct Answer: A", "A"),
    ("no key here", None),
    (None, None),
    ("Correct Answer: E", None),
])
def test_read_answer_key(text, letter):
    assert read_answer_key(text) == letter
