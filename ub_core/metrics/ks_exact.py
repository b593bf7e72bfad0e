"""The two-sample KS test under ties (UnpredictaBench, section 3.3).

KS under ties
-------------
The published code scores continuous targets with scipy's exact two-sample KS p-value (which assumes no ties) and
discrete / categorical / permutation / real-world targets with a Monte-Carlo permutation test. The permutation
distribution of the KS statistic can be computed exactly, with ties, by dynamic programming; that is
:func:`ks_2samp_exact`. :func:`ks_2samp_permutation_mc` is the Monte-Carlo reference it is checked against.

Part of :mod:`ub_core.metrics`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .inputs import _cumulative_counts, _positive_int, _sample

__all__ = ["ks_2samp_exact", "ks_2samp_permutation_mc"]

# ============================================================================================ exact KS

def ks_2samp_exact(a: Any, b: Any) -> tuple[float, float]:
    """Two-sample KS statistic and its exact permutation p-value, valid with ties.

    Statistic (UnpredictaBench, sec. 3.3): ``D = max_x |F_a(x) - F_b(x)|`` over the empirical CDFs. Tie blocks: the
    distinct pooled values with counts c_1..c_K and running totals t_k = c_1 + ... + c_k; the ECDFs only change at
    block ends, so ``D = max_k |A_k/n_a - B_k/n_b|`` with A_k, B_k the counts of a and b among the first t_k
    pooled points. In integers, ``h = D * n_a * n_b = max_k |A_k n_b - B_k n_a|`` (computed exactly), and every
    comparison below is an integer comparison, so there is no floating-point tolerance on D at all.

    p-value: ``P(D* >= D)`` where D* is the statistic after a uniformly random reassignment of the pooled values
    to the two samples (the permutation null; with ties, the a-counts per block are then multivariate
    hypergeometric). This is what the published Monte-Carlo test estimates (:func:`ks_2samp_permutation_mc`),
    computed exactly. Without ties it equals scipy's ``ks_2samp(method="exact")`` two-sided p-value.

    Algorithm: the labels form a uniformly random monotone lattice path with n "small-sample" steps and m
    "large-sample" steps; the path is *absorbed* the first time it sits, at a block end t_k, on a point
    (i, j) (i large-sample and j small-sample labels among the first t_k points) with ``|j m - i n| >= h``. The
    p-value is the total absorbed probability, accumulated term by term (a sum of non-negative numbers, so a tiny
    p keeps its relative accuracy; ``1 - surviving mass`` would lose everything below ~1e-16 to cancellation).
    Two exact evaluations of the same quantity, picked by a measured operation-count model:

    * *blocks*: a DP over the tie blocks whose state is the probability of j small-sample labels among the first
      t_k points with no absorption yet (at most n + 1 entries, n the smaller size); block k moves j to j + x
      with the hypergeometric probability of x small-sample labels among its c_k points given what remains,
      from a table of log-factorials kept as an exact-sum (hi, lo) pair so that no ~1e-11 error of log N! leaks
      in. Fast with few blocks (discrete / categorical / Lehmer data): ~1-3 ms for 100 vs 10,000.
    * *lattice rows*: one row of the lattice per small-sample count j (n + 1 rows), each a vectorised
      first-order scan over the large-sample count i carrying Markov step probabilities (the probability of
      passing each lattice point), so no binomial coefficient is ever formed; rows whose step products would
      underflow are scanned in log-scaled pieces. Fast with many blocks (continuous data): ~10-20 ms for 100 vs
      10,000.

    Rounding: the only subtraction is the restart of a row scan after an absorbing point, whose error is at most
    ~1e-16 of the mass to its left in that row. Measured agreement with scipy's exact method without ties, and
    between the two algorithms with ties: ~1e-14 relative, p-values down to 1e-113 included.

    Returns ``(D, p)``; ``p`` is clipped to [0, 1], and is exactly 1.0 when D == 0.
    """
    return _ks_exact(_sample(a, "a"), _sample(b, "b"))


def _ks_exact(a: np.ndarray, b: np.ndarray, b_sorted: bool = False) -> tuple[float, float]:
    n_a, n_b = a.size, b.size
    cum_a, cum_b = _cumulative_counts(a, b, b_sorted=b_sorted)
    h = int(np.max(np.abs(cum_a * n_b - cum_b * n_a)))
    stat = h / (n_a * n_b)
    if h == 0:
        return 0.0, 1.0
    ends = cum_a + cum_b  # t_k
    n, m = min(n_a, n_b), max(n_a, n_b)
    counts = np.diff(ends, prepend=0)
    if _blocks_cost(counts, n) <= _lattice_cost(n, m, h, ties=counts.size < n_a + n_b):
        p = _ks_perm_blocks(counts, n, m, h)
    else:
        p = _ks_perm_lattice(ends, n, m, h)
    return float(stat), float(min(1.0, max(0.0, p)))


# Cost model (nanoseconds, measured on a 2-core machine): a block step costs ~70 us plus ~6 ns per
# (state, x) pair; a lattice row ~60 us plus ~12 ns per cell of its window.
def _blocks_cost(counts: np.ndarray, n: int) -> float:
    return 70_000.0 * counts.size + 6.0 * (n + 1) * float(np.sum(np.minimum(counts, n) + 1))


def _lattice_cost(n: int, m: int, h: int, ties: bool) -> float:
    # window per row: the whole row when ties let mass wander between block ends, else about the band
    # |j m - i n| < h (2h/n cells) plus the m/n cells that fall out of it below per row
    width = m + 1 if ties else min(m + 1, 2 * h // n + m // n + 2)
    return (n + 1) * (60_000.0 + 12.0 * width)


@functools.lru_cache(maxsize=16)
def _log_factorials(N: int) -> tuple[np.ndarray, np.ndarray]:
    """log k! for k = 0..N as an exact-sum pair (hi, lo): hi holds log q rounded to multiples of 2**-20, so its
    running sums (and any sums/differences of a few of them) are exact in float64; lo holds the small
    remainders. A combination of log-factorials then carries only the rounding of the log q terms that do not
    cancel, instead of ~1e-16 of log N! (~1e-11 absolute for N = 10^4).
    """
    lg = np.log(np.arange(1, N + 1, dtype=float))
    hi_terms = np.round(lg * 1048576.0) / 1048576.0
    lo_terms = lg - hi_terms
    hi = np.zeros(N + 1)
    lo = np.zeros(N + 1)
    np.cumsum(hi_terms, out=hi[1:])
    np.cumsum(lo_terms, out=lo[1:])
    hi.setflags(write=False)
    lo.setflags(write=False)
    return hi, lo


_BLOCK_CHUNK = 1 << 20  # (state, x) pairs evaluated at once in the block DP (bounds memory)


def _ks_perm_blocks(counts: np.ndarray, n: int, m: int, h: int) -> float:
    """Absorbed mass of the tie-block DP (see :func:`ks_2samp_exact`); n <= m, h >= 1.

    State: P(j small-sample labels among the first t points, not absorbed) for j in [lo, lo + size). Block k
    (c points, rest = N - t unallocated, a = n - j small / b = rest - a large labels left) moves j to j + x with
    the hypergeometric probability C(a, x) C(b, c - x) / C(rest, c), summed into the new state with bincount.
    """
    N = n + m
    hi_lf, lo_lf = _log_factorials(N)
    prob = np.ones(1)
    lo = 0
    t = 0
    absorbed = 0.0
    for c in counts.tolist():
        rest = N - t
        size = prob.size
        x = np.arange(min(c, n - lo) + 1)[None, :]
        cx = c - x
        new = np.zeros(size + x.shape[1] - 1)
        log_norm_hi = hi_lf[rest] - hi_lf[rest - c] - hi_lf[c]
        log_norm_lo = lo_lf[rest] - lo_lf[rest - c] - lo_lf[c]
        rows_per_chunk = max(1, _BLOCK_CHUNK // x.shape[1])
        for r0 in range(0, size, rows_per_chunk):
            r = np.arange(r0, min(size, r0 + rows_per_chunk))[:, None]
            la = (n - lo) - r  # small-sample labels left, per state
            lb = rest - la
            ok = (x <= la) & (x >= c - lb)
            i1 = np.maximum(la - x, 0)
            i2 = np.maximum(lb - cx, 0)
            # log C(a, x) + log C(b, c - x) - log C(rest, c), as exact hi sums plus lo corrections
            hi_part = (hi_lf[la] - hi_lf[i1] - hi_lf[x]) + (hi_lf[lb] - hi_lf[i2] - hi_lf[cx]) - log_norm_hi
            lo_part = (lo_lf[la] - lo_lf[i1] - lo_lf[x]) + (lo_lf[lb] - lo_lf[i2] - lo_lf[cx]) - log_norm_lo
            pmf = np.exp(np.where(ok, hi_part + lo_part, -np.inf))
            new[r0:] += np.bincount((r - r0 + x).ravel(), weights=(prob[r[:, 0], None] * pmf).ravel(),
                                    minlength=new.size - r0)
        t += c
        # absorbing counts: j N - t n <= -h (j <= j_low) or >= h (j >= j_high)
        j_low = (t * n - h) // N - lo
        j_high = -((-(t * n + h)) // N) - lo
        keep_from = max(j_low + 1, 0)
        keep_to = min(j_high, new.size)  # exclusive
        if keep_from > 0:
            absorbed += float(new[:keep_from].sum())
        if keep_to < new.size:
            absorbed += float(new[keep_to:].sum())
        if keep_from >= keep_to:
            break
        prob = new[keep_from:keep_to]
        lo += keep_from
    return absorbed


def _absorbing_in_window(ends: np.ndarray, s: int, u: int, j: int, low_tail: int, high_tail: int,
                         every_point: bool) -> np.ndarray:
    """Offsets (from s) of the absorbing points of row j in [s, u]: block ends with i in either tail.

    ``every_point``: no ties, every position is a block end, so the answer is the two tail ranges.
    """
    if every_point:
        low = np.arange(0, max(0, min(low_tail, u) - s + 1))
        start = max(high_tail, s)
        if start > u:
            return low
        return np.concatenate([low, np.arange(start - s, u - s + 1)])
    k0 = int(ends.searchsorted(s + j, side="left"))
    k1 = int(ends.searchsorted(u + j, side="right"))
    cand = ends[k0:k1] - (s + j)
    c_lo = int(cand.searchsorted(low_tail - s, side="right"))
    c_hi = int(cand.searchsorted(high_tail - s, side="left"))
    if c_lo >= c_hi:
        return cand
    return np.concatenate([cand[:c_lo], cand[c_hi:]])


def _restarting_cumsum(x: np.ndarray, ab: np.ndarray) -> np.ndarray:
    """Cumulative sum of x restarted after each index in ab (sorted)."""
    S = np.cumsum(x)
    L = x.size
    k = ab.size - (1 if (ab.size and ab[-1] == L - 1) else 0)
    if k == 0:
        return S
    bounds = np.empty(k + 2, dtype=np.int64)
    bounds[0] = 0
    bounds[1:-1] = ab[:k] + 1
    bounds[-1] = L
    offsets = np.empty(k + 1)
    offsets[0] = 0.0
    offsets[1:] = S[ab[:k]]
    S -= np.repeat(offsets, bounds[1:] - bounds[:-1])
    return S


def _ks_perm_lattice(ends: np.ndarray, n: int, m: int, h: int) -> float:
    """Absorbed mass of the lattice-row DP (see :func:`ks_2samp_exact`); n <= m, h >= 1.

    Row j holds, for i in a window [s, e], the probability that the path passes (i, j) without having been
    absorbed before. Within a row the large-sample step (i-1, j) -> (i, j) has probability
    beta_i = (m - i + 1) / (N - i - j + 1); between rows the small-sample step (i, j-1) -> (i, j) has probability
    alpha_i = (n - j + 1) / (N - i - j + 1). So row j is the scan y_i = beta_i * y_{i-1} + x_i (x the mass
    arriving from row j-1), restarted after each absorbing point, solved as
    y_l = B_l * sum_{k in segment, k <= l} x_k / B_k with B the running product of beta.
    """
    N = n + m
    ends = np.asarray(ends, dtype=np.int64)
    every_point = ends.size == N
    inv = 1.0 / np.arange(1, N + 2, dtype=float)  # inv[d - 1] = 1 / d
    numer = (m + 1.0) - np.arange(m + 1, dtype=float)  # numer[i] = m - i + 1
    absorbed = 0.0
    s = e = 0
    row = np.ones(1)
    for j in range(n + 1):
        low_tail = (j * m - h) // n  # i <= low_tail: j m - i n >= h
        high_tail = -((-(j * m + h)) // n)  # i >= high_tail: i n - j m >= h
        u = _first_absorbing(e, j, low_tail, high_tail, ends, m)
        L = u - s + 1
        x = np.zeros(L)
        if j == 0:
            x[0] = 1.0
        else:  # alpha_i for i = s..e: denominators N - j + 1 - i, read backwards from inv
            x[: e - s + 1] = row * inv[N - j - e: N - j + 1 - s][::-1] * float(n - j + 1)
        # absorbing points of the window: block ends in either tail (ends are sorted)
        ab = _absorbing_in_window(ends, s, u, j, low_tail, high_tail, every_point)
        if L == 1:
            y = x
        else:
            if j < n:  # beta_i for i = s+1..u: numerators m - i + 1, denominators N - j + 1 - i
                beta = numer[s + 1: u + 1] * inv[N - j - u: N - j - s][::-1]
            else:
                beta = np.ones(L - 1)
            B = np.empty(L)
            B[0] = 1.0
            np.cumprod(beta, out=B[1:])
            if B[-1] > 1e-280:
                y = _restarting_scan_prod(x, B, ab)
            else:  # products too small for one scale: the log-space scan in pieces
                restart = np.zeros(L, dtype=bool)
                restart[ab] = True
                y = _restarting_scan(x, np.log(beta), restart)
        if ab.size:
            absorbed += float(y[ab].sum())
            y[ab] = 0.0
        pos = y > 0
        first = int(pos.argmax())
        if not pos[first]:
            break
        last = L - 1 - int(pos[::-1].argmax())
        e = s + last
        s = s + first
        row = y[first: last + 1]
    return absorbed


def _restarting_scan_prod(x: np.ndarray, B: np.ndarray, ab: np.ndarray) -> np.ndarray:
    """y_l = B_l * sum_{k = start(l)..l} x_k / B_k, where a segment starts at 0 and after each index in ab."""
    y = _restarting_cumsum(x / B, ab)
    y *= B
    return y


def _first_absorbing(e: int, j: int, low_tail: int, high_tail: int, ends: np.ndarray, m: int) -> int:
    """First i >= e that absorbs in row j (i + j a block end, i in a tail), else m. ``ends`` is sorted."""
    if e <= low_tail:
        c = int(ends[ends.searchsorted(e + j)]) - j
        if c <= low_tail:
            return c
    start = max(e, high_tail)
    if start > m:
        return m
    return min(int(ends[ends.searchsorted(start + j)]) - j, m)


_SCAN_SPAN = 600.0  # largest drop of the log step product handled in one piece (exp(600) < float max)


def _restarting_scan(x: np.ndarray, log_beta: np.ndarray, restart: np.ndarray) -> np.ndarray:
    """y_0 = x_0; y_l = exp(log_beta[l-1]) * (0 if restart[l-1] else y_{l-1}) + x_l.

    Solved as y_l = exp(Lam_l) * sum_{k in segment, k <= l} x_k exp(-Lam_k) with Lam the running sum of log_beta
    (non-increasing), split into pieces over which Lam drops by at most ``_SCAN_SPAN`` so nothing overflows.
    """
    L = x.size
    if L == 1:
        return x.copy()
    lam = np.empty(L)
    lam[0] = 0.0
    np.cumsum(log_beta, out=lam[1:])
    marks = np.zeros(L, dtype=np.int64)
    marks[1:] = np.where(restart[:-1], np.arange(1, L), 0)
    seg = np.maximum.accumulate(marks)  # start index of each point's segment
    if lam[0] - lam[-1] <= _SCAN_SPAN:
        S = np.empty(L + 1)
        S[0] = 0.0
        np.cumsum(x * np.exp(-lam), out=S[1:])
        return np.exp(lam) * (S[1:] - S[seg])
    # piecewise, with the value at each piece's end carried into the next
    y = np.empty(L)
    cuts = np.searchsorted(-lam, -lam[0] + _SCAN_SPAN * np.arange(1, int((lam[0] - lam[-1]) // _SCAN_SPAN) + 2))
    cuts = np.unique(np.concatenate([[0], np.clip(cuts, 1, L), [L]]))
    carry = 0.0
    for c0, c1 in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        lam_loc = lam[c0:c1] - lam[c0]
        S = np.empty(c1 - c0 + 1)
        S[0] = 0.0
        np.cumsum(x[c0:c1] * np.exp(-lam_loc), out=S[1:])
        seg_loc = np.maximum(seg[c0:c1] - c0, 0)
        part = np.exp(lam_loc) * (S[1:] - S[seg_loc])
        if carry != 0.0:
            cont = seg[c0:c1] < c0 if c0 > 0 else np.zeros(c1 - c0, dtype=bool)
            part = part + np.where(cont, carry * np.exp(lam[c0:c1] - lam[c0 - 1]), 0.0)
        y[c0:c1] = part
        carry = 0.0 if restart[c1 - 1] else float(part[-1])
    return y


# ============================================================================================ Monte-Carlo reference

def ks_2samp_permutation_mc(a: Any, b: Any, n_resamples: int = 1_000_000, seed: int = 0) -> tuple[float, float]:
    """Monte-Carlo permutation KS test: the published reference (UnpredictaBench, sec. 3.3 and its code release).

    Each resample reallocates the pooled tie-block counts between the two samples with
    ``numpy.random.Generator.multivariate_hypergeometric`` (the smaller sample's counts per distinct value; the
    statistic only depends on those), computes D* with the same integer arithmetic as :func:`ks_2samp_exact`, and
    the p-value is ``(#{D* >= D} + 1) / (B + 1)``. Resamples are drawn in chunks (vectorised). Returns ``(D, p)``.
    The Monte-Carlo standard error of p is about ``sqrt(p (1 - p) / B)``.
    """
    a = _sample(a, "a")
    b = _sample(b, "b")
    B = _positive_int(n_resamples, "n_resamples")
    n_a, n_b = a.size, b.size
    cum_a, cum_b = _cumulative_counts(a, b)
    h = int(np.max(np.abs(cum_a * n_b - cum_b * n_a)))
    stat = h / (n_a * n_b)
    n, N = min(n_a, n_b), n_a + n_b
    ends = cum_a + cum_b
    counts = np.diff(ends, prepend=0)
    rng = np.random.default_rng(seed)
    K = counts.size
    offset = ends * n  # |j N - t n| >= h  <=>  j*N - t*n <= -h or >= h
    chunk = max(1, min(B, (1 << 22) // max(K, 1)))
    method = "count" if n < K else "marginals"
    hits = 0
    done = 0
    while done < B:
        size = min(chunk, B - done)
        draw = rng.multivariate_hypergeometric(counts, n, size=size, method=method)
        np.cumsum(draw, axis=1, out=draw)
        draw *= N
        draw -= offset
        np.abs(draw, out=draw)
        hits += int(np.count_nonzero(draw.max(axis=1) >= h))
        done += size
    return float(stat), (hits + 1) / (B + 1)
