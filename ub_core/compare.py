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

from .metrics.intervals import MIN_CLUSTERS, clustered_stderr

__all__ = ["paired_difference", "mcnemar_exact", "minimum_detectable_effect", "sampling_noise_removed",
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


def paired_difference(a: Iterable[float], b: Iterable[float], clusters: Sequence[Any] | None = None,
                      confidence: float = 0.95) -> dict[str, Any]:
    """The mean difference of paired per-problem scores and its error (Miller 2024, sec. 4).

    With d_i = a_i - b_i over the n problems both runs scored:

        diff = mean(d),   SE = sd(d) / sqrt(n)    (ddof 1)

    or, with ``clusters`` (one label per problem, at least :data:`MIN_CLUSTERS` of them), the cluster-robust SE of
    mean(d) (:func:`ub_core.metrics.intervals.clustered_stderr`, sec. 3). The interval is diff +/- t * SE with t the
    Student quantile on n - 1 (clustered: C - 1) degrees of freedom; the p-value is the matching two-sided t test,
    except for pass/fail scores without clusters, where it is the exact McNemar test (:func:`mcnemar_exact`).
    ``se`` 0 (every difference equal) gives the point as its interval and p = 1 when diff is 0, else 0.

    Returns ``{"mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "p_value", "test", "n_pairs", "clusters",
    "clustered", "mde"}`` (``mde``: :func:`minimum_detectable_effect` of ``se``)."""
    x, y = np.asarray(list(a), dtype=float), np.asarray(list(b), dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"{x.size} values in a but {y.size} in b: the scores must be paired")
    if x.size and not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("paired scores must be finite (leave unmatched problems out, and count them)")
    n = int(x.size)
    out: dict[str, Any] = {"mean_a": None, "mean_b": None, "diff": None, "se": None, "ci_low": None,
                           "ci_high": None, "p_value": None, "test": None, "n_pairs": n, "clusters": None,
                           "clustered": False, "mde": None}
    if n == 0:
        return out
    d = x - y
    diff = float(d.mean())
    out.update(mean_a=float(x.mean()), mean_b=float(y.mean()), diff=diff)
    n_clusters = len({str(c) for c in clusters}) if clusters is not None else None
    out["clusters"] = n_clusters
    if n < 2:
        return out  # one pair: no spread to measure
    # clustered_stderr falls back to the plain error below MIN_CLUSTERS clusters, and with every pair its own
    # cluster it is sd(d) / sqrt(n)
    out["clustered"] = n_clusters is not None and n_clusters >= MIN_CLUSTERS
    se = clustered_stderr(d, clusters if out["clustered"] else range(n))
    df = n_clusters - 1 if out["clustered"] else n - 1
    out["se"] = se
    if se == 0:
        out.update(ci_low=diff, ci_high=diff, p_value=1.0 if diff == 0 else 0.0, test="none (no spread)")
    else:
        t = float(stats.t.ppf(0.5 + confidence / 2, df))
        out.update(ci_low=diff - t * se, ci_high=diff + t * se,
                   p_value=float(2 * stats.t.sf(abs(diff) / se, df)), test="paired t")
    if not out["clustered"] and _binary(x) and _binary(y):
        out.update(p_value=mcnemar_exact(x, y), test="McNemar exact")
    out["mde"] = minimum_detectable_effect(se)
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
    res = paired_difference(xs, ys, clusters)
    cmp = Comparison(metric=key, n_unmatched=sum(why.values()), family=fam, unmatched=why,
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
        p = "-" if r.p_value is None else (f"{r.p_value:.2g}" if r.p_value >= 1e-4 else f"{r.p_value:.1e}")
        lines.append(f"{r.family:12s} {r.metric:12s} {f(r.mean_a):>8s} {f(r.mean_b):>8s} {f(r.diff, True):>8s} "
                     f"{ci:>19s} {p:>8s} {r.n_pairs:6d} {f(r.mde):>7s}  {r.test or '-'}"
                     + (f" (clustered, {r.clusters} clusters)" if r.clustered else ""))
        if r.unmatched:
            lines.append(f"  {r.n_unmatched} problems left out: "
                         + ", ".join(f"{n} {why}" for why, n in sorted(r.unmatched.items())))
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
