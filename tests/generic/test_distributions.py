"""ub_core.distributions: samplers agree with analytic moments and with scipy's CDF/PMF; validation is one line.

Tolerances. With n i.i.d. draws the sample mean has standard error sd/sqrt(n), and the sample variance has
standard error sqrt((mu4 - sd^4)/n), where mu4 is the fourth central moment (estimated from the same draws). We
accept |estimate - truth| <= 5 standard errors: a correct sampler fails one check with probability 5.7e-7, so
about 1e-4 over the ~200 checks here, and the seeds are fixed, so the outcome is deterministic. Variance is
checked only where the fourth moment is finite (else its standard error does not exist), the mean only where the
variance is finite.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ub_core import distributions as D
from ub_core.problems.ksn.regimes import REGIMES

N = 200_000
Z = 5.0

# Families / regimes whose fourth moment is infinite: the variance check has no standard error there.
INFINITE_FOURTH = {("students_t", "spread"), ("pareto", "spread"), ("frechet", "spread"),
                   ("multivariate_t", "spread"), ("power_law", "extra")}

EXTRA_PARAMS = {
    "skew_normal": {"a": 4, "loc": 1, "scale": 2},
    "power_law": {"alpha": 3.5, "xmin": 2},
    "empirical_discrete": {"values": [2, 3, 4], "pvals": [0.25, 0.5, 0.25]},
    "mixture": {"components": [{"family": "normal", "params": {"loc": 0, "scale": 1}, "weight": 0.3},
                               {"family": "poisson", "params": {"lam": 20}, "weight": 0.7}]},
}

CASES = [(f, r, REGIMES[f][r]) for f in D.TABLE10_FAMILIES for r in ("concentrated", "spread")]
CASES += [(f, "extra", p) for f, p in EXTRA_PARAMS.items()]


def test_table10_has_40_families_and_extras():
    assert len(D.TABLE10_FAMILIES) == 40
    assert set(D.ODDS_EXTRA_FAMILIES) <= set(D.FAMILIES)
    groups = {D.FAMILIES[f].group for f in D.TABLE10_FAMILIES}
    assert groups == {"continuous_bounded", "continuous_semi_infinite", "continuous_real_line", "discrete_finite",
                      "discrete_infinite", "joint", "mixed", "non_numeric"}
    # table 10 group sizes (Mixture is a separate family here)
    sizes = {g: sum(D.FAMILIES[f].group == g for f in D.TABLE10_FAMILIES) for g in groups}
    assert sizes == {"continuous_bounded": 6, "continuous_semi_infinite": 11, "continuous_real_line": 5,
                     "discrete_finite": 6, "discrete_infinite": 5, "joint": 5, "mixed": 1, "non_numeric": 1}


@pytest.mark.parametrize("family,regime,params", CASES, ids=[f"{f}-{r}" for f, r, _ in CASES])
@pytest.mark.slow
def test_sample_moments_match_analytic(family, regime, params):
    x = D.sample(family, params, N, seed=12345)
    assert x.shape == (N,) and x.dtype == float and np.all(np.isfinite(x))
    mean, var = D.moments(family, params)
    lo, hi = D.support_bounds(family, params)
    assert x.min() >= lo - 1e-12 and x.max() <= hi + 1e-12
    if math.isfinite(var):
        se_mean = math.sqrt(var / N)
        assert abs(x.mean() - mean) <= Z * se_mean + 1e-12, (x.mean(), mean, se_mean)
        if (family, regime) not in INFINITE_FOURTH:
            m4 = np.mean((x - x.mean()) ** 4)
            se_var = math.sqrt(max(m4 - var * var, 0.0) / N)
            assert abs(x.var(ddof=1) - var) <= Z * se_var + 1e-12, (x.var(), var, se_var)


def _pmf_chisquare_pvalue(x, dist):
    values, counts = np.unique(x, return_counts=True)
    expected = dist.pmf(values) * x.size
    # pool the cells with small expectation into one, so the chi-square approximation holds (expected >= 5)
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum() + (x.size - counts.sum()))
    exp = np.append(expected[big], x.size - expected[big].sum())
    keep = exp > 0
    return stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue


# compound_poisson, rectified_gaussian and mixtures have no scipy counterpart: moments above, CDF below.
SCIPY_CASES = [c for c in CASES if D.FAMILIES[c[0]].scipy_dist is not None]


@pytest.mark.parametrize("family,regime,params", SCIPY_CASES, ids=[f"{f}-{r}" for f, r, _ in SCIPY_CASES])
def test_sampler_matches_scipy_distribution(family, regime, params):
    dist = D.frozen(family, params)
    x = D.sample(family, params, 20_000, seed=777)
    if D.support_kind(family, params) == "continuous":
        p = stats.kstest(x, dist.cdf).pvalue
    else:
        p = _pmf_chisquare_pvalue(x, dist)
    # A correct sampler gives a uniform p-value; 1e-6 keeps false failures negligible over ~85 cases.
    assert p > 1e-6, p


def test_same_seed_same_draws_and_generator_accepted():
    a = D.sample("gamma", {"shape": 2, "scale": 3}, 1000, seed=5)
    b = D.sample("gamma", {"shape": 2, "scale": 3}, 1000, seed=5)
    assert np.array_equal(a, b)
    rng = np.random.default_rng(5)
    assert np.array_equal(D.sample("gamma", {"shape": 2, "scale": 3}, 1000, seed=rng), a)


def test_permutation_family_returns_permutations():
    x = D.sample("uniform_permutation", {"n": 4}, 500, seed=1)
    assert x.shape == (500, 4)
    assert all(sorted(row) == [0, 1, 2, 3] for row in x.tolist())


def test_categorical_codes_and_labels():
    p = {"pvals": [0.2, 0.8], "labels": ["heads", "tails"]}
    x = D.sample("categorical", p, 10_000, seed=3)
    assert set(np.unique(x)) == {0.0, 1.0}
    # Binomial count of code 1: sd = sqrt(n p q) = 40, 5 sd = 200
    assert abs(x.sum() - 8000) <= 200
    assert "'heads' with probability 0.2" in D.describe("categorical", p)


@pytest.mark.parametrize("family,params,needle", [
    ("beta", {"a": -1, "b": 2}, "'a' must be > 0"),
    ("normal", {"loc": 0}, "missing parameter 'scale'"),
    ("normal", {"loc": 0, "scale": 1, "mu": 3}, "unknown parameter"),
    ("binomial", {"n": 2.5, "p": 0.5}, "must be an integer"),
    ("uniform", {"low": 3, "high": 1}, "'low' must be < 'high'"),
    ("categorical", {"pvals": [0.5, 0.6]}, "must sum to 1"),
    ("multivariate_normal", {"mean": [0, 0], "cov": [[1, 2], [2, 1]]}, "positive definite"),
    ("dirichlet", {"alpha": [1, 1], "component": 5}, "'component' must be an integer in [0, 1]"),
    ("poisson", {"lam": float("nan")}, "must be finite"),
    ("gamma", {"shape": "2", "scale": 1}, "must be a number"),
    ("mixture", {"components": [{"family": "normal", "params": {"loc": 0, "scale": 1}, "weight": 1.0}]},
     "at least 2"),
    ("no_such_family", {}, "unknown distribution family"),
])
def test_invalid_parameters_give_one_line_errors(family, params, needle):
    with pytest.raises(D.ParameterError) as exc:
        D.sample(family, params, 10, seed=0)
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg


def test_descriptions_state_conventions():
    assert "mean 2" in D.describe("exponential", {"scale": 2}) and "rate 0.5" in D.describe("exponential", {"scale": 2})
    assert "support 1, 2, 3" in D.describe("geometric", {"p": 0.3})
    assert "both ends included" in D.describe("discrete_uniform", {"low": 1, "high": 6})
    assert "scale, not rate" in D.describe("gamma", {"shape": 2, "scale": 3})
    assert "xmin = 2" in D.describe("power_law", {"alpha": 2.5, "xmin": 2})
    assert "failures before success number 3" in D.describe("negative_binomial", {"n": 3, "p": 0.4})


def test_every_family_describes_itself():
    for f in D.TABLE10_FAMILIES:
        for r in ("concentrated", "spread"):
            text = D.describe(f, REGIMES[f][r])
            assert isinstance(text, str) and len(text) > 20


def test_joint_reductions():
    mvn = {"mean": [1, 2], "cov": [[1, 0.5], [0.5, 2]], "reduce": "sum"}
    assert D.moments("multivariate_normal", mvn) == pytest.approx((3.0, 4.0))
    mult = {"n": 10, "pvals": [0.2, 0.3, 0.5], "component": 2}
    assert D.moments("multinomial", mult) == pytest.approx((5.0, 2.5))
    assert "coordinate number 2" in D.describe("dirichlet", {"alpha": [1, 2, 3], "component": 1})


def test_rectified_gaussian_atom_and_continuous_part():
    p = {"loc": 0.5, "scale": 2.0}
    x = D.sample("rectified_gaussian", p, 50_000, seed=9)
    atom = stats.norm.cdf(0, 0.5, 2.0)
    # the atom at 0: binomial proportion, 5 standard errors
    assert abs(np.mean(x == 0) - atom) <= 5 * math.sqrt(atom * (1 - atom) / x.size)
    # the positive part follows the normal truncated to (0, inf)
    pos = x[x > 0]
    tail = stats.truncnorm((0 - 0.5) / 2.0, np.inf, loc=0.5, scale=2.0)
    assert stats.kstest(pos, tail.cdf).pvalue > 1e-6


def test_compound_poisson_pmf_at_zero_and_one():
    # P(0) = exp(-lam); P(1) = lam * p * exp(-lam) (exactly one event, of size 1)
    lam, q = 1.5, 0.6
    x = D.sample("compound_poisson", {"lam": lam, "p": q}, 100_000, seed=4)
    for k, prob in ((0, math.exp(-lam)), (1, lam * q * math.exp(-lam))):
        assert abs(np.mean(x == k) - prob) <= 5 * math.sqrt(prob * (1 - prob) / x.size)
