"""The vocabulary of metric keys: the one parser (:func:`split_key`) and the one formatter (:func:`per_n_key`) of
per-N keys such as ``ks@100`` and ``p_pass@20``. A leaf module (it imports nothing of ours), so that the metric
functions in :mod:`ub_core.metrics` and the spec in :mod:`ub_core.metric_spec` use the same two functions;
``tests/generic/test_metric_keys.py`` keeps every other module from building or parsing such keys by hand.
"""

from __future__ import annotations

import re

__all__ = ["split_key", "per_n_key", "per_n_pattern", "key_matches"]

#: N of a per-N key: ASCII digits without a leading zero (``str.isdigit`` also takes ``"１００"`` and ``"²"``)
_N_TEXT = re.compile(r"[1-9][0-9]*", re.ASCII)


def split_key(key: str) -> tuple[str, int | None]:
    """The one parser of metric keys: ``"ks@100"`` -> ``("ks", 100)``, ``"p_pass@20"`` -> ``("p_pass", 20)``, a key
    that is not per-N -> ``(key, None)``. A per-N key is ``<prefix>@<N>``, N a positive integer written in ASCII
    digits without a leading zero: ``ks@0100``, ``ks@１００`` (full-width) and ``ks@²`` are not per-N keys."""
    head, sep, n = str(key).rpartition("@")
    if sep and head and _N_TEXT.fullmatch(n):
        return head, int(n)
    return str(key), None


def per_n_key(prefix: str, n: int) -> str:
    """The one formatter of per-N keys: ``per_n_key("ks", 100) == "ks@100"``."""
    return f"{prefix}@{int(n)}"


def per_n_pattern(prefix: str) -> str:
    """The pattern that stands for ``prefix``'s key at every N: ``per_n_pattern("ks") == "ks@*"``."""
    return f"{prefix}@*"


def key_matches(key: str, pattern: str) -> bool:
    """``key`` is ``pattern`` itself, or ``pattern`` is :func:`per_n_pattern` of ``key``'s prefix and ``key`` is a
    per-N key (``key_matches("ks@20", "ks@*")``; ``"ks@0100"`` and ``"ks@x"`` match no pattern)."""
    if key == pattern:
        return True
    head, sep, star = pattern.rpartition("@")
    if not (sep and star == "*"):
        return False
    prefix, n = split_key(key)
    return n is not None and prefix == head
