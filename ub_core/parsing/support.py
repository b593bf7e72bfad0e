"""Support checks: does a parsed number lie in a distribution's support (``check_support``).

Part of :mod:`ub_core.parsing` (see its docstring for the decisions every parser shares)."""

from __future__ import annotations

import math

from .text import Parsed, _guarded, _snip
from .tokens import _TOO_LARGE

# --------------------------------------------------------------------------------------------------------------
# Support checks
# --------------------------------------------------------------------------------------------------------------


def _fmt(x: float) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return f"{x:.12g}"


@_guarded
def check_support(
    value: float,
    *,
    integer: bool = False,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> Parsed:
    """Validate a parsed number against a distribution's support; ``value`` is the (possibly rounded) float.

    * The value must be a finite real number (bools and strings are refused).
    * ``integer=True``: the value must lie within ``1e-9 * max(1, |value|)`` of an integer; the rounded
      integer is returned as a float (``2.0000000001`` -> ``2.0``).
    * ``low`` / ``high`` bound the support, inclusive by default; reasons read like
      ``"value -2 below support minimum 0"`` or ``"value 1 not below exclusive support maximum 1"``.
    """
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes)):
        return Parsed.failure(f"expected a number, got {type(value).__name__}")
    try:
        v = float(value)
    except OverflowError:  # an int beyond the float range
        return Parsed.failure(f"{_TOO_LARGE}: {type(value).__name__} of {_snip(value, 20)}")
    except (TypeError, ValueError):
        return Parsed.failure(f"expected a number, got {type(value).__name__}")
    if not math.isfinite(v):
        return Parsed.failure(f"value {v} is not finite")
    if integer:
        r = round(v)
        if abs(v - r) > 1e-9 * max(1.0, abs(v)):
            return Parsed.failure(f"value {_fmt(v)} is not an integer")
        v = float(r)
    bounds: list[tuple[float, bool, bool]] = []
    for bound, inclusive, is_low in ((low, low_inclusive, True), (high, high_inclusive, False)):
        if bound is None:
            continue
        try:
            b = float(bound)
        except (TypeError, ValueError, OverflowError):
            return Parsed.failure(f"invalid support bound {_snip(bound) if isinstance(bound, int) else repr(bound)}")
        if math.isnan(b):
            return Parsed.failure("invalid support bound nan")
        bounds.append((b, bool(inclusive), is_low))
    for b, inclusive, is_low in bounds:
        if is_low:
            if inclusive and v < b:
                return Parsed.failure(f"value {_fmt(v)} below support minimum {_fmt(b)}")
            if not inclusive and v <= b:
                return Parsed.failure(f"value {_fmt(v)} not above exclusive support minimum {_fmt(b)}")
        else:
            if inclusive and v > b:
                return Parsed.failure(f"value {_fmt(v)} above support maximum {_fmt(b)}")
            if not inclusive and v >= b:
                return Parsed.failure(f"value {_fmt(v)} not below exclusive support maximum {_fmt(b)}")
    return Parsed.success(v)
