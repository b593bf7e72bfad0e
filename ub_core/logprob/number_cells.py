"""Numbers as intervals: bounds on a model's answer law from reply prefixes, not leaves.

Design notes: docs/design/number-cells.md.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import numpy as np

__all__ = ["number_cell", "critical_bracket", "ks_distance_bounds", "cell_p_pass", "cell_priority",
           "interval_statistics", "clopper_pearson", "envelope_distances", "step_cdf", "cdf_at", "truth_atom",
           "tied_critical_bracket", "cell_p_pass_permutation",
           "CP_LEVEL", "escape_eps"]

#: Two-sided level of the Clopper-Pearson interval that carries Monte-Carlo error into the bounds.
CP_LEVEL = 0.99

# A reply that has begun a decimal number inside braces: optional white space, "{", optional sign, digits (none:
# ``{.45``, a number written without its leading zero), the decimal point, digits. Before the point the integer
# part's length is open ("{4" may become 4, 45 or 4.5): not an interval.
_CELL = re.compile(r"\s*\{\s*([+-]?)(\d*)\.(\d*)")
# A number begun with a negative exponent: the mantissa is written out (no digit can join it after the "e"), the
# exponent's digits can only grow its size: "{3.77e-2" is 3.77e-2 or 3.77e-2d..., at most 3.77e-2 in size.
_EXPONENT_CELL = re.compile(r"\s*\{\s*([+-]?)(\d+(?:\.\d*)?)[eE]-(\d*)")


#: a decimal in braces (``{12.5}``, ``{-3}``, ``{.5}``): each of its prefixes' cells holds its reading by construction
CLOSED_NUMBER = re.compile(r"\s*\{\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*\}")


def number_cell(text: str, low: float = -math.inf, high: float = math.inf) -> tuple[float, float] | None:
    """The closed interval that every reply continuing ``text`` with digits, then ``}``, then the end, reads as;
    None when ``text`` is not a number begun inside braces whose interval lies inside the support [``low``,
    ``high``] (module docstring).

    ``{4.9`` -> [4.9, 5.0]; ``{-4.9`` -> [-5.0, -4.9]; ``{4.`` -> [4, 5]. A negative exponent closes
    the mantissa and bounds the size: ``{3.77e-2`` -> [0, 0.0377] (the exponent's digits can only grow: -2, -2d,
    ...), ``{3.77e-`` -> [0, 3.77]. An exponent without its sign, or a positive one, is no interval (``e`` may
    become ``e-`` or ``e+``; a positive exponent is unbounded): such a prefix is a text node. The ends are widened
    by a relative 1e-12 so that float rounding of a long written number cannot fall outside.

    An interval that does not overlap the support (or touches it at one point) is no cell: without
    another notation (an exponent: ``{3.`` becoming ``{3.77e-23}`` on a support of [0, 1]) every reply in it is
    invalid, with one anywhere, so its mass is neither valid nor placed; it stays a text node, expanded like any
    other text or carried as missing mass. An interval that straddles a support's end stays a cell: the grammar
    assumption then includes that its mass lands inside the support."""
    m = _CELL.fullmatch(text)
    if m is not None:
        sign, whole, frac = m.groups()
        lo = float(f"{whole or 0}.{frac}" if frac else whole or 0)
        hi = lo + 10.0 ** -len(frac)
    else:
        m = _EXPONENT_CELL.fullmatch(text)
        if m is None:
            return None
        sign, mantissa, exponent = m.groups()
        try:
            hi = float(mantissa.rstrip(".") or "0") * 10.0 ** -int(exponent or "0")
        except (OverflowError, ValueError):
            hi = 0.0
        lo = 0.0
    if sign == "-":
        lo, hi = -hi, -lo
    pad = 1e-12 * max(abs(lo), abs(hi), 1e-300)
    lo, hi = (lo - pad if lo else lo), (hi + pad if hi else hi)  # 0 is exact (an exponent's end), never rounded
    if hi <= low + 1e-9 * max(abs(low), 1.0) or lo >= high - 1e-9 * max(abs(high), 1.0):
        return None  # no overlap with the support (or one point): valid only in another notation
    return lo, hi


def escaping_prefixes(problem: Any, text: str) -> tuple[list[str], bool]:
    """The prefixes of the reply ``text`` that are numeric cells (:func:`number_cell` on the problem's support)
    whose interval does not hold the problem's reading of ``text`` (every cell prefix where its parser rejects it),
    and whether the parser rejects it: where the number grammar fails for this reply. A closed decimal
    (:data:`CLOSED_NUMBER`) has none."""
    if CLOSED_NUMBER.fullmatch(text):
        return [], False
    res = problem.parse(text)
    value = float(res.value) if res.ok else None
    out = []
    for i in range(1, len(text)):
        iv = number_cell(text[:i], problem.low, problem.high)
        if iv is not None and (value is None or not iv[0] <= value <= iv[1]):
            out.append(text[:i])
    return out, value is None


def clopper_pearson(successes: float, trials: int, level: float = CP_LEVEL) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval of a binomial proportion (Clopper & Pearson 1934), for a possibly
    fractional count of ``successes`` in ``trials`` (a share of [0, 1]-valued draws: the binomial is their worst
    case). ``(0, 1)`` without trials."""
    from scipy import stats

    if trials <= 0:
        return 0.0, 1.0
    x = min(max(float(successes), 0.0), float(trials))
    alpha = 1.0 - level
    lo = 0.0 if x <= 0 else float(stats.beta.ppf(alpha / 2, x, trials - x + 1))
    hi = 1.0 if x >= trials else float(stats.beta.ppf(1 - alpha / 2, x + 1, trials - x))
    return lo, hi


def envelope_distances(lo: np.ndarray, hi: np.ndarray, f_at: np.ndarray, f_before: np.ndarray,
                       start_hi: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(d_lo, d_hi)``: bounds of sup_x |G(x) - F(x)| over every CDF G between the step envelopes ``lo`` <= G
    <= ``hi``, given as their right values at grid points g_0 < ... < g_K (last axis; rows are independent
    envelopes), with F(g_k) = ``f_at[k]`` and F(g_k-) = ``f_before[k]`` (F any CDF). Below g_0 the envelopes are
    0 and ``start_hi``; at g_K the lower one must be 1.

    The envelopes are constant on [g_k, g_(k+1)) and F is non-decreasing, so on that piece G - F is largest at
    g_k and F - G just before g_(k+1):

        d_hi = max(start_hi, max_k hi_k - F(g_k), F(g_0-), max_k F(g_(k+1)-) - lo_k),
        d_lo = max(0, max_k lo_k - F(g_k), F(g_0-) - start_hi, max_k F(g_(k+1)-) - hi_k, 1 - hi_K)."""
    lo, hi = np.atleast_2d(lo), np.atleast_2d(hi)
    up = np.maximum((hi - f_at).max(axis=1), (f_before[1:] - lo[:, :-1]).max(axis=1, initial=-1.0))
    d_hi = np.maximum(np.maximum(up, start_hi), f_before[0])
    down = np.maximum((lo - f_at).max(axis=1), (f_before[1:] - hi[:, :-1]).max(axis=1, initial=-1.0))
    d_lo = np.maximum.reduce([down, np.full(len(lo), f_before[0] - start_hi), 1.0 - hi[:, -1],
                              np.zeros(len(lo))])
    return np.minimum(d_lo, 1.0), np.minimum(d_hi, 1.0)


def step_cdf(points: Any, weights: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """A reference CDF F as ``(xs, cum)``: its distinct jump points, increasing, and F at each. From draws
    (``weights`` None: each draw 1 / their count, the empirical CDF) or from a pmf ``weights`` on ``points``
    (renormalised: a support cut at 1 - 1e-6 of the mass moves F by at most 1e-6)."""
    x = np.asarray(points, dtype=float)
    w = np.ones(x.size) if weights is None else np.asarray(weights, dtype=float)
    xs, inverse = np.unique(x, return_inverse=True)
    cum = np.cumsum(np.bincount(inverse, weights=w, minlength=xs.size))
    return xs, (cum / cum[-1] if cum.size and cum[-1] > 0 else cum)


def cdf_at(reference: tuple[np.ndarray, np.ndarray], x: Any, side: str = "right") -> np.ndarray:
    """F(x) (``side="right"``) or F(x-) (``"left"``) of a :func:`step_cdf` reference, elementwise."""
    xs, cum = reference
    i = np.searchsorted(xs, np.asarray(x, dtype=float), side=side)
    return np.where(i > 0, cum[np.maximum(i - 1, 0)] if cum.size else 0.0, 0.0)


def _grid(values: np.ndarray, cells: np.ndarray, reference: tuple[np.ndarray, np.ndarray]):
    """The grid of every leaf value and cell end, F at it and just before it."""
    a, b = (cells[:, 0], cells[:, 1]) if len(cells) else (np.empty(0), np.empty(0))
    grid = np.unique(np.concatenate([values, a, b]))
    return grid, cdf_at(reference, grid, "right"), cdf_at(reference, grid, "left")


def ks_distance_bounds(values: Any, masses: Any, cells: Any, missing: float, truth_sorted: Any,
                       reference: tuple[np.ndarray, np.ndarray] | None = None,
                       escape: float = 0.0) -> tuple[float, float]:
    """Bounds of the KS distance between the model's valid law and the truth's CDF F (module docstring):
    ``values``/``masses`` the valid leaves, ``cells`` rows ``(a, b, mass)``, ``missing`` the mass of unknown
    place and validity, ``truth_sorted`` the truth draws, sorted, whose empirical CDF is F unless ``reference``
    (a :func:`step_cdf`, e.g. the truth's pmf where it can be listed) gives it. ``(0, 1)`` when nothing valid is
    known.

    ``escape`` (at most e of the cells' mass leaves their intervals: :func:`escape_eps`) moves each envelope by
    that mass: an escaping reply is as unplaced as missing mass, taken from the cells, so with X the escaping
    mass (|X| <= e) G_lo(x) >= max(L(<=x) + C_top(<=x) - e, L(<=x)) / T and G_hi(x) <= (L(<=x) + C_bottom(<=x)
    + M + e) / T, T = V + U + M the same total (what leaves the cells joins the unplaced mass)."""
    v, w = np.asarray(values, dtype=float), np.asarray(masses, dtype=float)
    c = np.asarray(cells, dtype=float).reshape(-1, 3)
    total = float(w.sum() + c[:, 2].sum() + missing)
    if w.sum() + c[:, 2].sum() <= 0 or total <= 0:
        return 0.0, 1.0
    grid, f_at, f_before = _grid(v, c[:, :2], reference if reference is not None else step_cdf(truth_sorted))
    leaf = np.zeros(grid.size)
    np.add.at(leaf, np.searchsorted(grid, v), w)
    lo_mass, hi_mass = leaf.copy(), leaf.copy()
    np.add.at(lo_mass, np.searchsorted(grid, c[:, 1]), c[:, 2])  # a cell surely <= x from its top on
    np.add.at(hi_mass, np.searchsorted(grid, c[:, 0]), c[:, 2])  # possibly <= x from its bottom on
    e = min(max(float(escape), 0.0), float(c[:, 2].sum()))
    lo = np.maximum(np.cumsum(lo_mass) - e, np.cumsum(leaf)) / total
    hi = np.minimum(np.cumsum(hi_mass) + missing + e, total) / total
    lo[-1] = max(lo[-1], 1.0 - (missing + e) / total)
    d_lo, d_hi = envelope_distances(lo, hi, f_at, f_before, start_hi=min((missing + e) / total, 1.0))
    return float(d_lo[0]), float(d_hi[0])


def cell_priority(mass: float, interval: tuple[float, float], truth_sorted: np.ndarray) -> float:
    """How much resolving a cell can move the CDF bounds: its mass, at most the truth's mass over its interval
    (where F is flat a cell's position does not change sup |G - F|)."""
    lo, hi = interval
    span = (np.searchsorted(truth_sorted, hi, side="right") - np.searchsorted(truth_sorted, lo, side="left"))
    return min(mass, span / truth_sorted.size)


@functools.lru_cache(maxsize=256)
def critical_bracket(n: int, truth_size: int, threshold: float) -> tuple[float, float]:
    """``(c_pass, c_fail)``: the largest statistic seen to pass and the smallest seen to fail the paper's KS@N
    test on a continuous support (``ub_core.metrics.ks_at_n``, ``scipy.stats.ks_2samp(method="exact")``), for
    N answers against ``truth_size`` draws. Its p-value is a function of D and the two sizes, so every D <= c_pass
    passes and every D >= c_fail fails.

    Found by the test itself, on samples whose statistic grows with a shift s (the answers at the truth's
    quantiles moved s draws up, against a tie-free truth): a bisection over s. Statistics of the two sizes are
    multiples of 1 / lcm(N, truth_size); when ``truth_size`` is a multiple of N (the defaults) the bracket is
    one such step wide, so no attainable statistic lies strictly inside it."""
    from ..metrics import ks_at_n

    truth = np.arange(truth_size, dtype=float)
    base = np.floor((np.arange(n) + 0.5) * truth_size / n)

    def test(s: int) -> tuple[float, bool]:
        sample = np.minimum(base + s, truth_size - 1) + 0.5
        res = ks_at_n(sample, truth, ns=(n,), threshold=threshold, method="paper", support="continuous")[n]
        return float(res["statistic"]), bool(res["pass"])

    lo, hi = 0, truth_size
    d0, ok0 = test(lo)
    if not ok0:
        return -math.inf, d0
    d1, ok1 = test(hi)
    if ok1:
        return d1, math.inf
    c_pass, c_fail = d0, d1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        d, ok = test(mid)
        if ok:
            lo, c_pass = mid, max(c_pass, d)
        else:
            hi, c_fail = mid, min(c_fail, d)
    return c_pass, c_fail


def interval_statistics(tops: np.ndarray, bottoms: np.ndarray, truth_sorted: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``(D_lo, D_hi)`` per sample (rows): the least and the most the two-sample KS statistic against
    ``truth_sorted`` can be when each of the sample's N values lies somewhere in [bottom, top] (a leaf: bottom =
    top; a cell: its interval).

    The sample's ECDF lies between E_lo (each value at its top) and E_hi (at its bottom), step functions that jump
    only at the sorted tops t_(i) and bottoms b_(i); F is non-decreasing, so (:func:`envelope_distances`, on each
    sample's own jump points: O(N log N) per sample, whatever the number of cells)

        D_hi = max(max_i (i+1)/N - F(b_(i)),  F(t_(0)-),  max_i F(t_(i+1)-) - (i+1)/N),
        D_lo = max(0,  max_i (i+1)/N - F(t_(i)),  F(b_(0)-),  max_i F(b_(i+1)-) - (i+1)/N).

    With ties, a term at a repeated jump point is never above the legitimate term of that run's first point."""
    t = np.sort(np.asarray(tops, dtype=float), axis=1)
    b = np.sort(np.asarray(bottoms, dtype=float), axis=1)
    m, n = truth_sorted.size, t.shape[1]
    steps = np.arange(1, n + 1) / n

    def after(x):  # F(x)
        return np.searchsorted(truth_sorted, x, side="right") / m

    def before(x):  # F(x-)
        return np.searchsorted(truth_sorted, x, side="left") / m

    f_b, f_t = after(b), after(t)
    fb_before, ft_before = before(b), before(t)
    d_hi = np.maximum.reduce([(steps - f_b).max(axis=1), ft_before[:, 0],
                              (ft_before[:, 1:] - steps[:-1]).max(axis=1, initial=-1.0)])
    d_lo = np.maximum.reduce([np.zeros(len(t)), (steps - f_t).max(axis=1), fb_before[:, 0],
                              (fb_before[:, 1:] - steps[:-1]).max(axis=1, initial=-1.0)])
    return np.minimum(d_lo, 1.0), np.minimum(d_hi, 1.0)


def _sample_statistics(v: np.ndarray, w: np.ndarray, c: np.ndarray, truth: np.ndarray, n: int, draws: int,
                       seed: int):
    """``draws`` samples of N items (leaves, then cells) from the known law: the items drawn ``picks`` (draws x N
    indices into leaves then cells) and per sample the interval statistics ``d_lo``, ``d_hi``
    (:func:`interval_statistics`) and ``d_mid`` (cells at their midpoints)."""
    known = float(w.sum() + c[:, 2].sum())
    tops = np.concatenate([v, c[:, 1]])  # each item is surely <= x from here on
    bottoms = np.concatenate([v, c[:, 0]])  # possibly <= x from here on
    mids = (bottoms + tops) / 2
    probs = np.concatenate([w, c[:, 2]]) / known
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(n), 33]))
    picks = rng.choice(len(probs), size=(draws, n), p=probs)
    d_lo, d_hi = interval_statistics(tops[picks], bottoms[picks], truth)
    d_mid = interval_statistics(mids[picks], mids[picks], truth)[1]
    return picks, d_lo, d_hi, d_mid


def escape_eps(missing: float, known: float, escape: float = 0.0) -> float:
    """The share of N answers that the known law R (leaves and cells, mass K = ``known``) may not describe: with
    missing mass M, eps = M / (K + M). With up to e of the cells' mass escaping their intervals (a measured bound,
    :func:`ub_core.logprob.reply_tree.grammar_escape`): the true valid law is G = ((K - X) + W) / Z, X the escaping
    mass (|X| <= e, taken from the cells), W the valid part of the missing and escaping mass (|W| <= M + |X|), Z
    = K - |X| + |W| <= K + M. G and R share the part (K - X) with weights (K - |X|) / Z and (K - |X|) / K, so

        TV(G, R) <= 1 - (K - e) / max(Z, K) <= eps = (M + e) / (K + M)

    and each of N i.i.d. answers differs from a draw of R with probability at most eps (coupling)."""
    if known <= 0:
        return 1.0
    e = min(max(float(escape), 0.0), float(known))
    return float(min(max((missing + e) / (known + missing), 0.0), 1.0))


def cell_p_pass(values: Any, masses: Any, cells: Any, missing: float, truth_sorted: Any, n: int,
                bracket: tuple[float, float], draws: int = 2000, seed: int = 0,
                escape: float = 0.0) -> dict[str, Any]:
    """Bounds and point value of P(KS@N passes | N valid answers) for a law of leaves, cells and missing mass,
    when passing is D <= c with c in ``bracket`` (:func:`critical_bracket`); module docstring.

    Returns ``lo``, ``hi`` (Monte-Carlo error included), ``p`` (cells at their midpoints) with its standard error
    ``se``, ``eps`` and ``draws``. ``escape``: a bound on the cells' mass that leaves their intervals
    (:func:`escape_eps`)."""
    from scipy import stats

    v, w = np.asarray(values, dtype=float), np.asarray(masses, dtype=float)
    c = np.asarray(cells, dtype=float).reshape(-1, 3)
    truth = np.asarray(truth_sorted, dtype=float)
    known = float(w.sum() + c[:, 2].sum())
    if known <= 0:
        return {"lo": 0.0, "hi": 1.0, "p": math.nan, "se": math.nan, "eps": 1.0, "draws": 0}
    eps = escape_eps(missing, known, escape)
    _, d_lo, d_hi, d_mid = _sample_statistics(v, w, c, truth, n, draws, seed)
    c_pass, c_fail = bracket
    tol = 1e-12  # statistics are ratios of integers: rounding must not move a draw across the threshold
    ks = np.arange(n + 1)
    pk = stats.binom.pmf(ks, n, min(max(eps, 0.0), 1.0))
    keep = pk > 1e-15
    ks, pk = ks[keep], pk[keep]
    sure = (d_hi[:, None] + ks[None, :] / n <= c_pass + tol) @ pk  # per sample: P(pass) at least
    maybe = (d_lo[:, None] - ks[None, :] / n < c_fail - tol) @ pk
    lo_share, hi_share = float(sure.mean()), float(maybe.mean())
    p = float(np.mean(d_mid <= c_pass + tol))
    lo = clopper_pearson(lo_share * draws, draws)[0]
    hi = clopper_pearson(hi_share * draws, draws)[1]
    return {"lo": lo, "hi": hi, "p": p, "se": math.sqrt(p * (1 - p) / draws), "eps": eps, "draws": draws}


# ------------------------------------------------------------------ the permutation test (mixed support, "exact")

def truth_atom(truth_sorted: Any) -> tuple[float | None, int] | None:
    """``(atom, t0)``: the truth draws' one repeated value and its count, when it is their minimum (the mixed
    supports' point mass at the bottom of the support); ``(None, 0)`` for draws without ties; None for any other
    tie structure (two repeated values, or one above the minimum), which :func:`cell_p_pass_permutation` does not
    cover."""
    t = np.asarray(truth_sorted, dtype=float)
    rep = np.flatnonzero(t[1:] == t[:-1])
    if rep.size == 0:
        return None, 0
    if t[rep[-1]] != t[0]:
        return None
    return float(t[0]), int(np.searchsorted(t, t[0], side="right"))


_SHIFT_GUESS: dict[tuple, float] = {}  # last critical value per structure: a warm start (speed only)


@functools.lru_cache(maxsize=4096)
def tied_critical_bracket(n: int, truth_size: int, atom_truth: int, atom_sample: int,
                          threshold: float) -> tuple[float, float]:
    """``(c_pass, c_fail)`` of the permutation KS test (``ks_at_n(..., support="mixed")``, exact with ties) for
    N answers against ``truth_size`` draws when the pooled sample's only tie is one block at its start:
    ``atom_truth`` truth draws and ``atom_sample`` answers on the truth's minimum, every other value distinct.

    The permutation null then depends only on N, the truth's size and the block's size B = t0 + k0, and the
    p-value P(D* >= D) is non-increasing in D, so the test passes exactly when D <= c(B). Found like
    :func:`critical_bracket`, by the test itself on constructed samples with that tie structure (the answers off
    the atom at the truth's quantiles off the atom, moved s ranks up; a galloping search over s from the last
    root found). Every D <= c_pass passes and every D >= c_fail fails; -inf / inf where no pass / no fail was
    seen (honest, not tight). c(B) is non-increasing in B: a larger first block removes checkpoints of D*, so
    D* is smaller under the coupling of the two nulls (used by :func:`cell_p_pass_permutation`)."""
    from ..metrics import ks_at_n

    t0, k0 = int(atom_truth), int(atom_sample)
    if not (0 <= t0 <= truth_size and 0 <= k0 <= n) or (t0 == 0 and k0 > 0):
        raise ValueError(f"no tie block of {t0} truth draws and {k0} answers for N={n}, {truth_size} draws")
    rest_t, rest_n = truth_size - t0, n - k0
    truth = np.concatenate([np.zeros(t0), np.arange(1, rest_t + 1, dtype=float)])
    base = np.floor((np.arange(rest_n) + 0.5) * rest_t / max(rest_n, 1))  # ranks among the truth off the atom
    top = max(rest_t - 1, 0)

    apart = np.arange(rest_n) * (0.4 / max(rest_n, 1))  # answers that share a truth gap stay distinct, in order

    def test(ranks: np.ndarray) -> tuple[float, bool]:
        sample = np.concatenate([np.zeros(k0), ranks + 0.5 + apart])
        res = ks_at_n(sample, truth, ns=(n,), threshold=threshold, method="paper", support="mixed")[n]
        return float(res["statistic"]), bool(res["pass"])

    seen: dict[int, tuple[float, bool]] = {}

    def at(s: int) -> tuple[float, bool]:  # shifted up s ranks (up to above every truth draw)
        if s not in seen:
            seen[s] = test(np.minimum(base + s, top + 1) + 1)
        return seen[s]

    # the first shift: where the statistic should reach the last critical value found (or the asymptotic one),
    # a shift of one rank moving it by about 1 / truth_size
    key = (n, truth_size, t0, float(threshold))
    c_guess = _SHIFT_GUESS.get(key, math.sqrt(-0.5 * math.log(threshold / 2) * (n + truth_size) / (n * truth_size)))
    guess = 0
    for _ in range(8):  # Newton steps on the statistic's rank slope
        step = int(round((c_guess - at(guess)[0]) * truth_size))
        guess = min(max(guess + step, 0), top)
        if step == 0 or guess in seen:
            break
    lo = hi = None  # largest passing, smallest failing shift known
    if at(guess)[1]:
        lo, step = guess, 1
        while lo < top:
            s = min(lo + step, top)
            if at(s)[1]:
                lo, step = s, step * 2
            else:
                hi = s
                break
    else:
        hi, step = guess, 1
        while hi > 0:
            s = max(hi - step, 0)
            if at(s)[1]:
                lo = s
                break
            hi, step = s, step * 2
    if lo is not None and hi is not None:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if at(mid)[1]:
                lo = mid
            else:
                hi = mid
        _SHIFT_GUESS[key] = seen[lo][0]
    c_pass = max((d for d, ok in seen.values() if ok), default=-math.inf)
    c_fail = min((d for d, ok in seen.values() if not ok), default=math.inf)
    if c_fail == math.inf and rest_n and rest_t:
        # no shift up fails: the largest statistics have the answers pressed down onto the atom's side (G above
        # F), up to 1 - t0 / m; bisect that family (answers' ranks scaled by (m' - s) / m')
        low_seen: dict[int, tuple[float, bool]] = {}

        def down(s: int) -> tuple[float, bool]:
            if s not in low_seen:
                low_seen[s] = test(np.floor(base * (rest_t - s) / rest_t))
            return low_seen[s]

        if not down(rest_t)[1]:
            lo, hi = 0, rest_t
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if down(mid)[1] else (lo, mid)
        c_pass = max([c_pass] + [d for d, ok in low_seen.values() if ok])
        c_fail = min([c_fail] + [d for d, ok in low_seen.values() if not ok])
        if c_fail == math.inf:  # both extremes pass: every attainable statistic (at most their larger one) passes
            c_pass = max(c_pass, 1.0)
    return c_pass, c_fail


class _CriticalValues:
    """The critical values c(t0 + k), k = 0..N, of :func:`tied_critical_bracket`, computed only where a decision
    needs them: c is non-increasing in the block size, so a known c_pass at a larger block or c_fail at a smaller
    one often decides already."""

    def __init__(self, n: int, truth_size: int, t0: int, threshold: float):
        self.key = (n, truth_size, t0, threshold)
        self.c_pass = np.full(n + 1, np.nan)
        self.c_fail = np.full(n + 1, np.nan)

    def _known(self) -> tuple[np.ndarray, np.ndarray]:
        """Per k: the largest c_pass known at k or above (c(k) is at least it), the smallest c_fail known at k or
        below (c(k) is below it)."""
        cp = np.where(np.isnan(self.c_pass), -np.inf, self.c_pass)
        cf = np.where(np.isnan(self.c_fail), np.inf, self.c_fail)
        return np.maximum.accumulate(cp[::-1])[::-1], np.minimum.accumulate(cf)

    def _decide(self, k: Any, x: Any, strict: bool) -> np.ndarray:
        """Per entry: x <= c(t0 + k) for certain (``strict`` False: a sure pass), or x not above c(t0 + k) for
        certain (``strict`` True: not a sure fail, i.e. x < c_fail)."""
        x = np.asarray(x, dtype=float)
        k = np.broadcast_to(np.asarray(k, dtype=int), x.shape)
        tol = 1e-12  # statistics are ratios of integers: rounding must not move a draw across the threshold
        while True:
            floor_c, ceil_c = self._known()
            exact = ~np.isnan(self.c_pass[k])
            if strict:  # possible pass: x <= c(k); excluded when x >= a c_fail known at a block <= k
                yes = (x <= floor_c[k] + tol) | (exact & (x < self.c_fail[k] - tol))
                no = (x >= ceil_c[k] - tol) | (exact & ~yes)
            else:  # sure pass: x <= a c_pass known at a block >= k
                yes = x <= floor_c[k] + tol
                no = (x > ceil_c[k] - tol) | (exact & ~yes)
            open_ = ~(yes | no)
            if not open_.any():
                return yes
            todo = np.unique(k[open_])
            n, m, t0, thr = self.key
            for kk in {int(todo[-1]), int(todo[0])}:  # the largest and the smallest block left open first
                self.c_pass[kk], self.c_fail[kk] = tied_critical_bracket(n, m, t0, kk if t0 else 0, thr)

    def surely_at_most(self, k, x) -> np.ndarray:
        """x <= c(t0 + k) for certain (a sure pass of statistic x)."""
        return self._decide(k, x, strict=False)

    def possibly_at_most(self, k, x) -> np.ndarray:
        """x < c_fail(t0 + k): not a sure fail."""
        return self._decide(k, x, strict=True)


def cell_p_pass_permutation(values: Any, masses: Any, cells: Any, missing: float, truth_sorted: Any, n: int,
                            threshold: float, low: float = -math.inf, draws: int = 2000,
                            seed: int = 0, escape: float = 0.0) -> dict[str, Any] | None:
    """:func:`cell_p_pass` for the permutation KS test (support ``mixed``, or ``method="exact"``): the truth
    draws have at most one tie, a point mass (the atom, t0 draws) at their minimum (:func:`truth_atom`; None
    otherwise). ``low`` is the least valid value (the problem's support); module docstring, "permutation test".

    Per Monte-Carlo sample: k0 answers from leaves on the atom, up to ``span`` more from cells whose interval
    holds it and up to K from the missing mass; D in [D_lo, D_hi] as in :func:`cell_p_pass`. With c(B)
    non-increasing in B (:func:`tied_critical_bracket`),

        sure pass:      D_hi + K/N <= c_pass(t0 + k0 + span + K),
        possible pass:  D_lo - K/N <  c_fail(t0 + max(k0 - K, 0)),

    a sample with an answer possibly below the atom (K > 0 when ``low`` is below it) or with a tie the atom
    does not explain (a leaf other than the atom drawn twice, or on a truth draw) is no sure pass and a possible
    one (a tie between answers alone leaves D and lowers the p-value). Cells and missing mass are taken without
    atoms off the truth's atom (the no-tie assumption). The point value ``p`` places the cells' draws at their
    midpoints, untied."""
    from scipy import stats

    found = truth_atom(truth_sorted)
    if found is None:
        return None
    atom, t0 = found
    v, w = np.asarray(values, dtype=float), np.asarray(masses, dtype=float)
    c = np.asarray(cells, dtype=float).reshape(-1, 3).copy()
    truth = np.asarray(truth_sorted, dtype=float)
    known = float(w.sum() + c[:, 2].sum())
    if known <= 0:
        return {"lo": 0.0, "hi": 1.0, "p": math.nan, "se": math.nan, "eps": 1.0, "draws": 0, "odd_share": math.nan}
    eps = escape_eps(missing, known, escape)
    if atom is not None:
        # a cell whose padded bottom is within its rounding pad of the atom holds numbers written from the atom's
        # digits up: correctly rounded parsing is monotone, so none reads below the atom
        pad = 2e-12 * np.maximum(np.maximum(np.abs(c[:, 0]), np.abs(c[:, 1])), 1e-300)
        c[:, 0] = np.where((c[:, 0] < atom) & (atom - c[:, 0] <= pad), atom, c[:, 0])
        on_atom = np.concatenate([v == atom, np.zeros(len(c), bool)])
        holds_atom = np.concatenate([np.zeros(v.size, bool), (c[:, 0] <= atom) & (atom <= c[:, 1])])
        below = np.concatenate([v < atom, c[:, 0] < atom])
    else:
        on_atom = holds_atom = below = np.zeros(v.size + len(c), bool)
    off_truth = np.searchsorted(truth, v, side="right") == np.searchsorted(truth, v, side="left")
    leaf = np.concatenate([np.ones(v.size, bool), np.zeros(len(c), bool)])
    tie_leaf = np.concatenate([~off_truth & (v != atom) if atom is not None else ~off_truth,
                               np.zeros(len(c), bool)])
    picks, d_lo, d_hi, d_mid = _sample_statistics(v, w, c, truth, n, draws, seed)
    k0 = on_atom[picks].sum(axis=1)
    span = holds_atom[picks].sum(axis=1)
    ordered = np.sort(picks, axis=1)  # a leaf off the atom drawn twice: equal neighbours once sorted
    twice = ((ordered[:, 1:] == ordered[:, :-1]) & (leaf & ~on_atom)[ordered[:, 1:]]).any(axis=1)
    odd = twice | tie_leaf[picks].any(axis=1) | below[picks].any(axis=1)
    ks = np.arange(n + 1)
    pk = stats.binom.pmf(ks, n, min(max(eps, 0.0), 1.0))
    keep = pk > 1e-15
    ks, pk = ks[keep], pk[keep]
    crit = _CriticalValues(n, truth.size, t0 if atom is not None else 0, float(threshold))
    shut = odd[:, None] | ((ks[None, :] > 0) & (atom is not None and low < atom))  # neither sure nor excluded
    if atom is None:
        k_sure = k_maybe = np.zeros((len(picks), ks.size), dtype=int)
    else:
        k_sure = np.minimum(k0[:, None] + span[:, None] + ks[None, :], n)  # the largest block: the least c
        k_maybe = np.maximum(k0[:, None] - ks[None, :], 0)  # the smallest block (K answers replaced): the largest c
    sure = (~shut & crit.surely_at_most(k_sure, d_hi[:, None] + ks[None, :] / n)) @ pk
    maybe = (shut | crit.possibly_at_most(k_maybe, d_lo[:, None] - ks[None, :] / n)) @ pk
    mid_pass = (~odd & crit.surely_at_most(k0, d_mid)).astype(float)
    odd_mid = np.flatnonzero(odd)
    if odd_mid.size:  # the point value of a sample with ties off the atom: the test itself, cells at midpoints
        from ..metrics import ks_at_n

        mids = np.concatenate([v, (c[:, 0] + c[:, 1]) / 2])
        for i in odd_mid.tolist():
            sample = mids[picks[i]]
            mid_pass[i] = float(ks_at_n(sample, truth, ns=(n,), threshold=threshold, method="exact")[n]["pass"])
    lo_share = float(sure.mean())
    hi_share = min(float(maybe.mean()), 1.0)
    p = float(mid_pass.mean())
    lo = clopper_pearson(lo_share * draws, draws)[0]
    hi = clopper_pearson(hi_share * draws, draws)[1]
    return {"lo": lo, "hi": hi, "p": p, "se": math.sqrt(p * (1 - p) / draws), "eps": eps, "draws": draws,
            "odd_share": float(odd.mean())}
