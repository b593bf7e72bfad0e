"""Registry names that read ``ub_inspect/<name>`` however the package is installed.

Inspect prefixes a task's name with its top-level package only when that package is itself an installed
distribution or sits in site-packages. Our distribution is ``unpredictabench`` (import packages ``ub_core``,
``ub_inspect``, ``ub_lmeval``), so an editable install would register a bare ``ksn`` and
``inspect eval ub_inspect/ksn`` would not find it. We name tasks and reducers explicitly exactly when Inspect
would not prefix them.
"""

from __future__ import annotations

from ._inspect_private import installed_package_name


def _anchor() -> None:  # an object defined in this package, to ask Inspect how it names our objects
    return None


def _inspect_prefixes_us() -> bool:
    # None when Inspect's private helper moved: naming explicitly is always safe then
    return installed_package_name(_anchor) == "ub_inspect"


def registry_name(short: str) -> str:
    """The name to pass to ``@task(name=...)`` / ``@score_reducer(name=...)`` so that the object registers as
    ``ub_inspect/<short>`` (what users type: ``ub_inspect/ksn``, ``--epochs-reducer ub_inspect/tar``)."""
    return short if _inspect_prefixes_us() else f"ub_inspect/{short}"
