"""The answer reader of the non-determinism paper's public release (``breckbaldwin/llm-stability``), as a rule.

``convention="release"`` of the stability family reads replies the way the release's ``evaluate.py`` does (its
``helper_functions.parse_parenthesized_answers`` and ``parse_string``, commit ``c089c02``), so that TARa and the
accuracies of its stored summaries can be recomputed from its raw runs. The rules below were learnt by reading
that code and checked against its stored summaries (the stability README's run-set table); this module is our
own code.

**Letter tasks** (every task but navigate): the options are the bracketed letters ``(A)``, ``(B)``, ... - four
for the MMLU tasks, ``logical_deduction`` and ``ruin_names``, eleven (``A`` to ``K``) for ``geometric_shapes``,
whatever the question offers (:data:`RELEASE_LETTER_COUNTS`). The reply is split at ``\\n`` and read at three
levels of salience, in order: its last line; its last three lines (when it has more than one); the whole reply
(when it has more than three lines). At each level four tests run in order, and the first test that finds any
letter decides:

1. ``The answer is (X)`` / ``the answer is (X)`` (case-sensitive apart from the ``t``);
2. ``(X)`` written exactly;
3. ``(x)`` in either case;
4. ``X`` as a word in either case (``\\bX\\b``): **a bare ``a`` is read as choice A** (``a circle`` names A),
   and ``I`` the pronoun as choice I of the eleven.

One letter found: the answer. Two or more found by the same test: the reply is **ambiguous** (the release's
"Blown UP"). None at any level: **no answer**.

**navigate** (options ``Yes`` / ``No``): the whole reply, ``\\bYes\\b`` / ``\\bNo\\b`` written exactly, then in
either case; one found is the answer, both found by the same test is ambiguous, neither is no answer.

**Empty replies.** The release reads its runs with pandas, for which an empty cell is NaN (missing): such a reply
is neither read nor counted as a failure. :func:`read_release` reports it as ``missing``.

What the three outcomes do to TARa, and the release's spread, are in :mod:`ub_core.metrics.stability`.
Cost is linear in the reply (literal searches and single word-boundary patterns, at most 11 letters x 3 levels
x 4 tests); :func:`read_release` never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from .mcq import LETTERS

__all__ = ["ReleaseRead", "read_release", "release_letters", "RELEASE_LETTER_COUNTS", "RELEASE_WORD_TASKS",
           "AMBIGUOUS", "MISSING"]

#: the parsed answer of an ambiguous reply ("Blown UP") under the release convention: it agrees with nothing
AMBIGUOUS = "<ambiguous>"
#: the parsed answer of an empty reply (a NaN cell for the release's pandas): left out of TARa, never correct
MISSING = "<missing>"

#: letters the release tries per task (``tasks/<task>.py``, ``answer_fn``), whatever the question offers
RELEASE_LETTER_COUNTS = {"geometric_shapes": 11, "college_mathematics": 4, "high_school_european_history": 4,
                         "logical_deduction": 4, "logical_deduction_three_objects": 4, "professional_accounting": 4,
                         "public_relations": 4, "ruin_names": 4}
#: tasks read by option words instead of letters, with the words in the release's order
RELEASE_WORD_TASKS = {"navigate": ("Yes", "No")}


@dataclass(frozen=True)
class ReleaseRead:
    """One reply read by the release's rules: ``outcome`` is ``read`` (``letter`` set), ``no answer``,
    ``ambiguous`` or ``missing``; ``reason`` says which test decided."""

    letter: str | None
    outcome: str
    reason: str

    @property
    def ok(self) -> bool:
        return self.letter is not None

    @property
    def value(self) -> str | None:
        """The parsed answer the metrics take: the letter, ``None`` (no answer), :data:`AMBIGUOUS` or
        :data:`MISSING`."""
        return {"ambiguous": AMBIGUOUS, "missing": MISSING}.get(self.outcome, self.letter)


def release_letters(task: str | None, n_options: int) -> int:
    """How many letters the release tries for ``task`` (its fixed count; ``n_options`` for a task it lacks)."""
    return RELEASE_LETTER_COUNTS.get(str(task), n_options) if task is not None else n_options


def _levels(text: str) -> list[str]:
    lines = text.split("\n")
    levels = ["\n".join(lines[-1:])]
    if len(lines) > 1:
        levels.append("\n".join(lines[-3:]))
    if len(lines) > 3:
        levels.append(text)
    return levels


_LETTER_TESTS = (
    ("'the answer is (X)'", lambda x: re.compile(r"[Tt]he answer is \(" + x + r"\)")),
    ("'(X)' exactly", lambda x: re.compile(r"\(" + x + r"\)")),
    ("'(x)' in any case", lambda x: re.compile(r"\(" + x + r"\)", re.IGNORECASE)),
    ("'x' as a word in any case", lambda x: re.compile(r"\b" + x + r"\b", re.IGNORECASE)),
)
_COMPILED = {x: [(name, make(x)) for name, make in _LETTER_TESTS] for x in LETTERS}


def _found(found: set[str], where: str) -> ReleaseRead | None:
    if len(found) == 1:
        return ReleaseRead(found.pop(), "read", where)
    if len(found) > 1:
        return ReleaseRead(None, "ambiguous", f"ambiguous: {', '.join(sorted(found))} by {where}")
    return None


def _read_letters(text: str, n: int) -> ReleaseRead:
    letters = LETTERS[:n]
    for level, part in zip(("last line", "last 3 lines", "whole reply"), _levels(text)):
        for k, (name, _) in enumerate(_LETTER_TESTS):
            hit = _found({x for x in letters if _COMPILED[x][k][1].search(part)}, f"{name} in the {level}")
            if hit is not None:
                return hit
    return ReleaseRead(None, "no answer", "no answer: no letter at any level")


def _read_words(text: str, words: Sequence[str], letters: Sequence[str]) -> ReleaseRead:
    for name, flags in (("exact word", 0), ("word in any case", re.IGNORECASE)):
        found = {letters[i] for i, w in enumerate(words) if re.search(r"\b" + re.escape(w) + r"\b", text, flags)}
        hit = _found(found, name)
        if hit is not None:
            return hit
    return ReleaseRead(None, "no answer", "no answer: no option word")


def read_release(reply: Any, options: Sequence[str] | int, task: str | None = None) -> ReleaseRead:
    """Read ``reply`` by the release's rules (module docstring). ``options``: the option texts in letter order, or
    their number; ``task``: the release task name (``navigate`` reads words, the others letters; the letter count
    is the release's for its tasks). Without a task, options that are exactly ``Yes`` / ``No`` are read as words.
    Never raises: a reply that is not text, or empty, is ``missing``; bad options are ``no answer``."""
    try:
        if not isinstance(reply, str) or reply == "":
            return ReleaseRead(None, "missing", "missing: empty reply (a NaN cell for the release)")
        n = options if isinstance(options, int) else len(options)
        texts = None if isinstance(options, int) else [str(o) for o in options]
        words = RELEASE_WORD_TASKS.get(str(task)) if task is not None else None
        if words is None and task is None and texts is not None \
                and [t.strip().casefold() for t in texts] == ["yes", "no"]:
            words = ("Yes", "No")
        if words is not None:
            folded = [t.strip().casefold() for t in texts] if texts else []
            letters = [LETTERS[folded.index(w.casefold())] if w.casefold() in folded else LETTERS[i]
                       for i, w in enumerate(words)]
            return _read_words(reply, words, letters)
        n = release_letters(task, n)
        if not 1 <= n <= len(LETTERS):
            return ReleaseRead(None, "no answer", f"no answer: {n} options")
        return _read_letters(reply, n)
    except Exception as e:  # noqa: BLE001 - model output is hostile input; a reader bug must not stop a run
        return ReleaseRead(None, "no answer", f"reader error ({type(e).__name__})")
