"""The KS@N scorer and its metrics. The science is ``ub_core.ksn_scoring.score_values``; this only adapts it.

Score value (a dict, one entry per key of the KS@N metric spec, ``ub_core.metric_spec``, in its order:
:func:`score_value`): ``ks@N`` (1.0 pass / 0.0 fail, also when short), ``p@N`` (NaN when
short), ``wdz``, ``w1_debiased``, ``jsd`` (NaN with no valid value; ``wdz`` also NaN when its permutation null
has no spread, never +/-inf), ``wdz_undefined`` (1.0 in that case), ``constant`` (1.0 when the sample is
constant: a collapsed model), ``n_valid``, ``n_failed``, ``attempts``, ``slots``, ``retried_slots``. Score metadata
keeps the parsed ``values``, the failure reasons and a digest of the raw replies (which are in the sample's store,
``ub``), so a log can be rescored (``ub score --samples LOG.eval``) and plotted.

Metrics (:func:`ub_inspect.metrics.spec_metrics`; the run's first score): KS@N at the largest N with its standard
error and its value and standard error per category (the headline), the retry rate (share of slots that needed
at least one resample) and the average attempts per valid sample (UnpredictaBench, appendix K); then per key:
mean and stderr of every ``ks@N``; ``nan_mean`` and ``nan_stderr`` of ``wdz`` and ``jsd`` (over the problems where
they are defined, so one undefined WDZ cannot make the mean NaN); the ``total`` of ``wdz_undefined`` and
``constant`` (how many problems the WDZ mean leaves out; how many collapsed problems the JSD mean includes, which
the released notebooks drop as NaN).

The scorer's arguments are small (Inspect logs them with every score): it finds the sample's problem with
:func:`ub_inspect._problems.lookup_problem`.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Mapping, Sequence

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from ub_core.ksn_scoring import DEFAULT_NS, run_records, score_values
from ub_core.metric_spec import as_metric_value, per_n_key, run_specs
from ub_core.run_metrics import RUN_RECORDS, all_run_metrics, bank_families, run_metrics_for

from .._naming import registry_name
from .._problems import lookup_problem
from .._store import read_record
from ..metrics import spec_metrics
from .solver import CollectedValues

__all__ = ["ksn_scorer", "score_value", "retry_rate", "attempts_per_valid"]


def _total(scores: list[SampleScore], key: str) -> float:
    total = 0.0
    for s in scores:
        value = s.score.value
        if isinstance(value, Mapping) and isinstance(value.get(key), (int, float)):
            total += float(value[key])
    return total


@metric(name=registry_name("retry_rate"))
def retry_rate() -> Metric:
    """Share of answer slots that needed at least one resample (UnpredictaBench, appendix K, "Retry Rate")."""

    def compute(scores: list[SampleScore]) -> float:
        slots = _total(scores, "slots")
        return _total(scores, "retried_slots") / slots if slots else 0.0

    return compute


@metric(name=registry_name("attempts_per_valid"))
def attempts_per_valid() -> Metric:
    """Generation attempts per valid sample (UnpredictaBench, appendix K, "Avg. Attempt")."""

    def compute(scores: list[SampleScore]) -> float:
        valid = _total(scores, "n_valid")
        return _total(scores, "attempts") / valid if valid else float("nan")

    return compute


# the headline (KS@N at the largest N, per category), the retry metrics, then each key of the spec
KSN_METRICS = spec_metrics("ksn", run_metrics=(retry_rate(), attempts_per_valid()))


@metric(name=registry_name("run_metric"))
def run_metric(name: str) -> Metric:
    """A plug-in's run metric (:class:`ub_core.run_metrics.RunMetric`, found by ``name`` when it is computed):
    ``{name: value, "<name>_stderr": its standard error, "<name>_<extra>": ...}`` from the record each score keeps in
    ``metadata["ub_run"]``."""

    def compute(scores: list[SampleScore]):
        rm = all_run_metrics().get(name)
        if rm is None or not scores:
            return {}
        records = [((s.score.metadata or {}).get(RUN_RECORDS) or {}).get(name) for s in scores]
        return rm.evaluate([r for r in records if r is not None])

    return compute


def plugin_metrics(bank: str) -> dict:
    """``Task`` arguments for a run of ``bank``: none for a bank without plug-in metrics; else the metrics with the
    bank's own run metrics first (the run's headline) and its scoped metrics among the means."""
    families = bank_families(bank)
    own = run_metrics_for(bank, families)
    scoped = [k for k, m in run_specs("ksn", bank=bank, families=families) if m.scoped]
    if not own and not scoped:
        return {}
    return {"metrics": [*(run_metric(rm.name) for rm in own),
                        *spec_metrics("ksn", run_metrics=(retry_rate(), attempts_per_valid()), bank=bank)]}


def _digest(outputs: list) -> str:
    """SHA-256 of the raw replies: enough for run-to-run agreement (TARr), while the replies themselves stay
    in the sample's store (Inspect copies Score metadata once per metric key, so it is kept small)."""
    return hashlib.sha256(json.dumps(outputs, ensure_ascii=False).encode("utf-8")).hexdigest()


def score_value(row: Mapping, record: Any, ns: Sequence[int], bank: str | None = None) -> dict[str, float]:
    """The Score value: one entry per key of the KS@N spec (:func:`ub_core.metric_spec.run_specs`, the run's Ns), in
    spec order (``ks@N`` and the p-values ``p@N`` at each N); a ``score`` key from ``row``
    (:func:`ub_core.ksn_scoring.score_values`, :func:`ub_core.metric_spec.as_metric_value`: an undefined rate is
    its fail, another undefined value NaN), a ``collection`` key from the solver's ``record`` (a
    :class:`CollectedValues` or its :func:`ub_inspect._store.read_record` snapshot)."""
    return {key: int(getattr(record, key)) if spec.source == "collection" else as_metric_value(spec, row[key])
            for key, spec in run_specs("ksn", ns, bank=bank, families=bank_families(bank))}


@scorer(metrics=KSN_METRICS, name=registry_name("ksn_scorer"))
def ksn_scorer(ks_ns: Sequence[int] = DEFAULT_NS, threshold: float = 1e-4, method: str = "paper",
               gt_size: int = 10_000, gt_seed: int = 0, version: str | None = None, dataset: str = "builtin",
               ground_truth: str | None = None, split: str = "train", bank: str = "ksn") -> Scorer:
    """Score the values collected by :func:`ub_inspect.ksn.solver.collect_values` against the ground truth of the
    sample's problem (registered ``bank`` at ``version``, or the official release ``dataset`` + ``ground_truth``)."""

    async def score(state: TaskState, target: Target) -> Score:
        problem = lookup_problem(state.sample_id, bank, version, dataset, ground_truth, split)
        record = read_record(state, CollectedValues)  # validated once (a StoreModel validates at every read)
        values = list(record.values)
        failures = list(record.failures)
        row = score_values(problem, values, ns=ks_ns, threshold=threshold, method=method, truth_size=gt_size,
                           truth_seed=gt_seed, n_failed=len(failures))
        value = score_value(row, record, ks_ns, problem.bank)
        top = max(ks_ns)
        p_top = row[per_n_key("p", top)]
        explanation = (f"{row['n_valid']} valid values from {value['attempts']} attempts; KS@{top} "
                       + ("short" if p_top is None else f"p = {p_top:.3g}")
                       + ("" if row["wdz"] is None or math.isnan(row["wdz"]) else f"; WDZ {row['wdz']:.2f}"))
        return Score(value=value, answer=", ".join(f"{v:g}" for v in values[:10]), explanation=explanation,
                     metadata={"values": values, "outputs_digest": _digest(list(record.outputs)),
                               "failures": failures, "requests": record.requests,
                               "skipped_slots": record.skipped_slots, "problem_id": problem.id,
                               "method": method, "threshold": threshold, "ks_ns": list(ks_ns),
                               "gt_size": gt_size, "gt_seed": gt_seed,
                               **({RUN_RECORDS: records} if (records := run_records(problem, row)) else {})})

    return score
