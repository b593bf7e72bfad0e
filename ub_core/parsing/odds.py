"""Readers of the "What are the odds" replies: a percentile (0-100) and a probability (0-1).

Part of :mod:`ub_core.parsing`; the odds metrics (:mod:`ub_core.metrics.odds`) score what these read."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .numbers import parse_number
from .region import extract_answer
from .text import Parsed

__all__ = ["parse_percentile", "parse_probability"]


def parse_percentile(text: Any):
    """A percentile reply (0-100): ``"37"``, ``"37%"``, ``"37th"``, ``"{37.5}"``, ``"<answer>37th</answer>"``.
    Out-of-range and unreadable replies are failures with a one-line reason."""
    if isinstance(text, (int, float, np.integer, np.floating)) and not isinstance(text, bool):
        res = Parsed.success(float(text)) if math.isfinite(float(text)) else Parsed.failure("non-finite value")
    else:
        res = parse_number(text)
    if not res.ok:
        return res
    v = float(res.value)
    if not 0.0 <= v <= 100.0:
        return Parsed.failure(f"percentile {v:g} outside 0-100")
    return Parsed.success(v)


def parse_probability(text: Any):
    """A probability reply (0-1). A value written with a percent sign (``"35%"``) is read as a percentage
    (0.35); other values outside 0-1 are failures."""
    if isinstance(text, (int, float, np.integer, np.floating)) and not isinstance(text, bool):
        res = Parsed.success(float(text)) if math.isfinite(float(text)) else Parsed.failure("non-finite value")
        percent = False
    else:
        res = parse_number(text)
        region = extract_answer(text) if isinstance(text, str) else None
        percent = "%" in (region or "") or (isinstance(text, str) and "%" in text and region is None)
    if not res.ok:
        return res
    v = float(res.value)
    if percent and 0.0 <= v <= 100.0:
        v /= 100.0
    if not 0.0 <= v <= 1.0:
        return Parsed.failure(f"probability {v:g} outside 0-1")
    return Parsed.success(v)
