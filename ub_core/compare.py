"""Comparing two models as an experiment: paired differences, clustered errors, minimum detectable effects.

Following Miller (2024), "Adding Error Bars to Evals" (arXiv 2411.00640): the problems of a bank are a sample from a
super-population of problems; two models run on the same problems are compared through the question-level
differences d_i = a_i - b_i (sec. 4, "Comparing models": pairing removes the between-question variance that two
independent intervals would count twice); where questions share a source their errors are clustered (sec. 3,
"Clustered standard errors"); and a bank's power to tell models apart is planned from the observed variances
(sec. 5, "Power analysis"). Next-token probabilities remove the within-question sampling noise (sec. 4.3): our
sampling-free ``p_pass@N`` is a problem's expected KS@N verdict, not one pass/fail draw, and
:func:`sampling_noise_removed` says how much variance that removes.

Pure functions (:func:`paired_difference`, :func:`mcnemar_exact`, :func:`minimum_detectable_effect`,
:func:`sampling_noise_removed`) and :func:`compare_runs`, which reads two runs (Inspect logs, lm-eval output, any
mix; through :mod:`ub_core.report.readers`) and compares them problem by problem. ``ub compare A B`` prints it.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import stats

from .metrics.intervals import MIN_CLUSTERS, clip_values, clustered_stderr

__all__ = ["paired_difference", "mcnemar_exact", "mcnemar_score", "tango_interval", "se_floor", "P_FLOOR", "minimum_detectable_effect", "sampling_noise_removed",
           "holm", "compare_runs", "compare_tables", "compare_records", "headline_key", "comparable_settings",
           "format_comparisons", "Comparison", "CompareError",
           "MIN_CLUSTERS", "HEADLINE_KEYS", "JSON_KEYS"]

#: the metric a comparison reads by default, per report eval family (``ksn``: the largest N both runs report)
HEADLINE_KEYS = {"ksn": "ks@", "ksn_logprob": "p_pass@", "calibration": "pm", "implicit": "chebyshev",
                 "explicit": "mcq_acc", "odds": "abs_error", "stability": "tar_a"}

#: the keys of ``ub compare --json`` that every row has (more follow them)
JSON_KEYS = ("metric", "mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "p_value", "n_pairs", "n_unmatched")

#: settings that may differ between the two runs of a comparison: what a comparison is for (the model, the sampling
#: seed), and what does not change what is measured (report.records.NOT_CONFIGURATION)
_MAY_DIFFER = frozenset({"seed", "model", "pretrained", "temperature_seed"})

#: the value a task uses for a setting a run leaves unset (lm-eval's metadata lists only what was given)
_DEFAULTS = {"n_samples": 100, "threshold": 1e-4, "method": "paper", "gt_size": 10_000, "list_size": 1,
             "value_source": "final", "convention": "paper", "size": "subset", "edition": "subset"}


class CompareError(ValueError):
    """Two runs that cannot be compared: one line saying why."""


def _z(p: float) -> float:
    return float(stats.norm.ppf(p))


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


def _range_width(bounds: tuple[float, float] | None, x: np.ndarray, y: np.ndarray) -> tuple[float, bool]:
    """The width R of the values' range: the metric's own (both ends finite) or, failing that, the observed one of
    both runs' values pooled. Returns (R, whether it is the metric's)."""
    if bounds is not None and math.isfinite(bounds[0]) and math.isfinite(bounds[1]):
        return float(bounds[1] - bounds[0]), True
    pooled = np.concatenate([x, y])
    return (float(pooled.max() - pooled.min()) if pooled.size else 0.0), False


def paired_difference(a: Iterable[float], b: Iterable[float], clusters: Sequence[Any] | None = None,
                      confidence: float = 0.95, bounds: tuple[float, float] | None = None) -> dict[str, Any]:
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
      sec. 3); SE is raised to :func:`se_floor` with R the width of ``bounds`` (where they are open, and only when
      the differences show no spread at all, R is the observed range of both runs' values), the interval is diff +/- t SE with t on n - 1 (clustered: C - 1) degrees of
      freedom, clipped to [-R, R] when the bounds are finite (clipping never moves 0 in or out), and the p-value is
      the two-sided t test with the same SE, so again p < alpha exactly when the interval excludes 0.
      ``test``: ``"paired t"`` (``"paired t (SE floor)"`` when the floor was used).
    * With no spread and no range at all (every value of both runs equal, open bounds) or one non-binary pair,
      nothing can be said: interval, p-value and MDE are None and ``test`` says why.

    ``mde`` is :func:`minimum_detectable_effect` of the SE (floored, so never 0). p-values are never below
    :data:`P_FLOOR`. Returns ``{"mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "p_value", "test",
    "n_pairs", "clusters", "clustered", "mde", "clipped"}``."""
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
                           "clustered": False, "mde": None, "clipped": clipped_a + clipped_b}
    if n == 0:
        return out
    d = x - y
    diff = float(d.mean())
    out.update(mean_a=float(x.mean()), mean_b=float(y.mean()), diff=diff)
    n_clusters = len({str(c) for c in clusters}) if clusters is not None else None
    out["clusters"] = n_clusters
    out["clustered"] = n_clusters is not None and n_clusters >= MIN_CLUSTERS and n >= 2
    width, known = _range_width(bounds, x, y)
    floor = se_floor(n, width, conf)
    if not out["clustered"] and _binary(x) and _binary(y):
        n10, n01 = int(np.sum(d > 0)), int(np.sum(d < 0))
        low, high = tango_interval(n10, n01, n, conf)
        se_obs = float(np.std(d, ddof=1) / math.sqrt(n)) if n >= 2 else 0.0
        se = max(se_obs, se_floor(n, 1.0, conf))
        out.update(ci_low=low, ci_high=high, p_value=mcnemar_score(x, y), se=se, mde=minimum_detectable_effect(se),
                   test="McNemar score (Tango interval)")
        return out
    if n < 2:
        out["test"] = "none (one pair: no spread to measure)"
        return out
    # clustered_stderr falls back to the plain error below MIN_CLUSTERS clusters, and with every pair its own
    # cluster it is sd(d) / sqrt(n)
    se_obs = clustered_stderr(d, clusters if out["clustered"] else range(n))
    df = n_clusters - 1 if out["clustered"] else n - 1
    if not known and se_obs > 0:
        floor = 0.0  # an open range: the observed spread is all there is to go on; the floor only replaces none
    if floor <= 0 and se_obs <= 0:
        out.update(se=0.0, test="none (no spread, and the metric has no finite range)")
        return out
    se = max(se_obs, floor)
    t = float(stats.t.ppf(0.5 + conf / 2, df))
    low, high = diff - t * se, diff + t * se
    if known:
        low, high = max(low, -width), min(high, width)
    out.update(se=se, ci_low=low, ci_high=high, p_value=max(P_FLOOR, float(2 * stats.t.sf(abs(diff) / se, df))),
               mde=minimum_detectable_effect(se), test="paired t" + (" (SE floor)" if se_obs < floor else ""))
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
    variance, sqrt(2) * se) and ``variance_ratio`` = se_free^2 / se_sampled^2 (the share of the variance left)."""
    pv = np.asarray(list(p), dtype=float)
    if q is None:
        between, within, scale = pv.var(ddof=1), float(np.mean(pv * (1 - pv))), math.sqrt(2)
    else:
        qv = np.asarray(list(q), dtype=float)
        between = (pv - qv).var(ddof=1)
        within, scale = float(np.mean(pv * (1 - pv)) + np.mean(qv * (1 - qv))), 1.0
    n = pv.size
    se_sampled = math.sqrt((between + within) / n)
    se_free = math.sqrt(between / n)
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


# ------------------------------------------------------------------------------------------------ two runs

@dataclass
class Comparison:
    """One metric of two runs, matched problem by problem (:func:`paired_difference`'s fields and the matching)."""

    metric: str
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_pairs: int
    n_unmatched: int
    family: str = ""
    test: str | None = None
    mde: float | None = None
    clusters: int | None = None
    clustered: bool = False
    higher_is_better: bool | None = None
    model_a: str = ""
    model_b: str = ""
    unmatched: dict[str, int] = field(default_factory=dict)
    sampling_free: dict[str, float] | None = None
    #: values a hair outside the metric's range (round-off) clipped into it, both runs together
    clipped: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _side(table, name: str) -> dict[str, list]:
    """Records of one side by report eval family; one model and one configuration per family, else one line."""
    by_family: dict[str, list] = {}
    for r in table.records:
        by_family.setdefault(r.eval_family, []).append(r)
    for fam, recs in by_family.items():
        models = sorted({(r.model, r.framework) for r in recs})
        if len(models) > 1:
            names = ", ".join(f"{m} [{f}]" for m, f in models)
            raise CompareError(f"{name} holds {len(models)} models or configurations for {fam} ({names}); give one "
                               f"run (or one model's runs of one configuration) per side")
    return by_family


def _settings(table, recs) -> tuple[dict[str, Any], str | None]:
    infos = [table.runs.get(s) for s in {r.source for r in recs}]
    settings: dict[str, Any] = {}
    bank = None
    for info in infos:
        if info is not None and info.settings:
            settings.update(info.settings)
        if info is not None and info.bank_version is not None:
            bank = info.bank_version
    return settings, bank


def _check_settings(fam: str, a: tuple[dict, str | None], b: tuple[dict, str | None]) -> None:
    (sa, va), (sb, vb) = a, b
    if va is not None and vb is not None and va != vb:
        raise CompareError(f"{fam}: the runs use different bank versions ({va} vs {vb}); they measure different "
                           f"problems")
    for key in sorted((set(sa) | set(sb)) - _MAY_DIFFER):
        if key in sa and key in sb:
            x, y = sa[key], sb[key]
        elif key in _DEFAULTS:
            x, y = sa.get(key, _DEFAULTS[key]), sb.get(key, _DEFAULTS[key])
        else:
            continue  # a setting only one framework records (its generation keys, its dataset plumbing)
        if json.dumps(x, sort_keys=True, default=str) != json.dumps(y, sort_keys=True, default=str):
            raise CompareError(f"{fam}: the runs differ in {key} ({x} vs {y}), which changes what is measured; "
                               f"compare runs of one configuration (they may differ in model and seed)")


def _metric_keys(fam: str, ra: list, rb: list, wanted: Sequence[str] | None) -> list[str]:
    have = set.intersection(*[set(r.metrics) for r in ra]) & set.union(*[set(r.metrics) for r in rb]) if ra else set()
    if wanted:
        return [k for k in wanted if any(k in r.metrics for r in ra) or any(k in r.metrics for r in rb)]
    head = HEADLINE_KEYS.get(fam)
    if head is None:
        return []
    if head.endswith("@"):  # the largest N both runs report
        ns = [int(k[len(head):]) for k in have if k.startswith(head) and k[len(head):].isdigit()]
        return [f"{head}{max(ns)}"] if ns else []
    if fam == "odds" and head not in have:
        return ["ks_stat"] if "ks_stat" in have else []
    return [head] if head in have else []


def _direction(fam: str, key: str) -> bool | None:
    """The metric's direction from its spec entry (``ub_core.metric_spec``)."""
    from .metric_spec import REPORT_SPEC_FAMILIES, direction, find_metric

    for spec_family in REPORT_SPEC_FAMILIES.get(fam, (fam,)):
        spec = find_metric(spec_family, key)
        if spec is not None:
            return direction(spec)
    return None


def _bounds(fam: str, key: str) -> tuple[float, float] | None:
    """The metric's closed range from its spec entry (``ub_core.metric_spec``); None when unknown."""
    from .metric_spec import REPORT_SPEC_FAMILIES, find_metric

    for spec_family in REPORT_SPEC_FAMILIES.get(fam, (fam,)):
        spec = find_metric(spec_family, key)
        if spec is not None:
            return spec.bounds
    return None


def compare_tables(table_a, table_b, metrics: Sequence[str] | None = None, name_a: str = "A",
                   name_b: str = "B") -> list[Comparison]:
    """Compare two read runs (:class:`ub_core.report.records.SampleTable`) family by family, for every family both
    hold: their headline (or ``metrics``), matched by (problem id, epoch). Unmatched problems (in one run only, or
    without a value in one) are counted by reason. :class:`CompareError` when the runs cannot be compared."""
    sides_a, sides_b = _side(table_a, name_a), _side(table_b, name_b)
    common = [f for f in sides_a if f in sides_b]
    if not common:
        raise CompareError(f"no eval family in both runs ({name_a}: {', '.join(sides_a) or 'none'}; {name_b}: "
                           f"{', '.join(sides_b) or 'none'})")
    out: list[Comparison] = []
    for fam in common:
        ra, rb = sides_a[fam], sides_b[fam]
        _check_settings(fam, _settings(table_a, ra), _settings(table_b, rb))
        keys = _metric_keys(fam, ra, rb, metrics)
        if not keys:
            raise CompareError(f"{fam}: no metric both runs report" + (f" among {', '.join(metrics)}" if metrics
                                                                         else ""))
        out += [compare_records(fam, key, ra, rb, name_a, name_b) for key in keys]
    return out


def compare_records(fam: str, key: str, ra: Sequence, rb: Sequence, name_a: str = "A",
                    name_b: str = "B") -> Comparison:
    """One metric of two models' records of one eval family (:class:`ub_core.report.records.SampleRecord`),
    matched by (problem id, epoch); clustered by the records' ``cluster`` where both runs give every problem the
    same one. Problems in one run only, or without a value in one, are counted in ``unmatched`` by reason."""
    ia = {(r.problem_id, r.epoch): r for r in ra}
    ib = {(r.problem_id, r.epoch): r for r in rb}
    why: dict[str, int] = {}
    xs, ys, cl = [], [], []
    for k in sorted(set(ia) | set(ib)):
        a, b = ia.get(k), ib.get(k)
        if a is None or b is None:
            reason = f"only in {name_a if b is None else name_b}"
        elif a.metric(key) is None or b.metric(key) is None:
            reason = f"no {key} in {name_a if a.metric(key) is None else name_b}"
        else:
            xs.append(a.metric(key))
            ys.append(b.metric(key))
            cl.append(a.payload.get("cluster") if a.payload.get("cluster") == b.payload.get("cluster") else None)
            continue
        why[reason] = why.get(reason, 0) + 1
    clusters = cl if cl and all(c is not None for c in cl) else None
    res = paired_difference(xs, ys, clusters, bounds=_bounds(fam, key))
    cmp = Comparison(metric=key, n_unmatched=sum(why.values()), family=fam, unmatched=why, clipped=res["clipped"],
                     higher_is_better=_direction(fam, key), model_a=ra[0].model if ra else "",
                     model_b=rb[0].model if rb else "",
                     **{k: res[k] for k in ("mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "p_value",
                                            "n_pairs", "test", "mde", "clusters", "clustered")})
    if key.startswith("p_pass@") and len(xs) >= 2:
        cmp.sampling_free = sampling_noise_removed(xs, ys)
    return cmp


def headline_key(fam: str, records: Sequence) -> str | None:
    """The metric a comparison of ``fam`` reads by default (:data:`HEADLINE_KEYS`; a per-N headline at the largest
    N every record has); None when the records have none."""
    if not records:
        return None
    keys = _metric_keys(fam, list(records), list(records), None)
    return keys[0] if keys else None


def comparable_settings(settings: Any, bank_version: Any) -> str:
    """A canonical text of what must be equal for two runs to be compared (settings other than model and seed,
    and the bank version)."""
    kept = {k: v for k, v in (settings or {}).items() if k not in _MAY_DIFFER} if isinstance(settings, dict) \
        else settings
    return json.dumps({"bank_version": bank_version, "settings": kept}, sort_keys=True, default=str)


def compare_runs(a: str | Path | Sequence[str | Path], b: str | Path | Sequence[str | Path],
                 metrics: Sequence[str] | None = None) -> tuple[list[Comparison], list[str]]:
    """Read the runs at ``a`` and ``b`` (files or folders: Inspect logs, lm-eval output) and compare them
    (:func:`compare_tables`). Returns the comparisons and the inputs each side skipped (one line each)."""
    from .report.readers import load_inputs

    def read(paths, name):
        paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        table = load_inputs(paths)
        if not table.records:
            reasons = "; ".join(str(s) for s in table.skips[:2]) or "nothing read"
            raise CompareError(f"{name}: no scored samples in {', '.join(map(str, paths))} ({reasons})")
        return table

    ta, tb = read(a, "A"), read(b, "B")
    skipped = [f"A: {s}" for s in ta.skips] + [f"B: {s}" for s in tb.skips]
    return compare_tables(ta, tb, metrics), skipped


def format_comparisons(rows: Sequence[Comparison]) -> str:
    """A text table: one line per metric, then what was left out."""
    def f(v, signed=False):
        return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else \
            (f"{v:+.4f}" if signed else f"{v:.4f}")

    lines = [f"{'family':12s} {'metric':12s} {'A':>8s} {'B':>8s} {'A-B':>8s} {'95% CI':>19s} {'p':>8s} "
             f"{'pairs':>6s} {'MDE':>7s}  test"]
    for r in rows:
        ci = f"[{f(r.ci_low, True)}, {f(r.ci_high, True)}]"
        p = "-" if r.p_value is None else (f"{r.p_value:.2g}" if r.p_value >= 1e-4 else
                                           f"{r.p_value:.1e}" if r.p_value > P_FLOOR else "<2.2e-308")
        lines.append(f"{r.family:12s} {r.metric:12s} {f(r.mean_a):>8s} {f(r.mean_b):>8s} {f(r.diff, True):>8s} "
                     f"{ci:>19s} {p:>8s} {r.n_pairs:6d} {f(r.mde):>7s}  {r.test or '-'}"
                     + (f" (clustered, {r.clusters} clusters)" if r.clustered else ""))
        if r.unmatched:
            lines.append(f"  {r.n_unmatched} problems left out: "
                         + ", ".join(f"{n} {why}" for why, n in sorted(r.unmatched.items())))
        if r.clipped:
            lines.append(f"  {r.clipped} values a hair outside the metric's range (round-off) clipped into it")
        if r.clusters is not None and not r.clustered:
            lines.append(f"  {r.clusters} clusters (< {MIN_CLUSTERS}): the unclustered error is used")
        if r.sampling_free:
            s = r.sampling_free
            lines.append(f"  sampling-free: SE {s['se_free']:.4f} (sampled KS verdicts would give {s['se_sampled']:.4f}; "
                         f"MDE {s['mde_free']:.4f} vs {s['mde_sampled']:.4f})")
    if rows:
        better = {True: "higher is better", False: "lower is better", None: "no direction"}
        lines.append(f"A = {rows[0].model_a}, B = {rows[0].model_b}; "
                     + "; ".join(f"{r.metric}: {better[r.higher_is_better]}" for r in rows))
    else:
        lines.append("no comparison")
    return "\n".join(lines)
