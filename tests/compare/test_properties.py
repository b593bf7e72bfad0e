"""Issue 44: property-based checks of ``ub_core.compare`` and the report's aggregations (hypothesis), plus coverage and
level by simulation.

Properties, on random and degenerate inputs (all equal, all 0 or all 1, one cluster, n = 1 or 2, values at the ends
of their range, round-off just outside it):

* every interval lies in the range of what it estimates and never has zero width from a finite sample;
* the interval and the p-value printed beside it agree: p < alpha exactly when the interval excludes 0;
* the MDE is never 0;
* a value a hair outside its range is clipped and counted, one further out is refused with one line.

Simulations use fixed seeds; a rate estimated from R replications has standard deviation sqrt(r (1 - r) / R) and
every check allows 4 of them (a false alarm about once in 16,000 runs of a check)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from ub_core.metrics.paired import P_FLOOR, _tango_z, mcnemar_score, paired_difference, tango_interval
from ub_core.metrics.intervals import (ROUNDOFF, clip_roundoff, clustered_interval, floored_interval,
                                       summarize_values, wilson_interval)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UNIT = (0.0, 1.0)
ALPHA = 0.05


def _mc(rate: float, reps: int) -> float:
    return 4 * math.sqrt(rate * (1 - rate) / reps)


# ----------------------------------------------------------------------------------------------- strategies

def _degenerate_or_random(draw, n, values):
    kind = draw(st.sampled_from(["random", "equal", "ends", "same_both"]))
    if kind == "random":
        return draw(st.lists(values, min_size=n, max_size=n))
    if kind == "equal":
        return [draw(values)] * n
    return draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))


@st.composite
def binary_pairs(draw):
    n = draw(st.integers(1, 60))
    a = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    how = draw(st.sampled_from(["random", "same", "flip", "all0", "all1"]))
    if how == "same":
        b = list(a)
    elif how == "flip":
        b = [1.0 - v for v in a]
    elif how in ("all0", "all1"):
        a = [float(how == "all1")] * n
        b = draw(st.sampled_from([list(a), [1.0 - v for v in a]]))
    else:
        b = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))
    return a, b


@st.composite
def unit_pairs(draw):
    """Paired values in [0, 1], degenerate shapes included, some a hair outside through round-off."""
    n = draw(st.integers(1, 40))
    vals = st.floats(0.0, 1.0, allow_nan=False)
    a = _degenerate_or_random(draw, n, vals)
    b = list(a) if draw(st.booleans()) and draw(st.booleans()) else _degenerate_or_random(draw, n, vals)
    if draw(st.booleans()):  # round-off just outside the range, as a float sum leaves it
        a = [1.0 + 4e-16 if v == 1.0 else (-2e-16 if v == 0.0 else v) for v in a]
    clusters = None
    if draw(st.booleans()):
        k = draw(st.integers(1, 15))
        clusters = [i % k for i in range(n)]
    return a, b, clusters


def _check_consistent(res, low_end=-1.0, high_end=1.0):
    lo, hi, p = res["ci_low"], res["ci_high"], res["p_value"]
    assert low_end <= lo <= res["diff"] <= hi <= high_end, res
    assert hi > lo, res  # never zero width
    assert P_FLOOR <= p <= 1.0, res
    assert res["mde"] is not None and res["mde"] > 0, res
    excludes_zero = lo > 0 or hi < 0
    # p < alpha exactly when 0 is outside; at the boundary root-finding and float error decide, so skip a hair of it
    if not (abs(p - ALPHA) < 1e-7 or min(abs(lo), abs(hi)) < 1e-9):
        assert (p < ALPHA) == excludes_zero, res


# ----------------------------------------------------------------------------------------------- properties

@SETTINGS
@given(binary_pairs())
def test_pass_fail_interval_in_range_nonzero_and_agrees_with_p(pair):
    a, b = pair
    res = paired_difference(a, b, bounds=UNIT)
    assert res["test"] == "McNemar score (Tango interval)"
    _check_consistent(res)
    assert res["p_value"] == mcnemar_score(a, b)


@SETTINGS
@given(unit_pairs())
def test_bounded_scores_interval_in_range_nonzero_and_agrees_with_p(case):
    a, b, clusters = case
    res = paired_difference(a, b, clusters, bounds=UNIT)
    bad = sum(v != min(1.0, max(0.0, v)) for v in a)
    assert res["clipped"] == bad  # round-off clipped and counted, never dropped
    assert res["n_pairs"] == len(a)
    if res["test"].startswith("none"):  # one non-binary pair: nothing can be said, and it says so
        assert len(a) == 1 and res["ci_low"] is None and res["p_value"] is None
        return
    _check_consistent(res)


@SETTINGS
@given(st.integers(1, 400), st.data())
def test_tango_interval_inverts_the_score_test(n, data):
    n10 = data.draw(st.integers(0, n))
    n01 = data.draw(st.integers(0, n - n10))
    low, high = tango_interval(n10, n01, n)
    z = stats.norm.ppf(0.975)
    d = (n10 - n01) / n
    assert -1 <= low <= d <= high <= 1 and high > low
    for end, sign in ((low, 1), (high, -1)):  # an inner end is where |Z| = z exactly
        if -1 < end < 1:
            assert _tango_z(end, n10, n01, n) == pytest.approx(sign * z, abs=1e-6)
    if n10 + n01:  # at 0 the score statistic is McNemar's
        assert _tango_z(0.0, n10, n01, n) == pytest.approx((n10 - n01) / math.sqrt(n10 + n01), abs=1e-9)


@SETTINGS
@given(st.floats(-3, 3, allow_nan=False), st.sampled_from([(0.0, 1.0), (0.0, 2.0), (0.0, math.inf)]))
def test_round_off_is_clipped_and_larger_excursions_refused(v, bounds):
    lo, hi = bounds
    w, clipped = clip_roundoff(v, bounds)
    if lo <= v <= hi:
        assert (w, clipped) == (v, False)
    elif min(abs(v - lo), abs(v - hi)) <= ROUNDOFF * max(1, abs(hi) if math.isfinite(hi) else 1):
        assert clipped and lo <= w <= hi
    else:
        assert w is None
    # a float sum a few ulps past the end is round-off
    assert clip_roundoff(np.nextafter(hi, 3.0) if math.isfinite(hi) else 0.0, bounds)[0] is not None
    assert clip_roundoff(lo - 1e-15, bounds) == (lo, True)


@SETTINGS
@given(st.integers(0, 200), st.data())
def test_wilson_in_range_and_never_zero_width(n, data):
    k = data.draw(st.integers(0, n))
    lo, hi = wilson_interval(k, n)
    assert 0 <= lo <= hi <= 1 and hi > lo
    if n:
        assert lo <= k / n <= hi


@SETTINGS
@given(st.integers(1, 30), st.data())
def test_report_means_intervals_in_range_and_never_zero_width(n, data):
    vals = data.draw(st.one_of(st.lists(st.floats(0, 1), min_size=n, max_size=n),
                               st.just([data.draw(st.sampled_from([0.0, 1.0, 0.3]))] * n)))
    k = data.draw(st.integers(1, 12))
    clusters = [i % k for i in range(n)]
    m = float(np.mean(vals))
    for lo, hi in (clustered_interval(vals, clusters, n_resamples=200, bounds=UNIT),
                   (lambda s: (s["low"], s["high"]))(summarize_values(vals, n_resamples=200, bounds=UNIT))):
        assert 0.0 <= lo <= hi <= 1.0 and hi > lo, (vals, lo, hi)
        assert lo - 1e-12 <= m <= hi + 1e-12


def test_floored_interval_is_wilson_at_the_ends():
    z = stats.norm.ppf(0.975)
    for n in (1, 2, 20, 528):
        assert floored_interval(0.0, 0.0, 0.0, n, UNIT) == pytest.approx(wilson_interval(0, n))
        assert floored_interval(1.0, 1.0, 1.0, n, UNIT) == pytest.approx(wilson_interval(n, n))
        lo, hi = floored_interval(1.0, 1.0, 1.0, n, (0.0, 2.0))
        assert hi - lo == pytest.approx(min(2.0, 2 * z * z / (n + z * z)))


# ----------------------------------------------------------------------------------------------- simulations

@pytest.mark.parametrize("n,p10,p01", [(20, 0.05, 0.05), (50, 0.2, 0.1), (100, 0.02, 0.0), (30, 0.0, 0.0)])
def test_pass_fail_interval_covers_and_test_holds_its_level(n, p10, p01):
    """Tango's interval covers p10 - p01 about 95% of the time (at least 95% less Monte-Carlo error, and less
    the small-sample shortfall Fagerland et al. 2014 report, under 1.5 points); at p10 = p01 the McNemar score test
    rejects at most 5% (plus Monte-Carlo error)."""
    reps = 1000
    rng = np.random.default_rng(44)
    probs = [p10, p01, 1 - p10 - p01]
    covered = rejected = 0
    for counts in rng.multinomial(n, probs, size=reps):
        lo, hi = tango_interval(int(counts[0]), int(counts[1]), n)
        covered += lo <= p10 - p01 <= hi
        if p10 == p01:
            rejected += not (lo <= 0 <= hi)
    cov = covered / reps
    assert cov >= 0.95 - _mc(0.95, reps) - 0.015, cov
    if p10 == p01:
        assert rejected / reps <= 0.05 + _mc(0.05, reps), rejected / reps


def test_bounded_scores_interval_covers_at_small_n():
    """t with the SE floor on [0, 1]-valued scores (Beta-distributed, skewed, n = 10 and 40): coverage at least 95%
    less Monte-Carlo error and the t interval's own skewness shortfall (1.5 points)."""
    reps = 800
    rng = np.random.default_rng(4)
    for n in (10, 40):
        covered = 0
        for _ in range(reps):
            a, b = rng.beta(0.5, 3, n), rng.beta(0.5, 4, n)
            res = paired_difference(a, b, bounds=UNIT)
            covered += res["ci_low"] <= (0.5 / 3.5 - 0.5 / 4.5) <= res["ci_high"]
        assert covered / reps >= 0.95 - _mc(0.95, reps) - 0.015, (n, covered / reps)
