"""Summary tables per family (leaderboards and breakdowns) and their CSV / JSON / Markdown files.

Every number is an aggregate of the per-sample metrics in the :class:`SampleTable`; intervals come from
``ub_core.metrics`` (Wilson for pass rates, the cluster bootstrap for the numeric-calibration paper's option-pair
clusters).
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..compare import (comparable_settings, compare_records, headline_key, holm, minimum_detectable_effect,
                       sampling_noise_removed, floor_if_no_spread)
from ..metric_spec import REPORT_SPEC_FAMILIES, find_metric, left_out_reason, per_n_key, split_key
from ..metrics import (UNDETERMINED, across_distributions, clustered_interval, clustered_stderr, grid_behaviour_rates,
                       wilson_interval)
from .eval_families import BEHAVIOURS, EXPLICIT_KEYS, IMPLICIT_KEYS, STABILITY_KEYS
from ..terminal import csv_cell, markdown_text
from .records import SampleRecord, SampleTable, finite_or_none, nanmean
from .tables import _REPORT_COLUMNS, ID_COLUMNS, PROVENANCE, Table, _jsonable, column_direction  # noqa: F401

__all__ = ["Table", "build_tables", "write_summary", "ks_ns_of", "top_n", "nanmean", "column_direction"]

def _group(records: Iterable[SampleRecord], key: Callable[[SampleRecord], Any]) -> dict[Any, list[SampleRecord]]:
    out: dict[Any, list[SampleRecord]] = defaultdict(list)
    for r in records:
        out[key(r)].append(r)
    return dict(out)


def _rate(records: Sequence[SampleRecord], key: str) -> dict[str, Any]:
    """Mean of a 0/1 per-sample flag with its Wilson interval (NaN / missing flags left out)."""
    # a flag outside [0, 1] is no flag (hostile or foreign input): left out like a missing one
    flags = [v for v in (r.metric(key) for r in records) if v is not None and 0.0 <= v <= 1.0]
    k = int(round(sum(flags)))
    n = len(flags)
    lo, hi = wilson_interval(min(k, n), n) if n else (None, None)
    return {"mean": (sum(flags) / n) if n else None, "low": lo, "high": hi, "n": n}


# ------------------------------------------------------------------------------------------------ ksn

def ks_ns_of(records: Iterable[SampleRecord]) -> list[int]:
    ns: set[int] = set()
    for r in records:
        for k in r.metrics:
            prefix, n = split_key(k)
            if prefix == "ks" and n is not None:
                ns.add(n)
    return sorted(ns)


def top_n(records: Sequence[SampleRecord]) -> int | None:
    """The largest N every record has a KS@N for (100 in the standard protocol)."""
    common: set[int] | None = None
    for r in records:
        ns = {n for k in r.metrics if (n := split_key(k)[1]) is not None and split_key(k)[0] == "ks"}
        common = ns if common is None else common & ns
    return max(common) if common else None


def _wdz_undefined(r: SampleRecord) -> bool:
    """The record's ``wdz_undefined`` flag; without one (an older log), valid values but a WDZ that is NaN or
    +/-inf (such logs held +/-inf where the null had no spread)."""
    flag = r.metric("wdz_undefined")
    if flag is not None:
        return flag > 0
    raw = r.metrics.get("wdz")
    return (r.metric("n_valid") or 0) > 0 and isinstance(raw, (int, float)) and not math.isfinite(float(raw))


def _constant(r: SampleRecord) -> bool:
    """The record's ``constant`` flag; without one (an older log), whether its parsed values are all equal."""
    flag = r.metric("constant")
    if flag is not None:
        return flag > 0
    vals = r.payload.get("values") or []
    return bool(vals) and all(v == vals[0] for v in vals)


def _ksn_counts(recs: Sequence[SampleRecord]) -> dict[str, int]:
    """Problems whose WDZ is undefined (left out of the ``wdz`` mean) and problems with a constant sample (their
    finite JSD is in the ``jsd`` mean; the released notebooks drop them as NaN)."""
    return {"wdz_undefined": sum(_wdz_undefined(r) for r in recs), "n_constant": sum(_constant(r) for r in recs)}


#: the N of the ksn headline, fixed by the family (UnpredictaBench's KS@100), whatever else a report folder holds: a
#: run with fewer answers gets its own ``ks@N`` columns beside it (so one 50-answer run cannot switch every row
#: to KS@50 and push KS@100 off the leaderboard)
KSN_HEADLINE_N = 100


def _own_ks(recs: Sequence[SampleRecord], key_top: str) -> str | None:
    """A row's own KS@N key where its records have no ``key_top`` (a run with fewer answers): its largest N."""
    if any(r.metric(key_top) is not None for r in recs):
        return None
    n = top_n(recs)
    return per_n_key("ks", n) if n is not None else None


def _ksn_tables(records: list[SampleRecord]) -> list[Table]:
    by_model = _group(records, lambda r: (r.model, r.framework))
    n_top = KSN_HEADLINE_N
    key_top = per_n_key("ks", n_top)
    categories = sorted({r.category for r in records})
    lead = Table("ksn_leaderboard", f"UnpredictaBench leaderboard (KS@{n_top}, 95% Wilson interval)", "ksn",
                 ["model", "framework", "problems", key_top, "ci_low", "ci_high",
                  *[f"{key_top} {c}" for c in categories], "wdz", "jsd", "wdz_undefined", "n_constant",
                  "retry_rate", "invalid_rate"])
    by_cat = Table("ksn_by_category", f"KS@{n_top} by category", "ksn",
                   ["model", "framework", "category", "problems", key_top, "ci_low", "ci_high", "wdz", "jsd",
                    "wdz_undefined", "n_constant"],
                   keys=("model", "framework", "category"))
    ns = ks_ns_of(records)
    curve = Table("ksn_curve", "KS@N at every N (UnpredictaBench, table 3)", "ksn",
                  ["model", "framework", "problems", *[per_n_key("ks", n) for n in ns]])
    def own_columns(table: Table, key: str, at: str) -> None:
        for c in (key, f"{key}_ci_low", f"{key}_ci_high"):
            if c not in table.columns:
                table.columns.insert(table.columns.index(at) + 1, c)
                at = c

    for (model, fw), recs in by_model.items():
        rate = _rate(recs, key_top)
        own = _own_ks(recs, key_top)
        row = {"model": model, "framework": fw, "problems": rate["n"] if own is None else _rate(recs, own)["n"],
               key_top: rate["mean"],
               "ci_low": rate["low"], "ci_high": rate["high"], "wdz": nanmean(r.metrics.get("wdz") for r in recs),
               "jsd": nanmean(r.metrics.get("jsd") for r in recs), **_ksn_counts(recs)}
        if own is not None:  # fewer answers than the headline's N: its own KS@N, in columns of its own
            orate = _rate(recs, own)
            row.update({own: orate["mean"], f"{own}_ci_low": orate["low"], f"{own}_ci_high": orate["high"]})
            own_columns(lead, own, "ci_high")
            own_columns(by_cat, own, "ci_high")
        for cat, crecs in _group(recs, lambda r: r.category).items():
            crate = _rate(crecs, key_top)
            row[f"{key_top} {cat}"] = crate["mean"]
            crow = {"model": model, "framework": fw, "category": cat,
                    "problems": crate["n"] if own is None else _rate(crecs, own)["n"],
                    key_top: crate["mean"], "ci_low": crate["low"], "ci_high": crate["high"],
                    "wdz": nanmean(r.metrics.get("wdz") for r in crecs),
                    "jsd": nanmean(r.metrics.get("jsd") for r in crecs), **_ksn_counts(crecs)}
            if own is not None:
                ocrate = _rate(crecs, own)
                crow.update({own: ocrate["mean"], f"{own}_ci_low": ocrate["low"], f"{own}_ci_high": ocrate["high"]})
            by_cat.rows.append(crow)
        slots = sum(r.metric("slots") or 0 for r in recs)
        row["retry_rate"] = (sum(r.metric("retried_slots") or 0 for r in recs) / slots) if slots else None
        valid = sum(r.metric("n_valid") or 0 for r in recs)
        failed = sum(r.metric("n_failed") or 0 for r in recs)
        row["invalid_rate"] = failed / (valid + failed) if valid + failed else None
        lead.rows.append(row)
        crow = {"model": model, "framework": fw, "problems": len(recs)}
        for n in ns:
            rn = _rate(recs, per_n_key("ks", n))
            crow[per_n_key("ks", n)] = rn["mean"]
            if rn["n"]:
                curve.points.append({"model": model, "framework": fw, "N": n, "ks": rn["mean"], "ci_low": rn["low"],
                                     "ci_high": rn["high"], "problems": rn["n"]})
        curve.rows.append(crow)
    lead.rows.sort(key=lambda r: -(r[key_top] or 0.0))
    curve.rows.sort(key=lambda r: -(r.get(key_top) or 0.0))
    lead.note = ("retry_rate: share of answer slots that needed a resample (Inspect only; lm-eval does not retry); "
                 "invalid_rate: unparseable replies / all replies; wdz, jsd: means over the problems where they "
                 "are finite; wdz_undefined: problems left out of the wdz mean (no spread in the permutation "
                 "null); n_constant: problems with a constant (collapsed) sample, kept in the jsd mean.")
    by_cat.rows.sort(key=lambda r: (r["category"], r["model"], r["framework"]))
    return [lead, curve, by_cat]


# ------------------------------------------------------------------------------------------------ calibration

def _clustered(recs: Sequence[SampleRecord], key: str) -> tuple[float | None, float | None]:
    """The clustered t interval of ``key``'s mean (:func:`ub_core.metrics.intervals.clustered_interval`), in the
    metric's range (the spec's bounds), and where the values show no spread the floor's, never of zero width."""
    pairs = [(r.metric(key), str(r.payload.get("cluster", r.problem_id))) for r in recs]
    pairs = [(v, c) for v, c in pairs if v is not None]
    if not pairs:
        return None, None
    fam = recs[0].eval_family
    spec = next((m for f in REPORT_SPEC_FAMILIES.get(fam, (fam,)) if (m := find_metric(f, key)) is not None), None)
    return clustered_interval([v for v, _ in pairs], [c for _, c in pairs],
                              bounds=spec.bounds if spec is not None else None)


def _calibration_tables(records: list[SampleRecord]) -> list[Table]:
    behaviours = [f"behaviour_{b}" for b in BEHAVIOURS if any(f"behaviour_{b}" in r.metrics for r in records)]
    behaviours += sorted({k for r in records for k in r.metrics if k.startswith("behaviour_")} - set(behaviours))
    grids = [f"grid_{b}" for b in BEHAVIOURS + (UNDETERMINED,)]
    has_grid = any(isinstance(r.payload.get("behaviour_entry"), Mapping) for r in records)
    cols = ["pm", "pm_ci_low", "pm_ci_high", "wd", "wd_ci_low", "wd_ci_high", "re", "re_ci_low", "re_ci_high",
            "abs_re", *behaviours, *(grids if has_grid else [])]
    lead = Table("calibration_leaderboard", "Numeric calibration (PM, WD, RE with 95% CIs clustered by option "
                 "pair; behaviour compatibility rates and grid behaviour rates)", "calibration",
                 ["model", "framework", "items", *cols])
    by_cat = Table("calibration_by_category", "Numeric calibration by dataset", "calibration",
                   ["model", "framework", "category", "items", *cols], keys=("model", "framework", "category"))

    def row(recs):
        out: dict[str, Any] = {"items": len(recs)}
        for key in ("pm", "wd", "re"):
            out[key] = nanmean(r.metrics.get(key) for r in recs)
            out[f"{key}_ci_low"], out[f"{key}_ci_high"] = _clustered(recs, key)
        # |RE| per item (RE is two-sided, target 0): the ranked form; from re, so older logs have it too
        out["abs_re"] = nanmean(abs(v) for v in (r.metric("re") for r in recs) if v is not None)
        for b in behaviours:
            out[b] = nanmean(r.metrics.get(b) for r in recs)
        if has_grid:
            entries = [r.payload["behaviour_entry"] for r in recs
                       if isinstance(r.payload.get("behaviour_entry"), Mapping)]
            try:
                rates, _ = grid_behaviour_rates(entries)
            except (KeyError, TypeError, ValueError):  # a hostile entry: no grid rates for this row
                rates = {}
            out.update({f"grid_{b}": rates.get(b) for b in BEHAVIOURS + (UNDETERMINED,)})
        return out

    for (model, fw), recs in _group(records, lambda r: (r.model, r.framework)).items():
        lead.rows.append({"model": model, "framework": fw, **row(recs)})
        for cat, crecs in sorted(_group(recs, lambda r: r.category).items()):
            by_cat.rows.append({"model": model, "framework": fw, "category": cat, **row(crecs)})
    lead.note = "wd: Wasserstein distance to the ideal distribution (lower is better); pm: probability mass on " \
                "the valid options; re: H(model) - H(ideal) in bits (two-sided, target 0: not ranked); abs_re: mean " \
                "|re| (lower is better); behaviour_b: share of two-option items " \
                "compatible with b (the numeric-calibration paper's Figure 2); grid_b: share of option-pair grids " \
                "classified as b " \
                "(Figure 3; Null when the grid's mean PM < 0.5); grid_undetermined: grids too unbalanced to label (a " \
                "limited run keeps part of a grid)."
    return [lead, by_cat]


# ------------------------------------------------------------------------------------------------ implicit, explicit

def _means_by_category(records, name, title, family, keys, rate_key=None, cluster_key=None) -> Table:
    """Per (model, framework) and category (plus ``all``): the means of ``keys``; with ``rate_key``, that 0/1
    flag's Wilson interval; with ``cluster_key``, that metric's cluster-bootstrap interval (:func:`_clustered`)."""
    cols = ["model", "framework", "category", "items", *keys]
    if rate_key:
        cols += [f"{rate_key}_ci_low", f"{rate_key}_ci_high"]
    if cluster_key:
        cols += [f"{cluster_key}_ci_low", f"{cluster_key}_ci_high"]
    # no mean leaves an item out silently: a key some item has no finite value of gets a <key>_left_out count
    # beside its mean, and the note says why (the spec's why_undefined)
    left = [k for k in keys if any(r.metric(k) is None for r in records)]
    cols += [f"{k}_left_out" for k in left]
    t = Table(name, title, family, cols, keys=("model", "framework", "category"),
              note=" ".join(f"{k}: the mean of the items where it is defined; {k}_left_out counts the others "
                            f"({left_out_reason(spec) if (spec := find_metric(family, k)) else 'no value'})."
                            for k in left))
    for (model, fw), recs in _group(records, lambda r: (r.model, r.framework)).items():
        groups = [("all", recs)] + sorted(_group(recs, lambda r: r.category).items())
        for cat, crecs in groups:
            row = {"model": model, "framework": fw, "category": cat, "items": len(crecs)}
            for k in keys:
                row[k] = nanmean(r.metrics.get(k) for r in crecs)
            for k in left:
                row[f"{k}_left_out"] = sum(r.metric(k) is None for r in crecs)
            if rate_key:
                flags = [r.metric(rate_key) for r in crecs]
                if all(f in (0.0, 1.0) for f in flags if f is not None):
                    rr = _rate(crecs, rate_key)
                    row[f"{rate_key}_ci_low"], row[f"{rate_key}_ci_high"] = rr["low"], rr["high"]
            if cluster_key:
                row[f"{cluster_key}_ci_low"], row[f"{cluster_key}_ci_high"] = _clustered(crecs, cluster_key)
            t.rows.append(row)
    return t


# Provider prefixes that name the route, not the model: the same weights sampled through vllm/ and scored through
# vllm-completions/ are one model for the predicted-vs-sampled table.
_ROUTE_PREFIXES = ("vllm-completions/", "vllm/", "hf/", "openai-api-completions/", "openai-api/", "sglang/")


def _model_key(model: str) -> str:
    for pre in _ROUTE_PREFIXES:
        if model.startswith(pre):
            return model[len(pre):]
    return model


def _ksn_logprob_tables(records, ksn_records=()):
    """Means by category, and where the same model (provider prefix aside) was also sampled with KS@N on the same
    problems, the predicted ``p_pass@N`` next to the sampled KS@N pass rate on those problems."""
    keys = ["valid_mass", "ks_distance", *[per_n_key("p_pass", n) for n in ks_ns_of_p_pass(records)], "jsd",
            "entropy_ratio", "unresolved"]
    tables = [_means_by_category(records, "ksn_logprob_by_category", "Sampling-free KS@N by category (answer "
                                 "distribution from candidate log-probabilities)", "ksn_logprob", keys)]
    sampled = {}
    for r in ksn_records:
        sampled.setdefault((_model_key(r.model), r.problem_id), []).append(r)
    cols = ["model", "category", "problems", "N", "predicted_p_pass", "sampled_ks_pass"]
    t = Table("ksn_logprob_vs_sampled", "Predicted P(KS@N passes) from log-probabilities vs the sampled KS@N pass "
              "rate, on the problems run both ways", "ksn_logprob", cols, keys=("model", "category", "N"))
    for model, recs in sorted(_group(records, lambda r: _model_key(r.model)).items()):
        pairs = [(r, sampled[(model, r.problem_id)]) for r in recs if (model, r.problem_id) in sampled]
        if not pairs:
            continue
        for cat, cpairs in [("all", pairs)] + sorted(_group(pairs, lambda pr: pr[0].category).items()):
            for n in ks_ns_of_p_pass(records):
                pred = [r.metric(per_n_key("p_pass", n)) for r, _ in cpairs]
                obs = [s.metric(per_n_key("ks", n)) for _, ss in cpairs for s in ss]
                pred, obs = [x for x in pred if x is not None], [x for x in obs if x is not None]
                if pred and obs:
                    t.rows.append({"model": model, "category": cat, "problems": len(cpairs), "N": n,
                                   "predicted_p_pass": sum(pred) / len(pred), "sampled_ks_pass": sum(obs) / len(obs)})
    if t.rows:
        tables.append(t)
    return tables


def ks_ns_of_p_pass(records: Iterable[SampleRecord]) -> list[int]:
    """The N of the ``p_pass@N`` keys present, in increasing order."""
    ns = {n for r in records for k in r.metrics if (n := split_key(k)[1]) is not None and split_key(k)[0] == "p_pass"}
    return sorted(ns)


def _implicit_tables(records):
    t = _means_by_category(records, "implicit_by_category", "Implicit probabilistic reasoning by scenario "
                           "(distances to the true outcome distribution, Chebyshev with a 95% CI clustered by "
                           "scenario; argmax accuracy on unique-mode items)",
                           "implicit", list(IMPLICIT_KEYS), cluster_key="chebyshev")
    return [t]


def _explicit_tables(records):
    return [_means_by_category(records, "explicit_by_category", "Explicit MCQ twin by scenario", "explicit",
                               list(EXPLICIT_KEYS), rate_key="mcq_acc")]


# ------------------------------------------------------------------------------------------------ odds

def _odds_tables(records):
    cols = ["items", "mae", "mae_se", "baseline_mae", "ks_stat", "ks_stat_se"]

    def se(recs, key):
        """The odds paper's ± (Tables 1 and 2): the standard error across the group's distributions."""
        by_dist: dict = {}
        for i, r in enumerate(recs):
            by_dist.setdefault(r.payload.get("distribution", ("record", i)), []).append(r.metrics.get(key))
        return finite_or_none(across_distributions(by_dist)["se"])

    def vals(recs):
        return {"items": len(recs), "mae": nanmean(r.metrics.get("abs_error") for r in recs),
                "mae_se": se(recs, "abs_error"),
                "baseline_mae": nanmean(r.metrics.get("baseline_abs_error") for r in recs),
                "ks_stat": nanmean(r.metrics.get("ks_stat") for r in recs), "ks_stat_se": se(recs, "ks_stat")}

    fam = Table("odds_by_family", "What are the odds: MAE (percentile points / probability) and KS statistic by "
                "distribution family", "odds", ["model", "framework", "task", "family", *cols],
                keys=("model", "framework", "task", "family"))
    shots = Table("odds_by_shots", "What are the odds: by number of shots", "odds",
                  ["model", "framework", "task", "shots", *cols], keys=("model", "framework", "task", "shots"))
    ctx = Table("odds_by_context", "What are the odds: by context (real-world domain and framing; '_se' columns are "
                "the paper's standard error across the group's distributions)", "odds",
                ["model", "framework", "task", "context", *cols], keys=("model", "framework", "task", "context"))
    for (model, fw), recs in _group(records, lambda r: (r.model, r.framework)).items():
        for (task, dfam), g in sorted(_group(recs, lambda r: (str(r.payload.get("task", r.category)),
                                                              str(r.payload.get("family", "?")))).items()):
            fam.rows.append({"model": model, "framework": fw, "task": task, "family": dfam, **vals(g)})
        for (task, k), g in sorted(_group(recs, lambda r: (str(r.payload.get("task", r.category)),
                                                           _int_or(r.payload.get("shots")))).items(),
                                   key=lambda kv: (kv[0][0], kv[0][1] if isinstance(kv[0][1], int) else 10**9)):
            shots.rows.append({"model": model, "framework": fw, "task": task, "shots": k, **vals(g)})
        for (task, context), g in sorted(_group(recs, lambda r: (str(r.payload.get("task", r.category)),
                                                                 str(r.payload.get("context", "?")))).items()):
            ctx.rows.append({"model": model, "framework": fw, "task": task, "context": context, **vals(g)})
    return [fam, shots, ctx]


def _int_or(x: Any) -> Any:
    try:
        return int(x)
    except (TypeError, ValueError, OverflowError):
        return "?" if x is None else str(x)


# ------------------------------------------------------------------------------------------------ stability

def _run_accuracy_stats(recs: Sequence[SampleRecord]) -> dict[str, Any]:
    """Per-question lists of per-run correctness -> per-run accuracies -> median and max-min spread."""
    lists = [r.metrics.get("run_accuracies") for r in recs]
    lists = [[finite_or_none(x) for x in v] for v in lists if isinstance(v, (list, tuple)) and v]
    if not lists or len({len(v) for v in lists}) != 1:
        return {}
    runs = len(lists[0])
    acc = [nanmean(v[i] for v in lists) for i in range(runs)]
    acc = [a for a in acc if a is not None]
    if not acc:
        return {}
    s = sorted(acc)
    med = s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2
    return {"median_acc": med, "acc_spread": max(acc) - min(acc), "runs": runs}


def _stability_tables(records, aggregates) -> list[Table]:
    keys = [k for k in STABILITY_KEYS if k != "run_accuracies"]
    t = Table("stability", "Run-to-run stability (TARr@N, TARa@N, best / worst / median accuracy, spread)",
              "stability", ["model", "framework", "task", "questions", *keys, "runs", "source"],
              keys=("model", "framework", "task"))
    seen = set()
    for (model, fw, task), recs in _group(records, lambda r: (r.model, r.framework, r.task)).items():
        row = {"model": model, "framework": fw, "task": task, "questions": len({r.problem_id for r in recs}),
               "source": "samples"}
        for k in keys:
            row[k] = nanmean(r.metrics.get(k) for r in recs)
        for k, v in _run_accuracy_stats(recs).items():
            if row.get(k) is None:
                row[k] = v
        agg = aggregates.get((model, fw, "stability", task), {})
        for k, v in agg.items():
            if k in keys and row.get(k) is None:
                row[k] = finite_or_none(v)
                row["source"] = "samples+results"
        seen.add((model, fw, task))
        t.rows.append(row)
    for (model, fw, fam, task), agg in aggregates.items():
        if fam != "stability" or (model, fw, task) in seen:
            continue
        row = {"model": model, "framework": fw, "task": task, "questions": None, "source": "results"}
        for k in keys:
            row[k] = finite_or_none(agg.get(k))
        if isinstance(agg.get("run_accuracies"), (list, tuple)):
            row["runs"] = len(agg["run_accuracies"])
        t.rows.append(row)
    return [t]


# ------------------------------------------------------------------------------------------------ all

def build_tables(table: SampleTable, published: Any = None) -> dict[str, list[Table]]:
    """``{family: [Table, ...]}`` for every family with data, in report order. ``published``: a
    :class:`~ub_core.report.dice.PublishedRelease` whose models join the dice leaderboard as reference rows
    (:func:`~ub_core.report.dice.add_published`), after every step that reads runs (they are no run)."""
    from .dice import add_published, dice_tables
    from .plugin_sections import plugin_tables

    out: dict[str, list[Table]] = {}
    builders = {"ksn": _ksn_tables, "calibration": _calibration_tables, "implicit": _implicit_tables,
                "explicit": _explicit_tables, "odds": _odds_tables, "dice": lambda recs: dice_tables(recs, table)}
    for fam, build in builders.items():
        recs = table.of_eval_family(fam)
        if recs:
            out[fam] = build(recs)
        if fam == "ksn" and table.of_eval_family("ksn_logprob"):
            out["ksn_logprob"] = _ksn_logprob_tables(table.of_eval_family("ksn_logprob"), recs)
    stab = table.of_eval_family("stability")
    if stab or any(k[2] == "stability" for k in table.aggregates):
        out["stability"] = _stability_tables(stab, table.aggregates)
    for ts in out.values():
        for t in ts:
            _attach_provenance(t, table)
    for fam, ts in out.items():
        _add_run_mde(fam, ts, table)
        pairs = _pairwise_table(fam, ts, table)
        if pairs is not None:
            ts.append(pairs)
    for fam, ts in plugin_tables(table).items():  # each plug-in run metric's own section, after ours
        for t in ts:
            _attach_provenance(t, table)
        out[fam] = ts
    if published is not None:
        add_published(out, table, published)
    return out


def _leaderboard(tables: list[Table]) -> Table | None:
    """The family's per-model table (keys model and framework only, with the complete column)."""
    return next((t for t in tables if set(t.keys) == set(ID_COLUMNS) and t.rows and "complete" in t.rows[0]), None)


def _add_run_mde(fam: str, tables: list[Table], table: SampleTable) -> None:
    """Each leaderboard row's minimum detectable effect (``mde``): the smallest difference from another run of
    this bank, of equal variance and independent, that a two-sided test at alpha 0.05 detects with 80% power:
    2.80 * sqrt(2) * SE of the row's headline mean (clustered as in ``ub_core.compare``). For the sampling-free
    p_pass@N, ``mde_if_sampled`` is the same for sampled KS@N verdicts of the same model (its within-problem
    noise added back): what the sampling-free route saves."""
    lead = _leaderboard(tables)
    if lead is None:
        return
    by_model = _group(table.of_eval_family(fam), lambda r: (r.model, r.framework))
    added = set()
    for row in lead.rows:
        recs = by_model.get((row["model"], row["framework"]), [])
        key = headline_key(fam, recs)
        # the mde belongs to the metric beside it: the table's headline (ksn: KS@100), else the row's own key
        column = "mde"
        if fam == "ksn":
            own = _own_ks(recs, per_n_key("ks", KSN_HEADLINE_N))
            key = own or per_n_key("ks", KSN_HEADLINE_N)
            if own is not None:
                column = f"{own}_mde"
        vals = [(r.metric(key), r.payload.get("cluster")) for r in recs] if key else []
        vals = [(v, c) for v, c in vals if v is not None]
        if len(vals) < 2:
            continue
        xs = [v for v, _ in vals]
        clusters = [c for _, c in vals] if all(c is not None for _, c in vals) else None
        # the SE of the run's mean, clustered where the bank clusters (plain below MIN_CLUSTERS clusters); the
        # floor a finite sample allows stands in only where the values show no spread (an MDE of 0 otherwise),
        # never where they vary (it would overstate the MDE)
        se = clustered_stderr(xs, clusters if clusters else range(len(xs)))
        spec = next((m for f in REPORT_SPEC_FAMILIES.get(fam, (fam,)) if (m := find_metric(f, key)) is not None),
                    None)
        bounds = spec.bounds if spec is not None else None
        if bounds is not None and all(math.isfinite(b) for b in bounds):
            width = bounds[1] - bounds[0]
            se, _ = floor_if_no_spread(se, len(xs), width, max(width, max(abs(v) for v in xs)))
        row[column] = minimum_detectable_effect(math.sqrt(2) * se)
        added.add(column)
        if split_key(key)[0] == "p_pass" and split_key(key)[1] is not None:
            row["mde_if_sampled"] = sampling_noise_removed(xs)["mde_sampled"]
            added.add("mde_if_sampled")
    lead.columns += [c for c in ("mde", "mde_if_sampled", *sorted(added - {"mde", "mde_if_sampled"}))
                     if c in added and c not in lead.columns]
    if added:
        lead.note = (lead.note + " " if lead.note else "") + (
            "mde: the smallest difference from an independent run of equal variance on this bank that a test at "
            "alpha 0.05 detects with 80% power (ub compare gives the paired one for two runs)"
            + ("; mde_if_sampled: the same for sampled KS@N verdicts of this model (the sampling-free route "
               "removes their within-problem noise)." if "mde_if_sampled" in added else ".")
            + ("".join(f" {c}: the same for {c[:-4]}, the row's own headline (its runs have no "
                       f"KS@{KSN_HEADLINE_N})." for c in sorted(added) if c.endswith("_mde") and c != "mde")))


#: the family-wise error rate of a report's pairwise table (Holm's correction across the pairs it shows)
PAIRWISE_ALPHA = 0.05


def _pairwise_table(fam: str, tables: list[Table], table: SampleTable) -> Table | None:
    """Every pair of complete runs of one configuration (``ub_core.compare``): paired difference of the
    family's headline, its 95% interval, the p-value and Holm's adjustment across the pairs shown (significant:
    adjusted p < 0.05), and the minimum detectable effect. Partial runs and runs whose settings differ (other than
    model and seed) are never paired; None when no two complete runs share a configuration."""
    lead = _leaderboard(tables)
    if lead is None:
        return None
    groups: dict[str, list[tuple[str, str]]] = {}
    for row in lead.rows:
        prov = row.get(PROVENANCE) or {}
        if row.get("complete") is True:
            groups.setdefault(comparable_settings(prov.get("settings"), prov.get("bank_version")), []).append(
                (row["model"], row["framework"]))
    by_model = _group(table.of_eval_family(fam), lambda r: (r.model, r.framework))
    t = Table(f"{fam}_pairwise", "Pairwise differences of complete runs of one configuration (paired by problem; "
              "p-values Holm-adjusted across the pairs shown)", fam,
              ["model_a", "framework_a", "model_b", "framework_b", "metric", "n_pairs", "diff", "ci_low", "ci_high",
               "p_value", "p_holm", "significant", "mde", "n_unmatched"],
              keys=("model_a", "framework_a", "model_b", "framework_b", "metric"))
    for members in groups.values():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                ra, rb = by_model.get(a, []), by_model.get(b, [])
                key = headline_key(fam, list(ra) + list(rb))
                if key is None:
                    continue
                c = compare_records(fam, key, ra, rb)
                t.rows.append({"model_a": a[0], "framework_a": a[1], "model_b": b[0], "framework_b": b[1],
                               "metric": key, "n_pairs": c.n_pairs, "diff": c.diff, "ci_low": c.ci_low,
                               "ci_high": c.ci_high, "p_value": c.p_value, "mde": c.mde,
                               "n_unmatched": c.n_unmatched})
    if not t.rows:
        return None
    for row, adjusted in zip(t.rows, holm([r["p_value"] for r in t.rows])):
        row["p_holm"] = adjusted
        row["significant"] = None if adjusted is None else adjusted < PAIRWISE_ALPHA
    t.note = ("diff = model_a - model_b on the problems both scored (paired: Miller 2024, 'Adding error bars to "
              "evals'); ci: 95% t interval (clustered by the bank's clusters where there are 10 or more); p_value: "
              "paired t, or exact McNemar for pass/fail scores; p_holm: Holm-adjusted across this table; "
              "significant: p_holm < 0.05; mde: the smallest difference this bank detects at 80% power and alpha "
              "0.05 for this pair. PARTIAL runs and runs of other settings are not paired.")
    return t


_COMPLETE_FIRST = {True: 0, None: 1, False: 2}


def _attach_provenance(t: Table, table: SampleTable) -> None:
    """Give every row of a per-model table its runs' provenance and a ``complete`` column right after the model's
    columns. A leaderboard (no category, task or group key) lists complete runs first, then runs
    that do not say, then partial runs (``--limit``, selected ids, cancelled): a partial run is never ranked among
    complete ones, and the page marks its row."""
    if "model" not in t.keys or "framework" not in t.keys:
        return
    sources: dict[tuple, set[str]] = defaultdict(set)
    for r in table.records:
        if r.eval_family == t.eval_family:
            # a row's "task" is the framework's task, or a family's own sub-task (odds: percentile, probability)
            tasks = {t for t in (r.task, r.payload.get("task")) if isinstance(t, str)}
            for key in ((r.model, r.framework, None, None), (r.model, r.framework, "category", r.category),
                        *((r.model, r.framework, "task", task) for task in tasks)):
                sources[key].add(r.source)
    for (model, fw, fam, task), src in table.aggregate_sources.items():
        if fam == t.eval_family:
            sources[(model, fw, None, None)].add(src)
            sources[(model, fw, "task", task)].add(src)
    for row in t.rows:
        found = sources.get((row.get("model"), row.get("framework"), None, None), set())
        for k in ("task", "category"):
            if k in t.keys and row.get(k) not in (None, "all"):
                found = found & sources.get((row.get("model"), row.get("framework"), k, row.get(k)), set())
        prov = table.provenance(sorted(found))
        row[PROVENANCE] = prov
        row["complete"] = prov["complete"]
    at = t.columns.index("framework") + 1
    t.columns.insert(at, "complete")
    if set(t.keys) == set(ID_COLUMNS):
        t.rows.sort(key=lambda r: _COMPLETE_FIRST[r["complete"]])  # stable: the ranking holds within each group


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if not math.isfinite(v) else f"{v:.4g}"
    return str(v)


def _csv(v: Any) -> str:
    """Full precision for dashboards (the Markdown and HTML tables round); a flag (``complete``) as 1 / 0."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return "" if not math.isfinite(v) else f"{v:.12g}"
    return "" if v is None else str(v)


def _complete_text(v: Any) -> str:
    """The ``complete`` flag as the page shows it: yes, PARTIAL, or ? (the input does not say)."""
    return {True: "yes", False: "PARTIAL"}.get(v, "?") if isinstance(v, bool) or v is None else str(v)


def md_text(v: Any) -> str:
    """Text made inert for Markdown renderers: ``&``, ``<`` and ``>`` HTML-escaped (a model name holding
    ``<script>`` stays text), table pipes escaped and line breaks turned into spaces (a cell stays one cell)."""
    return markdown_text(v)


def markdown_table(t: Table) -> str:
    head = "| " + " | ".join(md_text(c) for c in t.columns) + " |"
    sep = "|" + "|".join("---" if c in t.keys else "---:" for c in t.columns) + "|"
    body = ["| " + " | ".join(md_text(("published" if r.get("published") else _complete_text(r.get(c)))
                                      if c == "complete" else _fmt(r.get(c)))
                              for c in t.columns) + " |" for r in t.rows]
    return "\n".join([head, sep, *body])


def write_summary(tables: dict[str, list[Table]], out: Path, info: dict[str, Any]) -> dict[str, Path]:
    """``summary.json`` (every table with its columns and rows, plus ``inputs``), ``summary.csv`` (long form:
    table, model, framework, group, metric, value) and ``summary.md``; also ``tables/<name>.csv`` (wide)."""
    out.mkdir(parents=True, exist_ok=True)
    flat = [t for ts in tables.values() for t in ts]
    doc = {"generated_by": "ub report", "inputs": info, "families": list(tables),
           "tables": {t.name: t.to_json() for t in flat}}
    (out / "summary.json").write_text(json.dumps(doc, indent=1, default=_jsonable, allow_nan=False), encoding="utf-8")
    with (out / "summary.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["table", "family", "model", "framework", "group", "metric", "value"])
        for t in flat:
            group_keys = [k for k in t.keys if k not in ID_COLUMNS]
            for r in t.rows:
                group = ";".join(f"{k}={r.get(k)}" for k in group_keys) or "all"
                for c in t.columns:
                    if c in t.keys:
                        continue
                    w.writerow([csv_cell(x) for x in (t.name, t.eval_family, r.get("model"), r.get("framework"),
                                                      group, c, _csv(r.get(c)))])
    tdir = out / "tables"
    tdir.mkdir(exist_ok=True)
    for t in flat:
        with (tdir / f"{t.name}.csv").open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow([csv_cell(c) for c in t.columns])
            for r in t.rows:
                w.writerow([csv_cell(_csv(r.get(c))) for c in t.columns])
    md = ["# UnpredictaBench report", "",
          f"{info.get('records', 0)} scored samples from {len(info.get('files', []))} files; "
          f"{len(info.get('skipped', []))} inputs skipped.", ""]
    for t in flat:
        md += [f"## {md_text(t.title)}", "", markdown_table(t), ""]
        if t.note:
            md += [f"_{md_text(t.note)}_", ""]
    if info.get("skipped"):
        md += ["## Skipped inputs", ""] + [f"- {md_text(s)}" for s in info["skipped"]] + [""]
    if info.get("notes"):
        md += ["## How the runs were combined", ""] + [f"- {md_text(s)}" for s in info["notes"]] + [""]
    (out / "summary.md").write_text("\n".join(md), encoding="utf-8")
    return {"json": out / "summary.json", "csv": out / "summary.csv", "md": out / "summary.md"}
