"""Confidence intervals and summaries: Wilson, the t interval of a mean on its (clustered) standard error, the
bootstrap, clustered standard errors, and the rate/value summaries every report row uses.

Part of :mod:`ub_core.metrics`.
"""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from scipy import special, stats

from .inputs import _positive_int

__all__ = ["clip_roundoff", "clip_values", "ROUNDOFF", "shows_spread", "floored_interval", "mean_interval",
           "wilson_interval", "bootstrap_interval", "clustered_interval", "clustered_stderr", "summarize_rate",
           "summarize_values", "MIN_CLUSTERS", "effective_clusters", "stratified_stderr"]

#: Fewest clusters for which a cluster-robust error is used. With C clusters the clustered variance is estimated
#: from C cluster sums (C - 1 degrees of freedom): with 3 of them (a ``--limit`` run) it is noise (0.014 against an
#: unclustered 0.045 in one such run). Below this the errors fall back to treating every value as its own
#: cluster (the unclustered error), a rule of thumb (Cameron and Miller 2015 discuss few-cluster bias below ~10-50).
MIN_CLUSTERS = 10


def effective_clusters(clusters: Sequence[Any], min_clusters: int = MIN_CLUSTERS) -> list[str]:
    """The cluster labels the clustered errors use: ``clusters`` as strings when they name at least
    ``min_clusters`` distinct clusters, else one label per value (the unclustered error; see :data:`MIN_CLUSTERS`)."""
    labels = [str(c) for c in clusters]
    if len(set(labels)) >= min_clusters:
        return labels
    return [f"#{i}" for i in range(len(labels))]

# ============================================================================================ ranges

#: How far (relative to the bound's scale, ``max(1, |bound|)``) a value may lie outside its metric's closed range and
#: still be read as round-off: a Manhattan distance summed from floats reaches 2.0000000000000004, a
#: missing mass -2.2e-16. 1e-9 is ten million ulps at 1: far above accumulated float error over a few thousand
#: terms, far below any real excursion.
ROUNDOFF = 1e-9


def shows_spread(se: float, scale: float, rtol: float = ROUNDOFF) -> bool:
    """Whether an observed standard error reflects spread in the data rather than float round-off: se > rtol * scale,
    with ``scale`` the data's own magnitude (the largest |value|, or the range width of the metric if larger).

    A difference a_i - b_i of two floats carries an error of about 1e-16 * max(|a_i|, |b_i|), so differences that
    are all equal in exact arithmetic show an SE of 1e-18 (50 pairs of 0.5 vs 0.4): that is no spread. ``rtol`` is
    :data:`ROUNDOFF` (1e-9, ten million ulps), relative so that the same data in other units get the same verdict.
    A NaN SE (fewer than two values, or clusters) shows none."""
    return bool(math.isfinite(se) and se > rtol * max(float(scale), 0.0))


def clip_roundoff(value: float, bounds: tuple[float, float] | None,
                  rtol: float = ROUNDOFF) -> tuple[float | None, bool]:
    """``value`` checked against its closed range ``bounds = (lo, hi)`` (either end may be infinite; None: any
    number) with a tolerance for round-off: ``(value, False)`` inside, ``(lo or hi, True)`` when it lies outside by
    at most ``rtol * max(1, |bound|)`` (clipped: count it), ``(None, False)`` when it lies further out (not a
    value of this metric: refuse it). NaN and +-inf are returned as they are (undefined is not out of range)."""
    v = float(value)
    if bounds is None or not math.isfinite(v):
        return v, False
    lo, hi = float(bounds[0]), float(bounds[1])
    if lo <= v <= hi:
        return v, False
    edge = lo if v < lo else hi
    if abs(v - edge) <= rtol * max(1.0, abs(edge)):
        return edge, True
    return None, False


def clip_values(values: Any, bounds: tuple[float, float] | None, rtol: float = ROUNDOFF,
                name: str = "value") -> tuple[np.ndarray, int]:
    """Every value of ``values`` clipped into ``bounds`` (:func:`clip_roundoff`): ``(array, number clipped)``.
    A value outside its range by more than round-off is a ValueError naming it (never dropped silently)."""
    arr = np.asarray(values, dtype=float).reshape(-1).copy()
    if bounds is None or arr.size == 0:
        return arr, 0
    lo, hi = float(bounds[0]), float(bounds[1])
    # NaN and +-inf pass as they are (clip_roundoff's rule); the rest, vectorised: a python loop per value made a
    # paired comparison of 448 problems cost a millisecond
    finite = np.isfinite(arr)
    below, above = finite & (arr < lo), finite & (arr > hi)
    if not (below.any() or above.any()):
        return arr, 0
    for mask, edge in ((below, lo), (above, hi)):
        far = mask & (np.abs(arr - edge) > rtol * max(1.0, abs(edge)))
        if far.any():
            v = float(arr[np.flatnonzero(far)[0]])
            raise ValueError(f"{name} = {v!r} is outside [{bounds[0]:g}, {bounds[1]:g}] by more than round-off")
    arr[below], arr[above] = lo, hi
    return arr, int(below.sum() + above.sum())


# ============================================================================================ aggregation

def _confidence(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating)) \
            or not (0.0 < float(confidence) < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (the KS@N pass rate over problems).

    With p = k/n and z the two-sided normal quantile:
    ``(p + z^2/(2n) -/+ z sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)``, clipped to [0, 1]; equal to
    ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``. ``n == 0`` gives (0.0, 1.0).
    """
    conf = _confidence(confidence)
    for v, nm in ((successes, "successes"), (n, "n")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{nm} must be a non-negative integer, got {v!r}")
    k, n = int(successes), int(n)
    if k > n:
        raise ValueError(f"successes ({k}) exceeds n ({n})")
    if n == 0:
        return 0.0, 1.0
    z = float(special.ndtri(0.5 + conf / 2.0))
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


_BOOT_RNG_KW = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"


def bootstrap_interval(values: Any, statistic: Callable = np.mean, confidence: float = 0.95,
                       n_resamples: int = 2000, seed: int = 0, method: str = "percentile") -> tuple[float, float]:
    """Bootstrap confidence interval of ``statistic`` (default the mean) via ``scipy.stats.bootstrap``.

    ``method`` is scipy's: ``percentile`` (default), ``basic`` or ``BCa``. Values must be finite (use
    :func:`summarize_values` to drop None/NaN first); an empty input raises ValueError. Degenerate inputs return
    the point interval ``(s, s)`` with ``s = statistic(values)``, without calling scipy (whose percentile
    interval is undefined there): a single value, or all values equal. A BCa interval that comes back NaN
    falls back to the percentile interval. Deterministic for a given ``seed``.
    """
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ValueError("bootstrap_interval needs at least one value")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values contain NaN or infinite entries")
    conf = _confidence(confidence)
    B = _positive_int(n_resamples, "n_resamples")
    if method not in ("percentile", "basic", "BCa"):
        raise ValueError(f"method must be percentile, basic or BCa, got {method!r}")
    if arr.size < 2 or np.all(arr == arr[0]):
        s = float(statistic(arr))
        return s, s

    def run(meth: str) -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                res = stats.bootstrap((arr,), statistic, confidence_level=conf, n_resamples=B, method=meth,
                                      **{_BOOT_RNG_KW: np.random.default_rng(seed)})
        return float(res.confidence_interval.low), float(res.confidence_interval.high)

    low, high = run(method)
    if not (math.isfinite(low) and math.isfinite(high)) and method != "percentile":
        low, high = run("percentile")
    if not (math.isfinite(low) and math.isfinite(high)):
        s = float(statistic(arr))
        return s, s
    return low, high


def floored_interval(low: float, high: float, mean: float, n: int, bounds: tuple[float, float] | None,
                     confidence: float = 0.95) -> tuple[float, float]:
    """An interval for the mean of n values in the closed range ``bounds`` made to respect it and never to have
    zero width: clipped into ``bounds``, and widened where narrower than Wilson's (1927) score interval with no
    observed event, scaled to the range:

        width >= R z^2 / (n + z^2),   R = hi - lo

    (the least uncertainty n values that all agree leave about a [0, R]-valued mean: a share z^2 / (n + z^2) of the
    population could lie at the other end). A widened interval is centred on ``mean`` and shifted inside the range,
    so at an end it is Wilson's exactly ([0, z^2 / (n + z^2)] for n zeros in [0, 1]). ``bounds`` None or with an
    infinite end: only the clipping to the finite end applies. :func:`mean_interval` calls it only where the values
    show no spread: where they vary the widening would override them (an SD of 0.03 over 448 values has a 95%
    interval 0.0056 wide against a floor of 0.0085, which would then cover 100%)."""
    low, high = float(low), float(high)
    if bounds is None:
        return low, high
    lo, hi = float(bounds[0]), float(bounds[1])
    low, high = max(low, lo), min(high, hi)
    if not (math.isfinite(lo) and math.isfinite(hi)) or n < 1:
        return low, high
    z = float(special.ndtri(0.5 + _confidence(confidence) / 2.0))
    width = min(hi - lo, (hi - lo) * z * z / (n + z * z))
    if high - low < width:
        low, high = mean - width / 2, mean + width / 2
        if low < lo:
            low, high = lo, lo + width
        elif high > hi:
            low, high = hi - width, hi
    return low, high


def mean_interval(values: Any, clusters: Sequence[Any] | None = None, confidence: float = 0.95,
                  bounds: tuple[float, float] | None = None,
                  min_clusters: int = MIN_CLUSTERS) -> tuple[float | None, float | None]:
    """The Student t interval for the mean of ``values`` (Miller 2024, "Adding Error Bars to Evals", sec. 2-3):

        mean +/- t_{1 - alpha/2, df} SE,   SE = :func:`clustered_stderr` (CR1), df = C - 1

    with C the effective clusters (:func:`effective_clusters`: every value its own cluster without ``clusters`` or
    below ``min_clusters``, so SE = sd / sqrt(n) and df = n - 1), clipped into ``bounds`` (the closed range of one
    value). Only where the values show no spread (:func:`shows_spread`: one value, all equal up to round-off, or
    cluster sums without spread) does another interval stand in: :func:`floored_interval`'s when ``bounds`` are
    finite (in range, never of zero width), and ``(None, None)`` when they are open (nothing can be said: a
    zero-width interval would claim certainty). The t interval, not a percentile bootstrap: the bootstrap's
    percentile interval of a mean is too narrow at small n (coverage 0.72 at n = 3, 0.92-0.93 at n = 20-100 in the
    interval hunter, tests/generic/test_interval_hunter.py), as is the cluster bootstrap with 10 clusters (0.90),
    where the t interval on the clustered SE holds 0.95."""
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ValueError("mean_interval needs at least one value")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values contain NaN or infinite entries")
    labels = list(clusters) if clusters is not None else list(range(arr.size))
    if len(labels) != arr.size:
        raise ValueError(f"{arr.size} values but {len(labels)} cluster labels")
    conf = _confidence(confidence)
    n, m = int(arr.size), float(arr.mean())
    finite = bounds is not None and math.isfinite(float(bounds[0])) and math.isfinite(float(bounds[1]))
    width = float(bounds[1]) - float(bounds[0]) if finite else 0.0
    if n < 2:
        se, df = float("nan"), 0
    elif clusters is None:  # every value its own cluster: CR1 is sd / sqrt(n), without labelling n clusters
        se, df = float(np.std(arr, ddof=1) / math.sqrt(n)), n - 1
    else:
        se, df = clustered_stderr(arr, labels, min_clusters), len(set(effective_clusters(labels, min_clusters))) - 1
    if not shows_spread(se, max(float(np.max(np.abs(arr))), width)):
        return floored_interval(m, m, m, n, bounds, conf) if finite else (None, None)
    half = float(special.stdtrit(df, 0.5 + conf / 2.0)) * se
    low, high = m - half, m + half
    if bounds is not None:
        low, high = max(low, float(bounds[0])), min(high, float(bounds[1]))
    return low, high


def clustered_interval(values: Any, clusters: Sequence[Any], confidence: float = 0.95,
                       min_clusters: int = MIN_CLUSTERS,
                       bounds: tuple[float, float] | None = None) -> tuple[float | None, float | None]:
    """The interval of the mean of ``values`` whose items share clusters: :func:`mean_interval` with the
    cluster-robust SE and t on C - 1 degrees of freedom.

    Items that share a cluster are not independent: they share an option pair (the numeric-calibration paper,
    section 3: "when we compute standard errors we cluster option pairs together (Miller, 2024)", 95% intervals) or
    a scenario (ours: the implicit-reasoning paper reports no intervals). With fewer than ``min_clusters`` clusters
    (:data:`MIN_CLUSTERS`) every value is its own cluster (:func:`effective_clusters`). Values must be finite, with
    one cluster label per value. Without spread the interval is :func:`floored_interval`'s where ``bounds`` are
    finite, and ``(None, None)`` where they are not (see :func:`mean_interval`)."""
    arr = np.asarray(values, dtype=float).reshape(-1)
    labels = list(clusters)
    if arr.size == 0:
        raise ValueError("clustered_interval needs at least one value")
    if len(labels) != arr.size:
        raise ValueError(f"{arr.size} values but {len(labels)} cluster labels")
    return mean_interval(arr, labels, confidence, bounds, min_clusters)


def clustered_stderr(values: Any, clusters: Sequence[Any], min_clusters: int = MIN_CLUSTERS) -> float:
    """Cluster-robust standard error of the mean of ``values`` (Miller 2024, "Adding error bars to evals",
    appendix A; the numeric-calibration paper, section 3 clusters by option pair; clustering the implicit-reasoning
    items by scenario is ours, that paper reports no intervals).

    With n values, mean m, and C clusters where cluster c holds the values x_i, i in c:

        SE = sqrt( C / (C - 1) * sum_c ( sum_{i in c} (x_i - m) )^2 ) / n

    The C / (C - 1) factor is the usual finite-cluster correction (CR1; Inspect's ``stderr(cluster=...)`` uses
    the same). With every value in its own cluster it reduces to the usual ``std(ddof=1) / sqrt(n)``. Values
    must be finite, one cluster label per value; fewer than two values give NaN. With fewer than
    ``min_clusters`` distinct clusters (:data:`MIN_CLUSTERS`, 10) the error is the unclustered one, every value its
    own cluster (:func:`effective_clusters`): a clustered error from 3 cluster sums is noise.
    """
    arr = np.asarray(values, dtype=float).reshape(-1)
    labels = list(clusters)
    if len(labels) != arr.size:
        raise ValueError(f"{arr.size} values but {len(labels)} cluster labels")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError("values contain NaN or infinite entries")
    if arr.size == 0:
        return float("nan")
    _, codes = np.unique(np.asarray(effective_clusters(labels, min_clusters)), return_inverse=True)
    C = int(codes.max()) + 1
    if C < 2:
        return float("nan")
    dev_sums = np.bincount(codes, weights=arr - arr.mean())
    return float(math.sqrt(C / (C - 1) * float(np.sum(dev_sums ** 2))) / arr.size)


def stratified_stderr(stderrs: Sequence[float], sizes: Sequence[int]) -> float:
    """Standard error of a mean pooled over strata (the calibration datasets, the implicit categories), each with
    its own standard error ``se_k`` over ``n_k`` values, the strata fixed by design (not sampled):

        SE = sqrt( sum_k (n_k - 1) n_k se_k^2 / (N - K) / N ),   N = sum_k n_k, K strata

    i.e. about ``sqrt(sum_k (n_k / N)^2 se_k^2)``, with the same degrees-of-freedom weights as lm-eval's group
    standard error (``lm_eval.api.metrics.pooled_sample_stderr``), so a pooled figure has the same error in both
    frameworks. A stratum with one value (``se_k`` NaN) adds nothing; NaN when N <= K.
    """
    se = [float(x) for x in stderrs]
    n = [int(x) for x in sizes]
    if len(se) != len(n):
        raise ValueError(f"{len(se)} standard errors but {len(n)} sizes")
    total, k = sum(n), len(n)
    if total <= k:
        return float("nan")
    terms = [(nk - 1) * nk * sk * sk for sk, nk in zip(se, n) if nk > 1]
    if any(not math.isfinite(t) for t in terms):
        return float("nan")
    return math.sqrt(math.fsum(terms) / (total - k) / total)


def _is_missing(v: Any) -> bool:
    """None, NaN or +-inf: a value no mean may take (an undefined WDZ, an old log's infinite one)."""
    if v is None:
        return True
    try:
        return not math.isfinite(float(v))
    except (TypeError, ValueError, OverflowError):
        return False


def summarize_rate(flags: Iterable[Any], confidence: float = 0.95) -> dict[str, Any]:
    """Pass rate with a Wilson interval: ``{"mean", "low", "high", "n", "dropped"}``.

    ``flags`` are booleans or 0/1 numbers (1.0 = pass); None / NaN entries are dropped and counted in
    ``dropped``. With no flags left, ``mean`` is None and the interval is (0.0, 1.0).
    """
    kept, dropped = [], 0
    for f in flags:
        if _is_missing(f):
            dropped += 1
            continue
        v = float(f)
        if v not in (0.0, 1.0):
            raise ValueError(f"a flag must be boolean or 0/1, got {f!r}")
        kept.append(v)
    n = len(kept)
    k = int(sum(kept))
    low, high = wilson_interval(k, n, confidence)
    return {"mean": (k / n if n else None), "low": low, "high": high, "n": n, "dropped": dropped}


def summarize_values(values: Iterable[Any], confidence: float = 0.95,
                     bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """Mean with the t interval of :func:`mean_interval`: ``{"mean", "low", "high", "n", "dropped"}``. With
    ``bounds`` (the closed range of one value) the interval stays in range and never has zero width; without them,
    values without spread (one value, all equal) have ``low`` and ``high`` None: nothing can be said.

    None, NaN and +-inf entries are dropped and counted in ``dropped``, so the mean is always finite (or None:
    with no values left, ``mean``/``low``/``high`` are None).
    """
    kept, dropped = [], 0
    for v in values:
        if _is_missing(v):
            dropped += 1
        else:
            kept.append(float(v))
    n = len(kept)
    if n == 0:
        return {"mean": None, "low": None, "high": None, "n": 0, "dropped": dropped}
    arr = np.asarray(kept)
    low, high = mean_interval(arr, None, confidence, bounds)
    return {"mean": float(np.mean(arr)), "low": low, "high": high, "n": n, "dropped": dropped}
