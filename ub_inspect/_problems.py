"""Solvers and scorers find their problem from the sample, given only small JSON-serialisable arguments.

Inspect writes every solver and scorer argument into the log header and into each sample's score event, and hands
them back as plain JSON when it rebuilds a scorer (``inspect score``, ``inspect eval-retry``). So the arguments name
where the problems come from (``bank``, ``version``, and for the official KS@N release ``dataset``,
``ground_truth`` and ``split``), never the problems themselves; :func:`lookup_problem` finds the sample's problem
by its id (the Sample id is the problem id). Banks are indexed once per process.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from ub_core.problems import Problem, UnknownProblemError, bank_version, get_problem

__all__ = ["lookup_problem", "source_path", "ProblemLookupError"]


class ProblemLookupError(LookupError):
    """A sample whose problem cannot be found with the arguments the log recorded; ``str()`` is one line."""

    def __str__(self) -> str:
        return str(self.args[0])


def source_path(value: Any) -> str | None:
    """A local file or folder argument as an absolute path (so a log re-scored from another directory still finds
    it); anything else (a Hugging Face id, ``builtin``, None) unchanged."""
    if value is None:
        return None
    text = str(value)
    return str(Path(text).resolve()) if text != "builtin" and os.path.exists(text) else text


@lru_cache(maxsize=4)
def _official_index(dataset: str, ground_truth: str | None, split: str) -> dict[str, Problem]:
    from ub_core.release_tools.official import load_official

    return {p.id: p for p in load_official(dataset, ground_truth, split=split)}


def lookup_problem(sample_id: Any, bank: str = "ksn", version: str | None = None, dataset: str = "builtin",
                   ground_truth: str | None = None, split: str = "train") -> Problem:
    """The problem a sample asks: ``sample_id`` in ``bank`` (the built-in edition whose version is ``version``,
    checked when given), or in the official KS@N release ``dataset`` + ``ground_truth`` (``split``)."""
    pid = str(sample_id)
    if dataset not in (None, "builtin"):
        if not ground_truth:
            raise ProblemLookupError(f"sample {pid}: the official release {dataset!r} needs its ground_truth")
        problem = _official_index(str(dataset), str(ground_truth), str(split or "train")).get(pid)
        if problem is None:
            raise ProblemLookupError(f"sample {pid}: no such problem in the official release {dataset!r}")
        return problem
    if version is not None and str(version) != bank_version(bank):
        raise ProblemLookupError(f"sample {pid}: the log was written with {bank} bank version {version}; this "
                                 f"install has {bank_version(bank)} (re-run the evaluation, or install the version "
                                 f"that wrote the log)")
    try:
        if bank == "odds":  # odds ids carry their convention (``-rel``), which the odds module resolves
            from ub_core.problems.odds import odds_item

            return odds_item(pid)
        return get_problem(pid, bank=bank)
    except (KeyError, UnknownProblemError):
        raise ProblemLookupError(f"sample {pid}: no problem with this id in the built-in {bank} bank") from None
