"""Permutations: a shuffled order, as indices into the given items (``parse_permutation``).

Part of :mod:`ub_core.parsing` (see its docstring for the decisions every parser shares)."""

from __future__ import annotations

import json
import math
import re
from typing import Sequence

from .text import Parsed, _guarded, _prepare, _snip, _str
from .tokens import _strict_number
from .region import _strong_region, _tidy
from .numbers import _ITEM_MARKER_RE, _group_region, _strip_marker, _strip_outer

# --------------------------------------------------------------------------------------------------------------
# Permutations
# --------------------------------------------------------------------------------------------------------------


def _item_key(s: object) -> tuple:
    """Comparison key of an item: numeric items by value, others case-insensitively without quotes."""
    if isinstance(s, bool):
        s = _str(s)
    if isinstance(s, (int, float)):
        try:
            v = float(s)
            if math.isfinite(v):
                return ("n", v)
        except (OverflowError, ValueError):
            pass
        s = _str(s)
    if not isinstance(s, str):
        s = _str(s)
    text = _prepare(s) or ""
    text = " ".join(text.replace("**", "").split())
    for _ in range(4):
        stripped = text.strip().strip("\"'`\u201c\u201d\u2018\u2019").strip()
        if stripped == text:
            break
        text = stripped
    num = _strict_number(text)
    if num is not None:
        return ("n", num)
    return ("s", text.casefold())


def _perm_readings(region: str) -> list[tuple[list, bool]]:
    """Candidate element lists of a region, most likely reading first; the flag marks line-based readings."""
    r = _tidy(region)
    readings: list[tuple[list, bool]] = []
    if r.startswith("["):
        try:
            data = json.loads(r)
        except Exception:  # noqa: BLE001 - not JSON
            data = None
        if isinstance(data, list):
            readings.append((data, False))
    inner = _strip_outer(r)
    lines = [ln for ln in inner.splitlines() if ln.strip()]
    if len(lines) > 1:
        readings.append(([_strip_marker(ln) for ln in lines], True))
        readings.append(([part for ln in lines for part in re.split(r"[;,]", _strip_marker(ln))], False))
    elif lines:
        line = lines[0]
        if ";" in line:
            readings.append((line.split(";"), False))
        if re.search(r",\s", line):
            readings.append((re.split(r",\s+", line), False))
        if "," in line:
            readings.append((line.split(","), False))
        if re.search(r"->|→|=>|>|\|", line):
            readings.append((re.split(r"->|→|=>|>|\|", line), False))
        readings.append((line.split(), False))
        readings.append(([line], False))
        if _ITEM_MARKER_RE.match(line):
            readings.append(([_strip_marker(line)], False))
    return readings


def _assign(elements: Sequence[object], pool: dict, n: int, items: Sequence[object]) -> Parsed:
    """Map reply elements to item indices (equal items handed out in increasing index order)."""
    used: dict = {}
    perm: list[int] = []
    if len(elements) > 4 * n + 16:  # far too many elements: skip the per-element work
        count = sum(1 for el in elements if not isinstance(el, str) or el.strip())
        if count > n:
            return Parsed.failure(f"expected {n} items, got {count}")
    for el in elements:
        if isinstance(el, str):
            if not el.strip():
                continue
            key = _item_key(el)
            if key not in pool:
                alt = _item_key(el.strip().rstrip(".").strip())
                if alt in pool:
                    key = alt
            shown = el
        elif isinstance(el, (int, float)) and not isinstance(el, bool):
            key = _item_key(el)
            shown = repr(el)
        else:
            try:
                shown = json.dumps(el)
            except Exception:  # noqa: BLE001
                shown = type(el).__name__
            return Parsed.failure(f"unknown item {_snip(shown)}")
        if key not in pool:
            return Parsed.failure(f"unknown item {_snip(shown)}")
        k = used.get(key, 0)
        if k >= len(pool[key]):
            return Parsed.failure(f"item {_snip(shown)} repeated")
        perm.append(pool[key][k])
        used[key] = k + 1
    if len(perm) != n:
        seen = set(perm)
        missing = [items[i] for i in range(n) if i not in seen]
        shown_missing = ", ".join(_snip(_str(x), 20) for x in missing[:5]) + (", ..." if len(missing) > 5 else "")
        return Parsed.failure(f"expected {n} items, got {len(perm)} (missing {shown_missing})")
    return Parsed.success(tuple(perm))


def _perm_regions(t: str) -> list[str]:
    """Candidate regions for a permutation, in the order they are tried."""
    strong = _strong_region(t)
    if strong is not None:
        return [strong]
    cands: list[tuple[int, int, str]] = []  # (end position, priority, text)
    group = _group_region(t, need_number=False)
    if group is not None:
        cands.append((group[1], 0, group[2]))
    lines = t.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if lines:
        end = len(t.rstrip())
        run: list[str] = []
        for ln in reversed(lines):
            if not ln.strip():
                break
            run.append(ln)
        run.reverse()
        headed = [i for i, ln in enumerate(run) if ln.rstrip().endswith(":")]
        block = run[headed[-1] + 1:] if headed else run
        if block:
            cands.append((end, 1, "\n".join(block)))
        tail = lines
        headed_all = [i for i, ln in enumerate(tail) if ln.rstrip().endswith(":")]
        if headed_all and headed_all[-1] + 1 < len(tail):
            cands.append((end, 2, "\n".join(ln for ln in tail[headed_all[-1] + 1:] if ln.strip())))
        last = lines[-1]
        cands.append((end, 3, last))
        if ":" in last:
            cands.append((end, 4, last.rsplit(":", 1)[1]))
    cands.sort(key=lambda c: (-c[0], c[1]))
    return [c[2] for c in cands]


@_guarded
def parse_permutation(text: str, items: Sequence[str]) -> Parsed:
    """Read a shuffled order of ``items``; ``value`` is a tuple of indices into ``items``.

    A reply listing ``[items[2], items[0], items[1]]`` parses to ``(2, 0, 1)``.  Accepted shapes: JSON lists,
    ``[a, b, c]``, ``{a, b, c}``, ``a, b, c``, ``a; b; c``, ``a -> b -> c``, space-separated, quoted items,
    newline lists with or without markers (``1. a``, ``- a``).  Where it is looked for: an ``<answer>`` block
    or ``"answer"`` key if present (nothing else is tried then); otherwise the last bracket group or code
    fence, the trailing block of lines (after a ``...:`` header line), the last line and the part of the last
    line after its last colon -- the candidate that ends latest is tried first and the first complete
    permutation wins.

    Items compare case-insensitively after stripping quotes and surrounding spaces, with inner whitespace
    collapsed; items that read as numbers compare numerically (``"2.50"`` == ``"2.5"``).  Equal items in
    ``items`` (e.g. ``["1", "1", "2"]``) are interchangeable: their occurrences in the reply receive the
    indices of the equal items in increasing order, so ``"1, 2, 1"`` -> ``(0, 2, 1)``.

    Fails with a reason when an element is unknown, repeated more often than it occurs in ``items``, or items
    are missing (wrong count).
    """
    t = _prepare(text)
    if t is None:
        return Parsed.failure(f"expected a string, got {type(text).__name__}")
    if items is None or isinstance(items, (str, bytes)):
        return Parsed.failure("items must be a sequence")
    item_list = list(items)
    n = len(item_list)
    if n == 0:
        return Parsed.failure("no items given")
    if not t.strip():
        return Parsed.failure("empty input")
    pool: dict = {}
    for idx, it in enumerate(item_list):
        pool.setdefault(_item_key(it), []).append(idx)
    first_error: Parsed | None = None
    for region in _perm_regions(t)[:8]:
        region_error: Parsed | None = None
        for elements, from_lines in _perm_readings(region):
            res = _assign(elements, pool, n, item_list)
            if res.ok:
                return res
            if region_error is None:
                region_error = res
            if from_lines:
                # prose lines around a newline list: drop unknown lines at either end and retry
                lo, hi = 0, len(elements)
                while lo < hi and _item_key(elements[lo]) not in pool:
                    lo += 1
                while hi > lo and _item_key(elements[hi - 1]) not in pool:
                    hi -= 1
                els = elements[lo:hi]
                if els and len(els) != len(elements):
                    res = _assign(els, pool, n, item_list)
                    if res.ok:
                        return res
        if first_error is None:
            first_error = region_error
    return first_error or Parsed.failure("no list found")
