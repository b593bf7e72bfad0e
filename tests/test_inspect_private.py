"""Inspect's private names we rely on are still where ub_inspect/_inspect_private.py looks for them. If Inspect moves
one, this fails loudly (the package keeps working through its fallbacks, less nicely)."""

from __future__ import annotations

import ast
from pathlib import Path

from ub_inspect import _inspect_private as P

ROOT = Path(__file__).resolve().parents[1]


def test_private_inspect_names_are_found():
    assert P.PRIVATE_IMPORTS_FOUND
    from inspect_ai._util.error import PrerequisiteError

    assert P.CleanlyPrinted is PrerequisiteError
    assert P.installed_package_name(test_private_inspect_names_are_found) in (None, "tests")


def test_no_other_module_imports_inspect_private_modules():
    offenders = []
    for path in sorted((ROOT / "ub_inspect").rglob("*.py")):
        if path.name == "_inspect_private.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            mods = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.relative_to(ROOT)}: {m}" for m in mods if m.startswith("inspect_ai._")]
    assert not offenders, offenders
