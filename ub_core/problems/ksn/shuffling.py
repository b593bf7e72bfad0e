"""The 20 hand-written shuffling problems of the KS@N bank (UnpredictaBench, sec. 3.1 item 6, sec. 3.2, appendix C.1).

Composition as published: integer lists 6, ordinal-word lists ("first", "second", ...) 6, word lists 5, decimal
lists 3; lists of 2 to 5 distinct items, 59 items in all (mean length 2.95). The lists and the wording are ours.

The model answers with one ordering of the items. The scored scalar is Lehmer Z1 of that ordering, taken relative
to the order in which the items are listed in the prompt (``options``): with L1 the number of later entries that
come before the first entry in the listed order, Z1 = L1 / (n - 1). Under a uniformly random shuffle the first
entry is uniform over the n items, so L1 is uniform on {0, ..., n-1} and Z1 uniform on {0, 1/(n-1), ..., 1}.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..base import Problem
from .bank import BANK_VERSION

__all__ = ["shuffling_problems", "SHUFFLE_LISTS", "TYPE_COUNTS"]

BANK = "ksn"
TYPE_COUNTS = {"integer": 6, "ordinal": 6, "word": 5, "decimal": 3}

# (type, items). Items are listed in the order the prompt shows them; that order is the reference for Z1.
SHUFFLE_LISTS: tuple[tuple[str, tuple], ...] = (
    ("integer", (4, 9)),
    ("integer", (12, 3, 7)),
    ("integer", (1, 2, 3)),
    ("integer", (15, 8, 23, 42)),
    ("integer", (6, 1, 9, 2, 5)),
    ("integer", (100, 250)),
    ("ordinal", ("first", "second")),
    ("ordinal", ("first", "second", "third")),
    ("ordinal", ("second", "fourth", "sixth")),
    ("ordinal", ("first", "second", "third", "fourth")),
    ("ordinal", ("ninth", "tenth")),
    ("ordinal", ("third", "fifth", "seventh")),
    ("word", ("apple", "river")),
    ("word", ("red", "green", "blue")),
    ("word", ("cat", "lamp", "cloud", "tiger")),
    ("word", ("north", "south", "east")),
    ("word", ("salt", "pepper")),
    ("decimal", (0.5, 1.25, 3.75)),
    ("decimal", (2.2, 7.9)),
    ("decimal", (0.1, 0.01, 1.5, 9.99)),
)

# Our own phrasings; {items} is the list as shown to the model. Each asks for one random ordering.
_TEMPLATES = (
    "Shuffle this list uniformly at random, so that every possible ordering is equally likely: [{items}]. "
    "Give the list in the order your shuffle produced.",
    "Put these items in a random order, as a fair shuffle would: {items}. Report the one ordering you got.",
    "Imagine dealing the following items out of a well-shuffled hat, one at a time: {items}. In what order do "
    "they come out in this single draw?",
    "Here is a list: [{items}]. Apply one fair random shuffle to it (each arrangement equally probable) and "
    "write the shuffled list.",
    "Randomly rearrange the items {items}. Every arrangement should have the same chance; give the arrangement "
    "from one shuffle.",
    "You are a random permutation generator. Permute [{items}] uniformly at random and output the result.",
    "Mix up the order of these entries at random, like shuffling a deck of cards: {items}. What order did this "
    "shuffle give?",
    "Produce one uniformly random ordering of the following items: {items}.",
    "A fair shuffle is applied once to the sequence [{items}]. Show the sequence after the shuffle.",
    "Scramble the list [{items}] so that any permutation of it is equally likely, and give the scrambled list.",
)


def _show(x) -> str:
    return str(x)


def _prompt(index: int, items: tuple) -> str:
    template = _TEMPLATES[index % len(_TEMPLATES)]
    return template.format(items=", ".join(_show(x) for x in items))


def z1_pmf(n: int) -> dict[Fraction, Fraction]:
    """Exact law of Lehmer Z1 under a uniform shuffle of n items: uniform on {k/(n-1)}."""
    return {Fraction(k, n - 1): Fraction(1, n) for k in range(n)}


def _make(index: int, list_type: str, number: int, items: tuple) -> Problem:
    n = len(items)
    options = tuple(_show(x) for x in items)
    if len(set(options)) != n:
        raise RuntimeError(f"sh-{list_type}-{number:02d}: items must be distinct")

    def sampler(rng: np.random.Generator, size: int, _n=n) -> np.ndarray:
        return rng.integers(0, _n, size=size) / (_n - 1)

    pmf = z1_pmf(n)
    return Problem(
        id=f"sh-{list_type}-{number:02d}", bank=BANK, bank_version=BANK_VERSION, category="shuffling", task_type="shuffling",
        subcategory=list_type, family="uniform_permutation", params={"n": n, "items": list(items)},
        regime="none", modality="unimodal", support="permutation", answer_format="permutation",
        prompt=_prompt(index, items), sampler=sampler, options=options, low=0.0, high=1.0,
        metadata={"list_type": list_type,
                  "exact_pmf": {float(z): float(q) for z, q in pmf.items()},
                  "exact_pmf_fraction": {str(z): str(q) for z, q in pmf.items()}})


def shuffling_problems() -> list[Problem]:
    """The 20 shuffling problems in a stable order (integer, ordinal, word, decimal)."""
    out = []
    numbers: dict[str, int] = {}
    for index, (list_type, items) in enumerate(SHUFFLE_LISTS):
        numbers[list_type] = numbers.get(list_type, 0) + 1
        out.append(_make(index, list_type, numbers[list_type], items))
    return out
