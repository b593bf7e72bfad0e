"""The one escaper for every text sink: text from outside (a release program's output or errors, a file name, a
model id from a log) made inert wherever the package writes it.

- terminal lines (stdout, stderr): :func:`escape_controls` / :func:`terminal_text` (ESC, C0/C1 controls, bidi and
  invisible format characters written as visible escapes; lines of a multi-line text kept);
- Markdown: :func:`markdown_text` (controls escaped, line breaks as spaces, ``& < >`` HTML-escaped, pipes escaped);
- CSV: :func:`csv_cell` (controls escaped; a text cell starting with ``= + - @``, tab or CR gets a leading ``'``,
  as OWASP's CSV-injection guidance recommends, so a spreadsheet shows it as text, never runs it as a formula;
  numbers stay numbers);
- HTML: Jinja's autoescape, with :func:`html_finalize` escaping the controls of every value first;
- JSON stays exact (``json.dumps`` escapes controls itself; nothing is rewritten)."""

from __future__ import annotations

import re

__all__ = ["csv_cell", "escape_controls", "html_finalize", "markdown_text", "terminal_text"]

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


def terminal_text(text: object) -> str:
    """A multi-line text for the terminal: each line through :func:`escape_controls`, the line breaks kept."""
    return "\n".join(escape_controls(line) for line in str(text).split("\n"))


def markdown_text(v: object) -> str:
    """Text made inert for Markdown renderers: controls escaped, line breaks turned into spaces (a cell stays one
    cell), ``&``, ``<`` and ``>`` HTML-escaped (a model name holding ``<script>`` stays text), pipes escaped."""
    import html

    text = re.sub(r"[\r\n]+", " ", v if isinstance(v, str) else str(v))
    return html.escape(escape_controls(text), quote=False).replace("|", "\\|")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(v: object) -> object:
    """A CSV cell: numbers as they are; text with its controls escaped and, when it starts like a formula, led by
    ``'`` (a negative number written as text stays a number)."""
    if v is None or isinstance(v, (bool, int, float)):
        return v
    text = escape_controls(v if isinstance(v, str) else str(v))
    if text.startswith(_FORMULA_START):
        try:
            float(text)
            return text
        except ValueError:
            return "'" + text
    return text


def html_finalize(v: object) -> object:
    """Jinja ``finalize``: every string value's controls escaped before autoescape writes it. HTML the report built
    itself (``Markup``) stays markup: a ``\\xNN`` escape is inert in HTML, so its controls are escaped in place."""
    if not isinstance(v, str):
        return v
    # line breaks and tabs are whitespace in HTML (the page's own markup is full of them): kept as they are
    out = _HTML_CONTROLS.sub(_escape, v)
    return type(v)(out) if type(v) is not str and hasattr(v, "__html__") else out


_HTML_CONTROLS = re.compile(_CONTROLS.pattern.replace("\x00-\x1f", "\x00-\x08\x0b-\x0c\x0e-\x1f"))
