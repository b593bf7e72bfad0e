"""How our objects enter Inspect's registry, the same however the package is installed.

Inspect treats an object as coming from an installed package only when its top-level import package is itself an
installed distribution (or sits in site-packages). Our distribution is ``unpredictabench`` (import packages
``ub_core``, ``ub_inspect``, ``ub_lmeval``), so with an editable install Inspect would

- register a bare ``ksn`` (and ``ksn_scorer``, ...), so ``inspect eval ub_inspect/ksn`` would not find it and a
  fresh ``inspect score`` process could not rebuild the scorer: :func:`registry_name` names every task, solver,
  scorer, metric and reducer ``ub_inspect/<name>`` exactly when Inspect would not prefix it;
- record the task's module as a loose task file and run the task from its folder: ``inspect eval-retry`` then
  loads ``ub_inspect/ksn/ksn.py`` as a file, whose relative imports fail, and relative ``-T`` paths resolve against
  the package folder. :func:`package_task` builds a Task that records neither, as a wheel install does.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task

from ._inspect_private import TASK_FILE_ATTR, TASK_RUN_DIR_ATTR, installed_package_name

__all__ = ["registry_name", "plugin_task_name", "package_task", "PackageTask"]


def _anchor() -> None:  # an object defined in this package, to ask Inspect how it names our objects
    return None


def _inspect_prefixes_us() -> bool:
    # None when Inspect's private helper moved: naming explicitly is always safe then
    return installed_package_name(_anchor) == "ub_inspect"


def registry_name(short: str) -> str:
    """The name to pass to ``@task(name=...)``, ``@scorer(name=...)``, ``@metric(name=...)``, ... so that the object
    registers as ``ub_inspect/<short>`` (what users type: ``ub_inspect/ksn``, ``--epochs-reducer ub_inspect/tar``)."""
    return short if _inspect_prefixes_us() else f"ub_inspect/{short}"


def plugin_task_name(package: str, short: str, anchor: Any) -> str:
    """The name to pass to a plug-in package's ``@task(name=...)`` so that its task registers as
    ``<package>/<short>`` however the package is installed (``anchor``: any function of that package): Inspect
    prefixes the package's name itself only where it sees the package installed (:func:`registry_name`)."""
    return short if installed_package_name(anchor) == package else f"{package}/{short}"


def _no_file(why: str) -> property:
    """An attribute that is never set (reading it raises AttributeError, so Inspect's ``getattr(task, attr,
    default)`` takes its default, as for a package task) and ignores writes: where Inspect records a loose task
    file / run folder."""

    def get(self):
        raise AttributeError(why)

    return property(get, lambda self, value: None, doc=why)


#: A Task of an installed package: Inspect's record of a task file and run folder stays empty (module docstring).
PackageTask = type("PackageTask", (Task,), {TASK_FILE_ATTR: _no_file("a package task has no task file"),
                                            TASK_RUN_DIR_ATTR: _no_file("a package task runs where it is started"),
                                            "__module__": __name__})


def package_task(**kwargs: Any) -> Task:
    """``Task(**kwargs)`` for a task of this package (:data:`PackageTask`)."""
    return PackageTask(**kwargs)
