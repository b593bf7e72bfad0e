"""One metric spec per eval family (a kind of evaluation, such as ``ksn`` or ``calibration``; not a distribution
family): every metric's key, direction, aggregation, NaN policy and display name, written
once. The adapters derive from it: Inspect's metric dicts (``ub_inspect.ksn.scorer``), lm-eval's metric keys
(``ub_lmeval.ksn_hooks``; the YAML ``metric_list`` stays written out because lm-eval reads it statically, and
``tests/generic/test_metric_spec.py`` checks it equals the spec), and the report's key lists (``ub_core.report``).

Specs: KS@N, sampling-free KS@N, numeric calibration, implicit probabilistic reasoning and its explicit twin, the odds
paper's question and sampling tasks, and run-to-run stability.

Keys: a per-N metric is one entry (``per_n=True``, key ``ks``, display ``KS@{n}``) that stands for ``ks@N`` at a
run's Ns; :func:`split_key` and :func:`per_n_key` are the one parser and formatter of ``<prefix>@<N>`` keys, and
:func:`find_metric` resolves any key (``ks@37``) to its entry. ``kind`` (:data:`KINDS`: rate, flag, count, score,
diagnostic) decides a metric's aggregation, NaN policy, default bounds, standard error, ``ub score``'s interval
(Wilson for a rate's 0/1 verdicts) and the tables' formatting (a rate in percent); ``direction`` ranks it.

Adding a KS@N metric: one :class:`MetricSpec` with ``compute`` naming its pure function (in :mod:`ub_core.metrics`
or a lab's own package): ``(valid values, truth draws) -> float``, or for a per-N metric ``(the first N valid
values, truth draws, *, n, threshold, method) -> float``; a compute that also takes ``problem`` receives the
problem (its parameters). Here, or through :func:`register_metric` from outside.

Scope: a spec entry with ``bank=`` (or ``family=``) belongs to that bank (to the problems of that distribution
family): :func:`run_specs` and :func:`metric_keys` list it only when asked for that bank (a bank whose problems
include that family), so it is scored, logged and reported in those runs and in no other. A lab's package declares
its metrics under the entry-point group ``unpredictabench.metrics`` (:mod:`ub_core.plugins`), read when a spec is
asked for; such a metric must be scoped to a bank or family of a plug-in, never a built-in one.
:func:`ub_core.ksn_scoring.score_values` computes every spec entry (a problem without the values a rate needs, no
valid answer or fewer than N, scores its ``missing_value``, a fail: the sampled protocol's rule), and every adapter
iterates the spec: the Inspect scorer's ``Score.value`` and metrics (read when they are computed), lm-eval's
``process_results`` and the ``metric_list`` of the YAMLs (written by ``python -m ub_lmeval.metric_lists --write``
and checked against the spec), ``ub score``'s aggregate and table (:func:`ub_core.ksn_scoring.aggregate`), and the
report. A spec that no adapter could honour (``ad@1`` with N bound in, a compute with the wrong signature, a key
given twice) is a ValueError when it is written. ``tests/generic/test_spec_values.py`` registers a toy per-N
metric and follows it through all three frameworks. A rate built on a library p-value must be able to reach the
threshold: ``scipy.stats.anderson_ksamp`` clips its p-value to [0.001, 0.25], so an AD@N on it never fails at 1e-4.

Aggregations (from ``kind``): ``mean`` (every problem has a value: rates, counts), ``nanmean`` (mean over the
problems where the value is defined: NaN and +/-inf are left out, never turned into 0, and counted; why is the
spec's ``why_undefined``), ``total`` (a count of 0/1 flags).

Bounds: the values one problem's score can take (:data:`UNIT` for rates, shares, probabilities and 0/1 flags,
:data:`NONNEGATIVE` for counts and distances, None where any number can occur); readers of outside results
(``ub report``) refuse a value outside them instead of showing it as a number.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from .metric_keys import per_n_key, split_key
from .metrics import DEFAULT_NS, ODDS_KS_NS

__all__ = ["UNIT", "NONNEGATIVE", "ADAPTERS", "SOURCES", "KINDS", "find_metric", "MetricSpec", "AGGREGATIONS",
           "KSN_METRICS", "KSN_LOGPROB_METRICS", "CALIBRATION_METRICS", "IMPLICIT_METRICS", "EXPLICIT_METRICS",
           "ODDS_QUESTION_METRICS", "ODDS_SAMPLING_METRICS", "STABILITY_METRICS", "DICE_METRICS", "BEHAVIOURS",
           "HEADLINES", "metric_specs", "metric_keys", "run_specs", "split_key", "per_n_key", "as_metric_value",
           "metric", "headline", "direction", "register_metric", "unregister_metric", "values_without_data",
           "fill_missing_rates", "left_out_reason"]

AGGREGATIONS = ("mean", "nanmean", "total")
UNIT = (0.0, 1.0)
NONNEGATIVE = (0.0, math.inf)
NAN_POLICIES = ("never", "skip", "count")
SOURCES = ("score", "collection")
#: What a metric is; everything else about how it is aggregated, shown and ranked follows from it:
#:
#: - ``rate``: one problem's verdict (1.0 pass, 0.0 fail) or the probability of a pass, in [0, 1]; a problem
#:   without the values it needs (no valid answer; fewer than N for a per-N rate) scores ``missing_value``, by
#:   default 0.0, a fail, as the sampled protocol counts it (UnpredictaBench, sec. 3.3: a run short of N valid
#:   answers fails). Averaged over every problem (lm-eval ``mean``, in the group's ``aggregate_metric_list``),
#:   with a Wilson interval for 0/1 verdicts (``ub score``), shown in percent. A rate declared with
#:   ``missing_value=None`` (a behaviour that does not apply) is a mean over the problems where it is defined,
#:   the others counted.
#: - ``flag``: a 0/1 flag per problem (WDZ undefined, no mass), counted (aggregation ``total``).
#: - ``count``: a count per problem (valid answers, failed replies): averaged by the frameworks, summed by ``ub score``.
#: - ``score``: a continuous value (a distance, a divergence, an error): the mean over the problems where it is
#:   defined (NaN and +/-inf left out and counted, never turned into 0), with a bootstrap interval in ``ub score``.
#: - ``diagnostic``: a value that describes the run rather than ranks the model (a p-value, attempts, the
#:   enumeration's missing mass, an SE across distributions): recorded, averaged like a score, no direction.
KINDS = ("rate", "flag", "count", "score", "diagnostic")
#: The adapters that report a metric (:attr:`MetricSpec.adapters`): Inspect's metrics, lm-eval's ``metric_list``
#: and ``ub score``'s aggregate and table.
ADAPTERS = frozenset({"inspect", "lmeval", "ub"})

_DERIVED = object()  # a field whose value follows from ``kind`` unless given


# ------------------------------------------------------------------------------------------------ key vocabulary

def _accepts(fn: Callable, *args, **kwargs) -> bool:
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return False
    except ValueError:  # no signature (a builtin): trust it
        return True
    return True


@dataclass(frozen=True)
class MetricSpec:
    """One metric of an eval family's per-problem score. ``kind`` (:data:`KINDS`) decides its aggregation, NaN
    policy, default bounds and standard error; a per-N metric (``per_n``) is one entry whose ``key`` is the prefix
    (``ks``) and whose ``display`` has ``{n}`` (``KS@{n}``): it stands for ``<key>@N`` at every N of a run
    (:func:`run_specs`), and its ``compute`` receives N, the threshold and the KS method."""

    key: str
    display: str
    higher_is_better: bool
    kind: str = "score"
    per_n: bool = False
    #: the value of a problem without the values the metric needs (no valid answer; fewer than N for a per-N
    #: metric; a ``compute`` that returns None or NaN). Default: 0.0 (a fail) for a rate, None (undefined: left
    #: out of the mean and counted) otherwise.
    missing_value: float | None = _DERIVED  # type: ignore[assignment]
    #: reported per category too: by Inspect for the eval family's headline (its first score), and for every such key
    #: by ``ub_inspect.analysis.per_category`` from a log's samples
    per_category: bool = True
    #: Inspect reports a standard error beside the mean (default: rates and scores)
    stderr: bool = _DERIVED  # type: ignore[assignment]
    #: which adapters report it as a metric; empty for a key that is only recorded per problem (the report reads it)
    adapters: frozenset = ADAPTERS
    #: the sample metadata key the per-group values are grouped by (``per_category``)
    group: str = "category"
    #: lm-eval aggregation hook (``utils.<name>``) where it is not the one ``kind`` implies
    lmeval_aggregation: str | None = None
    #: the closed range of one problem's value (None: any number; default [0, 1] for a rate or a flag, [0, inf)
    #: for a count)
    bounds: tuple[float, float] | None = _DERIVED  # type: ignore[assignment]
    #: False for a two-sided metric whose best value is a target, not an end (RE: 0): no direction ranks it, so
    #: ``higher_is_better`` means nothing; :func:`direction` is None and results mark it so (lm-eval: null)
    ranked: bool = True
    #: where a KS@N value comes from: ``score`` (:func:`ub_core.ksn_scoring.score_values`, from the parsed values)
    #: or ``collection`` (the Inspect solver's record of the answer collection: attempts, slots; ``ub score`` and
    #: lm-eval, which retry nothing, have no such value)
    source: str = "score"
    #: the pure function :func:`ub_core.ksn_scoring.score_values` calls for a KS@N metric it does not compute
    #: itself: ``(valid values used, ground-truth draws) -> float | None``, and for a per-N metric
    #: ``(the first N valid values, ground-truth draws, *, n, threshold, method) -> float | None``
    compute: Callable[..., float | None] | None = field(default=None, compare=False)
    #: the column heading of ``ub score``'s table (``display`` where not given)
    column: str | None = None
    #: why a problem's value can be undefined (left out of the mean; shown beside it), for a metric that can be
    why_undefined: str | None = None
    #: a per-N metric's Ns where a run names none (the lm-eval metric lists, the report's key lists)
    default_ns: tuple[int, ...] = DEFAULT_NS
    #: the N this entry stands for (set by :meth:`at`; None in the spec itself)
    n: int | None = None
    #: scope: the bank whose runs report it (None: every bank's, as a built-in metric)
    bank: str | None = None
    #: scope: the distribution family whose problems it is computed for, in the runs of the banks that have such
    #: problems (None: every family's)
    family: str | None = None

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)

        if self.kind not in KINDS:
            raise ValueError(f"{self.key}: unknown kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.source not in SOURCES:
            raise ValueError(f"{self.key}: unknown source {self.source!r}")
        prefix, n = split_key(self.key)
        if self.per_n and self.n is None:
            if n is not None or "@" in self.key:
                raise ValueError(f"{self.key}: a per-N metric's key is its prefix (e.g. 'ks'), without '@N'")
            if "{n}" not in self.display:
                raise ValueError(f"{self.key}: a per-N metric's display needs '{{n}}' (e.g. 'KS@{{n}}')")
        elif not self.per_n and n is not None:
            raise ValueError(f"{self.key}: a key of the form <prefix>@<N> is per-N: declare it once as "
                             f"MetricSpec({prefix!r}, ..., per_n=True) so that its compute receives N")
        if self.compute is not None:
            extra = {"n": 1, "threshold": 1e-4, "method": "paper"} if self.per_n else {}
            ok = any(_accepts(self.compute, np.zeros(1), np.zeros(1), **extra, **more)
                     for more in ({}, {"problem": None}))
            if not ok:
                raise ValueError(f"{self.key}: compute must take " + (
                    "(values, truth, *, n, threshold, method)" if self.per_n else "(values, truth)")
                    + ", and may take problem=")
        if self.missing_value is _DERIVED:
            put("missing_value", 0.0 if self.kind == "rate" else None)
        if self.bounds is _DERIVED:
            put("bounds", UNIT if self.kind in ("rate", "flag") else NONNEGATIVE if self.kind == "count" else None)
        if self.stderr is _DERIVED:
            put("stderr", self.kind in ("rate", "score"))
        if self.kind in ("rate", "flag") and self.bounds != UNIT:
            raise ValueError(f"{self.key}: a {self.kind} lies in [0, 1], not {self.bounds}")
        if self.missing_value is not None:
            lo, hi = self.bounds or (-math.inf, math.inf)
            if not lo <= self.missing_value <= hi:
                raise ValueError(f"{self.key}: missing_value {self.missing_value} is outside its bounds")

    @property
    def aggregation(self) -> str:
        """``mean`` (every problem has a value), ``nanmean`` (over the problems where it is defined, the others
        counted) or ``total`` (a count of 0/1 flags): from :attr:`kind`."""
        if self.kind == "flag":
            return "total"
        if self.kind == "count" or (self.kind == "rate" and self.missing_value is not None):
            return "mean"
        return "nanmean"

    @property
    def nan_policy(self) -> str:
        """``never`` (always defined), ``skip`` (undefined values leave the mean, counted), ``count`` (a flag)."""
        return {"mean": "never", "nanmean": "skip", "total": "count"}[self.aggregation]

    @property
    def name(self) -> str:
        """The key (the name of a plug-in's entry point)."""
        return self.key

    @property
    def scoped(self) -> bool:
        """Whether it belongs to one bank or one distribution family (a plug-in's metric)."""
        return self.bank is not None or self.family is not None

    def in_scope(self, bank: str | None = None, families=()) -> bool:
        """Whether a run of ``bank``, whose problems are of the distribution ``families``, reports it."""
        return not self.scoped or (self.bank is not None and self.bank == bank) or \
            (self.family is not None and self.family in families)

    def takes_problem(self) -> bool:
        """Whether ``compute`` also takes the problem (``problem=``)."""
        extra = {"n": 1, "threshold": 1e-4, "method": "paper"} if self.per_n else {}
        return self.compute is not None and _accepts(self.compute, np.zeros(1), np.zeros(1), **extra, problem=None)

    @property
    def heading(self) -> str:
        """The column heading of a table (``column``, else ``display``)."""
        return self.column or self.display

    def at(self, n: int) -> "MetricSpec":
        """This per-N entry at ``n``: key ``<prefix>@<n>``, display with ``n``, :attr:`n` set (``compute`` is the
        same function: it is called with ``n``)."""
        if not self.per_n or self.n is not None:
            raise ValueError(f"{self.key} is not a per-N entry of a spec")
        return replace(self, key=per_n_key(self.key, n), display=self.display.format(n=int(n)), n=int(n))

    @property
    def prefix(self) -> str:
        """The key without ``@N``."""
        return split_key(self.key)[0]


_RECORDED = frozenset()  # recorded per problem, read by the report, not a metric of its own

#: KS@N (UnpredictaBench, section 3.3 and appendix C): every key of a problem's score, in report order. ``ks@N``
#: and its p-value ``p@N`` are per-N entries (a run's Ns, default :data:`ub_core.metrics.DEFAULT_NS`).
KSN_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("ks", "KS@{n}", True, "rate", per_n=True),
    MetricSpec("p", "KS@{n} p-value", True, "diagnostic", per_n=True, adapters=_RECORDED, bounds=UNIT,
               per_category=False, why_undefined="fewer than N valid answers"),
    MetricSpec("wdz", "WDZ", False, why_undefined="no valid answer, or a permutation null without spread"),
    MetricSpec("w1_debiased", "debiased W1", False, adapters=_RECORDED, why_undefined="no valid answer"),
    MetricSpec("jsd", "JSD", False, bounds=UNIT, why_undefined="no valid answer"),  # natural log: at most ln 2
    MetricSpec("wdz_undefined", "WDZ undefined", False, "flag", column="WDZ?"),
    MetricSpec("constant", "constant samples", False, "flag", column="const"),
    MetricSpec("n_valid", "valid answers", True, "count", per_category=False, column="valid"),
    MetricSpec("n_failed", "failed replies", False, "count", per_category=False,
               adapters=frozenset({"lmeval", "ub"}), column="fail"),
    # the retry metrics of UnpredictaBench's appendix K are computed from these three (ub_inspect.ksn.scorer)
    *(MetricSpec(key, display, hib, "count", adapters=_RECORDED, source="collection")
      for key, display, hib in (("attempts", "generation attempts", False), ("slots", "answer slots", True),
                                ("retried_slots", "retried slots", False))),
)

def _nanmean(key: str, display: str, higher_is_better: bool, bounds: tuple[float, float] | None = None,
             why: str | None = None) -> MetricSpec:
    return MetricSpec(key, display, higher_is_better, "score", bounds=bounds, why_undefined=why)


#: The numeric-calibration paper's reference behaviours (section 4): which one a two-option item's output is
#: compatible with. Each is a 0/1 flag per item whose mean is a rate.
BEHAVIOURS: tuple[str, ...] = ("null", "calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second")

#: Numeric calibration: probability mass on the options (PM), Wasserstein distance (WD) and RE (model entropy
#: minus the ideal's, bits; two-sided, target 0, so not ranked), then the behaviour rates, then ``abs_re`` = |RE|.
#: lm-eval reports each one's clustered standard error as ``<key>_stderr`` and adds a grid rate per behaviour
#: (``ub_lmeval/task_yamls``).
_NO_ITEM_READ = "no readable option probabilities"
CALIBRATION_METRICS: tuple[MetricSpec, ...] = (
    # WD first: the headline (HEADLINES); PM, the precondition, beside it
    _nanmean("wd", "WD", False, NONNEGATIVE, _NO_ITEM_READ), _nanmean("pm", "PM", True, UNIT, _NO_ITEM_READ),
    MetricSpec("re", "RE", False, ranked=False, why_undefined=_NO_ITEM_READ),  # signed, target 0: see abs_re
    *(MetricSpec(f"behaviour_{b}", f"behaviour: {b}", b == "calibrated", "rate", missing_value=None,
                 why_undefined="the item has no reference behaviour") for b in BEHAVIOURS),
    _nanmean("abs_re", "|RE|", False, NONNEGATIVE, _NO_ITEM_READ),  # RE's distance from its target 0: the ranked form
)
#: Implicit probabilistic reasoning: distances between the model's and the true outcome distributions, the mass
#: outside the outcomes, and whether the most likely outcome is right.
IMPLICIT_METRICS: tuple[MetricSpec, ...] = (
    _nanmean("chebyshev", "Chebyshev", False, UNIT, _NO_ITEM_READ),
    _nanmean("manhattan", "Manhattan", False, (0.0, 2.0), _NO_ITEM_READ),
    _nanmean("kl", "KL", False, NONNEGATIVE, _NO_ITEM_READ),
    # beside KL: the share of its items whose value the 1e-12 floor set (ub_core.metrics.kl_floor_decides), a
    # description of the KL mean, not a rank; then a bounded divergence that needs no floor
    MetricSpec("kl_floor_share", "KL floor share", False, "diagnostic", bounds=UNIT, why_undefined=_NO_ITEM_READ),
    _nanmean("jsd_bits", "JSD (bits)", False, UNIT, _NO_ITEM_READ),
    # at most 1; below 0 under convention="paper", where an outcome that begins another keeps that one's mass too
    _nanmean("missing_mass", "missing mass", False, (-math.inf, 1.0), _NO_ITEM_READ),
    MetricSpec("argmax_acc", "argmax accuracy", True, "rate", missing_value=None,
               why_undefined="no unique most likely outcome"),
)
#: Its explicit MCQ twin: accuracy, and the probability of the correct option.
EXPLICIT_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("mcq_acc", "MCQ accuracy", True, "rate", missing_value=None, why_undefined=_NO_ITEM_READ),
    _nanmean("p_correct", "P(correct)", True, UNIT, _NO_ITEM_READ))

#: Sampling-free KS@N (``ub_core.logprob.ksn_logprob``): the model's whole answer distribution q, read from the
#: log-probabilities of every candidate answer, against the truth. ``p_pass@N`` is the probability that KS@N passes
#: at N i.i.d. answers from q, a rate: a problem with no mass on any valid answer (``no_mass``) or with malformed
#: log-probabilities (``bad_logprobs``: NaN, +inf, above 0, not numbers) scores 0, as the sampled run
#: fails it. Its standard error (Monte Carlo where the exact sum is too large) is recorded per problem.
#: The distances are undefined for those problems (left out of their means, counted by the two flags).
#: ``missing_mass`` is the reply probability the tree route (``ub_core.logprob.reply_tree``, Inspect
#: ``-T enumeration=tree|auto``) left unenumerated, a bound on its other values; for the listed route it is the
#: unlisted mass 1 - V: invalid replies or valid answers written otherwise, of unknown place.
_NO_Q = "no mass on any valid answer (no_mass) or malformed log-probabilities (bad_logprobs)"
KSN_LOGPROB_METRICS: tuple[MetricSpec, ...] = (
    _nanmean("valid_mass", "mass on well-formed answers", True, UNIT, "malformed log-probabilities (bad_logprobs)"),
    _nanmean("ks_distance", "KS distance", False, UNIT,
             _NO_Q + "; valid mass below 1e-3 (the distance of a vanishing law: ub_core.logprob.ksn_logprob."
                     "MIN_DISTANCE_MASS)"),
    # an unresolved problem's p_pass@N is NaN (left out, counted by ``unresolved``): lm-eval averages over the rest
    MetricSpec("p_pass", "P(KS@{n} passes)", True, "rate", per_n=True, lmeval_aggregation="nanmean"),
    _nanmean("jsd", "JSD", False, UNIT, _NO_Q + "; the tree route has no truth pmf"),
    _nanmean("entropy_ratio", "entropy ratio H(q)/H(p)", True, NONNEGATIVE,
             _NO_Q + "; the tree route has no truth pmf"),
    MetricSpec("no_mass", "no mass on any answer", False, "flag"),
    MetricSpec("bad_logprobs", "malformed log-probabilities", False, "flag"),
    MetricSpec("missing_mass", "unenumerated reply mass", False, "diagnostic", per_category=False,
               adapters=frozenset({"inspect"}), bounds=UNIT, why_undefined="malformed log-probabilities"),
    # p_pass bounds wider than the target when the route stopped: left out of every mean (NaN), counted here
    MetricSpec("unresolved", "bounds wider than the target (left out of the means)", False, "flag"),
)

#: "What are the odds" (the odds paper): question items (percentile and probability, task 1) score the absolute
#: error against the exact answer and against the nearest-shot baseline; sampling items (task 2) the KS statistic
#: of 1,000 values and KS@N at N = 10, 100, 1000. Inspect groups the headline errors by distribution family.
_UNPARSED = "the reply could not be parsed (parse_failed)"
ODDS_QUESTION_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("abs_error", "absolute error", False, group="family", bounds=NONNEGATIVE, why_undefined=_UNPARSED),
    MetricSpec("baseline_abs_error", "nearest-shot baseline error", False, per_category=False, bounds=NONNEGATIVE,
               why_undefined=_UNPARSED),
    MetricSpec("parse_failed", "unparsed replies", False, "count", per_category=False),
    # the odds paper's ± (Tables 1 and 2): lm-eval's per-document value is [distribution, abs_error] and the hook
    # takes the SE across distributions; Inspect reports it as a run metric (ub_inspect.metrics.distribution_se)
    MetricSpec("abs_error_dist_se", "SE across distributions", False, "diagnostic", per_category=False,
               adapters=frozenset({"lmeval"}), lmeval_aggregation="distribution_se"),
)
ODDS_SAMPLING_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("ks_stat", "KS statistic", False, group="family", bounds=UNIT, why_undefined="no valid value"),
    MetricSpec("ks", "KS@{n}", True, "rate", per_n=True, per_category=False, default_ns=ODDS_KS_NS),
    MetricSpec("n_valid", "valid values", True, "count", per_category=False),
    MetricSpec("n_failed", "failed replies", False, "count", per_category=False),
    MetricSpec("ks_stat_dist_se", "SE across distributions", False, "diagnostic", per_category=False,
               adapters=frozenset({"lmeval"}), lmeval_aggregation="distribution_se"),
)
#: The "Bad Dice Players" paper: per law, whether its test passes at alpha (p > alpha), the Wasserstein-1
#: distance to the law, the p-value itself, how many values were read and how far that is from the N asked
#: (``|n - N| / N``; batch replies rarely hold exactly N). ``ub_core.metrics.dice``.
DICE_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("passed", "pass rate (p > alpha)", True, "rate", group="tier"),
    MetricSpec("w1", "Wasserstein-1", False, group="tier", bounds=NONNEGATIVE, why_undefined="no valid value"),
    MetricSpec("p_value", "p-value", True, "diagnostic", per_category=False, bounds=UNIT,
               why_undefined="no valid value"),
    MetricSpec("n_values", "values read", True, "count", per_category=False),
    MetricSpec("count_error", "count error |n - N| / N", False, per_category=False, bounds=NONNEGATIVE),
)
#: Run-to-run stability (the non-determinism paper): total agreement of raw replies (TARr) and of parsed answers
#: (TARa) over N runs, the best, worst and median run accuracy, their spread (best - worst) and the share of
#: unreadable replies. Inspect computes them over epochs with its own metrics (``ub_inspect.stability.scorer``).
STABILITY_METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("tar_r", "TARr", True, "rate"), MetricSpec("tar_a", "TARa", True, "rate"),
    MetricSpec("best_acc", "best run accuracy", True, "rate"),
    MetricSpec("worst_acc", "worst run accuracy", True, "rate"),
    MetricSpec("acc", "accuracy", True, "rate"),
    MetricSpec("median_acc", "median run accuracy", True, "rate", lmeval_aggregation="median_run_accuracy"),
    MetricSpec("acc_spread", "accuracy spread (best - worst)", False, lmeval_aggregation="run_accuracy_spread",
               bounds=UNIT),
    MetricSpec("parse_failure_rate", "unreadable replies", False, lmeval_aggregation="unreadable_rate",
               bounds=UNIT),
)

#: eval family name -> its metric spec (the names adapters and results use: lm-eval metric lists, Inspect scorers)
_SPECS_BY_EVAL_FAMILY = {"ksn": KSN_METRICS, "ksn_logprob": KSN_LOGPROB_METRICS,
                         "odds_question": ODDS_QUESTION_METRICS, "odds_sampling": ODDS_SAMPLING_METRICS,
                         "stability": STABILITY_METRICS, "calibration": CALIBRATION_METRICS,
                         "implicit": IMPLICIT_METRICS, "explicit": EXPLICIT_METRICS, "dice": DICE_METRICS}


#: Each eval family's headline: the one number a run is summarised and ranked by (Inspect shows it as the run's score).
#: KS@100 (UnpredictaBench, sec. 3.3), P(KS@100 passes) for the sampling-free route, the odds paper's MAE (question
#: items) and mean KS statistic (sampling items), WD (the numeric-calibration paper's measure of calibration, sec.
#: 3.2: "To measure calibration, we use WD"; PM, the mass on the options, is its precondition and is 1.0 for the
#: oracle and a collapsed model alike, where WD is 0 and 0.71), the
#: mean Chebyshev distance (the implicit-reasoning paper's summary statistic), MCQ accuracy (its explicit twin),
#: and TARa (the non-determinism paper's agreement of parsed answers).
HEADLINES: dict[str, str] = {"ksn": per_n_key("ks", 100), "ksn_logprob": per_n_key("p_pass", 100),
                             "odds_question": "abs_error", "odds_sampling": "ks_stat", "calibration": "wd",
                             "implicit": "chebyshev",
                             "explicit": "mcq_acc", "stability": "tar_a", "dice": "passed"}


#: The eval families whose scoring calls a spec entry's ``compute`` (:func:`ub_core.ksn_scoring.score_values`);
#: elsewhere a ``compute`` could not be honoured, so it is refused.
_COMPUTING_FAMILIES = frozenset({"ksn"})
#: The keys each family had before any :func:`register_metric` (those cannot be unregistered).
_BUILT_IN = {family: frozenset(m.key for m in specs) for family, specs in _SPECS_BY_EVAL_FAMILY.items()}


def _check_family(eval_family: str, specs: tuple[MetricSpec, ...]) -> None:
    """What no adapter could honour is an error here, when the spec is built, never a silent wrong number."""
    seen: set[str] = set()
    for m in specs:
        if m.key in seen:
            raise ValueError(f"{eval_family}: metric {m.key!r} is declared twice")
        seen.add(m.key)
        if m.compute is not None and eval_family not in _COMPUTING_FAMILIES:
            raise ValueError(f"{eval_family}: {m.key!r} has a compute function, but only the "
                             f"{', '.join(sorted(_COMPUTING_FAMILIES))} scoring calls one")
        if m.compute is not None and m.source != "score":
            raise ValueError(f"{eval_family}: {m.key!r} has a compute function but source {m.source!r}")


for _family, _specs in _SPECS_BY_EVAL_FAMILY.items():
    _check_family(_family, _specs)


def register_metric(eval_family: str, spec: MetricSpec) -> MetricSpec:
    """Add ``spec`` to ``eval_family``'s spec (after the built-in entries). An unscoped spec is the project's own: from
    then on every adapter reports it in every run (Inspect's ``Score.value`` and metrics, lm-eval's results once the
    YAML lists are rewritten with ``python -m ub_lmeval.metric_lists --write``, ``ub score``). A scoped one
    (``bank=``, ``family=``) is reported in the runs of its scope only (:meth:`MetricSpec.in_scope`); a lab's package
    declares it as an entry point instead (:data:`ub_core.plugins.METRICS_GROUP`). A spec that cannot be honoured
    (a second entry with the same key, a ``compute`` outside the ksn family or with the wrong signature) is a
    ValueError."""
    if eval_family not in _SPECS_BY_EVAL_FAMILY:
        metric_specs(eval_family)  # the one-line KeyError
    specs = (*_SPECS_BY_EVAL_FAMILY[eval_family], spec)
    _check_family(eval_family, specs)
    _SPECS_BY_EVAL_FAMILY[eval_family] = specs
    return spec


def unregister_metric(eval_family: str, key: str) -> None:
    """Remove a metric added by :func:`register_metric` (a built-in one is a ValueError)."""
    if key in _BUILT_IN.get(eval_family, ()):
        raise ValueError(f"{key!r} is a built-in metric of {eval_family}")
    _SPECS_BY_EVAL_FAMILY[eval_family] = tuple(m for m in metric_specs(eval_family) if m.key != key)


#: the metrics of installed plug-ins registered so far (key -> spec), each in the ksn spec
_PLUGIN_METRICS: dict[str, MetricSpec] = {}


def _check_plugin_metric(spec: MetricSpec) -> None:
    """A plug-in's metric belongs to a plug-in's bank or family (:func:`ub_core.plugins.check_scope`), so that it
    changes no run of another bank, and has the compute the scoring calls."""
    from .plugins import check_scope

    check_scope(f"metric {spec.key!r}", spec.bank, spec.family)
    if spec.compute is None or spec.source != "score":
        raise ValueError(f"metric {spec.key!r} needs a compute function (the scoring calls it)")
    register_metric("ksn", spec)


_DISCOVERING: list[bool] = []  # a plug-in's module may ask for a spec while it is being loaded


def _discover_metrics() -> None:
    from . import plugins

    if _DISCOVERING:
        return
    _DISCOVERING.append(True)
    try:
        plugins.discover(plugins.METRICS_GROUP, MetricSpec, _PLUGIN_METRICS,
                         lambda spec: (_check_plugin_metric(spec), _PLUGIN_METRICS.__setitem__(spec.key, spec)))
    finally:
        _DISCOVERING.clear()


def forget_plugin_metrics() -> None:
    """Unregister every plug-in metric (a test that installed a plug-in cleans up with it)."""
    for key in list(_PLUGIN_METRICS):
        del _PLUGIN_METRICS[key]
        _SPECS_BY_EVAL_FAMILY["ksn"] = tuple(m for m in _SPECS_BY_EVAL_FAMILY["ksn"] if m.key != key)


def metric_specs(eval_family: str) -> tuple[MetricSpec, ...]:
    """The spec of ``eval_family`` (a one-line KeyError for an unknown eval family); per-N entries once, as
    templates (:meth:`MetricSpec.at`); scoped entries (a plug-in's) too, after the others."""
    if eval_family in _COMPUTING_FAMILIES:
        _discover_metrics()
    try:
        return _SPECS_BY_EVAL_FAMILY[eval_family]
    except KeyError:
        raise KeyError(f"no metric spec for {eval_family!r}; known: {', '.join(_SPECS_BY_EVAL_FAMILY)}") from None


def run_specs(eval_family: str, ns=None, adapter: str | None = None, source: str | None = None, *,
              bank: str | None = None, families=()) -> list[tuple[str, MetricSpec]]:
    """``(key, spec)`` for every metric of ``eval_family`` a run reports, in spec order: a per-N entry stands for
    ``<prefix>@N`` at each of the run's ``ns`` (its ``default_ns`` when ``ns`` is None), each its
    :meth:`MetricSpec.at`. ``adapter`` keeps the metrics that adapter reports, ``source`` those with that source;
    a scoped entry (a plug-in's) is kept only for a run of its ``bank`` (or whose problems' distribution
    ``families`` include its family). A scorer asks this for every sample: the answer is kept per arguments while
    the eval family's spec is the same object (a registration replaces it), and each call gets its own list."""
    specs = metric_specs(eval_family)
    ns = None if ns is None else tuple(int(n) for n in ns)
    families = tuple(sorted({str(f) for f in families}))
    key = (eval_family, ns, adapter, source, bank, families)
    hit = _RUN_SPECS.get(key)
    if hit is not None and hit[0] is specs:
        return list(hit[1])
    out = _run_specs(tuple(m for m in specs if m.in_scope(bank, families)), ns, adapter, source)
    if len(_RUN_SPECS) >= 256:
        _RUN_SPECS.clear()
    _RUN_SPECS[key] = (specs, tuple(out))
    return out


_RUN_SPECS: dict[tuple, tuple[tuple[MetricSpec, ...], tuple[tuple[str, MetricSpec], ...]]] = {}


def _run_specs(specs: tuple[MetricSpec, ...], ns, adapter: str | None,
               source: str | None) -> list[tuple[str, MetricSpec]]:
    out: list[tuple[str, MetricSpec]] = []
    for m in specs:
        if (adapter is not None and adapter not in m.adapters) or (source is not None and m.source != source):
            continue
        if not m.per_n:
            out.append((m.key, m))
            continue
        for n in sorted({int(n) for n in (m.default_ns if ns is None else ns)}):
            at = m.at(n)
            out.append((at.key, at))
    return out


def metric_keys(eval_family: str, adapter: str | None = None, ns=None, *, bank: str | None = None,
                families=()) -> tuple[str, ...]:
    """The score keys of ``eval_family`` in spec order (per-N ones at ``ns``, default each entry's
    ``default_ns``); with ``adapter``, only the metrics that adapter reports; scoped ones for ``bank`` and
    ``families`` only (:func:`run_specs`)."""
    return tuple(key for key, _ in run_specs(eval_family, ns, adapter=adapter, bank=bank, families=families))


def as_metric_value(spec: MetricSpec, value):
    """One problem's value as the frameworks average it: a flag 1.0 or 0.0; an undefined value (None, NaN) the
    spec's ``missing_value`` (a rate's fail), else NaN; anything else unchanged."""
    if spec.kind == "flag":
        return 1.0 if value else 0.0
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return float("nan") if spec.missing_value is None else spec.missing_value
    return value


def values_without_data(eval_family: str, ns=None) -> dict[str, float]:
    """Every ``score`` key of ``eval_family`` (per-N ones at ``ns``), in spec order, with the value of a problem that
    has no valid value to score: each spec's ``missing_value`` (a rate's fail, 0.0), else NaN; flags 0.0 (the
    scorer raises the one that says why)."""
    return {key: 0.0 if spec.kind == "flag" else math.nan if spec.missing_value is None else spec.missing_value
            for key, spec in run_specs(eval_family, ns, source="score")}


def fill_missing_rates(eval_family: str, values: dict) -> dict:
    """``values`` (one problem's score, read from a log) with every rate that is undefined there (None, NaN: a log
    where a problem with no valid answer has no ``p_pass@N``) set to its spec's
    ``missing_value``; unknown eval families and other keys unchanged. A new dict."""
    out = dict(values)
    if eval_family not in _SPECS_BY_EVAL_FAMILY:
        return out
    for key, value in values.items():
        spec = find_metric(eval_family, key)
        if spec is None or spec.kind != "rate" or spec.missing_value is None:
            continue
        if value is None or (isinstance(value, float) and math.isnan(value)):
            out[key] = spec.missing_value
    return out


#: the spec eval families a report eval family spans (``ub report`` shows the odds question and sampling items in
#: one section); any other report eval family is its own spec eval family
REPORT_SPEC_FAMILIES: dict[str, tuple[str, ...]] = {"odds": ("odds_question", "odds_sampling")}


def find_metric(eval_family: str, key: str) -> MetricSpec | None:
    """The spec of ``key`` (``ks@100``: the per-N entry ``ks`` at 100, any N) in ``eval_family``, or None when the
    eval family has no such metric."""
    prefix, n = split_key(key)
    for m in (metric_specs(eval_family) if eval_family in _SPECS_BY_EVAL_FAMILY else ()):
        if n is None and not m.per_n and m.key == key:
            return m
        if n is not None and m.per_n and m.key == prefix:
            return m.at(n)
    return None


def left_out_reason(spec: MetricSpec) -> str | None:
    """Why a problem can be left out of ``spec``'s mean (None for a metric that every problem has)."""
    if spec.aggregation != "nanmean":
        return None
    return spec.why_undefined or "undefined value"


def direction(spec: MetricSpec | None) -> bool | None:
    """What a dashboard ranks by: True (higher is better), False (lower is better), None (two-sided, such as RE; a
    diagnostic; an unknown metric: do not rank)."""
    if spec is None or not spec.ranked or spec.kind == "diagnostic":
        return None
    return spec.higher_is_better


def headline(eval_family: str) -> MetricSpec:
    """The spec of ``eval_family``'s headline metric (:data:`HEADLINES`)."""
    metric_specs(eval_family)  # a one-line KeyError for an unknown eval family
    return metric(eval_family, HEADLINES[eval_family])


def metric(eval_family: str, key: str) -> MetricSpec:
    """The spec of one metric (:func:`find_metric`); a one-line KeyError for an unknown key."""
    spec = find_metric(eval_family, key)
    if spec is None:
        raise KeyError(f"no metric {key!r} in the {eval_family} spec")
    return spec
