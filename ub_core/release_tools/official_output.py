"""Read what a release ground-truth program prints, as it streams in, without executing it or holding more than
the values it must.

A program prints a Python list of draws: numbers (``1.5``, ``-3``, ``np.float64(1.5)``), labels (``'A'``,
``np.str_('A')``) or lists of those (shuffles), as ``print(list)`` writes them. :class:`OutputReader` is fed the
bytes in chunks and tokenises them once; it keeps two candidate readings, the whole output and its current line
(the list may follow log lines: then the last non-empty line is the list), each a small push-down reader that
holds only the values read so far and gives up, dropping them, as soon as it has more than ``n_values`` values, more
than :data:`MAX_HELD_BYTES` of them, a value longer than :data:`MAX_VALUE_CHARS`, or anything that is not part of
such a list. Nothing is ever evaluated: numbers go through ``int`` / ``float``, a label with backslash escapes
through :func:`ast.literal_eval` of that one short string token. So the parent's memory is bounded by a few
candidates' values whatever a program prints (a 4 MB or 64 MB flood costs the first ``n_values`` values and the
scan), where ``ast.literal_eval`` of the whole output took ~480 bytes per printed byte.

Reading is linear in the output whatever its shape. Each pattern reads a digit string one way only (no
``[0-9]+[.]?[0-9]*``, which a failed match retries at every split: quadratic), and a token that may continue in
the next chunk is kept and read again only once the chunks that arrived since are at least as long as it (so a
40,000-digit number arriving 16 bytes at a time is rescanned ~12 times, not 2,500: the rescans cost at most twice
the output). The text kept is at most about ``2 * MAX_VALUE_CHARS`` plus a chunk.

The finished list must be all numbers, all labels or all lists (shuffles), each value finite and non-empty
(:func:`ub_core.release_tools.official._first_bad_value`), and exactly ``n_values`` long when given.
"""

from __future__ import annotations

import ast
import codecs
import json
import re
import sys
import threading

__all__ = ["OutputReader", "parse_output", "MAX_HELD_BYTES", "MAX_VALUE_CHARS", "MAX_ANY_VALUES"]

MAX_HELD_BYTES = 16 * 1024 * 1024  # values one reading may hold (estimated Python object sizes)
MAX_VALUE_CHARS = 64 * 1024  # one printed value (a label, a number)
MAX_ANY_VALUES = 1_000_000  # values read when no count is expected (n_values=None)

# Every number pattern reads a digit string one way only (``\d+(?:\.\d*)?``, not ``\d+\.?\d*``, which splits
# "123" as "12"+"3" or "1"+"23" ...): a failed match then backtracks linearly, not over every split of a 40,000-digit
# run (quadratic: the parent froze for over a minute on "[" and 40,000 digits).
_NUM = (r"[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+"
        r"|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)")
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n[ \t\r\f\v\n]*)
  | (?P<sep>,)
  | (?P<open>[\[(])
  | (?P<close>[\])])
  | (?P<wnum>(?:np|numpy)\.(?:float|int|uint)_?\d*\(\s*(?P<inner>""" + _NUM + r""")\s*\))
  | (?P<num>""" + _NUM + r""")
  | (?P<wrap>(?:np|numpy)\.(?:float|int|uint|bool|str)_?\d*\()
  | (?P<str>'(?:[^'\\\n]|\\[^\n])*'|"(?:[^"\\\n]|\\[^\n])*")
  | (?P<name>[+-]?[A-Za-z_][\w.]*)
  | (?P<brace>[{])
""", re.VERBOSE)
_NAMES = {"None": None, "True": True, "False": False}
_NON_FINITE = re.compile(r"[+-]?(?:inf|nan|infinity)", re.IGNORECASE)
_DEFER = frozenset({"num", "name", "ws"})  # tokens that may continue in the next chunk
# what may follow such a token at the end of a chunk and still belong to it ("1.5e" before "-05", "np.flo" ...)
_TOKEN_TAIL = re.compile(r"[\w.+-]*")
_NOT_LITERAL = "output is not a Python literal list"

# CPython 3.11 keeps the AST constructor's recursion depth in per-interpreter state, so two threads parsing at once
# can raise "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905): the runner's worker
# threads decode escaped labels one at a time.
_AST_LOCK = threading.Lock()

# Fast path: a run of simple values, each followed by a comma, read with a few C-speed calls instead of a token at
# a time (a release program's 10,000 values come in one or two such runs). Anything else, and the last value of a
# list, goes through the token reader below, with which these runs agree (the tests compare both on every shape).
_FNUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_JNUM = r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?"  # Python's repr of an int or a finite float is JSON
_SQ, _DQ = r"'(?:[^'\\\n]|\\[nrt\\'\"])*'", r'"(?:[^"\\\n]|\\[nrt\\\'"])*"'
_ITEM_NUM = rf"(?:(?:np|numpy)\.(?:float|int|uint)\d*\(\s*{_FNUM}\s*\)|{_FNUM})"
_ITEM_STR = rf"(?:(?:np|numpy)\.str_\(\s*(?:{_SQ}|{_DQ})\s*\)|{_SQ}|{_DQ})"
_SEP = r"[ \t]*,[ \t]*"
_RUNS = (
    ("json", re.compile(rf"(?:{_JNUM}{_SEP})+")),
    ("json", re.compile(rf"(?:\[[ \t]*{_JNUM}(?:{_SEP}{_JNUM})*[ \t]*\]{_SEP})+")),
    ("num", re.compile(rf"(?:{_ITEM_NUM}{_SEP})+")),
    ("str", re.compile(rf"(?:{_ITEM_STR}{_SEP})+")),
    ("shuf_num", re.compile(rf"(?:\[[ \t]*{_ITEM_NUM}(?:{_SEP}{_ITEM_NUM})*[ \t]*\]{_SEP})+")),
    ("shuf_str", re.compile(rf"(?:\[[ \t]*{_ITEM_STR}(?:{_SEP}{_ITEM_STR})*[ \t]*\]{_SEP})+")),
)
_NUM_TOKS = re.compile(rf"(?:(?:np|numpy)\.\w+\(\s*)?({_FNUM})")
_STR_TOKS = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")  # whole tokens, quotes and all
_INNER_NUM = re.compile(r"\[([^\]]*)\]")
_INNER_STR = re.compile(rf"\[((?:[^\]'\"]|{_SQ}|{_DQ})*)\]")
_IS_FLOAT = re.compile(r"[.eE]").search
_ESCAPES = (("\\n", "\n"), ("\\r", "\r"), ("\\t", "\t"), ("\\'", "'"), ('\\"', '"'))


def _nums(text: str) -> list:
    return [float(t) if _IS_FLOAT(t) else int(t) for t in _NUM_TOKS.findall(text)]


def _unescape(token: str) -> str:
    """The label a quoted token (its own quotes included) stands for, as Python reads it."""
    s = token[1:-1]
    if "\\" not in s:
        return s
    if "\\\\" in s:  # an escaped backslash: Python's own reader of the token itself, in its own quotes (a
        with _AST_LOCK:  # label of both quote kinds cannot be put in other quotes: repr(["a'\"\\"]))
            return ast.literal_eval(token)
    for esc, char in _ESCAPES:  # each backslash starts one of these (the run patterns allow no other escape)
        s = s.replace(esc, char)
    return s


def _strs(text: str) -> list:
    return [_unescape(t) for t in _STR_TOKS.findall(text)]


def _run_values(kind: str, span: str) -> tuple[list, int]:
    """The values of a fast-path run and their estimated size in bytes."""
    if kind == "json":
        vals = json.loads("[" + span.rstrip(" \t")[:-1] + "]")
        return vals, sum(72 + 48 * len(v) if isinstance(v, list) else 40 for v in vals)
    if kind == "num":
        vals = _nums(span)
        return vals, 40 * len(vals)
    if kind == "str":
        vals = _strs(span)
        # sys.getsizeof: a label's real size (4 bytes a character where it holds an astral one); its length
        # alone let 16 MB "of values" of emoji hold 62 MB in the parent
        return vals, sum(sys.getsizeof(v) + 8 for v in vals)
    inner = _INNER_NUM if kind == "shuf_num" else _INNER_STR
    read = _nums if kind == "shuf_num" else _strs
    vals = [read(m.group(1)) for m in inner.finditer(span)]
    return vals, sum(72 + 48 * len(v) + sum(sys.getsizeof(x) for x in v if isinstance(x, str)) for v in vals)


class _Dead(Exception):
    pass


class _Reading:
    """One candidate reading (the whole output, or one line): a push-down reader of ``[v, v, ...]`` where ``v`` is
    a scalar or a flat list of scalars (a ``(...)`` tuple counts as a list; a parenthesised scalar as the scalar)."""

    __slots__ = ("cap", "error", "done", "stack", "values", "held", "expect", "wrap", "started")

    def __init__(self, cap: int):
        self.cap = cap
        self.error: str | None = None
        self.done = False
        self.started = False
        self.stack: list[list] = []  # open containers: [closing char, items, saw a comma]
        self.values: list = []
        self.held = 0
        self.expect = "open"  # open | value | sep | end ; wrap: inside np.xxx( ... )
        self.wrap = None

    @property
    def alive(self) -> bool:
        return self.error is None

    def kill(self, reason: str) -> None:
        self.error = reason
        self.stack = self.values = None  # drop what was held

    def feed(self, kind: str, m: re.Match) -> None:
        try:
            self._feed(kind, m)
        except _Dead as e:
            self.kill(str(e))

    def _scalar(self, kind: str, m: re.Match):
        text = m.group("inner") if kind == "wnum" else m.group(0)
        if kind in ("num", "wnum"):
            if len(text) > MAX_VALUE_CHARS:
                raise _Dead(f"{_NOT_LITERAL} (a number longer than {MAX_VALUE_CHARS} characters)")
            self.held += 32
            try:
                if any(c in text for c in ".eE") and text.lstrip("+-")[:2].lower() not in ("0x", "0o", "0b"):
                    return float(text.replace("_", ""))
                return int(text, 0)
            except ValueError:
                limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
                if limit and sum(c.isdigit() for c in text) > limit:  # stored, it could not be written as JSON
                    raise _Dead(f"output holds an integer of more than {limit} digits") from None
                raise _Dead(f"{_NOT_LITERAL} (bad number)") from None
        if kind == "str":
            # the token's real size (4 bytes a character where it holds an astral one, as the value will): its
            # length alone let 16 MB "of values" of emoji hold 62 MB
            self.held += sys.getsizeof(text)
            if "\\" not in text:
                return text[1:-1]
            with _AST_LOCK:
                try:
                    return ast.literal_eval(text)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    raise _Dead(f"{_NOT_LITERAL} (bad string escape)") from None
        if kind == "name":
            if text in _NAMES:
                self.held += 8
                return _NAMES[text]
            if _NON_FINITE.fullmatch(text):
                raise _Dead(f"output holds a non-finite value ({text})")
        raise _Dead(_NOT_LITERAL)

    def _feed(self, kind: str, m: re.Match) -> None:
        if self.error is not None:
            return
        self.started = True
        expect = self.expect
        if expect == "end":
            raise _Dead(f"{_NOT_LITERAL} (more text after the list)")
        if kind == "brace":
            raise _Dead("output is a dict or set, not a list" if expect == "open" else _NOT_LITERAL)
        if expect == "open":
            if kind != "open":
                if kind in ("num", "wnum", "str"):
                    value = self._scalar(kind, m)
                    raise _Dead(f"output is a {type(value).__name__}, not a list")
                raise _Dead(_NOT_LITERAL)
            self.stack.append([")" if m.group(0) == "(" else "]", self.values, False])
            self.expect = "value"
            return
        if self.wrap is not None:  # np.xxx( value )
            if self.wrap == "value":
                self.wrap = ("close", self._scalar(kind, m))
                return
            if kind != "close" or m.group(0) != ")":
                raise _Dead(_NOT_LITERAL)
            value, self.wrap = self.wrap[1], None
            self._add(value)
            return
        if kind == "close":
            closer, items, comma = self.stack[-1]
            if m.group(0) != closer or (expect == "value" and items and not comma):
                raise _Dead(_NOT_LITERAL)
            self.stack.pop()
            if not self.stack:  # the whole list
                if closer == ")" and len(items) == 1 and not comma:  # (x): x itself
                    if not isinstance(items[0], list):
                        raise _Dead(f"output is a {type(items[0]).__name__}, not a list")
                    self.values = items[0]
                self.expect = "end"
                return
            if closer == ")" and len(items) == 1 and not comma:  # (x) is x, not a tuple
                self.stack[-1][1].pop()
                self._add(items[0])
                return
            self.expect = "sep"
            return
        if expect == "sep":
            if kind != "sep":
                raise _Dead(_NOT_LITERAL)
            self.stack[-1][2] = True
            self.expect = "value"
            return
        # expect == "value"
        if kind == "open":
            if len(self.stack) >= 2:
                raise _Dead(f"{_NOT_LITERAL} (lists nested deeper than a list of shuffles)")
            inner: list = []
            self._add(inner)
            self.stack.append([")" if m.group(0) == "(" else "]", inner, False])
            self.held += 64
            self.expect = "value"
            return
        if kind == "wrap":
            self.wrap = "value"
            return
        if kind == "sep":
            raise _Dead(_NOT_LITERAL)
        self._add(self._scalar(kind, m))

    def add_run(self, values: list, size: int) -> None:
        """Values of a fast-path run (each was followed by a comma)."""
        items = self.stack[-1][1]
        items.extend(values)
        self.stack[-1][2] = True
        self.held += size + 8 * len(values)
        if len(self.stack) == 1 and len(items) > self.cap:
            self.kill(f"printed more than {self.cap} values")
        elif self.held > MAX_HELD_BYTES:
            self.kill(f"output holds more than {MAX_HELD_BYTES // 2**20} MB of values")

    def _add(self, value) -> None:
        items = self.stack[-1][1]
        items.append(value)
        self.held += 8
        if len(self.stack) == 1 and len(items) > self.cap:
            raise _Dead(f"printed more than {self.cap} values")
        if self.held > MAX_HELD_BYTES:
            raise _Dead(f"output holds more than {MAX_HELD_BYTES // 2**20} MB of values")
        self.expect = "sep"

    def result(self) -> list:
        if self.error is not None:
            raise ValueError(self.error)
        if not self.started:
            raise ValueError("printed nothing")
        if self.wrap is not None or self.expect != "end":
            raise ValueError(f"{_NOT_LITERAL} (it ends before the list closes)")
        return self.values


class OutputReader:
    """Feed a program's stdout in chunks (:meth:`feed`), then :meth:`finish` for its list of values (or a one-line
    ``ValueError``). Holds at most two readings' values (see the module docstring)."""

    def __init__(self, n_values: int | None = 10_000):
        self.n_values = n_values
        self.cap = n_values if n_values is not None else MAX_ANY_VALUES
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._buf = ""  # the text at hand not yet read: a token that may continue in the next chunk
        # chunks that arrived since, not yet scanned, and their length: the retained text is scanned again only
        # once they have at least doubled it (or at the end), so a value that arrives a byte at a time costs
        # linear work, not a rescan of the whole retained text per chunk (quadratic)
        self._pending: list[str] = []
        self._pending_len = 0
        self._whole = _Reading(self.cap)
        self._line: _Reading | None = None  # the current line's reading (from the second line on)
        self._line_no = 1
        self._line_started = False
        self._last: _Reading | None = None  # the last finished non-empty line (from the second line on)
        self._last_no = 0  # number of the last non-empty line
        self._error: str | None = None
        self._skip = False  # the current line cannot be the list: skip to its end

    def feed(self, data: bytes) -> None:
        """Read one chunk. Never raises: whatever goes wrong in reading fails this output (one line), not the run."""
        try:
            self._feed(data)
        except Exception as e:  # noqa: BLE001 - a reader bug or a resource error is this program's failure
            self._fail(_unreadable(e))

    def _feed(self, data: bytes) -> None:
        if self._error is not None:
            return
        try:
            text = self._decoder.decode(data)
        except UnicodeDecodeError:
            self._fail("output is not UTF-8 text")
            return
        if self._buf:
            self._pending.append(text)
            self._pending_len += len(text)
            if self._pending_len < len(self._buf):
                return
            text = "".join([self._buf, *self._pending])
            self._pending, self._pending_len = [], 0
        self._scan(text, final=False)

    def _fail(self, reason: str) -> None:
        self._error = reason
        self._whole = self._line = self._last = None
        self._buf = ""
        self._pending, self._pending_len = [], 0

    def _live(self) -> bool:
        """Could some reading still take the text at hand (a line not yet started could)."""
        if self._whole.alive:
            return True
        if self._line_no == 1:
            return False
        return not self._line_started or (self._line is not None and self._line.alive)

    def _newline(self, count: int) -> None:
        if self._line is not None and self._line_started:
            self._last = self._line
        self._line_no += count
        self._line = None  # made at the line's first token: blank lines cost nothing
        self._line_started = False
        self._skip = False

    def _scan(self, buf: str, final: bool) -> None:
        pos, n = 0, len(buf)
        match = _TOKEN.match
        while pos < n:
            if self._skip or not self._live():
                j = buf.find("\n", pos)
                if j < 0:
                    pos = n
                    break
                pos = j
            run = self._fast(buf, pos)
            if run:
                pos = run
                continue
            m = match(buf, pos)
            if m is None:
                j = buf.find("\n", pos)
                if not final and j < 0 and n - pos <= MAX_VALUE_CHARS:
                    break  # perhaps a label that continues in the next chunk
                self._token_for_all("bad", None)
                if j < 0 and n - pos > MAX_VALUE_CHARS:
                    self._kill_all(f"{_NOT_LITERAL} (a value longer than {MAX_VALUE_CHARS} characters)")
                pos = j if j >= 0 else n
                continue
            kind = m.lastgroup
            end = m.end()
            if not final and kind in _DEFER and n - pos <= MAX_VALUE_CHARS and _TOKEN_TAIL.fullmatch(buf, end, n):
                break  # it may continue in the next chunk: read it then
            pos = end
            if kind == "ws":
                continue
            if kind == "nl":
                self._newline(m.group(0).count("\n"))
                continue
            self._token_for_all(kind, m)
        self._buf = buf[pos:]

    def _fast(self, buf: str, pos: int) -> int:
        """Read a run of simple values at ``pos`` into every live reading, when all of them wait for a value at the
        same depth; returns the position after the run, or 0."""
        if buf[pos] in " \t\r\n\f\v":
            return 0
        if not self._line_started:
            self._token_for_all("mark", None)
        readings = [r for r in (self._whole, self._line) if r is not None and r.alive]
        if not readings:
            return 0
        depth = len(readings[0].stack)
        if any(r.expect != "value" or r.wrap is not None or len(r.stack) != depth for r in readings):
            return 0
        for kind, regex in _RUNS:
            if depth != 1 and kind.startswith("shuf"):
                break
            m = regex.match(buf, pos)
            if m:
                try:
                    values, size = _run_values(kind, m.group(0))
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    return 0  # an int over the digit limit, say: the token reader says why, one value at a time
                for r in readings:
                    r.add_run(values, size)
                if not self._live():
                    self._skip = True
                return m.end()
        return 0

    def _token_for_all(self, kind: str, m) -> None:
        if not self._line_started:
            self._line_started = True
            self._last_no = self._line_no
            self._last = None  # a newer non-empty line
            if self._line_no > 1:
                self._line = _Reading(self.cap)
        if kind == "mark":
            return
        for reading in (self._whole, self._line):
            if reading is not None and reading.alive:
                if kind == "bad":
                    reading.kill(_NOT_LITERAL)
                else:
                    reading.feed(kind, m)
        if not self._live():
            self._skip = True

    def _kill_all(self, reason: str) -> None:
        for reading in (self._whole, self._line):
            if reading is not None and reading.alive:
                reading.kill(reason)

    def finish(self) -> list:
        """The program's values, checked; ``ValueError`` with a one-line reason otherwise (never another
        exception)."""
        try:
            return self._finish()
        except ValueError:
            raise
        except Exception as e:  # noqa: BLE001 - see feed
            raise ValueError(_unreadable(e)) from None

    def _finish(self) -> list:
        if self._error is not None:
            raise ValueError(self._error)
        try:
            tail = self._decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise ValueError("output is not UTF-8 text") from None
        self._scan("".join([self._buf, *self._pending, tail]), final=True)
        self._pending, self._pending_len = [], 0
        if self._line is not None and self._line_started:
            self._last = self._line
        whole = self._whole
        if whole.alive and whole.expect == "end":
            values = whole.values
        elif self._last_no <= 1 or self._last is None:
            values = whole.result()
        else:
            values = self._last.result()
        return _check(values, self.n_values)


def _unreadable(e: BaseException) -> str:
    return f"output could not be read ({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})"


def _check(values: list, n_values: int | None) -> list:
    if not values:
        raise ValueError("output is an empty list")
    from .official import _first_bad_value, _plainly_good

    if not _plainly_good(values, False):  # plainly good values are also all of one kind
        bad = _first_bad_value(values)
        if bad:
            raise ValueError(bad)
        kinds = {"list" if isinstance(v, list) else "label" if isinstance(v, str) else "number" for v in values}
        if len(kinds) > 1:
            raise ValueError(f"values mix kinds ({', '.join(sorted(kinds))})")
    if n_values is not None and len(values) != n_values:
        raise ValueError(f"printed {len(values)} values, expected {n_values}")
    return values


def parse_output(text: str, n_values: int | None = 10_000) -> list:
    """The list a program printed (``text``: all of its output), read as :class:`OutputReader` reads a stream.
    Raises ``ValueError`` (one line) when it is not a list of finite numbers, non-empty labels, or lists of those
    (all of one kind), or when its length is not ``n_values``."""
    reader = OutputReader(n_values)
    reader.feed(text.encode("utf-8", "surrogatepass"))
    return reader.finish()
