"""Offline reference log-probabilities for the option-logprob banks (calibration, implicit, explicit).

The offline models see only text. :func:`find_option_item` maps a prompt back to its :class:`OptionItem`;
:func:`split_option_text` does the same for a prompt followed by a continuation (how Inspect's
``prompt_logprobs`` route asks). The oracle then gives each continuation its true log-probability:

- the canonical variant ``" " + option_i`` gets ``log p_i`` (``-inf`` where ``p_i = 0``);
- every other surface variant, and any other continuation, gets ``-inf`` (probability 0).

So the option mass equals the ideal distribution, PM = 1, and the normalised distribution is the ideal one:
WD = 0 and KL = 0 (the ceiling). The collapsed model puts all mass on the first option's canonical variant.

The index covers the registered log-probability banks, both editions: the subset is indexed on first use, the
full editions on the first prompt the subset lacks. Both are rebuilt when a bank's record in
``ub_core.problems.BANKS`` changes (tests install fixture banks).
"""

from __future__ import annotations

import math

from .option_logprob import canonical_variant
from ..problems.option_item import OPTION_LOGPROB_BANKS, OptionItem

__all__ = ["OPTION_LOGPROB_MODES", "find_option_item", "split_option_text", "oracle_option_logprob",
           "oracle_variant_logprobs", "oracle_top_logprobs", "oracle_choice", "find_calibration_item",
           "find_implicit_item", "find_explicit_item"]

OPTION_LOGPROB_MODES = ("oracle", "collapse")

# Longest continuation the prefix search tries (a surface variant is an option word plus one space).
_MAX_CONTINUATION = 128

# One index per edition: the subset is small and answers the default runs; the full editions (calibration's
# has about 200,000 items, ~10 s to index) are built only when a prompt is not in the subset.
_INDEXES: dict[str, dict[str, OptionItem]] = {}
_INDEX_KEY: tuple | None = None


def _banks_key() -> tuple:
    from ..problems import BANKS

    # the records themselves (hashable, frozen), not their ids: a freed fixture record's id may be reused
    return tuple((name, BANKS.get(name)) for name in OPTION_LOGPROB_BANKS)


def _refresh() -> None:
    """Drop the indexes and the cached splits when a bank's record changed (compared by identity first: cheap)."""
    global _INDEX_KEY
    key = _banks_key()
    if key != _INDEX_KEY:
        _INDEXES.clear()
        _SPLITS.clear()
        _INDEX_KEY = key


def _index(size: str) -> dict[str, OptionItem]:
    _refresh()
    if size not in _INDEXES:
        from ..problems import BANKS, load_bank

        idx: dict[str, OptionItem] = {}
        for name in OPTION_LOGPROB_BANKS:
            if name in BANKS:
                for item in load_bank(name, size=size):
                    idx.setdefault(item.prompt, item)
        _INDEXES[size] = idx
    return _INDEXES[size]


def _lookup(text: str, cuts) -> tuple[OptionItem, int] | None:
    """The first of the candidate prompts ``text[:cut]`` (``cuts`` in order of preference) that is an item's
    prompt, searching the subset index and then the full one: ``(item, position in cuts)``. Each candidate is
    sliced only when it is asked (the first cuts usually hit)."""
    for size in ("subset", "full"):
        idx = _index(size)
        for pos, cut in enumerate(cuts):
            item = idx.get(text[:cut])
            if item is not None:
                return item, pos
    return None


def find_option_item(text: str) -> OptionItem | None:
    """The log-probability item whose prompt is exactly ``text``, else ``None``."""
    text = str(text)
    hit = _lookup(text, (len(text),))
    return hit[0] if hit else None


def split_option_text(text: str) -> tuple[OptionItem, str] | None:
    """``(item, continuation)`` where ``text`` is the item's prompt followed by ``continuation`` (possibly
    empty), choosing the longest matching prompt; ``None`` when no item's prompt starts ``text``."""
    text = str(text)
    cuts = range(len(text), max(0, len(text) - _MAX_CONTINUATION) - 1, -1)
    hit = _lookup(text, cuts)
    if hit is None:
        return None
    item, pos = hit
    return item, text[cuts[pos]:]


# The last texts' splits: the three banks' prompt indexes ask in turn for one text, and a request is often asked
# again (the same prompt each epoch). Cleared with the indexes (:func:`_refresh`).
_SPLITS: dict[str, tuple[OptionItem, str] | None] = {}
_SPLITS_MAX = 256


def _find_in(bank: str, text: str) -> OptionItem | None:
    """One option-logprob bank's prompt index (``Bank.find``): the item of ``bank`` whose prompt starts ``text``
    (a continuation may follow). The three banks share one index; the last lookups are cached, so asking the
    three in turn searches once."""
    _refresh()
    text = str(text)
    if text in _SPLITS:
        hit = _SPLITS[text]
    else:
        if len(_SPLITS) >= _SPLITS_MAX:
            del _SPLITS[next(iter(_SPLITS))]  # the oldest
        hit = _SPLITS[text] = split_option_text(text)
    return hit[0] if hit is not None and hit[0].bank == bank else None


def find_calibration_item(text: str) -> OptionItem | None:
    return _find_in("calibration", text)


def find_implicit_item(text: str) -> OptionItem | None:
    return _find_in("implicit", text)


def find_explicit_item(text: str) -> OptionItem | None:
    return _find_in("explicit", text)


def _mass(item: OptionItem, mode: str) -> list[float]:
    if mode == "oracle":
        return [float(p) for p in item.probabilities]
    if mode == "collapse":
        return [1.0] + [0.0] * (len(item.options) - 1)
    raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(OPTION_LOGPROB_MODES)}")


def oracle_option_logprob(item: OptionItem, continuation: str, mode: str = "oracle") -> float:
    """log P(continuation | prompt) of the reference model: ``log p_i`` for option i's canonical variant,
    ``-inf`` for anything else."""
    for option, q in zip(item.options, _mass(item, mode)):
        if continuation == canonical_variant(option):
            return math.log(q) if q > 0 else -math.inf
    return -math.inf


def oracle_choice(item: OptionItem, mode: str = "oracle") -> int:
    """Index of the option the reference model would write (the most probable one; the first on ties)."""
    mass = _mass(item, mode)
    return max(range(len(mass)), key=lambda i: (mass[i], -i))


def oracle_variant_logprobs(item: OptionItem, mode: str = "oracle") -> dict[str, float]:
    """The canonical variant of every option with its reference log-probability."""
    return {canonical_variant(o): oracle_option_logprob(item, canonical_variant(o), mode) for o in item.options}


def oracle_top_logprobs(item: OptionItem, mode: str = "oracle", k: int = 20) -> list[tuple[str, float]]:
    """The first-token top-``k`` list of the reference model (every canonical variant is one "token"):
    options with positive probability, most probable first."""
    pairs = [(v, lp) for v, lp in oracle_variant_logprobs(item, mode).items() if lp > -math.inf]
    pairs.sort(key=lambda kv: -kv[1])
    return pairs[: max(1, int(k))]
