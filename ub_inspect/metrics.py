"""Inspect metrics shared by the ub tasks."""

from __future__ import annotations

import math

from inspect_ai.scorer import Metric, SampleScore, grouped, mean, metric, stderr

from ub_core.metric_spec import is_ks_key

__all__ = ["nan_mean", "nan_stderr", "grid_rate", "total", "spec_metrics"]


def _finite_pairs(scores: list[SampleScore], cluster: str | None = None) -> list[tuple[float, str]]:
    out = []
    for s in scores:
        try:
            v = s.score.as_float()
        except (TypeError, ValueError):
            continue
        if math.isfinite(v):  # NaN marks an undefined value; +-inf (an old log's WDZ) never enters a mean
            label = (s.sample_metadata or {}).get(cluster, s.sample_id) if cluster else s.sample_id
            out.append((v, str(label)))
    return out


def _finite_values(scores: list[SampleScore]) -> list[float]:
    return [v for v, _ in _finite_pairs(scores)]


@metric
def nan_mean() -> Metric:
    """Mean over the samples where the value is defined; NaN when none is. NaN marks an undefined value: argmax
    accuracy without a unique mode, a behaviour that does not apply, an unparseable odds reply (the odds paper's MAE is
    over answered questions). The same rule as lm-eval's ``nanmean``."""

    def compute(scores: list[SampleScore]) -> float:
        vals = _finite_values(scores)
        return sum(vals) / len(vals) if vals else float("nan")

    return compute


@metric
def total() -> Metric:
    """Sum over the samples where the value is defined (0.0 when none is): a count when the values are 0/1 flags,
    e.g. the ksn scorer's ``wdz_undefined`` and ``constant`` (problems left out of the WDZ mean; problems with a
    collapsed, constant sample)."""

    def compute(scores: list[SampleScore]) -> float:
        return float(sum(_finite_values(scores)))

    return compute


@metric
def nan_stderr(cluster: str | None = None) -> Metric:
    """Standard error of :func:`nan_mean`: sample standard deviation (n - 1) / sqrt(n); NaN for n < 2.

    With ``cluster`` (a sample metadata key), the cluster-robust standard error
    :func:`ub_core.metrics.clustered_stderr` over the clusters that key names (the numeric-calibration paper clusters by option pair,
    the implicit-reasoning paper by scenario); NaN with fewer than two clusters."""

    def compute(scores: list[SampleScore]) -> float:
        pairs = _finite_pairs(scores, cluster)
        n = len(pairs)
        if n < 2:
            return float("nan")
        if cluster:
            from ub_core.metrics import clustered_stderr

            return clustered_stderr([v for v, _ in pairs], [c for _, c in pairs])
        vals = [v for v, _ in pairs]
        m = sum(vals) / n
        return math.sqrt(sum((v - m) ** 2 for v in vals) / (n - 1) / n)

    return compute


@metric
def grid_rate(behaviour: str) -> Metric:
    """Share of option-pair grids classified as ``behaviour`` (the numeric-calibration paper, Figure 3):
    :func:`ub_core.metrics.grid_behaviour_rates` over the ``behaviour_entry`` each calibration score carries in
    ``metadata["ub"]``; NaN when no item has a reference behaviour."""

    def compute(scores: list[SampleScore]) -> float:
        from ub_core.metrics import grid_behaviour_rates

        entries = [((s.score.metadata or {}).get("ub") or {}).get("behaviour_entry") for s in scores]
        rates, _ = grid_behaviour_rates(e for e in entries if e)
        value = rates.get(behaviour)
        return float("nan") if value is None else float(value)

    return compute


# ------------------------------------------------------------------------------------------------ from the spec

_AGGREGATIONS = {"mean": (mean, stderr), "nanmean": (nan_mean, nan_stderr), "total": (total, None)}


def _per_n(key: str) -> str | None:
    """``name@*`` for a per-N key ``name@N`` other than ``ks@N`` (``p_pass@100``), else None."""
    head, sep, n = key.partition("@")
    return f"{head}@*" if sep and n.isdigit() and head != "ks" else None


def spec_metrics(specs, cluster: str | None = None) -> list:
    """Inspect's metric dicts for a family's :mod:`ub_core.metric_spec` entries: each metric's aggregation, its
    standard error where the spec asks (clustered by the sample metadata key ``cluster`` for NaN-skipping means,
    where given), and the per-group ``grouped`` value (by ``MetricSpec.group``). The ``ks@N`` entries become one
    ``ks@*`` entry (and ``p_pass@N`` one ``p_pass@*``), so a run with other Ns (``-T ks_ns=``) reports those."""
    ks, rest = {}, {}
    for m in specs:
        if "inspect" not in m.adapters:
            continue
        head, err = _AGGREGATIONS[m.aggregation]
        fns = [head()]
        if m.stderr and err:
            fns.append(err(cluster=cluster) if cluster and err is nan_stderr else err())
        if m.per_category:
            fns.append(grouped(head(), m.group, all=False))
        if is_ks_key(m.key):
            ks["ks@*"] = fns
        elif _per_n(m.key):  # p_pass@N: one entry for any N, like ks@N
            rest[_per_n(m.key)] = fns
        else:
            rest[m.key] = fns
    return [d for d in (ks, rest) if d]
