"""The jail's process accounting (re-exported by :mod:`.jail`): CPU, memory and kernel buffers of a program's processes,
and the watchdog that enforces the fallback limits."""

from __future__ import annotations

import os
from typing import Protocol


class _Tasks(Protocol):
    """What the watchdog needs of a program's cgroups (``jail._Group``): the ids of every task in them."""

    def tasks(self) -> set[int]: ...


# tasks of the jail itself, besides the program's: bwrap outside, the namespace's init inside (also in .jail)
JAIL_TASKS = 2

_CLK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state is [0], ppid [1], utime [11], ...)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2:].decode("ascii", "replace").split()


def _sysctl_int(path: str, default: int) -> int:
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return default


_PIPE_BYTES = 16 * _PAGE  # a pipe's default capacity (F_SETPIPE_SZ and vmsplice are refused by the filter)
_SOCKET_BYTES = _sysctl_int("/proc/sys/net/core/wmem_default", 212_992) + 2 * _PAGE  # unix: the sender's buffer


def _kernel_buffers(pids) -> int:
    """The most the program's pipes and sockets can hold in kernel memory, which no process's resident memory
    shows: each pipe and socket open in one of its processes (counted once) at its default capacity."""
    seen: set[str] = set()
    total = 0
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if target in seen:
                continue
            if target.startswith("pipe:"):
                seen.add(target)
                total += _PIPE_BYTES
            elif target.startswith("socket:"):
                seen.add(target)
                total += _SOCKET_BYTES
    return total


def _pid_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


class _Watchdog:
    """The program's processes and their totals. Its processes: the cgroup's, or else followed through /proc:
    those in the jail's pid namespace, or (without a jail) descendants of the first process by parent pid."""

    def __init__(self, root: int, group: _Tasks | None, limits, jailed: bool):
        self.root, self.group, self.limits, self.jailed = root, group, limits, jailed
        self.members = {root}
        self.seen: set[int] = set()
        self.ns: str | None = None
        self.own_ns = _pid_ns(os.getpid())
        self.ok = os.path.isdir("/proc/self")

    def _scan(self) -> set[int]:
        if self.group is not None:
            return self.group.tasks() | {self.root}
        try:
            current = {int(n) for n in os.listdir("/proc") if n.isdigit()}
        except OSError:
            return self.members
        self.members &= current | {self.root}
        new = sorted(current - self.seen)
        self.seen = current
        pending = []
        for pid in new:
            st = _stat(pid)
            if st is None:
                continue
            ppid = int(st[1])
            if self.jailed and self.ns is None and ppid == self.root:
                ns = _pid_ns(pid)  # the namespace's init: its pid namespace is the jail's (once it is in it)
                if ns is not None and ns != self.own_ns:
                    self.ns = ns
            if ppid in self.members or (self.ns is not None and _pid_ns(pid) == self.ns):
                self.members.add(pid)
            else:
                pending.append((pid, ppid))
        grew = True
        while grew and pending:  # a child listed before its parent (pids wrap around)
            grew = False
            for item in list(pending):
                if item[1] in self.members:
                    self.members.add(item[0])
                    pending.remove(item)
                    grew = True
        return self.members

    def check(self) -> str | None:
        """The first whole-program limit now exceeded, as a reason, or None."""
        if not self.ok:
            return None
        lim = self.limits
        cpu = rss = tasks = 0
        pids = self._scan()
        for pid in pids:
            st = _stat(pid)
            if st is None:
                continue
            cpu += sum(int(x) for x in st[11:15])
            tasks += int(st[17])
            rss += int(st[21])
        if cpu / _CLK > lim.cpu_s:
            return f"CPU limit ({lim.cpu_s:g} s for the whole program) exceeded"
        if self.group is None:
            if rss * _PAGE + _kernel_buffers(pids) > lim.memory_mb * 1024 * 1024:
                return f"memory limit ({lim.memory_mb:g} MB for the whole program) reached"
            if tasks > lim.max_procs + JAIL_TASKS:
                return f"process limit ({lim.max_procs} tasks) reached"
        if self.jailed:
            used, files = self._scratch(pids)
            if used > lim.scratch_mb * 1024 * 1024:
                return f"scratch limit ({lim.scratch_mb:g} MB in /tmp and /dev/shm) reached"
            if files > lim.max_files:
                return f"scratch file limit ({lim.max_files} files) reached"
        return None

    def _scratch(self, pids) -> tuple[int, int]:
        """Bytes and files in the jail's two scratch folders, seen through a jailed process's root. A process still
        being set up sees the host's /tmp: only a tmpfs of exactly the scratch's size is the scratch."""
        size = int(self.limits.scratch_mb) * 1024 * 1024
        for pid in pids:
            if pid == self.root:
                continue
            try:
                total = files = 0
                for mount in ("tmp", "dev/shm"):
                    s = os.statvfs(f"/proc/{pid}/root/{mount}")
                    if s.f_blocks * s.f_frsize != -(-size // s.f_frsize) * s.f_frsize:
                        raise OSError("not the jail's scratch")
                    total += (s.f_blocks - s.f_bfree) * s.f_frsize
                    files += s.f_files - s.f_ffree - 1  # the root folder itself
                return total, files
            except OSError:
                continue
        return 0, 0


# ------------------------------------------------------------------------------------------------ running

