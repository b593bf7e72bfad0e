"""The only place this package touches Inspect's private modules (``inspect_ai._util``).

No public route exists for these needs: printing a task-option error as one line without a traceback (Inspect's
excepthook does this for ``PrerequisiteError``), asking how Inspect names our tasks in its registry, the names of
the attributes in which Inspect records a task's source file and run folder (``ub_inspect._naming.package_task``
keeps them empty), registering a scorer under its unqualified name too (:func:`register_unqualified_alias`), and
whether a task function runs inside Inspect's own task loader (:func:`built_inside_eval`).
``tests/frameworks/test_inspect_private.py`` fails loudly when Inspect moves any; until then the fallbacks keep working
(a traceback before the same last line; explicit ``ub_inspect/<name>`` task names; the attribute names of Inspect
0.3.285; no alias, so ``inspect score`` needs ``--scorer ub_inspect/<name>``).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

__all__ = ["CleanlyPrinted", "PRIVATE_IMPORTS_FOUND", "installed_package_name", "TASK_FILE_ATTR", "TASK_RUN_DIR_ATTR",
           "register_unqualified_alias", "built_inside_eval"]

try:
    from inspect_ai._util.error import PrerequisiteError as CleanlyPrinted
    _ERROR_FOUND = True
except ImportError:  # pragma: no cover - Inspect moved it
    _ERROR_FOUND = False

    class CleanlyPrinted(Exception):  # type: ignore[no-redef]
        pass

try:
    from inspect_ai._util.package import get_installed_package_name as _package_name
except ImportError:  # pragma: no cover - Inspect moved it
    _package_name = None


try:
    from inspect_ai._eval.task.constants import TASK_FILE_ATTR, TASK_RUN_DIR_ATTR
    _TASK_ATTRS_FOUND = True
except ImportError:  # pragma: no cover - Inspect moved them
    TASK_FILE_ATTR, TASK_RUN_DIR_ATTR = "__task_file__", "__task_run_dir__"
    _TASK_ATTRS_FOUND = False


try:
    from inspect_ai._util.registry import RegistryInfo, registry_add, registry_info, registry_lookup
    _REGISTRY_FOUND = True
except ImportError:  # pragma: no cover - Inspect moved them
    _REGISTRY_FOUND = False


#: whether every private name was found (the test asserts it)
PRIVATE_IMPORTS_FOUND = _ERROR_FOUND and _package_name is not None and _TASK_ATTRS_FOUND and _REGISTRY_FOUND


def installed_package_name(obj: Callable[..., Any]) -> str | None:
    """The top-level package Inspect prefixes ``obj``'s registry name with, or None if it would not (or cannot
    be asked)."""
    return _package_name(obj) if _package_name is not None else None


def register_unqualified_alias(factory: Callable[..., Any], kind: str = "scorer") -> bool:
    """Register ``factory`` (a ``@scorer`` registered as ``ub_inspect/<name>``) under ``<name>`` as well, unless that
    name is taken. Inspect writes a scorer's unqualified name into the log (``eval.scorers[].name``) and
    ``inspect score`` looks that name up as written (Inspect 0.3.285, ``_eval/score.py`` ``resolve_scorers``), so
    without the alias a package's scorer cannot be rebuilt from its log. The alias calls the factory, so the
    scorer it makes is the package's (same registry name, metrics and arguments). Returns whether it registered."""
    if not _REGISTRY_FOUND:
        return False
    info = registry_info(factory)
    short = info.name.rsplit("/", 1)[-1]
    if short == info.name or registry_lookup(kind, short) is not None:
        return False

    def alias(*args: Any, **kwargs: Any) -> Any:
        return factory(*args, **kwargs)

    alias.__signature__ = inspect.signature(factory)  # type: ignore[attr-defined]
    alias.__doc__, alias.__name__ = factory.__doc__, short
    registry_add(alias, RegistryInfo(type=kind, name=short, metadata=dict(info.metadata)))
    return True


#: the module of Inspect's that builds a named task inside ``eval()``, once the run's model is active
_TASK_LOADER = "inspect_ai._eval.loader"


def built_inside_eval() -> bool:
    """Whether the task function is being called by Inspect's task loader inside an ``eval()`` (``inspect eval
    ub_inspect/x --model M``, or ``eval("ub_inspect/x", model=M)``), where ``get_model()`` is the run's own model.
    A task object built by the caller before ``eval(task, model=...)`` is not: the active model is then whatever an
    earlier run left, if any. Read from the call stack (Inspect has no public flag); False if Inspect moves it."""
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == _TASK_LOADER:
            return True
        frame = frame.f_back
    return False
