"""Lehmer codes of permutations and the normalised first coordinate Z1 that shuffling problems are scored on
(UnpredictaBench, appendix C.1).

Part of :mod:`ub_core.metrics`.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["lehmer", "lehmer_normalized", "lehmer_z1", "lehmer_z1_many"]

# ============================================================================================ Lehmer codes

def _as_sequence(perm: Any) -> list:
    if isinstance(perm, np.ndarray):
        if perm.ndim != 1:
            raise ValueError(f"a permutation must be one-dimensional, got shape {perm.shape}")
        return perm.tolist()
    if isinstance(perm, (str, bytes)) or not isinstance(perm, Iterable):
        raise ValueError("a permutation must be a sequence of comparable items")
    return list(perm)


def _check_distinct(seq: list) -> None:
    try:
        distinct = len(set(seq)) == len(seq)
    except TypeError:
        srt = sorted(seq)
        distinct = all(x != y for x, y in zip(srt, srt[1:]))
    if not distinct:
        raise ValueError("not a permutation: an item is repeated")


def lehmer(perm: Any) -> tuple[int, ...]:
    """Lehmer code (UnpredictaBench, appendix C.1, eq. 2): ``L_i = #{j > i : perm_j < perm_i}``, L_i in {0..n-i}.

    ``perm`` is any sequence of distinct, mutually comparable items (indices 0..n-1, ranks, numbers); a repeated
    item raises ValueError. The code is a bijection from orderings of n items to {0..n-1} x ... x {0}.
    """
    seq = _as_sequence(perm)
    _check_distinct(seq)
    n = len(seq)
    return tuple(sum(1 for k in range(i + 1, n) if seq[k] < seq[i]) for i in range(n))


def lehmer_normalized(perm: Any) -> tuple[float, ...]:
    """Normalised Lehmer code (UnpredictaBench, appendix C.1, eq. 3): ``Z_i = L_i / (n - i)`` for i < n, ``Z_n = 0``."""
    code = lehmer(perm)
    n = len(code)
    return tuple(code[i] / (n - 1 - i) if i < n - 1 else 0.0 for i in range(n))


def lehmer_z1(perm: Any) -> float:
    """First normalised Lehmer coordinate ``Z_1 = L_1 / (n - 1)`` (UnpredictaBench, appendix C.1); 0.0 when n == 1."""
    seq = _as_sequence(perm)
    if not seq:
        raise ValueError("a permutation must have at least one item")
    _check_distinct(seq)
    n = len(seq)
    if n == 1:
        return 0.0
    first = seq[0]
    return sum(1 for x in seq[1:] if x < first) / (n - 1)


def lehmer_z1_many(perms: Any) -> np.ndarray:
    """Vectorised :func:`lehmer_z1` over the rows of an (m, n) array; returns m floats (zeros when n == 1)."""
    arr = np.asarray(perms)
    if arr.ndim != 2:
        raise ValueError(f"perms must be a 2-D array (m, n), got shape {arr.shape}")
    m, n = arr.shape
    if n == 0:
        raise ValueError("a permutation must have at least one item")
    if m == 0:
        return np.zeros(0)
    srt = np.sort(arr, axis=1)
    if n > 1 and np.any(srt[:, 1:] == srt[:, :-1]):
        raise ValueError("not a permutation: an item is repeated in some row")
    if n == 1:
        return np.zeros(m)
    return np.count_nonzero(arr[:, 1:] < arr[:, :1], axis=1) / (n - 1)
