"""Inspect metrics shared by the ub tasks."""

from __future__ import annotations

import math

from inspect_ai.scorer import Metric, SampleScore, metric

__all__ = ["nan_mean", "nan_stderr"]


def _finite_values(scores: list[SampleScore]) -> list[float]:
    out = []
    for s in scores:
        try:
            v = s.score.as_float()
        except (TypeError, ValueError):
            continue
        if not math.isnan(v):
            out.append(v)
    return out


@metric
def nan_mean() -> Metric:
    """Mean over the samples where the value is defined; NaN when none is. NaN marks an undefined value: argmax
    accuracy without a unique mode, a behaviour that does not apply, an unparseable odds reply (seed 004's MAE is
    over answered questions). The same rule as lm-eval's ``nanmean``."""

    def compute(scores: list[SampleScore]) -> float:
        vals = _finite_values(scores)
        return sum(vals) / len(vals) if vals else float("nan")

    return compute


@metric
def nan_stderr() -> Metric:
    """Standard error of :func:`nan_mean`: sample standard deviation (n - 1) / sqrt(n); NaN for n < 2."""

    def compute(scores: list[SampleScore]) -> float:
        vals = _finite_values(scores)
        n = len(vals)
        if n < 2:
            return float("nan")
        m = sum(vals) / n
        return math.sqrt(sum((v - m) ** 2 for v in vals) / (n - 1) / n)

    return compute
