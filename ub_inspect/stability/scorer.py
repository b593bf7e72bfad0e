"""Scorer and metrics of the stability task (the non-determinism paper).

The scorer runs once per epoch: it reads the reply with the sample's option texts (:func:`ub_core.parsing.mcq.read_mcq`:
letters, option texts, values), marks it correct or not, and keeps in ``Score.metadata`` what the run-to-run
measures need: ``completion`` (the raw reply), ``parsed_answer`` (the letter, ``None`` when unreadable: one answer
of its own kind, which agrees only with another unreadable reply and is never correct), ``unreadable_reason``
(``None`` when read), ``target`` and ``epoch``. ``parse_failure_rate`` (unreadable replies / all replies, over
every epoch of every sample) is reported next to TARa and logs a few unreadable replies.

How the numbers reach the log (checked against Inspect 0.3.285, ``_eval/task/results.py``):

- the task's epoch reducer ``ub_inspect/tar_a`` (:mod:`ub_inspect.reducers`) reduces a question's epochs to one
  Score whose metadata says whether all its parsed answers agree (``tar_a``), whether all its raw replies do
  (``tar_r``) and how many epochs it had; Inspect shows this reduced view first, so the run's score is the
  headline :func:`tar_a_summary`: ``tar_a`` = TARa@N with its standard error over questions, ``epochs`` (the N
  that ran, ``--epochs`` included) and TARa with its standard error per subtask;
- reducers see one sample at a time, so the cross-run measures are metrics declared ``scores="unreduced"``:
  Inspect hands them one SampleScore per sample *per epoch*. They regroup the scores by (sample id, epoch from the
  metadata) into ``runs[epoch][question]`` and call :func:`ub_core.metrics.stability_summary`: ``tar_r``,
  ``best_acc``, ``worst_acc``, ``median_acc``, ``acc`` (mean accuracy over all replies), ``acc_spread`` and
  ``parse_failure_rate``. ``--epochs-reducer`` replaces ``tar_a``: the headline then reads NaN (its reducer is
  gone), the unreduced metrics are unchanged.

A question missing some epoch (an errored sample) cannot enter a run-by-run comparison: it is left out of the
unreduced metrics, and the number left out is logged.

``convention="release"`` (``-T convention=release``) reads replies by the rules of the paper's public release
(:func:`ub_core.parsing.release_mcq.read_release`); each score's metadata says its ``convention``, and the
metrics and the ``tar_a`` reducer then use the release's TARa and spread (:mod:`ub_core.metrics.stability`).
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from ub_core.parsing.mcq import read_mcq
from ub_core.parsing.release_mcq import read_release
from ub_core.metrics import check_convention, log_unreadable, stability_summary

from .._naming import registry_name
from ..metrics import grouped_summary

__all__ = ["stability_scorer", "stability_runs", "tar_a_summary", "tar_a", "tar_r", "best_acc", "worst_acc",
           "median_acc", "acc", "acc_spread", "parse_failure_rate"]

logger = logging.getLogger(__name__)


def stability_runs(scores: list[SampleScore]) -> tuple[list[list[Any]], list[list[Any]], list[Any], str] | None:
    """Per-epoch SampleScores -> ``(raw_runs, parsed_runs, answers, convention)`` indexed ``[run][question]``; runs
    in epoch order, questions in first-seen order. ``None`` when no complete question is left."""
    by_question: dict[str, dict[int, dict]] = defaultdict(dict)
    for s in scores:
        meta = s.score.metadata or {}
        if "epoch" not in meta or "target" not in meta:
            continue
        by_question[str(s.sample_id)][int(meta["epoch"])] = meta
    if not by_question:
        return None
    epochs = sorted({e for runs in by_question.values() for e in runs})
    complete = [q for q, runs in by_question.items() if len(runs) == len(epochs)]
    if len(complete) < len(by_question):
        logger.info("stability metrics: %d of %d questions lack some epoch and are left out",
                    len(by_question) - len(complete), len(by_question))
    if not complete:
        return None
    raw = [[by_question[q][e].get("completion") for q in complete] for e in epochs]
    parsed = [[by_question[q][e].get("parsed_answer") for q in complete] for e in epochs]
    answers = [by_question[q][epochs[0]]["target"] for q in complete]
    return raw, parsed, answers, str(by_question[complete[0]][epochs[0]].get("convention", "paper"))


def _summary_metric(key: str):
    def compute(scores: list[SampleScore]) -> float:
        runs = stability_runs(scores)
        if runs is None:  # also the live display's call with no scores
            return math.nan
        summary = stability_summary(*runs)
        if key == "acc":  # mean accuracy over all replies: every run covers the same questions
            return float(sum(summary["run_accuracies"]) / len(summary["run_accuracies"]))
        return float(summary[key])

    return compute


@metric(name=registry_name("tar_a_summary"))
def tar_a_summary() -> Metric:
    """The headline, over the epochs reduced by ``ub_inspect/tar_a``: ``{"tar_a": TARa@N, "stderr": its standard
    error, "epochs": N, <subtask>: TARa@N of the subtask, "<subtask>_stderr": ...}``. TARa@N is the mean over
    questions of the reducer's indicator "all N parsed answers agree" (the non-determinism paper, sec. 5.2), its
    standard error sd / sqrt(Q) (:func:`ub_inspect.metrics.grouped_summary`); N is the number of epochs reduced
    (the largest, should an errored sample have fewer). Scores from another reducer carry no indicator: NaN."""

    def compute(scores: list[SampleScore]):
        if not scores:  # the live display's first call
            return {}
        cells, epochs = [], 0
        for s in scores:
            meta = s.score.metadata or {}
            if "tar_a" in meta:
                cells.append((float(meta["tar_a"]), str(s.sample_id),
                              str((s.sample_metadata or {}).get("category", "unknown"))))
                epochs = max(epochs, int(meta.get("epochs") or 0))
        return grouped_summary("tar_a", cells, extra={"epochs": float(epochs) if epochs else math.nan})

    return compute


@metric(name=registry_name("tar_a"), scores="unreduced")
def tar_a() -> Metric:
    """TARa@N: share of questions whose parsed answers agree over all epochs (the non-determinism paper, sec. 5.2)."""
    return _summary_metric("tar_a")


@metric(name=registry_name("tar_r"), scores="unreduced")
def tar_r() -> Metric:
    """TARr@N: share of questions whose raw replies are identical over all epochs (the non-determinism paper, sec.
    5.2)."""
    return _summary_metric("tar_r")


@metric(name=registry_name("best_acc"), scores="unreduced")
def best_acc() -> Metric:
    """BestAcc@N: a question counts when any epoch is right (the non-determinism paper, sec. 5.2)."""
    return _summary_metric("best_acc")


@metric(name=registry_name("worst_acc"), scores="unreduced")
def worst_acc() -> Metric:
    """WorstAcc@N: a question counts only when every epoch is right (the non-determinism paper, sec. 5.2)."""
    return _summary_metric("worst_acc")


@metric(name=registry_name("median_acc"), scores="unreduced")
def median_acc() -> Metric:
    """Median over epochs of the epoch accuracy (the non-determinism paper, sec. 5.2)."""
    return _summary_metric("median_acc")


@metric(name=registry_name("acc"), scores="unreduced")
def acc() -> Metric:
    """Mean accuracy over all N x Q replies, i.e. the mean of the run accuracies (the non-determinism paper, sec.
    5.2)."""
    return _summary_metric("acc")


@metric(name=registry_name("acc_spread"), scores="unreduced")
def acc_spread() -> Metric:
    """Maximum minus minimum epoch accuracy (the non-determinism paper, sec. 5.2, Fig. 1); under the release
    convention BestAcc - WorstAcc, as the release computes it."""
    return _summary_metric("acc_spread")


@metric(name=registry_name("parse_failure_rate"), scores="unreduced")
def parse_failure_rate() -> Metric:
    """Share of unreadable replies over all epochs of all samples (reported next to TARa, whose unreadable
    replies agree with each other); logs a few of them."""

    def compute(scores: list[SampleScore]) -> float:
        cells = [(s, s.score.metadata or {}) for s in scores]
        cells = [(s, m) for s, m in cells if "epoch" in m and "target" in m]
        if not cells:
            return math.nan
        bad = [(s, m) for s, m in cells if m.get("unreadable_reason") is not None
               or (m.get("parsed_answer") is None and "unreadable_reason" not in m)]
        log_unreadable(((f"sample {s.sample_id} epoch {m['epoch']}", m.get("completion"),
                         m.get("unreadable_reason") or "unreadable") for s, m in bad),
                       len(bad), len(cells), "ub_inspect/stability")
        return len(bad) / len(cells)

    return compute


STABILITY_METRICS = [tar_a_summary(), tar_r(), best_acc(), worst_acc(), median_acc(), acc(), acc_spread(),
                     parse_failure_rate()]


@scorer(metrics=STABILITY_METRICS, name=registry_name("stability_scorer"))
def stability_scorer(convention: str = "paper") -> Scorer:
    """Correctness of one epoch's reply; raw reply, parsed answer, target, epoch and convention go to the
    metadata. ``convention="release"``: the release's reader, whose parsed answer may be ``<ambiguous>`` or
    ``<missing>`` besides a letter or None."""
    convention = check_convention(convention)

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion if state.output else ""
        options = state.metadata.get("options")
        options = list(options) if options else int(state.metadata.get("n_options") or 26)
        if convention == "release":
            read = read_release(completion, options, state.metadata.get("category"))
            parsed = read.value
        else:
            read = read_mcq(completion, options)
            parsed = read.letter
        letter = read.letter
        correct = letter is not None and letter == target.text
        return Score(value=CORRECT if correct else INCORRECT, answer=letter, explanation=completion,
                     metadata={"completion": completion, "parsed_answer": parsed, "target": target.text,
                               "epoch": state.epoch, "unreadable_reason": None if read.ok else read.reason,
                               "convention": convention})

    return score
