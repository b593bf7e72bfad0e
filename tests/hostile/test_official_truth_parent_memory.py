"""The parent of ``ub official truth`` stays within the bound the README states on the largest outputs it
accepts. Labels of emoji were counted by their length, not their size (4 bytes a character): "16 MB of values"
held 62 MB, a record of them was hashed through a 186 MB ASCII-escaped string, and a big-records run peaked at
916 MB (594 MB to resume). Each case runs the CLI in a subprocess and reads its peak resident memory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.truth_runner import ROOT

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the jail needs Linux namespaces; /proc/self/status"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
]

F = "textual_explicit_concentrated_gpt-5.4"
#: the README's bound for the parent (``ub official truth``, up to four workers)
BOUND_MB = 250
_PEAK = ("import sys, runpy\nsys.argv = ['ub'] + sys.argv[1:]\ntry:\n    runpy.run_module('ub_core.cli', "
         "run_name='__main__')\nexcept SystemExit as e:\n    rc = e.code\nelse:\n    rc = 0\n"
         "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1]\n"
         "print('PEAK_KB', hwm, file=sys.stderr)\nsys.exit(rc)\n")


def _truth(codes: Path, out: Path, workers: int) -> tuple[subprocess.CompletedProcess, int]:
    proc = subprocess.run([sys.executable, "-c", _PEAK, "official", "truth", "--codes", str(codes), "--out", str(out),
                           "--trust-release-code", "--no-progress", "--workers", str(workers)], capture_output=True,
                          text=True, timeout=300, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc, int(proc.stderr.split("PEAK_KB")[1].split()[0])


def test_big_records_keep_the_parent_within_the_readme_bound(tmp_path):
    codes = tmp_path / "ground_truth_codes" / F
    codes.mkdir(parents=True)
    # 62 MB of emoji labels, 16 MB by their length: over the cap by their size
    (codes / "emoji.py").write_text("print([chr(0x1F600 + k % 50) * 1550 + str(k) for k in range(10000)])\n")
    # the largest outputs under the cap: ASCII, astral and control-character labels (records of 16 to 24 MB)
    (codes / "ascii.py").write_text("print(['x' * 1580 + str(k) for k in range(10000)])\n")
    (codes / "astral.py").write_text("print([chr(0x1F600 + k % 50) * 390 + str(k) for k in range(10000)])\n")
    (codes / "controls.py").write_text("print([chr(1) * 395 + str(k) for k in range(10000)])\n")
    out = tmp_path / "out"
    proc, peak_kb = _truth(tmp_path, out, workers=2)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    failed = [ln for ln in proc.stdout.splitlines() if ln.strip().startswith("failed")]
    assert len(failed) == 1 and "emoji" in failed[0] and "more than 16 MB of values" in failed[0], proc.stdout
    assert peak_kb * 1024 < BOUND_MB * 2**20, peak_kb
    (codes / "emoji.py").unlink()
    proc, peak_kb = _truth(tmp_path, out, workers=2)  # a resume: every record read back and verified
    assert proc.returncode == 0 and "3 already done" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert peak_kb * 1024 < BOUND_MB * 2**20, peak_kb


def _canonical_hash(values: list) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(values, separators=(",", ":"), allow_nan=False).encode("utf-8")).hexdigest()


def test_the_streamed_hash_is_the_canonical_one():
    """Records written before the hash was streamed keep verifying: the same SHA-256 as the whole text's, for every
    kind of value a program may print (numbers, labels with astral, control and escaped characters, shuffles)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ub_core.release_tools.official_truth import values_sha256

    scalar = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False),
                       st.text(st.characters(codec="utf-8"), max_size=20), st.booleans(), st.none())
    values = st.lists(st.one_of(scalar, st.lists(scalar, max_size=5)), max_size=30)

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(values)
    def check(vs):
        assert values_sha256(vs) == _canonical_hash(vs)

    check()
