"""The output folder of ``ub official truth``, reached only through directory handles: no link is ever followed.

The parent runs as the caller (often root) and writes where the user pointed ``--out``; a release can ship a
folder of that name (the README's own ``--out release/built_truth``), so everything below ``--out`` is treated as
planted. The route: ``--out`` is opened once with ``O_DIRECTORY | O_NOFOLLOW``; each task folder ``<F>`` and its
``.records`` are opened from their parent's handle the same way (``os.open(name, ..., dir_fd=parent)``), and every
file is opened, created, renamed and removed relative to its folder's handle, never by a path walked again. So a
link anywhere at or below ``--out`` (``<F> -> ../ground_truth_codes/<F>``, ``.records -> /etc``) is refused with
one line naming it, and a folder swapped for a link after it was opened changes nothing: the handle still names
the folder that was checked. (The folders above ``--out`` are the user's own path and are followed.)

Files: only a regular file with a single name (no hard link elsewhere) is this runner's. A file is read by opening
it ``O_PATH | O_NOFOLLOW`` (which opens no device, FIFO or socket), checking it with ``fstat`` and reopening that
same inode through ``/proc/self/fd``; a file is written to a new temporary file of its own (``O_CREAT | O_EXCL |
O_NOFOLLOW``) and renamed over the old one, and only after checking that the old one is this runner's (``rename``
would otherwise delete whatever stood there). The lock file is created the same way, or opened only when it is a
regular single-name file. A file is deleted only when this runner wrote it: a record-shaped record
(``{"uid": <its name>, "ground_truth_values": ...}``) or one of its own temporary files; anything else found in
``.records`` is reported and left alone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Any, Callable, Iterator

from ..terminal import escape_controls

__all__ = ["RefusedPath", "TooLarge", "OutDir", "Folder", "TMP_SUFFIX"]

TMP_SUFFIX = ".ub-tmp"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC


class RefusedPath(ValueError):
    """A path at or below --out that is not what this runner made (a link, a device, a hard link...): one line.
    ``what``: what stands there ("a symbolic link", ...)."""

    what = "not what ub official truth made"


class TooLarge(ValueError):
    """A file would be larger than its limit (nothing was written)."""


def kind(st: os.stat_result) -> str:
    """What a path is, for a one-line refusal; "ours" for a regular file with a single name."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    if st.st_nlink != 1:
        return "a file with other names (a hard link)"
    return "ours"


def _lstat_at(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _open_dir_at(dfd: int | None, name: str | Path, label: str, create: bool) -> int | None:
    """A handle of the folder ``name`` (relative to ``dfd``, or a path when ``dfd`` is None), made when ``create``;
    None when it does not exist and not ``create``; :class:`RefusedPath` when it is anything but a folder."""
    at = {} if dfd is None else {"dir_fd": dfd}
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, **at)
    try:
        return os.open(name, _DIR_FLAGS, **at)
    except FileNotFoundError:
        if create:
            raise
        return None
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            raise
        try:
            what = kind(os.stat(name, follow_symlinks=False, **at))
        except OSError:
            what = "not a folder"
        raise RefusedPath(f"{label}: is {'a file' if what == 'ours' else what}, not a folder (ub official truth "
                          "follows no link and writes only into folders it made or checked)") from None


def _refuse_file(label: str, what: str, action: str) -> RefusedPath:
    e = RefusedPath(f"{label}: is {what}, not a file ub official truth wrote: {action}")
    e.what = what
    return e


class Folder:
    """One task folder ``--out/<F>`` (its handle) and its ``.records`` (handle, or None while it does not exist)."""

    def __init__(self, out: "OutDir", name: str, fd: int, records: int | None):
        self.out, self.name, self.fd, self.records = out, name, fd, records
        self.label = f"{out.label}/{name}"

    # ---------------------------------------------------------------------------------------------- checks

    def check_values_file(self, values_name: str) -> None:
        """Refuse (one line) a values file that this runner did not write: no ``.records`` beside it (the
        release's own values, say), or not a regular single-name file."""
        st = _lstat_at(self.fd, values_name)
        if st is None:
            return
        what = kind(st)
        if what != "ours":
            raise _refuse_file(f"{self.label}/{values_name}", what, "it is never replaced; choose another --out")
        if self.records is None:
            raise RefusedPath(f"{self.label}/{values_name}: exists and was not written by ub official truth (no "
                              ".records/ beside it), so it would be replaced: choose another --out")

    def ensure_records(self, records_name: str) -> int:
        if self.records is None:
            self.records = _open_dir_at(self.fd, records_name, f"{self.label}/{records_name}", create=True)
        return self.records

    # ---------------------------------------------------------------------------------------------- files

    def record_names(self) -> list[str]:
        if self.records is None:
            return []
        with os.scandir(self.records) as it:
            return sorted(e.name for e in it)

    def state(self, dfd: int | None, name: str) -> str | None:
        """None (missing), "ours" (a regular single-name file) or what else is there."""
        if dfd is None:
            return None
        st = _lstat_at(dfd, name)
        return None if st is None else kind(st)

    def read(self, dfd: int, name: str, max_bytes: int) -> bytes:
        """The bytes of this runner's file ``name``; :class:`RefusedPath` for anything else (never opened: a
        device's driver is not run, a FIFO does not block), :class:`TooLarge` past ``max_bytes``."""
        fd = _open_ours_at(dfd, name, f"{self.label}/{name}")
        with os.fdopen(fd, "rb") as f:
            if os.fstat(f.fileno()).st_size > max_bytes:
                raise TooLarge(f"it is larger than {max_bytes // 2**20} MB")
            data = f.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise TooLarge(f"it is larger than {max_bytes // 2**20} MB")
        return data

    def remove(self, dfd: int, name: str) -> None:
        """Remove this runner's file ``name`` (checked again just before: a file put there since stays)."""
        if self.state(dfd, name) == "ours":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dfd)

    def write(self, dfd: int, name: str, write: Callable[[Any], None], max_bytes: int | None = None,
              label: str | None = None) -> None:
        """Write ``name`` atomically through ``write(file)`` (a text file that encodes to UTF-8, lone surrogates
        as JSON's ``\\udxxx`` escapes): into a new temporary file of its own, flushed to disk, renamed over the
        old file only if that is this runner's. :class:`TooLarge` past ``max_bytes``; :class:`RefusedPath` when
        something else stands at ``name``. The temporary file is removed if anything fails."""
        label = label or f"{self.label}/{name}"
        what = self.state(dfd, name)
        if what not in (None, "ours"):
            raise _refuse_file(label, what, "left alone")
        tmp = f".{name}.{secrets.token_hex(6)}{TMP_SUFFIX}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dfd)
        try:
            os.fchmod(fd, 0o644)  # whatever the umask: the values are for every user of the machine
            with os.fdopen(fd, "wb", buffering=1 << 20) as raw:
                sink = _BoundedText(raw, max_bytes)
                write(sink)
                raw.flush()
                os.fsync(raw.fileno())
            what = self.state(dfd, name)  # checked again: put there while we wrote?
            if what not in (None, "ours"):
                raise _refuse_file(label, what, "left alone")
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise

    def remove_stale_temporaries(self) -> None:
        """This runner's temporary files left by a run killed mid-write (only called with the --out lock held)."""
        for dfd in (self.fd, self.records):
            if dfd is None:
                continue
            with os.scandir(dfd) as it:
                names = [e.name for e in it if e.name.startswith(".") and e.name.endswith(TMP_SUFFIX)]
            for name in names:
                self.remove(dfd, name)

    def close(self) -> None:
        for fd in (self.records, self.fd):
            if fd is not None:
                os.close(fd)
        self.records = None


class _BoundedText:
    """A text sink over a binary file: UTF-8, lone surrogates (which only a JSON string can hold here) written as
    JSON escapes, :class:`TooLarge` once more than ``limit`` bytes were given."""

    def __init__(self, raw, limit: int | None):
        self.raw, self.limit, self.size = raw, limit, 0

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "backslashreplace")
        self.size += len(data)
        if self.limit is not None and self.size > self.limit:
            raise TooLarge(f"it would be larger than {self.limit // 2**20} MB")
        self.raw.write(data)
        return len(text)


def _open_ours_at(dfd: int, name: str, label: str) -> int:
    """A read-only descriptor of the regular single-name file ``name`` in ``dfd``; :class:`RefusedPath` for
    anything else, which is never opened for reading (see the module docstring)."""
    o_path = getattr(os, "O_PATH", None)
    if o_path is not None and os.path.isdir("/proc/self/fd"):
        handle = os.open(name, o_path | _NOFOLLOW | _CLOEXEC, dir_fd=dfd)
        try:
            what = kind(os.fstat(handle))
            if what != "ours":
                raise _refuse_file(label, what, "left alone")
            return os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | _CLOEXEC)
        finally:
            os.close(handle)
    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    if kind(st) != "ours":
        raise _refuse_file(label, kind(st), "left alone")
    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
    if kind(os.fstat(fd)) != "ours":
        os.close(fd)
        raise _refuse_file(label, "not a regular file", "left alone")
    return fd


class OutDir:
    """``--out``, opened once (``O_DIRECTORY | O_NOFOLLOW``); made (with its parents) when ``create``. ``fd`` is
    None when it does not exist and not ``create``."""

    def __init__(self, out: Path, *, create: bool):
        self.path = Path(out)
        self.label = f"--out {escape_controls(self.path)}"
        if create and not os.path.lexists(self.path):
            os.makedirs(self.path, exist_ok=True)
        self.fd = _open_dir_at(None, self.path, self.label, create=False)
        if create and self.fd is None:
            raise FileNotFoundError(f"{self.label}: could not be made")
        self.folders: dict[str, Folder] = {}

    def folder(self, name: str, records_name: str, *, create: bool) -> Folder | None:
        """The task folder ``name`` and its records folder (opened when they exist; ``<F>`` made when
        ``create``); None when missing and not ``create``. :class:`RefusedPath` for a link or a non-folder."""
        if name in self.folders:
            return self.folders[name]
        if self.fd is None:
            return None
        label = f"{self.label}/{escape_controls(name)}"
        fd = _open_dir_at(self.fd, name, label, create=create)
        if fd is None:
            return None
        try:
            records = _open_dir_at(fd, records_name, f"{label}/{records_name}", create=False)
        except BaseException:
            os.close(fd)
            raise
        self.folders[name] = Folder(self, escape_controls(name), fd, records)
        return self.folders[name]

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Hold an ``flock`` on ``--out/<name>`` for the run: made here, or opened only when it is a regular
        single-name file (:class:`RefusedPath` otherwise); ``ValueError`` (one line) while another run holds it."""
        import fcntl

        label = f"{self.label}/{name}"
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=self.fd)
        except FileExistsError:
            ro = _open_ours_at(self.fd, name, label)  # a link, device, FIFO or hard link is refused, not opened
            try:
                fd = os.open(f"/proc/self/fd/{ro}", os.O_RDWR | _CLOEXEC) if os.path.isdir("/proc/self/fd") \
                    else os.dup(ro)
            finally:
                os.close(ro)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ValueError(f"another ub official truth run is writing to {self.label} (it holds {name}): "
                                 "wait for it to finish, or choose another --out") from None
            yield
        finally:
            os.close(fd)  # releases the lock

    def close(self) -> None:
        for f in self.folders.values():
            f.close()
        self.folders.clear()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

