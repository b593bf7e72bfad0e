"""``ub compare``'s reading: two runs from files (Inspect logs, lm-eval output, any mix), compared problem by problem
(:func:`ub_core.compare.compare_tables`). Reading belongs to the report; the comparison's statistics are pure
(:mod:`ub_core.metrics.paired`), so nothing of ub_core imports the report back (no import circle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..compare import CompareError, Comparison, compare_tables
from .readers import load_inputs

__all__ = ["compare_runs"]


def compare_runs(a: str | Path | Sequence[str | Path], b: str | Path | Sequence[str | Path],
                 metrics: Sequence[str] | None = None, alpha: float = 0.05,
                 power: float = 0.8) -> tuple[list[Comparison], list[str]]:
    """Read the runs at ``a`` and ``b`` (files or folders: Inspect logs, lm-eval output) and compare them
    (:func:`ub_core.compare.compare_tables`, at level ``alpha``, the MDE at ``power``). Returns the comparisons and
    the inputs each side skipped (one line each)."""
    def read(paths, name):
        paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        table = load_inputs(paths)
        if not table.records:
            reasons = "; ".join(str(s) for s in table.skips[:2]) or "nothing read"
            raise CompareError(f"{name}: no scored samples in {', '.join(map(str, paths))} ({reasons})")
        return table

    ta, tb = read(a, "A"), read(b, "B")
    skipped = [f"A: {s}" for s in ta.skips] + [f"B: {s}" for s in tb.skips]
    return compare_tables(ta, tb, metrics, alpha=alpha, power=power), skipped
