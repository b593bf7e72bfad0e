"""Batch replies: every draw of a reply that lists many values, read as a person reads it.

Part of :mod:`ub_core.parsing`. :func:`parse_number_list` reads *one* list (the last group, fence or run of list
lines), which suits a reply that holds one answer list. A batch reply (the dice paper's one request for 1,000
draws) often splits its list: headed blocks ("Values 1-100:", "### Batch 2"), several code fences or JSON lists,
bullets, numbering, a closing line of prose. A person reads all of the blocks as one list and none of the prose:
:func:`parse_batch_reply` does the same.

How a reply is read (:func:`parse_batch_reply`):

* ``<think>...</think>`` blocks are dropped; a reply that ends inside one holds no answer (a failure).
* An ``<answer>`` block or an ``"answer"`` key, when present, is the whole answer; otherwise the whole reply is.
* The text is read line by line, code-fence lines (```` ```json ````) skipped and fence contents read like any
  other line. After an item marker (``1.``, ``2)``, ``-``, ``*``, ``Sample 3:``, ``#4:``) and brackets are
  removed, a line that holds numbers and separators only (``, ; |``, spaces, quotes, a closing ``.`` or ``...``)
  is a *data line*: all its numbers are draws, split by :func:`~ub_core.parsing.numbers.parse_number_list`'s
  rules (decimal commas, thousands groups).
* Any other line is prose: its numbers are not draws (totals, means, counts, indices, ranges such as
  ``1-100``, headings). Only a bracket group inside it that itself holds numbers and separators only
  (``Here they are: [0.1, 0.2]``, ``{"values": [0.1, 0.2]}``) is read, unless the line is a heading (it ends
  with ``:``).
* The draws of all data lines and groups, in reply order, are the answer list.
"""

from __future__ import annotations

import re

from .numbers import _split_line, _strip_marker
from .region import _strong_region, _tidy
from .text import Parsed, _guarded, _prepare, _snip
from .tokens import _scan

__all__ = ["parse_batch_reply"]

_THINK_RE = re.compile(r"<think\s{0,3}>.*?</think\s{0,3}>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN_RE = re.compile(r"<think\s{0,3}>", re.IGNORECASE)
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_BRACKETS_RE = re.compile(r"[\[\]{}]")
#: what may stand between the numbers of a data line: separators, spaces, quotes (JSON strings), a closing full
#: stop, an ellipsis
_DATA_LEFTOVER_RE = re.compile(r"[\s,;|\"'.\u2026]*")
#: bracket groups without nesting, read inside a prose line
_GROUP_RE = re.compile(r"\[([^\[\]{}]*)\]|\{([^\[\]{}]*)\}")


def _data_values(s: str) -> tuple[list[float] | None, str | None]:
    """The numbers of ``s`` when it holds numbers and, between them, separators only: ``(values, None)``;
    ``(None, None)`` when it is prose; ``(None, reason)`` when it is data with a malformed element. Split first by
    :func:`~ub_core.parsing.numbers.parse_number_list`'s rules (``;``, comma + space, bare commas, ``|``), so
    that ``0,0.5`` is two numbers there as here."""
    values: list[float] = []
    problem = None
    for item in _split_line(s):
        it = _tidy(item).strip("\"' ").rstrip(".\u2026").strip()
        if not it:
            continue
        toks = _scan(it)
        if not toks:
            return None, None
        leftover, pos = [], 0
        for tok in toks:
            leftover.append(it[pos: tok.start])
            pos = tok.end
        leftover.append(it[pos:])
        if _DATA_LEFTOVER_RE.fullmatch("".join(leftover)) is None:
            return None, None
        for tok in toks:
            if tok.error is not None and problem is None:
                problem = f"element {len(values) + 1} ({_snip(tok.text)}) rejected: {tok.error}"
            values.append(tok.value)  # type: ignore[arg-type]
    if not values:
        return None, None
    return (None, problem) if problem is not None else (values, None)


@_guarded
def parse_batch_reply(text: str) -> Parsed:
    """Every draw of a batch reply, in order; ``value`` is ``list[float]`` (the rules: the module docstring).

    Fails with a reason when nothing is read (no data line, no group), when the reply ends inside ``<think>``, or
    when an element of a data line is malformed (an ambiguous decimal comma, an overflow, NaN)."""
    t = _prepare(text)
    if t is None:
        return Parsed.failure(f"expected a string, got {type(text).__name__}")
    t = _THINK_RE.sub("\n", t)
    if _THINK_OPEN_RE.search(t):
        return Parsed.failure("reply cut off inside <think>: no answer")
    if not t.strip():
        return Parsed.failure("empty input")
    strong = _strong_region(t)
    if strong is not None:
        t = strong
    values: list[float] = []
    for line in t.splitlines():
        if _FENCE_RE.match(line):
            continue
        read, err = _data_values(_BRACKETS_RE.sub(" ", _strip_marker(line.strip())))
        if read is None and err is None and not line.rstrip().endswith(":"):  # prose: its plain groups only
            for m in _GROUP_RE.finditer(line):
                got, err = _data_values(m.group(1) if m.group(1) is not None else m.group(2))
                if err is not None:
                    break
                values.extend(got or ())
        if err is not None:
            return Parsed.failure(err)
        values.extend(read or ())
    if not values:
        return Parsed.failure("no numbers found")
    return Parsed.success(values)
