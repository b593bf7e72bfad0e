"""ub_core.metrics: exact permutation KS under ties, KS@N, WDZ, JSD, Lehmer codes, aggregation, TAR.

Tolerances and where they come from.

* Exact KS without ties vs scipy's exact two-sided p-value: both are exact computations of the same number, so
  only rounding separates them; we ask for 1e-9 relative (we measure ~1e-14).
* Exact KS with ties vs brute-force enumeration of every relabelling (tiny samples): exact rational counts,
  1e-12 relative. The two internal algorithms (tie-block DP and lattice rows) are compared at 1e-10 relative.
* Exact KS vs the Monte-Carlo reference with B resamples: the reference is (b + 1) / (B + 1) with
  b ~ Binomial(B, p), so its mean is p + (1 - p) / (B + 1) and its sd sqrt(p (1 - p) / B) (up to O(1/B)).
  We accept |p_mc - p| <= 3 sd + 1 / (B + 1): a correct implementation fails one case with probability ~0.27%;
  the seeds are fixed, so the outcome is deterministic.
* WDZ's fast null vs a loop over the same random splits with scipy.stats.wasserstein_distance: 1e-12 relative
  (the prefix-sum form loses at most a few hundred ulps to cancellation at these sizes).
* JSD vs a reference built on scipy.stats.gaussian_kde: 1e-12 absolute (the Taylor / windowed KDE is accurate
  to ~1e-15 of the peak density).
"""

from __future__ import annotations

import itertools
import math
import warnings
from math import comb

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from ub_core.metrics import ks_exact as KX  # private building blocks are checked too
from ub_core.metrics import intervals as IV
from ub_core.metrics import lehmer_codes as LH
from ub_core.metrics import inputs as SM
from ub_core.metrics import sampling as M
from ub_core.metrics import stability as ST

LN2 = math.log(2.0)


# ============================================================================================ helpers

def _ks_h(a, b) -> int:
    """max |A n_b - B n_a| over the pooled values: the KS statistic times n_a n_b, in integers."""
    a, b = np.asarray(a), np.asarray(b)
    v = np.unique(np.concatenate([a, b]))
    ca = np.searchsorted(np.sort(a), v, side="right")
    cb = np.searchsorted(np.sort(b), v, side="right")
    return int(np.max(np.abs(ca * len(b) - cb * len(a))))


def _brute_force_p(a, b) -> float:
    """P(D* >= D) by enumerating every choice of which pooled points are labelled 'a'."""
    pooled = np.concatenate([np.asarray(a), np.asarray(b)])
    n_a, N = len(a), len(pooled)
    h_obs = _ks_h(a, b)
    hit = total = 0
    idx = np.arange(N)
    for chosen in itertools.combinations(range(N), n_a):
        mask = np.isin(idx, chosen)
        total += 1
        hit += _ks_h(pooled[mask], pooled[~mask]) >= h_obs
    return hit / total


def _internal_pair(a, b):
    a, b = np.asarray(a), np.asarray(b)
    ca, cb = KX._cumulative_counts(a, b)
    h = int(np.max(np.abs(ca * len(b) - cb * len(a))))
    ends = ca + cb
    n, m = min(len(a), len(b)), max(len(a), len(b))
    return KX._ks_perm_blocks(np.diff(ends, prepend=0), n, m, h), KX._ks_perm_lattice(ends, n, m, h)


def _scipy_exact(a, b):
    """scipy's exact two-sided result, or None where scipy fell back to the asymptotic method."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = stats.ks_2samp(a, b, method="exact")
    if any("asymp" in str(w.message).lower() or "exact" in str(w.message).lower() for w in caught):
        return None
    return res


# ============================================================================================ exact KS, no ties

NO_TIE_CASES = [
    (5, 7, 0.0), (5, 7, 1.5), (20, 30, 0.0), (20, 30, 1.0), (50, 100, 0.3), (50, 100, 1.5),
    (100, 1000, 0.0), (100, 1000, 0.8), (7, 10_000, 1.0), (100, 10_000, 0.0), (100, 10_000, 0.3),
    (100, 10_000, 1.0), (300, 300, 0.25), (1500, 1500, 1.0), (2000, 100, 0.4),
]


@pytest.mark.parametrize("n_a,n_b,shift", NO_TIE_CASES)
def test_exact_matches_scipy_without_ties(n_a, n_b, shift):
    rng = np.random.default_rng(n_a * 7919 + n_b + int(shift * 100))
    a = rng.normal(shift, 1.0, n_a)
    b = rng.normal(0.0, 1.0, n_b)
    ref = _scipy_exact(a, b)
    if ref is None:
        pytest.skip("scipy is not exact at these sizes")
    d, p = KX.ks_2samp_exact(a, b)
    assert d == pytest.approx(float(ref.statistic), rel=1e-12)
    assert p == pytest.approx(float(ref.pvalue), rel=1e-9, abs=0.0)


def test_exact_tiny_pvalues_match_scipy():
    """p-values from ~1e-8 down to ~1e-100 keep their relative accuracy (absorbed mass is summed directly)."""
    rng = np.random.default_rng(11)
    seen = []
    for n_a, n_b, shift in [(50, 100, 1.2), (100, 1000, 0.75), (100, 10_000, 0.75), (400, 500, 1.5)]:
        a = rng.normal(shift, 1.0, n_a)
        b = rng.normal(0.0, 1.0, n_b)
        ref = _scipy_exact(a, b)
        assert ref is not None
        d, p = KX.ks_2samp_exact(a, b)
        seen.append(p)
        assert p == pytest.approx(float(ref.pvalue), rel=1e-9, abs=0.0)
    assert min(seen) < 1e-20 and max(seen) < 1e-5


def test_restarting_scans_match_a_plain_loop():
    """The vectorised row scans (one-scale and piecewise log-scale) equal the recurrence they solve."""
    rng = np.random.default_rng(2)
    L = 3000
    x = rng.random(L) * (rng.random(L) < 0.3)
    beta = rng.uniform(0.3, 0.9, L - 1)  # running product drops far below exp(-600): several pieces
    restart = rng.random(L) < 0.01
    ref = np.empty(L)
    ref[0] = x[0]
    for t in range(1, L):
        ref[t] = beta[t - 1] * (0.0 if restart[t - 1] else ref[t - 1]) + x[t]
    got = KX._restarting_scan(x, np.log(beta), restart)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-300)
    short = slice(0, 400)  # one scale suffices here
    B = np.concatenate([[1.0], np.cumprod(beta[:399])])
    got2 = KX._restarting_scan_prod(x[short], B, np.flatnonzero(restart[short]))
    np.testing.assert_allclose(got2, ref[short], rtol=1e-12, atol=1e-300)


# ============================================================================================ exact KS, ties

TIE_SMALL_CASES = [
    ([0, 0, 1, 2], [0, 1, 1, 1, 2, 2, 3]),
    ([1, 1, 1], [0, 1, 2, 2, 2, 2, 2, 3]),
    ([0.0, 0.5, 1.0, 1.0, 0.5], [0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 0.5]),
    ([3, 3, 3, 3], [3, 3, 3, 4, 4, 5, 5]),
    ([0, 1], [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]),
    (["b", "a", "a"], ["c", "b", "b", "a", "c", "c", "b", "a"]),
]


@pytest.mark.parametrize("a,b", TIE_SMALL_CASES + [([0.3, 1.7, -0.2, 2.5], [0.1, 0.9, 1.1, 3.0, -1.0, 0.5, 2.0])])
def test_exact_with_ties_equals_enumeration(a, b):
    d, p = KX.ks_2samp_exact(a, b)
    assert d == pytest.approx(_ks_h(a, b) / (len(a) * len(b)))
    assert p == pytest.approx(_brute_force_p(a, b), rel=1e-12)
    p_blocks, p_lattice = _internal_pair(a, b)
    assert p_blocks == pytest.approx(p, rel=1e-12) and p_lattice == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize("n_a,n_b,shift", [(20, 30, 0.5), (100, 1000, 0.3), (60, 61, 1.0)])
def test_block_and_lattice_algorithms_agree_without_ties(n_a, n_b, shift):
    rng = np.random.default_rng(n_a + n_b)
    p_blocks, p_lattice = _internal_pair(rng.normal(shift, 1, n_a), rng.normal(0, 1, n_b))
    assert p_blocks == pytest.approx(p_lattice, rel=1e-10)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=st.lists(st.integers(0, 4), min_size=1, max_size=6),
       b=st.lists(st.integers(0, 4), min_size=1, max_size=7))
def test_exact_with_ties_equals_enumeration_property(a, b):
    _, p = KX.ks_2samp_exact(a, b)
    assert p == pytest.approx(_brute_force_p(a, b), rel=1e-12, abs=1e-15)
    if _ks_h(a, b) > 0:
        p_blocks, p_lattice = _internal_pair(a, b)
        assert p_blocks == pytest.approx(p_lattice, rel=1e-11, abs=1e-15)


def _discrete_cases():
    rng = np.random.default_rng(2024)
    mixed_b = np.maximum(rng.normal(0.0, 1.0, 3000), 0.0)  # point mass at 0 plus a continuous part
    return {
        "bernoulli": (rng.binomial(1, 0.34, 100), rng.binomial(1, 0.3, 10_000)),
        "poisson": (rng.poisson(4.4, 100), rng.poisson(4.0, 10_000)),
        "categories": (rng.choice(5, 100, p=[0.25, 0.25, 0.2, 0.15, 0.15]), rng.integers(0, 5, 10_000)),
        "lehmer_z1": (rng.choice([0.0, 0.5, 1.0], 100, p=[0.4, 0.3, 0.3]), rng.integers(0, 3, 10_000) / 2),
        "mixed": (np.maximum(rng.normal(0.25, 1.0, 100), 0.0), mixed_b),
    }


DISCRETE = _discrete_cases()


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_block_and_lattice_algorithms_agree(name):
    a, b = DISCRETE[name]
    p_blocks, p_lattice = _internal_pair(a, b)
    assert p_blocks == pytest.approx(p_lattice, rel=1e-10)


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_exact_with_ties_agrees_with_monte_carlo(name):
    a, b = DISCRETE[name]
    d, p = KX.ks_2samp_exact(a, b)
    B = 20_000
    d_mc, p_mc = KX.ks_2samp_permutation_mc(a, b, n_resamples=B, seed=7)
    assert d_mc == d
    assert 1e-3 < p < 0.999, "case should have a p-value the Monte Carlo can resolve"
    tol = 3.0 * math.sqrt(p * (1.0 - p) / B) + 1.0 / (B + 1)
    assert abs(p_mc - p) <= tol, (p, p_mc, tol)


def test_monte_carlo_reference_is_deterministic_and_bounded():
    a, b = DISCRETE["poisson"]
    r1 = KX.ks_2samp_permutation_mc(a, b, n_resamples=500, seed=3)
    assert r1 == KX.ks_2samp_permutation_mc(a, b, n_resamples=500, seed=3)
    assert 1 / 501 <= r1[1] <= 1.0
    with pytest.raises(ValueError):
        KX.ks_2samp_permutation_mc(a, b, n_resamples=0)


# ============================================================================================ exact KS, properties

def test_identical_samples_give_pvalue_one():
    x = np.array([0.3, 1.2, 1.2, 5.0, -1.0])
    assert KX.ks_2samp_exact(x, x) == (0.0, 1.0)
    assert KX.ks_2samp_exact([1, 1, 2], [2, 1, 1, 2, 1, 1]) == (0.0, 1.0)
    assert KX.ks_2samp_exact([4.0], [4.0] * 10) == (0.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(a=st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=30),
       b=st.lists(st.integers(-5, 5), min_size=1, max_size=40))
def test_symmetry_and_ranges(a, b):
    b = [float(v) for v in b]
    d1, p1 = KX.ks_2samp_exact(a, b)
    d2, p2 = KX.ks_2samp_exact(b, a)
    assert d1 == d2 and p1 == p2
    assert 0.0 <= d1 <= 1.0 and 0.0 <= p1 <= 1.0


def test_pvalue_is_a_decreasing_function_of_d_without_ties():
    """Without ties the null distribution depends only on the sizes, so p must fall as D grows."""
    rng = np.random.default_rng(5)
    b = rng.normal(0, 1, 400)
    pairs = sorted(KX.ks_2samp_exact(rng.normal(s, 1, 60), b) for s in np.linspace(-1.0, 1.0, 15))
    for (d1, p1), (d2, p2) in zip(pairs, pairs[1:]):
        assert p2 <= p1 if d2 > d1 else p2 == p1


@pytest.mark.parametrize("a,b", [([], [1.0]), ([1.0], []), ([np.nan, 1.0], [1.0]), ([1.0], ["x"]),
                                 (np.zeros((2, 2)), [1.0])])
def test_invalid_samples_raise(a, b):
    with pytest.raises(ValueError):
        KX.ks_2samp_exact(a, b)


# ============================================================================================ KS@N

def test_ks_at_n_structure_and_short():
    rng = np.random.default_rng(0)
    truth = rng.normal(0, 1, 10_000)
    out = M.ks_at_n(rng.normal(0, 1, 30), truth)
    assert list(out) == list(SM.DEFAULT_NS)
    for n in (1, 2, 5, 10, 20):
        assert set(out[n]) == {"pvalue", "statistic", "pass", "short"}
        assert out[n]["short"] is False and out[n]["pass"] == (out[n]["pvalue"] >= 1e-4)
    for n in (50, 100):
        assert out[n] == {"pvalue": None, "statistic": None, "pass": False, "short": True}


def test_ks_at_n_paper_dispatch():
    rng = np.random.default_rng(1)
    truth = rng.normal(0, 1, 10_000)
    vals = rng.normal(0.1, 1, 100)
    paper = M.ks_at_n(vals, truth, ns=(10, 100), method="paper", support="continuous")
    for n in (10, 100):
        ref = stats.ks_2samp(vals[:n], truth, method="exact")
        assert paper[n]["pvalue"] == float(ref.pvalue)
        assert paper[n]["statistic"] == float(ref.statistic)
    exact = M.ks_at_n(vals, truth, ns=(10, 100), method="exact", support="continuous")
    for n in (10, 100):
        assert exact[n]["pvalue"] == pytest.approx(paper[n]["pvalue"], rel=1e-9)
    dtruth = rng.poisson(3, 10_000)
    dvals = rng.poisson(3, 100)
    for support in ("discrete", "categorical", "permutation", "mixed"):
        got = M.ks_at_n(dvals, dtruth, ns=(5, 100), support=support)
        for n in (5, 100):
            assert got[n]["pvalue"] == KX.ks_2samp_exact(dvals[:n], dtruth)[1]


def test_ks_at_n_paper_route_equals_public_scipy_call():
    """ks_at_n calls scipy's ks_2samp without its axis / NaN-policy wrapper: the same values as the
    public call, bit for bit, with ties, tiny samples and sizes where scipy falls back to the asymptotic law."""
    rng = np.random.default_rng(46)
    ns = (1, 2, 5, 10, 20, 50, 100)
    for case in range(40):
        truth = rng.normal(0, 1, int(rng.choice([50, 1_000, 10_000, 60_000])))
        vals = rng.normal(rng.uniform(-0.3, 0.3), 1, 100)
        if case % 3 == 0:
            truth, vals = np.round(truth, 1), np.round(vals, 1)  # ties
        got = M.ks_at_n(vals, truth, ns=ns, method="paper", support="continuous")
        for n in ns:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ref = stats.ks_2samp(vals[:n], truth, method="exact")
            assert (got[n]["statistic"], got[n]["pvalue"]) == (float(ref.statistic), float(ref.pvalue)), (case, n)


def test_ks_at_n_uses_the_first_values_and_threshold():
    truth = np.arange(1000) / 1000.0
    vals = np.concatenate([np.full(5, 0.5), np.linspace(0.0, 1.0, 95)])  # collapsed first, spread later
    out = M.ks_at_n(vals, truth, ns=(5, 100), method="exact", support="continuous")
    assert out[5]["statistic"] == pytest.approx(0.5, abs=1e-3)
    assert out[5]["pvalue"] < out[100]["pvalue"]
    strict = M.ks_at_n(vals, truth, ns=(5,), threshold=1.0, method="exact")
    assert strict[5]["pass"] is False


def test_ks_at_n_oracle_passes_and_collapse_fails():
    rng = np.random.default_rng(9)
    truth = rng.poisson(6, 10_000)
    oracle = M.ks_at_n(rng.poisson(6, 100), truth, support="discrete")
    assert all(r["pass"] for r in oracle.values())
    collapse = M.ks_at_n(np.full(100, 6), truth, support="discrete")
    assert not collapse[100]["pass"] and collapse[1]["pass"]


@pytest.mark.parametrize("kw", [{"method": "mc"}, {"support": "ordinal"}, {"threshold": 0.0},
                                {"threshold": 1.5}, {"ns": (0,)}, {"ns": (2.5,)}])
def test_ks_at_n_validation(kw):
    with pytest.raises(ValueError):
        M.ks_at_n([1.0, 2.0], [1.0, 2.0, 3.0], **kw)


def test_ks_methods_constant():
    assert SM.KS_METHODS == ("paper", "exact")


# ============================================================================================ WDZ

@pytest.mark.parametrize("seed", range(4))
def test_w1_equals_scipy_wasserstein(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1, 37)
    b = rng.exponential(1, 251)
    if seed % 2:
        a, b = np.round(a, 1), np.round(b, 1)  # ties
    assert M.wdz(a, b, resamples=10)["w1"] == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-12)


@pytest.mark.parametrize("n_a,n_b,round_to", [(13, 29, None), (29, 13, 0), (20, 20, None), (1, 9, None),
                                              (6, 5, 1)])
def test_wdz_null_matches_slow_loop(n_a, n_b, round_to):
    rng = np.random.default_rng(n_a + 100 * n_b)
    a = rng.normal(0.5, 1, n_a)
    b = rng.exponential(1, n_b)
    if round_to is not None:
        a, b = np.round(a, round_to), np.round(b, round_to)
    R, seed = 300, 17
    res = M.wdz(a, b, resamples=R, seed=seed)
    # the same random splits, evaluated the slow way
    xs = np.sort(np.concatenate([a, b]))
    N, s = xs.size, min(n_a, n_b)
    marked = M._random_subsets(np.random.default_rng(seed), N, s, R)
    slow = np.array([stats.wasserstein_distance(xs[row], np.delete(xs, row)) for row in marked])
    np.testing.assert_allclose(M._split_w1(np.diff(xs), marked, s), slow, rtol=1e-12, atol=1e-300)
    assert res["null_mean"] == pytest.approx(slow.mean(), rel=1e-12)
    assert res["null_sd"] == pytest.approx(slow.std(), rel=1e-10)
    w1 = stats.wasserstein_distance(a, b)
    assert res["w1_debiased"] == pytest.approx(w1 - slow.mean(), rel=1e-9, abs=1e-12)
    if slow.std() > 0:
        assert res["z"] == pytest.approx((w1 - slow.mean()) / slow.std(), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("N,s", [(6, 2), (7, 3), (10, 5), (12, 9)])
def test_random_subsets_are_uniform(N, s):
    """Both samplers (rejection for small s, Floyd otherwise) give every s-subset equal probability:
    chi-square goodness of fit over all C(N, s) subsets, accepted unless p < 1e-4 (fixed seed)."""
    R = 40 * comb(N, s)
    marked = M._random_subsets(np.random.default_rng(N * s), N, s, R)
    assert np.all(np.diff(marked, axis=1) > 0)
    keys = (marked * (N ** np.arange(s))).sum(axis=1)
    _, counts = np.unique(keys, return_counts=True)
    assert counts.size == comb(N, s)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_wdz_behaviour():
    rng = np.random.default_rng(3)
    b = rng.normal(0, 1, 10_000)
    same = M.wdz(rng.normal(0, 1, 100), b, seed=1)
    shifted = M.wdz(rng.normal(1.0, 1, 100), b, seed=1)
    assert abs(same["z"]) < 4.0 and shifted["z"] > 10.0
    assert set(same) == {"w1", "w1_debiased", "z", "null_mean", "null_sd"}
    assert M.wdz(b[:50], b[50:90], seed=4) == M.wdz(b[:50], b[50:90], seed=4)
    assert M.wdz(b[:50], b[50:90], seed=4)["null_mean"] != M.wdz(b[:50], b[50:90], seed=5)["null_mean"]


def test_wdz_degenerate_cases_are_finite():
    const = M.wdz([2.0, 2.0, 2.0], [2.0] * 7)
    assert const == {"w1": 0.0, "w1_debiased": 0.0, "z": 0.0, "null_mean": 0.0, "null_sd": 0.0}
    one_each = M.wdz([1.0], [3.0])  # every split has W1 = 2
    assert one_each["w1"] == 2.0 and one_each["z"] == 0.0 and one_each["w1_debiased"] == 0.0
    rounded = M.wdz([0.1], [0.3])  # constant null up to rounding noise (sd ~ 1e-17): still z = 0, not noise
    assert rounded["z"] == 0.0 and rounded["w1_debiased"] == 0.0
    single = M.wdz([5.0], [1.0, 2.0, 3.0, 4.0, 6.0])
    assert all(math.isfinite(v) for v in single.values())
    with pytest.raises(ValueError):
        M.wdz([1.0, np.inf], [1.0])
    with pytest.raises(ValueError):
        M.wdz([], [1.0])
    with pytest.raises(ValueError):
        M.wdz([1.0], [2.0], resamples=0)


# ============================================================================================ JSD

def _jsd_reference(a, b, grid_size=512, pad=0.1):
    a, b = np.asarray(a, float), np.asarray(b, float)
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    w = hi - lo
    grid = np.linspace(lo - pad * w, hi + pad * w, grid_size)
    p = stats.gaussian_kde(a)(grid)
    q = stats.gaussian_kde(b)(grid)
    p, q = p / p.sum(), q / q.sum()
    m = 0.5 * (p + q)

    def kl(u, v):
        return float(np.sum(u[u > 0] * np.log(u[u > 0] / v[u > 0])))

    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def _jsd_cases():
    rng = np.random.default_rng(12)
    return {
        "normal": (rng.normal(0.3, 1, 100), rng.normal(0, 1, 10_000)),
        "small": (rng.normal(0, 1, 12), rng.normal(0.5, 2, 30)),
        "lognormal": (rng.lognormal(0, 1, 100), rng.lognormal(0, 1.2, 5000)),
        "cauchy": (rng.standard_cauchy(100), rng.standard_cauchy(5000)),  # wide grid: direct summation
        "poisson": (rng.poisson(4, 100).astype(float), rng.poisson(4, 5000).astype(float)),
        "bimodal": (np.r_[rng.normal(-5, 1, 50), rng.normal(5, 1, 50)], rng.normal(0, 3, 5000)),
        "two_points": (np.array([0.0, 1.0]), rng.normal(0, 1, 50)),
    }


JSD_CASES = _jsd_cases()


@pytest.mark.parametrize("name", sorted(JSD_CASES))
def test_jsd_matches_scipy_kde_reference(name):
    a, b = JSD_CASES[name]
    assert M.jsd(a, b) == pytest.approx(_jsd_reference(a, b), abs=1e-12)


def test_jsd_properties():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 1, 300)
    y = rng.gamma(2.0, 1.0, 200)
    assert M.jsd(x, x) == 0.0
    assert M.jsd(x, y) == pytest.approx(M.jsd(y, x), abs=1e-15)
    assert 0.0 < M.jsd(x, y) <= LN2
    far = M.jsd(rng.normal(0, 1, 100), rng.normal(100, 1, 10_000))
    assert far == pytest.approx(LN2, abs=1e-9)


def test_jsd_degenerate_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert M.jsd([3.0, 3.0], [3.0] * 5) == 0.0  # union range zero
        assert M.jsd([1.0] * 4, [2.0] * 6) == pytest.approx(LN2, abs=1e-15)  # two point masses apart
        assert M.jsd([1.0], [2.0]) == pytest.approx(LN2, abs=1e-15)
        rng = np.random.default_rng(0)
        spread = rng.normal(0, 1, 500)
        v = M.jsd([0.0] * 100, spread)  # point mass against a KDE
        assert 0.0 < v < LN2 and math.isfinite(v)
        v1 = M.jsd([0.0], spread)  # a single value is a point mass too
        assert v1 == pytest.approx(v, abs=1e-15)
        tiny = M.jsd(rng.normal(0, 1e-9, 100), rng.normal(0, 100, 1000))  # KDE narrower than a grid step
        assert 0.0 <= tiny <= LN2 and math.isfinite(tiny)


def test_jsd_validation():
    for a, b in (([], [1.0]), ([np.nan], [1.0]), ([1.0], [np.inf])):
        with pytest.raises(ValueError):
            M.jsd(a, b)
    with pytest.raises(ValueError):
        M.jsd([1.0, 2.0], [3.0], grid_size=1)
    with pytest.raises(ValueError):
        M.jsd([1.0, 2.0], [3.0], pad=-0.1)


# ============================================================================================ Lehmer codes

def test_lehmer_known_values():
    assert LH.lehmer([2, 0, 1]) == (2, 0, 0)
    assert LH.lehmer([0, 1, 2, 3]) == (0, 0, 0, 0)
    assert LH.lehmer([3, 2, 1, 0]) == (3, 2, 1, 0)
    assert LH.lehmer(["c", "a", "b"]) == (2, 0, 0)
    assert LH.lehmer((0.5, -1.0)) == (1, 0)
    assert LH.lehmer([7]) == (0,)
    assert LH.lehmer_normalized([3, 0, 2, 1]) == (1.0, 0.0, 1.0, 0.0)
    assert LH.lehmer_z1([7]) == 0.0
    assert LH.lehmer_z1([1, 3, 0, 2]) == pytest.approx(1 / 3)


@pytest.mark.parametrize("n", range(1, 7))
def test_lehmer_is_a_bijection_and_z1_uniform(n):
    perms = list(itertools.permutations(range(n)))
    codes = [LH.lehmer(p) for p in perms]
    assert len(set(codes)) == math.factorial(n)
    assert all(all(0 <= c[i] <= n - 1 - i for i in range(n)) for c in codes)
    z1 = [LH.lehmer_z1(p) for p in perms]
    assert z1 == [c[0] / (n - 1) if n > 1 else 0.0 for c in codes]
    values, counts = np.unique(z1, return_counts=True)
    assert values.size == n and set(counts.tolist()) == {math.factorial(n - 1)}
    np.testing.assert_array_equal(LH.lehmer_z1_many(np.array(perms)), np.array(z1))


def test_lehmer_validation():
    with pytest.raises(ValueError):
        LH.lehmer([1, 1, 2])
    with pytest.raises(ValueError):
        LH.lehmer("abc")
    with pytest.raises(ValueError):
        LH.lehmer_z1([])
    with pytest.raises(ValueError):
        LH.lehmer_z1_many(np.array([[0, 0, 1]]))
    with pytest.raises(ValueError):
        LH.lehmer_z1_many(np.array([0, 1, 2]))
    assert LH.lehmer_z1_many(np.zeros((3, 1))).tolist() == [0.0, 0.0, 0.0]


# ============================================================================================ aggregation

@pytest.mark.parametrize("k,n,conf", [(0, 10, 0.95), (3, 10, 0.95), (10, 10, 0.9), (57, 448, 0.95),
                                      (1, 2, 0.99), (200, 448, 0.5)])
def test_wilson_matches_scipy(k, n, conf):
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=conf, method="wilson")
    low, high = IV.wilson_interval(k, n, conf)
    assert low == pytest.approx(ref.low, abs=1e-12) and high == pytest.approx(ref.high, abs=1e-12)


def test_wilson_edges():
    assert IV.wilson_interval(0, 0) == (0.0, 1.0)
    for bad in ((3, 2), (-1, 2), (1.5, 2)):
        with pytest.raises(ValueError):
            IV.wilson_interval(*bad)
    with pytest.raises(ValueError):
        IV.wilson_interval(1, 2, confidence=1.0)


def test_bootstrap_interval():
    rng = np.random.default_rng(0)
    x = rng.normal(2.0, 1.0, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = IV.bootstrap_interval(x)
        assert low < x.mean() < high and high - low == pytest.approx(2 * 1.96 / math.sqrt(200), rel=0.2)
        assert IV.bootstrap_interval(x, seed=3) == IV.bootstrap_interval(x, seed=3)
        bca = IV.bootstrap_interval(x, method="BCa", n_resamples=999)
        assert bca[0] < x.mean() < bca[1]
        assert IV.bootstrap_interval([4.0] * 10) == (4.0, 4.0)
        assert IV.bootstrap_interval([4.0]) == (4.0, 4.0)
        assert IV.bootstrap_interval([1.0, 2.0], statistic=np.median)[0] >= 1.0
    with pytest.raises(ValueError):
        IV.bootstrap_interval([])
    with pytest.raises(ValueError):
        IV.bootstrap_interval([1.0, np.nan])


def test_summaries():
    rate = IV.summarize_rate([1.0, 0.0, True, None, float("nan"), 1])
    assert rate["n"] == 4 and rate["dropped"] == 2 and rate["mean"] == 0.75
    assert (rate["low"], rate["high"]) == IV.wilson_interval(3, 4)
    assert IV.summarize_rate([]) == {"mean": None, "low": 0.0, "high": 1.0, "n": 0, "dropped": 0}
    with pytest.raises(ValueError):
        IV.summarize_rate([0.5])
    vals = IV.summarize_values([1.0, None, 3.0, float("nan"), 2.0])
    assert vals["mean"] == 2.0 and vals["n"] == 3 and vals["dropped"] == 2
    assert vals["low"] <= 2.0 <= vals["high"]
    assert IV.summarize_values([None, None]) == {"mean": None, "low": None, "high": None, "n": 0,
                                                "dropped": 2}
    # one value on an open range: nothing can be said (no zero-width interval claiming certainty)
    assert IV.summarize_values([5.0]) == {"mean": 5.0, "low": None, "high": None, "n": 1, "dropped": 0}
    # the t interval: mean +/- t_{n-1} sd / sqrt(n)
    lo, hi = vals["low"], vals["high"]
    assert (lo, hi) == pytest.approx((2.0 - stats.t.ppf(0.975, 2) / math.sqrt(3),
                                      2.0 + stats.t.ppf(0.975, 2) / math.sqrt(3)))


# ============================================================================================ TAR

def test_total_agreement_rate():
    runs = [["a", "b", "c", None], ["a", "x", "c", None], ["a", "b", "c", None]]
    assert ST.total_agreement_rate(runs) == 0.75
    assert ST.total_agreement_rate([[1, 2, 3]]) == 1.0
    assert ST.total_agreement_rate([[float("nan"), 1.0], [float("nan"), 2.0]]) == 0.5
    assert ST.total_agreement_rate([[1], [1.0]]) == 1.0
    for bad in ([], [[1, 2], [1]], [[], []], "ab"):
        with pytest.raises(ValueError):
            ST.total_agreement_rate(bad)


# ------------------------------------------------------------------ clustered interval

def test_clustered_interval_is_the_t_interval_of_the_cluster_means_when_clusters_are_constant_and_equal_sized():
    # 20 clusters of 5 identical values: the CR1 error of the item mean is the plain error of the 20 cluster means
    # (sqrt(C / (C - 1)) turns the population SD into the sample one), and the interval uses t on 19 degrees of
    # freedom
    rng = np.random.default_rng(3)
    cluster_means = rng.normal(size=20)
    values = np.repeat(cluster_means, 5)
    labels = np.repeat([f"pair{i}" for i in range(20)], 5)
    low, high = IV.clustered_interval(values, labels)
    se = np.std(cluster_means, ddof=1) / math.sqrt(20)
    half = stats.t.ppf(0.975, 19) * se
    assert (low, high) == pytest.approx((cluster_means.mean() - half, cluster_means.mean() + half), rel=1e-12)


def test_clustered_interval_is_wider_than_iid_when_items_share_clusters():
    rng = np.random.default_rng(5)
    values = np.repeat(rng.normal(size=30), 10) + rng.normal(scale=0.01, size=300)
    labels = np.repeat(np.arange(30), 10)
    lo_c, hi_c = IV.clustered_interval(values, labels)
    lo_i, hi_i = IV.clustered_interval(values, np.arange(300))
    # between-cluster variance dominates: the clustered SE is about sqrt(10) times the iid one
    assert (hi_c - lo_c) / (hi_i - lo_i) > 2.0


@pytest.mark.parametrize("values, labels", [([], []), ([1.0, 2.0], ["a"]), ([1.0, float("nan")], ["a", "b"])])
def test_clustered_interval_rejects_bad_input(values, labels):
    with pytest.raises(ValueError):
        IV.clustered_interval(values, labels)


def test_clustered_interval_says_nothing_without_spread_on_an_open_range_and_floors_on_a_closed_one():
    # one cluster: no spread between clusters; equal values: none at all
    assert IV.clustered_interval([0.2, 0.4], ["a", "a"], min_clusters=1) == (None, None)
    assert IV.clustered_interval([0.5, 0.5, 0.5], ["a", "b", "c"]) == (None, None)
    assert IV.clustered_interval([0.5, 0.5, 0.5], ["a", "b", "c"], bounds=(0.0, 1.0)) == \
        IV.floored_interval(0.5, 0.5, 0.5, 3, (0.0, 1.0))
