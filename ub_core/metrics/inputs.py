"""Checked metric inputs (samples of values, positive integers) and the constants every KS@N computation shares
(methods, support kinds, default Ns).

Part of :mod:`ub_core.metrics`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["KS_METHODS", "SUPPORTS", "DEFAULT_NS"]

#: ``ks_at_n`` methods: ``paper`` reproduces the published dispatch, ``exact`` uses the exact permutation p-value.
KS_METHODS: tuple[str, ...] = ("paper", "exact")
#: Support kinds of :mod:`ub_core.distributions`; all but ``continuous`` produce ties and get the permutation test.
SUPPORTS: tuple[str, ...] = ("continuous", "discrete", "categorical", "permutation", "mixed")
DEFAULT_NS: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100)

_LN2 = math.log(2.0)


# ============================================================================================ input helpers

def _sample(x: Any, name: str, *, finite: bool = False) -> np.ndarray:
    """A non-empty 1-D array of orderable values (numbers, or strings for the KS functions); NaN rejected."""
    arr = np.asarray(x)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers (or only strings)") from None
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind in "fc":
        if arr.dtype.kind == "c":
            raise ValueError(f"{name} must be real, got complex values")
        if finite and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinite values")
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN")
    elif finite and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be numeric")
    elif arr.dtype.kind not in "iuUS":
        raise ValueError(f"{name} has unsupported dtype {arr.dtype}")
    return arr


def _common_kind(a: np.ndarray, b: np.ndarray) -> None:
    if (a.dtype.kind in "US") != (b.dtype.kind in "US"):
        raise ValueError("both samples must be numeric, or both strings")


def _cumulative_counts(a: np.ndarray, b: np.ndarray, *, b_sorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative counts (A_k, B_k) of a and b at or below each distinct pooled value, in increasing order.

    The two sorted samples are merged with a stable sort (two runs: linear time), and the a-labels are counted
    up to the last point of each tie block.
    """
    _common_kind(a, b)
    pooled = np.concatenate([np.sort(a), b if b_sorted else np.sort(b)])
    order = np.argsort(pooled, kind="stable")
    xs = pooled[order]
    last = np.flatnonzero(xs[1:] != xs[:-1])
    block_end = np.empty(last.size + 1, dtype=np.int64)
    block_end[:-1] = last
    block_end[-1] = xs.size - 1
    cum_a = np.cumsum(order < a.size)[block_end].astype(np.int64)
    return cum_a, block_end + 1 - cum_a


def _positive_int(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)
