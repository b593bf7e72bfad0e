"""``ub reproduce stability --release DIR``: the non-determinism paper's stability tables from its public release.

``DIR`` is a checkout of ``breckbaldwin/llm-stability`` that the user cloned. Its experiments live in
``experiments/<name>/``: raw runs in ``.tgz`` archives (one CSV per run: columns ``model``, ``model_config``,
``task``, ``task_config``, ``rubric_id``, ``run``, ``question``, ``gt``, ``response``, ``date``) and the release's
own summaries in ``stability_eval*.csv`` (written by its ``evaluate.py``: ``TACr``, ``TACa``,
``correct_count_per_run``, ``best_possible_count``, ``worst_possible_count``, ``spread``, ...).

A **run set** is what the release's ``evaluate.py`` scores as one row: the replies of one (model, model_config
without ``rubric_counter``, task, task_config) in one experiment; N = the largest ``run`` + 1. It is *complete*
when every question (``rubric_id``) has exactly the runs 0..N-1 (the release refuses anything else). For each
complete run set the command prints, cell by cell, the release's stored figures (where a summary row matches),
ours under ``convention="release"`` and ours under ``convention="paper"`` (:mod:`ub_core.metrics.stability`):
TARr, TARa, best / worst / median accuracy and spread, with the replies each reader could not read. Counts are
compared exactly; rates print in percent with one decimal, as the release prints them.

How the CSVs are read, as the release's pandas reads them: an empty cell and pandas' NA words (``NA``, ``None``,
``null``, ``nan``, ...; :data:`PANDAS_NA`) are a missing reply. Options for our reader (``paper``) come from the
question text (the last ``(A) ... (B) ...`` run of options, or ``Options: - Yes - No``); the gold is ``gt``.

Archives and CSVs are untrusted input: only regular ``.csv`` members are read, none over
:data:`MAX_MEMBER_BYTES`, at most :data:`MAX_MEMBERS` per archive, CSV fields up to :data:`MAX_FIELD_CHARS`;
nothing is extracted to disk. The archives and the stored ``stability_eval*.csv`` are opened through the gate
(:mod:`ub_core.untrusted`): a FIFO, device or socket under such a name is one named error and never
opened for reading, a CSV over the cap is refused before it is read. A member or row that cannot be read is one
counted error (the first few printed
whole), never a crash; the exit status is then 1. The old-format runs of the v2 paper
(``experiments/v2/runs.tgz``, no ``model`` column) are reported as such and not scored.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import math
import os
import statistics
import sys
import tarfile
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from ..metrics.stability import stability_summary
from ..parsing.mcq import LETTERS, read_mcq
from ..parsing.release_mcq import RELEASE_WORD_TASKS, read_release, release_letters
from ..untrusted import (ErrorSummary, NotRegularFileError, UntrustedFileError, UntrustedJSONError, loads,
                                       open_regular, read_bytes, short)

__all__ = ["add_parser", "read_release_dir", "score_run_set", "stored_row", "compare", "format_report",
           "options_from_question", "RunSet", "PANDAS_NA", "MAX_MEMBER_BYTES", "MAX_MEMBERS", "MAX_FIELD_CHARS",
           "METRICS"]

#: cells pandas ``read_csv`` reads as NaN by default (pandas 2.x ``STR_NA_VALUES``)
PANDAS_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                       "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
MAX_MEMBER_BYTES = 64 * 2**20
MAX_MEMBERS = 20_000
MAX_FIELD_CHARS = 16 * 2**20
#: the longest stored ``model_config`` / list cell read with ``ast.literal_eval``
MAX_LITERAL_CHARS = 100_000
ERRORS_SHOWN = 20
#: figures compared, in print order
METRICS = ("TARr", "TARa", "best", "worst", "median", "spread")
_REQUIRED = ("model", "model_config", "task", "task_config", "rubric_id", "run", "gt", "response")
_STORED = ("model", "model_config", "task", "task_config", "TACr", "TACa", "num_questions", "N",
           "correct_count_per_run", "best_possible_count", "worst_possible_count")


# ------------------------------------------------------------------------------------------ reading the runs

@dataclass
class _Cell:
    reply: str | None  # None: a missing reply (a NaN cell for the release)
    gold: str
    question: str


@dataclass
class RunSet:
    """The replies of one (model, model_config, task, task_config) of one experiment."""

    experiment: str
    model: str
    model_config: str  # canonical JSON, ``rubric_counter`` dropped
    task: str
    task_config: str
    dates: set[str] = field(default_factory=set)
    cells: dict[tuple[int, int], _Cell] = field(default_factory=dict)
    duplicates: int = 0

    @property
    def n_runs(self) -> int:
        return max(r for _, r in self.cells) + 1 if self.cells else 0

    def questions(self) -> list[int]:
        return sorted({q for q, _ in self.cells})

    def missing_cells(self) -> int:
        """Cells (question, run) absent from the grid questions x runs 0..N-1."""
        return len(self.questions()) * self.n_runs - len(self.cells)

    @property
    def complete(self) -> bool:
        return bool(self.cells) and not self.duplicates and self.missing_cells() == 0

    @property
    def shots(self) -> str:
        try:
            return str(json.loads(self.task_config).get("shots"))
        except (ValueError, AttributeError):
            return "?"


def _canonical(config: Any) -> str:
    if isinstance(config, dict):
        config = {k: v for k, v in config.items() if k != "rubric_counter"}
    return json.dumps(config, sort_keys=True)


def _config(text: str, what: str) -> str:
    try:
        return _canonical(loads(text))
    except UntrustedJSONError as e:
        raise ValueError(f"{what} is not JSON ({e})") from None


def _int(text: str, what: str) -> int:
    t = text.strip()
    if not (t.isdigit() and len(t) <= 9):
        raise ValueError(f"{what} {short(text, 20)} is not a small non-negative integer")
    return int(t)


def _csv_rows(data: bytes, name: str, errors: ErrorSummary,
              required: tuple[str, ...] = _REQUIRED) -> Iterator[dict[str, str]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        errors.add("unreadable member", f"{name}: not UTF-8 text (byte at offset {e.start}); member skipped")
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    old_limit = csv.field_size_limit(MAX_FIELD_CHARS)
    try:
        header = next(reader, None)
        if header is None:
            errors.add("unreadable member", f"{name}: empty CSV; member skipped")
            return
        missing = [c for c in required if c not in header]
        if missing:
            kind = "old-format member" if "raw_response" in header else "unreadable member"
            errors.add(kind, f"{name}: no column(s) {', '.join(missing)}"
                             f"{' (the v2 paper format, not scored)' if kind == 'old-format member' else ''}; "
                             f"member skipped")
            return
        for line, row in enumerate(reader, start=2):
            if len(row) != len(header):
                errors.add("bad row", f"{name}: row {line:,} has {len(row)} fields, the header {len(header)}; "
                                      f"row skipped")
                continue
            yield dict(zip(header, row))
    except csv.Error as e:
        errors.add("unreadable member", f"{name}: CSV error ({short(str(e), 80)}); rest of member skipped")
    finally:
        csv.field_size_limit(old_limit)


def _archive_members(path: Path, label: str, errors: ErrorSummary) -> Iterator[tuple[str, bytes]]:
    """``(name, bytes)`` of the regular ``.csv`` members of a tar archive, bounded (module docstring); ``label``
    names the archive in messages."""
    seen = 0
    try:
        with os.fdopen(open_regular(path, follow_links=True), "rb") as fh, tarfile.open(fileobj=fh, mode="r:*") as tar:
            for member in tar:
                seen += 1
                if seen > MAX_MEMBERS:
                    errors.add("archive too large", f"{label}: over {MAX_MEMBERS:,} members; rest skipped")
                    return
                base = member.name.rsplit("/", 1)[-1]
                if not base.endswith(".csv") or base.startswith("._"):
                    continue
                where = f"{label}:{short(member.name, 120)}"
                if not member.isfile():
                    errors.add("unreadable member", f"{where}: not a regular file; member skipped")
                    continue
                if member.size > MAX_MEMBER_BYTES:
                    errors.add("member too large", f"{where}: {member.size:,} bytes, over {MAX_MEMBER_BYTES:,}; "
                                                   f"member skipped")
                    continue
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                yield where, fh.read(MAX_MEMBER_BYTES + 1)
    except NotRegularFileError as e:
        errors.add("unreadable archive", f"{label}: {e}; skipped")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
        errors.add("unreadable archive", f"{label}: unreadable after {seen:,} member(s) "
                                         f"({type(e).__name__}: {short(str(e), 80)}); rest skipped")


def _add_rows(rows: Iterable[dict[str, str]], experiment: str, name: str, sets: dict[tuple, RunSet],
              errors: ErrorSummary) -> None:
    for row in rows:
        try:
            key = (row["model"], _config(row["model_config"], "model_config"), row["task"],
                   _config(row["task_config"], "task_config"))
            q, r = _int(row["rubric_id"], "rubric_id"), _int(row["run"], "run")
        except ValueError as e:
            errors.add("bad row", f"{name}: {e}; row skipped")
            continue
        rs = sets.setdefault(key, RunSet(experiment, *key))
        if (q, r) in rs.cells:
            rs.duplicates += 1
            if rs.duplicates == 1:  # one error per run set; the count is in the list of incomplete run sets
                errors.add("repeated cell", f"{name}: question {q} run {r} given twice; run set not scored")
            continue
        reply = row["response"]
        rs.cells[(q, r)] = _Cell(None if reply in PANDAS_NA else reply, row["gt"], row.get("question") or "")
        rs.dates.add(row.get("date", ""))


def read_release_dir(release: str | Path, errors: ErrorSummary) -> dict[str, list[RunSet]]:
    """``{experiment: [run sets]}`` from every ``experiments/*/*.tgz`` (and ``.tar.gz``) of a release checkout
    (every experiment folder, an empty list when it holds no runs).
    ValueError (one line) when ``release`` has no ``experiments`` folder."""
    root = Path(release)
    exp_root = root / "experiments"
    if not exp_root.is_dir():
        raise ValueError(f"{release}: no experiments/ folder; expected a checkout of breckbaldwin/llm-stability")
    out: dict[str, list[RunSet]] = {}
    for exp in sorted(p for p in exp_root.iterdir() if p.is_dir()):
        sets: dict[tuple, RunSet] = {}
        for archive in sorted([*exp.glob("*.tgz"), *exp.glob("*.tar.gz")]):
            for name, data in _archive_members(archive, f"{exp.name}/{archive.name}", errors):
                _add_rows(_csv_rows(data, name, errors), exp.name, name, sets, errors)
        out[exp.name] = sorted(sets.values(), key=lambda s: (s.model, s.task, s.shots, s.model_config))
    return out


# ------------------------------------------------------------------------------------------ the stored summaries

def _literal(text: str, what: str) -> Any:
    if len(text) > MAX_LITERAL_CHARS:
        raise ValueError(f"{what} is over {MAX_LITERAL_CHARS:,} characters")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"{what} {short(text, 40)} is not a Python literal") from None


def stored_row(row: dict[str, str]) -> tuple[tuple, dict[str, Any]]:
    """One row of a release ``stability_eval*.csv`` -> ``(run-set key, counts)``: ``Q``, ``N``, ``TARr``,
    ``TARa``, ``best``, ``worst`` (question counts), ``median`` (median of ``correct_count_per_run``), ``spread``
    (the stored percent text), ``date``. ValueError (one line) when a field is unreadable."""
    mc = _literal(row["model_config"], "model_config")
    tc = _literal(row["task_config"], "task_config")
    per_run = _literal(row["correct_count_per_run"], "correct_count_per_run")
    if not isinstance(per_run, list) or not per_run or not all(isinstance(c, int) for c in per_run):
        raise ValueError("correct_count_per_run is not a list of counts")
    key = (row["model"], _canonical(mc), row["task"], _canonical(tc))
    counts = {"Q": _int(row["num_questions"], "num_questions"), "N": _int(row["N"], "N"),
              "TARr": _int(row["TACr"], "TACr"), "TARa": _int(row["TACa"], "TACa"),
              "best": _int(row["best_possible_count"], "best_possible_count"),
              "worst": _int(row["worst_possible_count"], "worst_possible_count"),
              "median": float(statistics.median(per_run)), "per_run": per_run,
              "spread_text": row.get("spread", ""), "date": row.get("date", "")}
    return key, counts


def read_stored(exp_dir: Path, errors: ErrorSummary) -> dict[tuple, list[dict[str, Any]]]:
    """The stored summary rows of one experiment folder, by run-set key."""
    out: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for path in sorted(exp_dir.glob("stability_eval*.csv")):
        try:  # the gate: a FIFO or a device named like a summary is refused by name, a large file before reading
            data = read_bytes(path, MAX_MEMBER_BYTES)
        except UntrustedFileError as e:
            why = e.reason
            errors.add("member too large" if "byte limit" in why else "unreadable member",
                       f"{exp_dir.name}/{path.name}: {why}; skipped")
            continue
        for n, row in enumerate(_csv_rows(data, f"{exp_dir.name}/{path.name}", errors, _STORED),
                                start=2):
            try:
                key, counts = stored_row(row)
            except (ValueError, KeyError) as e:
                errors.add("bad summary row", f"{exp_dir.name}/{path.name}: row {n}: {short(str(e), 100)}; skipped")
                continue
            counts["file"] = path.name
            out[key].append(counts)
    return out


# ------------------------------------------------------------------------------------------ scoring

def options_from_question(question: str, task: str | None = None) -> list[str] | None:
    """The option texts of the question asked (the last one of a few-shot prompt), in letter order: the last run
    ``(A) ... (B) ... (C) ...`` (MMLU writes them inline, ``(A) 10. (B) 20. ``, BBH one per line), or ``Yes`` /
    ``No`` for navigate. None when none is found."""
    if task in RELEASE_WORD_TASKS:
        return list(RELEASE_WORD_TASKS[str(task)])
    start = question.rfind("(A)")
    if start < 0:
        return None
    pos = start + 3
    texts: list[str] = []
    for letter in LETTERS[1:]:
        nxt = -1
        for sep in ("\n", " "):
            k = question.find(f"{sep}({letter})", pos)
            if k >= 0 and (nxt < 0 or k < nxt):
                nxt = k
        if nxt < 0:
            break
        texts.append(question[pos:nxt].strip())
        pos = nxt + len(letter) + 3
    texts.append(question[pos:].strip())
    return texts if len(texts) >= 2 and all(texts) and len(set(texts)) == len(texts) else None


def _gold(gt: str, options: list[str] | None, task: str) -> str | None:
    g = gt.strip()
    if len(g) == 3 and g[0] == "(" and g[2] == ")" and g[1] in LETTERS:
        return g[1]
    words = RELEASE_WORD_TASKS.get(task) or (tuple(options) if options else ())
    folded = [w.casefold() for w in (options or words)]
    return LETTERS[folded.index(g.casefold())] if g.casefold() in folded else None


def score_run_set(rs: RunSet) -> dict[str, Any]:
    """Both conventions on one complete run set: ``{"release": {...}, "paper": {...}}``, each with the counts of
    :data:`METRICS` (questions; ``median`` in correct replies of the median run), ``rates`` (the same as
    fractions) and ``failures`` (replies without a letter; the release's by kind)."""
    qs, n = rs.questions(), rs.n_runs
    grid = [[rs.cells[(q, r)] for q in qs] for r in range(n)]
    first = grid[0]
    options = [options_from_question(c.question, rs.task) for c in first]
    golds = [_gold(c.gold, o, rs.task) for c, o in zip(first, options)]
    bad_gold = sum(g is None for g in golds)
    golds = [g if g is not None else "?" for g in golds]  # a gold no reader can name: never correct
    raw = [[c.reply for c in row] for row in grid]
    out: dict[str, Any] = {"Q": len(qs), "N": n, "unreadable_gold": bad_gold,
                           "questions_without_options": sum(o is None for o in options)}
    rel = [[read_release(c.reply, o or release_letters(rs.task, 4), rs.task) for c, o in zip(row, options)]
           for row in grid]
    ours = [[read_mcq(c.reply if c.reply is not None else "", o or release_letters(rs.task, 4))
             for c, o in zip(row, options)] for row in grid]
    for conv, parsed in (("release", [[x.value for x in row] for row in rel]),
                         ("paper", [[x.letter for x in row] for row in ours])):
        s = stability_summary(raw, parsed, golds, conv)
        q = len(qs)
        res = {"TARr": round(s["tar_r"] * q), "TARa": round(s["tar_a"] * q), "best": round(s["best_acc"] * q),
               "worst": round(s["worst_acc"] * q), "median": s["median_acc"] * q,
               "spread": round(s["acc_spread"] * q), "per_run": [round(a * q) for a in s["run_accuracies"]],
               "rates": {k: s[v] for k, v in (("TARr", "tar_r"), ("TARa", "tar_a"), ("best", "best_acc"),
                                              ("worst", "worst_acc"), ("median", "median_acc"),
                                              ("spread", "acc_spread"))}}
        if conv == "release":
            kinds = [x.outcome for row in rel for x in row]
            res["failures"] = {"no answer": kinds.count("no answer"), "ambiguous": kinds.count("ambiguous"),
                               "missing": kinds.count("missing")}
        else:
            res["failures"] = {"unreadable": sum(not x.ok for row in ours for x in row)}
        out[conv] = res
    return out


def compare(stored: dict[str, Any], ours: dict[str, Any]) -> dict[str, bool]:
    """Per figure of :data:`METRICS`: does ``ours`` (one convention of :func:`score_run_set`) equal the stored
    counts? ``spread`` compares best - worst counts and the stored percent text."""
    eq = {k: stored[k] == ours[k] for k in ("TARr", "TARa", "best", "worst")}
    eq["median"] = math.isclose(stored["median"], ours["median"])
    eq["spread"] = (stored["best"] - stored["worst"] == ours["spread"]
                    and (not stored["spread_text"] or stored["spread_text"] == f"{ours['spread'] / stored['Q']:.1%}"))
    return eq


# ------------------------------------------------------------------------------------------ the report

def reproduce(release: str | Path, errors: ErrorSummary) -> list[dict[str, Any]]:
    """One record per run set of the release: its identity, ``complete``, ``missing_cells``, and for a complete
    one ``ours`` (:func:`score_run_set`), ``stored`` (the matching summary row, or None) and ``equal`` (per
    convention, :func:`compare`). A stored row no run set matches (its raw runs are not in the checkout) is a
    record with ``runs_found: False``."""
    root = Path(release)
    records = []
    for exp, sets in read_release_dir(root, errors).items():
        stored = read_stored(root / "experiments" / exp, errors)
        keys = {(x.model, x.model_config, x.task, x.task_config) for x in sets}
        for key, rows in stored.items():
            if key not in keys:
                records += [{"experiment": exp, "model": key[0], "task": key[2], "runs_found": False,
                             "complete": False, "stored": row} for row in rows]
        for rs in sets:
            rec: dict[str, Any] = {"experiment": exp, "runs_found": True, "model": rs.model, "task": rs.task,
                                   "shots": rs.shots,
                                   "model_config": rs.model_config, "dates": sorted(rs.dates),
                                   "runs": rs.n_runs, "questions": len(rs.questions()), "complete": rs.complete,
                                   "missing_cells": rs.missing_cells(), "repeated_cells": rs.duplicates,
                                   "stored": None, "ours": None, "equal": None}
            rows = stored.get((rs.model, rs.model_config, rs.task, rs.task_config), [])
            if len(rows) > 1:  # the same configuration summarised twice: the row of the same date
                rows = [r for r in rows if r["date"] in rs.dates] or rows
            if rows:
                rec["stored"] = {k: v for k, v in rows[0].items()}
            if rs.complete:
                rec["ours"] = score_run_set(rs)
                if rec["stored"] is not None:
                    rec["equal"] = {c: compare(rec["stored"], rec["ours"][c]) for c in ("release", "paper")}
            records.append(rec)
    return records


def _pct(count: float | None, q: int) -> str:
    return "-" if count is None else f"{100 * count / q:.1f}"


def _cell(ours: dict[str, Any], key: str, q: int, equal: dict[str, bool] | None) -> str:
    mark = "" if equal is None else (" =" if equal[key] else " *")
    return _pct(ours[key], q) + mark


def format_report(records: list[dict[str, Any]]) -> str:
    """The tables: per complete run set, each figure as the release stored it, ours under the release convention
    and ours under the paper convention (``=`` equal to the stored count, ``*`` different), then the failures
    of each reader; incomplete run sets are listed after."""
    lines = []
    head = ["experiment", "model", "task", "shots", "N", "Q", "figure", "release", "ours/release", "ours/paper"]
    rows = []
    for rec in records:
        if not rec["complete"]:
            continue
        q, st, ours = rec["questions"], rec["stored"], rec["ours"]
        eq = rec["equal"] or {}
        ident = [rec["experiment"], rec["model"], rec["task"], rec["shots"], str(rec["runs"]), str(q)]
        for k, fig in enumerate(METRICS):
            rows.append((ident if k == 0 else [""] * 6) + [
                fig, "-" if st is None else _pct(st[fig] if fig != "spread" else st["best"] - st["worst"], q),
                _cell(ours["release"], fig, q, eq.get("release")), _cell(ours["paper"], fig, q, eq.get("paper"))])
        fr, fp = ours["release"]["failures"], ours["paper"]["failures"]
        rows.append([""] * 6 + ["failures", "-",
                                f"{fr['no answer'] + fr['ambiguous']} ({fr['no answer']} none, "
                                f"{fr['ambiguous']} ambiguous)", str(fp["unreadable"])])
    if rows:
        widths = [max(len(x) for x in col) for col in zip(head, *rows)]

        def fmt(r):
            return "  ".join(c.ljust(w) if i < 4 or i == 6 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths))).rstrip()

        lines += [fmt(head)] + [fmt(r) for r in rows]
        lines.append("rates in %; release = the release's stored summary (stability_eval*.csv; '-' when none "
                     "matches); '=' equal to it, '*' different (counts compared); failures = replies without a "
                     "letter (release: no answer + ambiguous 'Blown UP'; paper: unreadable by read_mcq)")
    else:
        lines.append("no complete run set found")
    partial = [r for r in records if r["runs_found"] and not r["complete"]]
    if partial:
        lines.append("")
        lines.append(f"{len(partial)} incomplete run set(s) (the release's evaluate.py refuses them; not scored):")
        for r in partial:
            lines.append(f"  {r['experiment']}  {r['model']}  {r['task']}  shots={r['shots']}  N={r['runs']}  "
                         f"Q={r['questions']}  missing cells {r['missing_cells']:,}"
                         + (f", repeated cells {r['repeated_cells']:,}" if r["repeated_cells"] else ""))
    orphans = Counter(f"{r['experiment']}/{r['stored']['file']}" for r in records if not r["runs_found"])
    if orphans:
        lines.append("")
        lines.append("stored summary rows whose raw runs are not in this checkout (not compared): "
                     + ", ".join(f"{k} ({n})" for k, n in sorted(orphans.items())))
    return "\n".join(lines)


def _cmd(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    errors = ErrorSummary(ERRORS_SHOWN)
    try:
        records = reproduce(args.release, errors)
    except (ValueError, OSError) as e:
        print(f"ub: error: {e}", file=err)
        return 2
    for line in errors.lines():
        print(f"ub: error: {line}", file=err)
    if args.json:
        json.dump({"run_sets": records, **errors.to_json()}, out, allow_nan=False)
        out.write("\n")
    else:
        print(format_report(records), file=out)
    differ = any(r.get("equal") and not all(r["equal"]["release"].values()) for r in records)
    return 1 if errors or differ else 0


def add_parser(sub: Any) -> None:
    """Register ``ub reproduce stability`` on the ``ub reproduce`` subparsers."""
    sp = sub.add_parser("stability", help="the non-determinism paper's stability tables from its release "
                                          "(breckbaldwin/llm-stability), beside ours in both conventions")
    sp.add_argument("--release", required=True, metavar="DIR", help="a checkout of breckbaldwin/llm-stability")
    sp.add_argument("--json", action="store_true", help="JSON: {run_sets: [...], errors, error_count, error_kinds}")
    sp.set_defaults(func=_cmd)
