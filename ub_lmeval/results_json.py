"""What lm-eval writes to its results JSON for our tasks: standard errors for our own aggregations, and the
per-document lists that belong in ``--log_samples`` lines only.

**Standard errors.** lm-eval 0.4.13 fills ``<metric>_stderr`` from ``lm_eval.api.metrics.stderr_for_metric``,
which knows only its own aggregation functions by identity (``mean`` -> ``mean_stderr``; ``nanmean``, ``median``,
... -> a bootstrap); every ``!function`` aggregation gets ``"N/A"``. :func:`with_stderr` attaches the standard
error of an aggregation to the function (``agg.stderr``), and :func:`install_stderr_hook` (run when ``ub_lmeval`` is
imported, as every task's ``utils.py`` does) wraps lm-eval's lookup so that an aggregation carrying a ``stderr``
gets it; every other aggregation is looked up as before, and ``--bootstrap_iters 0`` still turns every standard
error off.

**Per-document lists** (the parsed ``values`` of a KS@N problem, the ``q`` of a sampling-free problem, the
``option_mass`` and ``predicted`` of a log-probability item) are not metrics: every key a ``process_results`` hook
returns is aggregated into the results JSON. lm-eval logs the very ``doc`` object it passed to ``process_results``
(``example = {"doc": doc, ...}`` in ``lm_eval.evaluator.evaluate``), so :func:`log_only` stores them under
``doc["ub_sample"]``: in the sample line, never in the results.
"""

from __future__ import annotations

import functools
import logging
import math
from typing import Any, Callable, MutableMapping

__all__ = ["SAMPLE_KEY", "log_only", "with_stderr", "install_stderr_hook", "ClusteredValue", "TokenizedLogprob"]

log = logging.getLogger(__name__)

#: the doc key that holds a document's per-document lists in ``--log_samples`` lines
SAMPLE_KEY = "ub_sample"


def log_only(doc: Any, **fields: Any) -> None:
    """Keep ``fields`` in this document's ``--log_samples`` line (``doc["ub_sample"]``), out of the results."""
    if isinstance(doc, MutableMapping):
        doc[SAMPLE_KEY] = fields


class ClusteredValue(float):
    """A document's metric value that remembers its cluster (the option pair, the scenario): the number in the
    sample log and in every mean, the cluster for the aggregation's cluster-robust standard error."""

    __slots__ = ("cluster",)

    def __new__(cls, value: Any, cluster: Any) -> "ClusteredValue":
        obj = super().__new__(cls, float("nan") if value is None else value)
        obj.cluster = str(cluster)
        return obj

    def __reduce__(self):  # pickled when lm-eval gathers metrics across ranks
        return (ClusteredValue, (float(self), self.cluster))


class TokenizedLogprob(float):
    """A continuation's log-probability that carries the tokens it was read as: what an offline model (``ub-oracle``,
    ``ub-collapse``: every continuation is one "token", as Inspect's ``ub/`` providers report it) returns, so that
    ``process_results`` knows the tokens without a tokenizer, as the Inspect scorer does from the provider's token
    texts (the ``exclusive`` convention and ``prefix_unresolved`` then agree between the frameworks).
    Everywhere else it is the float."""

    __slots__ = ("tokens",)

    def __new__(cls, value: Any, tokens: Any) -> "TokenizedLogprob":
        obj = super().__new__(cls, value)
        obj.tokens = tuple(str(t) for t in tokens)
        return obj

    def __reduce__(self):  # pickled by lm-eval's request cache and across ranks
        return (TokenizedLogprob, (float(self), self.tokens))


def with_stderr(stderr: Callable[[list], float]) -> Callable[[Callable], Callable]:
    """Decorator: the aggregation's standard error, for ``<metric>_stderr`` in lm-eval's results."""
    def attach(agg: Callable) -> Callable:
        agg.stderr = stderr
        return agg
    return attach


def _wrap(original: Callable) -> Callable:
    @functools.wraps(original)
    def stderr_for_metric(metric: Callable, bootstrap_iters: int):
        own = getattr(metric, "stderr", None)
        if callable(own) and bootstrap_iters > 0:
            return _finite_or_na(own)
        return original(metric, bootstrap_iters)
    stderr_for_metric.ub_wrapped = True  # type: ignore[attr-defined]
    return stderr_for_metric


def _finite_or_na(stderr: Callable[[list], float]) -> Callable[[list], Any]:
    """lm-eval's results use ``"N/A"`` for a standard error that cannot be computed (not NaN)."""
    def compute(items: list) -> Any:
        v = stderr(items)
        return v if isinstance(v, (int, float)) and math.isfinite(v) else "N/A"
    return compute


def install_stderr_hook() -> bool:
    """Make lm-eval use an aggregation's own ``stderr`` (:func:`with_stderr`); True when installed (also when it
    already was). lm-eval reads the function as a global of ``lm_eval.evaluator_utils`` at call time."""
    try:
        import lm_eval.api.metrics as metrics
        import lm_eval.evaluator_utils as evaluator_utils
    except ImportError:  # lm-eval not installed: nothing to hook
        return False
    current = getattr(evaluator_utils, "stderr_for_metric", None)
    if current is None:
        log.warning("ub_lmeval: this lm-eval has no evaluator_utils.stderr_for_metric; ub metrics without a "
                    "built-in aggregation report their standard error as N/A")
        return False
    if getattr(current, "ub_wrapped", False):
        return True
    wrapped = _wrap(current)
    evaluator_utils.stderr_for_metric = wrapped
    metrics.stderr_for_metric = wrapped
    return True
