"""Hostile releases against `ub official truth`, as root as CI runs: the output folder and what the root parent
opens.

Each test reproduces one attack: links shipped in the release's ``--out`` steering the root
parent's deletes and writes, a link inside --out showing a program another's records, host device nodes and
``/proc/keys`` reachable as host root, one program's output ending the run, records grown past their read limit,
kernel buffers outside the fallback watchdog's view, a folder named ``x.json`` in ``.records``. Each failed before
its fix. The standing filesystem fuzz test of the runner's paths is tests/hostile/test_runner_fs_fuzz.py.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from support.truth_runner import values_by_uid

from ub_core.release_tools import official_truth
from ub_core.release_tools.official_truth import Limits, build_truth

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the jail needs Linux namespaces")

ROOT = Path(__file__).resolve().parents[2]
F = "textual_explicit_concentrated_gpt-5.4"
TOKEN = uuid.uuid4().hex[:12]
KEY_NAME = f"ub-round4-{TOKEN}"
LIMITS = Limits(wall_s=30.0, cpu_s=10, memory_mb=300, max_output_mb=64.0, n_values=10_000, max_procs=16,
                scratch_mb=16, max_files=500)
PAD = "print((out + ['x'] * 10000)[:10000])\n"


def _bwrap_or_fail() -> None:
    import shutil

    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed: `bash scripts/test.sh` installs it")


def _release(tmp: Path, programs: dict) -> Path:
    codes = tmp / "release" / "ground_truth_codes"
    (codes / F).mkdir(parents=True)
    for uid, code in programs.items():
        (codes / F / f"{uid}.py").write_text(code)
    return codes


def _cli(codes: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(codes), "--out",
                           str(out), "--trust-release-code", "--no-progress", *extra], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)


def _victim(tmp: Path) -> tuple[Path, dict]:
    victim = tmp / "etc-like"
    victim.mkdir()
    files = {"config.json": '{"a": 1}', "daemon.json": '{"b": 2}', "notes.txt": "keep"}
    for name, text in files.items():
        (victim / name).write_text(text)
    return victim, files


def _unchanged(victim: Path, files: dict) -> None:
    assert sorted(p.name for p in victim.iterdir()) == sorted(files)
    for name, text in files.items():
        assert (victim / name).read_text() == text


# ------------------------------------------------------------------------------------------------ 1, 2. links

@pytest.mark.parametrize("where", ["records", "folder"])
def test_a_link_shipped_in_out_steers_no_delete_and_no_write(tmp_path, where):
    """The release ships ``built_truth/<F>/.records`` (or ``built_truth/<F>``) as a link to another
    folder; run with the README's ``--out release/built_truth``, the root parent deleted every ``*.json`` there
    that was not a record and wrote its records into it. Now the link is refused with one line naming it, before
    anything runs, and the folder it points to is untouched."""
    _bwrap_or_fail()
    codes = _release(tmp_path, {"u1": "print([1] * 10000)\n"})
    victim, files = _victim(tmp_path)
    built = tmp_path / "release" / "built_truth"
    if where == "records":
        (built / F).mkdir(parents=True)
        (built / F / ".records").symlink_to(victim, target_is_directory=True)
    else:
        built.mkdir(parents=True)
        (built / F).symlink_to(victim, target_is_directory=True)
    proc = _cli(codes, built)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "symbolic link" in proc.stderr, proc.stderr
    assert (".records" if where == "records" else F) in proc.stderr
    _unchanged(victim, files)


def test_a_link_inside_out_to_the_programs_folder_is_refused(tmp_path):
    """``built_truth/<F> -> ../ground_truth_codes/<F>`` bypassed the check of an --out
    above --codes: the records landed in the program folder the jail shows, and a later program read
    ``/program/.records/a-first.json``. Now the link is refused; nothing is written into the program folder."""
    _bwrap_or_fail()
    codes = _release(tmp_path, {"a-first": "print([1] * 10000)\n",
                                "b-reader": "import os\nout = os.listdir('/program')\n" + PAD})
    built = tmp_path / "release" / "built_truth"
    built.mkdir()
    (built / F).symlink_to(Path("..") / "ground_truth_codes" / F, target_is_directory=True)
    proc = _cli(codes, built)
    assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stdout + proc.stderr
    assert sorted(p.name for p in (codes / F).iterdir()) == ["a-first.py", "b-reader.py"]


# ------------------------------------------------------------------------------------------------ 3. root

_KEY_RUNNER = """
import ctypes, json, platform, sys
from ub_core.release_tools.official_truth import Limits, build_truth
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
assert libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(1), None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING
assert libc.syscall(ctypes.c_long(add_key), b"user", sys.argv[3].encode(), b"s3cret", ctypes.c_long(6),
                    ctypes.c_long(-3)) >= 0
s = build_truth(sys.argv[1], sys.argv[2], trust_release_code=True, progress=False,
                limits=Limits(wall_s=30, memory_mb=600, max_procs=16, scratch_mb=16))
print(json.dumps({"failed": {f.job.uid: f.reason for f in s.failed}, "sandbox": s.sandbox}))
"""

ROOT_PROBE = textwrap.dedent("""
    import os
    out = ['uid %d gid %d groups %s' % (os.getuid(), os.getgid(), os.getgroups())]
    st = os.stat('/dev/null')
    out.append('null owner %d' % st.st_uid)
    try:
        os.chmod('/dev/null', st.st_mode & 0o7777)  # its own mode again: allowed only to the owner (or root)
        out.append('chmod /dev/null allowed')
    except OSError as e:
        out.append('chmod /dev/null: ' + e.strerror)
    try:
        out.append(open('/proc/keys').read().replace('\\n', ' | ') or 'no keys')
    except OSError as e:
        out.append('/proc/keys: ' + e.strerror)
    with open('/tmp/scratch', 'w') as f:  # the scratch is still the program's
        f.write('x')
    out.append('scratch ok')
""") + PAD


@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="keyctl numbers for these only")
def test_as_root_the_program_is_not_host_root(tmp_path):
    """As root the program's uid was host uid 0 (bubblewrap maps it to the caller's): it owned the
    host's /dev/null (``chmod`` allowed) and read /proc/keys (the parent's session key). Now the program runs as
    a throwaway uid: /dev/null is root's, the parent's key is not listed, the scratch is still writable."""
    _bwrap_or_fail()
    codes = _release(tmp_path, {"probe": ROOT_PROBE})
    proc = subprocess.run([sys.executable, "-c", _KEY_RUNNER, str(codes), str(tmp_path / "out"), KEY_NAME],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = json.loads(proc.stdout.strip().splitlines()[-1])
    assert run["failed"] == {}, run
    values = values_by_uid(tmp_path / "out")["probe"]
    if os.geteuid() == 0:
        assert not values[0].startswith("uid 0 ") and "gid 0 " not in values[0], values[:5]
    assert values[2] == "chmod /dev/null: Operation not permitted", values[:5]
    assert KEY_NAME not in values[3], values[3]
    assert values[4] == "scratch ok"


def test_a_program_unreadable_by_others_fails_with_one_line(tmp_path):
    """As root the program runs as a throwaway uid, which cannot read a program folder of mode 0700: that program fails
    with one line saying why; its siblings land."""
    _bwrap_or_fail()
    if os.geteuid() != 0:
        pytest.skip("only root runs programs as a throwaway uid")
    codes = _release(tmp_path, {"ok": "print([1] * 10000)\n"})
    (codes / "private").mkdir(mode=0o700)
    (codes / "private" / "p.py").write_text("print([2] * 10000)\n")
    s = build_truth(codes, tmp_path / "out", trust_release_code=True, progress=False, limits=LIMITS)
    assert {f.job.uid: f.reason for f in s.failed}.keys() == {"p"}
    assert "cannot be read by other users" in s.failed[0].reason and "\n" not in s.failed[0].reason
    assert values_by_uid(tmp_path / "out") == {"ok": [1] * 10_000}


# ------------------------------------------------------------------------------------------------ 4. output

def test_one_programs_output_never_ends_the_run(tmp_path):
    """``print(["a'\\"\\\\"] * 10000)`` (Python's own repr of a valid label) made the reader raise an
    uncaught SyntaxError, and ``[10**5000] + [1] * 9999`` raised past the digit limit: the run ended, no record
    was written. Now the label is read back as printed, the huge integer fails its program with one line, and the
    others land."""
    _bwrap_or_fail()
    codes = _release(tmp_path, {
        "quotes": "print([\"a'\\\"\\\\\"] * 10000)\n",
        "huge": "import sys\nsys.set_int_max_str_digits(0)\nprint([10**5000] + [1] * 9999)\n",
        "good": "print([3] * 10000)\n",
    })
    s = build_truth(codes, tmp_path / "out", trust_release_code=True, progress=False, limits=LIMITS)
    got = values_by_uid(tmp_path / "out")
    assert got["quotes"] == ["a'\"\\"] * 10_000 and got["good"] == [3] * 10_000
    failed = {f.job.uid: f.reason for f in s.failed}
    assert list(failed) == ["huge"] and "more than 4300 digits" in failed["huge"], failed


def test_the_reader_turns_any_exception_into_a_failure(monkeypatch):
    """Whatever the reader raises (a bug, a resource error) is the output's failure, one line: never the run's."""
    from ub_core.release_tools import official_output

    def boom(*a, **k):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(official_output, "_run_values", boom)
    reader = official_output.OutputReader(3)
    reader.feed(b"[1, 2, 3]")
    with pytest.raises(ValueError, match="output could not be read .RuntimeError: boom.$"):
        reader.finish()


# ------------------------------------------------------------------------------------------------ 5. records

def test_a_record_holds_labels_as_printed(tmp_path):
    """Labels were stored as JSON's ASCII escapes: an astral character, 4 bytes printed, took 12 in the
    record (a 64 MB output made a 192 MB record). Now a record is about the size of what was printed."""
    _bwrap_or_fail()
    label = "\U0001F600" * 50
    codes = _release(tmp_path, {"emoji": f"print([{label!r}] * 10000)\n"})
    build_truth(codes, tmp_path / "out", trust_release_code=True, progress=False, limits=LIMITS)
    record = tmp_path / "out" / F / ".records" / "emoji.json"
    printed = len(repr([label] * 10_000).encode("utf-8"))
    assert record.stat().st_size < 1.05 * printed, (record.stat().st_size, printed)
    assert values_by_uid(tmp_path / "out")["emoji"] == [label] * 10_000


def test_a_record_too_large_to_read_back_fails_its_program(tmp_path, monkeypatch):
    """A record over the read limit was written, then silently left out of the values file while the
    summary said "0 failed", and the uid ran again at every run. Now an accepted output whose record would pass
    the limit fails with one line, and is counted."""
    _bwrap_or_fail()
    monkeypatch.setattr(official_truth, "MAX_RECORD_BYTES", 100_000)
    codes = _release(tmp_path, {"big": "print(['abcdefghij'] * 10000)\n", "small": "print([1] * 10000)\n"})
    s = build_truth(codes, tmp_path / "out", trust_release_code=True, progress=False, limits=LIMITS)
    assert {f.job.uid: f.reason for f in s.failed}.keys() == {"big"}, s.failed
    assert "too large to read back" in s.failed[0].reason and s.ok == 1
    assert values_by_uid(tmp_path / "out") == {"small": [1] * 10_000}


def test_a_uid_missing_from_the_values_file_is_counted_as_failed(tmp_path, monkeypatch):
    """A record that cannot be read back when the values file is written (changed on disk, or over the limit) is
    a failure in the summary, never a silent gap."""
    _bwrap_or_fail()
    codes = _release(tmp_path, {"a": "print([1] * 10000)\n", "b": "print([2] * 10000)\n"})
    out = tmp_path / "out"
    build_truth(codes, out, trust_release_code=True, progress=False, limits=LIMITS)
    real = official_truth._read_record
    calls = {"n": 0}

    def flaky(folder, uid):  # verifies at the start, unreadable when the values file is written
        calls["n"] += 1
        return (None, "it is larger than 1 MB (not a record this runner wrote; left alone)", False) \
            if uid == "b" and calls["n"] > 2 else real(folder, uid)

    monkeypatch.setattr(official_truth, "_read_record", flaky)
    s = build_truth(codes, out, trust_release_code=True, progress=False, limits=LIMITS)
    assert [f.job.uid for f in s.failed] == ["b"] and "could not be read back" in s.failed[0].reason
    assert (s.skipped, s.ok) == (1, 0)
    assert values_by_uid(out) == {"a": [1] * 10_000}


# ------------------------------------------------------------------------------------------------ 6. fallback

KERNEL_BUFFERS = textwrap.dedent("""
    import ctypes, fcntl, os, socket
    out = []
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
        out.append('F_SETPIPE_SZ allowed')
    except OSError as e:
        out.append('F_SETPIPE_SZ: ' + e.strerror)
    libc = ctypes.CDLL(None, use_errno=True)
    class iovec(ctypes.Structure):
        _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
    buf = ctypes.create_string_buffer(4096)
    iov = iovec(ctypes.cast(buf, ctypes.c_void_p), 4096)
    n = libc.vmsplice(w, ctypes.byref(iov), 1, 0)
    out.append('vmsplice: ' + (os.strerror(ctypes.get_errno()) if n < 0 else 'allowed'))
    a, b = socket.socketpair()
    try:
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 24)
        out.append('SO_SNDBUF allowed')
    except OSError as e:
        out.append('SO_SNDBUF: ' + e.strerror)
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        out.append('AF_INET allowed')
    except OSError as e:
        out.append('AF_INET: ' + e.strerror)
""") + PAD

HOLDER = textwrap.dedent("""
    import os, socket, sys, time
    held = []
    for _ in range(20):
        a, b = socket.socketpair()
        for s in (a, b):
            s.setblocking(False)
            try:
                while True:
                    s.send(b'x' * 65536)
            except BlockingIOError:
                pass
        held.append((a, b))
    for _ in range(10):
        r, w = os.pipe()
        os.set_blocking(w, False)
        try:
            while True:
                os.write(w, b'x' * 65536)
        except BlockingIOError:
            pass
        held.append((r, w))
    sys.stdout.write('ready\\n')
    sys.stdout.flush()
    time.sleep(60)
""")


def test_fallback_limits_see_kernel_buffers(tmp_path):
    """With the fallback limits (no cgroup), pages pinned into pipes with vmsplice (3 GB under
    --memory-mb 300) and unix socket buffers (1.6 GB) were outside the watchdog's view. Now vmsplice,
    F_SETPIPE_SZ, socket buffers past their default and (in the fallback) IP sockets are refused, and fewer
    files may be open in the fallback."""
    _bwrap_or_fail()
    codes = _release(tmp_path, {"calls": KERNEL_BUFFERS})
    s = build_truth(codes, tmp_path / "out", trust_release_code=True, progress=False, limits=LIMITS, cgroups=False)
    assert "watchdog" in s.sandbox and s.failed == [], s.failed
    values = values_by_uid(tmp_path / "out")["calls"]
    assert values[:4] == ["F_SETPIPE_SZ: Operation not permitted", "vmsplice: Operation not permitted",
                          "SO_SNDBUF: Operation not permitted", "AF_INET: Address family not supported by protocol"]


def test_the_fallback_watchdog_counts_pipes_and_sockets():
    """The counting half of the kernel-buffer limit: a process holding 20 full socket pairs and 10 full pipes (about 9
    MB of kernel buffers, in no process's resident memory) is over a memory limit set between its resident memory and
    that plus half its buffers; the watchdog without the count saw only the resident memory and let it run."""
    from ub_core.release_tools import jail

    proc = subprocess.Popen([sys.executable, "-c", HOLDER], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n"
        rss = int(jail._stat(proc.pid)[21]) * jail._PAGE
        buffers = 40 * jail._SOCKET_BYTES + 10 * jail._PIPE_BYTES
        assert jail._kernel_buffers([proc.pid]) >= buffers
        limit_mb = (rss + buffers // 2) / 2**20
        dog = jail._Watchdog(proc.pid, None, Limits(memory_mb=limit_mb, cpu_s=60), jailed=False)
        assert (dog.check() or "").startswith("memory limit"), (rss, buffers)
    finally:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------------------------------------ 7. a folder

def test_a_folder_named_like_a_record_fails_only_its_uid(tmp_path):
    """A folder named ``x.json`` inside ``.records`` made every run refuse with ``[Errno 21]``. Now it
    is reported and left alone: uid x fails with one line, the others land, and a second run says the same."""
    _bwrap_or_fail()
    codes = _release(tmp_path, {"x": "print([1] * 10000)\n", "y": "print([2] * 10000)\n"})
    out = tmp_path / "out"
    (out / F / ".records" / "x.json").mkdir(parents=True)
    for _ in range(2):
        lines = []
        s = build_truth(codes, out, trust_release_code=True, progress=False, limits=LIMITS, log=lines.append)
        assert [f.job.uid for f in s.failed] == ["x"] and "a folder" in s.failed[0].reason, s.failed
        assert "left alone" in s.failed[0].reason and "\n" not in s.failed[0].reason
        assert (out / F / ".records" / "x.json").is_dir()
        assert values_by_uid(out) == {"y": [2] * 10_000}
