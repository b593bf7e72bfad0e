"""Inspect metrics shared by the ub tasks, and the metric list of an eval family's scorer (:func:`spec_metrics`).

How a run's metrics reach the log and the terminal (Inspect 0.3.285, ``_eval/task/results.py`` and
``_display/core/results.py``): a scorer's plain metrics form one score named after the scorer (a metric that
returns a dict gives one entry per key, named as the key), and each key of a dict-valued Score given metrics of its
own becomes a further score. Inspect shows the first metric of the first score as the run's score (``inspect
view``, ``evals_df``'s ``score_headline_*``, the progress line) and prints the scores four to a row, sharing out
any excess width equally, so that long key names in a row cut every name in it. Hence every ub scorer declares
plain metrics only (one score, one column of ``name value`` lines that fits 80 columns): first :func:`headline`,
the eval family's headline (``ub_core.metric_spec.headline``) with its ``stderr`` and its value and standard error per
category; then :func:`means`, every other key's mean with ``<key>_stderr`` (lm-eval's naming); then run-level
metrics (retry rate, grid rates) and counts (:func:`totals`). Per-category values of the other keys are one
``groupby`` away in ``samples_df`` (:mod:`ub_inspect.analysis`).
"""

from __future__ import annotations

import math

from inspect_ai.scorer import Metric, SampleScore, metric

from ub_core.metric_spec import headline as spec_headline
from ub_core.metric_keys import key_matches, per_n_pattern, split_key
from ub_core.metric_spec import metric_specs
from ub_core.run_metrics import bank_families

from ._naming import registry_name

__all__ = ["nan_mean", "nan_stderr", "grid_rates", "totals", "headline", "means", "grouped_summary", "distribution_se",
           "spec_metrics"]


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
    :func:`ub_core.metrics.clustered_stderr` over the clusters that key names (the numeric-calibration paper clusters by
    option pair, the implicit-reasoning items by scenario, ours); below ``MIN_CLUSTERS`` clusters the unclustered
    error."""

    def compute(scores: list[SampleScore]) -> float:
        return _mean_stderr(_finite_pairs(scores, cluster))[1]

    return compute


@metric(name=registry_name("totals"))
def totals(keys: list[str] | None = None, eval_family: str | None = None, bank: str | None = None) -> Metric:
    """``{key: sum of Score.value[key] over the samples where it is defined}`` for each of ``keys`` (or each flag
    of ``eval_family``'s spec, read when the metric is computed): counts of 0/1 flags, e.g. the ksn scorer's
    ``wdz_undefined`` and ``constant`` (problems left out of the WDZ mean; problems with a collapsed, constant
    sample)."""

    def compute(scores: list[SampleScore]):
        out = {}
        for key in (keys if eval_family is None else _spec_patterns(eval_family, bank)[2]):
            values = [_as_float(s.score.value.get(key)) for s in scores if isinstance(s.score.value, dict)]
            out[key] = float(sum(v for v in values if v is not None and math.isfinite(v)))
        return out

    return compute


@metric(name=registry_name("grid_rates"))
def grid_rates() -> Metric:
    """``{"grid_<b>": share of option-pair grids classified as behaviour b}`` (the numeric-calibration paper, Figure 3;
    lm-eval's ``grid_<b>``): :func:`ub_core.metrics.grid_behaviour_rates` over the ``behaviour_entry`` each
    calibration score carries in ``metadata["ub"]``; NaN for a behaviour when no item has a reference behaviour.
    ``grid_undetermined``: the share of grids too unbalanced to label (a limited run; see that function)."""

    def compute(scores: list[SampleScore]):
        from ub_core.metric_spec import BEHAVIOURS
        from ub_core.metrics import UNDETERMINED, grid_behaviour_rates

        entries = [((s.score.metadata or {}).get("ub") or {}).get("behaviour_entry") for s in scores]
        rates, _ = grid_behaviour_rates(e for e in entries if e)
        return {f"grid_{b}": float("nan") if rates.get(b) is None else float(rates[b])
                for b in BEHAVIOURS + (UNDETERMINED,)}

    return compute


@metric(name=registry_name("distribution_se"))
def distribution_se(key: str, group: str = "context") -> Metric:
    """The odds paper's uncertainty (Tables 1 and 2, "± Standard Error (σM)"), beside the per-sample ``stderr``:
    ``{"dist_se": SE across the run's distributions, "<g>_dist_se": SE across the distributions of group g, ...}``,
    each the standard error (ddof 1) of the distributions' means of ``Score.value[key]``
    (:func:`ub_core.metrics.across_distributions`), the distribution being the sample metadata ``distribution`` and
    the groups the values of the sample metadata ``group`` (Table 2's domains and framings); a group is reported
    only when the run has more than one. NaN with fewer than two distributions."""

    def compute(scores: list[SampleScore]):
        from ub_core.metrics import across_distributions

        if not scores:  # the live display's first call
            return {}
        overall: dict[str, list] = {}
        groups: dict[str, dict[str, list]] = {}
        for s in scores:
            value = s.score.value
            v = _as_float(value.get(key)) if isinstance(value, dict) else None
            meta = s.sample_metadata or {}
            dist = str(meta.get("distribution", s.sample_id))
            overall.setdefault(dist, []).append(v)
            groups.setdefault(str(meta.get(group, "unknown")), {}).setdefault(dist, []).append(v)
        out = {"dist_se": across_distributions(overall)["se"]}
        if len(groups) > 1:
            for g, by_dist in groups.items():
                out[f"{g}_dist_se"] = across_distributions(by_dist)["se"]
        return out

    return compute


def _mean_stderr(pairs: list[tuple[float, str]]) -> tuple[float, float]:
    """Mean of the values and its standard error, cluster-robust over the labels
    (:func:`ub_core.metrics.clustered_stderr`; one label per sample gives the usual sd / sqrt(n)); NaN when
    there is no value (mean) or fewer than two clusters (standard error)."""
    from ub_core.metrics import clustered_stderr

    if not pairs:
        return float("nan"), float("nan")
    values = [v for v, _ in pairs]
    # fsum: exactly rounded, so the mean does not depend on the order the samples finished in
    return math.fsum(values) / len(values), clustered_stderr(values, [c for _, c in pairs])


def _headline_key(key: str, scores: list[SampleScore]) -> str:
    """``key`` itself, or for a pattern (``ks@*``) the matching value key with the largest N (a run's Ns are its
    options: the headline is KS@N at the largest N it ran)."""
    if "*" not in key:
        return key
    for s in scores:
        if isinstance(s.score.value, dict):
            found = [k for k in s.score.value if key_matches(k, key) and split_key(k)[1] is not None]
            if found:
                return max(found, key=lambda k: split_key(k)[1])
    return key


def grouped_summary(name: str, cells: list[tuple[float, str, str | None]],
                    extra: dict | None = None, strata: bool = False) -> dict[str, float]:
    """``{name: mean, "stderr": SE, **extra, g: mean over group g, "g_stderr": SE within g, ...}`` over the cells
    ``(value, cluster label, group)`` with a finite value, groups in first-seen order (:func:`_mean_stderr`; a
    group None is in no group). A group named like another key is prefixed ``group_`` rather than overwriting it.

    With ``strata`` the groups are fixed strata (the option-logprob datasets): the pooled SE is
    :func:`ub_core.metrics.stratified_stderr` of the groups' SEs, as lm-eval's group standard error, rather than
    one clustered SE over all cells."""
    cells = [c for c in cells if math.isfinite(c[0])]
    m, se = _mean_stderr([(v, c) for v, c, _ in cells])
    out = {name: m, "stderr": se, **(extra or {})}
    by_group: dict[str, list[tuple[float, str]]] = {}
    for v, c, g in cells:
        if g is not None:
            by_group.setdefault(g, []).append((v, c))
    sizes, errors = [], []
    for g, pairs in by_group.items():
        label = g if g not in out else f"group_{g}"
        out[label], out[f"{label}_stderr"] = _mean_stderr(pairs)
        sizes.append(len(pairs))
        errors.append(out[f"{label}_stderr"])
    if strata and by_group:
        from ub_core.metrics import stratified_stderr

        out["stderr"] = stratified_stderr(errors, sizes)
    return out


@metric(name=registry_name("headline"))
def headline(key: str, group: str | None = "category", cluster: str | None = None, strata: bool = False) -> Metric:
    """The eval family's headline metric, first in the run's first score: ``{key: mean, "stderr": SE, g: mean over
    group g, "g_stderr": SE within g, ...}`` for each value g of the sample metadata ``group``
    (:func:`grouped_summary`).

    Mean over the samples where ``Score.value[key]`` is finite (NaN marks an undefined value, as in
    :func:`nan_mean`); SE = :func:`ub_core.metrics.clustered_stderr`, clustered by the sample metadata key
    ``cluster`` where given (the papers' clustered intervals), else by sample (sd / sqrt(n)). ``key`` may be a
    pattern (``ks@*``): the matching key with the largest N. ``left_out`` beside the mean counts the samples
    without a finite value (no problem leaves the headline silently; why, the spec's ``why_undefined``, is in the
    eval's README). ``strata``: the groups are fixed strata, the pooled SE is stratified (:func:`grouped_summary`)."""

    def compute(scores: list[SampleScore]):
        if not scores:  # the live display's first call
            return {}
        name = _headline_key(key, scores)
        cells = []
        for s in scores:
            value = s.score.value
            v = _as_float(value.get(name)) if isinstance(value, dict) else None
            meta = s.sample_metadata or {}
            cells.append((math.nan if v is None else v, str(meta.get(cluster, s.sample_id) if cluster else s.sample_id),
                          str(meta.get(group, "unknown")) if group else None))
        left_out = sum(not math.isfinite(v) for v, _, _ in cells)
        return grouped_summary(name, cells, extra={"left_out": float(left_out)}, strata=strata)

    return compute


@metric(name=registry_name("means"))
def means(keys: list[str] | None = None, with_stderr: list[str] | None = None, cluster: str | None = None,
          headline: str | None = None, eval_family: str | None = None, strata: str | None = None,
          bank: str | None = None) -> Metric:
    """``{key: mean, "<key>_stderr": SE, ...}`` for each score key (a pattern such as ``ks@*`` stands for the
    matching value keys, in the order the Score gives them), the standard error only for the keys (or patterns)
    in ``with_stderr``; the key ``headline`` names (at its largest N, as :func:`headline` resolves it) is left out,
    the run's score leads with it. Means and standard errors as :func:`headline`'s: over the samples where the
    value is finite, SE clustered by the sample metadata key ``cluster`` where given. With ``eval_family``, the keys
    and ``with_stderr`` are that spec's, read when the metric is computed (a metric registered after this module
    was imported is there: :func:`ub_core.metric_spec.register_metric`).

    ``strata`` (a sample metadata key, the option-logprob datasets' ``category``): each key is also reported per
    stratum, ``<stratum>_<key>`` and ``<stratum>_<key>_stderr`` (the papers report each dataset separately), and
    the pooled SE is stratified (:func:`grouped_summary`).

    ``<key>_left_out`` beside a mean counts the samples whose value is undefined (NaN: the spec's
    ``why_undefined``, e.g. a KS distance of a valid mass below 1e-3), where any is; per-N keys are counted by
    the headline's ``left_out``."""

    def compute(scores: list[SampleScore]):
        if not scores:  # the live display's first call
            return {}
        wanted, stderr_of = (keys or [], with_stderr or []) if eval_family is None else \
            _spec_patterns(eval_family, bank)[:2]
        # every key any score has, in first-seen order (a key the first score lacks, e.g. a problem that failed
        # before it was scored, is still averaged over the scores that have it)
        seen = dict.fromkeys(k for s in scores if isinstance(s.score.value, dict) for k in s.score.value)
        skip = _headline_key(headline, scores) if headline else None
        out: dict[str, float] = {}
        for pattern in wanted:
            for key in (k for k in seen if key_matches(k, pattern)):
                if key == skip or key in out:
                    continue
                cells = []
                for s in scores:
                    v = _as_float(s.score.value.get(key)) if isinstance(s.score.value, dict) else None
                    if v is not None:
                        meta = s.sample_metadata or {}
                        cells.append((v, str(meta.get(cluster, s.sample_id) if cluster else s.sample_id),
                                      str(meta.get(strata, "unknown")) if strata else None))
                summary = grouped_summary(key, cells, strata=bool(strata))
                out[key] = summary[key]
                undefined = sum(not math.isfinite(c[0]) for c in cells)
                if undefined and split_key(key)[1] is None:  # no mean leaves a problem out silently
                    out[f"{key}_left_out"] = float(undefined)
                if pattern in stderr_of:
                    out[f"{key}_stderr"] = summary["stderr"]
                if strata:
                    for g in dict.fromkeys(c[2] for c in cells if math.isfinite(c[0])):
                        label = g if g in summary and g != key else f"group_{g}"
                        out[f"{g}_{key}"] = summary[label]
                        if pattern in stderr_of:
                            out[f"{g}_{key}_stderr"] = summary[f"{label}_stderr"]
        return out

    return compute


# ------------------------------------------------------------------------------------------------ from the spec

def _pattern(spec) -> str:
    """A spec entry's Score key, or for a per-N entry the pattern of its keys at any N (``ks@*``)."""
    return per_n_pattern(spec.prefix) if spec.per_n else spec.key


def _spec_patterns(eval_family: str, bank: str | None = None) -> tuple[list[str], list[str], list[str]]:
    """``(averaged keys, those with a standard error, counted flags)`` of the metrics Inspect reports, from the spec
    as it is now (a plug-in's scoped metrics in the runs of its ``bank`` only)."""
    keys, with_stderr, counted = [], [], []
    for m in metric_specs(eval_family):
        if "inspect" not in m.adapters or not m.in_scope(bank, bank_families(bank) if m.family else ()):
            continue
        if m.kind == "flag":
            counted.append(m.key)
        elif _pattern(m) not in keys:
            keys.append(_pattern(m))
            if m.stderr:
                with_stderr.append(_pattern(m))
    return keys, with_stderr, counted


def spec_metrics(eval_family: str, cluster: str | None = None, run_metrics: tuple = (),
                 strata: str | None = None, bank: str | None = None) -> list:
    """An eval family's scorer metrics from its :mod:`ub_core.metric_spec` entries, all plain metrics, so that
    Inspect shows the scorer as one score (module docstring), in this order: :func:`headline` on the eval family's
    headline key (grouped like that key, clustered by the sample metadata key ``cluster`` where given, with the
    count of samples it leaves out); :func:`means` of every other key (with ``<key>_stderr`` where the spec asks,
    clustered likewise); ``run_metrics`` (plain metrics over whole runs: the retry rate, the grid rates); and
    :func:`totals` of the flags (kind ``flag``). The keys are read from the spec when the metrics are computed,
    and a per-N entry is a pattern (``ks@*``), so a run with other Ns (``-T ks_ns=``) reports those, and the
    headline is the largest N run. ``strata`` (a sample metadata key): every key is also reported per stratum and
    pooled SEs are stratified (:func:`means`; the option-logprob families, whose papers report each dataset
    separately)."""
    top = spec_headline(eval_family)
    stratified = {"strata": True} if strata and top.per_category and top.group == strata else {}
    scope = {"bank": bank} if bank else {}
    out = [headline(_pattern(top), group=top.group if top.per_category else None, cluster=cluster, **stratified),
           means(cluster=cluster, headline=_pattern(top), eval_family=eval_family,
                 **({"strata": strata} if strata else {}), **scope), *run_metrics]
    return out + ([totals(eval_family=eval_family, **scope)] if _spec_patterns(eval_family, bank)[2] else [])
