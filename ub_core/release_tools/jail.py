"""Run a third-party program in a jail, under whole-program limits (used by ``ub official truth``).

The jail is bubblewrap with its own namespaces, a read-only view of the few folders a program needs, a throwaway
uid when run as root, and a seccomp filter; memory, processes, CPU, wall clock and scratch are limited for the whole
program, by a cgroup where one is writable and by rlimits and a 50 ms watchdog otherwise. Where no jail can be made,
:func:`prepare` raises :class:`JailError` with one line naming the cause. What each part refuses, and why:
docs/design/jail.md.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..terminal import escape_controls

__all__ = ["JailError", "Sandbox", "RunResult", "prepare", "run", "ENV_ALLOW", "NOT_PROTECTED"]

ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
#: what a program run with ``jail=False`` can do (the warning printed with ``--no-jail``)
NOT_PROTECTED = ("programs run as your user: they can read your files and other processes' environments (tokens, "
                 "keys), write wherever you can (your shell start-up files, the site-packages of this Python), use "
                 "the network, and leave processes behind; nor is there a seccomp filter (they can read your "
                 "session keyring and open vsock sockets to the hypervisor)")
BWRAP_MIN = (0, 7, 0)  # --size (a capped tmpfs)
PROGRAM_DIR = "/program"  # where the program's folder appears in the jail (read-only)
INNER_UID = 1000  # the program's uid inside its user namespace: not 0, so it holds no capability there
POLL_S = 0.05
#: open files per process under the fallback limits: it also bounds the descriptors a user can have in flight in
#: unix sockets (SCM_RIGHTS, sent and closed: in no process), which no watchdog sees
FALLBACK_NOFILE = 64
JAIL_TASKS = 2  # tasks of the jail itself, besides the program's: bwrap outside, the namespace's init inside
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")
_TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SCRATCH_POINTS = ("/", "/tmp", "/dev", "/dev/shm")  # made by the jail itself, with their own modes

# Runs first inside the jail (``python -I -S -c``): sets the per-process limits, then becomes the program. Inside
# the new user namespace RLIMIT_NPROC counts this program's tasks only; set outside, it would count all of the
# user's processes and could stop bwrap itself.
_SHIM = """import os, resource, sys
a = sys.argv
uid = int(a[1])
if uid >= 0:  # started as root (no user namespace): become the throwaway uid, all ids and no groups, for good
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != uid or os.getgroups():
        raise SystemExit("ub jail: could not drop to uid %d" % uid)
for name, value in zip(("RLIMIT_NPROC", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE"), a[2:6]):
    if int(value) >= 0:
        resource.setrlimit(getattr(resource, name), (int(value), int(value)))
resource.setrlimit(resource.RLIMIT_CPU, (int(a[6]), int(a[6]) + 1))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
os.execv(a[7], a[7:])
"""


# Runs first, outside the jail (``python -I -S -c``): joins the program's cgroups, gives it a new, empty session
# keyring (the parent's would otherwise be inherited: /proc/keys lists the keys a process possesses through it,
# whatever its uid; keyctl is refused inside the jail, so this is done before), then becomes bwrap.
_LAUNCH = """import ctypes, os, sys
a = sys.argv[1:]
n = a.index("--")
for path in a[1:n]:
    with open(path, "w") as f:
        f.write(str(os.getpid()))
if int(a[0]) >= 0:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.syscall(ctypes.c_long(int(a[0])), ctypes.c_long(1), None)  # KEYCTL_JOIN_SESSION_KEYRING, anonymous
os.execv(a[n + 1], a[n + 1:])
"""


class JailError(RuntimeError):
    """No jail can be made here; the message is one line naming the cause. ``fixable``: the cause is one the user
    can mend on this machine (a folder's mode), which the message says how to; running without a jail is then no
    answer to offer."""

    def __init__(self, message: str, *, fixable: bool = False):
        super().__init__(message)
        self.fixable = fixable


@dataclass(frozen=True)
class RunResult:
    """How a jailed run ended. ``signal``: the signal that ended the program, if one did; ``limit``: the limit
    that stopped it (the runner killed it), if any."""

    returncode: int | None
    signal: int | None
    limit: str | None
    stderr_tail: bytes
    seconds: float


# ------------------------------------------------------------------------------------------------ cgroups

class _Cgroups:
    """Per-program cgroups under the runner's own cgroups of the v1 ``memory`` and ``pids`` hierarchies, where the
    runner may create them (root, or a delegated hierarchy). Detected once by making and removing a probe."""

    _counter = itertools.count()

    def __init__(self, memory: Path, pids: Path):
        self.memory, self.pids = memory, pids

    @classmethod
    def detect(cls) -> "_Cgroups | None":
        try:
            own = {}
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, ctrls, path = line.split(":", 2)
                for c in ctrls.split(","):
                    own[c] = path
            mounts = {}
            for line in Path("/proc/self/mountinfo").read_text().splitlines():
                left, _, right = line.partition(" - ")
                fields, rfields = left.split(), right.split()
                if len(rfields) >= 3 and rfields[0] == "cgroup":
                    for c in rfields[2].split(","):
                        if c in ("memory", "pids"):
                            mounts[c] = (fields[3], fields[4])  # (root within the hierarchy, mount point)
            bases = {}
            for c in ("memory", "pids"):
                root, point = mounts[c]
                rel = os.path.relpath(own[c], root) if own[c].startswith(root) else None
                if rel is None or rel.startswith(".."):
                    return None
                bases[c] = Path(point) / rel if rel != "." else Path(point)
        except (OSError, KeyError, ValueError):
            return None
        groups = cls(bases["memory"], bases["pids"])
        groups._remove_stale()
        try:
            probe = groups.create(memory_mb=64, max_tasks=8)
        except OSError:
            return None
        probe.remove()
        return groups

    def _remove_stale(self) -> None:
        """Empty groups left by runners that were killed (their pid is gone)."""
        for base in (self.memory, self.pids):
            try:
                names = [p.name for p in base.iterdir() if p.name.startswith("ub-truth-")]
            except OSError:
                continue
            for name in names:
                try:
                    os.kill(int(name.split("-")[2]), 0)
                except (ProcessLookupError, ValueError, IndexError):
                    try:
                        (base / name).rmdir()
                    except OSError:
                        pass
                except PermissionError:
                    pass

    def create(self, memory_mb: int, max_tasks: int) -> "_Group":
        name = f"ub-truth-{os.getpid()}-{next(self._counter)}"
        group = _Group(self.memory / name, self.pids / name)
        try:
            group.memory.mkdir()
            group.pids.mkdir()
            limit = str(int(memory_mb) * 1024 * 1024)
            (group.memory / "memory.limit_in_bytes").write_text(limit)
            memsw = group.memory / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                memsw.write_text(limit)
            (group.pids / "pids.max").write_text(str(int(max_tasks)))
        except OSError:
            group.remove()
            raise
        return group


class _Group:
    """One program's cgroups: joined by the program's first process (a shell that writes its own pid into each
    ``cgroup.procs``, then becomes bwrap), so that every later process starts inside."""

    def __init__(self, memory: Path, pids: Path):
        self.memory, self.pids = memory, pids

    def join_prefix(self) -> list[str]:
        return ["/bin/sh", "-c", 'echo $$ > "$1" && echo $$ > "$2" && shift 2 && exec "$@"', "sh",
                str(self.memory / "cgroup.procs"), str(self.pids / "cgroup.procs")]

    def tasks(self) -> set[int]:
        try:
            return {int(x) for x in (self.pids / "cgroup.procs").read_text().split()}
        except (OSError, ValueError):
            return set()

    def oom_kills(self) -> int:
        try:
            for line in (self.memory / "memory.oom_control").read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
            return int((self.memory / "memory.failcnt").read_text())  # kernels before 4.13
        except (OSError, ValueError):
            return 0

    def task_limit_hits(self) -> int:
        try:
            for line in (self.pids / "pids.events").read_text().splitlines():
                if line.startswith("max "):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def kill(self) -> None:
        for _ in range(50):
            pids = self.tasks()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill()
        for path in (self.memory, self.pids):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the last tasks are being reaped
                    time.sleep(0.01)


# ------------------------------------------------------------------------------------------------ seccomp

_EPERM_CALLS = (
    "add_key", "keyctl", "request_key",  # the keyrings
    "ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open", "bpf", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "syslog", "acct", "quotactl", "swapon", "swapoff", "reboot", "uselib",
    "modify_ldt", "name_to_handle_at", "open_by_handle_at", "fanotify_init", "lookup_dcookie", "vhangup",
    "mbind", "set_mempolicy", "migrate_pages", "move_pages",
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot",  # namespaces and mounts
    "memfd_create", "shmget",  # memory no process maps
)
_ENOSYS_CALLS = ("clone3", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
                 "memfd_secret")
_CLONE_NEW = (0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
_PERSONALITY_FLAGS = (0x0400000, 0x0040000, 0x0200000, 0x0100000, 0x0800000, 0x8000000, 0x4000000, 0x2000000,
                      0x1000000)  # READ_IMPLIES_EXEC ... SHORT_INODE (linux/personality.h)
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK, _AF_MAX = 1, 2, 10, 16, 64
_F_SETPIPE_SZ, _SOL_SOCKET = 1031, 1
_SO_BUF = (7, 8, 32, 33)  # SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE


@functools.lru_cache(maxsize=1)
def seccomp_program(inet: bool = True) -> bytes:
    """The jail's seccomp filter as a classic-BPF program for ``bwrap --seccomp`` (see the module docstring for
    what it refuses and why); ``inet=False`` (the fallback limits) also refuses IP sockets. :class:`JailError` (one
    line) where libseccomp or its bindings are missing."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError, RuntimeError) as e:  # RuntimeError: the bindings found no libseccomp
        raise JailError(f"no seccomp filter can be built: {escape_controls(e, 120)} (install the 'pyseccomp' "
                        "package and the system's libseccomp: apt-get install libseccomp2)") from None
    filt = sc.SyscallFilter(sc.ALLOW)
    eperm, enosys = sc.ERRNO(errno.EPERM), sc.ERRNO(errno.ENOSYS)

    def rule(action, name, *args) -> None:
        try:
            number = sc.resolve_syscall(sc.Arch.NATIVE, name)
        except (OSError, ValueError):
            return
        if number == -1:  # unknown to this libseccomp: no such call to refuse
            return
        filt.add_rule(action, number, *args)

    try:
        for name in _EPERM_CALLS:
            rule(eperm, name)
        for name in _ENOSYS_CALLS:
            rule(enosys, name)
        clone_flags_arg = 1 if os.uname().machine.startswith("s390") else 0
        for flag in _CLONE_NEW:
            rule(eperm, "clone", sc.Arg(clone_flags_arg, sc.MASKED_EQ, flag, flag))
        for request in (_TIOCSTI, _TIOCLINUX):
            rule(eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
        for flag in _PERSONALITY_FLAGS:
            rule(eperm, "personality", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        eafnosupport = sc.ERRNO(errno.EAFNOSUPPORT)
        for call in ("socket", "socketpair"):
            for family in range(_AF_MAX):
                if family not in (_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK):
                    rule(eafnosupport, call, sc.Arg(0, sc.EQ, family))
            rule(eafnosupport, call, sc.Arg(0, sc.GE, _AF_MAX))
        rule(eafnosupport, "socket", sc.Arg(0, sc.EQ, _AF_NETLINK), sc.Arg(2, sc.NE, 0))  # NETLINK_ROUTE only
        rule(eafnosupport, "socketpair", sc.Arg(0, sc.EQ, _AF_NETLINK))
        if not inet:  # TCP buffers grow to megabytes per socket: only a cgroup can count them
            for call in ("socket", "socketpair"):
                for family in (_AF_INET, _AF_INET6):
                    rule(eafnosupport, call, sc.Arg(0, sc.EQ, family))
        # kernel buffers a process's memory does not show: pages pinned into pipes, pipes and socket buffers grown
        # past their defaults (a 64 KB pipe, a wmem_default socket, which the fallback watchdog counts per fd)
        rule(eperm, "vmsplice")
        for call in ("fcntl", "fcntl64"):
            rule(eperm, call, sc.Arg(1, sc.EQ, _F_SETPIPE_SZ))
        for option in _SO_BUF:
            rule(eperm, "setsockopt", sc.Arg(1, sc.EQ, _SOL_SOCKET), sc.Arg(2, sc.EQ, option))
        with tempfile.TemporaryFile() as f:
            filt.export_bpf(f)
            f.seek(0)
            return f.read()
    except OSError as e:
        raise JailError(f"libseccomp could not build the seccomp filter: {escape_controls(e, 120)}") from None


def _keyctl_nr() -> int:
    try:
        import pyseccomp as sc

        return int(sc.resolve_syscall(sc.Arch.NATIVE, "keyctl"))
    except Exception:  # noqa: BLE001 - no number, no new keyring: the filter still refuses keyctl in the jail
        return -1


@contextlib.contextmanager
def _seccomp_fd(sandbox: "Sandbox"):
    """A readable fd holding the filter for one bwrap (which reads it to its end), or None without a jail."""
    if not sandbox.jailed:
        yield None
        return
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("ub-seccomp")
    else:  # a C library without memfd_create: an unlinked temporary file
        fd, name = tempfile.mkstemp(prefix="ub-seccomp-")
        os.unlink(name)
    try:
        os.write(fd, sandbox.seccomp)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------------------ the sandbox

@dataclass(frozen=True)
class Sandbox:
    """How programs run on this machine, decided once by :func:`prepare`. ``bwrap`` is None without a jail."""

    python: str
    bwrap: str | None
    ro_binds: tuple[str, ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()
    hidden: tuple[str, ...] = ()
    disable_userns: bool = False
    cgroups: _Cgroups | None = None
    seccomp: bytes = b""
    #: as root: the first of the throwaway uids (and gids) the programs run as, one per program (no user namespace)
    drop_base: int | None = None
    keyctl_nr: int = -1  # the keyctl system call's number here (-1: unknown, no new session keyring)

    @property
    def jailed(self) -> bool:
        return self.bwrap is not None

    def describe(self) -> str:
        """One line: what isolates the programs and what enforces the whole-program limits."""
        how = "bubblewrap jail with a seccomp filter" if self.jailed else "NO JAIL"
        if self.jailed and self.drop_base is not None:
            how += f" (programs run as throwaway uids from {self.drop_base})"
        limits = "cgroup v1 memory+pids" if self.cgroups else "rlimits + a 50 ms watchdog"
        return f"{how}; whole-program limits: {limits}"


THROWAWAY_BASE = 1_900_000_000  # the programs' host uids as root: far above any distribution's or subuid range
THROWAWAY_SLOTS = 4096  # one uid per program, cycling: programs run at once never share one (RLIMIT_NPROC)
_uid_counter = itertools.count(os.getpid() * 7)


def _mapped(path: str) -> list[tuple[int, int]]:
    """(first id, count) of each line of /proc/self/uid_map or gid_map: the ids this process can take."""
    try:
        with open(path) as f:
            return [(int(a), int(c)) for a, _, c in (line.split() for line in f if line.strip())]
    except (OSError, ValueError):
        return []


def throwaway_base() -> int | None:
    """As root: the first of :data:`THROWAWAY_SLOTS` uids (and the same gids) that are mapped here and are not 0,
    preferring :data:`THROWAWAY_BASE` (the whole 32-bit range is mapped outside user namespaces); inside a user
    namespace that maps fewer ids (a rootless container), the top of its largest mapped range. None where no such
    range exists (only root is mapped)."""
    uids, gids = _mapped("/proc/self/uid_map"), _mapped("/proc/self/gid_map")

    def fits(lo: int) -> bool:
        return lo > 0 and all(any(a <= lo and lo + THROWAWAY_SLOTS <= a + c for a, c in m) for m in (uids, gids))

    if fits(THROWAWAY_BASE):
        return THROWAWAY_BASE
    tops = sorted((min(a + c, 2**31) - THROWAWAY_SLOTS for a, c in uids), reverse=True)
    return next((lo for lo in tops if fits(lo)), None)


def _next_uid(sandbox: "Sandbox") -> int:
    return sandbox.drop_base + next(_uid_counter) % THROWAWAY_SLOTS


def _bwrap_version(bwrap: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in m.groups()) if m else ()


def _interpreter_paths(python: str) -> list[str]:
    """The folders an isolated ``python -I`` needs: its prefixes (stdlib, site-packages) and its executable."""
    code = ("import json, os, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, "
            "sys.base_exec_prefix, os.path.dirname(sys.executable), os.path.dirname(os.path.realpath("
            "sys.executable))]))")
    try:
        out = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
        import json

        paths = json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        raise JailError(f"could not start the interpreter {escape_controls(python)!r}") from None
    found = []
    for p in paths:
        for q in (p, os.path.realpath(p)):
            if q and os.path.isdir(q) and q not in found:
                found.append(q)
    return found


def _covered(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def prepare(python: str | None = None, *, jail: bool = True, cgroups: bool | None = None,
            hide: tuple[str | Path, ...] = ()) -> Sandbox:
    """Decide how programs will run and check that it works here (one real jailed ``python -c pass``).

    ``cgroups``: None uses a writable cgroup v1 memory+pids hierarchy when there is one, False never (the
    fallback limits), True requires one. ``hide``: host folders that must stay invisible inside the jail (the
    output folder) even if they lie under a visible folder. Raises :class:`JailError` (one line)."""
    python = python or sys.executable
    groups = None
    if cgroups is not False and sys.platform.startswith("linux"):
        groups = _Cgroups.detect()
        if groups is None and cgroups:
            raise JailError("no writable cgroup v1 memory and pids hierarchy here")
    if not jail:
        return Sandbox(python=python, bwrap=None, cgroups=groups)
    if not sys.platform.startswith("linux"):
        raise JailError(f"no jail on {sys.platform}: it needs Linux namespaces (bubblewrap)")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise JailError("bubblewrap (bwrap) is not installed: install the 'bubblewrap' package "
                        "(apt-get install bubblewrap)")
    version = _bwrap_version(bwrap)
    if version < BWRAP_MIN:
        got = ".".join(map(str, version)) or "unknown"
        raise JailError(f"bubblewrap {got} is too old: the jail needs >= {'.'.join(map(str, BWRAP_MIN))} (--size)")
    binds = ["/usr"]
    symlinks = []
    for top in _TOP_LINKS:
        if os.path.islink(top):
            symlinks.append((os.readlink(top), top))
        elif os.path.isdir(top):
            binds.append(top)
    binds += [p for p in _ETC if os.path.exists(p)]
    home = os.path.realpath(os.path.expanduser("~"))
    interpreter = _interpreter_paths(python)
    for p in interpreter:
        if p == "/" or _covered(home, [p]):  # it would show the user's home (keys, tokens) to the program
            raise JailError(f"the interpreter's folder {escape_controls(p)} holds your home folder, which the jail "
                            "would then show: use an interpreter installed elsewhere (a virtual environment)")
        if not _covered(p, binds):
            binds.append(p)
    hidden = tuple(os.path.realpath(h) for h in hide)
    drop_base = None
    if os.geteuid() == 0:
        drop_base = throwaway_base()
        if drop_base is None:
            raise JailError("running as root, but no other uid is mapped here (/proc/self/uid_map) for the programs "
                            "to run as: run ub as an ordinary user")
    if drop_base is not None:
        closed = _closed_to_others(python, [p for p in interpreter if p in binds])
        if closed is not None:
            raise _closed_error(closed)
    sandbox = Sandbox(python=python, bwrap=bwrap, ro_binds=tuple(binds), symlinks=tuple(symlinks), hidden=hidden,
                      disable_userns=version >= (0, 8, 0), cgroups=groups,
                      seccomp=seccomp_program(inet=groups is not None),
                      drop_base=drop_base, keyctl_nr=_keyctl_nr())
    _probe(sandbox)
    return sandbox


def _closed_to_others(python: str, folders: list[str]) -> str | None:
    """As root: the first folder (or the executable) on the interpreter's way that other users cannot enter, from
    a bound folder down, or None. The folders *above* a bound one are made 0755 inside the jail; a bound folder
    and what lies under it keep the host's modes, so a throwaway uid needs them open to others."""
    roots = list(folders)

    def walk(path: str):
        root = next((r for r in roots if _covered(path, [r])), None)
        if root is None:
            return
        rel = Path(path).relative_to(root).parts
        for i in range(len(rel) + 1):
            yield str(Path(root, *rel[:i]))

    candidates = [os.path.abspath(python), os.path.realpath(python)]
    for path in dict.fromkeys([*roots, *candidates]):
        for step in walk(path):
            try:
                mode = os.stat(step).st_mode
            except OSError:
                continue
            need = 0o005 if os.path.isdir(step) else 0o001
            if mode & need != need:
                return step
    return None


def _closed_error(path: str) -> JailError:
    try:
        mode = f"mode {os.stat(path).st_mode & 0o777:04o}"
    except OSError:
        mode = "unreadable"
    what = "folder" if os.path.isdir(path) else "executable"
    return JailError(f"running as root, the jail runs programs as a throwaway uid, which cannot enter the "
                     f"interpreter's {what} {escape_controls(path)} ({mode}): open it to other users "
                     f"(chmod -R o+rX {escape_controls(path)}) or use an interpreter installed where other users "
                     "can read it", fixable=True)


def _probe(sandbox: Sandbox) -> None:
    """A real jailed interpreter start: bwrap's own error (user namespaces disabled, AppArmor's restriction of
    unprivileged user namespaces, a seccomp filter) becomes the one-line cause."""
    with tempfile.TemporaryDirectory(prefix="ub-jail-probe-") as tmp:
        prog = Path(tmp) / "probe.py"
        prog.write_text("print('[1]')\n")
        os.chmod(tmp, 0o755)  # as root the probe runs as a throwaway uid, like the programs
        prog.chmod(0o644)
        try:
            with _seccomp_fd(sandbox) as fd:
                proc = subprocess.run(_argv(sandbox, prog, _ProbeLimits(), fd), capture_output=True, timeout=60,
                                      stdin=subprocess.DEVNULL, env=child_env(sandbox), pass_fds=(fd,))
        except (OSError, subprocess.SubprocessError) as e:
            raise JailError(f"bubblewrap could not start: {escape_controls(e, 200)}") from None
    if proc.returncode != 0 or proc.stdout.strip() != b"[1]":
        err = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        cause = err[-1] if err else f"exit status {proc.returncode}"
        hint = ""
        restrict = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        if restrict.exists() and restrict.read_text().strip() == "1":
            hint = (" (AppArmor restricts unprivileged user namespaces here: "
                    "kernel.apparmor_restrict_unprivileged_userns=1)")
        fixable = False
        if sandbox.drop_base is not None and "Permission denied" in cause and not cause.startswith("bwrap:"):
            # the interpreter (not bwrap) met a file under its folders closed to other users (the folders
            # themselves were checked before)
            prefixes = " ".join(escape_controls(b) for b in sandbox.ro_binds if b not in ("/usr", *_ETC)
                                and not _covered(b, ["/usr"]) and b not in _TOP_LINKS)
            hint = (f" (as root the programs run as a throwaway uid: a file of the interpreter is closed to other "
                    f"users; open them with chmod -R o+rX {prefixes})")
            fixable = True
        raise JailError(f"bubblewrap cannot make a jail here: {escape_controls(cause, 200)}{hint}", fixable=fixable)


@dataclass(frozen=True)
class _ProbeLimits:
    wall_s: float = 60.0
    cpu_s: int = 30
    memory_mb: int = 1024
    max_procs: int = 8
    scratch_mb: int = 1
    max_files: int = 16


def child_env(sandbox: Sandbox, home: str = "/tmp") -> dict[str, str]:
    """The program's whole environment: no tokens, proxies or credentials of the parent."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(HOME=home, TMPDIR=home, TMP=home, TEMP=home, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMEXPR_NUM_THREADS="1", MPLBACKEND="Agg")
    return env


def _argv(sandbox: Sandbox, program: Path, limits, seccomp_fd: int | None = None) -> list[str]:
    """bwrap's command line for one program (or the bare command without a jail); ``seccomp_fd``: the filter
    (:func:`_seccomp_fd`)."""
    mem = int(limits.memory_mb) * 1024 * 1024
    scratch = int(limits.scratch_mb) * 1024 * 1024
    nproc = int(limits.max_procs) + 1 if sandbox.jailed else -1  # +1: the namespace's init
    inside = str(program) if not sandbox.jailed else f"{PROGRAM_DIR}/{program.name}"
    uid = _next_uid(sandbox) if sandbox.jailed and sandbox.drop_base is not None else -1
    nofile = "256" if sandbox.cgroups is not None else str(FALLBACK_NOFILE)
    shim = [sandbox.python, "-I", "-S", "-c", _SHIM, str(uid), str(nproc), str(mem), str(scratch), nofile,
            str(max(1, int(limits.cpu_s))), sandbox.python, "-I", inside]
    if not sandbox.jailed:
        return shim
    folder = str(program.parent)
    cmd = [sandbox.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if uid >= 0:
        # root: no user namespace (bubblewrap's would map the program to host root); the shim keeps only the
        # capabilities to change its ids, becomes the throwaway uid, and so loses them (the kernel clears them)
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        cmd += ["--unshare-user", "--uid", str(INNER_UID), "--gid", str(INNER_UID)]
    cmd += ["--hostname", "ub-jail"]
    if sandbox.disable_userns and uid < 0:  # bwrap takes it with --unshare-user only
        cmd.append("--disable-userns")
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    # /proc read-only: host root (the caller's uid, which the program's maps to) could write /proc/sys
    cmd += ["--proc", "/proc", "--remount-ro", "/proc"]
    # the scratch first, so that a program folder under the host's /tmp is bound on top of it, not hidden by it
    # 1777: as root the scratch is made by root for a program that runs as a throwaway uid
    cmd += ["--dev", "/dev", "--perms", "1777", "--size", str(scratch), "--tmpfs", "/tmp",
            "--perms", "1777", "--size", str(scratch), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    # the folders above a bound path are made 0755: bwrap copies the host's modes (/root, a home folder, a
    # pytest or mktemp folder under /tmp are 0700), which would keep a throwaway uid from the interpreter bound
    # under them. Under the scratch /tmp too: a venv at /tmp/x/venv needs /tmp/x; the scratch mount points
    # themselves keep their 1777.
    above = sorted({str(a) for path in sandbox.ro_binds for a in Path(path).parents
                    if str(a) not in _SCRATCH_POINTS and not _covered(str(a), sandbox.ro_binds)})
    for a in above:
        cmd += ["--perms", "0755", "--dir", a]
    for path in sandbox.ro_binds:
        cmd += ["--ro-bind", path, path]
    for target, link in sandbox.symlinks:
        cmd += ["--symlink", target, link]
    cmd += ["--ro-bind", folder, PROGRAM_DIR]
    visible = [(p, p) for p in sandbox.ro_binds] + [(folder, PROGRAM_DIR)]
    for h in sandbox.hidden:
        for src, dst in visible:
            if _covered(h, [src]) and os.path.isdir(h):
                inside = dst + h[len(src.rstrip("/")):]
                cmd += ["--size", "4096", "--tmpfs", inside, "--remount-ro", inside]
    cmd += ["--remount-ro", "/", "--chdir", "/tmp", "--"]
    return cmd + shim


# ------------------------------------------------------------------------------------------------ the watchdog

# re-exported (hence F401): callers and tests reach the process accounting as jail._stat, jail._Watchdog, ...
from .jail_watchdog import (_CLK, _PAGE, _PIPE_BYTES, _SOCKET_BYTES, _Watchdog, _kernel_buffers,  # noqa: E402,F401
                            _pid_ns, _stat, _sysctl_int)  # noqa: F401

def run(sandbox: Sandbox, program: Path, limits, *, max_stdout: int,
        on_stdout: Callable[[bytes], None]) -> RunResult:
    """Run ``program`` in the sandbox; its stdout goes to ``on_stdout`` in chunks as it arrives (at most
    ``max_stdout`` bytes: past that the jail is killed), its stderr's last 4 KB are kept. Never raises for what the
    program does."""
    start = time.monotonic()
    group = None
    if sandbox.cgroups is not None:
        try:
            group = sandbox.cgroups.create(limits.memory_mb, limits.max_procs + JAIL_TASKS)
        except OSError as e:
            return RunResult(None, None, f"could not make the program's cgroup: {e.strerror}", b"",
                             time.monotonic() - start)
    # without a jail the program's working folder and HOME are an empty temporary folder
    folder = contextlib.nullcontext("/") if sandbox.jailed else tempfile.TemporaryDirectory(prefix="ub-truth-")
    with folder as cwd:
        try:
            with _seccomp_fd(sandbox) as fd:
                if sandbox.jailed:
                    cgroup_files = [str(group.memory / "cgroup.procs"), str(group.pids / "cgroup.procs")] \
                        if group else []
                    argv = [sandbox.python, "-I", "-S", "-c", _LAUNCH, str(sandbox.keyctl_nr), *cgroup_files, "--",
                            *_argv(sandbox, program, limits, fd)]
                else:
                    argv = (group.join_prefix() if group else []) + _argv(sandbox, program, limits, fd)
                proc = subprocess.Popen(argv, cwd=cwd, env=child_env(sandbox, "/tmp" if sandbox.jailed else cwd),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True, close_fds=True,
                                        pass_fds=() if fd is None else (fd,))
        except OSError as e:
            if group:
                group.remove()
            return RunResult(None, None, f"could not start: {e.strerror}", b"", time.monotonic() - start)
        try:
            limit, tail = _pump(proc, group, sandbox, limits, max_stdout, on_stdout, start)
        finally:
            _kill(proc, group)
            proc.wait()
            for stream in (proc.stdout, proc.stderr):
                stream.close()
    code = proc.returncode
    if group is not None:
        if limit is None and group.oom_kills():
            limit = f"memory limit ({limits.memory_mb:g} MB for the whole program) reached"
        if limit is None and code != 0 and group.task_limit_hits():
            limit = f"process limit ({limits.max_procs} tasks) reached"
        group.remove()
    sig = None
    if code is not None and code < 0:
        sig = -code
    elif sandbox.jailed and code is not None and code > 128:  # bwrap: 128 + the signal that ended the program
        sig = code - 128
    return RunResult(code, sig, limit, tail, time.monotonic() - start)


def _kill(proc: subprocess.Popen, group: _Group | None) -> None:
    """Kill the jail: its first process's group (bwrap, whose --die-with-parent takes the namespace's init, whose
    death takes every process left in the namespace) and, with a cgroup, every task in it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    if group is not None:
        group.kill()


def _pump(proc, group, sandbox, limits, max_stdout, on_stdout, start) -> tuple[str | None, bytes]:
    sel = selectors.DefaultSelector()
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    sel.register(out_fd, selectors.EVENT_READ)
    sel.register(err_fd, selectors.EVENT_READ)
    dog = _Watchdog(proc.pid, group, limits, sandbox.jailed)
    deadline = start + limits.wall_s
    drain_until = None  # once the first process has exited: a little longer for the pipes, then stop
    size, tail = 0, b""
    next_check = time.monotonic() + POLL_S
    try:
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                return f"timed out after {limits.wall_s:g} s (wall clock); jail killed", tail
            if drain_until is not None and now >= drain_until:
                break
            for key, _ in sel.select(min(deadline, next_check) - now):
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(key.fd)
                elif key.fd == out_fd:
                    size += len(data)
                    if size > max_stdout:
                        return f"output larger than {max_stdout / 1024 / 1024:g} MB", tail
                    on_stdout(data)
                else:
                    tail = (tail + data)[-4096:]
            if time.monotonic() >= next_check:
                next_check = time.monotonic() + POLL_S
                hit = dog.check()
                if hit:
                    return hit, tail
                if drain_until is None and proc.poll() is not None:
                    drain_until = time.monotonic() + 1.0
    finally:
        sel.close()
    return None, tail
