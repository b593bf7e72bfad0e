"""The 20 hand-written shuffling problems of the KS@N bank (UnpredictaBench, sec. 3.1 item 6, sec. 3.2, appendix C.1).

Composition as published: integer lists 6, ordinal-word lists ("first", "second", ...) 6, word lists 5, decimal
lists 3. The item lists are the release's, row for row (lists of 2 to 4 items, 60 in all; the paper counts 59); the
wording is ours.

The model answers with one ordering of the items. The scored scalar is Lehmer Z1 of that ordering, taken relative
to the order in which the items are listed in the prompt (``options``): with L1 the number of later entries that
come before the first entry in the listed order, Z1 = L1 / (n - 1). Under a uniformly random shuffle the first
entry is uniform over the n items, so L1 is uniform on {0, ..., n-1} and Z1 uniform on {0, 1/(n-1), ..., 1}.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..base import Problem
from .constants import BANK, BANK_VERSION

__all__ = ["shuffling_problems", "SHUFFLE_LISTS", "TYPE_COUNTS"]

TYPE_COUNTS = {"integer": 6, "ordinal": 6, "word": 5, "decimal": 3}

# (type, items), in the release's row order (``shuffling_human/questions.json`` rows 0-19, so the uid of row i is
# uuid5(NAMESPACE_URL, "shuffling_human/questions.json:<i>")). The item lists are the release's, as listed there
# (including its spelling "forth" in row 5); items are shown in this order, the reference order for Z1.
SHUFFLE_LISTS: tuple[tuple[str, tuple], ...] = (
    ("integer", (1, 2, 3)),
    ("integer", (1, 2, 3, 4)),
    ("integer", (3, 1, 2)),
    ("integer", (3, 2, 1)),
    ("ordinal", ("first", "second", "third")),
    ("ordinal", ("forth", "second", "first", "third")),
    ("ordinal", ("third", "second", "first")),
    ("decimal", (1.26, 3.45, 4.78, 9.59)),
    ("decimal", (8.14, 10.11, 4.23)),
    ("word", ("apple", "banana", "cherry")),
    ("word", ("apple", "date", "banana", "cherry")),
    ("word", ("apple", "banana")),
    ("integer", (2, 1)),
    ("word", ("apple", "banana")),
    ("ordinal", ("first", "second")),
    ("ordinal", ("second", "first")),
    ("ordinal", ("first", "second", "third")),
    ("decimal", (1.26, 3.45, 4.78, 9.59)),
    ("word", ("apple", "banana")),
    ("integer", (1, 2, 3, 4)),
)
RELEASE_FOLDER = "shuffling_human"


def release_uid(folder: str, row: int) -> str:
    """The release's uid of row ``row`` of ``folder``: uuid5(NAMESPACE_URL, "<folder>/questions.json:<row>")."""
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{folder}/questions.json:{row}"))


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


def _prompts() -> list[str]:
    """One prompt per row: template ``row % 10``, moved on to the next template where the same list already has
    that wording (the release repeats some lists, and each problem needs its own prompt)."""
    out: list[str] = []
    for row, (_, items) in enumerate(SHUFFLE_LISTS):
        shown = ", ".join(_show(x) for x in items)
        k = row
        while _TEMPLATES[k % len(_TEMPLATES)].format(items=shown) in out:
            k += 1
        out.append(_TEMPLATES[k % len(_TEMPLATES)].format(items=shown))
    return out


def z1_pmf(n: int) -> dict[Fraction, Fraction]:
    """Exact law of Lehmer Z1 under a uniform shuffle of n items: uniform on {k/(n-1)}."""
    return {Fraction(k, n - 1): Fraction(1, n) for k in range(n)}


def _make(index: int, list_type: str, number: int, items: tuple, prompt: str) -> Problem:
    n = len(items)
    options = tuple(_show(x) for x in items)
    if len(set(options)) != n:
        raise RuntimeError(f"sh-{list_type}-{number:02d}: items must be distinct")

    def sampler(rng: np.random.Generator, size: int, _n=n) -> np.ndarray:
        return rng.integers(0, _n, size=size) / (_n - 1)

    pmf = z1_pmf(n)
    return Problem(
        id=f"sh-{list_type}-{number:02d}", bank=BANK, bank_version=BANK_VERSION, category="shuffling",
        task_type="shuffling",
        subcategory=list_type, family="uniform_permutation", params={"n": n, "items": list(items)},
        regime="none", modality="unimodal", support="permutation", answer_format="permutation",
        prompt=prompt, sampler=sampler, uid=release_uid(RELEASE_FOLDER, index), options=options, low=0.0, high=1.0,
        metadata={"list_type": list_type, "release": {"folder": RELEASE_FOLDER, "row": index},
                  "exact_pmf": {float(z): float(q) for z, q in pmf.items()},
                  "exact_pmf_fraction": {str(z): str(q) for z, q in pmf.items()}})


def shuffling_problems() -> list[Problem]:
    """The 20 shuffling problems in the release's row order; ids number each list type in that order."""
    out = []
    numbers: dict[str, int] = {}
    prompts = _prompts()
    for index, (list_type, items) in enumerate(SHUFFLE_LISTS):
        numbers[list_type] = numbers.get(list_type, 0) + 1
        out.append(_make(index, list_type, numbers[list_type], items, prompts[index]))
    return out
