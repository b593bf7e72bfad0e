"""The answer key of a generated multiple-choice question: the letter after its last ``Correct Answer``.

The dice family's MCQ task (the "Bad Dice Players" paper, section 6) asks a model to write a four-option question
with its answer key; the letter it marks correct should be uniform over A-D. :func:`read_answer_key` finds the last
``Correct Answer`` (or ``Correct Option``, any case) followed by ``:`` / ``-`` / ``is`` and optional markdown or a
bracket, and returns the capital letter A-D written there (a lower-case letter is a word, not a key); None when there is
none (a counted parse failure).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["read_answer_key", "ANSWER_KEY_MAX_CHARS"]

#: Longer text is read from its last this many characters (the key comes after the question).
ANSWER_KEY_MAX_CHARS = 20_000

_KEY = re.compile(r"(?i:correct\s+(?:answer|option))\s*(?:[:：\-]|(?i:is))\s*[*_(\[\s]{0,6}([ABCD])(?![A-Za-z])")


def read_answer_key(text: Any) -> str | None:
    """The upper-case letter A-D of the last answer key in ``text``; None for no key or non-text input."""
    if not isinstance(text, str):
        return None
    found = _KEY.findall(text[-ANSWER_KEY_MAX_CHARS:])
    return found[-1] if found else None
