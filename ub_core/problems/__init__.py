"""Problem banks. ``load_bank(name)`` returns the problems of a bank; ``get_problem(id)`` finds one by id.

Banks: ``ksn`` (UnpredictaBench, 448 problems). The calibration, implicit, explicit, odds and stability banks
register here as they land: one loader per bank in ``_BANKS`` (called with ``size``) and its version in
``_VERSIONS``.

``size`` picks a bank's edition where it has more than one. ``"subset"`` is a stratified default of a few thousand
items; ``"full"`` is everything. ``None`` means the bank's default. Banks with one edition (ksn) accept and ignore
it.
"""

from __future__ import annotations

from typing import Sequence

from .base import ANSWER_FORMATS, SUPPORT_KINDS, Problem, instruction_for, seed_sequence
from .logit_base import LOGIT_BANKS, LogitItem

__all__ = ["Problem", "LogitItem", "LOGIT_BANKS", "BANK_SIZES", "load_bank", "get_problem", "bank_names", "bank_version", "ANSWER_FORMATS",
           "SUPPORT_KINDS", "instruction_for", "seed_sequence", "UnknownProblemError"]


class UnknownProblemError(KeyError):
    """An id or bank name that does not exist; ``str()`` is a one-line message."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0])


def _ksn(size=None):
    from .ksn import ksn_problems

    return ksn_problems()


BANK_SIZES = ("subset", "full")

_BANKS = {"ksn": _ksn,
          "stability": lambda size=None: __import__("ub_core.problems.stability", fromlist=["x"]).stability_items(size)}
_VERSIONS = {"ksn": lambda: __import__("ub_core.problems.ksn", fromlist=["BANK_VERSION"]).BANK_VERSION,
             "stability": lambda: __import__("ub_core.problems.stability", fromlist=["x"]).BANK_VERSION}


def bank_names() -> tuple[str, ...]:
    return tuple(_BANKS)


def bank_version(name: str) -> str:
    try:
        return _VERSIONS[name]()
    except KeyError:
        raise UnknownProblemError(f"unknown bank {name!r}; known: {', '.join(_BANKS)}") from None


def load_bank(name: str = "ksn", *, categories: Sequence[str] | None = None,
              size: str | None = None) -> tuple:
    """The problems of bank ``name`` (edition ``size``), optionally only those whose category is in
    ``categories``."""
    if size is not None and size not in BANK_SIZES:
        raise ValueError(f"unknown bank size {size!r}; expected one of {', '.join(BANK_SIZES)}")
    try:
        loader = _BANKS[name]
    except KeyError:
        raise UnknownProblemError(f"unknown bank {name!r}; known: {', '.join(_BANKS)}") from None
    problems = loader(size)
    if categories:
        wanted = set(categories)
        known = {p.category for p in problems}
        bad = sorted(wanted - known)
        if bad:
            raise UnknownProblemError(f"unknown category {bad[0]!r} for bank {name!r}; known: "
                                      f"{', '.join(sorted(known))}")
        problems = tuple(p for p in problems if p.category in wanted)
    return problems


def get_problem(problem_id: str, bank: str | None = None) -> Problem:
    """Find a problem by id across the banks (or in ``bank``)."""
    for name in ([bank] if bank else _BANKS):
        for p in load_bank(name):
            if p.id == problem_id:
                return p
    raise UnknownProblemError(f"unknown problem id {problem_id!r} (see `ub bank list`)")
