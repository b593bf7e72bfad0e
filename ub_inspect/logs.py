"""Reading our Inspect logs back: the per-problem values the scorer stored, for ``ub score`` and reports.

A rescoring must reproduce the run: :func:`read_for_scoring` returns, besides the stored values, each sample's
failure count, the scoring options the task ran with (``eval.task_args``: ``-T ks_ns``, ``threshold``,
``method``, ``gt_size``, ``seed``, ``wdz_resamples``, and the official-release ``dataset``/``ground_truth``/``split``),
the log's status, and one line for every sample that holds no score of ours (never dropped silently).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ub_core.untrusted import NotRegularFileError, open_regular

__all__ = ["is_inspect_log", "log_records", "read_for_scoring", "LogScoring", "scoring_options"]


def is_inspect_log(path: str | Path) -> bool:
    """An Inspect log file: ``.eval``, or a ``.json`` whose top level has ``eval`` and ``samples``/``results``."""
    p = Path(path)
    if p.suffix == ".eval":
        return True
    if p.suffix != ".json":
        return False
    try:
        with os.fdopen(open_regular(p, follow_links=True), "rb") as fh:  # the gate: no FIFO, no device
            head = fh.read(4096).decode("utf-8", "replace")
    except (OSError, NotRegularFileError):
        return False
    return '"eval"' in head and '"version"' in head


def _n_failed(score) -> int:
    """Replies that failed to parse or fell outside the support: the scorer's ``n_failed`` (its value), else the
    length of the stored failure reasons."""
    value = score.value if isinstance(score.value, dict) else {}
    n = value.get("n_failed")
    if isinstance(n, (int, float)) and not isinstance(n, bool) and n == n and n >= 0:
        return int(n)
    failures = score.metadata.get("failures") if isinstance(score.metadata, dict) else None
    return len(failures) if isinstance(failures, list) else 0


def _records(path: str | Path, scorer: str, skipped: list[str] | None) -> Iterator[dict]:
    from inspect_ai.log import read_eval_log_samples

    for sample in read_eval_log_samples(str(path), all_samples_required=False):
        score = (sample.scores or {}).get(scorer)
        if score is None or not isinstance(score.metadata, dict) or not isinstance(score.metadata.get("values"), list):
            if skipped is not None:
                why = f"sample error: {str(sample.error.message).splitlines()[0]}" if sample.error else \
                    f"no {scorer} score with stored values"
                skipped.append(f"sample {sample.id} (epoch {sample.epoch}): not scored ({why})")
            continue
        yield {"id": str(sample.id), "values": list(score.metadata["values"]), "n_failed": _n_failed(score)}


def log_records(path: str | Path, scorer: str = "ksn_scorer") -> Iterator[dict]:
    """``{"id", "values", "n_failed"}`` per sample and epoch, from the Score our scorer writes (samples without
    one are left out here; :func:`read_for_scoring` names them)."""
    yield from _records(path, scorer, None)


def scoring_options(task_args: dict[str, Any]) -> dict[str, Any]:
    """``score_jsonl`` options from a ksn task's arguments, parsed as the task parses them (defaults where the
    run left an option at its default: Inspect records only what was passed)."""
    from ._options import choice, int_list, positive_int
    from ub_core.metrics import KS_METHODS

    args = dict(task_args or {})
    out: dict[str, Any] = {}
    if args.get("ks_ns") is not None:
        out["ns"] = int_list(args["ks_ns"], "ks_ns")
    if args.get("threshold") is not None:
        out["threshold"] = float(args["threshold"])
    if args.get("method") is not None:
        out["method"] = choice(args["method"], "method", KS_METHODS)
    if args.get("gt_size") is not None:
        out["truth_size"] = positive_int(args["gt_size"], "gt_size")
    if args.get("seed") is not None:
        out["truth_seed"] = int(args["seed"])
    if args.get("wdz_resamples") is not None:
        out["wdz_resamples"] = positive_int(args["wdz_resamples"], "wdz_resamples")
    return out


@dataclass
class LogScoring:
    """What ``ub score`` needs from one log. ``dataset`` is ``(dataset, ground_truth, split)`` when the run used
    the official release, else None."""

    records: list[dict] = field(default_factory=list)
    options: dict = field(default_factory=dict)
    dataset: tuple | None = None
    skipped: list[str] = field(default_factory=list)
    task: str = ""
    status: str = ""
    error: str | None = None


def read_for_scoring(path: str | Path, scorer: str = "ksn_scorer") -> LogScoring:
    """Records, scoring options, status and skipped samples of one log (see the module docstring)."""
    from inspect_ai.log import read_eval_log

    head = read_eval_log(str(path), header_only=True)
    args = dict(head.eval.task_args or {})
    out = LogScoring(options=scoring_options(args), task=str(head.eval.task), status=str(head.status))
    if head.error is not None:
        out.error = str(getattr(head.error, "message", head.error)).splitlines()[0] if str(
            getattr(head.error, "message", head.error)) else "error"
    dataset = args.get("dataset")
    if dataset not in (None, "builtin"):
        out.dataset = (str(dataset), args.get("ground_truth"), str(args.get("split") or "train"))
    out.records = list(_records(path, scorer, out.skipped))
    return out
