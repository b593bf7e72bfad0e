"""Problem banks. ``load_bank(name)`` returns the problems of a bank; ``get_problem(id)`` finds one by id.

Every bank is one :class:`Bank` record in :data:`BANKS`: its name, a loader (called with ``size``), its version
(which keys the ground-truth cache and is the Inspect ``Task(version=...)`` / lm-eval ``metadata.version``) and the
id prefixes that route a lookup to it. Registering a bank is one :func:`register_bank` call. Registered banks:
``ksn`` (UnpredictaBench, 448 problems), ``odds``, ``stability``, ``dice``, ``calibration``, ``implicit``, ``explicit``;
and every bank an installed package declares under the entry-point group ``unpredictabench.banks``
(:mod:`ub_core.plugins`), found on first use. A lab builds its problems with :func:`scalar_problem` and its bank
record with :func:`problem_bank` (:mod:`.builder`; ``examples/custom_bank/``).

``size`` picks a bank's edition where it has more than one. ``"subset"`` is a stratified default of a few thousand
items; ``"full"`` is everything. ``None`` means the bank's default. Banks with one edition (ksn) accept and ignore
it.
"""

from __future__ import annotations

import re

from typing import Any, Callable, Sequence

from .base import ANSWER_FORMATS, SUPPORT_KINDS, Bank, Problem, instruction_for, seed_sequence
from .option_item import OPTION_LOGPROB_BANKS, OptionItem

#: Aliases of :class:`OptionItem` and :data:`OPTION_LOGPROB_BANKS` for outside code that imports them under these
#: names ("logprob" alone would name two routes: option log-probabilities and sampling-free KS).
LogprobItem = OptionItem
LOGPROB_BANKS = OPTION_LOGPROB_BANKS

__all__ = ["Problem", "OptionItem", "scalar_problem", "problem_bank", "prompt_index", "answer_format",
           "OPTION_LOGPROB_BANKS", "BANK_SIZES", "Bank", "BANKS", "register_bank", "load_bank",
           "get_problem", "find_item", "bank_names", "bank_version", "ANSWER_FORMATS", "SUPPORT_KINDS",
           "instruction_for",
           "seed_sequence", "UnknownProblemError"]


class UnknownProblemError(KeyError):
    """An id or bank name that does not exist; ``str()`` is a one-line message."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0])


BANK_SIZES = ("subset", "full")

#: Items in each edition of the built-in banks (``None``: the bank has one edition) and the rough seconds per item
#: of an Inspect run on ``ub/oracle`` (measured on a shared 2-core CPU, Inspect's start-up excluded, the sample phase
#: of ``benchmarks/bench_families.py``; a real model is slower). ``ub bank list`` prints them; a test
#: keeps the counts equal to what the banks load.
EDITIONS: dict[str, dict[str | None, int]] = {
    "ksn": {None: 448},
    "odds": {"subset": 576, "full": 9_372},
    "stability": {"subset": 328, "full": 1_210},
    "calibration": {"subset": 3_546, "full": 203_040},
    "implicit": {"subset": 528, "full": 1_405},
    "explicit": {"subset": 528, "full": 1_405},
    "dice": {None: 15},
}
#: Seconds per item of one Inspect run on ``ub/oracle``: the "ms/item after" column of the client-throughput table
#: in ``benchmarks/README.md`` (``benchmarks/bench_families.py``; dice, not benchmarked there: a rough figure), the
#: one source of the run times ``ub bank list`` and the READMEs give (``tests/generic/test_doc_numbers.py``).
ORACLE_SECONDS_PER_ITEM = {"ksn": 0.038, "odds": 0.016, "stability": 0.1, "calibration": 0.040, "implicit": 0.018,
                           "explicit": 0.025, "dice": 0.1}


def rough_duration(seconds: float) -> str:
    """``~40 s``, ``~5 min``, ``~5 h``: a rough figure for a person."""
    if seconds < 90:
        return f"~{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"~{round(seconds / 60)} min"
    return f"~{seconds / 3600:.0f} h"


def edition_note(name: str) -> str | None:
    """One line on a built-in bank's editions: items in each, the default, and a rough ``ub/oracle`` run time;
    None for a bank without such a record (a plug-in)."""
    sizes = EDITIONS.get(name)
    if not sizes:
        return None
    per = ORACLE_SECONDS_PER_ITEM.get(name, 0.0)
    if None in sizes:
        return f"{name}: one edition, {sizes[None]:,} items, {rough_duration(sizes[None] * per)} on ub/oracle"
    parts = [f"{ed} {n:,} items ({rough_duration(n * per)} on ub/oracle)" for ed, n in sizes.items()]
    option = EDITION_OPTION.get(name, "size")
    return (f"{name} editions: {'; '.join(parts)}; subset is the default (Inspect -T {option}=full, "
            f"lm-eval --metadata '{{\"{option}\": \"full\"}}')")


#: the task option that picks the edition, where it is not ``size``
EDITION_OPTION = {"odds": "edition"}


#: name -> Bank, in registration order.
BANKS: dict[str, Bank] = {}


def register_bank(bank: Bank) -> Bank:
    """Add ``bank`` to :data:`BANKS` (a name can be registered once)."""
    if bank.name in BANKS:
        raise ValueError(f"bank {bank.name!r} is already registered")
    BANKS[bank.name] = bank
    return bank


def _discover(force: bool = False) -> None:
    """Register the banks of the installed plug-ins (:mod:`ub_core.plugins`) not registered yet."""
    from ..plugins import BANKS_GROUP, discover

    discover(BANKS_GROUP, Bank, BANKS, register_bank, force=force)


def _bank(name: str) -> Bank:
    """The registered bank ``name`` (a plug-in's too), or a one-line :class:`UnknownProblemError` listing the
    known ones (and why a plug-in of that name was left out, where one was)."""
    if name not in BANKS:
        _discover(force=True)  # a package installed since the last scan
    try:
        return BANKS[name]
    except (KeyError, TypeError):
        from ..plugins import BANKS_GROUP, load_errors

        why = load_errors(BANKS_GROUP).get(name)
        raise UnknownProblemError(f"unknown bank {name!r}; known: {', '.join(BANKS)}"
                                  + (f" (the plug-in {name!r} could not be loaded: {why})" if why else "")) from None


def __getattr__(name: str):
    """The builder functions (:mod:`.builder`), imported on first use: it imports the distribution families."""
    if name in ("scalar_problem", "problem_bank", "prompt_index", "answer_format"):
        from . import builder

        return getattr(builder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _lazy(target: str) -> Callable:
    """``"module:function"``, imported on first call (a bank's module is loaded only when it is used)."""
    path, _, attr = target.partition(":")
    resolved: list[Callable] = []  # the function, once imported (a lookup per request need not import)

    def call(*args, **kwargs):
        if not resolved:
            resolved.append(getattr(__import__(path, fromlist=[attr]), attr))
        return resolved[0](*args, **kwargs)

    return call


def _module_bank(name: str, loader: str, prefixes: tuple[str, ...], *, editions: bool = True,
                 default_size: str | None = None, find: str | None = None) -> Bank:
    """A bank whose loader and ``BANK_VERSION`` live in ``ub_core.problems.<name>``, imported on first use.
    ``editions=False``: the loader takes no ``size`` (one edition); ``find``: its prompt index,
    ``"module:function"``."""
    path = f"ub_core.problems.{name}"

    def module():
        return __import__(path, fromlist=[loader, "BANK_VERSION"])

    def load(size: str | None = None) -> Sequence:
        fn = getattr(module(), loader)
        return fn(size or default_size) if editions else fn()

    return Bank(name, load=load, version=lambda: module().BANK_VERSION, id_prefixes=prefixes,
                find=_lazy(find) if find else None)


# Registration order is also the order in which find_item asks the prompt indexes: the cheap exact ones first,
# the option-logprob banks (a prefix search over their full editions on a miss) last.
register_bank(_module_bank("ksn", "ksn_problems", ("te-", "ti-", "ce-", "ci-", "mm-", "rw-", "sh-"), editions=False,
                           find="ub_core.problems.ksn.bank:find_ksn_problem"))
register_bank(_module_bank("odds", "odds_problems", ("odds-",), find="ub_core.problems.odds:find_odds_problem"))
register_bank(_module_bank("stability", "stability_items", ("stab_",),
                           find="ub_core.problems.stability:find_stability_item"))
register_bank(_module_bank("dice", "dice_items", ("dice-",), find="ub_core.problems.dice:find_dice_item"))
for _name, _loader, _prefix, _size in (("calibration", "calibration_items", "cal-", "subset"),
                                       ("implicit", "implicit_items", "imp-", None),
                                       ("explicit", "explicit_items", "exp-", None)):
    register_bank(_module_bank(_name, _loader, (_prefix,), default_size=_size,
                               find=f"ub_core.logprob.option_logprob_oracle:find_{_name}_item"))


def find_item(text: str) -> tuple[str, Any] | None:
    """``(bank name, item)`` for the item whose prompt ``text`` states, asking each bank's prompt index
    (:attr:`Bank.find`) in registration order; ``None`` when no bank knows the prompt. This is how the offline
    models, which see only text, know what they are asked (the built-in prompts are unique across banks)."""
    _discover()
    for name, bank in list(BANKS.items()):
        if bank.find is not None:
            item = bank.find(str(text))
            if item is not None:
                return name, item
    return None


def bank_names() -> tuple[str, ...]:
    """The registered banks, the installed plug-ins' included."""
    _discover()
    return tuple(BANKS)


def bank_version(name: str) -> str:
    return str(_bank(name).version())


def load_bank(name: str = "ksn", *, categories: Sequence[str] | None = None,
              size: str | None = None) -> tuple:
    """The problems of bank ``name`` (edition ``size``), optionally only those whose category is in
    ``categories``."""
    if size is not None and size not in BANK_SIZES:
        raise ValueError(f"unknown bank size {size!r}; expected one of {', '.join(BANK_SIZES)}")
    problems = _bank(name).load(size)
    if categories:
        wanted = set(categories)
        known = {p.category for p in problems}
        bad = sorted(wanted - known)
        if bad:
            raise UnknownProblemError(f"unknown category {bad[0]!r} for bank {name!r}; known: "
                                      f"{', '.join(sorted(known))}")
        problems = tuple(p for p in problems if p.category in wanted)
    return problems


_INDEX: dict[str, tuple] = {}  # bank -> (its Bank record, {id: item}), built on first lookup in that bank


def _bank_index(name: str) -> dict:
    """id -> item of one bank: the default edition's items first, then the full edition's (so an id outside a
    default subset still resolves, and an id in both maps to the default edition's object). Rebuilt when the
    bank's record in :data:`BANKS` changes (tests install fixture banks)."""
    record = BANKS[name]
    cached = _INDEX.get(name)
    if cached is not None and cached[0] is record:
        return cached[1]
    index: dict = {}
    for size in (None, "full"):
        for p in load_bank(name, size=size):
            index.setdefault(p.id, p)
    _INDEX[name] = (record, index)
    return index


_UID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _candidate_banks(problem_id: str) -> list[str]:
    _discover()
    return [name for name, bank in BANKS.items() if not bank.id_prefixes or problem_id.startswith(bank.id_prefixes)]


def get_problem(problem_id: str, bank: str | None = None) -> Problem:
    """Find a problem by id across the banks (or in ``bank``), or a KS@N problem by its release uid.

    One dict lookup per candidate bank: the id's prefix (:attr:`Bank.id_prefixes`) names the bank, whose id index is
    built once on first use; an id with no known prefix is unknown without loading any bank.
    """
    if bank is not None:
        _bank(bank)  # a one-line error for an unknown bank
    if _UID_RE.match(str(problem_id)):  # a release uid names a KS@N problem (``Problem.uid``)
        for item in load_bank("ksn"):
            if item.uid == str(problem_id).lower():  # release uids are lower-case
                return item
        raise UnknownProblemError(f"no built-in problem has the release uid {problem_id!r}")
    names = [bank] if bank else _candidate_banks(str(problem_id))
    for name in names:
        item = _bank_index(name).get(problem_id)
        if item is not None:
            return item
    raise UnknownProblemError(f"unknown problem id {problem_id!r} (see `ub bank list`)")
