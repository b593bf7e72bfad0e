"""Inspect metrics shared by the ub tasks, and the metric list of a family's scorer (:func:`spec_metrics`).

How a run's metrics reach the log and the terminal (Inspect 0.3.285, ``_eval/task/results.py``): a scorer's plain
metrics form its first score (named after the scorer), then each key of a dict-valued Score gets a score of its
own. Inspect shows the first metric of the first score as the run's score (``inspect view``, ``evals_df``'s
``score_headline_*``, the progress line), and prints every score in a grid four to a row. So the first plain
metric is :func:`headline`: the family's headline (``ub_core.metric_spec.headline``) with its standard error and
its value and standard error per category, under names short enough for 80 columns; then any run-level plain
metrics (retry rate); then one score per key with its mean and standard error. Per-category values of the other
keys are one ``groupby`` away in ``samples_df`` (:mod:`ub_inspect.analysis`), not in the terminal.
"""

from __future__ import annotations

import fnmatch
import math

from inspect_ai.scorer import Metric, SampleScore, mean, metric, stderr

from ub_core.metric_spec import headline as spec_headline
from ub_core.metric_spec import is_ks_key

from ._naming import registry_name

__all__ = ["nan_mean", "nan_stderr", "grid_rates", "totals", "headline", "grouped_summary", "spec_metrics"]


def _as_float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


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


@metric(name=registry_name("nan_mean"))
def nan_mean() -> Metric:
    """Mean over the samples where the value is defined; NaN when none is. NaN marks an undefined value: argmax
    accuracy without a unique mode, a behaviour that does not apply, an unparseable odds reply (the odds paper's MAE is
    over answered questions). The same rule as lm-eval's ``nanmean``."""

    def compute(scores: list[SampleScore]) -> float:
        vals = _finite_values(scores)
        return sum(vals) / len(vals) if vals else float("nan")

    return compute


@metric(name=registry_name("nan_stderr"))
def nan_stderr(cluster: str | None = None) -> Metric:
    """Standard error of :func:`nan_mean`: sample standard deviation (n - 1) / sqrt(n); NaN for n < 2
    (:func:`ub_core.metrics.clustered_stderr` with one cluster per sample).

    With ``cluster`` (a sample metadata key), the cluster-robust standard error
    :func:`ub_core.metrics.clustered_stderr` over the clusters that key names (the numeric-calibration paper clusters by option pair,
    the implicit-reasoning paper by scenario); NaN with fewer than two clusters."""

    def compute(scores: list[SampleScore]) -> float:
        return _mean_stderr(_finite_pairs(scores, cluster))[1]

    return compute


@metric(name=registry_name("totals"))
def totals(keys: list[str]) -> Metric:
    """``{key: sum of Score.value[key] over the samples where it is defined}`` for each of ``keys``: counts of 0/1
    flags, e.g. the ksn scorer's ``wdz_undefined`` and ``constant`` (problems left out of the WDZ mean; problems
    with a collapsed, constant sample)."""

    def compute(scores: list[SampleScore]):
        out = {}
        for key in keys:
            values = [_as_float(s.score.value.get(key)) for s in scores if isinstance(s.score.value, dict)]
            out[key] = float(sum(v for v in values if v is not None and math.isfinite(v)))
        return out

    return compute


@metric(name=registry_name("grid_rates"))
def grid_rates() -> Metric:
    """``{"grid_<b>": share of option-pair grids classified as behaviour b}`` (the numeric-calibration paper, Figure 3;
    lm-eval's ``grid_<b>``): :func:`ub_core.metrics.grid_behaviour_rates` over the ``behaviour_entry`` each
    calibration score carries in ``metadata["ub"]``; NaN for a behaviour when no item has a reference behaviour."""

    def compute(scores: list[SampleScore]):
        from ub_core.metric_spec import BEHAVIOURS
        from ub_core.metrics import grid_behaviour_rates

        entries = [((s.score.metadata or {}).get("ub") or {}).get("behaviour_entry") for s in scores]
        rates, _ = grid_behaviour_rates(e for e in entries if e)
        return {f"grid_{b}": float("nan") if rates.get(b) is None else float(rates[b]) for b in BEHAVIOURS}

    return compute


def _mean_stderr(pairs: list[tuple[float, str]]) -> tuple[float, float]:
    """Mean of the values and its standard error, cluster-robust over the labels
    (:func:`ub_core.metrics.clustered_stderr`; one label per sample gives the usual sd / sqrt(n)); NaN when
    there is no value (mean) or fewer than two clusters (standard error)."""
    from ub_core.metrics import clustered_stderr

    if not pairs:
        return float("nan"), float("nan")
    values = [v for v, _ in pairs]
    return sum(values) / len(values), clustered_stderr(values, [c for _, c in pairs])


def _headline_key(key: str, scores: list[SampleScore]) -> str:
    """``key`` itself, or for a pattern (``ks@*``) the matching value key with the largest N (a run's Ns are its
    options: the headline is KS@N at the largest N it ran)."""
    if "*" not in key:
        return key
    for s in scores:
        if isinstance(s.score.value, dict):
            found = [k for k in s.score.value if fnmatch.fnmatchcase(k, key)]
            if found:
                return max(found, key=lambda k: (int(k.rpartition("@")[2]) if k.rpartition("@")[2].isdigit() else -1, k))
    return key


def grouped_summary(name: str, cells: list[tuple[float, str, str | None]],
                    extra: dict | None = None) -> dict[str, float]:
    """``{name: mean, "stderr": SE, **extra, g: mean over group g, "g_stderr": SE within g, ...}`` over the cells
    ``(value, cluster label, group)`` with a finite value, groups in first-seen order (:func:`_mean_stderr`; a
    group None is in no group). A group named like another key is prefixed ``group_`` rather than overwriting it."""
    cells = [c for c in cells if math.isfinite(c[0])]
    m, se = _mean_stderr([(v, c) for v, c, _ in cells])
    out = {name: m, "stderr": se, **(extra or {})}
    by_group: dict[str, list[tuple[float, str]]] = {}
    for v, c, g in cells:
        if g is not None:
            by_group.setdefault(g, []).append((v, c))
    for g, pairs in by_group.items():
        label = g if g not in out else f"group_{g}"
        out[label], out[f"{label}_stderr"] = _mean_stderr(pairs)
    return out


@metric(name=registry_name("headline"))
def headline(key: str, group: str | None = "category", cluster: str | None = None) -> Metric:
    """The family's headline metric, first in the run's first score: ``{key: mean, "stderr": SE, g: mean over
    group g, "g_stderr": SE within g, ...}`` for each value g of the sample metadata ``group``
    (:func:`grouped_summary`).

    Mean over the samples where ``Score.value[key]`` is finite (NaN marks an undefined value, as in
    :func:`nan_mean`); SE = :func:`ub_core.metrics.clustered_stderr`, clustered by the sample metadata key
    ``cluster`` where given (the papers' clustered intervals), else by sample (sd / sqrt(n)). ``key`` may be a
    pattern (``ks@*``): the matching key with the largest N."""

    def compute(scores: list[SampleScore]):
        if not scores:  # the live display's first call
            return {}
        name = _headline_key(key, scores)
        cells = []
        for s in scores:
            value = s.score.value
            v = _as_float(value.get(name)) if isinstance(value, dict) else None
            if v is not None:
                meta = s.sample_metadata or {}
                cells.append((v, str(meta.get(cluster, s.sample_id) if cluster else s.sample_id),
                              str(meta.get(group, "unknown")) if group else None))
        return grouped_summary(name, cells)

    return compute


# ------------------------------------------------------------------------------------------------ from the spec

def _per_n(key: str) -> str | None:
    """``name@*`` for a per-N key ``name@N`` other than ``ks@N`` (``p_pass@100``), else None."""
    head, sep, n = key.partition("@")
    return f"{head}@*" if sep and n.isdigit() and head != "ks" else None


def spec_metrics(family: str, cluster: str | None = None, run_metrics: tuple = (), specs=None) -> list:
    """A family's scorer metrics from its :mod:`ub_core.metric_spec` entries (``specs``: the family's entries
    unless given), in the order Inspect shows them (module docstring).

    The run's first score: :func:`headline` on the family's headline key (grouped like that key, clustered by the
    sample metadata key ``cluster`` where given), ``run_metrics`` (plain metrics over whole runs: the retry rate,
    the grid rates), and :func:`totals` of the counted keys (aggregation ``total``). Then one score per key:
    Inspect's ``mean`` and, where the spec asks, ``stderr`` (clustered by ``cluster`` where given). Inspect leaves
    a key's NaN values out of both (it counts them as unscored samples), which is the spec's ``nanmean``. The
    ``ks@N`` entries become one ``ks@*`` entry (and ``p_pass@N`` one ``p_pass@*``), so a run with other Ns
    (``-T ks_ns=``) reports those, and the headline is the largest N run."""
    from ub_core.metric_spec import metric_specs

    top = spec_headline(family)
    top_key = "ks@*" if is_ks_key(top.key) else (_per_n(top.key) or top.key)
    ks, rest, counted = {}, {}, []
    for m in (metric_specs(family) if specs is None else specs):
        if "inspect" not in m.adapters:
            continue
        if m.aggregation == "total":
            counted.append(m.key)
            continue
        fns = [mean()]
        if m.stderr:
            fns.append(stderr(cluster=cluster) if cluster else stderr())
        if is_ks_key(m.key):
            ks["ks@*"] = fns
        elif _per_n(m.key):  # p_pass@N: one entry for any N, like ks@N
            rest[_per_n(m.key)] = fns
        else:
            rest[m.key] = fns
    plain = [headline(top_key, group=top.group if top.per_category else None, cluster=cluster), *run_metrics]
    if counted:
        plain.append(totals(counted))
    return [*plain, *(d for d in (ks, rest) if d)]
