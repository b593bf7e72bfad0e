"""The SE floor of the paired t stands in only where the differences show (next to) no spread.

Two findings: at n = 448 with an SD of the differences of 0.03 (usual for KS distance or JSD) the floor R z / (n + z^2)
replaced the observed SE, so coverage was 1.000 and the power to see 0.004 was 0.002 (a paired t has 0.80); and
round-off in the differences (50 pairs of 0.5 vs 0.4: SE 2e-18) switched the no-spread case off, giving a zero-width
interval and p = 2e-308.

Simulations use fixed seeds; a rate estimated from R replications has standard deviation sqrt(r (1 - r) / R), and
each check allows 4 of them (a false alarm about once in 16,000 runs)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from ub_core.metrics.intervals import ROUNDOFF
from ub_core.metrics.paired import paired_difference, se_floor

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mc(rate: float, reps: int) -> float:
    return 4 * math.sqrt(rate * (1 - rate) / reps)


def _paired_t_power(effect: float, sd: float, n: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t test: P(|T| > t_crit) with T noncentral t on n - 1 df."""
    df, nc = n - 1, effect / (sd / math.sqrt(n))
    crit = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def test_floor_does_not_override_varying_data_at_n_448():
    reps, n, sd, effect = 1500, 448, 0.03, 0.004
    rng = np.random.default_rng(53)
    covered = rejected = floored = 0
    for _ in range(reps):
        base = rng.uniform(0.3, 0.7, n)
        a = base + rng.normal(effect, sd, n)
        res = paired_difference(a, base, bounds=(0.0, 1.0))
        covered += res["ci_low"] <= effect <= res["ci_high"]
        rejected += res["p_value"] < 0.05
        floored += res["se_basis"] != "observed"
    cov, power, expected = covered / reps, rejected / reps, _paired_t_power(effect, sd, n)
    assert floored == 0
    assert abs(cov - 0.95) <= _mc(0.95, reps), cov
    assert abs(power - expected) <= _mc(expected, reps), (power, expected)


def test_compare_says_which_se_was_used():
    rng = np.random.default_rng(7)
    base = rng.uniform(0.3, 0.7, 448)
    varying = paired_difference(base + rng.normal(0.004, 0.03, 448), base, bounds=(0.0, 1.0))
    assert varying["test"] == "paired t" and varying["se_basis"] == "observed"
    assert "sd(d) / sqrt(n)" in varying["se_why"]
    flat = paired_difference([0.5] * 20, [0.5] * 20, bounds=(0.0, 1.0))
    assert flat["test"] == "paired t (SE floor)" and flat["se_basis"] == "floor"
    assert "no spread" in flat["se_why"]


def test_round_off_does_not_switch_the_no_spread_case_off():
    res = paired_difference([0.5] * 50, [0.4] * 50)
    assert res["se_basis"] == "floor" and res["test"] == "paired t (SE floor)"
    assert res["se"] == se_floor(50, 0.5 - 0.4)  # R: the observed range of both runs' values (open range)
    assert res["ci_high"] - res["ci_low"] > 0.01
    assert res["p_value"] > 1e-100


@st.composite
def constant_shift(draw):
    """Per-problem values of many magnitudes shifted by one constant: the differences are that constant up to
    round-off (which differs from problem to problem), on every scale from 1e-6 to 1e6, bounded or open."""
    n = draw(st.integers(2, 120))
    scale = 10.0 ** draw(st.integers(-6, 6))
    base = draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n))
    shift = draw(st.floats(-0.5, 0.5).filter(lambda s: abs(s) > 1e-3))
    b = [v * scale for v in base]
    a = [v + shift * scale for v in b]
    bounded = draw(st.booleans())
    return a, b, ((-1.0 * scale, 2.0 * scale) if bounded else None)


@SETTINGS
@given(constant_shift())
def test_round_off_in_the_differences_is_no_spread_on_every_scale(case):
    a, b, bounds = case
    res = paired_difference(a, b, bounds=bounds)
    assert res["se_basis"] == "floor", res
    width = (bounds[1] - bounds[0]) if bounds else (max(a + b) - min(a + b))
    assert res["se"] == se_floor(len(a), width)
    assert res["ci_high"] - res["ci_low"] > 0 and res["mde"] > 0 and res["p_value"] > 1e-300


@st.composite
def real_spread(draw):
    """Differences whose spread is far above round-off (SD at least 1e-6 of the data's scale), on many scales."""
    n = draw(st.integers(2, 200))
    scale = 10.0 ** draw(st.integers(-6, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rel_sd = 10.0 ** draw(st.floats(-6, 0))
    rng = np.random.default_rng(seed)
    b = rng.uniform(0.2, 0.8, n) * scale
    d = rng.normal(0.0, rel_sd * scale, n)
    d[0], d[1] = d[0] + rel_sd * scale, d[1] - rel_sd * scale  # never all equal
    return b + d, b, draw(st.booleans())


@SETTINGS
@given(real_spread())
def test_where_differences_vary_the_observed_se_is_used(case):
    a, b, bounded = case
    scale = float(np.max(np.abs(np.concatenate([a, b]))))
    bounds = (-10 * scale, 10 * scale) if bounded else None
    res = paired_difference(a, b, bounds=bounds)
    d = np.asarray(a) - np.asarray(b)
    assert res["se_basis"] == "observed" and res["test"] == "paired t"
    assert math.isclose(res["se"], float(np.std(d, ddof=1) / math.sqrt(len(d))), rel_tol=1e-9)
    assert ROUNDOFF * scale < res["se"]
