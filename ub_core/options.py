"""Checking the options of a ub task, one set of rules for every front door: Inspect's ``-T`` options
(:mod:`ub_inspect._options` wraps these helpers so that Inspect prints their errors as one line), lm-eval's
``--metadata`` (:func:`check_metadata`, called by every ub lm-eval ``custom_dataset`` hook) and ``ub``'s flags.

Values arrive untyped (Inspect passes ``-T`` values through ``yaml.safe_load``, lm-eval ``--metadata`` through
``json.loads``): ``ks_ns=1,10,100`` may be a string, ``n_samples`` an int or a string. Every helper names the option
and what it expects and raises :class:`OptionValueError` (a ValueError) with one line.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

__all__ = ["OptionValueError", "integer", "positive_int", "real", "int_list", "str_list", "choice",
           "UB_OPTION_NAMES", "MODEL_ARG_NAMES", "check_metadata", "threshold", "ks_method"]


class OptionValueError(ValueError):
    """A bad task option: its message is one line naming the option and what it expects."""


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
        raise OptionValueError(f"option {name}: expected {expected}, got {value!r}")
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
        raise OptionValueError(f"option {name}: expected {expected}, got {value!r}")
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
        raise OptionValueError(f"option {name}: needs at least one value")
    return tuple(out)


def str_list(value: Any, name: str) -> tuple[str, ...] | None:
    """``"a,b"``, ``["a", "b"]`` or ``None`` -> ``("a", "b")`` / ``None``."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return tuple(x.strip() for x in value.split(",") if x.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(x).strip() for x in value)
    raise OptionValueError(f"option {name}: expected a name or a comma-separated list, got {value!r}")


def choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    v = str(value)
    if v not in allowed:
        raise OptionValueError(f"option {name}: must be one of {', '.join(allowed)}, got {value!r}")
    return v


def boolean(value: Any, name: str) -> bool:
    """A switch: ``true``/``false`` (YAML gives a bool; ``1``/``0``, ``yes``/``no`` as text too)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise OptionValueError(f"option {name}: true or false, got {value!r}")


def threshold(value: Any, name: str = "threshold") -> float:
    """The KS p-value threshold: a number in (0, 1) (UnpredictaBench: 1e-4)."""
    return real(value, name, 0, 1, low_open=True, high_open=True)


def ks_method(value: Any, name: str = "method") -> str:
    """The KS test's method (:data:`ub_core.metrics.KS_METHODS`: ``paper`` or ``exact``)."""
    from .metrics import KS_METHODS

    return choice(value, name, KS_METHODS)


#: Every option name of a ub task in either framework (Inspect's ``-T`` options of the ub tasks; lm-eval's
#: ``--metadata`` keys). lm-eval hands a task its ``--metadata`` and its ``--model_args`` as one dict, so a hook
#: cannot refuse every key it does not take (``pretrained=`` is the model's); it refuses a ub option name that
#: its task family does not take (``categories``, ``n_samples``: Inspect's, which lm-eval would drop silently).
#: ``tests/frameworks/test_inspect_options.py`` checks that every Inspect ub task's options are listed here.
UB_OPTION_NAMES = frozenset({
    "bank", "bbh", "categories", "chat_template", "context", "convention", "dataset", "delimiter", "draws",
    "edition", "end_of_answer", "enumeration", "families", "ground_truth", "gt_size", "ids", "limit_per_category",
    "list_size", "max_attempts", "max_missing", "max_requests", "max_tokens", "method", "mmlu", "n_runs",
    "n_samples", "replies", "seed", "shot_type", "shots", "size", "source", "split", "subtask", "subtasks", "task",
    "temperature", "threshold", "top_k", "value_source", "ks_ns", "category", "epochs", "limit", "mode", "kl_floor",
    "cells", "target_ks_width", "target_p_pass_width", "equal_counts",
})


#: Option names that are --model_args of some lm-eval models too (``seed=`` of a vLLM or ub-openai model): lm-eval
#: mixes them into the metadata, so a hook cannot tell them from a misplaced ub option and lets them pass.
MODEL_ARG_NAMES = frozenset({"seed", "temperature", "max_tokens", "chat_template", "tokenizer", "pretrained",
                             "trust_remote_code"})


def check_metadata(task: str, metadata: Mapping[str, Any], accepted: Mapping[str, Callable[[Any, str], Any] | None],
                   ) -> dict[str, Any]:
    """lm-eval's ``--metadata`` for the ub task family ``task``, checked as Inspect checks ``-T`` options:
    ``accepted`` maps each option the family takes to its checker (``None``: taken as it is, checked by the hook),
    and the checked values are returned. A ub option the family does not take (:data:`UB_OPTION_NAMES`) is an
    :class:`OptionValueError` naming the ones it does; other keys (``--model_args``' ``pretrained=``, lm-eval's
    ``version``) pass untouched. ``None`` values are left as they are (the hook's default)."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if key in accepted:
            check = accepted[key]
            try:
                out[key] = value if check is None or value is None else check(value, key)
            except OptionValueError as exc:
                raise OptionValueError(f"{task}: {exc}") from None
        elif key in UB_OPTION_NAMES and key not in MODEL_ARG_NAMES:
            raise OptionValueError(f"{task}: option {key} is not an option of these lm-eval tasks (it would be "
                                   f"ignored); they take {', '.join(sorted(accepted))}")
    return out
