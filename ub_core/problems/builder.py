"""Building sampled problems and banks of them: the public functions a lab uses for its own bank.

- :func:`scalar_problem`: one :class:`~ub_core.problems.Problem` from a distribution family, its parameters and the
  prompt text; the answer format, the support, the bounds and the sampler follow from the family (the KS@N bank
  builds its generated problems with it);
- :func:`problem_bank`: a :class:`~ub_core.problems.Bank` record from a function that returns the problems, with a
  prompt index (:func:`prompt_index`) so that the offline reference models (``ub/oracle``, ``ub-oracle``) answer
  them.

A bank registered under the entry-point group ``unpredictabench.banks`` (:mod:`ub_core.plugins`) is then seen by
``ub bank list --bank NAME``, ``ub score``, ``inspect eval ub_inspect/ksn -T bank=NAME`` and lm-eval's
``metadata: {bank: NAME}``: see ``examples/custom_bank/``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .. import distributions as D
from .base import Bank, Problem

__all__ = ["scalar_problem", "answer_format", "problem_bank", "prompt_index"]


def answer_format(family: str, params: Mapping) -> tuple[str, tuple[str, ...]]:
    """``(answer format, options)`` of a family's draws: ``option`` with the labels for a categorical family,
    ``integer`` for a discrete one, else ``number``."""
    support = D.support_kind(family, params)
    if support == "categorical":
        return "option", tuple(params["labels"])
    if support == "discrete":
        return "integer", ()
    return "number", ()


def scalar_problem(problem_id: str, family: str, params: Mapping, prompt: str, *, bank: str,
                   bank_version: str | None, category: str, task_type: str | None = None, regime: str = "",
                   modality: str = "unimodal", subcategory: str | None = None,
                   metadata: Mapping[str, Any] | None = None, uid: str | None = None) -> Problem:
    """A problem whose answer is one draw of ``family`` with ``params`` (validated: a one-line
    :class:`~ub_core.distributions.ParameterError` otherwise), asked by ``prompt`` (our answer-format instruction
    for the family's draws is appended).

    ``bank`` and ``bank_version`` name the registered bank it belongs to (the version keys the ground-truth cache;
    None: never cached); ``category`` groups the per-category scores (``task_type`` defaults to it); ``regime``,
    ``modality``, ``subcategory``, ``metadata`` and ``uid`` are recorded as given. The ground truth is the family's
    sampler, a pure function of (problem id, seed, size)."""
    params = D.validate(family, params)
    fmt, options = answer_format(family, params)
    low, high = D.support_bounds(family, params)
    if fmt == "option":
        low, high = 0.0, float(len(options) - 1)
    fam = D.get_family(family)

    def sampler(rng: np.random.Generator, size: int, _fam=fam, _p=params) -> np.ndarray:
        return _fam.draw(rng, _p, size)

    return Problem(id=problem_id, bank=bank, bank_version=bank_version, category=category,
                   task_type=task_type or category, family=family, params=params, regime=regime, modality=modality,
                   support=D.support_kind(family, params), answer_format=fmt, prompt=prompt, sampler=sampler,
                   subcategory=subcategory, options=options, low=low, high=high, metadata=dict(metadata or {}),
                   uid=uid)


_KEY = 40  # prompts are indexed by their first characters, then confirmed by a prefix match


def prompt_index(problems: Callable[[], Sequence[Problem]]) -> Callable[[str], Problem | None]:
    """A bank's prompt index (``Bank.find``): the problem whose task text starts ``text`` (any instruction may
    follow it, ours or a list-prompting one), the longest such prompt when several do; None when none does.
    ``problems`` is called once, on the first lookup."""
    index: dict[str, list[Problem]] = {}

    def find(text: str) -> Problem | None:
        if not index:
            for p in problems():
                index.setdefault(p.prompt[:_KEY], []).append(p)
        text = str(text)
        matches = [p for p in index.get(text[:_KEY], ()) if text.startswith(p.prompt)]
        return max(matches, key=lambda p: len(p.prompt)) if matches else None

    return find


def problem_bank(name: str, version: str, problems: Callable[[], Sequence[Problem]],
                 id_prefixes: Sequence[str] = ()) -> Any:
    """A :class:`~ub_core.problems.Bank` of the problems ``problems()`` returns (called once, on first use), at
    ``version``, with a prompt index. ``id_prefixes`` (every id of the bank starts with one of them) route an id
    lookup to it without loading the other banks. One edition: the ``size`` a loader is asked for is ignored."""
    load_once = lru_cache(maxsize=1)(lambda: tuple(problems()))
    return Bank(name, load=lambda size=None: load_once(), version=lambda: str(version),
                id_prefixes=tuple(id_prefixes), find=prompt_index(load_once))
