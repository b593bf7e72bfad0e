"""Numbers: one finite float (``parse_number``) and lists of them (``parse_number_list``).

Part of :mod:`ub_core.parsing` (see its docstring for the decisions every parser shares)."""

from __future__ import annotations

import json
import math
import re

from .text import Parsed, _guarded, _prepare, _snip
from .tokens import _Tok, _describe, _has_token, _pick_one, _scalar, _scan
from .region import (
    _answer_region,
    _balanced_end,
    _fence_span,
    _latex_argument,
    _peel_limit,
    _strong_region,
    _tidy,
    _top_groups,
    _unwrap_braces,
)

# --------------------------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------------------------


_PLAIN_BRACED_NUMBER = re.compile(r"\s*+\{\s*+([+-]?(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][+-]?\d++)?+)\s*+\}\s*+")


@_guarded
def parse_number(text: str) -> Parsed:
    """Parse one finite number from a reply; ``value`` is a float.

    The answer region (see :func:`extract_answer`) is searched first.  If it holds exactly one number (or
    several copies of the same number) that number is the answer; if it holds several different numbers, the
    one after the last ``:``, ``=`` or ``is`` is taken when it is unique there (``"N(0,1): 0.53"`` -> 0.53);
    otherwise the parse fails with ``"expected one number, got N: ..."``.  When the region holds no number
    and came from a weak rule (brace group, code fence, last line) the last number anywhere in the reply is
    used; a region from an ``<answer>`` block or an ``"answer"`` key is trusted and not second-guessed.

    Accepted formats: see the module docstring (integers, decimals, signs incl. unicode minus, thousands
    separators, scientific notation, fractions, percentages kept as written, currency and units ignored).
    Rejected with a reason: empty input, no number, NaN, infinities, overflow (``1e999``), ambiguous decimal
    commas (``"1,5"``), several different candidates.
    """
    if isinstance(text, str):
        # Fast path for the reply our prompts ask for, "{12.5}": same result as the full rules, 20x cheaper.
        m = _PLAIN_BRACED_NUMBER.fullmatch(text)
        if m is not None:
            value = float(m.group(1))
            if math.isfinite(value):
                return Parsed.success(value)
    t = _prepare(text)
    if t is None:
        return Parsed.failure(f"expected a string, got {type(text).__name__}")
    if not t.strip():
        return Parsed.failure("empty input")
    region, strong = _answer_region(t)
    if region is not None:
        res = _scalar(region)
        if res is not None:
            return res
        if strong:
            return Parsed.failure(f"no number in the answer {_snip(_tidy(region))}")
    toks = _scan(t)
    if not toks:
        return Parsed.failure("no number found")
    return toks[-1].result()


_ITEM_MARKER_RE = re.compile(
    r"""^\s*+(?:
        [-*•+>]\s+                                              # bullets
      | \(?[0-9]{1,4}+[.)]\s++(?=\S)                           # 1. x   1) x   (1) x
      | \#?[0-9]{1,4}+\s*+:\s++(?=\S)                           # 1: x   #1: x
      | (?:sample|value|item|draw|number|no\.?|n|\#)\s*+\#?+\s*+[0-9]{1,4}+\s*+[:.)=\-]\s*+(?=\S)   # Sample 1: x
    )""",
    re.IGNORECASE | re.VERBOSE,
)


def _strip_marker(line: str) -> str:
    m = _ITEM_MARKER_RE.match(line)
    return line[m.end():] if m else line


def _list_like(line: str) -> bool:
    """A line that looks like part of a list of numbers rather than prose."""
    s = _strip_marker(line).strip()
    if not s or s.endswith(":"):
        return False
    if not _has_token(s):
        return False
    if len(s) <= 8:
        return True  # at most 8 letters
    return sum(map(str.isalpha, s)) <= max(8, 3 * sum(map(str.isdigit, s)))


def _trailing_block(t: str) -> tuple[int, str] | None:
    """(start offset, text) of the last run of list-like lines (blank lines inside the run allowed)."""
    lines = t.splitlines(keepends=True)
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line)
    i = len(lines) - 1
    while i >= 0 and not _list_like(lines[i]):
        i -= 1
    if i < 0:
        return None
    end = i
    start = i
    j = i - 1
    while j >= 0:
        if not lines[j].strip():
            j -= 1
            continue
        if _list_like(lines[j]):
            start = j
            j -= 1
            continue
        break
    text = "".join(lines[start: end + 1])
    return offsets[start], text


_GAP_RE = re.compile(r"[\s,;]*+(?:(?:\(?[0-9]{1,4}+[.):]|[-*•])\s*+)?+[\s,;]*+")


def _group_region(t: str, need_number: bool) -> tuple[int, int, str] | None:
    """Last top-level [...] / {...} group or code fence: (start, end, content).

    Consecutive brace groups separated only by separators or item markers (``{3} {5} {7}``) are merged into
    one region, one group per line.
    """
    best: tuple[int, int, str] | None = None
    if "{" in t or "[" in t:
        groups = [g for g in _top_groups(t, "{[", "}]") if not (t[g[0]] == "{" and _latex_argument(t, g[0]))]

        def has_content(g: tuple[int, int]) -> bool:
            c = t[g[0] + 1: g[1]]
            return _has_token(c) if need_number else bool(_tidy(c))

        usable = [g for g in groups if has_content(g)]
        if usable:
            k = len(usable) - 1
            last = usable[k]
            if t[last[0]] == "{":
                chain = [last]
                while k > 0:
                    prev = usable[k - 1]
                    if t[prev[0]] != "{" or not _GAP_RE.fullmatch(t, prev[1] + 1, chain[-1][0]):
                        break
                    chain.append(prev)
                    k -= 1
                chain.reverse()
                content = "\n".join(_unwrap_braces(t[s + 1: e]) for s, e in chain)
                best = (chain[0][0], last[1] + 1, content)
            else:
                best = (last[0], last[1] + 1, t[last[0]: last[1] + 1])  # brackets kept: may be JSON
    span = _fence_span(t)
    if span is not None:
        content = t[span[0]: span[1]]
        ok = _has_token(content) if need_number else bool(_tidy(content))
        if ok and (best is None or span[1] > best[1]):
            best = (span[0], span[1], content)
    return best


def _strip_outer(s: str) -> str:
    """Drop brackets enclosing the whole string: ``[[1, 2]]`` -> ``1, 2``."""
    for _ in range(_peel_limit(s)):
        st = s.strip()
        if len(st) >= 2 and (st[0], st[-1]) in (("[", "]"), ("{", "}"), ("(", ")")):
            if st[0] in "[{" and _balanced_end(st, 0) != len(st):
                break
            s = st[1:-1]
        else:
            break
    return s


_COMMA_SPACE_RE = re.compile(r",\s")
_COMMA_SPACES_RE = re.compile(r",\s+")


def _split_line(line: str) -> list[str]:
    """Split one line of a number list on its separators (see :func:`parse_number_list`)."""
    if ";" in line:
        return line.split(";")
    if "," in line:
        if _COMMA_SPACE_RE.search(line):
            return _COMMA_SPACES_RE.split(line)
        return line.split(",")
    if "|" in line:
        return line.split("|")
    return [line]


_SEPARATOR_LEFTOVER_RE = re.compile(r"[\s,;|/]*")


def _element_tokens(item: str) -> tuple[list[_Tok] | None, str | None]:
    """Number tokens of one list item, or an error; an item of bare numbers separated by spaces yields all."""
    toks = _scan(item)
    if len(toks) <= 1:
        return toks, None
    leftover = []
    pos = 0
    for tok in toks:
        leftover.append(item[pos: tok.start])
        pos = tok.end
    leftover.append(item[pos:])
    if _SEPARATOR_LEFTOVER_RE.fullmatch("".join(leftover)):
        return toks, None
    chosen = _pick_one(item, toks)
    if chosen is not None:
        return [chosen], None
    return None, f"holds {len(toks)} numbers ({_describe(toks)})"


def _float_from_json(x: object) -> tuple[float | None, str | None]:
    if isinstance(x, bool) or x is None:
        return None, "is not a number"
    if isinstance(x, (int, float)):
        try:
            v = float(x)
        except (OverflowError, ValueError):
            return None, "is too large (overflows to infinity)"
        if not math.isfinite(v):
            return None, "is not a finite number"
        return v, None
    if isinstance(x, str):
        toks = _scan(x)
        if not toks:
            return None, "is not a number"
        chosen = _pick_one(x, toks)
        if chosen is None:
            return None, f"holds {len(toks)} numbers"
        if chosen.error is not None:
            return None, f"rejected: {chosen.error}"
        return chosen.value, None
    return None, "is a nested container, not a number"


_PLAIN_DECIMAL_RE = re.compile(r"[+-]?[0-9]++(?:\.[0-9]++)?")


def _values_from_region(region: str) -> Parsed:
    r = _tidy(region)
    if r.startswith("["):
        try:
            # numbers are kept as their source text so that they follow the same rules as plain text
            data = json.loads(r, parse_int=str, parse_float=str, parse_constant=str)
        except Exception:  # noqa: BLE001 - not JSON, read it as plain text below
            data = None
        if isinstance(data, list):
            values = []
            for k, x in enumerate(data, 1):
                v, err = _float_from_json(x)
                if err is not None:
                    shown = x if isinstance(x, str) else json.dumps(x)
                    return Parsed.failure(f"element {k} ({_snip(shown)}) {err}")
                values.append(v)
            if not values:
                return Parsed.failure("empty list")
            return Parsed.success(values)
    inner = _strip_outer(r)
    lines = [ln for ln in inner.splitlines() if ln.strip()]
    multiline = len(lines) > 1
    items: list[str] = []
    for ln in lines:
        items.extend(_split_line(_strip_marker(ln)))
    values: list[float] = []
    for item in items:
        it = _tidy(item)
        if not it:
            continue
        if _PLAIN_DECIMAL_RE.fullmatch(it) is not None:  # "12", "-0.5": what the full rules give, faster
            value = float(it)
            if math.isfinite(value):
                values.append(value)
                continue
        toks, err = _element_tokens(it)
        if err is not None:
            return Parsed.failure(f"element {len(values) + 1} ({_snip(it)}) {err}")
        if not toks:
            if multiline or not re.search(r"[A-Za-z0-9]", it):
                continue  # prose line or stray punctuation inside a multi-line list
            return Parsed.failure(f"element {len(values) + 1} ({_snip(it)}) is not a number")
        for tok in toks:
            if tok.error is not None:
                return Parsed.failure(f"element {len(values) + 1} ({_snip(tok.text)}) rejected: {tok.error}")
            values.append(tok.value)  # type: ignore[arg-type]
    if not values:
        return Parsed.failure("no numbers found")
    return Parsed.success(values)


@_guarded
def parse_number_list(text: str, expected: int | None = None) -> Parsed:
    """Parse a list of finite numbers (list prompting); ``value`` is ``list[float]``.

    Where the list is looked for: an ``<answer>`` block or ``"answer"`` key; otherwise the later of (a) the
    last top-level ``[...]`` / ``{...}`` group or code fence holding a number (adjacent ``{a} {b} {c}`` groups
    are merged) and (b) the last run of list-like lines (lines that are mostly numbers, with an optional
    item marker such as ``1.``, ``2)``, ``-``, ``Sample 3:``; item numbers are never taken as values).

    How it is split: a JSON list is read as JSON (so ``[1,234]`` is two numbers).  Otherwise outer brackets
    are dropped and the text is split on newlines, then on ``;`` if present, else on comma+space (a bare comma
    then only groups thousands, ``"1,234, 5"`` -> [1234, 5]), else on bare commas, else on ``|``; numbers
    separated by spaces only are all taken.  A comma-separated element that still holds a comma directly
    between digits which does not group thousands (``"1,5, 2,5"``) fails as an ambiguous decimal comma.  Each element
    follows the rules of :func:`parse_number`.

    Fails with a reason naming the element when an element is not finite, overflows, has an ambiguous decimal
    comma or is not a number (prose lines inside a multi-line list are skipped).  When ``expected`` is given
    and the count differs, the parse still succeeds with what was found: callers top up with further calls.
    """
    del expected  # accepted for the callers' convenience; a count mismatch is not an error (see docstring)
    t = _prepare(text)
    if t is None:
        return Parsed.failure(f"expected a string, got {type(text).__name__}")
    if not t.strip():
        return Parsed.failure("empty input")
    region = _strong_region(t)
    if region is None:
        group = _group_region(t, need_number=True)
        block = _trailing_block(t)
        if group is not None and (block is None or group[1] >= block[0]):
            region = group[2]
        elif block is not None:
            region = block[1]
    if region is None:
        return Parsed.failure("no numbers found")
    return _values_from_region(region)
