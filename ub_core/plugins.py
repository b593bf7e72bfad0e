"""Plug-ins found through package entry points (``importlib.metadata``): a lab's own problem banks, distribution
families, metrics, run-level metrics (a whole kind of evaluation) and options, registered by its own installed
package, seen by ``ub``, Inspect and lm-eval alike (they all ask the registries below, which read the entry points
when they are asked, never at import). ``docs/extending.md`` is the recipe.

Entry-point groups (``[project.entry-points."unpredictabench.banks"]`` in the lab's ``pyproject.toml``); each
``name = "package.module:OBJECT"``, the object (or a function without arguments returning it) named like the entry
point:

- :data:`BANKS_GROUP` ``unpredictabench.banks``: a :class:`ub_core.problems.Bank`;
- :data:`FAMILIES_GROUP` ``unpredictabench.families``: a :class:`ub_core.distributions.Family`;
- :data:`METRICS_GROUP` ``unpredictabench.metrics``: a :class:`ub_core.metric_spec.MetricSpec` (its ``key`` is the
  name) with a ``compute``, scoped to the bank (``bank=``) or the plug-in distribution family (``family=``) it
  belongs to: it is scored, logged and reported in runs of that bank (problems of that family) only;
- :data:`RUN_METRICS_GROUP` ``unpredictabench.run_metrics``: a :class:`ub_core.run_metrics.RunMetric`, a metric of a
  whole run computed from its per-problem records, with its own standard error and its own report section;
- :data:`OPTIONS_GROUP` ``unpredictabench.options``: a :class:`ub_core.option_registry.Option` with ``bank=`` and
  ``apply=``, an option of that bank's runs (checked like every option; it transforms the bank's problems).

Nothing a plug-in registers changes a run of another bank. ``examples/custom_bank/`` (a bank and a family) and
``examples/failure_to_mix/`` (every kind) are complete plug-in packages. A plug-in that cannot be loaded (its import
fails, it is not the right kind of object, its name differs) is left out with one warning on the ``ub_core.plugins``
logger, and its one-line reason is kept (:func:`load_errors`) for the unknown-name message of the registry that asked.
"""

from __future__ import annotations

import logging
import sys
from importlib import metadata
from typing import Any, Callable, MutableMapping

__all__ = ["BANKS_GROUP", "FAMILIES_GROUP", "METRICS_GROUP", "RUN_METRICS_GROUP", "OPTIONS_GROUP", "discover",
           "load_errors", "entry_objects", "plugin_names", "declared_names", "check_scope", "forget_scans"]

log = logging.getLogger("ub_core.plugins")

BANKS_GROUP = "unpredictabench.banks"
FAMILIES_GROUP = "unpredictabench.families"
METRICS_GROUP = "unpredictabench.metrics"
RUN_METRICS_GROUP = "unpredictabench.run_metrics"
OPTIONS_GROUP = "unpredictabench.options"

#: group -> (the sys.path it was scanned with, {entry point name: one-line reason it was left out})
_SCANNED: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {}
#: group -> the names its plug-ins registered (a plug-in's metric may be scoped to a plug-in's bank or family only)
_REGISTERED: dict[str, set[str]] = {}


def plugin_names(group: str) -> frozenset[str]:
    """The names registered from ``group``'s entry points so far."""
    return frozenset(_REGISTERED.get(group, ()))


def load_errors(group: str) -> dict[str, str]:
    """The plug-ins of ``group`` left out at the last scan, with their reasons."""
    return dict(_SCANNED.get(group, ((), {}))[1])


def _name(obj: Any) -> Any:
    return getattr(obj, "name", None)


def discover(group: str, kind: type, registry: MutableMapping[str, Any], register: Callable[[Any], Any],
             force: bool = False, name_of: Callable[[Any], Any] = _name) -> None:
    """Register every entry point of ``group`` whose name is not in ``registry`` yet (its object, or what calling
    it returns, must be a ``kind`` named like the entry point: ``name_of(obj)``). Scans again only when ``sys.path``
    changed since the last scan of the group, or with ``force`` (a name asked for and not found: a package installed
    since). ``register`` may refuse an object with an exception: it is left out like a broken plug-in."""
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
            if name_of(obj) != ep.name:
                raise ValueError(f"{ep.value} is called {name_of(obj)!r}, not {ep.name!r}")
            register(obj)
            _REGISTERED.setdefault(group, set()).add(ep.name)
        except Exception as e:  # a broken plug-in is left out, named, and never ends the run
            msg = str(e).splitlines()[0] if str(e) else ""
            errors[ep.name] = f"{type(e).__name__}: {msg}"[:300]
            log.warning("%s plug-in %r (%s) left out: %s", group, ep.name, ep.value, errors[ep.name])
    _SCANNED[group] = (path, errors)


def entry_objects(group: str, kind: type, registry: MutableMapping[str, Any], check: Callable[[Any], Any] | None = None,
                  name_of: Callable[[Any], Any] = _name) -> MutableMapping[str, Any]:
    """``registry`` (name -> object) with every loadable entry point of ``group`` added (:func:`discover`; ``check``
    may refuse an object with a one-line exception), read now: the caller asks at call time, never at import."""
    def register(obj: Any) -> None:
        if check is not None:
            check(obj)
        registry[name_of(obj)] = obj

    discover(group, kind, registry, register, name_of=name_of)
    return registry


def declared_names(group: str) -> frozenset[str]:
    """The names installed packages declare under ``group``, loaded or not."""
    return frozenset(ep.name for ep in metadata.entry_points(group=group))


def check_scope(what: str, bank: str | None, family: str | None) -> None:
    """A plug-in's metric, run metric or option belongs to a plug-in's bank (or distribution family), so that it
    changes no run of a built-in bank: a one-line ValueError otherwise. A bank or family is a plug-in's when an
    installed package declares it as an entry point (:data:`BANKS_GROUP`, :data:`FAMILIES_GROUP`)."""
    if bank is None and family is None:
        raise ValueError(f"{what} names no scope: give it bank= (its bank) or family= (its distribution family)")
    if bank is not None and bank not in declared_names(BANKS_GROUP):
        raise ValueError(f"{what}: bank {bank!r} is not a plug-in's bank")
    if family is not None and family not in declared_names(FAMILIES_GROUP):
        raise ValueError(f"{what}: family {family!r} is not a plug-in's distribution family")


def forget_scans() -> None:
    """Every group to be scanned again, and no name remembered as a plug-in's (the registries that hold the
    plug-ins' objects are their owners' to clear)."""
    _SCANNED.clear()
    _REGISTERED.clear()
