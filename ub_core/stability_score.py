"""``ub stability score FILE.jsonl [--json]``: the non-determinism paper's stability metrics for runs collected
anywhere.

Design notes: docs/design/stability-score.md.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, TextIO

from .parsing.mcq import LETTERS, read_mcq
from .parsing.release_mcq import read_release
from .untrusted import ErrorSummary, UntrustedJSONError, loads, short
from .metrics import CONVENTIONS, agreement_summary, check_convention, log_unreadable, stability_summary

__all__ = ["score_lines", "score_file", "format_table", "add_parser", "KEYS", "ERRORS_SHOWN"]

KEYS = ("runs", "questions", "tar_r", "tar_a", "best_acc", "worst_acc", "median_acc", "acc_spread",
        "parse_failure_rate")

_FIELDS = {"task": str, "id": str, "run": int, "reply": str, "options": list}
#: errors printed whole; the rest are counted by kind
ERRORS_SHOWN = 20
#: missing runs and line numbers named in one error
_LISTED = 5


@dataclass
class _Cell:
    line: int
    reply: str
    options: tuple[str, ...]
    gold: str | None


@dataclass
class _Question:
    cells: dict[int, _Cell] = field(default_factory=dict)
    bad: bool = False


def _gold_letter(gold: Any, options: tuple[str, ...]) -> str:
    """A gold letter or option text -> the letter; ValueError when it is neither."""
    if not isinstance(gold, str):
        raise ValueError(f"gold must be a letter or an option text, got {type(gold).__name__}")
    g = gold.strip()
    if len(g) == 1 and g.upper() in LETTERS[: len(options)] and g.isupper():
        return g
    key = _folded(g)
    hits = [i for i, o in enumerate(options) if _folded(o) == key]
    if len(hits) == 1:
        return LETTERS[hits[0]]
    if hits:
        raise ValueError(f"gold {g[:40]!r} is the text of options {', '.join(LETTERS[i] for i in hits)}: give its "
                         f"letter")
    raise ValueError(f"gold {g[:40]!r} is neither a letter of the options nor an option text")


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def _parse_line(raw: str | bytes) -> tuple[str, str, int, str, tuple[str, ...], str | None]:
    rec = loads(raw, unique_keys=True)  # UntrustedJSONError (a ValueError) with the reason
    if not isinstance(rec, dict):
        raise ValueError(f"expected a JSON object, got {type(rec).__name__}")
    for key, typ in _FIELDS.items():
        if key not in rec:
            raise ValueError(f"missing field {key!r}")
        v = rec[key]
        if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
            raise ValueError(f"field {key!r} must be {typ.__name__}, got {type(v).__name__}")
    opts = rec["options"]
    if not 2 <= len(opts) <= len(LETTERS) or not all(isinstance(o, str) for o in opts):
        raise ValueError(f"options must be 2 to {len(LETTERS)} strings")
    options = tuple(opts)
    if any(not _folded(o) for o in options):
        raise ValueError(f"options must be non-empty texts, got {short(list(options), 80)}")
    # two options may share a text (real MMLU and BBH questions do): the question is scored, its letters read as
    # usual, and a reply naming the shared text is ambiguous between those options (ub_core.parsing.mcq)
    gold = rec.get("gold")
    letter = None if gold is None else _gold_letter(gold, options)
    return rec["task"], rec["id"], rec["run"], rec["reply"], options, letter


def score_lines(lines: Iterable[str | bytes], name: str = "<input>",
                convention: str = "paper") -> tuple[dict[str, dict[str, Any]], ErrorSummary]:
    """Score JSONL lines (text, or bytes decoded here one line at a time, so a line that is not UTF-8 is one
    error) under ``convention`` (``paper`` or ``release``); returns ``({task: metrics}, errors)`` (see the module
    docstring)."""
    check_convention(convention)
    errors = ErrorSummary(ERRORS_SHOWN)
    tasks: dict[str, dict[str, _Question]] = defaultdict(dict)
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            task, qid, run, reply, options, gold = _parse_line(raw)
        except UntrustedJSONError as e:
            errors.add("unreadable line", f"{name}:{n}: {e}; line skipped")
            continue
        except ValueError as e:
            errors.add("bad field", f"{name}:{n}: {e}; line skipped")
            continue
        q = tasks[task].setdefault(qid, _Question())
        where = f"task {short(task)} question {short(qid)}"
        if run in q.cells:
            errors.add("repeated run", f"{name}:{n}: {where} run {short(run)} also on line {q.cells[run].line}; "
                                       f"question excluded")
            q.bad = True
            continue
        first = next(iter(q.cells.values()), None)
        if first is not None and (first.options != options or first.gold != gold):
            what = "options" if first.options != options else "gold"
            verb = "differ" if what == "options" else "differs"
            errors.add(f"{what} differ", f"{name}:{n}: {where}: {what} {verb} from line {first.line}; "
                                         f"question excluded")
            q.bad = True
        q.cells[run] = _Cell(n, reply, options, gold)
    out = {}
    for task, questions in tasks.items():
        out[task] = _score_task(task, questions, errors, name, convention)
    return out, errors


def _first_missing(runs: list[int], cells: dict[int, _Cell]) -> list[int]:
    """The first :data:`_LISTED` runs without a cell: at most ``len(cells) + _LISTED`` steps, so naming the
    missing runs of every question stays linear in the input."""
    out: list[int] = []
    for r in runs:
        if r not in cells:
            out.append(r)
            if len(out) == _LISTED:
                break
    return out


def _listed(items: list, total: int) -> str:
    text = ", ".join(short(x, 24) for x in items[:_LISTED])
    return text + (f", ... ({total:,} in all)" if total > _LISTED else "")


def _score_task(task: str, questions: dict[str, _Question], errors: ErrorSummary, name: str,
                convention: str = "paper") -> dict[str, Any]:
    runs = sorted({r for q in questions.values() for r in q.cells})
    kept = []
    for qid, q in questions.items():
        n_missing = len(runs) - len(q.cells)
        if n_missing:
            lines = [c.line for _, c in zip(range(_LISTED), q.cells.values())]
            errors.add("missing runs", f"{name}: task {short(task)} question {short(qid)} (line(s) "
                                       f"{_listed(lines, len(q.cells))}): no reply for run(s) "
                                       f"{_listed(_first_missing(runs, q.cells), n_missing)}; question excluded")
        elif not q.bad:
            kept.append(qid)
    res: dict[str, Any] = {"runs": len(runs), "questions": len(kept), "tar_r": None, "tar_a": None,
                           "best_acc": None, "worst_acc": None, "median_acc": None, "acc_spread": None,
                           "parse_failure_rate": None,
                           "excluded_questions": len(questions) - len(kept), "gold_questions": 0}
    if not kept:
        return res
    raw = [[questions[q].cells[r].reply for q in kept] for r in runs]
    if convention == "release":
        reads = [[read_release(questions[q].cells[r].reply, list(questions[q].cells[r].options), task)
                  for q in kept] for r in runs]
        parsed = [[x.value for x in row] for row in reads]
    else:
        reads = [[read_mcq(questions[q].cells[r].reply, list(questions[q].cells[r].options)) for q in kept]
                 for r in runs]
        parsed = [[x.letter for x in row] for row in reads]
    # agreement and parse failures over every scored question; accuracies over those with a gold answer
    res.update(agreement_summary(raw, parsed, convention))
    bad = [(f"{name}:{questions[q].cells[r].line}", questions[q].cells[r].reply, x.reason)
           for r, row in zip(runs, reads) for q, x in zip(kept, row) if not x.ok]
    log_unreadable(bad, len(bad), len(runs) * len(kept), f"task {task!r}")
    with_gold = [k for k, q in enumerate(kept) if questions[q].cells[runs[0]].gold is not None]
    res["gold_questions"] = len(with_gold)
    if with_gold:
        sub = stability_summary([[row[k] for k in with_gold] for row in raw],
                                [[row[k] for k in with_gold] for row in parsed],
                                [questions[kept[k]].cells[runs[0]].gold for k in with_gold], convention)
        res.update({k: sub[k] for k in ("best_acc", "worst_acc", "median_acc", "acc_spread")})
    return res


def score_file(path: str, convention: str = "paper") -> tuple[dict[str, dict[str, Any]], ErrorSummary]:
    """Score a JSONL file (``-`` for stdin), read as bytes: a line that is not UTF-8 is one error. OSError when
    the file cannot be read."""
    if path == "-":
        return score_lines(sys.stdin.buffer, "<stdin>", convention)
    from .untrusted import NotRegularFileError, open_regular

    try:  # the gate: a FIFO would block, a device never end (lines are read one at a time, each bounded)
        fh = os.fdopen(open_regular(path, follow_links=True), "rb")
    except NotRegularFileError as e:
        raise OSError(errno.EINVAL, str(e), path) from None
    with fh:
        return score_lines(fh, path, convention)


def _pct(v: Any) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f}"


def format_table(results: dict[str, dict[str, Any]]) -> str:
    """A text table; rates in percent."""
    head = ["task", "N", "Q", "TARr@N", "TARa@N", "unread%", "best", "worst", "median", "spread", "excluded"]
    rows = [[t, str(r["runs"]), str(r["questions"]), _pct(r["tar_r"]), _pct(r["tar_a"]),
             _pct(r["parse_failure_rate"]), _pct(r["best_acc"]), _pct(r["worst_acc"]), _pct(r["median_acc"]),
             _pct(r.get("acc_spread")), str(r["excluded_questions"])] for t, r in sorted(results.items())]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]

    def fmt(row):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    lines = [fmt(head)] + [fmt(r) for r in rows]
    lines.append("rates in %; unread% = parse_failure_rate (unreadable replies agree with each other in TARa)")
    return "\n".join(lines)


def _cmd(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        results, errors = score_file(args.file, args.convention)
    except OSError as e:
        print(f"ub: error: cannot read {args.file}: {e}", file=err)
        return 2
    for line in errors.lines():
        print(f"ub: error: {line}", file=err)
    if args.json:
        json.dump({"tasks": results, **errors.to_json()}, out, indent=None, allow_nan=False)
        out.write("\n")
    elif results:
        print(format_table(results), file=out)
    else:
        print("no replies scored", file=out)
    return 1 if errors or not results else 0


def add_parser(sub: Any) -> None:
    """Register ``ub stability score`` on the ``ub`` subparsers."""
    st = sub.add_parser("stability", help="run-to-run stability (the non-determinism paper) of collected replies")
    ssub = st.add_subparsers(dest="stability_command", required=True)
    sc = ssub.add_parser("score", help="TARr@N, TARa@N, accuracies and parse failures of a JSONL of replies "
                                       "({task, id, run, reply, options, gold?} per line)")
    sc.add_argument("file", help="JSONL file, or - for stdin")
    sc.add_argument("--convention", choices=CONVENTIONS, default="paper",
                    help="paper (default: our reader, the paper's definitions) or release (the rules of the paper's "
                         "public release llm-stability: its reader, its TARa, spread = best - worst)")
    sc.add_argument("--json", action="store_true", help="JSON: {tasks: {task: {...}}, errors: [first few], "
                                                         "error_count, error_kinds: {kind: count}}")
    sc.set_defaults(func=_cmd)

