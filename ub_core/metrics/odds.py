"""Metrics of "What are the odds" (the odds paper): absolute error and MAE, the nearest-shot baseline, the KS statistic
of sampled values, per-item scores and grouped summaries.

Units: errors are in **percentage points** for both question types (a probability error is ``100 |p_hat - p|``),
as the odds paper's Table 1 reports MAE in % for percentiles and probabilities alike. A reply that cannot be read is
not given an error: it is counted as a parse failure and left out of the MAE (its ``abs_error`` is NaN).

Public names: :func:`absolute_error`, :func:`mae`, :func:`nearest_shot_answer`, :func:`ks_statistic`,
:func:`across_distributions`, :func:`parse_percentile`, :func:`parse_probability`, :func:`odds_item_scores`,
:func:`summarize_odds`, :data:`ODDS_KS_NS`.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from scipy import stats

from .intervals import summarize_values
from .sampling import ks_at_n
from ..metric_keys import per_n_key
from ..parsing.odds import parse_percentile, parse_probability  # noqa: F401  (re-exported: the odds scorers' readers)

__all__ = ["ODDS_KS_NS", "absolute_error", "mae", "nearest_shot_answer", "ks_statistic", "across_distributions",
           "parse_percentile",
           "parse_probability", "odds_item_scores", "summarize_odds"]

#: The N of KS@N for the sampling task (1,000 draws per problem, the odds paper's sec. 3 task 2).
ODDS_KS_NS: tuple[int, ...] = (10, 100, 1000)


def _finite(x: Any, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {x!r}")
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def absolute_error(predicted: float, truth: float) -> float:
    """``|predicted - truth|`` (the odds paper, sec. 6.1: the per-answer error behind the MAE)."""
    return abs(_finite(predicted, "predicted") - _finite(truth, "truth"))


def mae(predicted: Sequence[float], truth: Sequence[float]) -> float:
    """Mean absolute error ``(1/n) sum_i |predicted_i - truth_i|`` over n >= 1 pairs (the odds paper, sec. 6.1 and
    Table 1)."""
    p = np.asarray(predicted, dtype=float).reshape(-1)
    t = np.asarray(truth, dtype=float).reshape(-1)
    if p.size == 0 or p.size != t.size:
        raise ValueError(f"mae needs equally long, non-empty inputs, got {p.size} and {t.size}")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(t))):
        raise ValueError("mae: inputs must be finite")
    return float(np.mean(np.abs(p - t)))


def nearest_shot_answer(value: float | Sequence[float], shot_values: Sequence[Any],
                        shot_answers: Sequence[float]) -> float | None:
    """The nearest-shot baseline (the odds paper, sec. 5.1 and Fig. 4): the answer of the in-context example whose
    question is nearest to this one, with no interpolation.

    ``value`` is the asked value (percentile task) or the interval ``(lo, hi)`` (probability task); the distance
    to shot i is ``sum_j |value_j - shot_values[i]_j|``. Ties go to the smaller answer. ``None`` without shots.
    """
    if len(shot_values) != len(shot_answers):
        raise ValueError(f"{len(shot_values)} shot values but {len(shot_answers)} shot answers")
    if not shot_values:
        return None
    def coords(v: Any) -> tuple[float, ...]:
        return tuple(float(x) for x in v) if isinstance(v, (list, tuple, np.ndarray)) else (float(v),)

    target = coords(value)
    best = None
    for sv, sa in zip(shot_values, shot_answers):
        c = coords(sv)
        if len(c) != len(target):
            raise ValueError(f"shot value {sv!r} does not match the question value {value!r}")
        key = (sum(abs(x - y) for x, y in zip(c, target)), float(sa))
        if best is None or key < best:
            best = key
    return best[1]


def ks_statistic(values: Sequence[float], truth: Sequence[float]) -> float:
    """Two-sample Kolmogorov-Smirnov statistic ``D = sup_x |F_values(x) - F_truth(x)|`` (the odds paper, Table 1,
    "Sampling (K-S)"); ties are handled exactly (both empirical CDFs are right-continuous)."""
    a = np.asarray(values, dtype=float).reshape(-1)
    b = np.asarray(truth, dtype=float).reshape(-1)
    if a.size == 0 or b.size == 0:
        raise ValueError("ks_statistic needs two non-empty samples")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("ks_statistic: samples must be finite")
    return float(stats.ks_2samp(a, b, method="asymp").statistic)


def across_distributions(values_by_distribution: Mapping[Any, Iterable[Any]]) -> dict[str, Any]:
    """The odds paper's summary of a group of distributions (Table 1: per task; Table 2: per domain and context):
    the mean over its k distributions of each distribution's mean score ``m_i`` (its MAE, or its KS statistic), and
    the standard error of that mean across distributions,

        mean = (1/k) sum_i m_i,    SE = s / sqrt(k),    s^2 = sum_i (m_i - mean)^2 / (k - 1)   (ddof 1),

    which the paper prints as "MAE ± Standard Error (σM)" (Tables 1 and 2, sec. 6; the release's tutorial takes
    ``scipy.stats.sem`` of the per-distribution MAEs). NaN and infinite entries (parse failures) are left out of a
    distribution's mean; a distribution with no finite entry is left out and counted in ``empty``. ``se`` is NaN
    for fewer than two distributions. Returns ``{"mean", "se", "distributions", "empty"}``."""
    means, empty = [], 0
    for vals in values_by_distribution.values():
        arr = np.asarray([float(v) for v in vals if isinstance(v, (int, float, np.integer, np.floating))
                          and not isinstance(v, bool)], dtype=float)
        arr = arr[np.isfinite(arr)]
        if arr.size:
            means.append(float(arr.mean()))
        else:
            empty += 1
    k = len(means)
    m = np.asarray(means, dtype=float)
    return {"mean": float(m.mean()) if k else math.nan,
            "se": float(m.std(ddof=1) / math.sqrt(k)) if k >= 2 else math.nan,
            "distributions": k, "empty": empty}


# ------------------------------------------------------------------------------------------------ per item

def _as_replies(reply: Any) -> list:
    if isinstance(reply, (list, tuple, np.ndarray)):
        return list(reply)
    return [reply]


def odds_item_scores(item: Any, reply: Any, *, ns: Sequence[int] = ODDS_KS_NS, truth: Any = None,
                     truth_size: int = 10_000, truth_seed: int = 0, list_size: int = 1) -> dict[str, float]:
    """Score one odds item (the odds paper, sec. 6.1).

    Percentile and probability items (``reply``: one text or number): ``answer`` (the parsed answer, NaN on
    failure), ``abs_error = 100^[probability] |answer - exact|`` in percentage points, ``baseline_abs_error``
    (the nearest-shot baseline's error; NaN without shots), ``n_valid``/``n_failed`` (1/0) and ``parse_failed``.

    Sampling items (``reply``: the replies, each a text (a list reply ``{a, b, ...}`` when ``list_size`` > 1, as
    list prompting asks) or an already-parsed number): ``ks_stat`` (KS statistic of all valid values against
    ``truth_size`` ground-truth draws; NaN without values), ``ks@N`` (1.0 when the first N values pass the KS test at
    p >= 1e-4, UnpredictaBench's KS@N), ``n_valid``, ``n_failed``.
    """
    meta = item.metadata
    task = meta.get("task")
    if task in ("percentile", "probability"):
        replies = _as_replies(reply)
        if len(replies) != 1:
            raise ValueError(f"{item.id}: a {task} item takes one reply, got {len(replies)}")
        parse = parse_percentile if task == "percentile" else parse_probability
        scale = 1.0 if task == "percentile" else 100.0
        res = parse(replies[0])
        exact = float(meta["answer"])
        baseline = meta.get("baseline_answer")
        out = {"answer": float(res.value) if res.ok else math.nan,
               "abs_error": scale * absolute_error(res.value, exact) if res.ok else math.nan,
               "baseline_abs_error": math.nan if baseline is None else scale * absolute_error(baseline, exact),
               "n_valid": 1.0 if res.ok else 0.0, "n_failed": 0.0 if res.ok else 1.0,
               "parse_failed": 0.0 if res.ok else 1.0}
        return out
    if task == "sampling":
        values: list[float] = []
        n_failed = 0
        for r in _as_replies(reply):
            if isinstance(r, str) and list_size > 1:  # list prompting: every value of the reply counts
                vals, errs = item.parse_many(r)
            elif isinstance(r, str):
                res = item.parse(r)
                vals, errs = ([float(res.value)], []) if res.ok else ([], [res.error or "unparseable"])
            else:
                vals, errs = item.check_values([r])
            values.extend(vals)
            n_failed += len(errs)
        if truth is None:
            truth = item.truth(size=truth_size, seed=truth_seed)
        out = {"ks_stat": ks_statistic(values, truth) if values else math.nan}
        ks = ks_at_n(np.asarray(values, dtype=float), truth, ns=ns, support=item.support)
        for n in ns:
            out[per_n_key("ks", n)] = 1.0 if ks[n]["pass"] else 0.0
        out["n_valid"] = float(len(values))
        out["n_failed"] = float(n_failed)
        return out
    raise ValueError(f"{getattr(item, 'id', item)!r} is not an odds item (metadata task {task!r})")


# ------------------------------------------------------------------------------------------------ summaries

def summarize_odds(rows: Iterable[Mapping[str, Any]], metric: str = "abs_error",
                   by: Sequence[str] = ("family", "shots", "context"), confidence: float = 0.95) -> dict[str, Any]:
    """MAE (or the mean of ``metric``) overall and grouped by family, shot count and context, each with a
    t interval over items (:func:`~ub_core.metrics.mean_interval`) and, beside it, the paper's uncertainty: the mean and
    standard error across the group's distributions (:func:`across_distributions`; the odds paper, Tables 1 and 2, which
    report these groupings, as do Fig. 4 and Table 2's domains).

    ``rows`` are per-item dicts holding ``metric``, the grouping keys and ``distribution`` (the item's distribution,
    as Score metadata / lm-eval docs have them; rows without it count as one distribution each). NaN entries
    (parse failures, a baseline without shots) are dropped and counted in ``dropped``.
    Returns ``{"overall": {...}, "by_family": {name: {...}}, "by_shots": {...}, "by_context": {...}}``, each
    ``{...}`` being :func:`~ub_core.metrics.summarize_values`' ``{"mean", "low", "high", "n", "dropped"}`` plus
    ``distribution_mean``, ``distribution_se`` and ``distributions``.
    """
    rows = list(rows)
    kw = dict(confidence=confidence)

    def summary(group: list) -> dict[str, Any]:
        out = summarize_values([r.get(metric) for r in group], **kw)
        by_dist: dict[Any, list] = {}
        for i, r in enumerate(group):
            by_dist.setdefault(r.get("distribution", ("row", i)), []).append(r.get(metric))
        across = across_distributions(by_dist)
        out.update(distribution_mean=across["mean"], distribution_se=across["se"],
                   distributions=across["distributions"])
        return out

    out: dict[str, Any] = {"metric": metric, "overall": summary(rows)}
    for key in by:
        groups: dict[Any, list] = {}
        for r in rows:
            groups.setdefault(r.get(key), []).append(r)
        out[f"by_{key}"] = {g: summary(v) for g, v in sorted(groups.items(), key=lambda kv: str(kv[0]))}
    return out
