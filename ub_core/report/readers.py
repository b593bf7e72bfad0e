"""Input readers: Inspect logs (``.eval`` / ``.json``) and lm-eval output (``results_*.json`` + ``samples_*.jsonl``),
any mix, any number of models, normalised into one :class:`SampleTable`.

A file that cannot be read becomes one counted :class:`Skip` with a one-line reason (logged), never an exception.
``.eval`` logs are read one sample at a time, after a decompressed-size cap per zip member
(:mod:`ub_core.report.eval_zip`); an Inspect ``.json`` log (parsed whole by Inspect) over a size cap is one named
skip. A metric value that cannot be a number of its metric (:func:`~ub_core.report.eval_families.value_problem`) is
one named skip and left out; the rest of its sample is kept.
inspect_ai is imported only when an Inspect log is read.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..untrusted import (NotRegularFileError, UnpackBudget, UntrustedFileError, iter_lines, loads,
                                       open_regular, read_text)
from .eval_zip import oversized_member
from .eval_families import STABILITY_KEYS, extract_all, value_problem
from .records import RunInfo, SampleRecord, SampleTable, configuration_settings, finite_or_none

__all__ = ["load_inputs", "read_inspect_log", "read_lmeval_dir_files", "classify"]

log = logging.getLogger("ub_core.report")

#: keys lm-eval writes on every sample line; everything else on the line came from our process_results
LMEVAL_LINE_KEYS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                              "doc_hash", "prompt_hash", "target_hash"})
#: the doc key where ub_lmeval logs a document's lists (``values``, ``q``, ``option_mass``, ``predicted``)
LMEVAL_SAMPLE_KEY = "ub_sample"
_LM_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d.\-:]+)\.jsonl$")
_LM_RESULTS = re.compile(r"^results_(?P<stamp>\d{4}-\d{2}-\d{2}T[\d.\-:]+)\.json$")


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


#: the files ``inspect eval-set`` writes beside its logs (its own bookkeeping, not logs)
INSPECT_EVAL_SET_FILES = frozenset({"eval-set.json", "logs.json"})


def classify(path: Path) -> str | None:
    """``inspect``, ``lm-results``, ``lm-samples``, ``inspect-eval-set`` (``inspect eval-set``'s own bookkeeping
    files, :data:`INSPECT_EVAL_SET_FILES`: recognised, not read) or None (not an input we read)."""
    name = path.name
    if name in INSPECT_EVAL_SET_FILES:
        return "inspect-eval-set"
    if path.suffix == ".eval":
        return "inspect"
    if _LM_RESULTS.match(name) or (name.startswith("results") and path.suffix == ".json"):
        return "lm-results"
    if _LM_SAMPLES.match(name) or (name.startswith("samples_") and path.suffix == ".jsonl"):
        return "lm-samples"
    if path.suffix == ".json":
        try:  # through the gate: a FIFO named *.json must not block the walk, a device must not be opened
            with os.fdopen(open_regular(path, follow_links=True), "rb") as fh:
                head = fh.read(4096).decode("utf-8", "replace")
        except (OSError, NotRegularFileError):
            return None
        if '"eval"' in head and '"version"' in head:
            return "inspect"
    return None


# ------------------------------------------------------------------------------------------------ Inspect

#: An Inspect ``.json`` log can only be parsed whole, at roughly 70 bytes of memory per byte of file (a 143 MB log
#: grew to 10 GB), so larger ones are one named skip. ``UB_REPORT_JSON_MAX_MB`` overrides the cap (in MB).
JSON_LOG_MAX_MB = 64.0
#: Inspect parses each ``.eval`` member it reads whole at about twice its decompressed size (a 1.5 MB log whose
#: header expanded to 1.5 GB took 3.3 GB), and walks the fields the report leaves out (``messages``, ``events``)
#: at about 0.4 s per MB (a 63 MB string there: 26 s; 200 MB: past 120 s): a member over this cap makes the log
#: one named skip, checked before Inspect reads anything. ``UB_REPORT_EVAL_MEMBER_MAX_MB`` overrides it (in MB).
EVAL_MEMBER_MAX_MB = 64.0
#: What one ``ub report`` run may unpack from ``.eval`` logs in all (each member is streamed once through its
#: decompressor to check its size before Inspect reads it): past it the remaining logs are named skips.
#: ``UB_REPORT_UNPACKED_MAX_MB`` overrides it (in MB).
UNPACKED_MAX_MB = 4096.0
#: lm-eval ``results_*.json`` files are parsed whole (they hold a run's figures and configuration: kilobytes to a
#: few MB); ``UB_REPORT_RESULTS_MAX_MB`` overrides it (in MB).
RESULTS_MAX_MB = 64.0
#: lm-eval ``samples_*.jsonl`` files are read a line at a time: a line over ``UB_REPORT_LINE_MAX_MB`` (16) is one
#: named skip, a file over ``UB_REPORT_SAMPLES_MAX_MB`` (512) one named skip before a byte is read (reading the
#: lines of a gigabyte takes about 9 s here; a hundred-thousand-sample run writes tens of MB).
SAMPLES_MAX_MB = 512.0
LINE_MAX_MB = 16.0
#: sample fields the report never reads: left out when an ``.eval`` log's samples are read one at a time
_UNUSED_SAMPLE_FIELDS = frozenset({"messages", "events", "attachments", "store"})
#: samples held in memory at once while an ``.eval`` log is read
_EVAL_BATCH = 32


def _cap_bytes(variable: str, default_mb: float) -> int:
    """``$variable`` (MB) or ``default_mb``, in bytes; a value that is not a positive number is warned about."""
    raw = os.environ.get(variable, "").strip()
    try:
        mb = float(raw) if raw else default_mb
        if not mb > 0 or mb == float("inf"):
            raise ValueError
    except ValueError:
        log.warning("%s=%r is not a positive number; using %g", variable, raw, default_mb)
        mb = default_mb
    return int(mb * 1024 * 1024)


def json_log_max_bytes() -> int:
    """The size cap for Inspect ``.json`` logs: ``$UB_REPORT_JSON_MAX_MB`` (MB) or :data:`JSON_LOG_MAX_MB`."""
    return _cap_bytes("UB_REPORT_JSON_MAX_MB", JSON_LOG_MAX_MB)


def eval_member_max_bytes() -> int:
    """The decompressed-size cap per ``.eval`` member: ``$UB_REPORT_EVAL_MEMBER_MAX_MB`` (MB) or
    :data:`EVAL_MEMBER_MAX_MB`."""
    return _cap_bytes("UB_REPORT_EVAL_MEMBER_MAX_MB", EVAL_MEMBER_MAX_MB)


def unpacked_max_bytes() -> int:
    """The budget of unpacked bytes per run: ``$UB_REPORT_UNPACKED_MAX_MB`` (MB) or :data:`UNPACKED_MAX_MB`."""
    return _cap_bytes("UB_REPORT_UNPACKED_MAX_MB", UNPACKED_MAX_MB)


def _open_inspect_log(path: Path):
    """``(header, samples)``: for ``.eval`` the header alone and a generator reading the samples a few at a time,
    without the fields the report never reads (memory bounded by one batch); for ``.json`` (which Inspect cannot
    stream) the whole log, under the size cap."""
    from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries, read_eval_log_samples

    if path.suffix == ".eval":
        header = read_eval_log(str(path), header_only=True)
        keys = list(dict.fromkeys((s.id, s.epoch) for s in read_eval_log_sample_summaries(str(path))))
        if keys:
            return header, _eval_samples_in_batches(path, keys)
        if header.eval.dataset.sample_ids is not None:
            return header, read_eval_log_samples(str(path), all_samples_required=False,
                                                 exclude_fields=set(_UNUSED_SAMPLE_FIELDS))
        # very old logs list no sample ids: read them whole, without the fields we never use
        whole = read_eval_log(str(path), exclude_fields=set(_UNUSED_SAMPLE_FIELDS))
        return whole, iter(whole.samples or [])
    whole = read_eval_log(str(path))
    return whole, iter(whole.samples or [])


def _eval_samples_in_batches(path: Path, keys: list[tuple[Any, int]]):
    """The samples of an ``.eval`` log, :data:`_EVAL_BATCH` at a time through one zip reader per batch (reading
    them one by one re-reads the zip directory for every sample: 2.5 times slower on 2,000 samples)."""
    from inspect_ai.log import read_eval_log_samples_by_id

    for i in range(0, len(keys), _EVAL_BATCH):
        yield from read_eval_log_samples_by_id(str(path), keys[i:i + _EVAL_BATCH], concurrency=1,
                                               exclude_fields=set(_UNUSED_SAMPLE_FIELDS))


def read_inspect_log(path: Path, table: SampleTable, budget: UnpackBudget | None = None) -> int:
    """Append one record per (sample, epoch, scorer, family); returns the number of records added.

    ``.eval`` logs are read sample by sample, once no member is over :func:`eval_member_max_bytes` decompressed;
    a ``.json`` log over :func:`json_log_max_bytes` is one named skip."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        table.add_skip(path, "reading Inspect logs needs inspect-ai (pip install 'unpredictabench[inspect]')")
        return 0
    try:  # the gate's type check: Inspect would open a FIFO (and block) or a device (and read it without end)
        fd = open_regular(path, follow_links=True)
        size = os.fstat(fd).st_size
        os.close(fd)
    except NotRegularFileError as e:
        table.add_skip(path, str(e))
        return 0
    except OSError as e:
        table.add_skip(path, f"cannot open ({e.strerror})")
        return 0
    if path.suffix == ".eval":
        cap = eval_member_max_bytes()
        why = oversized_member(path, cap, budget)
        if why is not None:
            table.add_skip(path, f"{why}; raise UB_REPORT_EVAL_MEMBER_MAX_MB to read it" if "cap per" in why else
                           f"{why}; raise UB_REPORT_UNPACKED_MAX_MB to read it" if "budget" in why else why)
            return 0
    else:
        cap = json_log_max_bytes()
        if size > cap:
            table.add_skip(path, f"too large ({size / 2**20:.0f} MB > {cap / 2**20:.0f} MB cap for Inspect .json "
                                 "logs, which are parsed whole); use the .eval format (`inspect log convert LOG "
                                 "--to eval --output-dir DIR`) or raise UB_REPORT_JSON_MAX_MB")
            return 0
    try:
        elog, samples = _open_inspect_log(path)
        model = str(elog.eval.model)
        task = str(elog.eval.task)
    except Exception as e:  # inspect raises several types for damaged logs
        table.add_skip(path, f"not a readable Inspect log ({_one_line(e)})")
        return 0
    before = len(table.records)
    seen: list[tuple] = []  # (id, epoch, category, scorer values, unreadable flags) for stability
    try:
        for sample in samples:
            seen.append(_read_inspect_sample(sample, path, model, task, table))
    except Exception as e:  # noqa: BLE001 - a damaged sample member ends the file, not the report
        table.add_skip(path, f"Inspect log damaged after {len(seen)} samples ({_one_line(e)})")
    if not seen:
        if not any(s.path == str(path) for s in table.skips):
            table.add_skip(path, f"Inspect log without samples (status {elog.status})")
        return 0
    _inspect_stability(elog, seen, model, task, str(path), table)
    try:
        table.runs[str(path)] = _inspect_run(elog, path)
    except Exception as e:  # noqa: BLE001 - a damaged header field: the run is read, its provenance unknown
        table.runs[str(path)] = RunInfo(str(path))
        table.add_skip(path, f"provenance unreadable ({_one_line(e)}); the run is shown as not known complete")
    return len(table.records) - before


def _read_inspect_sample(sample, path: Path, model: str, task: str,
                         table: SampleTable) -> tuple[str, int, str, dict[str, Any], dict[str, bool]]:
    doc = dict(sample.metadata or {})
    doc.setdefault("id", str(sample.id))
    for scorer_name, score in (sample.scores or {}).items():
        values = dict(score.value) if isinstance(score.value, Mapping) else {scorer_name: score.value}
        meta = dict(score.metadata) if isinstance(score.metadata, Mapping) else {}
        refused: list[str] = []
        clipped: list[str] = []
        try:
            found = extract_all(values, meta, doc, refused, clipped)
        except Exception as e:  # noqa: BLE001 - a hostile sample is one counted skip
            table.add_skip(f"{path}#{sample.id}", f"unreadable sample ({_one_line(e)})")
            continue
        table.add_clipped(path, clipped)
        for why in refused:
            table.add_skip(f"{path}#{sample.id}", f"{why}; value skipped")
        for family, (category, metrics, payload) in found:
            table.records.append(SampleRecord(model, "inspect", family, task, category, str(sample.id),
                                              int(sample.epoch or 1), metrics, payload, str(path)))
    plain = {name: sc.value for name, sc in (sample.scores or {}).items()
             if isinstance(sc.value, (str, int, float))}
    unreadable = {name: sc.metadata["parsed_answer"] is None for name, sc in (sample.scores or {}).items()
                  if isinstance(sc.metadata, Mapping) and "parsed_answer" in sc.metadata}
    return (str(sample.id), int(sample.epoch or 1), str((sample.metadata or {}).get("category", "unknown")), plain,
            unreadable)


def _epoch_correctness(seen: list[tuple], scorer: str) -> dict[str, list[float]]:
    """Per sample id, the per-epoch correctness (1/0) of ``scorer`` where its value is a number or C/I; only for
    samples scored in every epoch (a partial run would bias best/worst accuracy)."""
    by_id: dict[str, dict[int, float]] = {}
    for sid, epoch, _, values, _ in seen:
        if scorer not in values:
            continue
        v = values[scorer]
        flag = {"C": 1.0, "I": 0.0}.get(v) if isinstance(v, str) else finite_or_none(v)
        if flag is not None and flag in (0.0, 1.0):
            by_id.setdefault(sid, {})[epoch] = flag
    epochs = max((len(d) for d in by_id.values()), default=0)
    return {sid: [d[e] for e in sorted(d)] for sid, d in by_id.items() if len(d) == epochs and epochs > 1}


def _epoch_unreadable(seen: list[tuple], scorer: str) -> dict[str, float]:
    """Per sample: the share of its epochs whose reply was unreadable (``parsed_answer`` None in the stability
    scorer's metadata); samples whose scores carry no ``parsed_answer`` are left out."""
    counts: dict[str, list[int]] = {}
    for sid, _, _, _, unreadable in seen:
        if scorer in unreadable:
            c = counts.setdefault(sid, [0, 0])
            c[0] += unreadable[scorer]
            c[1] += 1
    return {sid: k / n for sid, (k, n) in counts.items()}


def _inspect_stability(elog, seen: list[tuple], model: str, task: str, source: str,
                       table: SampleTable) -> None:
    """Stability from the epoch reducers (``ub_inspect/tar``, ``tar_raw``: per-sample ``tar_a``/``tar_r`` in the reduced
    Score's metadata) and any run-level metric named like a stability key."""
    per_sample: dict[str, dict[str, Any]] = {}
    categories = {sid: category for sid, _, category, _, _ in seen}
    for red in elog.reductions or []:
        if not str(red.reducer or "").endswith(("tar_a", "tar_r", "tar", "tar_raw")):
            continue
        runs = _epoch_correctness(seen, red.scorer)
        unreadable = _epoch_unreadable(seen, red.scorer)
        for s in red.samples:
            if str(s.sample_id) in runs and str(s.sample_id) not in per_sample:
                r = runs[str(s.sample_id)]
                per_sample[str(s.sample_id)] = {"run_accuracies": r, "best_acc": float(max(r)),
                                                "worst_acc": float(min(r))}
                unread = unreadable.get(str(s.sample_id))
                if unread is not None:
                    per_sample[str(s.sample_id)]["parse_failure_rate"] = unread
            meta = s.metadata if isinstance(s.metadata, Mapping) else {}
            row = per_sample.setdefault(str(s.sample_id), {})
            for k in ("tar_a", "tar_r"):
                if k in meta and k not in row:
                    row[k] = meta[k]
    if per_sample and not any(r.eval_family == "stability" and r.source == source for r in table.records):
        for sid, metrics in per_sample.items():
            table.records.append(SampleRecord(model, "inspect", "stability", task, categories.get(sid, "unknown"), sid,
                                              1, metrics, {}, source))
    agg: dict[str, Any] = {}
    for sc in (elog.results.scores if elog.results else []):
        for name, m in sc.metrics.items():
            if name in STABILITY_KEYS and _aggregate_ok(name, m.value, f"{source} (metric of {sc.name})", table):
                agg[name] = m.value
    if agg:
        table.aggregates.setdefault((model, "inspect", "stability", task), {}).update(agg)


# ------------------------------------------------------------------------------------------------ provenance

_MAX_FIELDS = 40  # task arguments / generation settings kept per run (hostile input: bounded)
_MAX_TEXT = 200


def _small(value: Any) -> Any:
    """A provenance value as a dashboard can show it: numbers, booleans and short strings as they are; anything else
    (lists, nested dicts, long text) as a string cut to 200 characters."""
    if value is None or isinstance(value, (bool, int, float)):
        return value if not isinstance(value, float) or finite_or_none(value) is not None else None
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT - 1] + "…"


def _small_dict(d: Any, drop: Iterable[str] = ()) -> dict[str, Any]:
    if not isinstance(d, Mapping):
        return {}
    skip = set(drop)
    items = [(str(k)[:_MAX_TEXT], _small(v)) for k, v in d.items() if str(k) not in skip and v is not None]
    return dict(sorted(items)[:_MAX_FIELDS])


def _iso(value: Any) -> str | None:
    """An ISO-8601 UTC date from a Unix time (lm-eval ``date``) or a date string (Inspect ``created``)."""
    t = finite_or_none(value) if not isinstance(value, str) else None
    if t is not None:
        try:
            return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):
            return None
    return _small(value) if isinstance(value, str) else None


#: task arguments of ub_inspect tasks that run a subset of the bank (a run with one is not complete)
_SUBSET_ARGS = ("ids", "limit", "limit_per_category", "categories")


def _version(v: Any) -> str | None:
    """A version as text: lm-eval's YAML number 2.0 reads as "2", like Inspect's task version."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return None if v is None else _small(str(v))


def _inspect_run(elog: Any, path: Path) -> RunInfo:
    """Provenance of an Inspect log from its header; a field the header lacks stays None."""
    ev = elog.eval
    args = dict(getattr(ev, "task_args", None) or {})
    cfg = getattr(ev, "config", None)
    limit = getattr(cfg, "limit", None)
    # a subset of the task's items: Inspect's --limit / --sample-id, or our tasks' own selection arguments
    selected = getattr(cfg, "sample_id", None) is not None or any(args.get(k) for k in _SUBSET_ARGS)
    gen = getattr(ev, "model_generate_config", None)
    gen = gen.model_dump(exclude_none=True) if hasattr(gen, "model_dump") else gen
    results = getattr(elog, "results", None)
    done = getattr(results, "completed_samples", None)
    total = getattr(results, "total_samples", None)
    status = str(getattr(elog, "status", ""))
    complete = status == "success" and limit is None and not selected and (done is None or done == total)
    version = getattr(ev, "task_version", None)
    settings = configuration_settings(_small_dict(args), _small_dict(gen), _small_dict(getattr(ev, "model_args", None)))
    return RunInfo(str(path), run_id=_small(getattr(ev, "run_id", None)), date=_iso(getattr(ev, "created", None)),
                   task=_small(getattr(ev, "task", None)), task_version=_version(version),
                   bank_version=_version(version),
                   task_args=_small_dict(args), limit=_small(limit), dataset=_small(args.get("dataset") or "builtin"),
                   generation=_small_dict(gen), complete=complete, samples=finite_or_none(done) and int(done),
                   samples_total=finite_or_none(total) and int(total), settings=settings)


def _lm_model_args(value: Any) -> dict[str, Any]:
    """lm-eval's ``config.model_args``: a mapping, or the CLI's ``"k=v,k=v"`` text."""
    if isinstance(value, str):
        pairs = (item.partition("=") for item in value.split(",") if item.strip())
        value = {k.strip(): v.strip() for k, sep, v in pairs if sep}
    return _small_dict(value)


def _lm_members(results: Mapping[str, Any], task: str) -> list[str]:
    """The tasks whose configuration a row of ``task`` stands for: the task itself, or a group's subtasks (nested
    groups expanded) from the results file's ``group_subtasks``."""
    groups = results.get("group_subtasks") if isinstance(results.get("group_subtasks"), Mapping) else {}
    out: list[str] = []
    todo = [task]
    while todo and len(out) < 10_000:
        t = todo.pop(0)
        subs = groups.get(t)
        if isinstance(subs, list) and subs:
            todo.extend(str(x) for x in subs if str(x) not in out and str(x) != t)
        elif t not in out:
            out.append(t)
    return out


def _lm_run(results: Mapping[str, Any], task: str | None, source: str) -> RunInfo:
    """Provenance of one task of an lm-eval results file: its own ``configs.<task>`` (a group's: its subtasks'),
    never another task's of the same file (``task`` None: every task of the file)."""
    cfg = results.get("config") if isinstance(results.get("config"), Mapping) else {}
    configs = results.get("configs") if isinstance(results.get("configs"), Mapping) else {}
    counts = results.get("n-samples") if isinstance(results.get("n-samples"), Mapping) else {}
    versions = results.get("versions") if isinstance(results.get("versions"), Mapping) else {}
    tasks = _lm_members(results, task) if task is not None else [str(t) for t in counts]
    limit = cfg.get("limit")
    complete: bool | None = limit is None
    done = total = 0
    meta: dict[str, Any] = {}
    gen: dict[str, Any] = {}
    for t in tasks:
        tcfg = configs.get(t) if isinstance(configs.get(t), Mapping) else {}
        meta = meta or _small_dict(tcfg.get("metadata"), drop=("config_source",))  # a path of the run's machine
        gen = gen or _small_dict(tcfg.get("generation_kwargs"))
        n = counts.get(t) if isinstance(counts.get(t), Mapping) else {}
        eff, orig = finite_or_none(n.get("effective")), finite_or_none(n.get("original"))
        if eff is None or orig is None:
            complete = False if limit is not None else None
            continue
        done, total = done + int(eff), total + int(orig)
        if eff < orig:
            complete = False
    if any(meta.get(k) for k in _SUBSET_ARGS):
        complete = False  # a hand-picked subset of the bank
    if cfg.get("gen_kwargs"):
        gen["gen_kwargs"] = _small(cfg.get("gen_kwargs"))
    version = _version(versions.get(task)) if task is not None else None
    # our YAMLs' metadata.version is the bank's version (ub_core.problems.Bank.version), as Inspect's task version
    settings = configuration_settings(meta, gen, _lm_model_args(cfg.get("model_args")))
    return RunInfo(source, run_id=None, date=_iso(results.get("date")), task=_small(task), task_version=version,
                   bank_version=_version(meta.get("version")), task_args=meta, limit=_small(limit),
                   dataset=_small(meta.get("dataset") or "builtin"), generation=gen, complete=complete,
                   samples=done or None, samples_total=total or None, settings=settings)


# ------------------------------------------------------------------------------------------------ lm-eval

def _lm_model(results: Mapping[str, Any], fallback: str) -> str:
    cfg = results.get("config")
    cfg = cfg if isinstance(cfg, Mapping) else {}
    name = str(cfg.get("model") or fallback)
    args = cfg.get("model_args")
    pretrained = None
    if isinstance(args, Mapping):
        pretrained = args.get("pretrained") or args.get("model")
    elif isinstance(args, str):
        for part in args.split(","):
            k, _, v = part.partition("=")
            if k.strip() in ("pretrained", "model") and v.strip():
                pretrained = v.strip()
    return f"{name}/{pretrained}" if pretrained and pretrained != name else name


def _read_lm_samples(path: Path, model: str, task: str, table: SampleTable) -> int:
    before = len(table.records)
    bad = 0
    first_filter = None
    lines = iter_lines(path, _cap_bytes("UB_REPORT_SAMPLES_MAX_MB", SAMPLES_MAX_MB),
                       _cap_bytes("UB_REPORT_LINE_MAX_MB", LINE_MAX_MB))
    try:
        for lineno, raw in lines:
            if raw is None:
                bad += 1
                table.add_skip(f"{path}:{lineno}", "line over the byte limit per line (UB_REPORT_LINE_MAX_MB); "
                                                   "skipped")
                continue
            line = raw.decode("utf-8", "replace")
            if not line.strip():
                continue
            try:
                row = loads(line)
                if not isinstance(row, dict):
                    raise ValueError("not a JSON object")
            except ValueError as e:  # UntrustedJSONError too: not JSON, nested too deeply, an over-long integer
                bad += 1
                table.add_skip(f"{path}:{lineno}", f"bad JSON line ({e})")
                continue
            flt = row.get("filter")
            if first_filter is None:
                first_filter = flt
            elif flt != first_filter:  # the same doc again under another filter: one record per doc
                continue
            doc = row.get("doc") if isinstance(row.get("doc"), Mapping) else {}
            metric_names = row.get("metrics") if isinstance(row.get("metrics"), list) else \
                [k for k in row if k not in LMEVAL_LINE_KEYS]
            metric_names = [k for k in metric_names if isinstance(k, str)]
            values = {k: row[k] for k in metric_names if k in row}
            meta = {k: v for k, v in row.items() if k not in LMEVAL_LINE_KEYS}
            extra = doc.get(LMEVAL_SAMPLE_KEY)  # per-document lists kept out of the results (ub_lmeval.results_json)
            if isinstance(extra, Mapping):
                meta.update({str(k): v for k, v in extra.items()})
            pid = str(doc.get("id", row.get("doc_id", lineno)))
            refused: list[str] = []
            clipped: list[str] = []
            try:
                found = extract_all(values, meta, doc, refused, clipped)
            except Exception as e:  # noqa: BLE001 - a hostile line is one counted skip
                bad += 1
                table.add_skip(f"{path}:{lineno}", f"unreadable sample ({_one_line(e)})")
                continue
            table.add_clipped(path, clipped)
            for why in refused:
                table.add_skip(f"{path}:{lineno}", f"{why}; value skipped")
            if not found:
                bad += 1
                table.add_skip(f"{path}:{lineno}", "no metric keys of a known family")
                continue
            for family, (category, metrics, payload) in found:
                table.records.append(SampleRecord(model, "lm-eval", family, task, category, pid, 1, metrics,
                                                  payload, str(path)))
    except UntrustedFileError as e:  # not a regular file, over the file's byte limit: named, the rest stays
        table.add_skip(path, f"{e.reason}; raise UB_REPORT_SAMPLES_MAX_MB to read it" if "byte limit" in e.reason
                       else e.reason)
        return len(table.records) - before
    if len(table.records) == before and not bad:
        table.add_skip(path, "empty samples file")
    return len(table.records) - before


def _aggregate_ok(metric: str, value: Any, where: str, table: SampleTable) -> bool:
    """A run-level stability value that can be shown; one named skip for a refused one
    (:func:`~ub_core.report.eval_families.value_problem`)."""
    why = value_problem("stability", metric, value)
    if why is not None:
        table.add_skip(where, f"stability {why}; value skipped")
        return False
    return finite_or_none(value) is not None


def _lm_results_aggregates(results: Mapping[str, Any], model: str, table: SampleTable, path: Path,
                           samples: Mapping[str, Path] | None = None) -> bool:
    """Run-level stability values from a results file (``"tar_r,none": 0.9``); True when any was found. Each task's
    values carry that task's own provenance (its ``configs.<task>``), under the task's samples file when the run
    logged one (the same run as its sample rows), else under ``<results file>#<task>``."""
    found = False
    rows = results.get("results")
    for task, row in (rows.items() if isinstance(rows, Mapping) else ()):
        if not isinstance(row, Mapping):
            continue
        agg = {}
        for key, v in row.items():
            metric = str(key).split(",")[0]
            if metric in STABILITY_KEYS and _aggregate_ok(metric, v, f"{path} (results.{str(task)[:80]})", table):
                agg[metric] = v
        if agg:
            key = (model, "lm-eval", "stability", str(task))
            table.aggregates.setdefault(key, {}).update(agg)
            source = str((samples or {}).get(str(task)) or f"{path}#{str(task)[:200]}")
            table.aggregate_sources[key] = source
            table.runs.setdefault(source, _lm_run(results, str(task), source))
            found = True
    return found


def read_lmeval_dir_files(results_files: list[Path], samples_files: list[Path], table: SampleTable) -> None:
    """Pair each ``samples_<task>_<stamp>.jsonl`` with ``results_<stamp>.json`` in the same folder (for the model
    name); samples without a results file take the folder's name as the model."""
    models: dict[tuple[Path, str], str] = {}
    stamped: dict[tuple[Path, str], Mapping[str, Any]] = {}
    used_results: set[Path] = set()
    for rpath in results_files:
        try:
            results = loads(read_text(rpath, _cap_bytes("UB_REPORT_RESULTS_MAX_MB", RESULTS_MAX_MB)))
            if not isinstance(results, dict) or "results" not in results:
                raise ValueError("no 'results' key")
        except UntrustedFileError as e:
            table.add_skip(rpath, f"{e.reason}; raise UB_REPORT_RESULTS_MAX_MB to read it" if "byte limit" in e.reason
                           else e.reason)
            continue
        except (OSError, ValueError) as e:
            table.add_skip(rpath, f"not an lm-eval results file ({_one_line(e)})")
            continue
        table.files_read.append(str(rpath))
        m = _LM_RESULTS.match(rpath.name)
        model = _lm_model(results, rpath.parent.name)
        models[(rpath.parent, m.group("stamp") if m else "")] = model
        stamped[(rpath.parent, m.group("stamp") if m else "")] = results
        beside = {sm.group("task"): s for s in samples_files if s.parent == rpath.parent and
                  (sm := _LM_SAMPLES.match(s.name)) and sm.group("stamp") == (m.group("stamp") if m else None)}
        has_samples = bool(beside)
        if _lm_results_aggregates(results, model, table, rpath, beside):
            used_results.add(rpath)
        elif not has_samples:
            table.add_skip(rpath, "lm-eval results without samples_*.jsonl beside it (run with --log_samples)")
    for spath in samples_files:
        m = _LM_SAMPLES.match(spath.name)
        if not m:
            table.add_skip(spath, "not an lm-eval samples file name (samples_<task>_<date>.jsonl)")
            continue
        model = models.get((spath.parent, m.group("stamp")), spath.parent.name)
        if _read_lm_samples(spath, model, m.group("task"), table):
            table.files_read.append(str(spath))
            results = stamped.get((spath.parent, m.group("stamp")))
            table.runs[str(spath)] = _lm_run(results, m.group("task"), str(spath)) if results is not None \
                else RunInfo(str(spath), task=m.group("task"))


# ------------------------------------------------------------------------------------------------ entry point

def _expand(paths: Iterable[str | Path], table: SampleTable, exclude: Path | None) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    skip_root = exclude.resolve() if exclude is not None else None
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            # every entry but folders: a FIFO, device or socket with an input's name is named by the gate
            for f in sorted(q for q in p.rglob("*") if not q.is_dir()):
                if skip_root is not None and skip_root in f.resolve().parents:
                    continue  # a previous report written inside an input folder
                kind = classify(f)
                if kind == "inspect-eval-set":
                    continue  # inspect eval-set's bookkeeping beside its logs: not an input, not a skip
                if kind and f.resolve() not in seen:
                    seen.add(f.resolve())
                    found.append((f, kind))
                elif kind is None and f.suffix in (".eval", ".json", ".jsonl"):
                    table.add_skip(f, "not an Inspect log or lm-eval output")
        elif p.exists() or p.is_symlink():  # a FIFO, a device or a link too: the gate names what it is
            kind = classify(p)
            if kind == "inspect-eval-set":
                table.add_skip(p, "inspect eval-set's bookkeeping file, not a log; give the folder or its .eval logs")
            elif kind is None:
                table.add_skip(p, "not an Inspect log (.eval/.json) or lm-eval output (results_*.json, "
                                  "samples_*.jsonl)")
            elif p.resolve() not in seen:
                seen.add(p.resolve())
                found.append((p, kind))
        else:
            table.add_skip(p, "no such file or directory")
    return found


def load_inputs(paths: Iterable[str | Path], exclude: str | Path | None = None,
                model_aliases: Mapping[str, str] | None = None) -> SampleTable:
    """Read every input under ``paths`` into one :class:`SampleTable` (skips counted in ``table.skips``).

    An lm-eval samples file given alone still finds its ``results_*.json`` sibling for the model name. Files under
    ``exclude`` (the report's own output folder) are not read. Model names go through
    :func:`~ub_core.report.records.model_alias` (``model_aliases``, then the default folding of the offline models).
    """
    table = SampleTable()
    found = _expand(paths, table, Path(exclude) if exclude is not None else None)
    results = [p for p, k in found if k == "lm-results"]
    samples = [p for p, k in found if k == "lm-samples"]
    for r in list(results):  # a results file given on its own: pick up its samples siblings
        m = _LM_RESULTS.match(r.name)
        if m:
            for s in sorted(r.parent.glob(f"samples_*_{m.group('stamp')}.jsonl")):
                if s.resolve() not in {x.resolve() for x in samples}:
                    samples.append(s)
    for s in samples:  # a samples file given on its own: pick up its results sibling for the model name
        m = _LM_SAMPLES.match(s.name)
        sib = s.parent / f"results_{m.group('stamp')}.json" if m else None
        if sib is not None and (sib.exists() or sib.is_symlink()) and sib not in results and \
                sib.resolve() not in {r.resolve() for r in results}:
            results.append(sib)
    budget = UnpackBudget(unpacked_max_bytes())
    for p, kind in found:
        if kind == "inspect":
            if read_inspect_log(p, table, budget):
                table.files_read.append(str(p))
            elif not any(s.path == str(p) for s in table.skips):
                table.add_skip(p, "Inspect log with no scores of a known family")
    read_lmeval_dir_files(results, samples, table)
    table.note_clipped()
    table.rename_models(dict(model_aliases or {}))  # before dropping repeats: one model under two names is one
    table.separate_configurations()  # before dropping repeats: runs with other settings are other rows
    table.drop_repeated_runs()
    log.info("report inputs: %d records from %d files, %d skipped", len(table.records), len(table.files_read),
             len(table.skips))
    return table
