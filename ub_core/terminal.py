"""Text from outside (a release program's output or errors, a file name) made safe to print on a terminal."""

from __future__ import annotations

import re

__all__ = ["escape_controls"]

# C0 and C1 controls (ESC starts terminal escape sequences, CR rewrites the line, BEL, BS, DEL), the line and
# paragraph separators, the invisible format characters that reorder or hide text (bidirectional overrides and
# isolates, zero-width characters, the soft hyphen, BOM) and lone surrogates.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
                       "\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]")


def _escape(m: re.Match) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: object, limit: int | None = None) -> str:
    """``text`` with every control or invisible format character written as a ``\\xNN`` / ``\\uNNNN`` escape, so
    that printing it can neither drive the terminal (ESC sequences), rewrite what was printed before (CR, BS) nor
    hide or reorder characters; cut to ``limit`` characters (with ``...``) when given."""
    s = text if isinstance(text, str) else str(text)
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 3)] + "..."
    return _CONTROLS.sub(_escape, s)
