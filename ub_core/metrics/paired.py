"""Paired comparisons of two models on the same items: pure statistics (no files, no records).

Following Miller (2024), "Adding Error Bars to Evals" (arXiv 2411.00640): the problems of a bank are a sample from a
super-population of problems; two models run on the same problems are compared through the question-level
differences d_i = a_i - b_i (sec. 4, "Comparing models": pairing removes the between-question variance that two
independent intervals would count twice); where questions share a source their errors are clustered (sec. 3,
"Clustered standard errors"); and a bank's power to tell models apart is planned from the observed variances
(sec. 5, "Power analysis"). Next-token probabilities remove the within-question sampling noise (sec. 4.3): our
sampling-free ``p_pass@N`` is a problem's expected KS@N verdict, not one pass/fail draw, and
:func:`sampling_noise_removed` says how much variance that removes.

Paired 0/1 outcomes get the McNemar score test with Tango's score interval (one procedure: p < alpha exactly when
the interval excludes 0); other values the paired t, with a floor on the SE (:func:`se_floor`) standing in only where
the differences show no spread (:func:`floor_if_no_spread`). Matching two runs'
records and reading files is :mod:`ub_core.compare` and :mod:`ub_core.report.compare_runs`.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import special, stats

from .intervals import (
    MIN_CLUSTERS,
    ROUNDOFF,
    clip_values,
    clustered_stderr,
    shows_spread,
)

__all__ = ["paired_difference", "mcnemar_exact", "mcnemar_score", "tango_interval", "se_floor", "P_FLOOR",
           "shows_spread", "floor_if_no_spread", "minimum_detectable_effect", "sampling_noise_removed", "holm"]


def _z(p: float) -> float:
    # scipy.special's quantiles and tails, not scipy.stats': the same functions without the argument checking that
    # made them most of a comparison's time
    return float(special.ndtri(p))


def minimum_detectable_effect(se: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided test at level ``alpha`` detects with probability ``power``, for an
    estimate with standard error ``se`` (Miller 2024, sec. 5, power analysis):

        MDE = (z_{1 - alpha/2} + z_{power}) * SE        (= 2.80 SE at alpha 0.05, power 0.8)

    For a paired comparison ``se`` is the standard error of the mean difference; for a single run compared with
    an independent run of equal variance it is sqrt(2) times the run's own standard error."""
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError("alpha and power must be in (0, 1)")
    return float((_z(1 - alpha / 2) + _z(power)) * se) if math.isfinite(se) else float("nan")


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided exact McNemar test of paired pass/fail outcomes (Miller 2024, sec. 4: for binary scores the
    paired test only sees the discordant pairs). With n10 problems that ``a`` passes and ``b`` fails, and n01 the
    reverse, under equal models n10 ~ Binomial(n10 + n01, 1/2); the p-value is ``scipy.stats.binomtest``'s
    two-sided one (1.0 when no pair is discordant)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n10 = int(np.sum((x == 1) & (y == 0)))
    n01 = int(np.sum((x == 0) & (y == 1)))
    if n10 + n01 == 0:
        return 1.0
    return float(stats.binomtest(n10, n10 + n01, 0.5).pvalue)


def _binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0) | (x == 1)))


#: the smallest p-value reported: a tail probability that underflows the float range is reported as this (the
#: smallest normal double), never as 0 (which would claim certainty)
P_FLOOR = float(np.finfo(float).tiny)


def _tango_z(delta: float, n10: int, n01: int, n: int) -> float:
    """Tango's (1998) score statistic for H0: p10 - p01 = delta (see :func:`tango_interval`)."""
    num = n10 - n01 - n * delta
    if abs(num) <= 1e-12 * n:
        return 0.0
    A, B, C = 2.0 * n, -n10 - n01 + (2.0 * n - n10 + n01) * delta, -n01 * delta * (1.0 - delta)
    disc = math.sqrt(max(B * B - 4 * A * C, 0.0))
    # the non-negative root of A q^2 + B q + C = 0, written to avoid cancellation
    q = (-2.0 * C / (B + disc)) if B > 0 else (disc - B) / (2 * A)
    var = n * (2.0 * q + delta * (1.0 - delta))
    if var <= 0:
        return math.copysign(math.inf, num)
    return num / math.sqrt(var)


def tango_interval(n10: int, n01: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Score interval for the difference of two paired proportions, delta = p10 - p01 (Tango 1998, "Equivalence
    test and confidence interval for the difference in proportions for the paired-sample design", Stat. Med. 17,
    891-908; recommended by Newcombe 1998, Stat. Med. 17, 2635-2650, and by Fagerland, Lydersen & Laake 2014,
    "Recommended tests and confidence intervals for paired binomial proportions", Stat. Med. 33, 2850-2875).

    With n pairs, n10 pairs where the first passes and the second fails, n01 the reverse, the score statistic is

        Z(delta) = (n10 - n01 - n delta) / sqrt( n (2 q~ + delta (1 - delta)) )

    where q~ is the maximum-likelihood p01 under the constraint p10 - p01 = delta, the non-negative root of
    2n q^2 + (-(n10 + n01) + (2n - n10 + n01) delta) q - n01 delta (1 - delta) = 0. The interval is
    {delta in [-1, 1] : |Z(delta)| <= z_{1 - alpha/2}} (Z decreases in delta; its ends are found by root finding).
    At delta = 0, Z = (n10 - n01) / sqrt(n10 + n01): McNemar's statistic, so the interval excludes 0 exactly when
    the asymptotic McNemar test rejects (:func:`paired_difference`). It lies in [-1, 1] and never has zero width:
    with no discordant pair it is +/- z^2 / (n + z^2), with every pair discordant one way [~, 1]."""
    from scipy.optimize import brentq

    n10, n01, n = int(n10), int(n01), int(n)
    if n < 1 or n10 < 0 or n01 < 0 or n10 + n01 > n:
        raise ValueError(f"need 0 <= n10 + n01 <= n and n >= 1, got n10={n10}, n01={n01}, n={n}")
    z = _z(0.5 + confidence / 2)
    d = (n10 - n01) / n
    eps = 1e-12
    lo_end, hi_end = -1.0 + eps, 1.0 - eps
    if d <= lo_end or _tango_z(lo_end, n10, n01, n) <= z:
        low = -1.0
    else:
        low = brentq(lambda t: _tango_z(t, n10, n01, n) - z, lo_end, d, xtol=1e-13)
    if d >= hi_end or _tango_z(hi_end, n10, n01, n) >= -z:
        high = 1.0
    else:
        high = brentq(lambda t: _tango_z(t, n10, n01, n) + z, d, hi_end, xtol=1e-13)
    return max(-1.0, float(low)), min(1.0, float(high))


def mcnemar_score(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided asymptotic McNemar test without continuity correction (McNemar 1947): with n10 and n01 the
    discordant counts, Z = (n10 - n01) / sqrt(n10 + n01) and p = 2 (1 - Phi(|Z|)); 1.0 with no discordant pair.
    It is the score test at delta = 0 that :func:`tango_interval` inverts, so the two agree; Fagerland, Lydersen &
    Laake (2013, BMC Med. Res. Methodol. 13:91) show it holds its level closely, where the exact conditional test
    (:func:`mcnemar_exact`) is conservative. Never below :data:`P_FLOOR`."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n10 = int(np.sum((x == 1) & (y == 0)))
    n01 = int(np.sum((x == 0) & (y == 1)))
    if n10 + n01 == 0:
        return 1.0
    return max(P_FLOOR, float(2 * stats.norm.sf(abs(n10 - n01) / math.sqrt(n10 + n01))))


def se_floor(n: int, value_range: float, confidence: float = 0.95) -> float:
    """The smallest standard error a mean of n values in a range of width R may claim (ours, from Wilson 1927):

        SE_floor = R z / (n + z^2),   z = z_{1 - alpha/2}

    so that z SE_floor = R z^2 / (n + z^2), the half-width of Wilson's score interval for a proportion with no
    observed event among n, scaled by R. n values that all agree cannot rule out that a share z^2 / (n + z^2) of
    the population of problems differs by up to R; the floor keeps an interval (and an MDE) from having zero width
    when the sample shows no spread. 0 when R is 0."""
    z = _z(0.5 + confidence / 2)
    return float(value_range) * z / (n + z * z)


def floor_if_no_spread(se_obs: float, n: int, width: float, scale: float,
                       confidence: float = 0.95) -> tuple[float, bool]:
    """The SE an interval, test or MDE uses: the observed ``se_obs`` wherever the data show spread
    (:func:`shows_spread`), and :func:`se_floor` of ``n`` and the range ``width`` only where they show none (every
    difference equal, up to round-off). Where the data vary the floor never replaces them: an SD of 0.03 over 448
    problems has SE 0.0014 against a floor of 0.0043, and a floor taken as a lower bound there made a 95% interval
    cover 100% and cost nearly all power. Returns ``(se, floored)``."""
    if shows_spread(se_obs, scale):
        return float(se_obs), False
    return se_floor(n, width, confidence), True


def _range_width(bounds: tuple[float, float] | None, x: np.ndarray, y: np.ndarray) -> tuple[float, bool]:
    """The width R of the values' range: the metric's own (both ends finite) or, failing that, the observed one of
    both runs' values pooled. Returns (R, whether it is the metric's)."""
    if bounds is not None and math.isfinite(bounds[0]) and math.isfinite(bounds[1]):
        return float(bounds[1] - bounds[0]), True
    pooled = np.concatenate([x, y])
    return (float(pooled.max() - pooled.min()) if pooled.size else 0.0), False


def paired_difference(a: Iterable[float], b: Iterable[float], clusters: Sequence[Any] | None = None,
                      confidence: float = 0.95, bounds: tuple[float, float] | None = None,
                      power: float = 0.8) -> dict[str, Any]:
    """The mean difference of paired per-problem scores, one interval and the p-value of the same procedure
    (Miller 2024, sec. 4), in range and never of zero width.

    ``bounds`` is the closed range of one problem's value (:attr:`ub_core.metric_spec.MetricSpec.bounds`); values a
    hair outside it are clipped (:func:`ub_core.metrics.intervals.clip_values`, counted in ``clipped``), values
    further out are a ValueError. With d_i = a_i - b_i over the n problems both runs scored, diff = mean(d).

    * Pass/fail scores (every value 0 or 1) without effective clusters: the score interval of Tango (1998) for a
      difference of paired proportions (:func:`tango_interval`), with the asymptotic McNemar test
      (:func:`mcnemar_score`) as its p-value: one score test, inverted for the interval and evaluated at 0 for the
      p-value, so p < alpha exactly when the interval excludes 0. ``test``: ``"McNemar score (Tango interval)"``.
    * Otherwise the paired t procedure: SE = sd(d) / sqrt(n) (ddof 1), or with ``clusters`` (at least
      :data:`MIN_CLUSTERS`) the cluster-robust SE of mean(d) (:func:`ub_core.metrics.intervals.clustered_stderr`,
      sec. 3). Only where the differences show no spread (every d_i equal up to round-off, :func:`shows_spread`: an
      SE at most 1e-9 of the data's scale) does :func:`se_floor` stand in for it, with R the width of ``bounds``
      (where they are open, the observed range of both runs' values); where they vary the observed SE is used as it
      is, whatever its size. The interval is diff +/- t SE with t on n - 1 (clustered: C - 1) degrees of freedom,
      clipped to [-R, R] when the bounds are finite (clipping never moves 0 in or out), and the p-value is the
      two-sided t test with the same SE, so again p < alpha exactly when the interval excludes 0. ``test``:
      ``"paired t"`` (``"paired t (SE floor)"`` when the floor stood in).
    * With no spread and no range at all (every value of both runs equal, open bounds) or one non-binary pair,
      nothing can be said: interval, p-value and MDE are None and ``test`` says why.

    ``mde`` is :func:`minimum_detectable_effect` of the SE (the floor's where the differences show no spread, so
    never 0) at level 1 - ``confidence`` and ``power``; for pass/fail scores it is of sd(d) / sqrt(n), the Tango
    interval having no SE of its own. ``se_basis`` says which SE was used (``"observed"``, ``"clustered"``,
    ``"floor"``; ``"none"`` when nothing can be said) and ``se_why`` why, in words. p-values are never below
    :data:`P_FLOOR`. Returns ``{"mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "p_value", "test",
    "n_pairs", "clusters", "clustered", "mde", "clipped", "se_basis", "se_why"}``."""
    x, y = np.asarray(list(a), dtype=float), np.asarray(list(b), dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"{x.size} values in a but {y.size} in b: the scores must be paired")
    if x.size and not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paired scores must be finite (leave unmatched problems out, and count them)")
    conf = float(confidence)
    if not 0 < conf < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    x, clipped_a = clip_values(x, bounds, name="a value")
    y, clipped_b = clip_values(y, bounds, name="a value")
    n = int(x.size)
    out: dict[str, Any] = {"mean_a": None, "mean_b": None, "diff": None, "se": None, "ci_low": None,
                           "ci_high": None, "p_value": None, "test": None, "n_pairs": n, "clusters": None,
                           "clustered": False, "mde": None, "clipped": clipped_a + clipped_b,
                           "se_basis": None, "se_why": None}
    if n == 0:
        return out
    d = x - y
    diff = float(d.mean())
    out.update(mean_a=float(x.mean()), mean_b=float(y.mean()), diff=diff)
    n_clusters = len({str(c) for c in clusters}) if clusters is not None else None
    out["clusters"] = n_clusters
    out["clustered"] = n_clusters is not None and n_clusters >= MIN_CLUSTERS and n >= 2
    width, known = _range_width(bounds, x, y)
    scale = max(float(np.max(np.abs(np.concatenate([x, y])))), width if known else 0.0)
    def floor_why(r: float, r_is: str) -> str:
        return (f"floor R z / (n + z^2) with R = {r:.4g} ({r_is}): the differences show no spread (SE <= "
                f"{ROUNDOFF:g} x the data's scale {scale:.3g}, round-off)")
    if not out["clustered"] and _binary(x) and _binary(y):
        n10, n01 = int(np.sum(d > 0)), int(np.sum(d < 0))
        low, high = tango_interval(n10, n01, n, conf)
        se_obs = float(np.std(d, ddof=1) / math.sqrt(n)) if n >= 2 else float("nan")
        se, floored = floor_if_no_spread(se_obs, n, 1.0, 1.0, conf)
        out.update(ci_low=low, ci_high=high, p_value=mcnemar_score(x, y), se=se,
                   mde=minimum_detectable_effect(se, 1 - conf, power), test="McNemar score (Tango interval)",
                   se_basis="floor" if floored else "observed",
                   se_why=(floor_why(1.0, "a pass/fail score's range") if floored
                           else "observed sd(d) / sqrt(n), for the MDE (the interval is Tango's)"))
        return out
    if n < 2:
        out["test"] = "none (one pair: no spread to measure)"
        return out
    # clustered_stderr falls back to the plain error below MIN_CLUSTERS clusters, and with every pair its own
    # cluster it is sd(d) / sqrt(n)
    se_obs = clustered_stderr(d, clusters) if out["clustered"] else float(np.std(d, ddof=1) / math.sqrt(n))
    df = n_clusters - 1 if out["clustered"] else n - 1
    se, floored = floor_if_no_spread(se_obs, n, width, scale, conf)
    if floored and width <= 0:
        out.update(se=0.0, test="none (no spread, and the metric has no finite range)", se_basis="none",
                   se_why="every value of both runs is equal and the metric's range is open: no scale to floor by")
        return out
    if floored:
        basis, why = "floor", floor_why(width, "the metric's range" if known
                                        else "the observed range of both runs' values, the metric's being open")
    elif out["clustered"]:
        basis, why = "clustered", f"observed, cluster-robust over {n_clusters} clusters (CR1): the differences vary"
    else:
        basis, why = "observed", "observed sd(d) / sqrt(n): the differences vary"
    t = float(special.stdtrit(df, 0.5 + conf / 2))
    low, high = diff - t * se, diff + t * se
    if known:
        low, high = max(low, -width), min(high, width)
    out.update(se=se, ci_low=low, ci_high=high, p_value=max(P_FLOOR, float(2 * special.stdtr(df, -abs(diff) / se))),
               mde=minimum_detectable_effect(se, 1 - conf, power), test="paired t" + (" (SE floor)" if floored else ""),
               se_basis=basis, se_why=why)
    return out


def sampling_noise_removed(p: Iterable[float], q: Iterable[float] | None = None) -> dict[str, float]:
    """What scoring a problem by its pass probability instead of one sampled verdict buys (Miller 2024, sec. 4.3).

    A sampled KS@N verdict of problem i is Bernoulli(p_i), p_i the problem's ``p_pass@N``. Over problems, by the
    law of total variance, Var(verdict) = Var(p) + E[p (1 - p)]: the second term is within-problem sampling noise,
    which the sampling-free score does not have. For one model (``q`` None) the standard errors of the mean are

        se_sampled = sqrt((Var(p) + E[p(1-p)]) / n),   se_free = sqrt(Var(p) / n)

    and for a paired comparison with a second model's ``q`` (sampled independently within each problem)

        se_sampled = sqrt((Var(p - q) + E[p(1-p)] + E[q(1-q)]) / n),   se_free = sqrt(Var(p - q) / n).

    Returns both, their minimum detectable effects (a single model: against an independent model of equal
    variance, sqrt(2) * se) and ``variance_ratio`` = se_free^2 / se_sampled^2 (the share of the variance left).
    Where the pass probabilities (or their differences) show no spread, se_free is :func:`se_floor` over the range
    [0, 1] (:func:`floor_if_no_spread`), so the MDE is never 0: 20 problems that the oracle passes with
    probability 1 cannot rule out a share of problems it fails. Fewer than two problems: a ValueError (no spread
    to measure)."""
    pv = np.asarray(list(p), dtype=float)
    if pv.size < 2:
        raise ValueError(f"sampling_noise_removed needs at least two problems, got {pv.size}")
    if q is None:
        between, within, scale = pv.var(ddof=1), float(np.mean(pv * (1 - pv))), math.sqrt(2)
    else:
        qv = np.asarray(list(q), dtype=float)
        between = (pv - qv).var(ddof=1)
        within, scale = float(np.mean(pv * (1 - pv)) + np.mean(qv * (1 - qv))), 1.0
    n = pv.size
    # the spread is judged on the SE with the spread the sampled route would add removed: p in [0, 1], scale 1
    se_free, _ = floor_if_no_spread(math.sqrt(max(float(between), 0.0) / n), n, 1.0, 1.0)
    se_sampled = math.sqrt(max(float(between + within) / n, se_free ** 2))
    return {"n": n, "se_sampled": se_sampled, "se_free": se_free,
            "mde_sampled": minimum_detectable_effect(scale * se_sampled),
            "mde_free": minimum_detectable_effect(scale * se_free),
            "variance_ratio": (se_free / se_sampled) ** 2 if se_sampled > 0 else float("nan")}


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (controls the family-wise error across the comparisons shown); None
    entries stay None and are not counted."""
    idx = [i for i, p in enumerate(p_values) if p is not None]
    m = len(idx)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, i in enumerate(sorted(idx, key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        out[i] = running
    return out
