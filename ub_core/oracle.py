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

import numpy as np

from .distributions import fmt
from .problems.base import Problem, seed_sequence

__all__ = ["find_problem", "oracle_values", "oracle_replies", "collapse_value", "collapse_replies", "render_value",
           "render_replies",
           "outcome_probabilities", "stability_reply"]

_INDEX: dict[str, list[Problem]] | None = None
_KEY = 40  # index prompts by their first characters (every prompt is longer); confirmed by a prefix match


def find_problem(text: str) -> Problem | None:
    """The built-in KS@N problem whose task text starts ``text`` (any instruction may follow it): how the
    offline models, which see only the prompt, know what they are asked."""
    global _INDEX
    if _INDEX is None:
        from .problems import load_bank

        idx: dict[str, list[Problem]] = {}
        for p in load_bank("ksn"):
            idx.setdefault(p.prompt[:_KEY], []).append(p)
        _INDEX = idx
    matches = [p for p in _INDEX.get(str(text)[:_KEY], ()) if str(text).startswith(p.prompt)]
    if not matches:
        matches = _find_odds(str(text))
    return max(matches, key=lambda p: len(p.prompt)) if matches else None


_ODDS_INDEX: dict[str, dict[str, Problem]] = {}


def _find_odds(text: str) -> list[Problem]:
    """Items of the odds bank (the odds paper) whose prompt starts ``text``: the subset first, then the full edition. The
    bank is indexed only when a prompt is not a KS@N one, so KS@N runs never build it. Its prompts share long
    openings (the task text and the worked examples), so they are indexed whole: ``text`` is a prompt, or a prompt
    plus one appended instruction paragraph (sampling items); anything else falls back to a scan."""
    from .problems.odds import PROMPT_OPENINGS, odds_problems, prompt_convention

    if not text.startswith(PROMPT_OPENINGS):
        return []
    rule = prompt_convention(text)  # the paper's or the public release's answers (odds README, conventions)
    for edition in ("subset", "full"):
        if edition + rule not in _ODDS_INDEX:
            _ODDS_INDEX[edition + rule] = {p.prompt: p for p in odds_problems(edition, rule)}
        index = _ODDS_INDEX[edition + rule]
        for cand in (text, text.rsplit("\n\n", 1)[0]):
            if cand in index:
                return [index[cand]]
    return [p for prompt, p in _ODDS_INDEX["full" + rule].items() if text.startswith(prompt)]


# Offsets the oracle's seed stream from the ground truth's (seed_sequence(id, seed) with small seeds).
_ORACLE_STREAM = 0x5EED_0000


def _oracle_rng(problem: Problem, seed: int) -> np.random.Generator:
    return np.random.default_rng(seed_sequence(problem.id, _ORACLE_STREAM + int(seed)))


def render_value(problem: Problem, value) -> str:
    """Render one scored value as a reply in our braces format."""
    if problem.answer_format == "option":
        return "{" + problem.options[int(value)] + "}"
    if problem.answer_format == "permutation":
        order = [problem.options[i] for i in value]
        return "{" + ", ".join(order) + "}"
    if problem.answer_format == "integer":
        return "{" + str(int(round(float(value)))) + "}"
    return "{" + repr(float(value)) + "}"


def render_replies(problem: Problem, values: list, k: int = 1) -> list[str]:
    """Replies holding ``k`` values each (list prompting, ``{a, b, c}``); one value per reply when ``k`` is 1."""
    if k == 1:
        return [render_value(problem, v) for v in values]
    return ["{" + ", ".join(render_value(problem, v).strip("{}") for v in values[i:i + k]) + "}"
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
    """The reply of the offline models to a built-in stability (the non-determinism paper) question, ``None`` for any other
    prompt: ``oracle`` names the correct letter, ``collapse`` always ``A``; both identically on every run, so
    TARr = TARa = 1."""
    from .problems.stability import find_stability_item

    item = find_stability_item(text)
    if item is None:
        return None
    return f"ANSWER: {item.answer if mode == 'oracle' else 'A'}"
