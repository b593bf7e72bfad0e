"""lm-eval hooks of the ``ub_tar`` tasks (run-to-run stability, the non-determinism paper). The science is ``ub_core``.

- :func:`stability_dataset` is the ``custom_dataset``: one subtask's items (built-in, hub or a local export) as
  a ``DatasetDict``; documents hold ``id``, ``category``, ``question``, ``options``, ``answer``, ``source`` and
  ``prompt``.
- :func:`process_results_tar` receives one document and, through the ``take_first_k`` filter, its N generations
  (``repeats: N``, in run order). It reads them with the document's option texts
  (:func:`ub_core.parsing.mcq.read_mcq`: letters, option texts, values; an unreadable reply is ``None``, one answer of
  its own kind "unreadable" that agrees only with another unreadable reply and is never correct) and returns the
  per-question terms of
  :func:`ub_core.metrics.question_stability`: ``tar_r``, ``tar_a``, ``best_acc``, ``worst_acc`` (0/1, mean over
  documents = the the non-determinism paper rate), ``acc`` (share of correct runs) and, for ``median_acc`` and
  ``acc_spread``, the document's ``run_correct`` list (0/1 per run); for ``parse_failure_rate``, the document's
  unreadable count, its number of runs and a few unreadable replies with their reasons.
- :func:`median_run_accuracy` and :func:`run_accuracy_spread` aggregate those lists: stacked they are
  ``correct[question][run]``; the run accuracies are the column means (:func:`ub_core.metrics.run_accuracies`).
- :func:`unreadable_rate` aggregates ``parse_failure_rate``: unreadable replies / all replies, reported next to
  TARa (an all-unreadable question agrees), and logs a few unreadable replies (``logging``, warning).

``--metadata '{"convention": "release"}'`` (or ``convention: release`` in a task's ``metadata``) reads and scores by
the rules of the paper's public release (:func:`ub_core.parsing.release_mcq.read_release`; the release's TARa, and
``acc_spread`` = BestAcc - WorstAcc): the dataset hook writes the convention into every document, so that
:func:`process_results_tar` sees it, and the ``acc_spread`` term then carries it to :func:`run_accuracy_spread`.
"""

from __future__ import annotations

from typing import Any, Sequence

from ub_core.parsing.mcq import read_mcq
from ub_core.parsing.release_mcq import read_release
from ub_core.metrics import (accuracy_spread, best_minus_worst, check_convention, log_unreadable, median_accuracy,
                             question_stability)
from ub_core.problems.stability import load_stability_items

from .metadata import STABILITY_OPTIONS, checked

__all__ = ["stability_docs", "stability_dataset", "process_results_tar", "median_run_accuracy",
           "run_accuracy_spread", "unreadable_rate"]

_DOC_FIELDS = ("id", "category", "question", "options", "answer", "source", "prompt")


def stability_docs(subtask: str, source: str = "builtin", bbh: str | None = None, mmlu: str | None = None,
                   split: str = "test", limit: int | None = None, size: str | None = None,
                   convention: str = "paper") -> list[dict]:
    convention = check_convention(convention)
    items = load_stability_items([subtask], source, bbh=bbh, mmlu=mmlu, split=split, limit=limit, size=size)
    return [{**{k: v for k, v in it.to_record(with_prompt=True).items() if k in _DOC_FIELDS},
             "convention": convention} for it in items]


def stability_dataset(subtask: str | None = None, source: str = "builtin", bbh: str | None = None,
                      mmlu: str | None = None, split: str = "test", size: str | None = None,
                      convention: str = "paper", **kwargs: Any):
    """``custom_dataset`` hook: called with the task's metadata (``subtask``; ``--metadata`` may add ``source``,
    ``bbh``, ``mmlu``, ``split``, ``size``, ``convention``) and the model_args keys, which are ignored; a ub option
    these tasks do not take is a one-line error (:mod:`ub_lmeval.metadata`)."""
    from datasets import Dataset, DatasetDict

    checked("ub_tar", kwargs, STABILITY_OPTIONS)

    if not subtask:
        raise ValueError("the ub_tar task's metadata must name its subtask")
    return DatasetDict({"test": Dataset.from_list(stability_docs(subtask, source, bbh, mmlu, split, size=size,
                                                                 convention=convention))})


def process_results_tar(doc: dict, results: list) -> dict:
    """The N generations of one question -> its stability terms (see the module docstring)."""
    generations = results[0] if results and isinstance(results[0], (list, tuple)) else results
    raws = [g if isinstance(g, str) else str(g) for g in generations]
    convention = check_convention(doc.get("convention") or "paper")
    if convention == "release":
        reads = [read_release(g, list(doc["options"]), doc.get("category")) for g in raws]
        parsed = [r.value for r in reads]
    else:
        reads = [read_mcq(g, list(doc["options"])) for g in raws]
        parsed = [r.letter for r in reads]
    terms = question_stability(raws, parsed, doc["answer"], convention)
    run_correct = terms["run_correct"]
    bad = [(f"doc {doc.get('id', '?')} run {k}", raws[k], r.reason) for k, r in enumerate(reads) if not r.ok]
    spread_term = run_correct if convention == "paper" else {"convention": convention, "run_correct": run_correct}
    return {"tar_r": terms["tar_r"], "tar_a": terms["tar_a"], "best_acc": terms["best_acc"],
            "worst_acc": terms["worst_acc"], "acc": sum(run_correct) / len(run_correct),
            "median_acc": run_correct, "acc_spread": spread_term,
            "parse_failure_rate": {"unreadable": len(bad), "runs": len(raws), "examples": bad[:3]}}


def _by_run(items: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Per-document run lists -> ``correct[run][question]``; every document must have the same number of runs."""
    rows = [list(x) for x in items]
    if not rows:
        raise ValueError("no documents to aggregate")
    lengths = sorted({len(r) for r in rows})
    if len(lengths) != 1:
        raise ValueError(f"documents have different numbers of runs: {lengths}")
    return [list(col) for col in zip(*rows)]


def median_run_accuracy(items: Sequence[Sequence[Any]]) -> float:
    """Aggregation: median over runs of the run accuracy (the non-determinism paper, sec. 5.2)."""
    return median_accuracy(_by_run(items))


def run_accuracy_spread(items: Sequence[Any]) -> float:
    """Aggregation: max - min run accuracy (the non-determinism paper, sec. 5.2); for terms of the release
    convention (``{"convention": "release", "run_correct": [...]}``), BestAcc - WorstAcc as the release computes."""
    rows = list(items)
    if rows and all(isinstance(r, dict) for r in rows):
        conventions = {r.get("convention") for r in rows}
        if conventions != {"release"}:
            raise ValueError(f"acc_spread terms of mixed or unknown conventions: {sorted(map(str, conventions))}")
        return best_minus_worst(_by_run([r["run_correct"] for r in rows]))
    return accuracy_spread(_by_run(rows))


def unreadable_rate(items: Sequence[Any]) -> float:
    """Aggregation of ``parse_failure_rate``: ``sum(unreadable) / sum(runs)`` over documents (the share of
    unreadable replies; :func:`ub_core.metrics.parse_failure_rate`); logs a few unreadable replies."""
    rows = list(items)
    if not rows:
        raise ValueError("no documents to aggregate")
    if all(isinstance(r, (int, float)) for r in rows):  # already per-document shares
        return float(sum(rows) / len(rows))
    unreadable = sum(int(r["unreadable"]) for r in rows)
    total = sum(int(r["runs"]) for r in rows)
    examples = [tuple(e) for r in rows for e in r.get("examples", ())]
    log_unreadable(examples, unreadable, total, "ub_tar")
    return unreadable / total if total else float("nan")
