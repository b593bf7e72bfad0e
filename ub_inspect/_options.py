"""Checking `-T` task options, in the task function, before any generation.

Inspect passes `-T` values through ``yaml.safe_load`` without coercion, so ``ks_ns=1,10,100`` arrives as a string
(or a list of strings), ``n_samples=100`` as an int and ``threshold=abc`` as a string. Every helper here names the
option and what it expects, and raises :class:`OptionError`, which Inspect's command line prints as one line,
without a traceback. A task function wraps its body in :func:`task_options`, so that the errors of the bank
loaders (an unknown category, a missing file) print the same way.

Unknown ``-T`` names never reach a task function: Inspect drops them with a warning naming them ("param 'x' not
used by task ...", ``inspect_ai/_eval/registry.py``); ``tests/frameworks/test_inspect_options.py`` checks that it still does.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from rich.markup import escape

from ub_core.problems import UnknownProblemError

from ._inspect_private import CleanlyPrinted as _CleanlyPrinted  # Inspect prints it as one line

__all__ = ["OptionError", "task_options", "integer", "positive_int", "real", "int_list", "str_list", "choice",
           "select_ids", "first_per_category"]


class OptionError(_CleanlyPrinted, ValueError):
    """A bad task option. Inspect's excepthook prints a ``PrerequisiteError`` as its ``message`` alone (no
    traceback; ``inspect_ai._util.error.exception_hook``); it is a ValueError too, for Python callers."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        self.message = f"ERROR: {escape(message)}"  # Inspect prints it through rich: brackets stay literal


@contextmanager
def task_options(task: str) -> Iterator[None]:
    """Wrap a task function's body: a ValueError, unknown category / id or missing file raised while the task is
    built becomes an :class:`OptionError` (``<task>: <message>``)."""
    try:
        yield
    except OptionError:
        raise
    except UnknownProblemError as exc:  # a KeyError: its str() is the quoted repr
        raise OptionError(f"{task}: {exc.args[0] if exc.args else exc}") from exc
    except (ValueError, FileNotFoundError) as exc:
        raise OptionError(f"{task}: {exc}") from exc


def _bounds(kind: str, low: float | None, high: float | None, low_open: bool = False,
            high_open: bool = False) -> str:
    if low is not None and high is not None:
        return f"{kind} in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{kind} {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{kind} {'<' if high_open else '<='} {high:g}"
    return kind


def integer(value: Any, name: str, low: int | None = None, high: int | None = None) -> int:
    """An integer option: ``5``, ``"5"`` or ``5.0``; never ``1.5`` (no silent truncation), ``"abc"`` or ``true``."""
    n: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, (float, str)) and not isinstance(value, bool):
        try:
            x = float(value)
        except ValueError:
            x = math.nan
        if math.isfinite(x) and x.is_integer():
            n = int(x)
    expected = _bounds("an integer", low, high)
    if n is None or (low is not None and n < low) or (high is not None and n > high):
        raise OptionError(f"option {name}: expected {expected}, got {value!r}")
    return n


def positive_int(value: Any, name: str) -> int:
    return integer(value, name, low=1)


def real(value: Any, name: str, low: float | None = None, high: float | None = None, *, low_open: bool = False,
         high_open: bool = False) -> float:
    """A finite number option (``"0.5"``, ``1``, ``1e-4``), within the given bounds (open or closed)."""
    expected = _bounds("a number", low, high, low_open, high_open)
    x = math.nan
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            x = float(value)
        except ValueError:
            pass
    bad = not math.isfinite(x)
    if not bad and low is not None:
        bad = x <= low if low_open else x < low
    if not bad and high is not None:
        bad = x >= high if high_open else x > high
    if bad:
        raise OptionError(f"option {name}: expected {expected}, got {value!r}")
    return x


def int_list(value: Any, name: str) -> tuple[int, ...]:
    """``[1, 10]``, ``"1,10"``, ``["1", "10"]`` or ``10`` -> ``(1, 10)``; positive integers only."""
    if isinstance(value, str):
        items: Sequence[Any] = [x for x in value.replace(" ", "").strip("[]()").split(",") if x]
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        items = [value]
    out = [integer(x.strip() if isinstance(x, str) else x, name, low=1) for x in items]
    if not out:
        raise OptionError(f"option {name}: needs at least one value")
    return tuple(out)


def str_list(value: Any, name: str) -> tuple[str, ...] | None:
    """``"a,b"``, ``["a", "b"]`` or ``None`` -> ``("a", "b")`` / ``None``."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return tuple(x.strip() for x in value.split(",") if x.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(x).strip() for x in value)
    raise OptionError(f"option {name}: expected a name or a comma-separated list, got {value!r}")


def choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    v = str(value)
    if v not in allowed:
        raise OptionError(f"option {name}: must be one of {', '.join(allowed)}, got {value!r}")
    return v


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
