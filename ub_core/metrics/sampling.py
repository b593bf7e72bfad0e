"""KS@N, WDZ and JSD: a model's sampled answers against the reference draws.

UnpredictaBench defines KS@N in section 3.3, the debiased Wasserstein z-score in appendix C.2, and the
Jensen-Shannon divergence in appendix C.3. Every function is pure (a fixed ``seed`` where randomness is involved)
and validates its inputs with one-line :class:`ValueError` messages. The exact KS p-value under ties is
:mod:`.ks_exact`; Lehmer codes are :mod:`.lehmer_codes`; intervals and summaries are :mod:`.intervals`.

Part of :mod:`ub_core.metrics`.
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Sequence

import numpy as np
from scipy import special, stats

from .inputs import DEFAULT_NS, KS_METHODS, SUPPORTS, _LN2, _positive_int, _sample
from .ks_exact import _ks_exact

__all__ = ["ks_at_n", "wdz", "jsd"]

# ============================================================================================ KS@N

#: ``scipy.stats.ks_2samp`` without its axis / NaN-policy wrapper: the inputs here are 1-D and finite (checked by
#: ``_sample``), for which the wrapper calls this same function; it costs a third of a KS@N call.
_KS_2SAMP = getattr(stats.ks_2samp, "__wrapped__", stats.ks_2samp)
#: scipy's exact two-sided p-value step of ``ks_2samp`` (given the sizes and the statistic); None where a scipy
#: version lacks it, and then every statistic goes through :data:`_KS_2SAMP` (see :func:`_ks_scipy_exact`)
_ATTEMPT_EXACT = getattr(getattr(stats, "_stats_py", None), "_attempt_exact_2kssamp", None)
_INT32_MAX = np.iinfo(np.int32).max


def _sorted(x: np.ndarray) -> np.ndarray:
    """``x`` itself when it is already in non-decreasing order (a sorted ground truth: no 10,000-value re-sort,
    which numpy does not shortcut), else ``np.sort(x)``. NaN-free input (checked by ``_sample``)."""
    if x.size < 2 or not bool(np.all(x[1:] >= x[:-1])):
        return np.sort(x)
    return x


@functools.lru_cache(maxsize=1 << 16)
def _exact_pvalue(n1: int, n2: int, h: int) -> tuple[bool, float, float]:
    """scipy's ``_attempt_exact_2kssamp`` for the statistic ``h / lcm(n1, n2)``: (success, statistic, p). A pure
    function of its key (the lattice-path count at sizes n1, n2 and integer statistic h), so it is cached."""
    g = math.gcd(n1, n2)
    lcm = (n1 // g) * n2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        success, d, prob = _ATTEMPT_EXACT(n1, n2, g, h * 1.0 / lcm, "two-sided")
    return bool(success), float(d), float(np.clip(prob, 0, 1))


def _ks_scipy_exact(a: np.ndarray, b_sorted: np.ndarray) -> tuple[float, float]:
    """``scipy.stats.ks_2samp(a, b, method="exact")``'s two-sided (statistic, p-value), bit for bit, for numeric
    1-D NaN-free ``a`` and sorted ``b`` (scipy re-sorts the 10,000 truth draws and evaluates both ECDFs at
    all 10,100 pooled points for each N of KS@N).

    The statistic in integers: with i_k = #a <= u_k and the distinct a-values u_1 < ... < u_K, F_a - F_b only rises
    at a-values and falls between them, so the largest difference over the pooled points is at some u_k,
    ``i_k n2 - #(b <= u_k) n1`` (over n1 n2), and the most negative one is at the last b-point before some u_{k+1}
    (or before u_1), ``#(b < u_{k+1}) n1 - i_k n2`` (each candidate is a value scipy's ECDF difference takes at a
    pooled point, or 0, which cannot change a two-sided statistic). scipy rounds its float statistic to the integer
    h = D lcm(n1, n2) before the p-value (``_attempt_exact_2kssamp``), and two candidates that differ differ by at
    least 1 / lcm, so the integer maximum is scipy's h. Where scipy would leave the exact method (an lcm beyond
    int32, an unsuccessful exact computation) or its private step is missing, scipy itself is called."""
    n1, n2 = a.size, b_sorted.size
    g = math.gcd(n1, n2)
    if _ATTEMPT_EXACT is None or a.dtype.kind not in "iuf" or b_sorted.dtype.kind not in "iuf" \
            or (n1 // g) >= _INT32_MAX / (n2 // g):
        return _ks_scipy(a, b_sorted)
    u, counts = np.unique(a, return_counts=True)
    i_k = np.cumsum(counts).astype(np.int64)
    b_le = np.searchsorted(b_sorted, u, side="right").astype(np.int64)
    b_before = np.searchsorted(b_sorted, u, side="left").astype(np.int64)  # #b < u_k
    up = int(np.max(i_k * n2 - b_le * n1))
    down = int(b_before[0]) * n1  # before u_1: F_a = 0
    if u.size > 1:
        down = max(down, int(np.max(b_before[1:] * n1 - i_k[:-1] * n2)))
    h = max(up, down, 0) // g
    success, stat, p = _exact_pvalue(n1, n2, h)
    if not success:
        return _ks_scipy(a, b_sorted)
    return stat, p


def _ks_scipy(a: np.ndarray, b_sorted: np.ndarray) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _KS_2SAMP(a, b_sorted, method="exact")
    return float(res.statistic), float(res.pvalue)


def ks_at_n(values: Any, truth: Any, ns: Sequence[int] = DEFAULT_NS, threshold: float = 1e-4,
            method: str = "paper", support: str = "continuous") -> dict[int, dict[str, Any]]:
    """KS@N per problem (UnpredictaBench, sec. 3.3, eq. 1): the first N values against the ground-truth sample.

    For each N in ``ns``: A = ``values[:N]`` (already the valid parsed scalars, in order), B = ``truth``; the
    problem passes at N when the two-sample KS p-value is ``>= threshold`` (paper: 1e-4). KS@N over a bank is
    the mean of ``pass``. Returns ``{N: {"pvalue", "statistic", "pass", "short"}}``; with fewer than N values,
    ``short`` is True, ``pass`` False and ``pvalue`` / ``statistic`` None.

    Methods:

    * ``"paper"`` reproduces the published dispatch: support ``continuous`` uses
      ``scipy.stats.ks_2samp(method="exact")`` (which assumes no ties; where scipy cannot do it exactly, i.e.
      the reduced sample-size product exceeds int32 or its recursion overflows, scipy itself switches to the
      asymptotic distribution with a RuntimeWarning: we keep scipy's value and silence the warning);
      ``discrete``, ``categorical``, ``permutation`` and ``mixed`` use the permutation test, computed exactly by
      :func:`ks_2samp_exact` (the limit of the published 10^6-resample Monte Carlo).
    * ``"exact"`` uses :func:`ks_2samp_exact` everywhere (robust to the ties a model emits for a continuous
      target; without ties it coincides with scipy's exact value).
    """
    if method not in KS_METHODS:
        raise ValueError(f"method must be one of {', '.join(KS_METHODS)}, got {method!r}")
    if support not in SUPPORTS:
        raise ValueError(f"support must be one of {', '.join(SUPPORTS)}, got {support!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating, np.integer)) \
            or not (0.0 < float(threshold) <= 1.0):
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    ns_list = [_positive_int(n, "each N in ns") for n in ns]
    vals = np.asarray(values)
    if vals.ndim == 0:
        vals = vals.reshape(1)
    if vals.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {vals.shape}")
    truth_arr = _sample(truth, "truth")
    truth_sorted = _sorted(truth_arr)
    use_scipy = method == "paper" and support == "continuous"
    out: dict[int, dict[str, Any]] = {}
    for n in ns_list:
        if vals.size < n:
            out[n] = {"pvalue": None, "statistic": None, "pass": False, "short": True}
            continue
        a = _sample(vals[:n], "values")
        if use_scipy:
            stat, p = _ks_scipy_exact(a, truth_sorted)
        else:
            stat, p = _ks_exact(a, truth_sorted, b_sorted=True)
        out[n] = {"pvalue": p, "statistic": stat, "pass": bool(p >= threshold), "short": False}
    return out


# ============================================================================================ WDZ

def wdz(a: Any, b: Any, resamples: int = 999, seed: int = 0) -> dict[str, float]:
    """Debiased Wasserstein-1 distance and its permutation z-score (UnpredictaBench, appendix C.2, eq. 5).

    ``w1 = integral |F_a(x) - F_b(x)| dx`` between the empirical distributions (equal to
    ``scipy.stats.wasserstein_distance(a, b)``; the paper's order-statistic form (eq. 4) is the equal-size case).
    Permutation null: ``resamples`` (R, paper 999) uniformly random splits of the pooled sample into sizes
    (n_a, n_b), giving ``null_mean`` (mu_W) and ``null_sd`` (sigma_W, population sd over the R values, numpy's
    default ``ddof=0``). Returns ``w1``, ``w1_debiased = w1 - null_mean``, ``z = (w1 - null_mean) / null_sd``,
    ``null_mean``, ``null_sd``.

    Computation: the pooled sample is sorted once; with gaps g_i = x_(i+1) - x_(i) and A_i marked points among
    the first i, a split's W1 is ``sum_i g_i |A_i/n_s - (i - A_i)/n_r|`` (n_s marked, n_r = N - n_s). Marking
    the smaller sample's positions (a uniform random subset, vectorised over resamples), A_i is
    constant between consecutive marked positions, so each split costs O(n_s) with prefix sums of g and i*g:
    no re-sorting and no N-long label vectors.

    Degenerate case: a null without spread (``null_sd`` zero, or below 1e-12 of the W1 scale, i.e. rounding
    noise). When ``w1`` equals ``null_mean`` to 1e-9 relative (every pooled value equal, one value per side: the
    observed split is as typical as any), ``z = 0.0`` and ``w1_debiased = 0.0``. Otherwise the z-score is
    undefined (a finite distance divided by zero spread) and ``z`` is NaN, never +/-inf: e.g. a single value
    against a constant truth, where every drawn split leaves the odd value on the large side. Callers count
    these (``wdz_undefined`` in :func:`ub_core.ksn_scoring.aggregate`) and leave them out of means.

    Any finite input is handled: W1 is scale-equivariant and z scale-free, so the data are first multiplied by
    a power of two (exact) that brings max |x| into [0.5, 1), and w1, ``null_mean``, ``null_sd`` are scaled
    back. Nothing overflows inside (gaps <= 2); the returned distances are +/-inf only when W1 itself exceeds
    the float range (a pooled range beyond ~1.8e308). Deterministic for a given ``seed``.
    """
    a = _sample(a, "a", finite=True).astype(float)
    b = _sample(b, "b", finite=True).astype(float)
    R = _positive_int(resamples, "resamples")
    e = _pow2_exponent(a, b)
    a, b = np.ldexp(a, -e), np.ldexp(b, -e)
    n_a, n_b = a.size, b.size
    pooled = np.concatenate([np.sort(a), _sorted(b)])
    order = np.argsort(pooled, kind="stable")  # merging two sorted runs
    xs = pooled[order]
    N = xs.size
    gaps = np.diff(xs)
    # observed W1: the terms of scipy.stats.wasserstein_distance (counts agree wherever the gap is positive)
    cnt_a = np.cumsum(order[:-1] < n_a)
    cdf_a = cnt_a / n_a
    cdf_b = (np.arange(1, N) - cnt_a) / n_b
    w1 = float(np.sum(np.multiply(np.abs(cdf_a - cdf_b), gaps)))
    s = min(n_a, n_b)
    null = _split_w1_at(gaps, *_split_layout(N, s, R, int(seed)), s)
    mu = float(np.mean(null))
    sd = float(np.std(null))
    deb = w1 - mu
    scale = max(abs(w1), abs(mu))
    if sd > 1e-12 * scale:
        z = deb / sd
    elif abs(deb) <= 1e-9 * scale:  # a constant null (up to rounding) that the observed value sits on
        deb, z = 0.0, 0.0
    else:  # a finite distance over zero spread: undefined
        z = math.nan
    with np.errstate(over="ignore"):
        w1, mu, sd, deb = (float(np.ldexp(v, e)) for v in (w1, mu, sd, deb))
    return {"w1": w1, "w1_debiased": deb, "z": float(z), "null_mean": mu, "null_sd": sd}


def _pow2_exponent(*samples: np.ndarray) -> int:
    """The exponent e with ``max |x| * 2**-e`` in [0.5, 1) over all samples (0 when every value is zero).

    Multiplying by ``2**-e`` (``np.ldexp``) is exact for every value that does not fall below the subnormal range
    after scaling, and such a value is < 2**-1074 of the largest one, i.e. zero at the precision of any sum or
    difference with it. Scale-free and scale-equivariant metrics use it so that nothing overflows.
    """
    top = max(float(np.max(np.abs(x))) for x in samples)
    return math.frexp(top)[1] if top > 0.0 else 0


@functools.lru_cache(maxsize=8)
def _seeded_subsets(N: int, s: int, R: int, seed: int) -> np.ndarray:
    """The splits for (N, s, R, seed): a pure function of its key, so a full run (every problem 100 vs 10,000
    with seed 0) draws them once. Read-only, shared between calls."""
    out = _random_subsets(np.random.default_rng(seed), N, s, R)
    out.setflags(write=False)
    return out


def _random_subsets(rng: np.random.Generator, N: int, s: int, R: int) -> np.ndarray:
    """R uniformly random s-subsets of range(N) as a sorted (R, s) int array.

    When s(s-1)/(2N) is small, rows of s independent uniform draws are redrawn until they have no repeat (a
    rejection sampler: conditioned on distinctness, the set is uniform); otherwise Floyd's algorithm,
    vectorised over rows. Deterministic given the generator state.
    """
    if s * (s - 1) / (2.0 * N) <= 0.7:
        out = rng.integers(0, N, size=(R, s))
        out.sort(axis=1)
        redo = np.flatnonzero((out[:, 1:] == out[:, :-1]).any(axis=1)) if s > 1 else np.zeros(0, np.int64)
        while redo.size:
            fresh = rng.integers(0, N, size=(redo.size, s))
            fresh.sort(axis=1)
            out[redo] = fresh
            redo = redo[(fresh[:, 1:] == fresh[:, :-1]).any(axis=1)]
        return out
    out = np.empty((R, s), dtype=np.int64)
    chunk = max(1, min(R, (1 << 23) // max(N, 1)))
    for r0 in range(0, R, chunk):
        rc = min(chunk, R - r0)
        taken = np.zeros((rc, N), dtype=bool)
        rows = np.arange(rc)
        for col, top in enumerate(range(N - s, N)):
            pick = rng.integers(0, top + 1, size=rc)
            pick = np.where(taken[rows, pick], top, pick)
            taken[rows, pick] = True
            out[r0: r0 + rc, col] = pick
    out.sort(axis=1)
    return out


def _split_w1(gaps: np.ndarray, marked: np.ndarray, s: int) -> np.ndarray:
    """W1 of each split whose marked (size s) sorted positions are the rows of ``marked``.

    With Q = (0, q_1, ..., q_s, N-1), the count is A_i = k for i in (Q_k, Q_{k+1}], where the term is
    (g_i / r) |c_k - i| with c_k = k N / s and r = N - s. Splitting each piece at floor(c_k) and using prefix sums
    G (of g_i) and H (of i g_i), a piece sums to c_k (2 G(m_k) - G(Q_k) - G(Q_{k+1})) + H(Q_k) + H(Q_{k+1}) -
    2 H(m_k), with m_k = floor(c_k) clipped to the piece.
    """
    return _split_w1_at(gaps, *_layout(gaps.size + 1, marked, s), s)


def _layout(N: int, marked: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The splits' index arrays for :func:`_split_w1`: Q (each row 0, the marked positions, N-1), the clipped
    split points m_k, and c_k. Integer positions only: they depend on (N, s, the marked rows), not on the data."""
    R = marked.shape[0]
    Q = np.empty((R, s + 2), dtype=np.int64)
    Q[:, 0] = 0
    Q[:, 1:-1] = marked
    Q[:, -1] = N - 1
    c = np.arange(s + 1) * (N / s)
    split = np.clip(np.floor(c).astype(np.int64), Q[:, :-1], Q[:, 1:])
    return Q, split, c


@functools.lru_cache(maxsize=8)
def _split_layout(N: int, s: int, R: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_layout` of :func:`_seeded_subsets` (N, s, R, seed): built once per key (a full run's problems all
    have 100 vs 10,000 values); read-only."""
    out = _layout(N, _seeded_subsets(N, s, R, seed), s)
    for arr in out:
        arr.setflags(write=False)
    return out


def _split_w1_at(gaps: np.ndarray, Q: np.ndarray, split: np.ndarray, c: np.ndarray, s: int) -> np.ndarray:
    N = gaps.size + 1
    r = N - s
    G = np.zeros(N)
    H = np.zeros(N)
    np.cumsum(gaps, out=G[1:])  # G[i] = sum_{l=1..i} g_l, g_l the gap after the first l points
    np.cumsum(gaps * np.arange(1, N, dtype=float), out=H[1:])
    GQ = G[Q]
    HQ = H[Q]
    weighted = (2.0 * G[split] - GQ[:, :-1] - GQ[:, 1:]) @ c
    plain = 2.0 * HQ.sum(axis=1) - HQ[:, 0] - HQ[:, -1] - 2.0 * H[split].sum(axis=1)
    return (weighted + plain) / r


# ============================================================================================ JSD

def jsd(a: Any, b: Any, grid_size: int = 512, pad: float = 0.1) -> float:
    """Jensen-Shannon divergence of Gaussian KDEs on a shared grid (UnpredictaBench, appendix C.3, eq. 6).

    Each sample gets a Gaussian KDE with Scott's bandwidth, exactly as ``scipy.stats.gaussian_kde`` (kernel sd
    ``h = std(x, ddof=1) * n**(-1/5)``), evaluated on ``grid_size`` (G = 512) equally spaced points over
    ``[lo - pad*w, hi + pad*w]``, where [lo, hi] is the range of the union and w = hi - lo (10% padding); each is
    normalised to sum 1, giving p and q, and ``JSD = KL(p||m)/2 + KL(q||m)/2`` with m = (p + q)/2, natural log,
    in [0, ln 2].

    The KDE values are scipy's (tested to ~1e-15 of the peak density) at a fraction of its O(n G) cost (scipy
    takes ~0.2 s for 10,000 points), by whichever of two evaluations is cheaper: a truncated Taylor expansion
    of each kernel around the grid point nearest its datum plus one batched FFT convolution (wide bandwidths),
    or direct summation of each kernel over the grid points within 12 bandwidths (narrow ones; the omitted
    terms are below exp(-72) of a kernel's peak).

    Degenerate cases (defined values, never NaN):

    * union range zero (every value equal): 0.0;
    * a sample with fewer than 2 values or zero variance has no KDE (scipy's covariance is singular); it is
      replaced by its histogram on the grid: each value's mass on the nearest grid point. So two constant
      samples at different values give ln 2, and a constant sample against a spread one gives the divergence of
      a point mass from the KDE;
    * a KDE whose grid values are all zero (bandwidth far below the grid spacing) gets the same histogram.

    Any finite input is handled: the JSD is unchanged when both samples are multiplied by one constant, so they
    are first multiplied by a power of two (exact) that brings max |x| into [0.5, 1); the range, the standard
    deviations and the grid are then far from overflow (``{1e308}`` or ``{1e200}`` beside ordinary values used
    to raise OverflowError here).
    """
    a = _sample(a, "a", finite=True).astype(float)
    b = _sample(b, "b", finite=True).astype(float)
    e = _pow2_exponent(a, b)  # JSD is scale-free: work with max |x| in [0.5, 1) so no range or sd overflows
    a, b = np.ldexp(a, -e), np.ldexp(b, -e)
    G = _positive_int(grid_size, "grid_size")
    if G < 2:
        raise ValueError(f"grid_size must be at least 2, got {G}")
    if not (isinstance(pad, (int, float, np.floating, np.integer)) and math.isfinite(pad) and pad >= 0):
        raise ValueError(f"pad must be a finite number >= 0, got {pad!r}")
    lo = min(a.min(), b.min())
    hi = max(a.max(), b.max())
    width = hi - lo
    if width == 0.0:
        return 0.0
    start, stop = lo - pad * width, hi + pad * width  # grid: start + k * step, k = 0..G-1 (np.linspace)
    step = (stop - start) / (G - 1)
    if not (math.isfinite(step) and step > 0):
        raise ValueError("the pooled range is too large for a finite grid")
    p = _grid_density(a, start, step, G)
    q = _grid_density(b, start, step, G)
    mix = 0.5 * (p + q)
    val = 0.5 * (_kl(p, mix) + _kl(q, mix))
    return float(min(max(val, 0.0), _LN2))


def _kl(u: np.ndarray, v: np.ndarray) -> float:
    pos = u > 0
    return float(np.sum(u[pos] * np.log(u[pos] / v[pos])))


def _grid_density(x: np.ndarray, start: float, step: float, G: int) -> np.ndarray:
    """Normalised KDE of x on the grid start + k*step (k < G), or its nearest-grid-point histogram."""
    pos = (x - start) / step
    nearest = np.clip(np.rint(pos), 0, G - 1).astype(np.int64)
    dens = None
    if x.size >= 2:
        sd = float(np.std(x, ddof=1))
        bw = sd * x.size ** (-0.2)
        ratio = step / bw if (sd > 0 and bw > 0) else math.inf  # grid spacing in bandwidths
        if math.isfinite(ratio):
            # cost per datum (measured): ~27 ns per Taylor term, ~16 ns per grid point summed directly
            n_terms = _taylor_order(ratio / 2.0) + 1 if ratio <= 4.0 else 10**9
            if 27 * n_terms < 16 * (2 * _direct_reach(ratio, G) + 1):
                dens = _kde_taylor(pos, nearest, ratio, G)
            else:
                dens = _kde_direct(pos, nearest, ratio, G)
            dens = np.where(dens > 0, dens, 0.0)
            total = dens.sum()
            dens = dens / total if (total > 0 and math.isfinite(total)) else None
    if dens is None:
        dens = np.bincount(nearest, minlength=G).astype(float) / x.size
    return dens


def _taylor_order(v: float) -> int:
    """Terms needed so that exp(-S^2/2) * |S v|^(P+1)/(P+1)! * exp(|S v|) < 1e-17 for all S >= 0.

    That bounds the truncation error of exp(s u) (|u| <= v) times the kernel factor exp(-s^2/2), relative to the
    kernel's peak. ``v`` is rounded up to a multiple of 1/64 so the answer can be cached.
    """
    return _taylor_order_cached(math.ceil(v * 64.0) / 64.0)


@functools.lru_cache(maxsize=None)
def _taylor_order_cached(v: float) -> int:
    S = np.linspace(0.0, 40.0, 4001)
    for P in range(2, 80):
        k = P + 1
        with np.errstate(divide="ignore"):
            bound = -0.5 * S**2 + k * np.log(S * v + 1e-300) - special.gammaln(k + 1.0) + S * v
        if bound.max() < math.log(1e-17):
            return P
    return 80


def _kde_taylor(pos: np.ndarray, nearest: np.ndarray, ratio: float, G: int) -> np.ndarray:
    """Unnormalised Gaussian KDE on the grid via exp(s u) = sum_p s^p u^p / p! (s, u in bandwidth units).

    For a datum at grid point c plus offset u and a grid point at lag s from c, the kernel is
    exp(-s^2/2) exp(s u) exp(-u^2/2); so the density is sum_p (K_p * M_p) with K_p(s) = exp(-s^2/2) s^p and
    moments M_p(c) = sum over data at c of exp(-u^2/2) u^p / p!, the convolutions done by one batched FFT.
    """
    u = (pos - nearest) * ratio  # offset of each datum from its grid point, |u| <= ratio / 2
    P = _taylor_order(max(float(np.max(np.abs(u))), 1e-12))
    moments = np.empty((P + 1, G))
    term = np.exp(-0.5 * u * u)
    for p in range(P + 1):
        if p:
            term *= u
            term /= p
        moments[p] = np.bincount(nearest, weights=term, minlength=G)
    lags = np.arange(-(G - 1), G) * ratio
    kern = np.empty((P + 1, lags.size))
    kern[0] = np.exp(-0.5 * lags * lags)
    for p in range(1, P + 1):
        np.multiply(kern[p - 1], lags, out=kern[p])
    nfft = 1 << int(math.ceil(math.log2(3 * G - 2)))
    spec = (np.fft.rfft(moments, nfft, axis=1) * np.fft.rfft(kern, nfft, axis=1)).sum(axis=0)
    return np.fft.irfft(spec, nfft)[G - 1: 2 * G - 1]


def _direct_reach(ratio: float, G: int) -> int:
    """Grid points on each side of a datum's nearest one that lie within 12 bandwidths of it (or just beyond),
    at most G (the whole grid): a bandwidth of many grid spans must not ask for an unbounded reach."""
    if not ratio > 0.0 or ratio * G <= 12.0:
        return G
    return min(G, int(math.ceil(12.0 / ratio)) + 1)


def _kde_direct(pos: np.ndarray, nearest: np.ndarray, ratio: float, G: int) -> np.ndarray:
    """Unnormalised Gaussian KDE on the grid summing each kernel over grid points within 12 bandwidths.

    Terms beyond 12 bandwidths are below exp(-72) ~ 5e-32 of a kernel's peak and are left out.
    """
    reach = _direct_reach(ratio, G)
    dens = np.zeros(G)
    with np.errstate(over="ignore", under="ignore"):  # d*d beyond the float range is a zero kernel term
        for off in range(-reach, reach + 1):
            k = nearest + off
            ok = (k >= 0) & (k < G)
            d = (k[ok] - pos[ok]) * ratio
            dens += np.bincount(k[ok], weights=np.exp(-0.5 * d * d), minlength=G)
    return dens
