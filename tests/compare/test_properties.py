"""Property-based checks of ``ub_core.compare`` and the report's aggregations (hypothesis), plus coverage and
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
    for lo, hi in (clustered_interval(vals, clusters, bounds=UNIT),
                   (lambda s: (s["low"], s["high"]))(summarize_values(vals, bounds=UNIT))):
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


# --------------------------------------------------------------------- bounded divergence and degenerate distance means
# The implicit family's bounded divergence and its distance means on degenerate inputs.

from ub_core.logprob.option_logprob import score_row  # noqa: E402
from ub_core.metrics.implicit import (chebyshev_distance, js_divergence_bits, kl_divergence,  # noqa: E402
                                      manhattan_distance, no_mass_distances)
from ub_core.problems import OptionItem  # noqa: E402


@st.composite
def distributions(draw, k=None):
    """A distribution over k outcomes: random, one-hot, uniform, or with zeros (degenerate supports)."""
    k = k or draw(st.integers(1, 8))
    kind = draw(st.sampled_from(["random", "one_hot", "uniform", "zeros"]))
    if kind == "one_hot":
        x = np.zeros(k)
        x[draw(st.integers(0, k - 1))] = 1.0
        return x
    if kind == "uniform":
        return np.full(k, 1.0 / k)
    w = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=k, max_size=k)))
    if kind == "zeros":
        w = w * np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=k, max_size=k)))
    if w.sum() <= 0:
        w[draw(st.integers(0, k - 1))] = 1.0
    return w / w.sum()


@st.composite
def distribution_pairs(draw):
    k = draw(st.integers(1, 8))
    return draw(distributions(k)), draw(distributions(k))


@SETTINGS
@given(distribution_pairs())
def test_jsd_in_range_symmetric_and_zero_iff_equal(pair):
    """JSD in bits lies in [0, 1], is symmetric, is 0 when p = q and positive when they differ (by more than
    round-off), 1 on disjoint supports, and never exceeds the bound JSD <= TV (Lin 1991, theorem 3, in bits:
    JSD <= sum|p - q| / 2)."""
    p, q = pair
    d = js_divergence_bits(p, q)
    assert 0.0 <= d <= 1.0
    assert d == pytest.approx(js_divergence_bits(q, p), abs=1e-12)
    assert js_divergence_bits(p, p) == pytest.approx(0.0, abs=1e-12)
    tv = manhattan_distance(p, q) / 2
    assert d <= tv + 1e-12
    if tv > 1e-6:
        assert d > 0.0
    if not np.any((p > 0) & (q > 0)):
        assert d == pytest.approx(1.0, abs=1e-12)


@SETTINGS
@given(distributions(), st.sampled_from([1e-12, 1e-6, 1e-3]))
def test_no_mass_distances_are_the_worst_of_each_and_kl_is_the_floors(p, floor):
    """A zero-mass item reads as all mass outside the outcomes: the largest Chebyshev (1), Manhattan (2) and JSD
    (1) any prediction can have, and KL = sum_{p_i > 0} p_i ln(p_i (1 + k+ floor) / floor), k+ = #{p_i > 0}: finite,
    and set by the floor."""
    d = no_mass_distances(p, floor)
    assert (d["chebyshev"], d["manhattan"], d["jsd_bits"], d["kl_floored"]) == (1.0, 2.0, 1.0, 1.0)
    k = len(p)
    on = p > 0
    assert d["kl"] == pytest.approx(float(np.sum(p[on] * np.log(p[on] * (1 + on.sum() * floor) / floor))), rel=1e-9)
    assert math.isfinite(d["kl"])
    for q in np.eye(k):  # every real prediction is at most as far
        assert chebyshev_distance(p, q) <= 1.0 and manhattan_distance(p, q) <= 2.0
        assert js_divergence_bits(p, q) <= 1.0


@SETTINGS
@given(st.integers(2, 6), st.data())
def test_every_distance_is_defined_on_every_degenerate_mass(k, data):
    """Any option mass (all zero, one-hot, tiny, summing to less than 1): every distance of the row is a finite
    number in its range, so no item leaves a mean."""
    p = data.draw(distributions(k))
    kind = data.draw(st.sampled_from(["zero", "one_hot", "tiny", "partial"]))
    if kind == "zero":
        m = np.zeros(k)
    elif kind == "one_hot":
        m = np.eye(k)[data.draw(st.integers(0, k - 1))]
    else:
        m = data.draw(distributions(k)) * (1e-300 if kind == "tiny" else data.draw(st.floats(0.01, 1.0)))
    item = OptionItem(id="h", bank="implicit", category="coins", cluster="c", family="f", params={}, prompt="p",
                      options=tuple(str(i + 1) for i in range(k)), probabilities=tuple(float(x) for x in p))
    row = score_row(item, m)
    for key, (lo, hi) in (("chebyshev", (0, 1)), ("manhattan", (0, 2)), ("jsd_bits", (0, 1)),
                          ("kl", (0, math.inf)), ("kl_floor_share", (0, 1))):
        assert math.isfinite(row[key]) and lo <= row[key] <= hi, (key, row[key])
    assert row["no_mass"] == float(not np.any(m > 0))
    if row["no_mass"] == 0.0:
        q = m / m.sum()
        assert row["kl"] == pytest.approx(kl_divergence(p, q), rel=1e-12, abs=1e-15)
