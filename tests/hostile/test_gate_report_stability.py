"""``ub report`` and ``ub reproduce stability`` read their inputs through the gate: a FIFO named like an lm-eval
samples file beside its results (it hung for ever), the same name linked to ``/dev/zero`` (read without bound),
1 GB sparse results and samples files (2.2 GB of memory), a release CSV linked to ``/dev/zero`` (a MemoryError
traceback) or made a FIFO (a hang). Each is one named skip, fast, in bounded memory, with the rest of the run
read. Every command runs in a subprocess under a timeout, so a hang fails the test instead of stalling it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.truth_runner import ROOT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="FIFOs, /dev/zero and /proc/self/status")

STAMP = "2025-01-01T00-00-00.000000"
_PEAK = ("import sys, runpy\nsys.argv = ['ub'] + sys.argv[1:]\ntry:\n    runpy.run_module('ub_core.cli', "
         "run_name='__main__')\nexcept SystemExit as e:\n    rc = e.code\nelse:\n    rc = 0\n"
         "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1]\n"
         "print('PEAK_KB', hwm, file=sys.stderr)\nsys.exit(rc)\n")


def _ub(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess, int]:
    """``ub ARGS`` in a subprocess: (the process, its peak resident memory in KB). A hang past ``timeout`` fails."""
    try:
        proc = subprocess.run([sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, timeout=timeout,
                              check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        pytest.fail(f"ub {' '.join(args[:2])} still running after {timeout:g} s (a read without bound)")
    peak = int(proc.stderr.split("PEAK_KB")[1].split()[0]) if "PEAK_KB" in proc.stderr else -1
    return proc, peak


def _results(folder: Path) -> Path:
    path = folder / f"results_{STAMP}.json"
    path.write_text(json.dumps({"results": {"t": {"tar_r,none": 0.9}}, "config": {"model": "hf",
                                "model_args": "pretrained=tiny"}}))
    return path


def _hostile_samples(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with path.open("wb") as fh:  # sparse: a gigabyte of zeros that costs no disk
            fh.truncate(2**30)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
@pytest.mark.parametrize("given", ["folder", "results-file"])
def test_report_refuses_a_hostile_samples_file_by_name(tmp_path, kind, given):
    folder = tmp_path / "run"
    folder.mkdir()
    results = _results(folder)
    _hostile_samples(folder / f"samples_t_{STAMP}.jsonl", kind)
    proc, peak = _ub("report", str(folder if given == "folder" else results), "--out", str(tmp_path / "out"),
                     timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    skips = json.dumps(summary.get("skipped", summary))
    want = {"fifo": "a FIFO", "dev-zero": "a character device", "sparse": "byte limit"}[kind]
    assert f"samples_t_{STAMP}.jsonl" in skips and want in skips, skips[:3000]
    assert 0 < peak * 1024 < 400 * 2**20, peak


@pytest.mark.parametrize("kind", ["dev-zero", "sparse"])
def test_report_refuses_a_hostile_results_file_by_name(tmp_path, kind):
    folder = tmp_path / "run"
    folder.mkdir()
    _hostile_samples(folder / f"results_{STAMP}.json", kind)
    proc, peak = _ub("report", str(folder / f"results_{STAMP}.json"), "--out", str(tmp_path / "out"))
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr + "".join(p.read_text(errors="replace") for p in (tmp_path / "out").glob(
        "summary.json"))
    assert f"results_{STAMP}.json" in out and ("a character device" in out or "byte limit" in out), out[-3000:]
    assert 0 < peak * 1024 < 400 * 2**20, peak


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_stability_release_csv_is_refused_by_name(tmp_path, kind):
    sys.path.insert(0, str(ROOT / "tests" / "stability"))
    try:
        from test_reproduce_stability import RELEASE_SIDE, _release
    finally:
        sys.path.pop(0)
    root = _release(tmp_path, stored=RELEASE_SIDE)
    csv = root / "experiments" / "synthetic" / "stability_eval.csv"
    csv.rename(csv.with_name("stability_eval_good.csv"))
    _hostile_samples(root / "experiments" / "synthetic" / "stability_eval_zz.csv", kind)
    proc, peak = _ub("reproduce", "stability", "--release", str(root), "--json")
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    doc = json.loads(proc.stdout)
    errors = " | ".join(doc["errors"])
    want = {"fifo": "a FIFO", "dev-zero": "a character device", "sparse": "byte limit"}[kind]
    assert "stability_eval_zz.csv" in errors and want in errors, errors
    assert any(r.get("stored") for r in doc["run_sets"]), doc["run_sets"]  # the good CSV is still read
    assert 0 < peak * 1024 < 400 * 2**20, peak


def _good_eval_writer():
    """``write_good_eval`` of tests/hostile/test_report_inputs.py (a small, valid Inspect log), imported by path."""
    pytest.importorskip("inspect_ai")
    sys.path.insert(0, str(ROOT / "tests" / "hostile"))
    try:
        from test_report_inputs import write_good_eval
    finally:
        sys.path.pop(0)
    return write_good_eval


@pytest.mark.slow
def test_an_eval_member_padded_past_the_cap_is_a_named_skip(tmp_path):
    """One sample member padded with an 80 MB string under ``messages`` (a field the report never reads, which
    Inspect still walks at about 0.4 s per MB: 200 MB kept ``ub report`` busy past 120 s) is over the cap per
    member and one named skip; the log's other sample is not lost silently (the skip names the member)."""
    write_good_eval = _good_eval_writer()
    import zipfile

    (tmp_path / "log").mkdir()
    src = write_good_eval(tmp_path / "log")
    padded = tmp_path / "padded.eval"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(padded, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zout:
        first = True
        for info in zin.infolist():
            data = zin.read(info.filename)
            if first and info.filename.startswith("samples/"):
                data = data.replace(b'"messages":[', b'"messages":["' + b"a" * (80 * 2**20) + b'",', 1)
                first = False
            zout.writestr(info.filename, data)
    proc, peak = _ub("report", str(padded), "--out", str(tmp_path / "out"), timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "padded.eval" in proc.stderr and "over the 64 MB cap per .eval member" in proc.stderr, proc.stderr[-2000:]
    assert 0 < peak * 1024 < 300 * 2**20, peak  # read whole, it took 381 MB



@pytest.mark.slow
def test_the_run_has_a_budget_of_unpacked_bytes(tmp_path, monkeypatch):
    """Each .eval member was capped alone, with no total: many logs under the cap each could make one run unpack
    without bound. The run's budget (``UB_REPORT_UNPACKED_MAX_MB``) is counted as members are unpacked; the logs
    past it are named skips, the ones before it read."""
    write_good_eval = _good_eval_writer()
    import shutil
    import zipfile

    (tmp_path / "log").mkdir()
    src = write_good_eval(tmp_path / "log")
    with zipfile.ZipFile(src) as zf:
        unpacked = sum(i.file_size for i in zf.infolist())
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a.eval", "b.eval", "c.eval"):
        shutil.copy(src, logs / name)
    monkeypatch.setenv("UB_REPORT_UNPACKED_MAX_MB", str(1.5 * unpacked / 2**20))  # one log, not two
    proc, _ = _ub("report", str(logs), "--out", str(tmp_path / "out"), timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    spent = [ln for ln in proc.stderr.splitlines() if "budget" in ln and "UB_REPORT_UNPACKED_MAX_MB" in ln]
    assert [ln.split("logs/")[1].split(":")[0] for ln in spent] == ["b.eval", "c.eval"], proc.stderr[-2000:]
    assert "wrote" in proc.stdout and "2 scored samples" in proc.stdout, proc.stdout
