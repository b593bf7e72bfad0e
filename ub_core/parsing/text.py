"""The result type and text normalisation every parser starts from.

Part of :mod:`ub_core.parsing` (see its docstring for the decisions every parser shares)."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

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


#: What an adapter records in place of a reply the serving side failed to deliver (a null or non-text choice, a
#: repeated or out-of-range choice index): every parser fails it with the reason that follows the prefix, so it
#: counts as an invalid reply and is never read as an answer, whatever the options. Model text never starts with
#: NUL (and a reply that did would be invalid anyway).
INVALID_REPLY_PREFIX = "\x00invalid reply: "


def invalid_reply(reason: str) -> str:
    """The recorded text of an undelivered reply: :data:`INVALID_REPLY_PREFIX` + ``reason``."""
    return INVALID_REPLY_PREFIX + _one_line(reason)


def invalid_reply_reason(text: object) -> str | None:
    """``"invalid reply: <reason>"`` for a text made by :func:`invalid_reply`, else None."""
    if isinstance(text, str) and text.startswith(INVALID_REPLY_PREFIX):
        return text[1:]
    return None


def _guarded(fn: Callable[..., Parsed]) -> Callable[..., Parsed]:
    """Last line of defence: turn any unexpected exception into a failure instead of raising. A reply recorded
    by :func:`invalid_reply` fails with its reason before the parser sees it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Parsed:
        invalid = invalid_reply_reason(args[0]) if args else None
        if invalid is not None:
            return Parsed.failure(invalid)
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
