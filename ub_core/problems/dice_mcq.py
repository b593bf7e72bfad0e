"""The "Bad Dice Players" downstream MCQ task as live requests (the paper's section 6): a model writes
``N`` four-option multiple-choice questions, each with its answer key, and the letters it marks correct should be
uniform over A-D (:func:`ub_core.metrics.dice.letter_uniformity`).

Request ``i`` (0-based) is :func:`mcq_item`'s prompt, our own wording: one question on a topic of
:data:`MCQ_TOPICS` (cycled, so the requests differ), its options labelled A-D, the key on a last line
``Correct Answer: <letter>`` (read back by :func:`ub_core.parsing.answer_key.read_answer_key`). Nothing in the
prompt favours a letter.

The offline models find a request through the dice bank's prompt index (:func:`find_mcq_item`, asked by
:func:`ub_core.problems.dice.find_dice_item`) and answer it with :func:`mcq_reply`: ``ub/oracle`` marks a letter
drawn uniformly from A-D by a seeded stream of the request's index (:func:`oracle_letter`: the letters of N requests
are N independent uniform draws), ``ub/collapse`` always marks ``A``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..metrics.dice import MCQ_LETTERS
from .base import seed_sequence

__all__ = ["MCQ_TOPICS", "DiceMcqItem", "mcq_item", "mcq_items", "find_mcq_item", "oracle_letter", "mcq_reply",
           "MAX_QUESTIONS"]

MAX_QUESTIONS = 100_000
#: Subjects the requests cycle through (ours): general knowledge, none of them about letters or order.
MCQ_TOPICS = ("world geography", "basic chemistry", "European history", "human biology", "astronomy",
              "classical music", "computer science", "economics", "world literature", "mathematics",
              "ancient civilisations", "ecology", "physics", "art history", "linguistics", "sports",
              "nutrition", "geology", "philosophy", "film history")

_PROMPT = ("Write one new multiple-choice question (question {number} of a quiz) about {topic}. Give exactly four "
           "options, labelled A, B, C and D, one per line, of which exactly one is correct. On the last line, "
           "write 'Correct Answer: ' followed by the letter of the correct option.")
_FIND = re.compile(r"Write one new multiple-choice question \(question (\d{1,6}) of a quiz\) "
                   r"about ([a-zA-Z ]{1,40})\. ")


@dataclass(frozen=True)
class DiceMcqItem:
    """Request ``index`` of the MCQ task."""

    index: int
    topic: str

    bank = "dice"
    family = "mcq"

    @property
    def id(self) -> str:
        return f"dice-mcq-{self.index + 1:05d}"

    @property
    def prompt(self) -> str:
        return _PROMPT.format(number=self.index + 1, topic=self.topic)

    full_prompt = prompt


def mcq_item(index: int) -> DiceMcqItem:
    """Request ``index`` (0-based); a one-line ValueError out of range."""
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < MAX_QUESTIONS:
        raise ValueError(f"MCQ request index must be an integer in [0, {MAX_QUESTIONS}), got {index!r}")
    return DiceMcqItem(index, MCQ_TOPICS[index % len(MCQ_TOPICS)])


def mcq_items(n: int) -> list[DiceMcqItem]:
    """The first ``n`` requests."""
    return [mcq_item(i) for i in range(int(n))]


def find_mcq_item(text: str) -> DiceMcqItem | None:
    """The request whose prompt ``text`` starts with (any instruction may follow it), or None."""
    m = _FIND.match(str(text))
    if m is None:
        return None
    index = int(m.group(1)) - 1
    if not 0 <= index < MAX_QUESTIONS:
        return None
    item = mcq_item(index)
    return item if str(text).startswith(item.prompt) else None


def oracle_letter(index: int, seed: int = 0) -> str:
    """``ub/oracle``'s answer key for request ``index``: uniform over A-D, from the request's own seeded stream."""
    rng = np.random.default_rng(seed_sequence(f"dice-mcq-{index}", seed))
    return MCQ_LETTERS[int(rng.integers(len(MCQ_LETTERS)))]


def mcq_reply(item: DiceMcqItem, mode: str) -> str:
    """The offline models' question: options A-D and the answer key (the oracle's :func:`oracle_letter`, collapse's
    ``A``)."""
    key = oracle_letter(item.index) if mode == "oracle" else MCQ_LETTERS[0]
    options = "\n".join(f"{letter}. option {letter.lower()} of question {item.index + 1}" for letter in MCQ_LETTERS)
    return f"Question {item.index + 1}: which statement about {item.topic} is true?\n{options}\nCorrect Answer: {key}"
