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
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

__all__ = [
    "MAX_CHARS",
    "Parsed",
    "check_support",
    "extract_answer",
    "parse_number",
    "parse_number_list",
    "parse_option",
    "parse_permutation",
]

#: Longest reply considered; longer replies keep only their tail.
MAX_CHARS = 200_000


# --------------------------------------------------------------------------------------------------------------
# Result type
# --------------------------------------------------------------------------------------------------------------


def _one_line(s: str, limit: int = 300) -> str:
    s = " ".join(_str(s).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


@dataclass(frozen=True)
class Parsed:
    """Outcome of parsing: a value when ``ok``, otherwise a one-line human-readable ``error``."""

    value: object | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when parsing succeeded (there is no error)."""
        return self.error is None

    @classmethod
    def success(cls, value: object) -> "Parsed":
        """A successful result holding ``value``."""
        return cls(value=value, error=None)

    @classmethod
    def failure(cls, reason: object) -> "Parsed":
        """A failed result; ``reason`` is flattened to one non-empty line."""
        text = _one_line(reason) if reason is not None else ""
        return cls(value=None, error=text or "unparseable reply")


def _guarded(fn: Callable[..., Parsed]) -> Callable[..., Parsed]:
    """Last line of defence: turn any unexpected exception into a failure instead of raising."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Parsed:
        try:
            out = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - hostile input must never escape as an exception
            return Parsed.failure(f"internal parser error ({type(exc).__name__})")
        return out

    return wrapper


def _str(x: object) -> str:
    """``str(x)`` that never raises: an int beyond Python's int-to-text digit limit (4300 digits) or an object
    with a broken ``__str__`` gets a placeholder instead."""
    if isinstance(x, str):
        return x
    try:
        return str(x)
    except Exception:  # noqa: BLE001 - ValueError for huge ints, anything from a user-defined __str__
        if isinstance(x, int):
            return f"<integer of {x.bit_length()} bits>"
        return f"<unprintable {type(x).__name__}>"


def _snip(s: str, limit: int = 40) -> str:
    """Short quoted rendering of a piece of reply text for error messages."""
    s = " ".join(_str(s).split())
    if len(s) > limit:
        s = s[: limit - 3] + "..."
    return repr(s)


# --------------------------------------------------------------------------------------------------------------
# Text normalisation
# --------------------------------------------------------------------------------------------------------------

_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2796\u02d7\ufe58\ufe63\uff0d")
_DROP = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_SPECIAL = {
    "\u2044": "/",  # fraction slash
    "\u2215": "/",  # division slash
    "\u066b": ".",  # Arabic decimal separator
    "\u066c": ",",  # Arabic thousands separator
    "\u3000": " ",  # ideographic space
}


class _CharMap(dict):
    """Lazy ``str.translate`` table: dashes -> '-', any decimal digit -> ASCII, full-width ASCII -> ASCII."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        out = ch
        if ch in _DASHES:
            out = "-"
        elif ch in _DROP:
            out = ""
        elif ch in _SPECIAL:
            out = _SPECIAL[ch]
        elif 0xFF01 <= code <= 0xFF5E:  # full-width forms of printable ASCII
            out = chr(code - 0xFEE0)
        elif code > 127:
            try:
                d = unicodedata.decimal(ch, None)
            except (TypeError, ValueError):
                d = None
            if d is not None:
                out = str(d)
        self[code] = out
        return out


_CHARMAP = _CharMap()

_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{\s*([+-]?[0-9][0-9.]*)\s*\}\s*\{\s*([+-]?[0-9][0-9.]*)\s*\}")
_LATEX_DELIM_RE = re.compile(r"\\[\[\]()]")


def _prepare(text: object) -> str | None:
    """Normalise a reply for parsing; None when it is not a string."""
    if not isinstance(text, str):
        return None
    if len(text) > MAX_CHARS:
        text = text[-MAX_CHARS:]
    if not text.isascii():
        text = text.translate(_CHARMAP)
    if "\\" in text:
        text = _FRAC_RE.sub(r"\1/\2", text)
        for old, new in (
            ("\\%", "%"),
            ("\\$", "$"),
            ("\\,", "\u2009"),
            ("\\!", ""),
            ("\\left", ""),
            ("\\right", ""),
            ("\\infty", "inf"),
        ):
            text = text.replace(old, new)
        text = _LATEX_DELIM_RE.sub(" ", text)
    if "{,}" in text:
        text = text.replace("{,}", ",")
    return text


# --------------------------------------------------------------------------------------------------------------
# Number tokens
# --------------------------------------------------------------------------------------------------------------

_TS = "\u00a0\u2009\u202f\u2007"  # spaces allowed as thousands separators
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUP_TABLE = str.maketrans(_SUPERSCRIPTS + "⁺⁻", "0123456789+-")
_TIMES = r"(?:[x×X*·⋅∙]|\\times|\\cdot)"

_NUM_RE = re.compile(
    r"""
    (?=[-+$€£¥₹.0-9])                      # cheap first test (every number starts so): keeps the scan fast
    (?<![A-Za-z0-9_])(?<![0-9]\.)          # not glued to a word, a digit, or a version number
    (?P<s1>[+-])?
    (?P<cur>[$€£¥₹])?
    (?P<s2>[+-])?
    (?P<mant>
        [1-9][0-9]{0,2}(?:,[0-9]{3})+(?![0-9]|,[0-9])(?:\.[0-9]++)?+      # 1,234,567.89
      | [1-9][0-9]{0,2}(?:[TS][0-9]{3})+(?![0-9])(?:\.[0-9]++)?+          # 1 234 567 (thin / no-break spaces)
      | (?P<dc>[0-9]++(?:,[0-9]++)++)                                     # 1,5 : ambiguous decimal comma
      | [0-9]++(?:\.[0-9]*+)?+
      | \.[0-9]++
    )
    (?:
        [eE](?P<e1>[+-]?[0-9]++)
      | [ \t]*+TIMES[ \t]*+10[ \t]*+(?:\^|\*\*)[ \t]*+\{?+[ \t]*+(?P<e2>[+-]?[0-9]++)[ \t]*+\}?
      | [ \t]*+TIMES[ \t]*+10(?P<e3>[⁺⁻]?[SUP]++)
      | [ \t]*+(?:\^|\*\*)[ \t]*+\{?+[ \t]*+(?P<p1>[+-]?[0-9]++)[ \t]*+\}?
      | (?P<p2>[⁺⁻]?[SUP]++)
      | [ \t]*+/[ \t]*+(?P<den>[0-9]++(?:\.[0-9]++)?)(?![0-9.]*+/)
    )?
    (?P<pct>[ \t]?%)?
    """.replace("[TS]", "[" + _TS + "]")
    .replace("TIMES", _TIMES)
    .replace("[SUP]", "[" + _SUPERSCRIPTS + "]"),
    re.VERBOSE,
)

_NONFINITE_RE = re.compile(
    r"(?=[-+ni∞])(?<![A-Za-z0-9_])[+-]?(?:nan|inf(?:inity)?|∞)(?![A-Za-z0-9_])",
    re.IGNORECASE,
)

_MARKER_RE = re.compile(r"(?=[:=≈→ibw])(?:[:=≈→]|=>|\b(?:is|be|was)\b)", re.IGNORECASE)


class _Tok(NamedTuple):  # a tuple: built once per number token, so cheap construction matters
    start: int
    end: int
    text: str
    value: float | None
    error: str | None

    @property
    def key(self) -> tuple:
        return ("v", self.value) if self.error is None else ("e", self.error)

    def result(self) -> Parsed:
        if self.error is not None:
            return Parsed.failure(self.error)
        return Parsed.success(self.value)


def _pow10(mantissa: str, exponent: str) -> float:
    return float(f"{mantissa}e{exponent}")


def _number_from_match(m: re.Match) -> tuple[float | None, str | None]:
    s1, s2, mant, dc, e1, e2, e3, p1, p2, den = m.group("s1", "s2", "mant", "dc", "e1", "e2", "e3", "p1", "p2", "den")
    if dc is not None:
        return None, f"ambiguous decimal comma in {_snip(m.group(0).strip())}"
    if "," in mant or not mant.isascii():
        for ch in "," + _TS:
            mant = mant.replace(ch, "")
    if mant.endswith("."):
        mant = mant[:-1]
    if mant.startswith("."):
        mant = "0" + mant
    negative = (s1 == "-") != (s2 == "-")
    try:
        if e1 is None and e2 is None and e3 is None and p1 is None and p2 is None and den is None:
            value = float(mant)  # the common case: a plain decimal
        elif e1 is not None:
            value = _pow10(mant, e1)
        elif e2 is not None:
            value = _pow10(mant, e2)
        elif e3 is not None:
            value = _pow10(mant, e3.translate(_SUP_TABLE))
        elif p1 is not None or p2 is not None:
            exp_text = (p1 or p2 or "").translate(_SUP_TABLE)
            if float(mant) == 10.0:
                value = _pow10("1", exp_text)
            else:
                base = float(mant)
                digits = exp_text.lstrip("+-")
                if len(digits) > 6:
                    if base in (0.0, 1.0):
                        value = base if not exp_text.startswith("-") or base == 1.0 else math.inf
                    else:
                        return None, f"exponent too large in {_snip(m.group(0).strip())}"
                else:
                    value = math.pow(base, int(exp_text))
        else:
            den_value = float(den)
            if den_value == 0.0:
                return None, f"division by zero in {_snip(m.group(0).strip())}"
            value = float(mant) / den_value
    except (OverflowError, ValueError, ZeroDivisionError):
        return None, f"{_TOO_LARGE}: {_snip(m.group(0).strip())}"
    if not math.isfinite(value):
        return None, f"{_TOO_LARGE}: {_snip(m.group(0).strip())}"
    return (-value if negative else value), None


#: Reason given for a number beyond the float range (a 401-digit integer, ``1e999``, ``10^400``).
_TOO_LARGE = "number too large (overflows to infinity)"


def _scan(s: str) -> list[_Tok]:
    """All number-like tokens in ``s`` (valid numbers and rejected ones), in order of position."""
    toks: list[_Tok] = []
    append = toks.append
    for m in _NUM_RE.finditer(s):
        value, error = _number_from_match(m)
        start, end = m.span()
        append(_Tok(start, end, s[start:end], value, error))
    if "n" in s or "N" in s or "∞" in s:
        for m in _NONFINITE_RE.finditer(s):
            toks.append(_Tok(m.start(), m.end(), m.group(0), None, f"not a finite number: {_snip(m.group(0))}"))
        toks.sort(key=lambda t: t.start)
    return toks


def _has_token(s: str) -> bool:
    """``bool(_scan(s))`` without building the tokens."""
    if _NUM_RE.search(s) is not None:
        return True
    return ("n" in s or "N" in s or "∞" in s) and _NONFINITE_RE.search(s) is not None


def find_numbers(text: object) -> list[float]:
    """Every finite number mentioned anywhere in ``text``, in order (for values read from reasoning tokens,
    seed 000 sec. 4.4). Never raises; non-strings and non-finite tokens give nothing."""
    try:
        t = _prepare(text)
        if t is None:
            return []
        return [tok.value for tok in _scan(t) if tok.value is not None and math.isfinite(tok.value)]
    except Exception:  # noqa: BLE001 - hostile input must never escape as an exception
        return []


def _single(toks: Sequence[_Tok]) -> _Tok | None:
    """The token when all tokens agree on one value (or one rejection reason), else None."""
    if not toks:
        return None
    keys = {t.key for t in toks}
    return toks[-1] if len(keys) == 1 else None


def _pick_one(s: str, toks: Sequence[_Tok]) -> _Tok | None:
    """One clear number among ``toks``: all equal, or the only one after the last marker (':', '=', 'is')."""
    chosen = _single(toks)
    if chosen is not None or not toks:
        return chosen
    last_start = toks[-1].start
    marker_end = None
    for mk in _MARKER_RE.finditer(s, 0, last_start):
        marker_end = mk.end()
    if marker_end is None:
        return None
    return _single([t for t in toks if t.start >= marker_end])


def _describe(toks: Sequence[_Tok], limit: int = 5) -> str:
    shown = ", ".join(" ".join(t.text.split()) for t in toks[:limit])
    return shown + (", ..." if len(toks) > limit else "")


def _scalar(region: str) -> Parsed | None:
    """Parse one number out of a region; None when the region holds no number at all."""
    toks = _scan(region)
    if not toks:
        return None
    chosen = _pick_one(region, toks)
    if chosen is None:
        return Parsed.failure(f"expected one number, got {len(toks)}: {_describe(toks)}")
    return chosen.result()


def _strict_number(s: str) -> float | None:
    """The number when ``s`` is exactly one valid number token (surrounding spaces allowed), else None."""
    s = s.strip()
    if not s:
        return None
    m = _NUM_RE.fullmatch(s)
    if m is None:
        return None
    value, error = _number_from_match(m)
    return value if error is None else None


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
    between digits which does not group thousands (``"1,5, 2,5"``) fails as an ambiguous decimal comma.  Each element follows the rules of :func:`parse_number`.

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


# --------------------------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------------------------

_OPTION_PREFIX_RE = re.compile(
    r"^(?:(?:the\s++|my\s++)?+(?:final\s++)?+(?:answer|option|choice|selection|pick)\s*+(?:is\b)?\s*+[:=#]?"
    r"|i\s++(?:choose|chose|pick|select|go\s++with|will\s++go\s++with|'ll\s++go\s++with)\s*+:?)\s*+(?=\S)",
    re.IGNORECASE,
)
_OPTION_MARKER_RE = re.compile(
    r"[:=]|\b(?:is|choose|chose|pick|picked|select|selected|go\s+with|answer)\b", re.IGNORECASE
)
_NEXT_WORD_RE = re.compile(r"\s++([a-z]+)")
_LABEL_FOLLOWERS = frozenset(
    "or and vs versus nor is was seems looks would wins because since".split()
)
_BRACKETS = (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"))


def _decor(s: str) -> str:
    """Strip decoration around an option: brackets, quotes, bold, 'Option'/'Answer:' prefixes, punctuation."""
    s = " ".join(_tidy(s).split())
    for _ in range(12):
        old = s
        s = s.strip().strip("*_`\"'\u201c\u201d\u2018\u2019").strip()
        for left, right in _BRACKETS:
            if len(s) >= 2 and s.startswith(left) and s.endswith(right):
                s = s[1:-1].strip()
        if s.endswith(")") and "(" not in s:
            s = s[:-1].strip()
        s = s.rstrip(".,;:!?").strip()
        m = _OPTION_PREFIX_RE.match(s)
        if m:
            s = s[m.end():]
        if s == old:
            break
    return s


def _option_matches(hay: str, labels: Sequence[str]) -> list[tuple[int, int, int]]:
    found: list[tuple[int, int, int]] = []
    for idx, lab in enumerate(labels):
        words = lab.split()
        if not words:
            continue
        pattern = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)
        article = len(lab) == 1 and lab.casefold() in ("a", "i")
        for m in pattern.finditer(hay):
            if article:
                before = hay[max(0, m.start() - 2): m.start()]
                after = hay[m.end(): m.end() + 2]
                decorated = before.endswith(("(", "[", "{", "*")) or after.startswith((")", "]", "}", "*"))
                if not decorated:
                    if hay[m.start()].islower():
                        continue
                    nxt = _NEXT_WORD_RE.match(hay, m.end())
                    if nxt and nxt.group(1) not in _LABEL_FOLLOWERS:
                        continue  # "A good idea", "I think": the English word, not the label
            found.append((m.start(), m.end(), idx))
    found.sort()
    return found[-200:]


def _resolve_options(hay: str, found: list[tuple[int, int, int]], labels: Sequence[str],
                     options: Sequence[str]) -> Parsed | None:
    if not found:
        return None
    keep = [
        f for f in found
        if not any(o[2] != f[2] and o[0] <= f[0] and f[1] <= o[1] and (o[1] - o[0]) > (f[1] - f[0]) for o in found)
    ]
    chosen = {f[2] for f in keep}
    if len(chosen) == 1:
        return Parsed.success(keep[0][2])
    marker_end = None
    for mk in _OPTION_MARKER_RE.finditer(hay, 0, keep[-1][0]):
        marker_end = mk.end()
    if marker_end is not None:
        after = {f[2] for f in keep if f[0] >= marker_end}
        if len(after) == 1:
            return Parsed.success(after.pop())
    names = ", ".join(_snip(options[i], 20) for i in sorted(chosen)[:5])
    return Parsed.failure(f"ambiguous: the answer mentions {len(chosen)} options ({names})")


_TOKEN_SPLIT_RE = re.compile(r"[\s,;]+")


def _output_tokens(s: str) -> tuple[str, ...]:
    return tuple(tok for tok in _TOKEN_SPLIT_RE.split(_decor(s).casefold()) if tok)


def _printed_output_option(t: str, opts: Sequence[str]) -> Parsed:
    """Strict matching for multi-line outputs: the whole answer region, token for token."""
    region, strong = _answer_region(t)
    wanted = [_output_tokens(_prepare(o) or "") for o in opts]
    # the answer region first; a bare multi-line reply (no braces) is its own answer region
    for hay in ([region] if region is not None else []) + ([] if strong else [t]):
        got = _output_tokens(hay)
        hits = [i for i, w in enumerate(wanted) if w and w == got]
        if hits:  # equal labels: the first wins, as for single-line options
            return Parsed.success(hits[0])
    shown = region if region is not None else t
    return Parsed.failure(f"printed output {_snip(shown)} matches none of the {len(opts)} options exactly")


@_guarded
def parse_option(text: str, options: Sequence[str]) -> Parsed:
    """Match a reply against option labels; ``value`` is the index into ``options``.

    Matching is case-insensitive with whitespace collapsed, on the answer region of :func:`extract_answer`:

    1. exact match after stripping decoration (``Option B``, ``(B)``, ``B)``, ``**B**``, ``{B}``,
       ``answer: b``, quotes, trailing punctuation); when several labels are equal the first wins;
    2. otherwise the options appearing as whole words in the region; a match inside a longer matching option
       does not count (``"heads up"`` beats ``"heads"``); several options -> the one after the last marker
       (``:``, ``=``, ``is``, ``choose``, ``pick``, ...) if unique, else failure ``ambiguous``.  The
       single-letter labels ``A`` and ``I`` are not matched as the English words "a" / "I";
    3. when the region mentions no option and did not come from an ``<answer>`` block or ``"answer"`` key,
       steps 1-2 are repeated on the whole reply (this also covers multi-line labels).

    Fails when no option or several options match.

    Options that are multi-line printed outputs (any label contains a newline) are matched strictly: the answer
    region's tokens (split on whitespace, commas and semicolons) must equal exactly one option's tokens, so a
    printout with a missing or an extra line is a failure rather than a partial match.
    """
    t = _prepare(text)
    if t is None:
        return Parsed.failure(f"expected a string, got {type(text).__name__}")
    if options is None or isinstance(options, (str, bytes)):
        return Parsed.failure("options must be a sequence of labels")
    opts = [_str(o) for o in options]
    if not opts:
        return Parsed.failure("no options given")
    if not t.strip():
        return Parsed.failure("empty input")
    if any("\n" in o for o in opts):
        return _printed_output_option(t, opts)
    labels = [_decor(_prepare(o) or "") for o in opts]
    folded = [lab.casefold() for lab in labels]
    raw, strong = _answer_region(t)
    hays = []
    if raw is not None:
        hays.append(raw)
    if not strong:
        hays.append(t)
    for hay in hays:
        norm = " ".join(hay.split())
        key = _decor(norm).casefold()
        if key:
            for idx, lab in enumerate(folded):
                if lab and lab == key:
                    return Parsed.success(idx)
        res = _resolve_options(norm, _option_matches(norm, labels), labels, opts)
        if res is not None:
            return res
    return Parsed.failure(f"no option matched the answer {_snip(_tidy(raw or t))}")


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


# --------------------------------------------------------------------------------------------------------------
# Support checks
# --------------------------------------------------------------------------------------------------------------


def _fmt(x: float) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return f"{x:.12g}"


@_guarded
def check_support(
    value: float,
    *,
    integer: bool = False,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> Parsed:
    """Validate a parsed number against a distribution's support; ``value`` is the (possibly rounded) float.

    * The value must be a finite real number (bools and strings are refused).
    * ``integer=True``: the value must lie within ``1e-9 * max(1, |value|)`` of an integer; the rounded
      integer is returned as a float (``2.0000000001`` -> ``2.0``).
    * ``low`` / ``high`` bound the support, inclusive by default; reasons read like
      ``"value -2 below support minimum 0"`` or ``"value 1 not below exclusive support maximum 1"``.
    """
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes)):
        return Parsed.failure(f"expected a number, got {type(value).__name__}")
    try:
        v = float(value)
    except OverflowError:  # an int beyond the float range
        return Parsed.failure(f"{_TOO_LARGE}: {type(value).__name__} of {_snip(value, 20)}")
    except (TypeError, ValueError):
        return Parsed.failure(f"expected a number, got {type(value).__name__}")
    if not math.isfinite(v):
        return Parsed.failure(f"value {v} is not finite")
    if integer:
        r = round(v)
        if abs(v - r) > 1e-9 * max(1.0, abs(v)):
            return Parsed.failure(f"value {_fmt(v)} is not an integer")
        v = float(r)
    bounds: list[tuple[float, bool, bool]] = []
    for bound, inclusive, is_low in ((low, low_inclusive, True), (high, high_inclusive, False)):
        if bound is None:
            continue
        try:
            b = float(bound)
        except (TypeError, ValueError, OverflowError):
            return Parsed.failure(f"invalid support bound {_snip(bound) if isinstance(bound, int) else repr(bound)}")
        if math.isnan(b):
            return Parsed.failure("invalid support bound nan")
        bounds.append((b, bool(inclusive), is_low))
    for b, inclusive, is_low in bounds:
        if is_low:
            if inclusive and v < b:
                return Parsed.failure(f"value {_fmt(v)} below support minimum {_fmt(b)}")
            if not inclusive and v <= b:
                return Parsed.failure(f"value {_fmt(v)} not above exclusive support minimum {_fmt(b)}")
        else:
            if inclusive and v > b:
                return Parsed.failure(f"value {_fmt(v)} above support maximum {_fmt(b)}")
            if not inclusive and v >= b:
                return Parsed.failure(f"value {_fmt(v)} not below exclusive support maximum {_fmt(b)}")
    return Parsed.success(v)
