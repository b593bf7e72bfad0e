"""The tidy per-sample table every reader fills and every report section reads.

One :class:`SampleRecord` per (model, framework, family, problem, epoch). ``metrics`` holds the numeric per-sample
metric values (``ks@100``, ``pm``, ``chebyshev``, ...); ``payload`` holds what the plots need beyond numbers (the
parsed values of a ksn problem, the OptionItem record with ``predicted`` and ``option_mass``, the odds metadata).
Plain Python; :meth:`SampleTable.to_dataframe` gives a pandas frame where pandas is installed.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

__all__ = ["SampleRecord", "SampleTable", "Skip", "RunInfo", "finite_or_none", "DEFAULT_MODEL_ALIASES", "model_alias",
           "NOT_CONFIGURATION", "configuration_settings"]

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


def nanmean(values: Iterable[Any]) -> float | None:
    """The mean of the finite values among ``values`` (None, NaN and infinities left out); None when there are none."""
    vals = [v for v in (finite_or_none(x) for x in values) if v is not None]
    return sum(vals) / len(vals) if vals else None


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
    """Where one input file's samples came from: what a dashboard needs to tell runs apart and to
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
    #: the settings that change what a number means (:func:`configuration_settings`); None where the input does
    #: not say. Two runs of one model are one configuration when these and ``bank_version`` are equal.
    settings: dict[str, Any] | None = None

    def configuration(self) -> str | None:
        """A canonical text of this run's configuration (bank version and settings); None when unknown."""
        if self.settings is None:
            return None
        return json.dumps({"bank_version": self.bank_version, **self.settings}, sort_keys=True, default=str)

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


#: Task arguments, lm-eval metadata, generation settings and model arguments that choose which items run, how the
#: run is executed, or which model answers (the model has its own column). Runs that differ only in these measure
#: the same thing: a run split by category or resumed may share one report row. Every other setting (answers per
#: problem, N values, threshold, method, temperature, max tokens, ground-truth size, a model's writer, ...) changes
#: what a number means, so runs that differ in one are separate rows. An unknown key counts as a setting: two rows
#: where one would do is a nuisance, one row that pools two measurements is a wrong number.
NOT_CONFIGURATION = frozenset({
    # which items: a split run (Inspect task arguments, lm-eval metadata)
    "categories", "category", "subtasks", "subtask", "ids", "limit", "limit_per_category", "sample_id",
    # the sampling seed: another replicate of the same measurement (what a comparison of seeds is for)
    "seed",
    # bookkeeping the harnesses add: the model's name, the YAML's path; the bank version is its own field
    "model", "pretrained", "config_source", "version",
    # execution: connections, retries, time-outs, caches, batching, devices
    "max_connections", "adaptive_connections", "max_retries", "timeout", "attempt_timeout", "stream_idle_timeout",
    "cache", "cache_prompt", "batch", "extra_headers", "fallback_models", "base_url", "api_key", "num_concurrent",
    "tokenizer_backend", "batch_size", "max_batch_size", "device", "retry_backoff", "max_backoff",
    "max_response_mb", "request_seeds", "max_n", "trust_remote_code",
})


def configuration_settings(*sources: Any) -> dict[str, Any]:
    """The settings of a run that change what its numbers mean: the union of the mappings ``sources`` (task
    arguments, generation settings, model arguments), without :data:`NOT_CONFIGURATION` keys and unset (None)
    values. Later sources win on a shared key."""
    out: dict[str, Any] = {}
    for src in sources:
        if isinstance(src, dict):
            out.update({str(k): v for k, v in src.items() if str(k) not in NOT_CONFIGURATION and v is not None})
    return dict(sorted(out.items()))


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
    #: how the inputs were combined (:meth:`add_note`)
    notes: list[str] = field(default_factory=list)
    #: values a hair outside their metric's range (round-off) that were clipped into it, per input file:
    #: ``{path: {"<family> <key>": count}}`` (:meth:`add_clipped`, noted by :meth:`note_clipped`)
    clipped: dict[str, dict[str, int]] = field(default_factory=dict)

    def add_clipped(self, path: Any, items: Iterable[str]) -> None:
        """Count values of input ``path`` clipped into their range (``"<family> <key>"`` each)."""
        for item in items:
            per = self.clipped.setdefault(str(path), {})
            per[item] = per.get(item, 0) + 1

    def note_clipped(self) -> None:
        """One note per input file whose values were clipped into range: how many, of which metric."""
        for path, per in self.clipped.items():
            self.add_note(f"{path}: {sum(per.values())} values a hair outside their metric's range (round-off) "
                          f"clipped into it, none dropped (" + ", ".join(f"{k}: {n}" for k, n in sorted(per.items()))
                          + ")")

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
                    "dataset", "generation", "samples", "samples_total", "settings"):
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

    def add_note(self, text: str) -> None:
        """A fact about how the inputs were combined (runs told apart by their settings, a run whose samples were
        partly replaced by a newer run): printed on stderr and listed in the page and ``summary.json``."""
        note = " ".join(str(text).split())
        log.warning("note: %s", note)
        self.notes.append(note)

    def separate_configurations(self) -> int:
        """Give each configuration of a model its own name, so that no row pools two measurements.

        Within one (model, framework, eval family), the runs are grouped by :meth:`RunInfo.configuration` (bank
        version and every setting that changes a number). Where there are several groups, each record and
        run-level aggregate of a run is renamed ``"<model> (<settings that differ>)"`` (a setting a run leaves
        unset reads ``default``; a run whose settings are unknown reads ``settings unknown``), and one note says
        so. Returns the number of models split."""
        config = {src: (info.configuration() if info is not None else None)
                  for src, info in ((s, self.runs.get(s)) for s in
                                    {r.source for r in self.records} | set(self.aggregate_sources.values()))}
        groups: dict[tuple[str, str, str], dict[str | None, list[str]]] = {}
        for r in self.records:
            groups.setdefault((r.model, r.framework, r.eval_family), {}).setdefault(config[r.source], [])
            if r.source not in groups[(r.model, r.framework, r.eval_family)][config[r.source]]:
                groups[(r.model, r.framework, r.eval_family)][config[r.source]].append(r.source)
        for (model, fw, fam, _task), src in self.aggregate_sources.items():
            members = groups.setdefault((model, fw, fam), {}).setdefault(config[src], [])
            if src not in members:
                members.append(src)
        renames: dict[tuple[str, str, str, str], str] = {}  # (model, framework, family, source) -> new name
        for (model, fw, fam), by_config in groups.items():
            if len(by_config) < 2:
                continue
            settings = {c: (json.loads(c) if c is not None else None) for c in by_config}
            keys = sorted({k for s in settings.values() if s for k in s})
            differ = [k for k in keys if len({json.dumps((s or {}).get(k, "default"), sort_keys=True, default=str)
                                               for s in settings.values() if s is not None}) > 1]
            for c, sources in by_config.items():
                s = settings[c]
                label = ("settings unknown" if s is None else
                         ", ".join(f"{k}={s.get(k, 'default')}" for k in differ) or "same settings")
                for src in sources:
                    renames[(model, fw, fam, src)] = f"{model} ({label})"
            self.add_note(f"{model} [{fw}] {fam}: {len(by_config)} configurations, shown as separate rows "
                          f"(they differ in {', '.join(differ) or 'whether their settings are known'})")
        if not renames:
            return 0
        for r in self.records:
            r.model = renames.get((r.model, r.framework, r.eval_family, r.source), r.model)
        for old, src in list(self.aggregate_sources.items()):
            new_name = renames.get((old[0], old[1], old[2], src))
            if new_name is not None:
                new = (new_name, *old[1:])
                self.aggregates[new] = self.aggregates.pop(old)
                self.aggregate_sources[new] = self.aggregate_sources.pop(old)
        return len({(m, f, fam) for (m, f, fam, _) in renames})

    def replicate_label(self, source: str) -> str | None:
        """The seeds that make run ``source`` one replicate of its configuration (the task's ``seed`` argument and
        the generation seed), as a short label; None where the run records neither."""
        info = self.runs.get(source)
        if info is None:
            return None
        parts = [(name, v) for name, v in (("seed", (info.task_args or {}).get("seed")),
                                           ("generation seed", (info.generation or {}).get("seed")))
                 if v is not None]
        return ", ".join(f"{k} {v}" for k, v in parts) or None

    def separate_replicates(self) -> int:
        """Runs of one model and configuration that differ in their seeds are replicates: each gets its own row,
        side by side, named ``"<model> (seed S)"``, with one note (picking the newer file would let
        ``touch`` flip the row). Pooling them would need the error pooling implies; side by side, each row's
        interval is its own run's. Returns the number of models split."""
        runs: dict[tuple[str, str, str, str], dict[str, str | None]] = {}
        for r in self.records:
            runs.setdefault((r.model, r.framework, r.eval_family, r.task), {}).setdefault(
                r.source, self.replicate_label(r.source))
        renames: dict[tuple[str, str, str, str, str], str] = {}
        for (model, fw, fam, task), sources in runs.items():
            labels = {lab for lab in sources.values() if lab is not None}
            if len(labels) < 2:
                continue
            for src, lab in sources.items():
                renames[(model, fw, fam, task, src)] = f"{model} ({lab or 'seed unknown'})"
            self.add_note(f"{model} [{fw}] {fam}: {len(sources)} runs of one configuration with different seeds "
                          f"({'; '.join(sorted(labels))}), shown side by side as replicates")
        for r in self.records:
            r.model = renames.get((r.model, r.framework, r.eval_family, r.task, r.source), r.model)
        return len({k[:4] for k in renames})

    def drop_repeated_runs(self) -> int:
        """Keep one run per (model, framework, family, task, problem, epoch): when two input files score the same
        sample of the same model in the same configuration (a run repeated or resumed, or one log given twice under
        two names), the file modified last wins. Call after :meth:`separate_configurations`, so that runs with other
        settings are never compared here. A run whose every sample was replaced is one skip; a run that keeps some
        samples is one note saying how many of its samples came from which newer run (the row then pools both
        runs, and its provenance lists both). Pooling both copies would count every problem twice and narrow every
        interval. "Newer" is the run's own recorded date (its log's creation time; then its path), never the
        file's modification time, which ``touch`` or a copy changes. Runs with different seeds are
        replicates, split into rows of their own first (:meth:`separate_replicates`). Returns the number of records
        dropped."""
        def sample_key(r: SampleRecord) -> tuple:
            return (r.model, r.framework, r.eval_family, r.task, r.problem_id, r.epoch)

        self.separate_replicates()
        age = {src: (str((self.runs.get(src) or RunInfo(src)).date or ""), src)
               for src in {r.source for r in self.records}}
        newest: dict[tuple, str] = {}
        for r in self.records:
            cur = newest.get(sample_key(r))
            if cur is None or age[r.source] > age[cur]:
                newest[sample_key(r)] = r.source
        kept: list[SampleRecord] = []
        replaced: dict[str, dict[str, int]] = {}  # old source -> {newer source: samples taken from it}
        total: dict[str, int] = {}
        for r in self.records:
            total[r.source] = total.get(r.source, 0) + 1
            winner = newest[sample_key(r)]
            if r.source == winner:
                kept.append(r)
            else:
                by = replaced.setdefault(r.source, {})
                by[winner] = by.get(winner, 0) + 1
        for old, by in replaced.items():
            newer = ", ".join(f"{n} in {src}" for src, n in by.items())
            if sum(by.values()) == total[old]:
                self.add_skip(old, f"every sample of this run is also in a newer run of the same model and settings "
                                   f"({newer}); the newer one is used")
            else:
                self.add_note(f"{old}: {sum(by.values())} of its {total[old]} samples are also in a newer run of the "
                              f"same model and settings ({newer}) and are taken from there; its other "
                              f"{total[old] - sum(by.values())} samples are used, in the same row")
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
