"""Run-level metrics: a whole kind of evaluation as a metric of a run, computed from its per-problem records.

A per-problem metric (:mod:`ub_core.metric_spec`) is averaged over problems; some evaluations are not an average:
"Failure to Mix"'s step-likeness S is the area between a curve over the problems (the share of "1" against the
stated p) and the diagonal. A :class:`RunMetric` is such a metric: ``record(problem, row)`` reduces one problem's
scored row (:func:`ub_core.ksn_scoring.score_values`, the plug-in's own scoped metrics included) to a small record
of numbers, logged with the problem (Inspect: ``Score.metadata["ub_run"]``; lm-eval: the document's value of the
metric), and ``compute(records)`` gives the run's value, its standard error and any further values it names in
``extras``. Every framework calls :meth:`RunMetric.evaluate` on the same records, so Inspect, lm-eval and ``ub
report`` give the same number.

A lab's package declares one under the entry-point group ``unpredictabench.run_metrics``
(:data:`ub_core.plugins.RUN_METRICS_GROUP`), scoped to its bank (``bank=``) or its distribution family
(``family=``): the runs of that scope report it (:func:`run_metrics_for`), read when a run asks, and ``ub report``
shows those runs in a section of their own, titled ``title``.
"""

from __future__ import annotations

import logging
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

__all__ = ["RunMetric", "run_metrics_for", "all_run_metrics", "bank_families", "RUN_RECORDS"]

#: where a problem's records live: Inspect ``Score.metadata[RUN_RECORDS][name]``
RUN_RECORDS = "ub_run"

log = logging.getLogger("ub_core.run_metrics")


@dataclass(frozen=True)
class RunMetric:
    """A metric of a whole run (module docstring). Its keys: ``name`` (the value), ``<name>_stderr`` (its standard
    error) and ``<name>_<extra>`` for each of ``extras``."""

    name: str
    display: str
    #: True or False ranks runs by it; None: a two-sided metric or a description
    higher_is_better: bool | None
    #: ``(problem, scored row) -> {field: number}``: one problem's record (plain numbers, logged)
    record: Callable[[Any, Mapping[str, Any]], Mapping[str, float]]
    #: ``(records) -> {"value": v, "se": se, extra: ...}``: the run's value from every problem's record
    compute: Callable[[Sequence[Mapping[str, float]]], Mapping[str, float]]
    bank: str | None = None
    family: str | None = None
    #: the further values ``compute`` gives (besides ``value`` and ``se``)
    extras: tuple[str, ...] = ()
    #: the title of its report section
    title: str = ""

    def keys(self) -> tuple[str, ...]:
        return (self.name, f"{self.name}_stderr", *(f"{self.name}_{e}" for e in self.extras))

    def in_scope(self, bank: str | None, families=()) -> bool:
        return (self.bank is not None and self.bank == bank) or (self.family is not None and self.family in families)

    def record_of(self, problem: Any, row: Mapping[str, Any]) -> dict[str, float]:
        """One problem's record, as plain floats (a value that is not a finite number is NaN); empty, with a warning,
        where the plug-in's ``record`` fails (the problem is left out of the run metric, never the run)."""
        try:
            return {str(k): _number(v) for k, v in dict(self.record(problem, row)).items()}
        except Exception as e:  # noqa: BLE001 - a plug-in's bug costs its metric one problem, named
            log.warning("run metric %s: no record for %s (%s: %s)", self.name, getattr(problem, "id", "?"),
                        type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
            return {}

    def evaluate(self, records: Sequence[Any]) -> dict[str, float]:
        """``{key: value}`` for every key of :meth:`keys` from the records (anything that is not a record of
        numbers, as a hostile log may hold, is left out); NaN where ``compute`` gives no finite number, or with no
        record at all."""
        kept = [{str(k): _number(v) for k, v in r.items()} for r in records if isinstance(r, Mapping) and r]
        out = dict.fromkeys(self.keys(), math.nan)
        if not kept:
            return out
        try:
            got = self.compute(kept)
        except Exception as e:  # noqa: BLE001 - records the plug-in cannot read (a hostile log): NaN, named
            log.warning("run metric %s: not computed from %d records (%s: %s)", self.name, len(kept),
                        type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
            return out
        if not isinstance(got, Mapping):
            log.warning("run metric %s: compute gave a %s, not a mapping", self.name, type(got).__name__)
            return out
        for field, key in (("value", self.name), ("se", f"{self.name}_stderr"),
                           *((e, f"{self.name}_{e}") for e in self.extras)):
            out[key] = _number(got.get(field))
        return out


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return math.nan
    try:
        f = float(v)
    except (OverflowError, ValueError):
        return math.nan
    return f if math.isfinite(f) else math.nan


_RUN_METRICS: dict[str, RunMetric] = {}


def _check(rm: RunMetric) -> None:
    from .plugins import check_scope

    check_scope(f"run metric {rm.name!r}", rm.bank, rm.family)
    if not callable(rm.record) or not callable(rm.compute):
        raise ValueError(f"run metric {rm.name!r}: record and compute must be functions")


def all_run_metrics() -> dict[str, RunMetric]:
    """Every run metric of the installed plug-ins (name -> RunMetric), read now."""
    from .plugins import RUN_METRICS_GROUP, entry_objects

    return dict(entry_objects(RUN_METRICS_GROUP, RunMetric, _RUN_METRICS, check=_check))


def run_metrics_for(bank: str | None, families=None) -> list[RunMetric]:
    """The run metrics a run of ``bank`` reports (its problems' distribution ``families``: :func:`bank_families`
    when not given). None for the built-in banks."""
    found = all_run_metrics()
    if not found or bank is None:
        return []
    fams = bank_families(bank) if families is None else tuple(families)
    return [rm for rm in found.values() if rm.in_scope(bank, fams)]


_FAMILIES: dict[str, tuple[Any, tuple[str, ...]]] = {}


def bank_families(bank: str | None) -> tuple[str, ...]:
    """The distribution families of ``bank``'s problems (the scope of a family's metrics), kept while the bank's
    registration is the same; () for an unknown bank."""
    from . import problems

    if bank is None:
        return ()
    try:
        problems.load_bank(bank)  # registers a plug-in's bank
        record = problems.BANKS[bank]
    except (KeyError, ValueError):
        return ()
    hit = _FAMILIES.get(bank)
    if hit is not None and hit[0] is record:
        return hit[1]
    fams = tuple(sorted({str(getattr(p, "family", "")) for p in problems.load_bank(bank)} - {""}))
    _FAMILIES[bank] = (record, fams)
    return fams
