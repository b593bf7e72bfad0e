"""Comparing two models as an experiment: paired differences, clustered errors, minimum detectable effects.

The experiment follows Miller (2024), "Adding Error Bars to Evals" (its design is in :mod:`ub_core.metrics.paired`,
where the statistics live as pure functions, re-exported here). This module matches two
read runs (:class:`ub_core.report.records.SampleTable`) problem by problem and compares them
(:func:`compare_tables`). Reading the files is :func:`ub_core.report.compare_runs.compare_runs`'s; ``ub compare A
B`` prints it.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from .metric_keys import per_n_key, split_key
from .metric_spec import REPORT_SPEC_FAMILIES, direction, find_metric
from .option_registry import FAMILIES
from .metrics.intervals import MIN_CLUSTERS
from .metrics.paired import (P_FLOOR, holm, mcnemar_exact, mcnemar_score, minimum_detectable_effect,
                             paired_difference, sampling_noise_removed, se_floor, floor_if_no_spread,
                             shows_spread, tango_interval)

__all__ = ["paired_difference", "mcnemar_exact", "mcnemar_score", "tango_interval", "se_floor", "floor_if_no_spread",
           "shows_spread", "P_FLOOR", "minimum_detectable_effect", "sampling_noise_removed",
           "holm", "compare_tables", "compare_records", "headline_key", "comparable_settings",
           "format_comparisons", "Comparison", "CompareError",
           "MIN_CLUSTERS", "HEADLINE_KEYS", "PER_N_HEADLINES", "JSON_KEYS"]

#: the metric a comparison reads by default, per report eval family; for the families of :data:`PER_N_HEADLINES`
#: the key's prefix, read at the largest N both runs report (``ksn``: ``ks@<N>``)
HEADLINE_KEYS = {"ksn": "ks", "ksn_logprob": "p_pass", "calibration": "wd", "implicit": "chebyshev",
                 "explicit": "mcq_acc", "odds": "abs_error", "stability": "tar_a", "dice": "passed"}
PER_N_HEADLINES = frozenset({"ksn", "ksn_logprob"})

#: the keys of ``ub compare --json`` that every row has (more follow them)
JSON_KEYS = ("metric", "mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "p_value", "n_pairs", "n_unmatched")

#: settings that may differ between the two runs of a comparison: what a comparison is for (the model, the sampling
#: seed), and what does not change what is measured (report.records.NOT_CONFIGURATION)
_MAY_DIFFER = frozenset({"seed", "model", "pretrained", "temperature_seed"})

#: settings a run may leave unset (lm-eval's metadata lists only what was given): an unset one is the family's
#: default (:func:`ub_core.option_registry.default_of`) when the other run records it
_DEFAULTED = ("n_samples", "threshold", "method", "gt_size", "list_size", "value_source", "convention", "size",
              "edition")


def _default(fam: str, key: str) -> Any:
    fam_options = FAMILIES[fam].inspect if fam in FAMILIES else {}
    return fam_options[key] if key in _DEFAULTED and key in fam_options else _UNSET


_UNSET = object()


class CompareError(ValueError):
    """Two runs that cannot be compared: one line saying why."""


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
    #: which standard error the interval, test and MDE use ("observed", "clustered", "floor", "none") and why
    se_basis: str | None = None
    se_why: str | None = None
    #: the tests' convention both runs used, for a family that has one (dice: ``default`` or ``release``)
    convention: str | None = None

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
        elif (default := _default(fam, key)) is not _UNSET:
            x, y = sa.get(key, default), sb.get(key, default)
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
    if fam in PER_N_HEADLINES:  # the largest N both runs report
        ns = [n for prefix, n in map(split_key, have) if prefix == head and n is not None]
        return [per_n_key(head, max(ns))] if ns else []
    if fam == "odds" and head not in have:
        return ["ks_stat"] if "ks_stat" in have else []
    return [head] if head in have else []


def _direction(fam: str, key: str) -> bool | None:
    """The metric's direction from its spec entry (``ub_core.metric_spec``)."""
    for spec_family in REPORT_SPEC_FAMILIES.get(fam, (fam,)):
        spec = find_metric(spec_family, key)
        if spec is not None:
            return direction(spec)
    return None


def _bounds(fam: str, key: str) -> tuple[float, float] | None:
    """The metric's closed range from its spec entry (``ub_core.metric_spec``); None when unknown."""
    for spec_family in REPORT_SPEC_FAMILIES.get(fam, (fam,)):
        spec = find_metric(spec_family, key)
        if spec is not None:
            return spec.bounds
    return None


def compare_tables(table_a, table_b, metrics: Sequence[str] | None = None, name_a: str = "A",
                   name_b: str = "B", alpha: float = 0.05, power: float = 0.8) -> list[Comparison]:
    """Compare two read runs (:class:`ub_core.report.records.SampleTable`) family by family, for every family both
    hold: their headline (or ``metrics``), matched by (problem id, epoch). Unmatched problems (in one run only, or
    without a value in one) are counted by reason. :class:`CompareError` when the runs cannot be compared.
    ``alpha``: the test's level (the interval is at 1 - alpha); ``power``: the MDE's power."""
    sides_a, sides_b = _side(table_a, name_a), _side(table_b, name_b)
    common = [f for f in sides_a if f in sides_b]
    if not common:
        raise CompareError(f"no eval family in both runs ({name_a}: {', '.join(sides_a) or 'none'}; {name_b}: "
                           f"{', '.join(sides_b) or 'none'})")
    out: list[Comparison] = []
    for fam in common:
        ra, rb = sides_a[fam], sides_b[fam]
        settings_a = _settings(table_a, ra)
        _check_settings(fam, settings_a, _settings(table_b, rb))
        keys = _metric_keys(fam, ra, rb, metrics)
        if not keys:
            raise CompareError(f"{fam}: no metric both runs report" + (f" among {', '.join(metrics)}" if metrics
                                                                         else ""))
        rows = [compare_records(fam, key, ra, rb, name_a, name_b, alpha, power) for key in keys]
        default = _default(fam, "convention")
        convention = settings_a[0].get("convention", None if default is _UNSET else default)
        for row in rows:
            row.convention = None if convention is None else str(convention)
        out += rows
    return out


def compare_records(fam: str, key: str, ra: Sequence, rb: Sequence, name_a: str = "A",
                    name_b: str = "B", alpha: float = 0.05, power: float = 0.8) -> Comparison:
    """One metric of two models' records of one eval family (:class:`ub_core.report.records.SampleRecord`),
    matched by (problem id, epoch); clustered by the records' ``cluster`` where both runs give every problem the
    same one. Problems in one run only, or without a value in one, are counted in ``unmatched`` by reason."""
    ia = {(r.problem_id, r.epoch): r for r in ra}
    ib = {(r.problem_id, r.epoch): r for r in rb}
    why: dict[str, int] = {}
    if fam == "dice" and key == "w1":
        # a law without a finite mean (Cauchy) has a W1 without a finite scale: paired with the others its
        # difference alone would be the variance (ub_core.metrics.dice.W1_WITHOUT_SCALE)
        from .metrics.dice import W1_WITHOUT_SCALE, law_name

        for k, r in list({**ib, **ia}.items()):
            law = law_name(r.payload.get("law"), r.problem_id)
            if law in W1_WITHOUT_SCALE:  # counted once per problem, in both runs or in one
                reason = f"W1 without a finite scale ({law}: no mean)"
                why[reason] = why.get(reason, 0) + 1
                ia.pop(k, None)
                ib.pop(k, None)
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
    res = paired_difference(xs, ys, clusters, confidence=1 - alpha, bounds=_bounds(fam, key), power=power)
    cmp = Comparison(metric=key, n_unmatched=sum(why.values()), family=fam, unmatched=why, clipped=res["clipped"],
                     higher_is_better=_direction(fam, key), model_a=ra[0].model if ra else "",
                     model_b=rb[0].model if rb else "",
                     **{k: res[k] for k in ("mean_a", "mean_b", "diff", "se", "ci_low", "ci_high", "p_value",
                                            "n_pairs", "test", "mde", "clusters", "clustered", "se_basis",
                                            "se_why")})
    if split_key(key)[0] == "p_pass" and len(xs) >= 2:
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


def format_comparisons(rows: Sequence[Comparison], alpha: float = 0.05) -> str:
    """A text table: one line per metric (the interval at 1 - ``alpha``), then what was left out."""
    def f(v, signed=False):
        return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else \
            (f"{v:+.4f}" if signed else f"{v:.4f}")

    ci = f"{100 * (1 - alpha):.4g}% CI"
    lines = [f"{'family':12s} {'metric':12s} {'A':>8s} {'B':>8s} {'A-B':>8s} {ci:>19s} {'p':>8s} "
             f"{'pairs':>6s} {'MDE':>7s}  test"]
    for r in rows:
        ci = f"[{f(r.ci_low, True)}, {f(r.ci_high, True)}]"
        p = "-" if r.p_value is None else (f"{r.p_value:.2g}" if r.p_value >= 1e-4 else
                                           f"{r.p_value:.1e}" if r.p_value > P_FLOOR else "<2.2e-308")
        lines.append(f"{r.family:12s} {r.metric:12s} {f(r.mean_a):>8s} {f(r.mean_b):>8s} {f(r.diff, True):>8s} "
                     f"{ci:>19s} {p:>8s} {r.n_pairs:6d} {f(r.mde):>7s}  {r.test or '-'}"
                     + (f" (clustered, {r.clusters} clusters)" if r.clustered else ""))
        if r.se_why:
            lines.append(f"  SE {f(r.se)}: {r.se_why}")
        if r.convention:
            lines.append(f"  convention: {r.convention} (both runs' tests)")
        if r.unmatched:
            lines.append(f"  {r.n_unmatched} problems left out: "
                         + ", ".join(f"{n} {why}" for why, n in sorted(r.unmatched.items())))
        if r.clipped:
            lines.append(f"  {r.clipped} values a hair outside the metric's range (round-off) clipped into it")
        if r.clusters is not None and not r.clustered:
            lines.append(f"  {r.clusters} clusters (< {MIN_CLUSTERS}): the unclustered error is used")
        if r.sampling_free:
            s = r.sampling_free
            lines.append(f"  sampling-free: SE {s['se_free']:.4f} "
                         f"(sampled KS verdicts would give {s['se_sampled']:.4f}; "
                         f"MDE {s['mde_free']:.4f} vs {s['mde_sampled']:.4f})")
    if rows:
        better = {True: "higher is better", False: "lower is better", None: "no direction"}
        lines.append(f"A = {rows[0].model_a}, B = {rows[0].model_b}; "
                     + "; ".join(f"{r.metric}: {better[r.higher_is_better]}" for r in rows))
    else:
        lines.append("no comparison")
    return "\n".join(lines)
