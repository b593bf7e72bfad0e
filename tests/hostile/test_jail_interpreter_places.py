"""As root the jail runs programs as a throwaway uid, which must reach the interpreter wherever it lives: a virtual
environment under /tmp (a common CI and container layout), under a folder only root may enter (/opt/x, a home
folder), or the system's. Where it cannot (the interpreter's own folder is closed to other users), the refusal is
one line naming that folder and the ``chmod`` that fixes it, never ``--no-jail``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.truth_runner import ROOT, values_by_uid

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the jail needs Linux namespaces"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
    pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                       reason="the throwaway-uid route is the root route"),
]

_RUN = """
import json, sys
from ub_core.release_tools.official_truth import build_truth
s = build_truth(sys.argv[1], sys.argv[2], trust_release_code=True, workers=1, progress=False, log=lambda _: None)
print(json.dumps({"failed": {f.job.uid: f.reason for f in s.failed}, "sandbox": s.sandbox}))
"""


def _venv(where: Path) -> Path:
    """A virtual environment at ``where`` that sees this interpreter's packages (numpy), as CI images make."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(where)], check=True,
                   capture_output=True, timeout=120)
    return where / "bin" / "python"


def _release(tmp: Path) -> Path:
    codes = tmp / "release" / "ground_truth_codes" / "textual_explicit_concentrated_gpt-5.4"
    codes.mkdir(parents=True)
    (codes / "plain.py").write_text("import random\nrandom.seed(1)\nprint([random.random() for _ in range(10000)])\n")
    (codes / "numpy.py").write_text("import numpy as np\n"
                                    "print(np.random.default_rng(1).normal(0, 1, 10000).tolist())\n")
    return codes.parent


def _truth(python: Path, tmp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-c", _RUN, str(_release(tmp)), str(tmp / "out")], check=False,
                          capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("closed_above", [False, True], ids=["tmp-venv", "venv-under-a-0700-folder"])
def test_the_jail_starts_from_a_venv_under_tmp_as_root(tmp_path, closed_above):
    """/tmp/.../x/venv: bwrap made the folders between the scratch /tmp and the venv 0700 in the jail, the
    throwaway uid could not reach the interpreter, and the run was refused with ``Permission denied; pass
    --no-jail``. A 0700 folder above (like /root, or a home folder) is the same case one level up."""
    above = tmp_path / "x"
    above.mkdir()
    python = _venv(above / "venv")
    if closed_above:
        above.chmod(0o700)
    proc = _truth(python, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["failed"] == {} and "bubblewrap jail" in result["sandbox"], result
    got = values_by_uid(tmp_path / "out")
    assert sorted(got) == ["numpy", "plain"] and all(len(v) == 10000 for v in got.values())


def test_a_closed_interpreter_folder_is_named_with_its_fix(tmp_path):
    """The venv's own folder closed to other users (``umask 077``): nothing the jail can show; the refusal names
    the folder and the chmod, in one line, and does not send the user to --no-jail."""
    venv = tmp_path / "venv"
    python = _venv(venv)
    venv.chmod(0o700)
    codes = _release(tmp_path)
    proc = subprocess.run([str(python), "-m", "ub_core.cli", "official", "truth", "--codes", str(codes.parent),
                           "--out", str(tmp_path / "out"), "--trust-release-code", "--no-progress"],
                          check=False, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(venv) in lines[0] and "chmod" in lines[0] and "--no-jail" not in lines[0], lines[0]
    assert not (tmp_path / "out").exists()
