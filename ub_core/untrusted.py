"""The gate: every byte the package reads from a path a user or a release supplies (logs, results, samples,
releases, banks, caches, program output) comes through here, so that a hostile file is one named, one-line error
in bounded memory and time, never a hang, a traceback or an unbounded read.

**Files.** Only regular files are opened: a FIFO (which would block for ever), a device (``/dev/zero`` never
ends; opening a device runs its driver), a socket or a folder is refused by name (:class:`NotRegularFileError`)
without being opened for reading. **Link policy, stated once:** a symbolic link a user or release supplies is
followed, and what it resolves to must be a regular file (a link to ``/dev/zero`` is a device and refused); only
the release programs of ``ub official truth`` (``follow_links=False``) refuse a link itself. The size is checked
with ``fstat`` before a byte is read (a 1 GB sparse file is refused at once) and the read stops one byte past the
cap whatever the file claims (it may grow). Readers:

- :func:`read_bytes` / :func:`read_text`: a whole file under a byte cap;
- :func:`iter_lines`: a JSONL file line by line, each line capped, the file capped;
- :func:`read_npz`: a ``.npz`` archive's arrays, each member capped on its *unpacked* bytes (streamed, whatever
  its zip directory claims), a running total per file and against an :class:`UnpackBudget` per run; never a
  pickled object array;
- :func:`zip_unpacked_size` (:mod:`ub_core.report.eval_zip`): the unpacked size of each member of a zip handed to
  a third-party reader (Inspect), streamed under the same caps;
- :func:`check_regular`: the type check alone, for a path handed to a third-party reader.

**JSON.** One decoder with the limits every reader shares:

- bytes must be UTF-8 (the error names the offset of the first bad byte);
- nesting deeper than the interpreter's recursion limit (``[`` x 200,000) is refused, not a ``RecursionError``;
- integers longer than Python's int-to-text limit (4,300 digits by default, ``sys.get_int_max_str_digits``) are
  refused before they are converted (quadratic work otherwise);
- with ``unique_keys=True``, an object naming a key twice is refused (JSON leaves it undefined; Python keeps the
  last silently);
- where a number is expected, :func:`finite_number` turns a huge integer (``10**400``: no float holds it), ``NaN``,
  ``Infinity``, a bool or a string into :class:`UntrustedNumberError` with a one-line reason, for one named gap.

:class:`ErrorSummary` keeps the errors of one read bounded: every error is counted by kind, and only the first
few are kept whole, so the output of a run over a hostile file stays small whatever the file holds.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import zipfile
from collections import Counter
from typing import Any

__all__ = ["UntrustedJSONError", "UntrustedFileError", "NotRegularFileError", "UntrustedNumberError",
           "UnpackBudget", "loads", "read_text", "short", "ErrorSummary", "open_regular", "read_bytes",
           "check_regular", "iter_lines", "read_npz", "finite_number", "file_kind", "READERS"]


#: The gate's readers of a path: each is crossed with every hostile file of the class by the standing fuzz test
#: (tests/hostile/test_gate_fuzz.py), which fails when a reader here is not exercised there.
READERS = ("read_bytes", "read_text", "iter_lines", "read_npz", "check_regular")


class UntrustedJSONError(ValueError):
    """Outside JSON that cannot be read; ``str(e)`` is one line saying why."""


class UntrustedFileError(ValueError):
    """An outside file that cannot be read; ``str(e)`` is one line naming the file and saying why, ``reason`` the
    why alone (for a caller that names the file its own way)."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason or message


class NotRegularFileError(ValueError):
    """An outside path that is not a regular file (a device, FIFO, socket, folder, or a link when links are not
    followed): never opened. ``str(e)`` is "a symbolic link" or "not a regular file"."""


class UntrustedNumberError(ValueError):
    """An outside value where a finite number is expected; ``str(e)`` is one line saying why."""


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` is, in words: ``a FIFO``, ``a character device``, ``a regular file``..."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "an unknown file type"


def _regular(st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise NotRegularFileError("a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(f"not a regular file ({file_kind(st.st_mode)})")


def _file_error(path: Any, e: OSError | NotRegularFileError) -> UntrustedFileError:
    where = short(str(path), 120)
    if isinstance(e, NotRegularFileError):
        why = str(e)
    elif isinstance(e, FileNotFoundError):
        why = "not a regular file (missing)"
    else:
        why = f"cannot be read ({e.strerror or type(e).__name__})"
    return UntrustedFileError(f"{where}: {why}", why)


def check_regular(path: Any, max_bytes: int | None = None) -> int:
    """The size of the regular file at ``path`` (links followed), for a path handed to a reader outside this
    module (Inspect's); :class:`UntrustedFileError` naming what it is otherwise, or when it is over ``max_bytes``.
    Nothing is opened for reading."""
    try:
        fd = open_regular(path, follow_links=True)
    except (OSError, NotRegularFileError) as e:
        raise _file_error(path, e) from None
    try:
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if max_bytes is not None and size > max_bytes:
        why = f"larger than the {max_bytes:,}-byte limit ({size:,} bytes)"
        raise UntrustedFileError(f"{short(str(path), 120)}: {why}", why)
    return size


class UnpackBudget:
    """Bytes a whole run may unpack from archives (zip members, ``.npz`` arrays), counted as they are unpacked:
    one archive under its own caps cannot make a run of many unpack without bound. ``take`` raises
    :class:`UntrustedFileError` past the budget."""

    def __init__(self, total_bytes: int) -> None:
        self.total = int(total_bytes)
        self.used = 0

    def take(self, n: int, where: str) -> None:
        self.used += int(n)
        if self.used > self.total:
            raise UntrustedFileError(f"{where}: the run's budget of {self.total:,} unpacked bytes is spent")


def finite_number(x: Any, what: str = "value") -> float:
    """``x`` as a finite float where the outside input must hold a number; :class:`UntrustedNumberError` (one
    line) for a bool, a string, a huge integer (``10**400``: over the float range), ``NaN`` or an infinity."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise UntrustedNumberError(f"{what} is not a number ({short(x, 40)})")
    try:
        v = float(x)
    except OverflowError:
        raise UntrustedNumberError(f"{what} is an integer of {x.bit_length():,} bits, beyond the float "
                                   "range") from None
    if not math.isfinite(v):
        raise UntrustedNumberError(f"{what} is {short(x, 20)}, not a finite number")
    return v


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
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:  # refused before a byte is read (a sparse file of a terabyte costs nothing)
                why = f"larger than the {max_bytes:,}-byte limit ({size:,} bytes)"
                raise UntrustedFileError(f"{short(str(p), 120)}: {why}", why)
            data = f.read(int(max_bytes) + 1)
    except (OSError, NotRegularFileError) as e:
        raise _file_error(p, e) from None
    if len(data) > max_bytes:
        why = f"larger than the {max_bytes:,}-byte limit"
        raise UntrustedFileError(f"{short(str(p), 120)}: {why}", why)
    return data


def iter_lines(path: Any, max_bytes: int, max_line_bytes: int):
    """``(line number, bytes)`` of each line of the outside text file at ``path`` (a JSONL file), in bounded
    memory: a line longer than ``max_line_bytes`` is given as ``None`` (its bytes skipped unread into memory, one
    named skip for the caller), and past ``max_bytes`` in all :class:`UntrustedFileError` is raised (also at once
    when the file's size is over it). Opening is :func:`open_regular`'s (a FIFO or device is refused)."""
    try:
        fh = os.fdopen(open_regular(path, follow_links=True), "rb")
    except (OSError, NotRegularFileError) as e:
        raise _file_error(path, e) from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            why = f"larger than the {max_bytes:,}-byte limit ({size:,} bytes)"
            raise UntrustedFileError(f"{short(str(path), 120)}: {why}", why)
        seen, lineno = 0, 0
        while True:
            try:
                line = fh.readline(max_line_bytes + 1)
            except OSError as e:
                raise _file_error(path, e) from None
            if not line:
                return
            lineno += 1
            seen += len(line)
            too_long = len(line) > max_line_bytes and not line.endswith(b"\n")
            while too_long:  # the rest of the over-long line, a piece at a time
                piece = fh.readline(1 << 20)
                seen += len(piece)
                if not piece or piece.endswith(b"\n") or seen > max_bytes:
                    break
            if seen > max_bytes:
                why = f"larger than the {max_bytes:,}-byte limit; the rest is not read"
                raise UntrustedFileError(f"{short(str(path), 120)}: {why}", why)
            yield lineno, (None if too_long else line)


def _unpacked_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int, where: str,
                     budget: UnpackBudget | None) -> bytes:
    """One member's bytes, decompressed a piece at a time and stopped one byte past ``cap`` (its directory may
    understate what it expands to); every piece is counted against ``budget``."""
    out = bytearray()
    with zf.open(info) as fh:
        while True:
            piece = fh.read(min(1 << 20, cap + 1 - len(out)))
            if not piece:
                return bytes(out)
            if budget is not None:
                budget.take(len(piece), where)
            out += piece
            if len(out) > cap:
                raise UntrustedFileError(f"{where}: unpacks to more than the {cap:,}-byte limit per member")


def read_npz(path: Any, *, max_file_bytes: int, max_member_bytes: int, max_total_bytes: int,
             budget: UnpackBudget | None = None, data: bytes | None = None) -> dict[str, Any]:
    """The arrays of the outside ``.npz`` archive at ``path``: the file under ``max_file_bytes``, each member under
    ``max_member_bytes`` *unpacked* and all of them under ``max_total_bytes`` (and ``budget``), every cap checked
    as the bytes are unpacked, never from what the archive declares. Pickled (object) arrays are refused. One-line
    :class:`UntrustedFileError` for any of it. ``data``: the file's bytes, already read through :func:`read_bytes`
    (and checked by the caller), so that what is checked is what is unpacked."""
    import numpy as np

    if data is None:
        data = read_bytes(path, max_file_bytes)
    where = short(str(path), 120)
    total = UnpackBudget(max_total_bytes)
    out: dict[str, Any] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                name = info.filename.removesuffix(".npy")
                member_where = f"{where}: member {short(info.filename, 60)}"
                raw = _unpacked_member(zf, info, max_member_bytes, member_where, budget)
                total.take(len(raw), f"{where}: its members together")
                out[name] = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
    except UntrustedFileError as e:
        msg = str(e)
        if "members together" in msg:
            msg = f"{where}: members unpack to more than the {max_total_bytes:,}-byte limit per file"
        raise UntrustedFileError(msg, msg[len(where) + 2:] if msg.startswith(f"{where}: ") else msg) from None
    except Exception as e:  # noqa: BLE001 - zipfile, zlib and numpy raise many types on a damaged archive
        why = f"not a readable .npz ({short(str(e) or type(e).__name__, 80)})"
        raise UntrustedFileError(f"{where}: {why}", why) from None
    return out


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
