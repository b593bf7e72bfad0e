"""Turning raw model replies into values.

Design notes: docs/design/parsing.md.
"""

from __future__ import annotations

from .batch import parse_batch_reply
from .numbers import parse_number, parse_number_list
from .options import parse_option
from .permutations import parse_permutation
from .region import extract_answer
from .support import check_support
from .text import INVALID_REPLY_PREFIX, MAX_CHARS, Parsed, invalid_reply, invalid_reply_reason
from .tokens import find_numbers
from .odds import parse_percentile, parse_probability

__all__ = [
    "INVALID_REPLY_PREFIX",
    "MAX_CHARS",
    "Parsed",
    "check_support",
    "extract_answer",
    "find_numbers",
    "invalid_reply",
    "invalid_reply_reason",
    "parse_batch_reply",
    "parse_number",
    "parse_number_list",
    "parse_option",
    "parse_percentile",
    "parse_permutation",
    "parse_probability",
]
