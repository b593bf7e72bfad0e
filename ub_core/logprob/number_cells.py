"""Numbers as intervals (issue 33, item 3): bounds on a model's answer law from reply prefixes, not leaves.

A model writes a continuous answer digit by digit (``{4.9342}``), so its reply tree (:mod:`.reply_tree`) has a
leaf per written number: far more than any request budget reaches. But a numeric prefix confines what grows from
it: every reply that goes on from ``{4.9`` with digits, then ``}``, then the end of the reply, reads as a value in
[4.9, 5.0]. Such an unexpanded prefix is a *cell*: a mass known to lie in an interval (:func:`number_cell`).

The grammar assumption. A cell's mass is counted as valid mass inside its interval: a reply that has begun a
decimal number inside the answer's braces finishes that number (digits, ``}``, the end). Whatever the expanded
nodes *list* outside that grammar (a letter, an exponent, a second number) is expanded like any other text and
read by the problem's parser, so it is invalid or valid where the parser puts it; only the unlisted and unexpanded
continuations of a cell are assumed to keep to the grammar. The tree reports the mass its expanded numeric nodes
listed outside the grammar (``number_escape``) as the evidence; ``cells=False`` turns cells off (every unexpanded
prefix is missing mass, as before: bounds without the assumption).

With leaves of valid mass L (a point law), cells (mass m_j in [a_j, b_j], total U) and missing mass M (anywhere,
valid or not), the valid law is G = (L + C + w S) / (V + U + w) for some placement C of the cells' mass inside
their intervals, some w in [0, M] and law S. For every x,

    G_lo(x) = (L(<=x) + Σ_{b_j <= x} m_j) / (V + U + M)  <=  G(x)  <=  (L(<=x) + Σ_{a_j <= x} m_j + M) / (V + U + M) = G_hi(x)

(the missing mass above x and each cell at its top for the lower envelope; below x and at the bottom for the
upper one). So the KS distance sup |G - F| to the truth draws' CDF F lies in

    [sup_x max(G_lo - F, F - G_hi, 0),  sup_x max(G_hi - F, F - G_lo)]    (:func:`ks_distance_bounds`).

Where F is flat across a cell the cell's position does not matter, so the bounds close fastest by expanding the
cells over which F moves most (:func:`cell_priority`).

``p_pass@N`` (:func:`cell_p_pass`). KS@N on a continuous support (the paper's ``scipy.stats.ks_2samp`` exact
test) passes when the statistic D is at most a critical value c that depends only on N and the truth's size
(:func:`critical_bracket`). N answers from G are coupled with N draws from the known part R (leaves and cells,
renormalised): K ~ Binomial(N, eps), eps = M / (V + U + M), of them come from the missing mass instead, and
replacing K of N answers moves D by at most K / N. A draw from R is a leaf value or a cell; with the cells'
draws anywhere in their intervals the statistic lies in [D_lo, D_hi] (the same envelope, on the sample's ECDF). So

    P(pass) >= Σ_k Bin(k; N, eps) P_R(D_hi + k/N <= c),    P(pass) <= Σ_k Bin(k; N, eps) P_R(D_lo - k/N <= c),

each probability a Monte-Carlo share over ``draws`` samples, widened by its 99% Clopper-Pearson interval, so the
Monte-Carlo error is inside the stated bounds. The point value places each cell's draws at the cell's midpoint.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Sequence

import numpy as np

__all__ = ["number_cell", "critical_bracket", "ks_distance_bounds", "cell_p_pass", "cell_priority", "interval_statistics",
           "clopper_pearson", "envelope_distances", "CP_LEVEL"]

#: Two-sided level of the Clopper-Pearson interval that carries Monte-Carlo error into the bounds.
CP_LEVEL = 0.99

# A reply that has begun a decimal number inside braces: optional white space, "{", optional sign, digits, the
# decimal point, digits. Before the point the integer part's length is open ("{4" may become 4, 45 or 4.5): not
# an interval.
_CELL = re.compile(r"\s*\{\s*([+-]?)(\d+)\.(\d*)")


def number_cell(text: str) -> tuple[float, float] | None:
    """The closed interval that every reply continuing ``text`` with digits, then ``}``, then the end, reads as;
    None when ``text`` is not a decimal number begun inside braces (module docstring).

    ``{4.9`` -> [4.9, 5.0]; ``{-4.9`` -> [-5.0, -4.9]; ``{4.`` -> [4, 5]. The ends are widened by a relative
    1e-12 so that float rounding of a long written number cannot fall outside."""
    m = _CELL.fullmatch(text)
    if m is None:
        return None
    sign, whole, frac = m.groups()
    lo = float(f"{whole}.{frac}" if frac else whole)
    hi = lo + 10.0 ** -len(frac)
    if sign == "-":
        lo, hi = -hi, -lo
    pad = 1e-12 * max(abs(lo), abs(hi), 1e-300)
    return lo - pad, hi + pad


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


def _grid(values: np.ndarray, cells: np.ndarray, truth: np.ndarray):
    """The grid of every leaf value and cell end, F at it and just before it, and each item's positions."""
    a, b = (cells[:, 0], cells[:, 1]) if len(cells) else (np.empty(0), np.empty(0))
    grid = np.unique(np.concatenate([values, a, b]))
    f_at = np.searchsorted(truth, grid, side="right") / truth.size
    f_before = np.searchsorted(truth, grid, side="left") / truth.size
    return grid, f_at, f_before


def ks_distance_bounds(values: Any, masses: Any, cells: Any, missing: float, truth_sorted: Any) -> tuple[float, float]:
    """Bounds of the KS distance between the model's valid law and the truth draws' CDF (module docstring):
    ``values``/``masses`` the valid leaves, ``cells`` rows ``(a, b, mass)``, ``missing`` the mass of unknown
    place and validity, ``truth_sorted`` the truth draws, sorted. ``(0, 1)`` when nothing valid is known."""
    v, w = np.asarray(values, dtype=float), np.asarray(masses, dtype=float)
    c = np.asarray(cells, dtype=float).reshape(-1, 3)
    truth = np.asarray(truth_sorted, dtype=float)
    total = float(w.sum() + c[:, 2].sum() + missing)
    if w.sum() + c[:, 2].sum() <= 0 or total <= 0:
        return 0.0, 1.0
    grid, f_at, f_before = _grid(v, c[:, :2], truth)
    leaf = np.zeros(grid.size)
    np.add.at(leaf, np.searchsorted(grid, v), w)
    lo_mass, hi_mass = leaf.copy(), leaf.copy()
    np.add.at(lo_mass, np.searchsorted(grid, c[:, 1]), c[:, 2])  # a cell surely <= x from its top on
    np.add.at(hi_mass, np.searchsorted(grid, c[:, 0]), c[:, 2])  # possibly <= x from its bottom on
    lo = np.cumsum(lo_mass) / total
    hi = (np.cumsum(hi_mass) + missing) / total
    lo[-1] = max(lo[-1], 1.0 - missing / total)
    d_lo, d_hi = envelope_distances(lo, hi, f_at, f_before, start_hi=missing / total)
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


def cell_p_pass(values: Any, masses: Any, cells: Any, missing: float, truth_sorted: Any, n: int,
                bracket: tuple[float, float], draws: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Bounds and point value of P(KS@N passes | N valid answers) for a law of leaves, cells and missing mass,
    when passing is D <= c with c in ``bracket`` (:func:`critical_bracket`); module docstring.

    Returns ``lo``, ``hi`` (Monte-Carlo error included), ``p`` (cells at their midpoints) with its standard error
    ``se``, ``eps`` and ``draws``."""
    from scipy import stats

    v, w = np.asarray(values, dtype=float), np.asarray(masses, dtype=float)
    c = np.asarray(cells, dtype=float).reshape(-1, 3)
    truth = np.asarray(truth_sorted, dtype=float)
    known = float(w.sum() + c[:, 2].sum())
    if known <= 0:
        return {"lo": 0.0, "hi": 1.0, "p": math.nan, "se": math.nan, "eps": 1.0, "draws": 0}
    eps = missing / (known + missing)
    tops = np.concatenate([v, c[:, 1]])  # each item is surely <= x from here on
    bottoms = np.concatenate([v, c[:, 0]])  # possibly <= x from here on
    mids = (bottoms + tops) / 2
    probs = np.concatenate([w, c[:, 2]]) / known
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(n), 33]))
    picks = rng.choice(len(probs), size=(draws, n), p=probs)
    d_lo, d_hi = interval_statistics(tops[picks], bottoms[picks], truth)
    d_mid = interval_statistics(mids[picks], mids[picks], truth)[1]
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
