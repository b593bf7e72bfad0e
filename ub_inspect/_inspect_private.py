"""The only place this package touches Inspect's private modules (``inspect_ai._util``).

No public route exists for either need: printing a task-option error as one line without a traceback (Inspect's
excepthook does this for ``PrerequisiteError``), and asking how Inspect names our tasks in its registry.
``tests/test_inspect_private.py`` fails loudly when Inspect moves either; until then the fallbacks keep working
(a traceback before the same last line; explicit ``ub_inspect/<name>`` task names).
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["CleanlyPrinted", "PRIVATE_IMPORTS_FOUND", "installed_package_name"]

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


#: whether both private names were found (the test asserts it)
PRIVATE_IMPORTS_FOUND = _ERROR_FOUND and _package_name is not None


def installed_package_name(obj: Callable[..., Any]) -> str | None:
    """The top-level package Inspect prefixes ``obj``'s registry name with, or None if it would not (or cannot
    be asked)."""
    return _package_name(obj) if _package_name is not None else None
