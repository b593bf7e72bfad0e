"""Reading outside input that may be hostile: server bodies, JSONL lines, results files.

One JSON decoder with the limits every reader shares, so a hostile document is one named, one-line error and
never a traceback:

- bytes must be UTF-8 (the error names the offset of the first bad byte);
- nesting deeper than the interpreter's recursion limit (``[`` x 200,000) is refused, not a ``RecursionError``;
- integers longer than Python's int-to-text limit (4,300 digits by default, ``sys.get_int_max_str_digits``) are
  refused before they are converted (quadratic work otherwise);
- with ``unique_keys=True``, an object naming a key twice is refused (JSON leaves it undefined; Python keeps the
  last silently).

:class:`ErrorSummary` keeps the errors of one read bounded: every error is counted by kind, and only the first
few are kept whole, so the output of a run over a hostile file stays small whatever the file holds.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from typing import Any

__all__ = ["UntrustedJSONError", "UntrustedFileError", "NotRegularFileError", "loads", "read_text", "short",
           "ErrorSummary", "open_regular", "read_bytes"]


class UntrustedJSONError(ValueError):
    """Outside JSON that cannot be read; ``str(e)`` is one line saying why."""


class UntrustedFileError(ValueError):
    """An outside file that cannot be read as text; ``str(e)`` is one line saying why."""


class NotRegularFileError(ValueError):
    """An outside path that is not a regular file (a device, FIFO, socket, folder, or a link when links are not
    followed): never opened. ``str(e)`` is "a symbolic link" or "not a regular file"."""


def _regular(st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise NotRegularFileError("a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError("not a regular file")


def open_regular(path: Any, *, follow_links: bool = False) -> int:
    """A read-only file descriptor of the regular file at ``path``; :class:`NotRegularFileError` for anything else,
    which is never opened (opening a device node runs its driver's ``open``, as root too; a FIFO can block).

    On Linux the path is first opened with ``O_PATH`` (which opens no device, FIFO or socket: the kernel only
    resolves the path), its type checked with ``fstat``, and only a regular file is then opened for reading,
    through ``/proc/self/fd`` (the same inode: nothing swapped in between is opened). Elsewhere: ``lstat``, then
    a non-blocking open, checked again with ``fstat``. ``OSError`` when it cannot be opened."""
    nofollow = 0 if follow_links else getattr(os, "O_NOFOLLOW", 0)
    cloexec = getattr(os, "O_CLOEXEC", 0)
    o_path = getattr(os, "O_PATH", None)
    if o_path is not None and os.path.isdir("/proc/self/fd"):
        handle = os.open(path, o_path | nofollow | cloexec)
        try:
            _regular(os.fstat(handle))
            return os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | cloexec)
        finally:
            os.close(handle)
    _regular(os.stat(path) if follow_links else os.lstat(path))
    fd = os.open(path, os.O_RDONLY | nofollow | cloexec | getattr(os, "O_NONBLOCK", 0))
    try:
        _regular(os.fstat(fd))
    except NotRegularFileError:
        os.close(fd)
        raise
    return fd


class _DuplicateKey(ValueError):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def short(x: Any, width: int = 60) -> str:
    """``repr(x)`` cut to ``width`` characters, never raising: for quoting hostile values in one-line messages
    (a 4,000-digit integer or a megabyte string quoted whole would make every message that size)."""
    try:
        text = repr(x)
    except Exception:  # noqa: BLE001 - an int over the digit limit, a broken __repr__
        text = f"<{type(x).__name__} of {x.bit_length()} bits>" if isinstance(x, int) else f"<{type(x).__name__}>"
    return text if len(text) <= width else text[: width - 3] + "..."


def loads(data: str | bytes | bytearray, *, unique_keys: bool = False) -> Any:
    """``json.loads`` for outside input: the decoded document, or :class:`UntrustedJSONError` with a one-line
    reason (not UTF-8, not valid JSON, nested too deeply, an integer over the digit limit, a repeated key)."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise UntrustedJSONError(f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    try:
        return json.loads(data, object_pairs_hook=_unique_pairs if unique_keys else None)
    except json.JSONDecodeError as e:
        raise UntrustedJSONError(f"not valid JSON ({e.msg})") from None
    except RecursionError:
        raise UntrustedJSONError("JSON nested too deeply to read") from None
    except _DuplicateKey as e:
        raise UntrustedJSONError(f"duplicate key {short(e.args[0], 40)} in a JSON object") from None
    except ValueError as e:  # an integer over sys.get_int_max_str_digits() digits
        raise UntrustedJSONError(f"unreadable JSON ({str(e).split(';')[0]})") from None


def read_bytes(path: Any, max_bytes: int) -> bytes:
    """The bytes of an outside file of at most ``max_bytes`` bytes, or :class:`UntrustedFileError` with a one-line
    reason (missing, not a regular file, too large, unreadable). Reads at most ``max_bytes + 1`` bytes whatever the
    file claims, so a file that grows or a device cannot make it read without bound."""
    from pathlib import Path

    p = Path(path)
    try:
        with os.fdopen(open_regular(p, follow_links=True), "rb") as f:
            data = f.read(int(max_bytes) + 1)
    except NotRegularFileError:
        raise UntrustedFileError(f"{short(str(p), 120)}: not a regular file") from None
    except FileNotFoundError:
        raise UntrustedFileError(f"{short(str(p), 120)}: not a regular file (missing)") from None
    except OSError as e:
        raise UntrustedFileError(f"{short(str(p), 120)}: cannot be read ({e.strerror or type(e).__name__})") from None
    if len(data) > max_bytes:
        raise UntrustedFileError(f"{short(str(p), 120)}: larger than the {max_bytes:,}-byte limit")
    return data


def read_text(path: Any, max_bytes: int) -> str:
    """The UTF-8 text of an outside file of at most ``max_bytes`` bytes (:func:`read_bytes`), or
    :class:`UntrustedFileError` with a one-line reason (missing, not a regular file, too large, unreadable, not
    UTF-8)."""
    data = read_bytes(path, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UntrustedFileError(f"{short(str(path), 120)}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                                 f"{e.start})") from None


class ErrorSummary:
    """The errors of one read: ``total`` counted, ``counts`` by kind, the first ``keep`` messages kept whole.

    Iterating gives the kept messages; :meth:`more_line` says what was left out (None when nothing was)."""

    def __init__(self, keep: int = 20) -> None:
        self.keep = int(keep)
        self.shown: list[str] = []
        self.counts: Counter = Counter()
        self.total = 0

    def add(self, kind: str, message: str) -> None:
        self.total += 1
        self.counts[kind] += 1
        if len(self.shown) < self.keep:
            self.shown.append(message)

    def __len__(self) -> int:
        return self.total

    def __iter__(self):
        return iter(self.shown)

    def more_line(self) -> str | None:
        """``"3,990 more error(s) not shown (by kind, all 4,000: 4,000 x missing runs)"``, or None."""
        left = self.total - len(self.shown)
        if left <= 0:
            return None
        kinds = ", ".join(f"{n:,} x {k}" for k, n in self.counts.most_common())
        return f"{left:,} more error(s) not shown (by kind, all {self.total:,}: {kinds})"

    def lines(self) -> list[str]:
        """The kept messages, then :meth:`more_line` when some were left out: what a command prints."""
        more = self.more_line()
        return [*self.shown, *([more] if more else [])]

    def to_json(self) -> dict[str, Any]:
        return {"errors": list(self.shown), "error_count": self.total, "error_kinds": dict(self.counts)}
