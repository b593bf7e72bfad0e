"""lm-eval aggregations of the plug-ins' run metrics (:mod:`ub_core.run_metrics`), found by name when lm-eval asks:
``!function ub_lmeval.run_metric_hooks.<key>`` for every key of a run metric but its standard error, which lm-eval
reports itself as ``<name>_stderr`` from the aggregation's own (:func:`ub_lmeval.results_json.with_stderr`).

Each document's value of such a key is the problem's record (:func:`ub_core.ksn_scoring.run_records`, returned by
``process_results``); the aggregation hands every record to :meth:`ub_core.run_metrics.RunMetric.evaluate`, the
computation Inspect and ``ub report`` run too.
"""

from __future__ import annotations

from typing import Callable

from ub_core.run_metrics import all_run_metrics

from .results_json import with_stderr

__all__: list[str] = []


def aggregation(key: str) -> Callable[[list], float]:
    """The aggregation of run-metric key ``key`` (``step_likeness``, ``step_likeness_perfect``): an AttributeError
    for a key no installed run metric has (lm-eval then names the YAML that asked)."""
    for rm in all_run_metrics().values():
        if key in rm.keys() and key != f"{rm.name}_stderr":
            def aggregate(items: list, _rm=rm, _key=key) -> float:
                return _rm.evaluate(items)[_key]

            aggregate.__name__ = aggregate.__qualname__ = key
            if key == rm.name:
                return with_stderr(lambda items, _rm=rm: _rm.evaluate(items)[f"{_rm.name}_stderr"])(aggregate)
            return aggregate
    raise AttributeError(f"no installed run metric has the key {key!r}")


def __getattr__(name: str) -> Callable[[list], float]:
    if name.startswith("__"):
        raise AttributeError(name)
    return aggregation(name)
