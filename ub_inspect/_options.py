"""Checking `-T` task options, in the task function, before any generation. The rules are
:mod:`ub_core.options`' (lm-eval's ``--metadata`` is checked by the same helpers); these wrappers raise them as
:class:`OptionError`, which Inspect prints as one line.

Inspect passes `-T` values through ``yaml.safe_load`` without coercion, so ``ks_ns=1,10,100`` arrives as a string
(or a list of strings), ``n_samples=100`` as an int and ``threshold=abc`` as a string. Every helper here names the
option and what it expects, and raises :class:`OptionError`, which Inspect's command line prints as one line,
without a traceback. A task function wraps its body in :func:`task_options`, so that the errors of the bank
loaders (an unknown category, a missing file) print the same way.

Unknown ``-T`` names never reach a task function: Inspect drops them with a warning naming them ("param 'x' not
used by task ...", ``inspect_ai/_eval/registry.py``); ``tests/frameworks/test_inspect_options.py`` checks that it
still does.
"""

from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, Callable, Iterator, Mapping, Sequence

from inspect_ai import Task
from rich.markup import escape

from ub_core import option_registry
from ub_core import options as _core
from ub_core.problems import UnknownProblemError

from ._inspect_private import CleanlyPrinted as _CleanlyPrinted  # Inspect prints it as one line

__all__ = ["OptionError", "task_options", "integer", "positive_int", "real", "int_list", "str_list", "choice",
           "boolean", "threshold", "ks_method", "registry_checked", "registry_task", "TaskOptions", "select_ids",
           "first_per_category"]


class OptionError(_CleanlyPrinted, ValueError):
    """A bad task option. Inspect's excepthook prints a ``PrerequisiteError`` as its ``message`` alone (no
    traceback; ``inspect_ai._util.error.exception_hook``); it is a ValueError too, for Python callers."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.message = f"ERROR: {escape(message)}"  # Inspect prints it through rich: brackets stay literal


def registry_checked(family: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """Each of ``family``'s options in ``given`` (the task function's arguments) checked by its checker in
    :mod:`ub_core.option_registry`, the one table every front door reads; a bad value is an :class:`OptionError`."""
    out = {}
    for name, opt in option_registry.family_options(family, "inspect").items():
        if name in given:
            try:
                out[name] = opt.checked(given[name])
            except _core.OptionValueError as exc:
                raise OptionError(str(exc)) from None
    return out


class TaskOptions(SimpleNamespace):
    """A task's options, each checked by its registry checker (``options.n_samples``); :meth:`given` says whether
    the run set one or left the registry's default."""

    def __init__(self, family: str, raw: Mapping[str, Any]) -> None:
        super().__init__(**registry_checked(family, raw))
        self._defaults = option_registry.FAMILIES[family].inspect
        self._raw = dict(raw)

    def given(self, name: str) -> bool:
        return self._raw[name] is not self._defaults[name]


def registry_task(family: str) -> Callable[[Callable[[TaskOptions], Task]], Callable[..., Task]]:
    """Make ``body(options)`` the task function of ``family``: its parameters, their defaults and its docstring are
    the option registry's (:data:`ub_core.option_registry.FAMILIES`, :func:`~ub_core.option_registry.task_docstring`),
    and ``body`` receives them checked (:class:`TaskOptions`). Errors raised while the task is built are one line
    (:func:`task_options`). Put it under Inspect's ``@task``, which reads the signature made here."""

    def wrap(body: Callable[[TaskOptions], Task]) -> Callable[..., Task]:
        defaults = option_registry.FAMILIES[family].inspect
        signature = inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=value)
                                       for name, value in defaults.items()], return_annotation=Task)

        def task_function(*args: Any, **kwargs: Any) -> Task:
            with task_options(family):
                try:
                    bound = signature.bind(*args, **kwargs)
                except TypeError as exc:
                    raise OptionError(f"{family}: {exc}") from None
                bound.apply_defaults()
                return body(TaskOptions(family, bound.arguments))

        functools.update_wrapper(task_function, body, assigned=("__module__", "__name__", "__qualname__"), updated=())
        task_function.__signature__ = signature  # type: ignore[attr-defined]
        task_function.__doc__ = option_registry.task_docstring(family)
        return task_function

    return wrap


@contextmanager
def task_options(task: str, given: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Wrap a task function's body: its arguments ``given`` (``locals()`` on entry) are first checked against the
    option registry (:func:`registry_checked`, family ``task``); a ValueError, unknown category / id or missing
    file raised while the task is built becomes an :class:`OptionError` (``<task>: <message>``)."""
    if given is not None:
        registry_checked(task, given)
    try:
        yield
    except OptionError:
        raise
    except UnknownProblemError as exc:  # a KeyError: its str() is the quoted repr
        raise OptionError(f"{task}: {exc.args[0] if exc.args else exc}") from exc
    except (ValueError, FileNotFoundError) as exc:
        raise OptionError(f"{task}: {exc}") from exc


def _one_line(fn):
    """``fn`` of :mod:`ub_core.options`, its :class:`~ub_core.options.OptionValueError` raised as an
    :class:`OptionError` (Inspect prints it as one line)."""

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except _core.OptionValueError as exc:
            raise OptionError(str(exc)) from None

    return checked


integer = _one_line(_core.integer)
positive_int = _one_line(_core.positive_int)
real = _one_line(_core.real)
int_list = _one_line(_core.int_list)
str_list = _one_line(_core.str_list)
choice = _one_line(_core.choice)
boolean = _one_line(_core.boolean)
threshold = _one_line(_core.threshold)  # the KS p-value threshold, as lm-eval's --metadata checks it
ks_method = _one_line(_core.ks_method)


def first_per_category(items: Sequence[Any], limit: Any) -> list[Any]:
    """``-T limit_per_category``: the first ``limit`` items of each ``category``, in bank order (all when None)."""
    if limit is None:
        return list(items)
    cap = positive_int(limit, "limit_per_category")
    seen: dict[str, int] = {}
    kept = []
    for item in items:
        seen[item.category] = seen.get(item.category, 0) + 1
        if seen[item.category] <= cap:
            kept.append(item)
    return kept


def select_ids(items: Sequence[Any], ids: Any) -> list[Any]:
    """``-T ids``: keep only the items whose ``id`` is listed (a list or a comma-separated string), in bank order;
    all of them when ``ids`` is empty. An id that is not among ``items`` is a one-line error."""
    wanted = str_list(ids, "ids")
    if not wanted:
        return list(items)
    unknown = sorted(set(wanted) - {i.id for i in items})
    if unknown:
        raise OptionError(f"ids: not among the selected items: {', '.join(unknown)}")
    keep = set(wanted)
    return [i for i in items if i.id in keep]
