"""Number tokens: scanning a reply for numbers in every notation the package accepts.

Part of :mod:`ub_core.parsing` (see its docstring for the decisions every parser shares)."""

from __future__ import annotations

import math
import re
from typing import NamedTuple, Sequence

from .text import Parsed, _prepare, _snip

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
    UnpredictaBench's sec. 4.4). Never raises; non-strings and non-finite tokens give nothing."""
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
