"""Run-to-run stability of "deterministic" runs (the non-determinism paper, sec. 5.2 "Metrics").

N runs of the same evaluation (temperature 0, top_p 1, a fixed seed) give, for each question q and run r, a raw
reply ``raw_runs[r][q]`` and its parsed answer ``parsed_runs[r][q]``. The total agreement rates reuse
:func:`ub_core.metrics.total_agreement_rate`; the accuracy extremes are the paper's BestAcc, WorstAcc, median
accuracy and max-min accuracy difference.

**Unreadable replies.** A reply the reader (:func:`ub_core.parsing.mcq.read_mcq`) cannot read has the parsed answer
``None``, which stands for one answer of its own kind, "unreadable". For TARa it is an answer like any other: it
agrees only with another unreadable reply, so a question whose replies are unreadable in every run agrees, and a
mix of readable and unreadable runs does not. It is never correct, so it counts against run accuracy, BestAcc and
WorstAcc. Because an all-unreadable question agrees, TARa alone can be high for a model whose replies cannot be
read at all: :func:`parse_failure_rate` (the share of unreadable replies) is reported next to it everywhere.

**Two conventions** (``convention=``, :data:`CONVENTIONS`):

- ``paper`` (the default): what the paper states, with the unreadable rule above; the accuracy spread is
  ``max_r acc_r - min_r acc_r`` (sec. 5.2, Fig. 1).
- ``release``: what the paper's public release (``llm-stability``, ``evaluate.py``) computes, so that its stored
  summaries are recomputed exactly from its raw runs. Parsed answers come from
  :func:`ub_core.parsing.release_mcq.read_release`: a letter, ``None`` (no answer), :data:`AMBIGUOUS` or
  :data:`MISSING`. TARa is :func:`release_answers_agree` (an ambiguous reply disagrees with everything, itself
  included; an empty reply is left out), and the spread is BestAcc - WorstAcc (:func:`best_minus_worst`), which
  is never smaller than the paper's max - min run accuracy. TARr and the accuracies are the same functions.

Index convention everywhere: ``[run][question]``, like ``total_agreement_rate``.
"""

from __future__ import annotations

import logging
import math
import statistics
from typing import Any, Iterable, Sequence

import numpy as np

from ..parsing.release_mcq import AMBIGUOUS, MISSING


__all__ = ["total_agreement_rate", "parse_failure_rate", "log_unreadable", "question_agreement", "correctness",
           "run_accuracies",
           "best_accuracy", "worst_accuracy", "median_accuracy", "accuracy_spread", "question_stability",
           "stability_summary", "CONVENTIONS", "AMBIGUOUS", "MISSING", "release_answers_agree",
           "release_agreement_rate", "best_minus_worst", "check_convention", "agreement_summary"]

#: ``paper`` (what the paper states, the default) and ``release`` (what its public code computes)
CONVENTIONS = ("paper", "release")


def check_convention(convention: Any) -> str:
    """``convention`` if it is one of :data:`CONVENTIONS`, else a one-line ValueError."""
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}, got {convention!r}")
    return convention


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return bool(np.array_equal(x, y))
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    try:
        return bool(x == y)
    except (TypeError, ValueError):
        return False


def total_agreement_rate(runs: Sequence[Sequence[Any]]) -> float:
    """Total agreement rate (the non-determinism paper, TARr@N on raw outputs / TARa@N on parsed answers).

    ``runs[r][q]`` is run r's output for question q; the rate is the share of questions whose outputs are
    identical (``==``; two float NaNs count as equal, arrays compare element-wise) across all runs. Needs at least one
    run, all runs of the same length, and at least one question; one run gives 1.0.
    """
    if isinstance(runs, (str, bytes)):
        raise ValueError("runs must be a sequence of runs (each a sequence of outputs)")
    runs = [list(r) for r in runs]
    if not runs:
        raise ValueError("total_agreement_rate needs at least one run")
    lengths = {len(r) for r in runs}
    if len(lengths) != 1:
        raise ValueError(f"all runs must have the same number of questions, got lengths {sorted(lengths)}")
    n_q = lengths.pop()
    if n_q == 0:
        raise ValueError("total_agreement_rate needs at least one question")
    agree = sum(1 for q in range(n_q) if all(_same(runs[0][q], r[q]) for r in runs[1:]))
    return agree / n_q


logger = logging.getLogger(__name__)


def parse_failure_rate(parsed_runs: Sequence[Sequence[Any]]) -> float:
    """Share of unreadable replies: ``(1/(N*Q)) sum_r sum_q [parsed_runs[r][q] is None]``.

    Not a the non-determinism paper metric: it says how much of TARa@N is agreement between unreadable replies (see the
    module docstring)."""
    runs = _matrix(parsed_runs, "parsed_runs")
    return sum(p is None for run in runs for p in run) / (len(runs) * len(runs[0]))


def log_unreadable(examples: Iterable[tuple[str, Any, str]], n_unreadable: int, n_total: int, where: str,
                   limit: int = 3) -> None:
    """Log (warning) how many replies were unreadable and a few examples ``(where, reply, reason)``."""
    if n_unreadable <= 0:
        return
    shown = []
    for i, (label, reply, reason) in enumerate(examples):
        if i >= limit:
            break
        text = reply if isinstance(reply, str) else repr(reply)
        snip = text if len(text) <= 120 else text[:60] + " ... " + text[-55:]
        shown.append(f"{label}: {reason}: {snip!r}")
    logger.warning("%s: %d of %d replies unreadable (%.1f%%)%s", where, n_unreadable, n_total,
                   100.0 * n_unreadable / max(n_total, 1), "; e.g. " + " | ".join(shown) if shown else "")


def _matrix(runs: Sequence[Sequence[Any]], name: str) -> list[list[Any]]:
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise ValueError(f"{name} must be a sequence of runs, each a sequence of per-question outputs")
    out = []
    for r, run in enumerate(runs):
        if isinstance(run, (str, bytes)) or not isinstance(run, Sequence):
            raise ValueError(f"{name}[{r}] must be a sequence of per-question outputs, got {type(run).__name__}")
        out.append(list(run))
    total_agreement_rate(out)  # validates: at least one run and one question, no ragged runs (one-line errors)
    return out


def release_answers_agree(answers: Sequence[Any]) -> bool:
    """One question's agreement under the release convention (``llm-stability`` ``evaluate.py``, TARa@N).

    The release collects a set ``S`` over the N runs: a letter adds itself; the first reply with no answer
    (``None``) adds one token, later ones nothing (so "no answer" agrees with "no answer"); each ambiguous reply
    (:data:`AMBIGUOUS`) adds a token of its own; an empty reply (:data:`MISSING`) adds nothing. The question
    agrees when ``|S| = 1``. Hence an ambiguous reply disagrees with everything, another ambiguous reply
    included, and a question whose replies are all empty does not agree (``|S| = 0``)."""
    tokens: set[Any] = set()
    for k, a in enumerate(answers):
        if a == MISSING:
            continue
        tokens.add(("ambiguous", k) if a == AMBIGUOUS else ("none",) if a is None else ("letter", a))
    return len(tokens) == 1


def release_agreement_rate(parsed_runs: Sequence[Sequence[Any]]) -> float:
    """TARa@N under the release convention: ``(1/Q) sum_q [release_answers_agree(parsed_runs[.][q])]``."""
    runs = _matrix(parsed_runs, "parsed_runs")
    return sum(release_answers_agree([run[q] for run in runs]) for q in range(len(runs[0]))) / len(runs[0])


def question_agreement(runs: Sequence[Sequence[Any]]) -> list[bool]:
    """Per question: are the outputs of all runs identical? (the non-determinism paper, sec. 5.2, TAR@N before
    averaging).

    ``agree_q = [runs[0][q] == runs[r][q] for every r]``, compared as :func:`total_agreement_rate` compares (it is
    that function on the one-question slice ``[[run[q]] for run in runs]``), so its mean is TAR@N.
    """
    runs = _matrix(runs, "runs")
    return [total_agreement_rate([[run[q]] for run in runs]) == 1.0 for q in range(len(runs[0]))]


def correctness(parsed_runs: Sequence[Sequence[Any]], answers: Sequence[Any]) -> list[list[bool]]:
    """``c[r][q] = parsed_runs[r][q] is not None and parsed_runs[r][q] == answers[q]`` (a parse failure, None, is
    never correct). The input of every accuracy metric below (the non-determinism paper, sec. 5.2)."""
    runs = _matrix(parsed_runs, "parsed_runs")
    if isinstance(answers, (str, bytes)) or not isinstance(answers, Sequence):
        raise ValueError("answers must be a sequence with one correct answer per question")
    answers = list(answers)
    if len(answers) != len(runs[0]):
        raise ValueError(f"got {len(answers)} answers for {len(runs[0])} questions")
    if any(a is None for a in answers):
        raise ValueError("an answer key entry is None; every question needs its correct answer")
    return [[p is not None and p == a for p, a in zip(run, answers)] for run in runs]


def _correct_matrix(correct: Sequence[Sequence[Any]]) -> list[list[bool]]:
    rows = _matrix(correct, "correct")
    for r, row in enumerate(rows):
        for q, v in enumerate(row):
            if not isinstance(v, (bool, int, float)) or v not in (0, 1):
                raise ValueError(f"correct[{r}][{q}] must be 0/1 or a bool, got {v!r}")
    return [[bool(v) for v in row] for row in rows]


def run_accuracies(correct: Sequence[Sequence[Any]]) -> list[float]:
    """Accuracy of each run: ``acc_r = (1/Q) sum_q c[r][q]`` (the non-determinism paper, sec. 5.2; ``correct[r][q]``
    0/1)."""
    rows = _correct_matrix(correct)
    return [sum(row) / len(row) for row in rows]


def best_accuracy(correct: Sequence[Sequence[Any]]) -> float:
    """BestAcc@N = ``(1/Q) sum_q max_r c[r][q]``: a question counts when any run got it right (the non-determinism
    paper, 5.2)."""
    rows = _correct_matrix(correct)
    return sum(any(row[q] for row in rows) for q in range(len(rows[0]))) / len(rows[0])


def worst_accuracy(correct: Sequence[Sequence[Any]]) -> float:
    """WorstAcc@N = ``(1/Q) sum_q min_r c[r][q]``: a question counts only when every run got it right (the
    non-determinism paper, sec. 5.2)."""
    rows = _correct_matrix(correct)
    return sum(all(row[q] for row in rows) for q in range(len(rows[0]))) / len(rows[0])


def median_accuracy(correct: Sequence[Sequence[Any]]) -> float:
    """Median over runs of ``acc_r`` (the non-determinism paper, sec. 5.2); with an even N, the mean of the two middle
    values."""
    return float(statistics.median(run_accuracies(correct)))


def accuracy_spread(correct: Sequence[Sequence[Any]]) -> float:
    """``max_r acc_r - min_r acc_r``, the maximum-minimum accuracy difference (the non-determinism paper, sec. 5.2 and
    Fig. 1). Unlike BestAcc - WorstAcc it compares whole runs, so it is never larger than that gap."""
    accs = run_accuracies(correct)
    return max(accs) - min(accs)


def best_minus_worst(correct: Sequence[Sequence[Any]]) -> float:
    """The release's spread: ``BestAcc@N - WorstAcc@N`` = ``(1/Q) sum_q (max_r c[r][q] - min_r c[r][q])``, the share
    of questions some run got right and some run got wrong (``llm-stability`` ``evaluate.py``, column
    ``spread``; the paper's sec. 5.2 spread is :func:`accuracy_spread`)."""
    return best_accuracy(correct) - worst_accuracy(correct)


def question_stability(raws: Sequence[Any], parsed: Sequence[Any], answer: Any,
                       convention: str = "paper") -> dict[str, Any]:
    """One question's N runs -> its contributions (the non-determinism paper, sec. 5.2): ``tar_r`` and ``tar_a`` (1 when
    all raw replies / parsed answers agree), ``best_acc`` (1 when any run is right), ``worst_acc`` (1 when every run is
    right) and ``run_correct`` (0/1 per run). Averaged over questions they give TARr@N, TARa@N, BestAcc and
    WorstAcc; the per-run lists, stacked, give the run accuracies. Used by the lm-eval hooks (one document = one
    question)."""
    for name, seq in (("raws", raws), ("parsed", parsed)):
        if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
            raise ValueError(f"{name} must be a sequence with one entry per run")
    if len(raws) != len(parsed):
        raise ValueError(f"got {len(raws)} raw replies but {len(parsed)} parsed answers")
    s = stability_summary([[x] for x in raws], [[p] for p in parsed], [answer], convention)
    return {"tar_r": int(s["tar_r"]), "tar_a": int(s["tar_a"]), "best_acc": int(s["best_acc"]),
            "worst_acc": int(s["worst_acc"]), "run_correct": [int(a) for a in s["run_accuracies"]]}


def stability_summary(raw_runs: Sequence[Sequence[Any]], parsed_runs: Sequence[Sequence[Any]],
                      answers: Sequence[Any], convention: str = "paper") -> dict[str, Any]:
    """All the non-determinism paper stability metrics (sec. 5.2) of N runs over Q questions.

    - ``tar_r`` = TARr@N = ``total_agreement_rate(raw_runs)``: share of questions whose N raw replies are
      identical strings;
    - ``tar_a`` = TARa@N = ``total_agreement_rate(parsed_runs)``: the same for parsed answers (None = failure);
    - ``best_acc`` = BestAcc@N, ``worst_acc`` = WorstAcc@N, ``median_acc`` (median of the run accuracies),
      ``acc_spread`` (max - min run accuracy), ``run_accuracies`` (list, run order), ``n_runs`` = N,
      ``n_questions`` = Q, and ``parse_failure_rate`` (share of None answers, :func:`parse_failure_rate`).

    ``raw_runs[r][q]`` and ``parsed_runs[r][q]`` are run r's reply and parsed answer for question q; ``answers[q]``
    is q's correct answer. All runs must cover the same questions: ragged input raises a one-line ValueError.

    ``convention="release"`` (module docstring): ``tar_a`` = :func:`release_agreement_rate` and ``acc_spread`` =
    :func:`best_minus_worst`; ``parse_failure_rate`` counts every reply without a letter (no answer, ambiguous,
    empty).
    """
    check_convention(convention)
    raw = _matrix(raw_runs, "raw_runs")
    parsed = _matrix(parsed_runs, "parsed_runs")
    if (len(raw), len(raw[0])) != (len(parsed), len(parsed[0])):
        raise ValueError(f"raw_runs is {len(raw)} runs x {len(raw[0])} questions but parsed_runs is "
                         f"{len(parsed)} x {len(parsed[0])}")
    correct = correctness(parsed, answers)
    accs = run_accuracies(correct)
    return {**agreement_summary(raw, parsed, convention),
            "best_acc": best_accuracy(correct), "worst_acc": worst_accuracy(correct),
            "median_acc": float(statistics.median(accs)),
            "acc_spread": best_minus_worst(correct) if convention == "release" else max(accs) - min(accs),
            "run_accuracies": accs, "n_runs": len(raw), "n_questions": len(raw[0])}


def agreement_summary(raw_runs: Sequence[Sequence[Any]], parsed_runs: Sequence[Sequence[Any]],
                      convention: str = "paper") -> dict[str, float]:
    """The measures that need no answer key: ``tar_r`` (TARr@N), ``tar_a`` (TARa@N; :func:`release_agreement_rate`
    under ``convention="release"``) and ``parse_failure_rate`` (replies without a letter: None, and under the
    release convention also :data:`AMBIGUOUS` and :data:`MISSING`)."""
    check_convention(convention)
    raw = _matrix(raw_runs, "raw_runs")
    parsed = _matrix(parsed_runs, "parsed_runs")
    if convention == "release":
        failures = [[None if p in (AMBIGUOUS, MISSING) else p for p in run] for run in parsed]
        return {"tar_r": total_agreement_rate(raw), "tar_a": release_agreement_rate(parsed),
                "parse_failure_rate": parse_failure_rate(failures)}
    return {"tar_r": total_agreement_rate(raw), "tar_a": total_agreement_rate(parsed),
            "parse_failure_rate": parse_failure_rate(parsed)}
