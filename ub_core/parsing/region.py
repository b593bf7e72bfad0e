"""Locating the answer region inside a reply (tags, JSON keys, braces, emphasis, fences, last line).

Part of :mod:`ub_core.parsing` (see its docstring for the decisions every parser shares)."""

from __future__ import annotations

import bisect
import json
import re

from .text import _prepare

# --------------------------------------------------------------------------------------------------------------
# Locating the answer region
# --------------------------------------------------------------------------------------------------------------

_OPEN_TAG_RE = re.compile(r"<\s*answer\s*>", re.IGNORECASE)
_CLOSE_TAG_RE = re.compile(r"<\s*/\s*answer\s*>", re.IGNORECASE)
_ANSWER_KEY_RE = re.compile(r"""["']answer["']\s*:\s*""", re.IGNORECASE)
_LABEL_RE = re.compile(
    r"^(?:the\s++|my\s++)?+(?:final\s++)?+answer\s*+(?:is\b)?\s*+[:=]?\s*+(?=\S)",
    re.IGNORECASE,
)
_PAIRS = (("**", "**"), ("__", "__"), ("`", "`"), ('"', '"'), ("'", "'"), ("\u201c", "\u201d"),
          ("\u2018", "\u2019"), ("\u00ab", "\u00bb"), ("$", "$"))
_PAIR_OPENERS = frozenset(left[0] for left, _ in _PAIRS)
_LATEX_CMD_RE = re.compile(r"\\([A-Za-z]+)\s*$")
_LATEX_ARG_BEFORE_RE = re.compile(r"\\[A-Za-z]+\s*\{[^{}]*\}$")
_JSON_DECODER = json.JSONDecoder()


def _tidy(s: str) -> str:
    """Strip decoration around an answer: whitespace, quotes, markdown bold, trailing periods, 'Answer:'."""
    s = s.replace("**", "")
    if (s and s[0] not in _PAIR_OPENERS and not s[0].isspace() and not s[-1].isspace() and s[-1] != "."
            and _LABEL_RE.match(s) is None):
        return s  # nothing to strip: what one round of the loop below would find, without its cost
    for _ in range(12):
        old = s
        s = s.strip()
        for left, right in _PAIRS:
            if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
                s = s[len(left): len(s) - len(right)].strip()
        s = s.rstrip(".").rstrip()
        m = _LABEL_RE.match(s)
        if m:
            s = s[m.end():]
        if s == old:
            break
    return s


def _tag_region(t: str) -> str | None:
    """Content of the last non-empty <answer>...</answer> block (an unclosed trailing tag as last resort)."""
    opens = [m for m in _OPEN_TAG_RE.finditer(t)]
    if not opens:
        return None
    closes = [m for m in _CLOSE_TAG_RE.finditer(t)]
    open_ends = [m.end() for m in opens]
    for c in reversed(closes):
        k = bisect.bisect_right(open_ends, c.start()) - 1  # last opening tag ending before this closing tag
        if k < 0:
            continue
        content = t[opens[k].end(): c.start()]
        if _tidy(content):
            return content
    if not closes or opens[-1].start() > closes[-1].start():
        content = t[opens[-1].end():]
        if _tidy(content):
            return content
    return None


_BRACKET_RUN_RE = re.compile(r"[\[{]+|[\]}]+")


def _balanced_end(t: str, pos: int) -> int | None:
    """Index just past the bracket group opening at ``pos`` (quote-unaware), or None when unclosed."""
    depth = 0
    for m in _BRACKET_RUN_RE.finditer(t, pos):
        run = m.end() - m.start()
        if t[m.start()] in "[{":
            depth += run
        elif depth <= run:
            return m.start() + depth
        else:
            depth -= run
    return None


def _key_region(t: str) -> str | None:
    """Value of the last "answer" key of a JSON (or Python-style) object, as text."""
    if "answer" not in t.lower():
        return None
    first_brace = t.find("{")
    if first_brace < 0:
        return None
    matches = [m for m in _ANSWER_KEY_RE.finditer(t, first_brace)]
    for m in reversed(matches[-8:]):
        pos = m.end()
        if pos >= len(t):
            continue
        ch = t[pos]
        value: str | None = None
        if ch in '"[{-0123456789tfn':
            try:
                obj, end = _JSON_DECODER.raw_decode(t, pos)
                # a decoded string may contain escapes such as \u2212: normalise it like the reply itself
                value = _prepare(obj) if isinstance(obj, str) else t[pos:end]
                if isinstance(obj, (int, float)) and t[end:].lstrip()[:1] not in ("", ",", "}", "]"):
                    value = None  # only the start of a number such as 10^400 or 1.2 x 10^5: read it loosely
            except Exception:  # noqa: BLE001 - malformed JSON falls through to the looser readers below
                value = None
        if value is None:
            if ch == '"':
                mm = re.compile(r'"([^"\n]*)"').match(t, pos)
                value = mm.group(1) if mm else None
            elif ch == "'":
                mm = re.compile(r"'([^'\n]*)'").match(t, pos)
                value = mm.group(1) if mm else None
            elif ch in "[{":
                end = _balanced_end(t, pos)
                value = t[pos:end] if end is not None else None
            else:
                mm = re.compile(r"[^,}\n]*").match(t, pos)
                value = mm.group(0) if mm else None
        if value is not None and _tidy(value):
            return value
    return None


def _strong_region(t: str) -> str | None:
    """An explicitly delimited answer: an <answer> block, else an "answer" key."""
    region = _tag_region(t)
    if region is None:
        region = _key_region(t)
    return region


def _top_groups(t: str, opens: str = "{", closes: str = "}") -> list[tuple[int, int]]:
    """Balanced top-level bracket groups as (open index, close index), ordered by position."""
    pair = {c: o for o, c in zip(opens, closes)}
    pattern = re.compile("[" + re.escape(opens + closes) + "]")
    stack: list[tuple[str, int]] = []
    groups: list[tuple[int, int]] = []
    for m in pattern.finditer(t):
        ch = m.group(0)
        if ch in opens:
            stack.append((ch, m.start()))
        elif stack and stack[-1][0] == pair[ch]:
            _, start = stack.pop()
            groups.append((start, m.start()))
    groups.sort()
    top: list[tuple[int, int]] = []
    max_end = -1
    for start, end in groups:
        if end <= max_end:
            continue
        top.append((start, end))
        max_end = end
    return top


def _latex_argument(t: str, start: int) -> bool:
    """True when the brace at ``start`` is an argument of a LaTeX command (other than \\boxed) or a sub/superscript."""
    if start == 0:
        return False
    prev = t[start - 1]
    if prev in "^_":
        return True
    if prev == "}":  # second argument of a command such as \frac{..}{..}
        return bool(_LATEX_ARG_BEFORE_RE.search(t, max(0, start - 80), start))
    m = _LATEX_CMD_RE.search(t, max(0, start - 40), start)
    return bool(m) and m.group(1).lower() not in ("boxed", "fbox", "answer")


def _peel_limit(s: str) -> int:
    """How many bracket layers to peel: plenty for normal replies, few for huge hostile ones."""
    return 16 if len(s) < 5000 else 2


def _unwrap_braces(s: str) -> str:
    """``{{x}}`` -> ``x`` (after the outer group has been removed): peel groups that span the whole string."""
    for _ in range(_peel_limit(s)):
        st = s.strip()
        if len(st) >= 2 and st[0] == "{" and st[-1] == "}" and _balanced_end(st, 0) == len(st):
            s = st[1:-1]
        else:
            break
    return s


def _brace_region(t: str) -> str | None:
    """Content of the last top-level {...} group (\\boxed{...} included), double braces peeled."""
    if "{" not in t:
        return None
    for start, end in reversed(_top_groups(t)):
        if _latex_argument(t, start):
            continue
        content = _unwrap_braces(t[start + 1: end])
        if _tidy(content):
            return content
    return None


_FENCE_RE = re.compile(r"```")
_LANG_RE = re.compile(r"^[A-Za-z][\w+\-]*[ \t]*\n")


def _fence_span(t: str) -> tuple[int, int] | None:
    """(start, end) of the content of the last code fence (an unclosed trailing fence counts)."""
    marks = [m.start() for m in _FENCE_RE.finditer(t)]
    if not marks:
        return None
    spans = [(marks[i] + 3, marks[i + 1]) for i in range(0, len(marks) - 1, 2)]
    if len(marks) % 2 == 1:
        spans.append((marks[-1] + 3, len(t)))
    for start, end in reversed(spans):
        content = t[start:end]
        lang = _LANG_RE.match(content)
        if lang:
            start += lang.end()
        if _tidy(t[start:end]):
            return start, end
    return None


def _last_line(t: str) -> str | None:
    for line in reversed(t.splitlines()):
        if _tidy(line):
            return line
    return None


def _answer_region(t: str) -> tuple[str | None, bool]:
    """(raw region, strong) following the order documented in :func:`extract_answer`."""
    region = _strong_region(t)
    if region is not None:
        return region, True
    region = _brace_region(t)
    if region is not None:
        return region, False
    span = _fence_span(t)
    if span is not None:
        return t[span[0]: span[1]], False
    return _last_line(t), False


def extract_answer(text: str) -> str | None:
    """Find the answer region of a model reply.

    Rules, first match wins:

    1. the content of the last non-empty ``<answer>...</answer>`` block (tags case-insensitive; a trailing
       unclosed ``<answer>`` is used only when no closed block has content);
    2. the value of the last ``"answer"`` key of a JSON (or single-quoted) object; a string value is returned
       unquoted, a number or list as written;
    3. the content of the last top-level ``{...}`` group, where ``\\boxed{...}`` counts as a group, double
       braces ``{{x}}`` are peeled to ``x``, and braces that are LaTeX arguments (``\\frac{..}``, ``10^{5}``) are
       ignored;
    4. the content of the last code fence (the language tag line dropped);
    5. the last non-empty line of the reply (models often reason first and answer last).

    The region is then tidied: surrounding whitespace, quotes and backticks, markdown ``**``, trailing periods
    and a leading ``Answer:`` / ``Final answer is`` label are stripped.  The text is normalised first (dashes
    to ``-``, non-ASCII digits to ASCII, simple LaTeX such as ``\\frac{a}{b}`` to ``a/b``).  Returns None for
    empty or non-string input; never raises.
    """
    try:
        t = _prepare(text)
        if t is None or not t.strip():
            return None
        region, _ = _answer_region(t)
        if region is None:
            return None
        out = _tidy(region)
        return out or None
    except Exception:  # noqa: BLE001 - never raise on hostile text
        return None
