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
from .logprob_base import LOGPROB_BANKS, LogprobItem

__all__ = ["Problem", "LogprobItem", "LOGPROB_BANKS", "BANK_SIZES", "load_bank", "get_problem", "bank_names", "bank_version", "ANSWER_FORMATS",
           "SUPPORT_KINDS", "instruction_for", "seed_sequence", "UnknownProblemError"]


class UnknownProblemError(KeyError):
    """An id or bank name that does not exist; ``str()`` is a one-line message."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0])


def _ksn(size=None):
    from .ksn import ksn_problems

    return ksn_problems()


def _calibration(size=None):
    from .calibration import calibration_items

    return calibration_items(size or "subset")


def _implicit(size=None):
    from .implicit import implicit_items

    return implicit_items(size)


def _explicit(size=None):
    from .explicit import explicit_items

    return explicit_items(size)


BANK_SIZES = ("subset", "full")

def _odds(size=None):
    from .odds import odds_problems

    return odds_problems(size)


def _stability(size=None):
    from .stability import stability_items

    return stability_items(size)


def _bank_module_version(module: str):
    return lambda: __import__(f"ub_core.problems.{module}", fromlist=["BANK_VERSION"]).BANK_VERSION


_BANKS = {"ksn": _ksn, "calibration": _calibration, "implicit": _implicit, "explicit": _explicit, "odds": _odds,
          "stability": _stability}
_VERSIONS = {name: _bank_module_version(name) for name in _BANKS}


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


#: Id prefixes per bank, for routing a lookup to the one bank that can hold an id (``tests/test_scoring_cli.py``
#: checks every id of every edition against this table). A bank missing here is searched for every id.
ID_PREFIXES: dict[str, tuple[str, ...]] = {
    "ksn": ("te-", "ti-", "ce-", "ci-", "mm-", "rw-", "sh-"),
    "calibration": ("cal-",), "implicit": ("imp-",), "explicit": ("exp-",), "odds": ("odds-",),
    "stability": ("stab_",),
}

_INDEX: dict[str, tuple] = {}  # bank -> (its loader, {id: item}), built on first lookup in that bank


def _bank_index(name: str) -> dict:
    """id -> item of one bank: the default edition's items first, then the full edition's (so an id outside a
    default subset still resolves, and an id in both maps to the default edition's object). Rebuilt when the
    bank's loader in ``_BANKS`` changes (tests install fixture banks)."""
    loader = _BANKS[name]
    cached = _INDEX.get(name)
    if cached is not None and cached[0] is loader:
        return cached[1]
    index: dict = {}
    for size in (None, "full"):
        for p in load_bank(name, size=size):
            index.setdefault(p.id, p)
    _INDEX[name] = (loader, index)
    return index


def _candidate_banks(problem_id: str) -> list[str]:
    return [name for name in _BANKS
            if name not in ID_PREFIXES or problem_id.startswith(ID_PREFIXES[name])]


def get_problem(problem_id: str, bank: str | None = None) -> Problem:
    """Find a problem by id across the banks (or in ``bank``).

    One dict lookup per candidate bank: the id's prefix (:data:`ID_PREFIXES`) names the bank, whose id index is
    built once on first use; an id with no known prefix is unknown without loading any bank.
    """
    if bank is not None and bank not in _BANKS:
        raise UnknownProblemError(f"unknown bank {bank!r}; known: {', '.join(_BANKS)}")
    names = [bank] if bank else _candidate_banks(str(problem_id))
    for name in names:
        item = _bank_index(name).get(problem_id)
        if item is not None:
            return item
    raise UnknownProblemError(f"unknown problem id {problem_id!r} (see `ub bank list`)")
