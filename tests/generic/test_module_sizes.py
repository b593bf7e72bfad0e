"""The house rule of the architecture: no module of the package over 900 lines. A long module is split by idea, not
by size."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 900


def test_no_module_over_900_lines():
    long = {}
    for package in ("ub_core", "ub_inspect", "ub_lmeval"):
        for path in sorted((ROOT / package).rglob("*.py")):
            n = len(path.read_text(encoding="utf-8").splitlines())
            if n > LIMIT:
                long[path.relative_to(ROOT).as_posix()] = n
    assert not long, f"modules over {LIMIT} lines: {long}"
