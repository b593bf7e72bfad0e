"""The report's table record (:class:`Table`) and what its JSON says of each column (:func:`column_direction`), apart
from :mod:`.summary` so that a family's own table module (:mod:`.dice`) builds tables without importing the summary
back."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..metric_spec import direction, find_metric

__all__ = ["Table", "ID_COLUMNS", "PROVENANCE", "column_direction"]

ID_COLUMNS = ("model", "framework")


@dataclass
class Table:
    name: str
    title: str
    eval_family: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    #: columns that identify a row (the rest are values); the long CSV melts the value columns
    keys: tuple[str, ...] = ID_COLUMNS
    #: data for a figure that is not a table column (not written to the summaries)
    points: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Columns, rows and, for dashboards, ``higher_is_better`` per value column (:func:`column_direction`:
        null where no direction ranks it) and each row's ``provenance`` where its runs are known."""
        rows = []
        for r in self.rows:
            row = {c: _jsonable(r.get(c)) for c in self.columns}
            if PROVENANCE in r:
                row[PROVENANCE] = r[PROVENANCE]
            rows.append(row)
        return {"title": self.title, "family": self.eval_family, "columns": self.columns, "keys": list(self.keys),
                "higher_is_better": {c: column_direction(self.eval_family, c) for c in self.columns
                                     if c not in self.keys},
                "note": self.note, "rows": rows}


#: the row key that holds its runs' provenance (:meth:`SampleTable.provenance`); not a column
PROVENANCE = "provenance"
#: the spec eval families whose metrics a report eval family's columns are
#: report columns that are no spec metric, with their direction (None: counts and labels, not ranked)
_REPORT_COLUMNS = {"retry_rate": False, "invalid_rate": False, "n_constant": False, "predicted_p_pass": True,
                   "sampled_ks_pass": True, "mae": False, "baseline_mae": False, "complete": None,
                   # the pairwise table: a difference has the metric's direction only through the metric column
                   "diff": None, "p_value": None, "p_holm": None, "significant": None, "mde": None,
                   "mde_if_sampled": None,
                   "n_pairs": None, "n_unmatched": None, "w1_median": False, "w1_finite_mean": False,
                   "setting": None}


def column_direction(eval_family: str, column: str) -> bool | None:
    """True when a higher value of a summary column is better, False when lower is, None when no direction ranks it:
    interval bounds, counts of items, two-sided metrics such as RE (``ub_core.metric_spec.direction``)."""
    if column in _REPORT_COLUMNS:
        return _REPORT_COLUMNS[column]
    if column in ("ci_low", "ci_high") or column.endswith(("_ci_low", "_ci_high")):
        return None
    key = column.split(" ", 1)[0]  # "ks@100 text_explicit": the headline of one category
    if key.startswith("grid_"):
        key = "behaviour_" + key[5:]
    from .eval_families import run_metric_direction, spec_families  # a plug-in's section: ksn's keys, its own

    for fam in spec_families(eval_family):
        spec = find_metric(fam, key)
        if spec is not None:
            return direction(spec)
    return run_metric_direction(eval_family, key)


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        return _jsonable(v.item())
    return v
