"""Hostile documents shared by the tests of every surface that reads outside input (``tests/hostile/``): server
bodies, JSONL lines, results files. Each is the shape a reader must turn into one named error, never a traceback.
"""

from __future__ import annotations

import json
from typing import Any

#: nesting depth of :func:`deep_json` (the issue's figure: far past the interpreter's recursion limit)
DEPTH = 200_000
#: integer lengths: past the float range (309 digits) and past Python's int-to-text limit (4,300 digits)
FLOAT_OVERFLOW_DIGITS = (309, 4300)
OVER_INT_LIMIT_DIGITS = 5001


def deep_json(depth: int = DEPTH) -> str:
    """``[[[[...`` ``depth`` deep and unclosed: the decoder must give up long before the end."""
    return "[" * depth


def huge_int(digits: int) -> str:
    """A JSON integer of ``digits`` digits."""
    return "9" * digits


def with_duplicate_key(obj: dict[str, Any], key: str, value: Any) -> str:
    """``obj`` as JSON with ``key`` written a second time (``value``) at the end: JSON leaves it undefined which
    copy counts, Python's ``json`` keeps the last silently."""
    text = json.dumps(obj)
    return text[:-1] + f", {json.dumps(key)}: {json.dumps(value)}}}"


#: bytes that are not UTF-8 inside an otherwise well-formed JSON object
NOT_UTF8 = b'{"id": "\xff\xfe\xc3\x28"}'


#: log-probabilities a model or server can return for one candidate, each with the words of the reason it must
#: be counted under (``ub_core.logprob.ksn_logprob.clean_logprobs``): never an exception that aborts a run
HOSTILE_LOGPROBS = {
    "nan": (float("nan"), "is nan"),
    "+inf": (float("inf"), "is inf"),
    "positive": (0.5, "> 0: not a probability"),
    "string": ("-1.0", "str, not a number"),
    "bool": (True, "bool, not a number"),
    "huge int": (10 ** 400, "too large for a float"),
    "list": ([-1.0], "list, not a number"),
}
