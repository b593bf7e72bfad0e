"""Standing filesystem fuzz test of the release runner (`ub official truth`).

Every path the runner reads or writes (the codes folder, ``--out``, ``<F>``, ``.records``, a record, the values
file, the lock file) is replaced in turn, after a clean run, by a relative, an absolute, a dangling and a looping
symbolic link, a hard link, a FIFO, a folder and a device node (those that apply: a folder cannot be hard-linked,
and a folder replaced by a folder is the normal case). The links point at a victim folder beside --out that holds
a record-shaped file, so a runner that follows one would delete or overwrite it. Then the runner runs again and:

- touches nothing outside ``--out`` (every file and folder beside it is byte-for-byte and mode-for-mode as before);
- deletes nothing it did not write (the planted object is still there, of the same type);
- says what it refused: a one-line error naming the path, or a failed uid whose reason names it;
- never crashes or hangs (a 10 s alarm per case).

The programs are not run (the jail has its own tests): ``prepare`` and ``run_program`` are replaced by stand-ins,
so the whole matrix takes well under a second. It runs as the caller, and again as an unprivileged uid (``nobody``)
where the test is root: the runner's file handling must not lean on root's privileges (device nodes need root to
be made, so that uid's matrix leaves them out and says so).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the runner's handle-based file access: Linux")

ROOT = Path(__file__).resolve().parents[2]
F = "textual_explicit_concentrated_gpt-5.4"
TARGETS = ("codes", "out", "F", "records", "record", "values", "lock")
KINDS = ("rel-link", "abs-link", "dangling-link", "loop-link", "hardlink", "fifo", "dir", "device")
DIRS = {"codes", "out", "F", "records"}


def _paths(case: Path) -> dict[str, Path]:
    out = case / "out"
    return {"codes": case / "codes", "out": out, "F": out / F, "records": out / F / ".records",
            "record": out / F / ".records" / "u1.json", "values": out / F / "ground_truth_values.json",
            "lock": out / ".ub-official-truth.lock"}


def _snapshot(case: Path) -> dict[str, tuple]:
    """Everything under ``case`` outside --out: type, mode, and content for files (links not followed)."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(case):
        rel_dir = Path(dirpath).relative_to(case)
        if rel_dir.parts[:1] == ("out",):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(case))
            if rel == "out":
                continue
            st = os.lstat(p)
            content = p.read_bytes() if stat.S_ISREG(st.st_mode) else (os.readlink(p) if p.is_symlink() else None)
            seen[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_nlink, content)
    return seen


def _plant(path: Path, kind: str, case: Path, is_dir: bool) -> str | None:
    """Replace ``path`` by ``kind``; the reason when that does not apply here (None when planted)."""
    victim = case / "victim"
    target = victim if is_dir else victim / "u1.json"
    if kind == "hardlink" and is_dir:
        return "a folder cannot be hard-linked"
    if kind == "dir" and is_dir:
        return "a folder is what belongs there"
    if kind == "device" and os.geteuid() != 0:
        return "making a device node needs root"
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    if kind == "rel-link":
        path.symlink_to(os.path.relpath(target, path.parent), target_is_directory=is_dir)
    elif kind == "abs-link":
        path.symlink_to(target, target_is_directory=is_dir)
    elif kind == "dangling-link":
        path.symlink_to(case / "nowhere" / "x")
    elif kind == "loop-link":
        path.symlink_to(path.name)
    elif kind == "hardlink":
        os.link(target, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "device":
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a null device: harmless were it opened
    return None


class _Alarm(Exception):
    pass


def fuzz(work: Path) -> list[dict]:
    """Run the whole matrix under ``work``; one result per (target, kind)."""
    from ub_core.release_tools import official_truth as ot
    from ub_core.release_tools.jail import Sandbox

    def fake_prepare(python=None, **kwargs):
        return Sandbox(python=python or sys.executable, bwrap=None)

    def fake_run(job, limits, python, sandbox):
        values = [1] * limits.n_values
        return ot.Outcome(job, True, values=values, program_sha256=ot.program_sha256(job.path),
                          values_sha256=ot.values_sha256(values))

    def alarm(*_):
        raise _Alarm()

    # the stand-ins and the alarm for this matrix only: a worker that runs the jail's tests next must get the
    # real runner back (left patched, they wrote the stand-in's values for real programs)
    saved = ot.prepare, ot.run_program
    ot.prepare, ot.run_program = fake_prepare, fake_run
    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        return _matrix(work, ot)
    finally:
        ot.prepare, ot.run_program = saved
        signal.signal(signal.SIGALRM, previous)


def _matrix(work: Path, ot) -> list[dict]:
    """The (target, kind) matrix of :func:`fuzz`, with the runner's stand-ins in place."""
    limits = ot.Limits(n_values=10)
    results = []
    for target in TARGETS:
        for kind in KINDS:
            case = work / f"{target}-{kind}"
            (case / "codes" / F).mkdir(parents=True)
            for uid in ("u1", "u2"):
                (case / "codes" / F / f"{uid}.py").write_text("print([1] * 10)\n")
            (case / "victim").mkdir()
            (case / "victim" / "u1.json").write_text(json.dumps({"uid": "u1", "ground_truth_values": [9] * 10}))
            (case / "victim" / "config.json").write_text('{"keep": true}')
            paths = _paths(case)
            ot.build_truth(paths["codes"], paths["out"], trust_release_code=True, limits=limits, progress=False)
            path = paths[target]
            skipped = _plant(path, kind, case, target in DIRS)
            if skipped:
                results.append({"target": target, "kind": kind, "skipped": skipped})
                continue
            planted = stat.S_IFMT(os.lstat(path).st_mode)
            before = _snapshot(case)
            lines: list[str] = []
            outcome, said = "ran", ""
            signal.alarm(10)
            try:
                s = ot.build_truth(paths["codes"], paths["out"], trust_release_code=True, limits=limits,
                                   progress=False, log=lines.append)
                said = " | ".join([f.reason for f in s.failed] + lines)
                if s.failed:
                    outcome = "failed uids"
            except _Alarm:
                outcome, said = "hung", ""
            except (OSError, ValueError) as e:
                outcome, said = "refused", str(e)
            except Exception as e:  # noqa: BLE001 - recorded: the test fails on it
                outcome, said = f"crashed ({type(e).__name__})", str(e)
            finally:
                signal.alarm(0)
            after = _snapshot(case)
            still = os.path.lexists(path) and stat.S_IFMT(os.lstat(path).st_mode) == planted
            results.append({"target": target, "kind": kind, "outcome": outcome, "said": said,
                            "outside_unchanged": before == after,
                            "outside_diff": sorted(k for k in set(before) | set(after)
                                                   if before.get(k) != after.get(k))[:5],
                            "planted_kept": still})
    return results


# what a message must name for each target (the records' and the values file's own names)
_NAMES = {"out": "--out", "F": F, "records": ".records", "record": "u1.json", "values": "ground_truth_values.json",
          "lock": ".ub-official-truth.lock"}


def _check(results: list[dict]) -> None:
    ran = [r for r in results if "skipped" not in r]
    assert len(ran) >= 35, len(ran)
    problems = []
    for r in ran:
        where = f"{r['target']} as {r['kind']}: {r['outcome']}: {r['said'][:200]}"
        if r["outcome"] in ("hung",) or r["outcome"].startswith("crashed"):
            problems.append(where)
        if not r["outside_unchanged"]:
            problems.append(f"{where}: touched outside --out {r['outside_diff']}")
        if not r["planted_kept"] and r["target"] != "codes":
            problems.append(f"{where}: deleted or replaced what it did not write")
        if r["target"] in _NAMES:
            if r["outcome"] == "ran":
                problems.append(f"{where}: said nothing of what it found")
            elif _NAMES[r["target"]] not in r["said"] or "\n" in r["said"]:
                problems.append(f"{where}: the message does not name it in one line")
    assert not problems, "\n".join(problems)


def test_runner_filesystem_fuzz_as_the_caller(tmp_path):
    results = fuzz(tmp_path)
    _check(results)
    if os.geteuid() == 0:  # as root the whole matrix applies
        assert not [r for r in results if r.get("skipped") == "making a device node needs root"]


_AS_USER = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_runner_fs_fuzz import fuzz
print(json.dumps(fuzz(Path(sys.argv[1]))))
"""


def test_runner_filesystem_fuzz_as_an_unprivileged_uid():
    """The same matrix as ``nobody`` (uid 65534): run as root, the test drops to it with setpriv, in a mount
    namespace (bwrap) where the interpreter and this checkout are reachable by that uid."""
    if os.geteuid() != 0:
        results = fuzz(Path(tempfile.mkdtemp(prefix="ub-fuzz-")))
        _check(results)
        return
    if shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.fail("bubblewrap and setpriv are needed to drop to an unprivileged uid: `bash scripts/test.sh`")
    work = Path(tempfile.mkdtemp(prefix="ub-fuzz-user-"))
    try:
        work.chmod(0o777)
        from support.truth_runner import as_nobody  # here, not at the top: the dropped uid imports this module

        cmd = as_nobody([sys.executable, "-c", _AS_USER, str(work), str(Path(__file__).parent)])
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd="/",
                              env={"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 0, proc.stderr[-3000:]
        results = json.loads(proc.stdout.strip().splitlines()[-1])
        assert {r.get("skipped") for r in results if r["kind"] == "device"} == {"making a device node needs root"}
        _check(results)
    finally:
        shutil.rmtree(work, ignore_errors=True)
