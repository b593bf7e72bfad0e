"""The report sections of the plug-ins' run metrics (:mod:`ub_core.run_metrics`), one per run metric with data:
a table per model and framework of the run metric (its value, standard error and extras, computed from the
problems' records by :meth:`~ub_core.run_metrics.RunMetric.evaluate`, as the frameworks compute it), then the mean of
each of the bank's own per-problem metrics (the largest N of a per-N one) and the headline KS@N."""

from __future__ import annotations

from collections import defaultdict

from ..metric_keys import split_key
from ..metric_spec import find_metric
from ..run_metrics import RUN_RECORDS, all_run_metrics
from .records import SampleRecord, SampleTable, nanmean
from .tables import Table

__all__ = ["plugin_tables"]


def _own_keys(recs: list[SampleRecord]) -> list[str]:
    """The scoped (plug-in) metric keys of the records, a per-N one at its largest N, then the largest KS@N."""
    seen: dict[str, tuple[int, str]] = {}
    for r in recs:
        for key in r.metrics:
            prefix, n = split_key(key)
            spec = find_metric("ksn", key)
            if spec is None or not (spec.scoped or prefix == "ks"):
                continue
            if n is None or n > seen.get(prefix, (-1, ""))[0]:
                seen[prefix] = (-1 if n is None else n, key)
    return [key for _, key in sorted(seen.values(), key=lambda nk: (split_key(nk[1])[0] == "ks", nk[1]))]


def plugin_tables(table: SampleTable) -> dict[str, list[Table]]:
    """``{run metric name: [its table]}`` for every installed run metric whose records the report read."""
    out: dict[str, list[Table]] = {}
    for name, rm in all_run_metrics().items():
        recs = table.of_eval_family(name)
        if not recs:
            continue
        own = _own_keys(recs)
        t = Table(f"{name}_leaderboard", rm.title or rm.display, name,
                  ["model", "framework", "bank", "problems", *rm.keys(), *own])
        by_model: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
        for r in recs:
            by_model[(r.model, r.framework)].append(r)
        for (model, fw), mrecs in by_model.items():
            records = [(r.payload.get(RUN_RECORDS) or {}).get(name) for r in mrecs]
            banks = sorted({str(r.payload["bank"]) for r in mrecs if r.payload.get("bank")})
            t.rows.append({"model": model, "framework": fw, "bank": ", ".join(banks) or rm.bank or "",
                           "problems": len(mrecs), **rm.evaluate([x for x in records if x is not None]),
                           **{k: nanmean(r.metrics.get(k) for r in mrecs) for k in own}})
        t.note = (f"{rm.name}: {rm.display}, from every problem's record (its _stderr: the standard error; "
                  + ", ".join(f"{rm.name}_{e}" for e in rm.extras) + " as the run metric defines them); the other "
                  "columns are means over the problems.")
        out[name] = [t]
    return out
