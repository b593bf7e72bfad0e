"""Turning raw model replies into values.

Everything a model writes is treated as hostile input.  The public functions here never raise on any ``str``
(and return a failure for ``None`` or other non-string input); a reply that cannot be read is reported as a
:class:`Parsed` failure carrying a one-line reason, so callers can retry or skip the run.

Public API
----------
``Parsed``             value-or-reason result type
``extract_answer``     locate the answer region inside a reply
``parse_number``       one finite float
``parse_number_list``  a list of finite floats (list prompting)
``parse_batch_reply``  every draw of a batch reply, all its blocks, none of its prose (the dice batch protocol)
``parse_option``       index of the chosen option label
``parse_permutation``  a shuffled order, as indices into the given items
``check_support``      validate a number against a distribution's support

Decisions worth knowing (the tests pin every one of them down):

* ``"1,234,567"`` is a thousands-separated number (comma followed by groups of exactly three digits, first
  group 1-3 digits not starting with 0).  Any other comma sitting directly between digits, such as ``"1,5"``,
  ``"0,500"`` or ``"1,2345"``, is an *ambiguous decimal comma* and makes a scalar parse fail.  Thin spaces,
  no-break spaces and narrow no-break spaces may also group thousands (``"1\\u2009234"``); a plain ASCII
  space never does.
* A percentage keeps its written value: ``"45%"`` parses to ``45.0`` (not ``0.45``).  Prompts that want a
  percentage expect the number as written.
* Units and currency are ignored: ``"3.2 kg"`` -> 3.2, ``"$4.50"`` -> 4.5, ``"-$4.50"`` -> -4.5.
* Scientific notation: ``1e-3``, ``1.2E+05``, ``1.2 × 10^5``, ``1.2x10^-3``, ``1.2·10⁵``, ``1.2 \\times 10^{5}``;
  bare powers ``10^5`` and ``2^10``; fractions ``3/4``, ``-1/2`` and LaTeX ``\\frac{3}{4}``.
* Dashes used as minus signs (U+2212 minus, en/em dash, figure dash, full-width hyphen, ...) count as ``-``;
  non-ASCII decimal digits (full-width, Arabic-Indic, ...) count as their ASCII digit.
* NaN, infinities and numbers that overflow a float (``1e999``, a 401-digit integer) are rejected, never
  returned; the reason of an overflow starts with ``"number too large"``.
* Replies longer than :data:`MAX_CHARS` are cut to their last ``MAX_CHARS`` characters (answers come last).
* Every parser takes time linear in the reply: the regular expressions use possessive quantifiers where
  greedy ones could backtrack quadratically over runs of spaces (``"1 x 10^" + spaces + "x"``, ``"no." +
  spaces``).  ``benchmarks/bench_parsing.py`` prints worst-case timings on such hostile shapes.

Modules: ``text`` (result type, normalisation), ``tokens`` (number tokens), ``region`` (the answer region),
``numbers``, ``options``, ``permutations``, ``support``, ``odds`` (percentile and probability replies), and ``mcq`` (the multiple-choice reader of the stability
task).
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
