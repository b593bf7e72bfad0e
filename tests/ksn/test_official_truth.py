"""`ub official truth`: the release's ground-truth programs run isolated, limited, parsed safely, resumable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ub_core.release_tools.official_truth import Limits, TrustError, build_truth, parse_output

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="rlimits and process groups: Linux")

# hostile programs: tight limits, so the loop, sleep and flood cases end quickly; the wall limit leaves a busy CI
# machine room to start Python for the programs that are meant to get through
FAST = Limits(wall_s=5.0, cpu_s=2, memory_mb=1024, max_output_mb=4.0, n_values=10_000)
# programs that must succeed: limits no load can reach, so a slow start is never mistaken for a failure
ROOMY = Limits(wall_s=60.0, cpu_s=30, memory_mb=1024, max_output_mb=4.0, n_values=10_000)
FOLDER = "textual_explicit_concentrated_gpt-5.4"
SECRETS = {"HF_TOKEN": "hf_secret_do_not_leak", "OPENAI_API_KEY": "sk-secret", "HTTPS_PROXY": "http://proxy:1"}

GOOD = {
    ("textual_explicit_concentrated_gpt-5.4", "u-num"):
        "import numpy as np\nprint(list(np.random.default_rng(1).normal(5, 2, 10000)))\n",
    ("realworld_human", "u-label"):
        "import random\nprint([random.choice(['A', 'B', 'C']) for _ in range(10000)])\n",
    ("realworld_human", "u-lines"):
        "import random\nprint(['\\n'.join(random.sample(['A', '1'], 2)) for _ in range(10000)])\n",
    ("shuffling_human", "u-shuf"):
        "import random\nprint([random.sample([3, 2, 1], 3) for _ in range(10000)])\n",
}

HOSTILE = {
    "loop": ("while True:\n    pass\n", ("CPU limit", "timed out", "killed")),
    "sleep": ("import time\ntime.sleep(60)\n", ("timed out",)),
    "alloc": ("x = bytearray(10 * 1024 ** 3)\nprint([1] * 10000)\n", ("MemoryError",)),
    "garbage": ("print('hello, this is not a list [1, 2')\n", ("not a Python literal",)),
    "inf": ("print([1.0] * 9999 + [float('inf')])\n", ("non-finite value (inf)",)),
    "bigfloat": ("print('[' + '1.0, ' * 9999 + '1e999]')\n", ("not a finite number",)),
    "exit": ("import sys\nprint([1] * 10000)\nsys.exit(3)\n", ("exited with status 3",)),
    "raise": ("raise RuntimeError('boom')\n", ("status 1", "boom")),
    "short": ("print([1, 2, 3])\n", ("printed 3 values, expected 10000",)),
    "mixed": ("print([1] * 5000 + ['a'] * 5000)\n", ("mix kinds",)),
    "call": ("print(\"[__import__('os').system('echo pwned')]\")\n", ("not a Python literal",)),
    "flood": ("import sys\nwhile True:\n    sys.stdout.write('9' * 65536)\n", ("output larger than", "timed out",
                                                                           "CPU limit")),
}


def _write(root: Path, folder: str, uid: str, code: str) -> Path:
    p = root / "ground_truth_codes" / folder / f"{uid}.py"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(code)
    return p


def _records(out: Path, folder: str) -> dict:
    data = json.loads((out / folder / "ground_truth_values.json").read_text())
    assert isinstance(data, list) and all(set(r) == {"uid", "ground_truth_values"} for r in data)
    return {r["uid"]: r["ground_truth_values"] for r in data}


def test_refuses_without_trust(tmp_path):
    _write(tmp_path, FOLDER, "u1", "open('ran', 'w').write('x')\nprint([1] * 10000)\n")
    with pytest.raises(TrustError, match="--trust-release-code"):
        build_truth(tmp_path, tmp_path / "out", progress=False)
    proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(tmp_path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "--trust-release-code" in proc.stderr
    assert not (tmp_path / "out").exists() and not list(tmp_path.rglob("ran"))


def test_good_programs_land_in_release_layout(tmp_path):
    for (folder, uid), code in GOOD.items():
        _write(tmp_path, folder, uid, code)
    s = build_truth(tmp_path, tmp_path / "out", trust_release_code=True, workers=2, limits=ROOMY, progress=False)
    assert s.failed == [] and s.ok == 4 and s.skipped == 0
    num = _records(tmp_path / "out", FOLDER)["u-num"]
    assert len(num) == 10_000 and all(isinstance(v, float) for v in num)
    rw = _records(tmp_path / "out", "realworld_human")
    assert sorted(rw) == ["u-label", "u-lines"]
    assert set(rw["u-label"]) == {"A", "B", "C"} and set(rw["u-lines"]) == {"A\n1", "1\nA"}
    sh = _records(tmp_path / "out", "shuffling_human")["u-shuf"]
    assert len(sh) == 10_000 and all(sorted(p) == [1, 2, 3] for p in sh) and len({tuple(p) for p in sh}) == 6
    # what we built loads as the release's ground truth
    from ub_core.release_tools.official import load_ground_truth

    assert len(load_ground_truth(tmp_path / "out" / "shuffling_human" / "ground_truth_values.json")["u-shuf"]) \
        == 10_000


@pytest.mark.slow  # runs a dozen hostile programs to their limits: the full suite runs it
def test_hostile_programs_fail_with_reason_and_others_finish(tmp_path):
    for uid, (code, _) in HOSTILE.items():
        _write(tmp_path, FOLDER, uid, code)
    _write(tmp_path, FOLDER, "zz-good", "print([7] * 10000)\n")
    lines = []
    t0 = time.monotonic()
    s = build_truth(tmp_path, tmp_path / "out", trust_release_code=True, workers=2, limits=FAST, progress=False,
                    log=lines.append)
    assert time.monotonic() - t0 < 30
    got = {f.job.uid: f.reason for f in s.failed}
    assert set(got) == set(HOSTILE) and s.ok == 1
    for uid, (_, needles) in HOSTILE.items():
        assert any(n in got[uid] for n in needles), (uid, got[uid])
        assert "\n" not in got[uid]
    assert all(line.startswith("FAILED ") for line in lines) and len(lines) == len(HOSTILE)
    assert _records(tmp_path / "out", FOLDER) == {"zz-good": [7] * 10_000}
    assert not list(tmp_path.rglob("pwned"))


def test_child_sees_no_secrets_no_real_home_and_an_empty_cwd(tmp_path, monkeypatch):
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    real_home = str(Path.home())
    ssh = Path(real_home) / ".ssh"
    code = textwrap.dedent("""
        import json, os
        home = os.path.expanduser('~')
        ssh = os.path.join(home, '.ssh')
        probe = {'env': dict(os.environ), 'home': home, 'cwd_files': os.listdir('.'),
                 'ssh': sorted(os.listdir(ssh)) if os.path.isdir(ssh) else None}
        print([json.dumps(probe)] + ['x'] * 9999)
    """)
    _write(tmp_path, FOLDER, "snoop", code)
    s = build_truth(tmp_path, tmp_path / "out", trust_release_code=True, workers=1, limits=ROOMY, progress=False)
    assert s.failed == []
    probe = json.loads(_records(tmp_path / "out", FOLDER)["snoop"][0])
    for k, v in SECRETS.items():
        assert k not in probe["env"] and v not in json.dumps(probe)
    assert set(probe["env"]) <= {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "HOME", "TMPDIR", "TMP", "TEMP",
                                 "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                 "NUMEXPR_NUM_THREADS", "MPLBACKEND", "PWD"}
    # in the jail HOME is the private scratch /tmp, empty at start (the program's folder is /program)
    assert probe["home"] == "/tmp" != real_home and probe["env"].get("PWD", "/tmp") == "/tmp"
    # empty but for the mount points of the interpreter's read-only folders when they live under the host's /tmp
    # (a venv in /tmp/venv shows as the empty directory "venv" the jail binds it on)
    interpreter = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable)}
    mount_points = {Path(d).relative_to("/tmp").parts[0] for d in interpreter
                    if Path(d).is_relative_to("/tmp") and Path(d) != Path("/tmp")}
    assert probe["ssh"] is None and set(probe["cwd_files"]) <= mount_points
    if ssh.is_dir():  # the real ~/.ssh is untouched and was not what the child saw
        assert str(ssh) != os.path.join(probe["home"], ".ssh")


def test_resume_skips_only_verified_records(tmp_path):
    """A uid is skipped only when its stored record carries the hash of the program there now and of its values;
    an edited program, altered values, a record without hashes or a planted record run again. The
    release-layout values file is rewritten from the records at every run."""
    rand = "import random\nprint([random.random() for _ in range(10000)])\n"
    _write(tmp_path, FOLDER, "a", rand)
    _write(tmp_path, FOLDER, "b", "print([2] * 10000)\n")
    out = tmp_path / "out"
    s1 = build_truth(tmp_path, out, trust_release_code=True, limits=ROOMY, progress=False)
    assert (s1.ok, s1.skipped) == (2, 0)
    first = _records(out, FOLDER)["a"]
    rec = json.loads((out / FOLDER / ".records" / "a.json").read_text())
    assert len(rec["program_sha256"]) == 64 and len(rec["values_sha256"]) == 64 and rec["ground_truth_values"] == first
    # unchanged programs are not run again (a prints fresh random values each run), a new one is
    _write(tmp_path, FOLDER, "c", "print([3] * 10000)\n")
    s2 = build_truth(tmp_path, out, trust_release_code=True, limits=ROOMY, progress=False)
    assert (s2.ok, s2.skipped, s2.failed) == (1, 2, [])
    assert _records(out, FOLDER)["a"] == first and _records(out, FOLDER)["c"] == [3] * 10_000
    # an edited program runs again; so does a uid whose stored values were altered; an altered values file is
    # written again from the records
    _write(tmp_path, FOLDER, "a", rand.replace("random()", "random() + 1"))
    path_b = out / FOLDER / ".records" / "b.json"
    rec_b = json.loads(path_b.read_text())
    rec_b["ground_truth_values"][0] = 999
    path_b.write_text(json.dumps(rec_b))
    (out / FOLDER / "ground_truth_values.json").write_text("[]")
    lines = []
    s3 = build_truth(tmp_path, out, trust_release_code=True, limits=ROOMY, progress=False, log=lines.append)
    assert (s3.ok, s3.skipped, s3.failed) == (2, 1, [])
    assert any("/a: its program has changed since" in ln for ln in lines)
    assert any("/b: its values do not match their hash" in ln for ln in lines)
    recs = _records(out, FOLDER)
    assert recs["b"] == [2] * 10_000 and min(recs["a"]) >= 1 and recs["c"] == [3] * 10_000
    # a failed uid is not recorded; a record planted for it (no hashes) is not taken, and is removed
    _write(tmp_path, FOLDER, "d", "raise SystemExit(1)\n")
    (out / FOLDER / ".records" / "d.json").write_text(json.dumps({"uid": "d", "ground_truth_values": [9] * 10_000}))
    s4 = build_truth(tmp_path, out, trust_release_code=True, limits=ROOMY, progress=False)
    assert [f.job.uid for f in s4.failed] == ["d"] and s4.skipped == 3 and "d" not in _records(out, FOLDER)
    assert not (out / FOLDER / ".records" / "d.json").exists()
    _write(tmp_path, FOLDER, "d", "print([4] * 10000)\n")
    s5 = build_truth(tmp_path, out, trust_release_code=True, limits=ROOMY, progress=False)
    assert (s5.ok, s5.skipped) == (1, 3) and _records(out, FOLDER)["d"] == [4] * 10_000


@pytest.mark.slow
def test_cli_exit_codes_and_summary(tmp_path):
    _write(tmp_path, FOLDER, "ok", "print([1.5] * 10000)\n")
    _write(tmp_path, FOLDER, "bad", "print('nope')\n")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    cmd = [sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(tmp_path / "ground_truth_codes"),
           "--out", str(tmp_path / "out"), "--trust-release-code", "--timeout", "2", "--cpu-limit", "2",
           "--workers", "2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "2 programs: 1 run, 0 already done, 1 failed" in proc.stdout
    assert f"failed {FOLDER}/bad: output is not a Python literal list" in proc.stdout
    assert "FAILED" in proc.stderr  # reported as it happens, progress on stderr
    (tmp_path / "ground_truth_codes" / FOLDER / "bad.py").write_text("print([2.5] * 10000)\n")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and "1 run, 1 already done, 0 failed" in proc.stdout
    assert _records(tmp_path / "out", FOLDER) == {"bad": [2.5] * 10_000, "ok": [1.5] * 10_000}


@pytest.mark.parametrize("text,values", [
    ("[1, 2.5, -3]", [1, 2.5, -3]),
    ("[np.float64(1.5), np.int64(2)]", [1.5, 2]),
    ("log line\n['a', 'b']", ["a", "b"]),
    ("[(1, 2), (2, 1)]", [[1, 2], [2, 1]]),
])
def test_parse_output_accepts(text, values):
    assert parse_output(text, n_values=None) == values


@pytest.mark.parametrize("text,needle", [
    ("", "printed nothing"),
    ("[nan, 1.0]", "non-finite value (nan)"),
    ("[1, None]", "is null"),
    ("[True, False]", "boolean"),
    ("{'a': 1}", "not a list"),
    ("[[1, 2], 3]", "mix kinds"),
    ("['', 'a']", "empty string"),
    ("[" * 100_000 + "]" * 100_000, "not a Python literal"),
    ("__import__('os').getcwd()", "not a Python literal"),
])
def test_parse_output_refuses(text, needle):
    with pytest.raises(ValueError, match=None) as exc:
        parse_output(text, n_values=None)
    assert needle in str(exc.value)


@pytest.mark.parametrize("content", [
    "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n",  # a Git LFS pointer
    json.dumps([{"uid": "a", "ground_truth_values": [5] * 10_000}]),  # the release's own values
])
@pytest.mark.slow
def test_a_values_file_this_runner_did_not_write_is_never_replaced(tmp_path, content):
    _write(tmp_path, FOLDER, "a", "print([1] * 10000)\n")
    target = tmp_path / "out" / FOLDER / "ground_truth_values.json"
    target.parent.mkdir(parents=True)
    target.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(tmp_path),
                           "--out", str(tmp_path / "out"), "--trust-release-code"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 2 and "exists and was not written by ub official truth" in proc.stderr
    assert "choose another --out" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert target.read_text() == content


def test_parses_one_at_a_time_across_worker_threads(monkeypatch):
    # CPython 3.11's AST constructor is not safe to run from two threads at once (python/cpython#106905: a
    # spurious SystemError failed a good program on CI), so parse_output serialises ast.literal_eval
    import ast
    import threading
    from concurrent.futures import ThreadPoolExecutor

    real, inside, overlaps, guard = ast.literal_eval, [0], [0], threading.Lock()

    def watched(text):
        with guard:
            inside[0] += 1
            overlaps[0] += inside[0] > 1
        time.sleep(0.01)
        try:
            return real(text)
        finally:
            with guard:
                inside[0] -= 1

    monkeypatch.setattr(ast, "literal_eval", watched)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: parse_output(repr([1.5] * 10), 10), range(16)))
    assert results == [[1.5] * 10] * 16 and overlaps[0] == 0
