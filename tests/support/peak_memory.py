"""Peak resident memory of a piece of work, measured in a fresh interpreter, for the tests of bounded memory.

``run_measured(code, *args)`` runs :data:`PRELUDE` + ``code`` with the repository and ``tests/`` first on the
path and returns the JSON object that the code's last stdout line prints. ``code`` calls ``peak_mb()``, this
process's own high-water mark (``VmHWM``; ``ru_maxrss`` would carry over the parent's peak across exec), before and
after the work and prints the difference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

__all__ = ["PRELUDE", "run_measured"]

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = r"""
import json, re, resource, sys
from pathlib import Path

def peak_mb():
    status = Path("/proc/self/status")
    if status.is_file():
        return int(re.search(r"VmHWM:\s+(\d+)", status.read_text()).group(1)) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""


def run_measured(code: str, *args: str, env: dict | None = None, timeout: float = 300) -> dict:
    path = os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-c", PRELUDE + code, *map(str, args)], capture_output=True, text=True,
                         timeout=timeout, env={**os.environ, "PYTHONPATH": path, **(env or {})})
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])
