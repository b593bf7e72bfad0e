"""Plug-ins found through package entry points (``importlib.metadata``): a lab's own problem banks and distribution
families, registered by its own installed package, seen by ``ub``, Inspect and lm-eval alike (they all ask the
registries of :mod:`ub_core.problems` and :mod:`ub_core.distributions`).

Entry-point groups (``[project.entry-points."unpredictabench.banks"]`` in the lab's ``pyproject.toml``):

- :data:`BANKS_GROUP` ``unpredictabench.banks``: ``name = "package.module:OBJECT"``, a
  :class:`ub_core.problems.Bank` called ``name`` (or a function without arguments returning one);
- :data:`FAMILIES_GROUP` ``unpredictabench.families``: a :class:`ub_core.distributions.Family` (or such a
  function), registered under its own name, which must be the entry point's.

``examples/custom_bank/`` is a complete plug-in package. A plug-in that cannot be loaded (its import fails, it is not
the right kind of object, its name differs) is left out with one warning on the ``ub_core.plugins`` logger, and its
one-line reason is kept (:func:`load_errors`) for the unknown-name message of the registry that asked.
"""

from __future__ import annotations

import logging
import sys
from importlib import metadata
from typing import Any, Callable, MutableMapping

__all__ = ["BANKS_GROUP", "FAMILIES_GROUP", "discover", "load_errors"]

log = logging.getLogger("ub_core.plugins")

BANKS_GROUP = "unpredictabench.banks"
FAMILIES_GROUP = "unpredictabench.families"

#: group -> (the sys.path it was scanned with, {entry point name: one-line reason it was left out})
_SCANNED: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {}


def load_errors(group: str) -> dict[str, str]:
    """The plug-ins of ``group`` left out at the last scan, with their reasons."""
    return dict(_SCANNED.get(group, ((), {}))[1])


def discover(group: str, kind: type, registry: MutableMapping[str, Any], register: Callable[[Any], Any],
             force: bool = False) -> None:
    """Register every entry point of ``group`` whose name is not in ``registry`` yet (its object, or what calling
    it returns, must be a ``kind`` named like the entry point). Scans again only when ``sys.path`` changed since the
    last scan of the group, or with ``force`` (a name asked for and not found: a package installed since)."""
    path = tuple(sys.path)
    if not force and group in _SCANNED and _SCANNED[group][0] == path:
        return
    errors: dict[str, str] = {}
    for ep in metadata.entry_points(group=group):
        if ep.name in registry:
            continue
        try:
            obj = ep.load()
            if not isinstance(obj, kind) and callable(obj):
                obj = obj()
            if not isinstance(obj, kind):
                raise TypeError(f"{ep.value} is a {type(obj).__name__}, not a {kind.__name__}")
            if obj.name != ep.name:
                raise ValueError(f"{ep.value} is called {obj.name!r}, not {ep.name!r}")
            register(obj)
        except Exception as e:  # a broken plug-in is left out, named, and never ends the run
            msg = str(e).splitlines()[0] if str(e) else ""
            errors[ep.name] = f"{type(e).__name__}: {msg}"[:300]
            log.warning("%s plug-in %r (%s) left out: %s", group, ep.name, ep.value, errors[ep.name])
    _SCANNED[group] = (path, errors)
