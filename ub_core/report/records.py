"""The tidy per-sample table every reader fills and every report section reads.

One :class:`SampleRecord` per (model, framework, family, problem, epoch). ``metrics`` holds the numeric per-sample
metric values (``ks@100``, ``pm``, ``chebyshev``, ...); ``payload`` holds what the plots need beyond numbers (the
parsed values of a ksn problem, the OptionItem record with ``predicted`` and ``option_mass``, the odds metadata).
Plain Python; :meth:`SampleTable.to_dataframe` gives a pandas frame where pandas is installed.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

__all__ = ["SampleRecord", "SampleTable", "Skip", "RunInfo", "finite_or_none", "DEFAULT_MODEL_ALIASES", "model_alias"]

log = logging.getLogger("ub_core.report")


def finite_or_none(x: Any) -> float | None:
    """A float for a finite number (bools count as 0/1); None for anything else (None, NaN, text, lists, an
    integer beyond the float range)."""
    if isinstance(x, bool):
        return float(x)
    try:
        if isinstance(x, (int, float)):
            v = float(x)
            return v if math.isfinite(v) else None
        v = float(x)  # type: ignore[arg-type]  # numpy scalars
    except (TypeError, ValueError, OverflowError):
        return None
    return v if math.isfinite(v) and not isinstance(x, (str, bytes)) else None


@dataclass
class SampleRecord:
    model: str
    framework: str  # "inspect" or "lm-eval"
    eval_family: str  # report eval family (ksn, calibration, ..., stability); the JSON / CSV column "family"
    task: str
    category: str
    problem_id: str
    epoch: int = 1
    metrics: dict[str, Any] = field(default_factory=dict)
    payload: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    def metric(self, key: str) -> float | None:
        return finite_or_none(self.metrics.get(key))

    def flat(self) -> dict[str, Any]:
        """One flat row (metrics inlined; payload left out) for a data frame or a CSV."""
        row = {"model": self.model, "framework": self.framework, "family": self.eval_family, "task": self.task,
               "category": self.category, "problem_id": self.problem_id, "epoch": self.epoch, "source": self.source}
        for k, v in self.metrics.items():
            if not isinstance(v, (list, dict)):
                row[k] = v
        return row


@dataclass
class RunInfo:
    """Where one input file's samples came from (issue 26 item 8): what a dashboard needs to tell runs apart and to
    keep a partial run from being ranked beside complete ones. ``complete`` is True when the run scored every item of
    its tasks (no ``--limit``, no sample or id selection, not cancelled), False when it did not, None when the input
    does not say."""

    source: str
    run_id: str | None = None
    date: str | None = None
    task: str | None = None
    task_version: str | None = None
    bank_version: str | None = None
    task_args: dict[str, Any] = field(default_factory=dict)
    limit: Any = None
    dataset: str | None = None
    generation: dict[str, Any] = field(default_factory=dict)
    complete: bool | None = None
    samples: int | None = None
    samples_total: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


#: Model names that mean one model: the offline oracle and collapse models as Inspect (``ub/oracle``) and lm-eval
#: (``ub-oracle``, ``ub-oracle/<model_args name>``) name them. ``ub report --model-alias A=B`` adds more.
DEFAULT_MODEL_ALIASES = {f"ub/{m}": f"ub-{m}" for m in ("oracle", "collapse")}


def model_alias(name: str, aliases: dict[str, str] | None = None) -> str:
    """The report's name for ``name``: the default folding of the offline models (``ub/oracle``, ``ub-oracle``,
    ``ub-oracle/...`` -> ``ub-oracle``; likewise ``collapse``), then an ``aliases`` entry for the name as written or
    as folded (``ub-oracle=Oracle`` renames all three)."""
    aliases = aliases or {}
    if name in aliases:
        return aliases[name]
    folded = DEFAULT_MODEL_ALIASES.get(name, name)
    for offline in DEFAULT_MODEL_ALIASES.values():
        if folded.startswith(offline + "/"):
            folded = offline
    return aliases.get(folded, folded)


@dataclass
class Skip:
    """An input (file, or a line / sample of one) that could not be used, with the one-line reason."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class SampleTable:
    records: list[SampleRecord] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    #: run-level values some families only report in aggregate (stability from Inspect metrics / lm-eval results):
    #: ``{(model, framework, family, task): {metric: value}}``
    aggregates: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    #: provenance of each input file, by its path (the records' ``source``)
    runs: dict[str, RunInfo] = field(default_factory=dict)
    #: the input file of each run-level aggregate (same keys as ``aggregates``)
    aggregate_sources: dict[tuple[str, str, str, str], str] = field(default_factory=dict)

    def rename_models(self, aliases: dict[str, str] | None = None) -> None:
        """Apply :func:`model_alias` to every record and aggregate (before repeated runs are dropped, so one model
        under two names is one model)."""
        for r in self.records:
            r.model = model_alias(r.model, aliases)
        for old in list(self.aggregates):
            new = (model_alias(old[0], aliases), *old[1:])
            if new != old:
                self.aggregates.setdefault(new, {}).update(self.aggregates.pop(old))
                if old in self.aggregate_sources:
                    self.aggregate_sources[new] = self.aggregate_sources.pop(old)

    def provenance(self, sources: Iterable[str]) -> dict[str, Any]:
        """What the runs behind one summary row share: ``complete`` (every run complete; None when one does not
        say), and per field the distinct values of those runs (one value stays a value, several become a list)."""
        infos = [self.runs.get(s) or RunInfo(s) for s in dict.fromkeys(sources)]
        out: dict[str, Any] = {"runs": len(infos)}
        flags = [i.complete for i in infos]
        out["complete"] = None if not infos or None in flags else all(flags)
        for key in ("source", "run_id", "date", "task", "task_version", "bank_version", "task_args", "limit",
                    "dataset", "generation", "samples", "samples_total"):
            vals: list[Any] = []
            for i in infos:
                v = getattr(i, key)
                if v not in vals:
                    vals.append(v)
            out[key] = vals[0] if len(vals) == 1 else vals
        return out

    def add_skip(self, path: Any, reason: str) -> None:
        skip = Skip(str(path), " ".join(str(reason).split()) or "unreadable")
        log.warning("skipped %s", skip)
        self.skips.append(skip)

    def extend(self, records: Iterable[SampleRecord]) -> None:
        self.records.extend(records)

    def drop_repeated_runs(self) -> int:
        """Keep one run per (model, framework, family, task, problem, epoch): when two input files score the same
        sample of the same model (a run repeated, or one log given twice under two names), the file modified last
        wins. Each superseded file is one skip naming the file that replaced it; pooling both would count every
        problem twice and narrow every interval. Returns the number of records dropped."""
        def mtime(path: str) -> float:
            try:
                return Path(path).stat().st_mtime
            except OSError:
                return 0.0

        age = {src: (mtime(src), src) for src in {r.source for r in self.records}}  # one stat per file
        newest: dict[tuple, str] = {}
        for r in self.records:
            key = (r.model, r.framework, r.eval_family, r.task, r.problem_id, r.epoch)
            cur = newest.get(key)
            if cur is None or age[r.source] > age[cur]:
                newest[key] = r.source
        kept, superseded = [], {}
        for r in self.records:
            winner = newest[(r.model, r.framework, r.eval_family, r.task, r.problem_id, r.epoch)]
            if r.source == winner:
                kept.append(r)
            else:
                superseded.setdefault(r.source, winner)
        for old, new in superseded.items():
            self.add_skip(old, f"the same model's samples are also in {new}, a newer run; that one is used")
        dropped = len(self.records) - len(kept)
        self.records = kept
        return dropped

    def of_eval_family(self, name: str) -> list[SampleRecord]:
        """The records of one eval family (``ksn``, ``calibration``, ...)."""
        return [r for r in self.records if r.eval_family == name]

    def eval_families(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.records:
            seen.setdefault(r.eval_family, None)
        for (_, _, fam, _) in self.aggregates:
            seen.setdefault(fam, None)
        return list(seen)

    def models(self, eval_family: str | None = None) -> list[tuple[str, str]]:
        """(model, framework) pairs in first-seen order."""
        seen: dict[tuple[str, str], None] = {}
        for r in self.records:
            if eval_family is None or r.eval_family == eval_family:
                seen.setdefault((r.model, r.framework), None)
        return list(seen)

    def __iter__(self) -> Iterator[SampleRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def to_dataframe(self):
        """A pandas DataFrame of :meth:`SampleRecord.flat` rows (needs pandas)."""
        import pandas as pd

        return pd.DataFrame([r.flat() for r in self.records])
