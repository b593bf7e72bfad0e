"""lm-eval hook functions (``!function`` targets) for the KS@N tasks. The science is ``ub_core``.

- :func:`ksn_dataset` is the ``custom_dataset``: the built-in bank, one category, as a ``DatasetDict`` (nothing
  is written next to the YAMLs and nothing depends on the current directory).
- :func:`process_results_ksn` receives a document and, through the ``take_first_k`` filter, all its
  generations; it parses them and returns every lm-eval metric of the KS@N spec (``ub_core.metric_spec``,
  ``run_specs("ksn", adapter="lmeval")``), scored with the document's KS ``threshold`` and ``method``
  (``--metadata``). The parsed values go to the ``--log_samples`` line only (``doc["ub_sample"]["values"]``,
  :func:`ub_lmeval.results_json.log_only`), not to the results.
- Aggregations: :func:`nanmean` (WDZ and JSD are undefined for a problem with no valid reply, and WDZ also when
  its permutation null has no spread: NaN, never +/-inf), with its standard error (:func:`nanmean_stderr`, in
  ``<metric>_stderr``), and :func:`total` (the per-category counts ``wdz_undefined``, problems left out of the WDZ
  mean, and ``constant``, problems with a collapsed, constant sample whose finite JSD is in the mean).
"""

from __future__ import annotations

import math
from typing import Any

from ub_core.problems import bank_names, get_problem, load_bank
from ub_core.ksn_scoring import DEFAULT_NS, parse_outputs, run_records, score_values
from ub_core.metric_spec import as_metric_value, run_specs
from ub_core.option_registry import apply_bank_options, plugin_options
from ub_core.run_metrics import bank_families
from ub_core.metrics import clustered_stderr

from .metadata import KSN_OPTIONS, checked
from .results_json import ClusteredValue, log_only, with_stderr

#: UnpredictaBench's KS p-value threshold (``--metadata '{"threshold": ...}'`` changes it)
DEFAULT_THRESHOLD = 1e-4

__all__ = ["select_ids", "ksn_dataset", "ksn_docs", "process_results_ksn", "nanmean", "nanmean_stderr", "total"]


def select_ids(items, ids: Any, bank: str, size: str | None = None) -> list:
    """The ``items`` whose id is in ``ids`` (a list, or a comma-separated string), in bank order; all of them when
    ``ids`` is None. ``--metadata`` reaches every task of a run, so an id of another category or another bank is
    simply not among ``items``; an id that no bank knows (a typo) is a one-line ValueError."""
    if ids is None:
        return list(items)
    if not isinstance(ids, (str, list, tuple)):
        raise ValueError(f"ids: expected a list of item ids or a comma-separated string, got {ids!r}")
    wanted = {str(s).strip() for s in (ids.split(",") if isinstance(ids, str) else ids) if str(s).strip()}
    unknown = wanted - {p.id for p in load_bank(bank, size=size)}
    for other in bank_names():
        if unknown and other != bank:
            unknown -= {p.id for p in load_bank(other)}
    if unknown:
        raise ValueError(f"ids: not items of {bank} or any other bank: {', '.join(sorted(unknown))}")
    return [p for p in items if p.id in wanted]


def ksn_docs(category: str | None = None, ids: Any = None, bank: str = "ksn", threshold: float = DEFAULT_THRESHOLD,
             method: str = "paper", bank_options: dict | None = None) -> list[dict]:
    """One document per problem of ``bank`` (any registered KS@N bank, a plug-in's too): id, bank, category,
    prompt (with our answer instruction), family, and the KS test's ``threshold`` and ``method`` it is scored with.

    ``ids`` (a list or a comma-separated string of problem ids) keeps only those problems, in bank order; an id
    that is not in the bank is a ValueError (one in another category is simply not in this one). ``bank_options``:
    the bank's plug-in options (:func:`ub_core.option_registry.apply_bank_options`)."""
    problems = apply_bank_options(bank, load_bank(bank, categories=[category] if category else None), bank_options)
    problems = select_ids(problems, ids, bank)
    return [{"id": p.id, "bank": p.bank, "uid": p.uid or "", "category": p.category, "family": p.family,
             "regime": p.regime, "support": p.support, "prompt": p.full_prompt, "threshold": float(threshold),
             "method": str(method)} for p in problems]


def ksn_dataset(category: str | None = None, ids: Any = None, bank: str = "ksn", threshold: Any = DEFAULT_THRESHOLD,
                method: Any = "paper", **kwargs: Any):
    """``custom_dataset`` hook: called with the task's metadata (``category``; ``bank``, a registered KS@N bank,
    ``ksn`` unless given; from ``--metadata``: ``ids``, ``'{"ids": "te-bernoulli-spread,..."}'``, restricts it to
    those problems, ``threshold`` and ``method`` are the KS test's, as Inspect's ``-T threshold`` / ``-T method``
    and ``ub score --threshold`` / ``--method``) and the model_args keys. The options are checked as Inspect's
    (:mod:`ub_lmeval.metadata`): a bad value or a ub option these tasks do not take is a one-line error."""
    from datasets import Dataset, DatasetDict

    own = plugin_options(str(bank))  # a plug-in bank's options, each a --metadata key of its own
    opts = checked("ub_ksn", {**{k: v for k, v in kwargs.items() if k not in own}, "threshold": threshold,
                              "method": method}, KSN_OPTIONS)
    return DatasetDict({"test": Dataset.from_list(ksn_docs(category, ids, str(bank), opts["threshold"],
                                                           opts["method"],
                                                           {k: v for k, v in kwargs.items() if k in own}))})


def process_results_ksn(doc: dict, results: list) -> dict:
    """All generations of one problem -> the lm-eval metrics of the KS@N spec (``results[0]`` is the list of
    generations kept by the ``take_first_k`` filter), with the document's KS ``threshold`` and ``method``."""
    generations = results[0] if results and isinstance(results[0], (list, tuple)) else results
    problem = get_problem(doc["id"], bank=doc.get("bank"))
    values, failures = parse_outputs(problem, [str(g) for g in generations])
    row = score_values(problem, values, n_failed=len(failures), threshold=float(doc.get("threshold",
                       DEFAULT_THRESHOLD)), method=str(doc.get("method", "paper")))
    # every lm-eval metric of the spec for this bank, read now (not at import): an undefined value is NaN, a flag
    # 1.0/0.0; then each of the bank's run metrics, whose every key takes the problem's record
    out: dict[str, Any] = {key: as_metric_value(spec, row[key]) for key, spec in
                           run_specs("ksn", DEFAULT_NS, adapter="lmeval", bank=problem.bank,
                                     families=bank_families(problem.bank))}
    for name, record in run_records(problem, row).items():
        out.update({key: record for key in _run_metric_keys(name)})
    log_only(doc, values=values)
    return out


def _run_metric_keys(name: str) -> list[str]:
    from ub_core.run_metrics import all_run_metrics

    rm = all_run_metrics()[name]
    return [k for k in rm.keys() if k != f"{name}_stderr"]  # lm-eval reports the stderr itself


def _finite(items: list) -> list[float]:
    """The values that are defined: None, NaN and +-inf (an undefined WDZ, an old record's infinite one) left out."""
    return [float(x) for x in items if x is not None and math.isfinite(float(x))]


def nanmean_stderr(items: list) -> float:
    """Standard error of :func:`nanmean`: over the n documents where the metric is defined,
    ``sqrt(C / (C - 1) * sum_c (sum_{i in c} (x_i - mean))^2) / n`` (:func:`ub_core.metrics.clustered_stderr`), with C
    the clusters of :class:`~ub_lmeval.results_json.ClusteredValue` items (option pair, scenario: the papers'
    clustered intervals) or every document its own cluster, where it is ``std(ddof=1) / sqrt(n)``. NaN with
    fewer than two clusters."""
    kept = [x for x in items if x is not None and math.isfinite(float(x))]
    if not kept:
        return float("nan")
    clusters = [x.cluster if isinstance(x, ClusteredValue) else i for i, x in enumerate(kept)]
    return clustered_stderr([float(x) for x in kept], clusters)


@with_stderr(nanmean_stderr)
def nanmean(items: list) -> float:
    """Mean over the documents where the metric is defined and finite (NaN where none is)."""
    vals = _finite(items)
    return sum(vals) / len(vals) if vals else float("nan")


def total(items: list) -> float:
    """Sum over the problems where the value is defined: a count for 0/1 flags (``wdz_undefined``, ``constant``)."""
    return float(sum(_finite(items)))
