"""Helpers shared by the tests of ``ub official truth`` (tests/hostile/test_official_truth_*.py,
tests/hostile/test_runner_fs_fuzz.py). Test support; never part of the shipped package."""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["ROOT", "NOBODY", "as_nobody", "values_by_uid"]

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534


def as_nobody(cmd: list[str]) -> list[str]:
    """``cmd`` run as ``nobody`` from root: setpriv drops the ids inside a bwrap mount namespace where the
    interpreter and this checkout are reachable by that uid (root's home is not: only those paths are shown)."""
    outer = ["bwrap", "--dev-bind", "/", "/", "--perms", "0755", "--tmpfs", "/root"]
    for path in dict.fromkeys([sys.base_prefix, sys.prefix, str(ROOT)]):
        if path.startswith("/root/"):
            parts = Path(path).relative_to("/root").parts
            for i in range(1, len(parts)):
                outer += ["--perms", "0755", "--dir", str(Path("/root", *parts[:i]))]
            outer += ["--ro-bind", path, path]
    return outer + ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *cmd]


def values_by_uid(out: Path) -> dict:
    """Every ``<F>/ground_truth_values.json`` under ``out`` read back: uid -> its values."""
    got = {}
    for path in out.glob("*/ground_truth_values.json"):
        for r in json.loads(path.read_text()):
            got[r["uid"]] = r["ground_truth_values"]
    return got
