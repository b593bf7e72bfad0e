"""Coercing `-T` task options: Inspect passes them through ``yaml.safe_load`` without coercion, so
``ks_ns=1,10,100`` arrives as a string (or a list of strings) and ``n_samples=100`` as an int. Errors are one
line naming the option."""

from __future__ import annotations

from typing import Any, Sequence


def int_list(value: Any, name: str) -> tuple[int, ...]:
    """``[1, 10]``, ``"1,10"``, ``["1", "10"]`` or ``10`` -> ``(1, 10)``; positive integers only."""
    if isinstance(value, str):
        items: Sequence[Any] = [x for x in value.replace(" ", "").strip("[]()").split(",") if x]
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        items = [value]
    out = []
    for x in items:
        try:
            n = int(str(x).strip())
        except ValueError:
            raise ValueError(f"option {name}: expected integers, got {x!r}") from None
        if n < 1:
            raise ValueError(f"option {name}: every value must be >= 1, got {n}")
        out.append(n)
    if not out:
        raise ValueError(f"option {name}: needs at least one value")
    return tuple(out)


def str_list(value: Any, name: str) -> tuple[str, ...] | None:
    """``"a,b"``, ``["a", "b"]`` or ``None`` -> ``("a", "b")`` / ``None``."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return tuple(x.strip() for x in value.split(",") if x.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(x).strip() for x in value)
    raise ValueError(f"option {name}: expected a name or a comma-separated list, got {value!r}")


def positive_int(value: Any, name: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"option {name}: expected an integer, got {value!r}") from None
    if n < 1:
        raise ValueError(f"option {name}: must be >= 1, got {n}")
    return n


def choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    v = str(value)
    if v not in allowed:
        raise ValueError(f"option {name}: must be one of {', '.join(allowed)}, got {value!r}")
    return v


def select_ids(items: Sequence[Any], ids: Any) -> list[Any]:
    """``-T ids``: keep only the items whose ``id`` is listed (a list or a comma-separated string), in bank order;
    all of them when ``ids`` is empty. An id that is not among ``items`` is a one-line ValueError."""
    wanted = str_list(ids, "ids")
    if not wanted:
        return list(items)
    unknown = sorted(set(wanted) - {i.id for i in items})
    if unknown:
        raise ValueError(f"ids: not among the selected items: {', '.join(unknown)}")
    keep = set(wanted)
    return [i for i in items if i.id in keep]
