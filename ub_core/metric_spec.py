"""One metric spec per eval family (a kind of evaluation, such as ``ksn`` or ``calibration``; not a distribution
family): every metric's key, direction, aggregation, NaN policy and display name, written
once. The adapters derive from it: Inspect's metric dicts (``ub_inspect.ksn.scorer``), lm-eval's metric keys
(``ub_lmeval.ksn_hooks``; the YAML ``metric_list`` stays written out because lm-eval reads it statically, and
``tests/generic/test_metric_spec.py`` checks it equals the spec), and the report's key lists (``ub_core.report``).

Specs: KS@N, sampling-free KS@N, numeric calibration, implicit probabilistic reasoning and its explicit twin, the odds
paper's question and sampling tasks, and run-to-run stability.

Adding a KS@N metric: add its :class:`MetricSpec` here with ``compute`` naming its pure function (in
:mod:`ub_core.metrics`, ``(valid values, truth draws) -> float``); :func:`ub_core.ksn_scoring.score_values` computes
every spec entry, and every adapter iterates the spec: the Inspect scorer's ``Score.value`` (one entry per spec key,
in spec order), lm-eval's ``process_results`` and the ``metric_list`` of the YAMLs (generated and checked by
:mod:`ub_lmeval.metric_lists`), ``ub score``'s aggregate and table (:func:`ub_core.ksn_scoring.aggregate`), and the
report. ``tests/generic/test_spec_values.py`` registers a toy metric and follows it through all three frameworks.

Aggregations: ``mean`` (with a standard error), ``nanmean`` (mean over the problems where the value is defined:
NaN and +/-inf are left out, never turned into 0), ``total`` (a count of 0/1 flags). NaN policy: ``never`` (the
value is always defined), ``skip`` (undefined values leave the mean; their count is another metric), ``count``.

Bounds: the values one problem's score can take (:data:`UNIT` for rates, shares, probabilities and 0/1 flags,
:data:`NONNEGATIVE` for counts and distances, None where any number can occur); readers of outside results
(``ub report``) refuse a value outside them instead of showing it as a number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from .metrics import DEFAULT_NS, ODDS_KS_NS

__all__ = ["UNIT", "NONNEGATIVE", "ADAPTERS", "SOURCES", "find_metric", "MetricSpec", "AGGREGATIONS", "KSN_METRICS", "KSN_LOGPROB_METRICS", "CALIBRATION_METRICS", "IMPLICIT_METRICS",
           "EXPLICIT_METRICS", "ODDS_QUESTION_METRICS", "ODDS_SAMPLING_METRICS", "STABILITY_METRICS",
           "BEHAVIOURS", "HEADLINES", "metric_specs", "metric_keys", "run_specs", "per_n_prefix", "as_metric_value", "metric", "headline", "is_ks_key", "direction"]

AGGREGATIONS = ("mean", "nanmean", "total")
UNIT = (0.0, 1.0)
NONNEGATIVE = (0.0, math.inf)
NAN_POLICIES = ("never", "skip", "count")
SOURCES = ("score", "collection")
#: The adapters that report a metric (:attr:`MetricSpec.adapters`): Inspect's metrics, lm-eval's ``metric_list``
#: and ``ub score``'s aggregate and table.
ADAPTERS = frozenset({"inspect", "lmeval", "ub"})


@dataclass(frozen=True)
class MetricSpec:
    """One metric of an eval family's per-problem score."""

    key: str
    display: str
    higher_is_better: bool
    aggregation: str = "mean"
    nan_policy: str = "never"
    #: reported per category too: by Inspect for the eval family's headline (its first score), and for every such key
    #: by ``ub_inspect.analysis.per_category`` from a log's samples
    per_category: bool = True
    #: Inspect reports a standard error beside the mean
    stderr: bool = True
    #: which adapters report it as a metric; empty for a key that is only recorded per problem (the report reads it)
    adapters: frozenset = ADAPTERS
    #: the sample metadata key the per-group values are grouped by (``per_category``)
    group: str = "category"
    #: lm-eval aggregation hook (``utils.<name>``) where it is not the one ``aggregation`` implies
    lmeval_aggregation: str | None = None
    #: the closed range of one problem's value (None: any number)
    bounds: tuple[float, float] | None = None
    #: False for a two-sided metric whose best value is a target, not an end (RE: 0): no direction ranks it, so
    #: ``higher_is_better`` means nothing; :func:`direction` is None and results mark it so (lm-eval: null)
    ranked: bool = True
    #: where a KS@N value comes from: ``score`` (:func:`ub_core.ksn_scoring.score_values`, from the parsed values)
    #: or ``collection`` (the Inspect solver's record of the answer collection: attempts, slots; ``ub score`` and
    #: lm-eval, which retry nothing, have no such value)
    source: str = "score"
    #: the pure function ``(valid values used, ground-truth draws) -> float | None`` that
    #: :func:`ub_core.ksn_scoring.score_values` calls for a metric it does not compute itself (None: undefined)
    compute: Callable[[np.ndarray, np.ndarray], float | None] | None = field(default=None, compare=False)
    #: the column heading of ``ub score``'s table (``display`` where not given)
    column: str | None = None

    def __post_init__(self):
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"{self.key}: unknown aggregation {self.aggregation!r}")
        if self.nan_policy not in NAN_POLICIES:
            raise ValueError(f"{self.key}: unknown NaN policy {self.nan_policy!r}")
        if self.source not in SOURCES:
            raise ValueError(f"{self.key}: unknown source {self.source!r}")

    @property
    def heading(self) -> str:
        """The column heading of a table (``column``, else ``display``)."""
        return self.column or self.display


_RECORDED = frozenset()  # recorded per problem, read by the report, not a metric of its own

#: KS@N (UnpredictaBench, section 3.3 and appendix C): every key of a problem's score, in report order. ``ks@N``
#: is one entry per default N (a task run with other Ns reports those: the adapters match ``ks@*``).
KSN_METRICS: tuple[MetricSpec, ...] = (
    *(MetricSpec(f"ks@{n}", f"KS@{n}", True, bounds=UNIT) for n in DEFAULT_NS),
    MetricSpec("wdz", "WDZ", False, "nanmean", "skip"),
    MetricSpec("w1_debiased", "debiased W1", False, "nanmean", "skip", adapters=_RECORDED),
    MetricSpec("jsd", "JSD", False, "nanmean", "skip", bounds=UNIT),  # natural log: at most ln 2
    MetricSpec("wdz_undefined", "WDZ undefined", False, "total", "count", stderr=False, bounds=UNIT, column="WDZ?"),
    MetricSpec("constant", "constant samples", False, "total", "count", stderr=False, bounds=UNIT, column="const"),
    MetricSpec("n_valid", "valid answers", True, per_category=False, stderr=False, bounds=NONNEGATIVE,
               column="valid"),
    MetricSpec("n_failed", "failed replies", False, per_category=False, stderr=False,
               adapters=frozenset({"lmeval", "ub"}), bounds=NONNEGATIVE, column="fail"),
    # the retry metrics of UnpredictaBench's appendix K are computed from these three (ub_inspect.ksn.scorer)
    *(MetricSpec(key, display, hib, adapters=_RECORDED, bounds=NONNEGATIVE, source="collection")
      for key, display, hib in (("attempts", "generation attempts", False), ("slots", "answer slots", True),
                                ("retried_slots", "retried slots", False))),
)

def _nanmean(key: str, display: str, higher_is_better: bool, bounds: tuple[float, float] | None = None) -> MetricSpec:
    return MetricSpec(key, display, higher_is_better, "nanmean", "skip", bounds=bounds)


#: The numeric-calibration paper's reference behaviours (section 4): which one a two-option item's output is
#: compatible with. Each is a 0/1 flag per item whose mean is a rate.
BEHAVIOURS: tuple[str, ...] = ("null", "calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second")

#: Numeric calibration: probability mass on the options (PM), Wasserstein distance (WD) and RE (model entropy
#: minus the ideal's, bits; two-sided, target 0, so not ranked), then the behaviour rates, then ``abs_re`` = |RE|.
#: lm-eval reports each one's clustered standard error as ``<key>_stderr`` and adds a grid rate per behaviour
#: (``ub_lmeval/task_yamls``).
CALIBRATION_METRICS: tuple[MetricSpec, ...] = (
    _nanmean("pm", "PM", True, UNIT), _nanmean("wd", "WD", False, NONNEGATIVE),
    MetricSpec("re", "RE", False, "nanmean", "skip", ranked=False),  # signed, target 0: see abs_re
    *(_nanmean(f"behaviour_{b}", f"behaviour: {b}", b == "calibrated", UNIT) for b in BEHAVIOURS),
    _nanmean("abs_re", "|RE|", False, NONNEGATIVE),  # RE's distance from its target 0: the ranked form
)
#: Implicit probabilistic reasoning: distances between the model's and the true outcome distributions, the mass
#: outside the outcomes, and whether the most likely outcome is right.
IMPLICIT_METRICS: tuple[MetricSpec, ...] = (
    _nanmean("chebyshev", "Chebyshev", False, UNIT), _nanmean("manhattan", "Manhattan", False, (0.0, 2.0)),
    _nanmean("kl", "KL", False, NONNEGATIVE), _nanmean("missing_mass", "missing mass", False, UNIT),
    _nanmean("argmax_acc", "argmax accuracy", True, UNIT),
)
#: Its explicit MCQ twin: accuracy, and the probability of the correct option.
EXPLICIT_METRICS: tuple[MetricSpec, ...] = (_nanmean("mcq_acc", "MCQ accuracy", True, UNIT),
                                             _nanmean("p_correct", "P(correct)", True, UNIT))

#: Sampling-free KS@N (issue 18; ``ub_core.ksn_logprob``): the model's whole answer distribution q, read from the
#: log-probabilities of every candidate answer, against the truth. ``p_pass@N`` is the probability that KS@N passes
#: at N i.i.d. answers from q; its standard error (Monte Carlo where the exact sum is too large) is recorded per
#: problem. ``no_mass`` counts problems where q is empty (every other metric is then NaN and left out);
#: ``bad_logprobs`` problems whose log-probabilities were malformed (NaN, +inf, above 0, not numbers: issue 28).
#: ``missing_mass`` is the reply probability the tree route (``ub_core.reply_tree``, Inspect
#: ``-T enumeration=tree|auto``) left unenumerated, a bound on its other values; the listed route has none (0).
KSN_LOGPROB_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("valid_mass", "mass on well-formed answers", True, bounds=UNIT),
    _nanmean("ks_distance", "KS distance", False, UNIT),
    *(_nanmean(f"p_pass@{n}", f"P(KS@{n} passes)", True, UNIT) for n in DEFAULT_NS),
    _nanmean("jsd", "JSD", False, UNIT),
    _nanmean("entropy_ratio", "entropy ratio H(q)/H(p)", True, NONNEGATIVE),
    MetricSpec("no_mass", "no mass on any answer", False, "total", "count", stderr=False, bounds=UNIT),
    MetricSpec("bad_logprobs", "malformed log-probabilities", False, "total", "count", stderr=False, bounds=UNIT),
    MetricSpec("missing_mass", "unenumerated reply mass", False, "nanmean", "skip", per_category=False,
               adapters=frozenset({"inspect"}), bounds=UNIT),
)

#: "What are the odds" (the odds paper): question items (percentile and probability, task 1) score the absolute
#: error against the exact answer and against the nearest-shot baseline; sampling items (task 2) the KS statistic
#: of 1,000 values and KS@N at N = 10, 100, 1000. Inspect groups the headline errors by distribution family.
ODDS_QUESTION_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("abs_error", "absolute error", False, "nanmean", "skip", group="family", bounds=NONNEGATIVE),
    MetricSpec("baseline_abs_error", "nearest-shot baseline error", False, "nanmean", "skip", per_category=False,
               bounds=NONNEGATIVE),
    MetricSpec("parse_failed", "unparsed replies", False, per_category=False, stderr=False, bounds=NONNEGATIVE),
    # the odds paper's ± (Tables 1 and 2): lm-eval's per-document value is [distribution, abs_error] and the hook
    # takes the SE across distributions; Inspect reports it as a run metric (ub_inspect.metrics.distribution_se)
    MetricSpec("abs_error_dist_se", "SE across distributions", False, per_category=False, stderr=False,
               adapters=frozenset({"lmeval"}), lmeval_aggregation="distribution_se"),
)
ODDS_SAMPLING_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("ks_stat", "KS statistic", False, "nanmean", "skip", group="family", bounds=UNIT),
    *(MetricSpec(f"ks@{n}", f"KS@{n}", True, per_category=False, bounds=UNIT) for n in ODDS_KS_NS),
    MetricSpec("n_valid", "valid values", True, per_category=False, stderr=False, bounds=NONNEGATIVE),
    MetricSpec("n_failed", "failed replies", False, per_category=False, stderr=False, bounds=NONNEGATIVE),
    MetricSpec("ks_stat_dist_se", "SE across distributions", False, per_category=False, stderr=False,
               adapters=frozenset({"lmeval"}), lmeval_aggregation="distribution_se"),
)
#: Run-to-run stability (the non-determinism paper): total agreement of raw replies (TARr) and of parsed answers
#: (TARa) over N runs, the best, worst and median run accuracy, their spread (best - worst) and the share of
#: unreadable replies. Inspect computes them over epochs with its own metrics (``ub_inspect.stability.scorer``).
STABILITY_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("tar_r", "TARr", True, bounds=UNIT), MetricSpec("tar_a", "TARa", True, bounds=UNIT),
    MetricSpec("best_acc", "best run accuracy", True, bounds=UNIT),
    MetricSpec("worst_acc", "worst run accuracy", True, bounds=UNIT),
    MetricSpec("acc", "accuracy", True, bounds=UNIT),
    MetricSpec("median_acc", "median run accuracy", True, lmeval_aggregation="median_run_accuracy", bounds=UNIT),
    MetricSpec("acc_spread", "accuracy spread (best - worst)", False, lmeval_aggregation="run_accuracy_spread",
               bounds=UNIT),
    MetricSpec("parse_failure_rate", "unreadable replies", False, lmeval_aggregation="unreadable_rate", bounds=UNIT),
)

#: eval family name -> its metric spec (the names adapters and results use: lm-eval metric lists, Inspect scorers)
_SPECS_BY_EVAL_FAMILY = {"ksn": KSN_METRICS, "ksn_logprob": KSN_LOGPROB_METRICS,
                         "odds_question": ODDS_QUESTION_METRICS, "odds_sampling": ODDS_SAMPLING_METRICS,
                         "stability": STABILITY_METRICS, "calibration": CALIBRATION_METRICS,
                         "implicit": IMPLICIT_METRICS, "explicit": EXPLICIT_METRICS}


#: Each eval family's headline: the one number a run is summarised and ranked by (Inspect shows it as the run's score).
#: KS@100 (UnpredictaBench, sec. 3.3), P(KS@100 passes) for the sampling-free route, the odds paper's MAE (question
#: items) and mean KS statistic (sampling items), PM (the numeric-calibration paper's mass on the options), the
#: mean Chebyshev distance (the implicit-reasoning paper's summary statistic), MCQ accuracy (its explicit twin),
#: and TARa (the non-determinism paper's agreement of parsed answers).
HEADLINES: dict[str, str] = {"ksn": "ks@100", "ksn_logprob": "p_pass@100", "odds_question": "abs_error",
                             "odds_sampling": "ks_stat", "calibration": "pm", "implicit": "chebyshev",
                             "explicit": "mcq_acc", "stability": "tar_a"}


def metric_specs(eval_family: str) -> tuple[MetricSpec, ...]:
    """The spec of ``eval_family`` (a one-line KeyError for an unknown eval family)."""
    try:
        return _SPECS_BY_EVAL_FAMILY[eval_family]
    except KeyError:
        raise KeyError(f"no metric spec for {eval_family!r}; known: {', '.join(_SPECS_BY_EVAL_FAMILY)}") from None


def metric_keys(eval_family: str, adapter: str | None = None) -> tuple[str, ...]:
    """The score keys of ``eval_family`` in spec order; with ``adapter``, only the metrics that adapter reports."""
    return tuple(m.key for m in _SPECS_BY_EVAL_FAMILY[eval_family] if adapter is None or adapter in m.adapters)


def per_n_prefix(key: str) -> str | None:
    """``"ks@"`` for ``ks@100``, ``"p_pass@"`` for ``p_pass@20``: the prefix of a per-N key, else None."""
    head, sep, n = key.partition("@")
    return head + sep if sep and n.isdigit() else None


def run_specs(eval_family: str, ns, adapter: str | None = None,
              source: str | None = None) -> list[tuple[str, MetricSpec]]:
    """``(key, spec)`` for every metric of ``eval_family`` a run reports, in spec order: a per-N entry (``ks@N``,
    ``p_pass@N``; the spec has one per default N) stands for the run's ``ns``, at the place of the eval family's first
    such entry, with that entry's spec renamed to each N (key and display). ``adapter`` keeps the metrics that
    adapter reports, ``source`` those with that source."""
    out: list[tuple[str, MetricSpec]] = []
    done: set[str] = set()
    for m in metric_specs(eval_family):
        if (adapter is not None and adapter not in m.adapters) or (source is not None and m.source != source):
            continue
        prefix = per_n_prefix(m.key)
        if prefix is None:
            out.append((m.key, m))
        elif prefix not in done:
            done.add(prefix)
            at = m.key[len(prefix) - 1:]  # "@1"
            out.extend((f"{prefix}{n}", replace(m, key=f"{prefix}{n}", display=m.display.replace(at, f"@{n}")))
                       for n in sorted({int(n) for n in ns}))
    return out


def as_metric_value(spec: MetricSpec, value):
    """One problem's value as the frameworks average it: a counted flag (aggregation ``total``) 1.0 or 0.0, an
    undefined value (None) NaN, anything else unchanged."""
    if spec.aggregation == "total":
        return 1.0 if value else 0.0
    return float("nan") if value is None else value


def is_ks_key(key: str) -> bool:
    """``ks@N`` for any N (a run may use other Ns than the defaults)."""
    return key.startswith("ks@") and key[3:].isdigit()


def find_metric(eval_family: str, key: str) -> MetricSpec | None:
    """The spec of ``key`` in ``eval_family``, or None when the eval family has no such metric. ``ks@N`` and
    ``p_pass@N`` at any N (a run may use other Ns than the defaults) take the spec of the eval family's first metric
    of that form."""
    specs = _SPECS_BY_EVAL_FAMILY.get(eval_family, ())
    for m in specs:
        if m.key == key:
            return m
    for prefix in ("ks@", "p_pass@"):
        if key.startswith(prefix) and key[len(prefix):].isdigit():
            return next((m for m in specs if m.key.startswith(prefix)), None)
    return None


def direction(spec: MetricSpec | None) -> bool | None:
    """What a dashboard ranks by: True (higher is better), False (lower is better), None (two-sided, such as RE,
    or an unknown metric: do not rank)."""
    if spec is None or not spec.ranked:
        return None
    return spec.higher_is_better


def headline(eval_family: str) -> MetricSpec:
    """The spec of ``eval_family``'s headline metric (:data:`HEADLINES`)."""
    metric_specs(eval_family)  # a one-line KeyError for an unknown eval family
    return metric(eval_family, HEADLINES[eval_family])


def metric(eval_family: str, key: str) -> MetricSpec:
    """The spec of one metric; a one-line KeyError for an unknown key."""
    for m in _SPECS_BY_EVAL_FAMILY[eval_family]:
        if m.key == key:
            return m
    raise KeyError(f"no metric {key!r} in the {eval_family} spec")
