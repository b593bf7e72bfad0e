"""Reference "models" that need no network: the Random Machine (oracle) and a collapsed model.

- :func:`oracle_replies` answers with fresh true draws of the problem (UnpredictaBench's *Random Machine*, the ceiling:
  it must score KS@N = 100% up to the expected false rejections). Draws use a seed stream disjoint from the
  ground truth's, so oracle answers are independent of the reference sample.
- :func:`collapse_replies` always gives the same typical answer (the most frequent value for discrete targets,
  the median for continuous ones, the identity order for shuffles): the failure mode the benchmark measures.

Both return *text* replies in our answer format, so they exercise the same parsing path as a real model. The
Inspect and lm-eval providers are thin wrappers over these functions.
"""

from __future__ import annotations

import math

import numpy as np

from .distributions import fmt
from .problems.base import Problem, seed_sequence

__all__ = ["find_problem", "oracle_values", "oracle_replies", "collapse_value", "collapse_replies", "render_value",
           "render_replies", "significant_text",
           "outcome_probabilities", "stability_reply", "text_reply"]

def find_problem(text: str) -> Problem | None:
    """The built-in sampled problem (KS@N or odds) whose prompt ``text`` states (any instruction may follow it):
    how the offline models, which see only the prompt, know what they are asked. The banks' own prompt indexes
    answer (:func:`ub_core.problems.find_item`)."""
    from .problems import find_item

    hit = find_item(text)
    return hit[1] if hit is not None and isinstance(hit[1], Problem) else None


def text_reply(item, mode: str) -> str | None:
    """The one reply of the offline models to a question with a single right answer (a stability item: the
    correct letter for the oracle, always ``A`` for collapse), ``None`` for an item they answer otherwise
    (sampled problems are drawn, log-probability items are scored)."""
    from .problems.dice_mcq import DiceMcqItem, mcq_reply
    from .problems.stability import StabilityItem

    if isinstance(item, StabilityItem):
        return f"ANSWER: {item.answer if mode == 'oracle' else 'A'}"
    if isinstance(item, DiceMcqItem):  # a generated question whose answer key is the point (dice MCQ task)
        return mcq_reply(item, mode)
    return None


# Offsets the oracle's seed stream from the ground truth's (seed_sequence(id, seed) with small seeds).
_ORACLE_STREAM = 0x5EED_0000


def _oracle_rng(problem: Problem, seed: int) -> np.random.Generator:
    return np.random.default_rng(seed_sequence(problem.id, _ORACLE_STREAM + int(seed)))


def significant_text(value: float, digits: int) -> str:
    """``value`` written with ``digits`` significant digits, at least the units (``1500``, ``0.0042``, ``-3.1``,
    ``0``; a non-finite value as ``repr``): the writer of the offline models' ``-M digits=N``."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else repr(v)
    exp10 = math.floor(math.log10(abs(v))) + 1 - int(digits)
    rounded = round(v / 10.0 ** exp10) * 10.0 ** exp10
    text = f"{rounded:.{max(0, -exp10)}f}"
    return "0" if float(text) == 0 else text


def render_value(problem: Problem, value, digits: int | None = None) -> str:
    """Render one scored value as a reply in our braces format: a number in full precision (``repr``), or with
    ``digits`` significant digits (:func:`significant_text`; whole-number and option answers are unaffected)."""
    if problem.answer_format == "option":
        return "{" + problem.options[int(value)] + "}"
    if problem.answer_format == "permutation":
        order = [problem.options[i] for i in value]
        return "{" + ", ".join(order) + "}"
    if problem.answer_format == "integer":
        return "{" + str(int(round(float(value)))) + "}"
    if digits is not None:
        return "{" + significant_text(value, digits) + "}"
    return "{" + repr(float(value)) + "}"


def render_replies(problem: Problem, values: list, k: int = 1, digits: int | None = None) -> list[str]:
    """Replies holding ``k`` values each (list prompting, ``{a, b, c}``); one value per reply when ``k`` is 1.
    ``digits``: as :func:`render_value`."""
    if k == 1:
        return [render_value(problem, v, digits) for v in values]
    return ["{" + ", ".join(render_value(problem, v, digits).strip("{}") for v in values[i:i + k]) + "}"
            for i in range(0, len(values) - k + 1, k)]


def oracle_values(problem: Problem, n: int, seed: int = 0) -> list:
    """``n`` fresh true outcomes (scalars; permutations as index tuples for shuffling problems)."""
    rng = _oracle_rng(problem, seed)
    if problem.answer_format == "permutation":
        k = len(problem.options)
        return [tuple(int(i) for i in rng.permutation(k)) for _ in range(n)]
    return list(problem.sampler(rng, int(n)))


def oracle_replies(problem: Problem, n: int, seed: int = 0) -> list[str]:
    """``n`` replies of the Random Machine for ``problem``."""
    return [render_value(problem, v) for v in oracle_values(problem, n, seed)]


def collapse_value(problem: Problem, truth: np.ndarray | None = None):
    """The single answer a fully collapsed model repeats."""
    if problem.answer_format == "permutation":
        return tuple(range(len(problem.options)))
    if "collapse_answer" in problem.metadata:  # a question with one exact answer (odds bank): its typical reply
        return float(problem.metadata["collapse_answer"])
    truth = problem.truth() if truth is None else truth
    if problem.support in ("discrete", "categorical", "mixed"):
        values, counts = np.unique(truth, return_counts=True)
        return float(values[np.argmax(counts)])
    return float(np.median(truth))


def collapse_replies(problem: Problem, n: int, truth: np.ndarray | None = None) -> list[str]:
    return [render_value(problem, collapse_value(problem, truth))] * int(n)


def outcome_probabilities(problem: Problem) -> dict[str, float] | None:
    """Exact probabilities of each rendered outcome where the outcome set is finite and small, else ``None``.

    Used by providers that report top log-probabilities. Categorical problems use their ``pvals``; finite
    discrete ones their PMF; shuffles the uniform distribution over orderings.
    """
    from . import distributions as D

    if problem.answer_format == "option":
        pv = problem.params.get("pvals")
        if pv is None:
            return None
        return {lab: float(q) for lab, q in zip(problem.options, pv)}
    if problem.answer_format == "integer" and np.isfinite(problem.low) and np.isfinite(problem.high) \
            and problem.high - problem.low <= 50:
        if problem.family == "empirical_discrete":
            return {fmt(v): float(q) for v, q in zip(problem.params["values"], problem.params["pvals"])}
        dist = D.frozen(problem.family, problem.params)
        if dist is None:
            return None
        ks = np.arange(int(problem.low), int(problem.high) + 1)
        return {str(int(k)): float(dist.pmf(k)) for k in ks}
    return None


def stability_reply(text: str, mode: str) -> str | None:
    """The reply of the offline models to a built-in stability (the non-determinism paper) question, ``None`` for any
    other prompt: ``oracle`` names the correct letter, ``collapse`` always ``A``; both identically on every run, so
    TARr = TARa = 1."""
    from .problems.stability import find_stability_item

    item = find_stability_item(text)
    return None if item is None else text_reply(item, mode)
