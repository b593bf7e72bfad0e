"""Hostile release programs against `ub official truth`: the kernel surface a jailed program can reach.

Each test reproduces one attack, as an outside attacker tried it with `ub` run as root (as
in most containers, and in CI): host sysctls writable, the parent's session keyring readable, vsock sockets, memory
that no process maps (memfd, SysV shm) past the fallback limits, a reader that backtracks quadratically, two runs
on one ``--out``, an ``--out`` that the jail shows, and special files opened by the parent. Each failed before its
fix (run as root). Probes only open kernel interfaces for writing (``os.open(..., O_WRONLY)``, then close): nothing
is ever written to the host's sysctls.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest
from support.truth_runner import values_by_uid

from ub_core.release_tools.official_truth import Limits

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the jail needs Linux namespaces")

ROOT = Path(__file__).resolve().parents[2]
TOKEN = uuid.uuid4().hex[:12]
KEY_SECRET = f"keyring_secret_{TOKEN}"
KEY_NAME = f"ub-hostile-{TOKEN}"
F = "textual_explicit_concentrated_gpt-5.4"
PAD = "print((out + ['x'] * 10000)[:10000])\n"
LIMITS = Limits(wall_s=30.0, cpu_s=10, memory_mb=300, max_output_mb=64.0, n_values=10_000, max_procs=16,
                scratch_mb=16, max_files=500)
# (request_key, keyctl) syscall numbers
_KEY_NR = {"x86_64": (249, 250), "aarch64": (218, 219)}

PROBES = {
    # 1. host sysctls and other kernel interfaces that host root may write
    "sysctl": textwrap.dedent("""
        import os
        out = []
        for path in ('/proc/sys/kernel/core_pattern', '/proc/sys/vm/drop_caches', '/proc/sysrq-trigger',
                     '/proc/sys/kernel/modprobe', '/sys/kernel/uevent_helper', '/proc/self/oom_score_adj'):
            try:
                os.close(os.open(path, os.O_WRONLY))  # opened for writing, never written
                out.append('opened ' + path)
            except OSError as e:
                out.append(path + ': ' + os.strerror(e.errno))
    """) + PAD,
    # 2. the parent's session keyring
    "keyring": textwrap.dedent(f"""
        import ctypes, os, platform
        nr = {_KEY_NR!r}[platform.machine()]
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        out = []
        key = libc.syscall(ctypes.c_long(nr[0]), b'user', {KEY_NAME.encode()!r}, None, ctypes.c_long(0))
        if key < 0:
            out.append('request_key: ' + os.strerror(ctypes.get_errno()))
        else:
            buf = ctypes.create_string_buffer(4096)
            n = libc.syscall(ctypes.c_long(nr[1]), ctypes.c_long(11), ctypes.c_long(key), buf, ctypes.c_long(4096))
            out.append(buf.raw[:n].decode() if n > 0 else 'keyctl read: ' + os.strerror(ctypes.get_errno()))
    """) + PAD,
    # 3. vsock (the hypervisor's ports) and other socket families a program does not need
    "sockets": textwrap.dedent("""
        import os, socket
        out = []
        for family, name in ((40, 'vsock'), (17, 'packet'), (38, 'alg'), (16, 'netlink-audit')):
            try:
                s = socket.socket(family, socket.SOCK_DGRAM if family == 16 else socket.SOCK_STREAM if family != 17
                                  else socket.SOCK_RAW, 9 if family == 16 else 0)
                out.append(name + ' created')
                s.close()
            except OSError as e:
                out.append(name + ': ' + os.strerror(e.errno))
        for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):
            try:
                socket.socket(family, socket.SOCK_STREAM).close()
                out.append('ok %d' % family)
            except OSError as e:
                out.append('%d: %s' % (family, os.strerror(e.errno)))
    """) + PAD,
    # the rest of the seccomp filter: each call is refused
    "syscalls": textwrap.dedent("""
        import ctypes, fcntl, os, platform, termios
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        nr = {'x86_64': dict(ptrace=101, perf_event_open=298, bpf=321, userfaultfd=323, memfd_create=319,
                             shmget=29, personality=135, io_uring_setup=425, unshare=272),
              'aarch64': dict(ptrace=117, perf_event_open=241, bpf=280, userfaultfd=282, memfd_create=279,
                              shmget=194, personality=92, io_uring_setup=425, unshare=97)}[platform.machine()]
        L = ctypes.c_long
        calls = {
            'ptrace': (L(0), L(0), L(0), L(0)),  # PTRACE_TRACEME
            'perf_event_open': (ctypes.create_string_buffer(128), L(0), L(-1), L(-1), L(0)),
            'bpf': (L(0), ctypes.create_string_buffer(128), L(128)),
            'userfaultfd': (L(0),),
            'memfd_create': (b'x', L(0)),
            'shmget': (L(0), L(1 << 20), L(0o1600)),  # IPC_PRIVATE | IPC_CREAT | 0600
            'personality': (L(0x0400000),),  # READ_IMPLIES_EXEC
            'io_uring_setup': (L(4), ctypes.create_string_buffer(256)),
            'unshare': (L(0x10000000),),  # CLONE_NEWUSER
        }
        out = []
        for name, args in calls.items():
            r = libc.syscall(L(nr[name]), *args)
            out.append(name + (': ' + os.strerror(ctypes.get_errno()) if r < 0 else ' succeeded'))
        for name, req in (('TIOCSTI', termios.TIOCSTI), ('TIOCLINUX', 0x541C)):
            try:
                fcntl.ioctl(0, req, b'x')
                out.append(name + ' succeeded')
            except OSError as e:
                out.append(name + ': ' + os.strerror(e.errno))
    """) + PAD,
    "good": "import numpy as np\nprint(list(np.random.default_rng(1).normal(5, 2, 10000)))\n",
}

_RUNNER = """
import ctypes, json, platform, sys
from ub_core.release_tools.official_truth import Limits, build_truth
codes, out, kwargs, limits, key = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), \
    sys.argv[5]
if key:  # a session keyring of this process (and its children) holding a token, as a logged-in user's holds
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
    assert libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(1), None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING
    name, secret = key.split("=")
    assert libc.syscall(ctypes.c_long(add_key), b"user", name.encode(), secret.encode(), ctypes.c_long(len(secret)),
                        ctypes.c_long(-3)) >= 0
lines = []
s = build_truth(codes, out, trust_release_code=True, workers=2, limits=Limits(**limits), progress=False,
                log=lines.append, **kwargs)
print(json.dumps({"failed": {f.job.uid: f.reason for f in s.failed}, "sandbox": s.sandbox, "lines": lines}))
"""


def _bwrap_or_fail() -> None:
    import shutil

    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed: `bash scripts/test.sh` installs it")


def _run(tmp: Path, programs: dict, *, cgroups=None, limits=LIMITS, key: bool = False) -> dict:
    _bwrap_or_fail()
    codes, out = tmp / "release" / "ground_truth_codes", tmp / "out"
    (codes / F).mkdir(parents=True)
    for uid, code in programs.items():
        (codes / F / f"{uid}.py").write_text(code)
    limit_args = {k: getattr(limits, k) for k in Limits.__dataclass_fields__}
    env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _RUNNER, str(codes), str(out), json.dumps({"cgroups": cgroups}),
                           json.dumps(limit_args), f"{KEY_NAME}={KEY_SECRET}" if key else ""],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**result, "records": values_by_uid(out)}


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("round3"), PROBES, key=True)


def _landed(run, uid) -> list:
    assert uid in run["records"], (uid, run["failed"].get(uid))
    return run["records"][uid]


# ------------------------------------------------------------------------------------------------ 1. root

def test_kernel_interfaces_are_not_writable(probed):
    """As root, the program's uid was host uid 0 and /proc/sys was writable (core_pattern: a command
    run as host root at the next crash)."""
    values = _landed(probed, "sysctl")
    assert not any(v.startswith("opened") for v in values[:6]), values[:6]


# ------------------------------------------------------------------------------------------------ 2. keyring

def test_parent_session_keyring_is_out_of_reach(probed):
    """``request_key`` + ``keyctl(KEYCTL_READ)`` read a token from the parent's session keyring."""
    value = _landed(probed, "keyring")[0]
    assert KEY_SECRET not in value
    assert value.startswith("request_key: "), value


# ------------------------------------------------------------------------------------------------ 3. sockets

def test_only_the_socket_families_a_program_needs(probed):
    """AF_VSOCK sockets could be made (and bound: the host's vsock ports); packet, alg and audit
    netlink too. Unix and IP sockets (loopback of the jail's own network namespace) still work."""
    values = _landed(probed, "sockets")
    assert [v.split(":")[0] for v in values[:4]] == ["vsock", "packet", "alg", "netlink-audit"], values[:4]
    assert not any("created" in v for v in values[:4]), values[:4]
    assert values[4:7] == ["ok 1", "ok 2", "ok 10"], values[4:7]


def test_the_seccomp_filter_refuses_the_listed_calls(probed):
    values = _landed(probed, "syscalls")
    assert not any("succeeded" in v for v in values[:11]), values[:11]
    assert len(_landed(probed, "good")) == 10_000
    assert "seccomp" in probed["sandbox"]


# ------------------------------------------------------------------------------------------------ 4. memory

MEMFD_HOG = textwrap.dedent("""
    import os, time
    fds = []
    for _ in range(25):  # 14 MB each: under the 16 MB file-size rlimit (the scratch's size)
        fd = os.memfd_create('hog')
        chunk = b'\\1' * (1 << 20)
        for _ in range(14):
            os.write(fd, chunk)
        fds.append(fd)
    time.sleep(1.5)
    print([len(fds)] * 10000)
""")
SHM_HOG = textwrap.dedent("""
    import ctypes, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    held = 0
    for _ in range(8):
        shm = libc.shmget(0, 50 << 20, 0o1600)
        if shm < 0:
            raise SystemExit('shmget: errno %d' % ctypes.get_errno())
        addr = libc.shmat(shm, None, 0)
        ctypes.memset(addr, 1, 50 << 20)
        libc.shmdt(ctypes.c_void_p(addr))  # no longer mapped by any process: the fallback did not count it
        held += 50
    time.sleep(1.5)
    print([held] * 10000)
""")


@pytest.mark.slow
def test_fallback_limits_cover_unmapped_memory(tmp_path):
    """With the fallback limits (no cgroup), 25 memfds of 14 MB or 8 SysV segments of 50 MB (350 and
    400 MB) landed under ``--memory-mb 300``: the watchdog sums process RSS only. Now the calls are refused by the
    seccomp filter."""
    run = _run(tmp_path, {"memfd": MEMFD_HOG, "shm": SHM_HOG}, cgroups=False)
    assert "watchdog" in run["sandbox"]
    assert run["records"] == {}, run["records"].keys()
    assert "Operation not permitted" in run["failed"]["memfd"], run["failed"]
    assert "shmget: errno 1" in run["failed"]["shm"], run["failed"]


# ------------------------------------------------------------------------------------------------ 5. reader

@pytest.mark.slow
def test_a_long_unfinished_number_does_not_stall_the_parent(tmp_path):
    """``[`` and 40,000 digits, then a sleep, froze the parent for over a minute at 100% CPU (the
    number patterns backtracked quadratically, re-run on the whole retained buffer for every chunk), and a good
    sibling was failed as timed out. Now the stall ends at the wall clock and the sibling lands (the reader's own
    linear-time check is tests/ksn/test_official_output.py::test_reading_is_linear_whatever_the_output)."""
    digits = textwrap.dedent("""
        import sys, time
        sys.stdout.write('[')
        for _ in range(400):
            sys.stdout.write('1' * 100)
            sys.stdout.flush()
            time.sleep(0.001)
        time.sleep(60)
    """)
    limits = Limits(wall_s=5.0, cpu_s=10, memory_mb=600, n_values=10_000, max_procs=16, scratch_mb=16)
    run = _run(tmp_path, {"digits": digits, "good": PROBES["good"]}, limits=limits)
    assert run["failed"]["digits"].startswith("timed out after 5 s"), run["failed"]
    assert len(_landed(run, "good")) == 10_000  # not starved by the reader (the GIL) into a false time-out


# ------------------------------------------------------------------------------------------------ 6. two runs

@pytest.mark.slow
def test_a_second_run_on_the_same_out_stops_with_one_line(tmp_path):
    """Two runs at once on one --out shared fixed temporary names (one died with ENOENT, and once the
    values file was left as invalid JSON). Now the second run stops with one line while the first holds --out."""
    _bwrap_or_fail()
    codes = tmp_path / "ground_truth_codes" / F
    codes.mkdir(parents=True)
    (codes / "slow.py").write_text("import time\ntime.sleep(6)\nprint([1] * 10000)\n")
    cmd = [sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(tmp_path), "--out",
           str(tmp_path / "out"), "--trust-release-code", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # the second run starts once the first holds --out (before the fix no lock ever appears: it starts after
        # the 60 s wait or once the first has ended, and the assertions below fail)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _locked(tmp_path / "out") and first.poll() is None:
            time.sleep(0.05)
        second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    finally:
        out1, err1 = first.communicate(timeout=120)
    assert first.returncode == 0, out1 + err1
    assert second.returncode == 2, second.stdout + second.stderr
    assert len(second.stderr.strip().splitlines()) == 1 and "another ub official truth run" in second.stderr
    assert values_by_uid(tmp_path / "out") == {"slow": [1] * 10_000}


def _locked(out: Path) -> bool:
    """Whether some process holds a lock on a file in ``out`` (the run's lock file, whatever its name)."""
    import fcntl

    for path in out.glob(".*lock*") if out.is_dir() else ():
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
    return False


def test_concurrent_atomic_writes_use_their_own_temporary_files(tmp_path):
    """Two writers of one file both wrote '<name>.tmp': the second's replace found it gone (ENOENT).
    Each writer now has its own temporary file, and the file holds one writer's whole content."""
    from ub_core.release_tools.official_truth import _atomic_write_text

    target = tmp_path / "f" / "ground_truth_values.json"
    both_open = threading.Barrier(2, timeout=10)
    errors: list[BaseException] = []

    def writer(text):
        def write(f):
            f.write(text)
            both_open.wait()  # both temporary files are open before either is replaced

        try:
            _atomic_write_text(target, write)
        except BaseException as e:  # noqa: BLE001 - recorded for the assertion
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(json.dumps([i] * 1000),)) for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert errors == []
    assert json.loads(target.read_text()) in ([1] * 1000, [2] * 1000)
    assert [p.name for p in target.parent.iterdir()] == [target.name]


# ------------------------------------------------------------------------------------------------ 7. --out

@pytest.mark.parametrize("where", ["equal", "inside", "above"])
def test_out_that_the_jail_would_show_is_refused(tmp_path, where):
    """--out = --codes put .records/ and the sibling values inside the program folders the jail
    shows. --out equal to, inside or above --codes is refused with one line, before anything runs."""
    codes = tmp_path / "release" / "ground_truth_codes"
    (codes / F).mkdir(parents=True)
    (codes / F / "u1.py").write_text("print([1] * 10000)\n")
    out = {"equal": codes, "inside": codes / F / "out", "above": tmp_path / "release"}[where]
    proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(codes), "--out",
                           str(out), "--trust-release-code", "--no-progress"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "--out" in proc.stderr and "--codes" in proc.stderr
    assert not list(tmp_path.rglob(".records")) and not list(tmp_path.rglob("ground_truth_values.json"))


# ------------------------------------------------------------------------------------------------ 8. devices

@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_device_nodes_are_never_opened(tmp_path):
    """A ``*.py`` that is a device node was opened by the (root) parent before the regular-file check.
    /dev/tty's node in a process without a controlling terminal shows it: opening it fails with ENXIO."""
    _bwrap_or_fail()
    codes = tmp_path / "ground_truth_codes" / F
    codes.mkdir(parents=True)
    os.mknod(codes / "tty.py", 0o666 | stat.S_IFCHR, os.makedev(5, 0))
    (codes / "good.py").write_text("print([1] * 10000)\n")
    code = ("import json, sys\nfrom ub_core.release_tools.official_truth import build_truth\n"
            "s = build_truth(sys.argv[1], sys.argv[2], trust_release_code=True, progress=False)\n"
            "print(json.dumps({f.job.uid: f.reason for f in s.failed}))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path), str(tmp_path / "out")], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120,
                          start_new_session=True)  # no controlling terminal
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"tty": "the program is not a regular file"}
    assert values_by_uid(tmp_path / "out") == {"good": [1] * 10_000}


# ------------------------------------------------------------------------------------------------ no seccomp

def test_refuses_with_one_line_where_no_seccomp_filter_can_be_built(tmp_path):
    """Without libseccomp (its bindings raise as they do when the library is missing) the jail would have no
    filter: the command refuses with one line naming the cause, before anything runs."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pyseccomp.py").write_text("raise RuntimeError('Unable to find libseccomp')\n")
    codes = tmp_path / "ground_truth_codes" / F
    codes.mkdir(parents=True)
    (codes / "u1.py").write_text("print([1] * 10000)\n")
    _bwrap_or_fail()
    proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(tmp_path),
                           "--out", str(tmp_path / "out"), "--trust-release-code", "--no-progress"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": f"{shadow}{os.pathsep}{ROOT}"})
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "no seccomp filter can be built: Unable to find libseccomp" in proc.stderr and "libseccomp2" in proc.stderr
    assert not (tmp_path / "out").exists()
