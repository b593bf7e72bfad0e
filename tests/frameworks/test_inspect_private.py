"""Inspect's private names we rely on are still where ub_inspect/_inspect_private.py looks for them. If Inspect moves
one, this fails loudly (the package keeps working through its fallbacks, less nicely)."""

from __future__ import annotations

import ast
from pathlib import Path

from ub_inspect import _inspect_private as P

ROOT = Path(__file__).resolve().parents[2]


def test_private_inspect_names_are_found():
    assert P.PRIVATE_IMPORTS_FOUND
    from inspect_ai._util.error import PrerequisiteError

    assert P.CleanlyPrinted is PrerequisiteError
    assert P.installed_package_name(test_private_inspect_names_are_found) in (None, "tests")
    from inspect_ai._eval.task.constants import TASK_FILE_ATTR, TASK_RUN_DIR_ATTR

    assert (P.TASK_FILE_ATTR, P.TASK_RUN_DIR_ATTR) == (TASK_FILE_ATTR, TASK_RUN_DIR_ATTR)


def test_package_tasks_record_no_task_file_and_scorers_answer_to_their_short_name():
    """What the two private routes are for: Inspect records no loose task file for our tasks however the package is
    installed (eval-retry would load the module as a file), and finds our scorers by the unqualified name it
    writes into the log (inspect score)."""
    from inspect_ai._eval.task.util import task_file, task_run_dir
    from inspect_ai._util.registry import registry_info, registry_lookup

    import ub_inspect._registry  # noqa: F401 - registers the tasks, scorers and aliases
    from ub_inspect.ksn import ksn
    from ub_inspect.ksn.scorer import ksn_scorer

    task = ksn(limit_per_category=1)
    assert task_file(task) is None and task_run_dir(task) == __import__("os").getcwd()
    assert registry_info(task).name == "ub_inspect/ksn"
    alias = registry_lookup("scorer", "ksn_scorer")
    assert alias is not None and registry_info(alias(ks_ns=[10])).name == registry_info(ksn_scorer(ks_ns=[10])).name
    assert P.register_unqualified_alias(ksn_scorer) is False  # taken already: registered once


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
