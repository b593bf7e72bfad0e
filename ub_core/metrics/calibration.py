"""Numeric calibration metrics (the numeric-calibration paper): probability mass, Wasserstein distance to the ideal,
relative entropy, reference behaviours and baselines.

The input of every scorer is ``option_mass``: for each option of a
:class:`~ub_core.problems.option_item.OptionItem`, the summed next-token probability of its surface variants
("red", " red", "Red", " Red"; the numeric-calibration paper, section 3.1). The framework adapters compute it. These
functions check it and reduce it.

How the paper's numbers pin down WD
-----------------------------------
The numeric-calibration paper (section 3.2) computes WD with SciPy's ``wasserstein_distance_nd``. Table 2 (51 purple vs
98 white, ideal (0.342, 0.658)) shows these values:

- Pick First (1, 0) has WD 0.93;
- Pick Second (0, 1) has WD 0.48;
- Null (0, 0) has WD 0.74.

The Appendix K model rows reproduce only when WD is computed on the **raw** option masses, not the normalised ones.
For example, Mistral-7B-v0.1 has (0.698, 0.024) and WD 0.727. These numbers are the Euclidean distance between the
mass vector and the ideal vector: ``wasserstein_distance_nd([m], [q])`` treats each vector as a single point in
R^k, so the optimal transport is the point-to-point distance. For two options this is sqrt(2)·|m1 − q1| when
m sums to 1. The options are not placed on a line, by index or by value; the distributions task is scored the
same way. :func:`wasserstein_to_ideal` follows the paper by default. ``positions=`` gives the one-dimensional
ground-metric W1 instead, which is an extension and not the paper's number.

RE is computed on the normalised distribution. For Llama-3.1-8B, (0.687, 0.279) gives RE −0.060 only after
normalising.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .intervals import clustered_interval

__all__ = [
    "BEHAVIOURS",
    "probability_mass",
    "normalised_distribution",
    "wasserstein_to_ideal",
    "relative_entropy_bits",
    "entropy_bits",
    "compatible_behaviours",
    "classify_behaviour",
    "calibration_item_scores",
    "calibration_baselines",
    "summarize_calibration",
    "grid_behaviour_rates",
    "UNDETERMINED",
    "EQUAL_COUNTS",
    "check_equal_counts",
    "has_equal_counts",
    "calibration_item_set",
]

#: Reference behaviours (the numeric-calibration paper, section 3.5), in tie-break order.
BEHAVIOURS: tuple[str, ...] = ("null", "calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second")

# Option masses are sums of probabilities of disjoint tokens, so they add up to at most 1. The slack absorbs
# float32 softmax rounding in the adapters.
_MASS_SLACK = 1e-4
# Behaviour references that coincide on an item (Pick First = Pick Higher when the first count is higher) are at
# identical distances; anything closer than this is a tie.
_TIE = 1e-12
# Appendix G: a set of results whose mean PM is below 0.5 is Null.
NULL_PM = 0.5


# ------------------------------------------------------------------------------------------------ validation
# Items have 2 to 10 options and the full bank has 203,040 items, so the per-item path works on plain Python
# lists: numpy's per-call overhead on 2-element arrays would dominate.

def _vector(x: Any, name: str) -> list[float]:
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{name} must be a non-empty one-dimensional sequence, got shape {x.shape}")
        x = x.tolist()
    elif isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        raise ValueError(f"{name} must be a sequence of numbers")
    try:
        out = [float(v) for v in x]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers") from None
    if not out:
        raise ValueError(f"{name} must be a non-empty one-dimensional sequence")
    for v in out:
        if not math.isfinite(v):
            raise ValueError(f"{name} contains NaN or infinite values")
        if v < 0:
            raise ValueError(f"{name} contains a negative value ({v!r})")
    return out


def _mass(option_mass: Any, name: str = "option_mass") -> list[float]:
    m = _vector(option_mass, name)
    total = math.fsum(m)
    if total > 1.0 + _MASS_SLACK:
        raise ValueError(f"{name} sums to {total:.6g} > 1; it must hold probabilities of disjoint tokens")
    return m


def _ideal(ideal: Any, k: int | None = None) -> list[float]:
    q = _vector(ideal, "ideal")
    if k is not None and len(q) != k:
        raise ValueError(f"length mismatch: {k} predicted values but {len(q)} ideal values")
    total = math.fsum(q)
    if not math.isclose(total, 1.0, abs_tol=1e-6):
        raise ValueError(f"ideal must sum to 1, got {total:.6g}")
    return q


def _euclid(a: Sequence[float], b: Sequence[float]) -> float:
    return math.sqrt(math.fsum((x - y) ** 2 for x, y in zip(a, b)))


def _entropy(p: Sequence[float]) -> float:
    return -math.fsum(v * math.log2(v) for v in p if v > 0)


# ------------------------------------------------------------------------------------------------ metrics

def probability_mass(option_mass: Any) -> float:
    """PM, the total probability on the valid options (the numeric-calibration paper, section 3.2).

    ``PM = sum_i m_i``, where ``m_i = sum_{v in variants(i)} P(v | prompt)`` (section 3.1). It lies in [0, 1]; low PM
    means the model mostly continues with something other than an option.
    """
    return math.fsum(_mass(option_mass))


def _normalised(m: list[float]) -> list[float]:
    total = math.fsum(m)
    if total <= 0.0:
        raise ValueError("probability mass on the options is 0, so the normalised distribution is undefined")
    return [v / total for v in m]


def normalised_distribution(option_mass: Any) -> np.ndarray:
    """The model's distribution over the options, ``p_i = m_i / PM`` (the numeric-calibration paper, section 3.1).
    ValueError when PM is 0, where the distribution is undefined (Table 2's Null row has RE "n/a")."""
    return np.asarray(_normalised(_mass(option_mass)))


def wasserstein_to_ideal(predicted: Any, ideal: Any, positions: Any = None) -> float:
    """WD between the model's option probabilities and the ideal distribution (the numeric-calibration paper, section
    3.2, Table 2).

    The paper's definition (``positions=None``) is ``scipy.stats.wasserstein_distance_nd([m], [q])``. That is the
    optimal transport between two single points of R^k, so it equals the Euclidean distance

        WD = sqrt( sum_i (m_i - q_i)^2 ).

    ``predicted`` should be the raw option masses. The paper does not normalise them: the Null reference (0, 0)
    scores 0.74 against (0.342, 0.658), and its model rows match only raw masses. See the module docstring.

    With ``positions`` (the options' places on a line: their numeric values, or their indices), the result is the
    one-dimensional W1 between ``predicted / sum(predicted)`` and ``ideal`` on those positions,
    ``sum_j |F_m(x_j) - F_q(x_j)| (x_{j+1} - x_j)`` over the sorted positions. This ground-metric variant is an
    extension and not the paper's number.
    """
    m = _mass(predicted, "predicted")
    q = _ideal(ideal, len(m))
    if positions is None:
        return _euclid(m, q)
    x = np.asarray(positions, dtype=float)
    if x.ndim != 1 or x.size != len(m):
        raise ValueError(f"length mismatch: {len(m)} probabilities but {x.size} positions")
    if not np.all(np.isfinite(x)):
        raise ValueError("positions contain NaN or infinite values")
    order = np.argsort(x, kind="stable")
    p = np.asarray(_normalised(m))[order]
    x, qa = x[order], np.asarray(q)[order]
    cdf_gap = np.abs(np.cumsum(p) - np.cumsum(qa))[:-1]
    return float(np.sum(cdf_gap * np.diff(x)))


def entropy_bits(p: Any) -> float:
    """Shannon entropy in bits, ``H(p) = -sum_i p_i log2 p_i`` with ``0 log 0 = 0``. ``p`` must sum to 1."""
    return _entropy(_ideal(p))


def relative_entropy_bits(predicted: Any, ideal: Any) -> float:
    """RE = H(model) - H(ideal), in bits (the numeric-calibration paper, section 3.2).

    ``H(model)`` is the entropy of the normalised option distribution ``m / PM``. ``predicted`` may be the raw
    masses. RE < 0 means the model is more concentrated than the ideal (mode collapse), and RE > 0 means it is more
    diffuse. ValueError when PM is 0.
    """
    m = _mass(predicted, "predicted")
    q = _ideal(ideal, len(m))
    return _entropy(_normalised(m)) - _entropy(q)


# ------------------------------------------------------------------------------------------------ behaviours

def _references(q: list[float], higher: int | None, first: int) -> dict[str, list[float]]:
    refs = {"null": [0.0, 0.0], "calibrated": q}
    if higher is not None:
        refs["pick_higher"] = _one_hot(2, higher)
        refs["pick_lower"] = _one_hot(2, 1 - higher)
    refs["pick_first"] = _one_hot(2, first)
    refs["pick_second"] = _one_hot(2, 1 - first)
    return refs


def _check_pair(m: list[float], higher: int | None, first: int) -> None:
    if len(m) != 2:
        raise ValueError(f"reference behaviours are defined for two options, got {len(m)}")
    if higher is not None and higher not in (0, 1):
        raise ValueError(f"higher must be 0, 1 or None, got {higher!r}")
    if first not in (0, 1):
        raise ValueError(f"first must be 0 or 1, got {first!r}")


def compatible_behaviours(option_mass: Any, ideal: Any, *, higher: int | None = None,
                          first: int = 0) -> tuple[str, ...]:
    """The reference behaviours that this item's output is compatible with (the numeric-calibration paper, section 3.5,
    Appendix G), in :data:`BEHAVIOURS` order.

    The references are vectors over the two options, compared with the raw masses ``m`` by the paper's WD (the
    Euclidean distance):

    - null: (0, 0);
    - calibrated: the ideal q;
    - pick_higher and pick_lower: all mass on the option with the higher or lower count (only when the counts
      differ, i.e. ``higher`` is not None);
    - pick_first and pick_second: all mass on the option mentioned first or second.

    The compatible set holds every reference at the minimum distance, within 1e-12. References that coincide on
    this item, such as Pick First and Pick Higher when the first count is higher, are therefore all compatible.
    Section 3.5 notes that one instance cannot tell them apart.

    Rule we chose: an item with PM < 0.5 is Null only. Appendix G applies this threshold to the mean PM of a grid
    of results. We also apply it per item, so "null" is never compatible alongside another behaviour.
    ``higher`` and ``first`` are option indices.
    """
    m = _mass(option_mass)
    q = _ideal(ideal, len(m))
    _check_pair(m, higher, first)
    return _compatible_checked(m, q, higher, first)


def _compatible_checked(m: list[float], q: list[float], higher: int | None, first: int) -> tuple[str, ...]:
    if m[0] + m[1] < NULL_PM:
        return ("null",)
    dist = {b: _euclid(m, r) for b, r in _references(q, higher, first).items()}
    best = min(dist.values())
    return tuple(b for b in BEHAVIOURS if b in dist and dist[b] <= best + _TIE)


def classify_behaviour(option_mass: Any, ideal: Any, *, higher: int | None = None, first: int = 0) -> str:
    """One reference behaviour for one item (the numeric-calibration paper, section 3.5): the nearest reference by WD.

    The rule is that of :func:`compatible_behaviours`. A tie goes to the earliest name in :data:`BEHAVIOURS`
    (null, calibrated, pick_higher, pick_lower, pick_first, pick_second). Caveat: a single label cannot tell
    coinciding references apart, so a pure Pick First model is labelled pick_higher on the items where the first
    count is higher. The paper's behaviour proportions therefore come from compatibility rates over balanced grids
    (``summarize_calibration``'s ``grid_behaviour_rates``), not from these labels.
    """
    return compatible_behaviours(option_mass, ideal, higher=higher, first=first)[0]


# ------------------------------------------------------------------------------------------------ item scores

def _item_indices(item: Any) -> tuple[int | None, int]:
    meta = item.metadata or {}
    options = list(item.options)
    higher = meta.get("higher")
    first = meta.get("first", options[0])
    return (options.index(higher) if higher in options else None,
            options.index(first) if first in options else 0)


def _grid_key(item: Any) -> str:
    """The grid over which behaviours are rated: category and ordered option pair (``colors|red>blue``).

    Appendix G rates each (template, scale, ordered pair) grid of 100 number pairs. We pool templates and scales
    for two reasons. In the subset, one such grid holds 1 to 3 items, too few to tell Pick First from Pick Higher.
    In the full edition, the pooled grid is the colour-pair cell of Figure 2, averaged over its 15 panels."""
    return f"{item.category}|{'>'.join(item.options)}"


def calibration_item_scores(item: Any, option_mass: Any) -> dict[str, Any]:
    """Scores of one calibration item from its option masses (the numeric-calibration paper, sections 3.2 and 3.5).

    Returns the following keys:

    - ``pm``: :func:`probability_mass`.
    - ``wd``: :func:`wasserstein_to_ideal` of the raw masses, as the paper computes it.
    - ``re``: :func:`relative_entropy_bits`. It is NaN when PM is 0 (the paper's "n/a"); summaries drop and count
      these.
    - ``behaviour``: :func:`classify_behaviour` for two-option items, and None for items with more options (most
      distributions items).
    - ``compatible``: the list from :func:`compatible_behaviours` (empty when ``behaviour`` is None).
    - ``grid``: the set of results over which behaviours are rated: category and ordered option pair (see
      ``_grid_key``). :func:`summarize_calibration` uses it.
    - ``higher_first``: whether the option with the higher count is mentioned first (None for equal counts);
      :func:`grid_behaviour_rates` needs it to tell a balanced grid.

    ``item`` is a OptionItem; its ``metadata`` says which option has the higher count and which is mentioned first.
    """
    m = _mass(option_mass)
    q = _ideal(item.probabilities, None)
    if len(m) != len(q):
        raise ValueError(f"{item.id}: length mismatch: {len(m)} option masses for {len(q)} options")
    higher, first = _item_indices(item)
    return _scores_checked(m, q, _entropy(q), higher, first, _grid_key(item))


def _higher_first(higher: int | None, first: int) -> bool | None:
    """Whether the option with the higher count is the one mentioned first (None: equal counts)."""
    return None if higher is None else higher == first


def _scores_checked(m: list[float], q: list[float], h_ideal: float, higher: int | None, first: int,
                    grid: str) -> dict[str, Any]:
    """The body of :func:`calibration_item_scores` for inputs already validated (the baselines build their own)."""
    pm = math.fsum(m)
    wd = _euclid(m, q)
    re = _entropy([v / pm for v in m]) - h_ideal if pm > 0 else float("nan")
    behaviour, compatible = None, []
    if len(m) == 2:
        compatible = list(_compatible_checked(m, q, higher, first))
        behaviour = compatible[0]
    return {"pm": pm, "wd": wd, "re": re, "behaviour": behaviour, "compatible": compatible,
            "grid": grid if behaviour is not None else None, "higher_first": _higher_first(higher, first)}


# ------------------------------------------------------------------------------------------------ summaries

#: the ranges of PM and a behaviour's 0/1 flag ([0, 1]) and of WD ([0, inf)): an interval of their mean stays in
#: them, and without spread it is the floor's where the range is closed, none where it is open
#: (:func:`ub_core.metrics.intervals.mean_interval`); RE can take either sign
_UNIT = (0.0, 1.0)
_RANGES = {"pm": _UNIT, "wd": (0.0, math.inf), "re": None}


def _interval_summary(values: list[float], clusters: list[Any],
                      bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    if not values:
        return {"mean": None, "low": None, "high": None, "n": 0}
    low, high = clustered_interval(values, clusters, bounds=bounds)
    return {"mean": float(np.mean(values)), "low": low, "high": high, "n": len(values)}


def summarize_calibration(item_scores: Sequence[Mapping[str, Any]], clusters: Sequence[Any]) -> dict[str, Any]:
    """Means of PM, WD and RE with 95% intervals clustered by option pair, plus behaviour rates (the numeric-calibration
    paper, sections 3.4, 3.5 and Appendix G).

    ``item_scores[i]`` comes from :func:`calibration_item_scores`, and ``clusters[i]`` is that item's cluster (its
    option pair). Each of ``pm``, ``wd`` and ``re`` is ``{"mean", "low", "high", "n"}``, where the interval is
    :func:`~ub_core.metrics.clustered_interval`. RE also counts ``undefined``, the items with PM = 0.

    Behaviour summaries (two-option items only; ``n_behaviour`` counts them):

    - ``behaviour_rates[b]``: the share of items whose single label is b. Its clustered interval is in
      ``behaviour_intervals[b]``.
    - ``behaviour_compatibility[b]``: the share of items with which b is compatible.
    - ``grid_behaviour_rates[b]``: the share of grids labelled b, following Appendix G. A grid is all the results of
      one category and ordered option pair. Appendix G uses a finer grid (one template and one scale); see
      ``_grid_key`` for why we pool. A grid is Null when its mean PM is below 0.5. Otherwise it gets the behaviour
      with the highest compatibility rate over the grid, with ties going to the earliest name in
      :data:`BEHAVIOURS`. ``grid_behaviours`` maps each grid to its label.
    """
    scores, labels = list(item_scores), list(clusters)
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} item scores but {len(labels)} cluster labels")
    if not scores:
        raise ValueError("summarize_calibration needs at least one item")
    out: dict[str, Any] = {"n": len(scores)}
    for key in ("pm", "wd", "re"):
        vals, cl, undefined = [], [], 0
        for s, c in zip(scores, labels):
            v = s.get(key)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                undefined += 1
                continue
            vals.append(float(v))
            cl.append(c)
        out[key] = _interval_summary(vals, cl, _RANGES[key])
        if key == "re":
            out[key]["undefined"] = undefined
        elif undefined:
            raise ValueError(f"{undefined} items have no {key!r} score")

    with_b = [(s, c) for s, c in zip(scores, labels) if s.get("behaviour") is not None]
    out["n_behaviour"] = len(with_b)
    rates, intervals, compat = {}, {}, {}
    for b in BEHAVIOURS:
        if not with_b:
            rates[b], intervals[b], compat[b] = None, None, None
            continue
        flags = [1.0 if s["behaviour"] == b else 0.0 for s, _ in with_b]
        rates[b] = math.fsum(flags) / len(flags)
        intervals[b] = clustered_interval(flags, [c for _, c in with_b], bounds=_UNIT)
        compat[b] = sum(b in _compatible(s) for s, _ in with_b) / len(with_b)
    out["behaviour_rates"], out["behaviour_intervals"], out["behaviour_compatibility"] = rates, intervals, compat

    out["grid_behaviour_rates"], out["grid_behaviours"] = grid_behaviour_rates(s for s, _ in with_b)
    return out


#: The label of a grid whose items cannot tell the order behaviours from the count behaviours (module text).
UNDETERMINED = "undetermined"


def grid_behaviour_rates(item_scores: Iterable[Mapping[str, Any]]) -> tuple[dict[str, float | None], dict[str, str]]:
    """Share of grids classified as each reference behaviour (the numeric-calibration paper, section 3.5, Figure 3,
    Appendix G).

    ``item_scores`` are mappings with ``grid``, ``pm``, ``compatible`` and ``higher_first`` (as
    :func:`calibration_item_scores` returns; items whose ``grid`` is None, those with more than two options, are
    skipped). For each grid g with members I_g:

        label(g) = Null                                 if mean_{i in I_g} PM_i < 0.5
                 = undetermined                          if g is not balanced
                 = argmax_b #{i in I_g : b compatible with i}   otherwise (ties: earliest in BEHAVIOURS)

        rate(b) = #{g : label(g) = b} / #grids

    A label needs a balanced grid: one where the order behaviours (Pick First / Second) and the count behaviours
    (Pick Higher / Lower) do not coincide on every item, i.e. some items mention the higher count first and some
    second (or all items have equal counts, where the count behaviours do not apply). In a grid where the higher
    count always comes first (a ``--limit`` or ``ids`` run that keeps part of a grid), a pure Pick First model fits
    Pick Higher on every item, and the tie-break order would call it Pick Higher; such a grid is labelled
    ``undetermined`` (:data:`UNDETERMINED`, its share ``rates["undetermined"]``). We do not ask for equal numbers
    of both orders: the subset's pooled grids hold them 5:4 or 8:7 (one number pair per template and scale), and
    with both present a pure Pick First (Higher) model fits its own reference on more items than any other. An item
    without ``higher_first`` (a log written before it was recorded) leaves its grid undetermined.

    Returns ``(rates, labels)``: ``rates[b]`` for every b in :data:`BEHAVIOURS` and ``"undetermined"`` (None for
    all when there is no grid) and ``labels`` mapping each grid to its label; the rates sum to 1.
    """
    grids: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in item_scores:
        if s.get("grid") is not None:
            grids[str(s["grid"])].append(s)
    labels = {g: _grid_label(members) for g, members in sorted(grids.items())}
    names = BEHAVIOURS + (UNDETERMINED,)
    if not labels:
        return {b: None for b in names}, labels
    return {b: sum(v == b for v in labels.values()) / len(labels) for b in names}, labels


def _compatible(score: Mapping[str, Any]) -> Sequence[str]:
    return score.get("compatible") or [score["behaviour"]]


def _balanced(members: list[Mapping[str, Any]]) -> bool:
    """Both orders of the higher count present, or no item with unequal counts (:func:`grid_behaviour_rates`)."""
    if any("higher_first" not in s for s in members):
        return False
    orders = {s["higher_first"] for s in members} - {None}
    return orders != {True} and orders != {False}


def _grid_label(members: list[Mapping[str, Any]]) -> str:
    if math.fsum(s["pm"] for s in members) / len(members) < NULL_PM:
        return "null"
    if not _balanced(members):
        return UNDETERMINED
    counts = dict.fromkeys(BEHAVIOURS, 0)
    for s in members:
        for b in _compatible(s):
            counts[b] += 1
    best = max(counts.values())
    return next(b for b in BEHAVIOURS if counts[b] == best)


# ------------------------------------------------------------------------------------------------ baselines

def _pick_higher_mass(q: Sequence[float], p: float) -> list[float]:
    """Pick Higher with weight p: mass p spread evenly over the options with the largest ideal probability, and
    1 - p evenly over the rest. When every option ties (equal counts), this is the uniform distribution."""
    top_value = max(q)
    top = [abs(v - top_value) <= 1e-12 for v in q]
    n_top = sum(top)
    if n_top == len(q):
        return [1.0 / len(q)] * len(q)
    return [p / n_top if t else (1.0 - p) / (len(q) - n_top) for t in top]


def _one_hot(k: int, i: int) -> list[float]:
    v = [0.0] * k
    v[i] = 1.0
    return v


#: The equal-count rule: which items a calibration score covers, the same for the baselines and for model runs
#: (:func:`calibration_item_set`). ``drop`` (default) leaves the two-option colors and wordproblems items that name
#: the same count twice (a tenth of each) out; ``keep`` keeps them.
EQUAL_COUNTS = ("drop", "keep")
# the name the rule "keep" had when only the baselines took it (Pick Higher / Lower read such an item as uniform)
_EQUAL_COUNTS_ALIASES = {"uniform": "keep"}


def check_equal_counts(rule: Any) -> str:
    """``rule`` as one of :data:`EQUAL_COUNTS` (``"uniform"`` is the older name of ``"keep"``), else a one-line
    ValueError naming ``equal_counts``."""
    rule = _EQUAL_COUNTS_ALIASES.get(rule, rule)
    if rule not in EQUAL_COUNTS:
        raise ValueError(f"equal_counts must be one of {', '.join(EQUAL_COUNTS)}, got {rule!r}")
    return str(rule)


def has_equal_counts(item: Any) -> bool:
    """Whether ``item`` is a two-option colors or wordproblems item whose counts are equal, read from its ideal
    (``|q_1 - q_2| <= 1e-12``; the bank's ``higher`` metadata is None on exactly these items), where Pick Higher
    and Pick Lower are undefined (the numeric-calibration paper, section 3.5). Distributions items,
    uniform by construction, are never such items."""
    q = item.probabilities
    return item.category != "distributions" and len(q) == 2 and abs(float(q[0]) - float(q[1])) <= _TIE


def calibration_item_set(items: Iterable[Any], equal_counts: str = "drop") -> tuple[list[Any], int]:
    """The items a calibration score covers under the equal-count rule, and how many it left out:
    ``(kept, left_out)``. ``"drop"`` leaves out every item with :func:`has_equal_counts`; ``"keep"`` keeps all.

    One rule for both sides of a comparison: :func:`calibration_baselines`, ``ub reproduce calibration`` and the
    model runs (Inspect ``-T equal_counts=``, lm-eval metadata ``equal_counts``) all select their items here, so a
    model that behaves exactly like a baseline scores the baseline's number. The paper does not
    state the rule; its Tables 4 and 5 imply ``drop`` for the baselines (:func:`calibration_baselines`)."""
    rule = check_equal_counts(equal_counts)
    items = list(items)
    if rule == "keep":
        return items, 0
    kept = [i for i in items if not has_equal_counts(i)]
    return kept, len(items) - len(kept)


def calibration_baselines(items: Iterable[Any], seed: int = 0, *, p: float = 0.7,
                          temperatures: tuple[float, float] = (1.0, 0.01),
                          equal_counts: str = "drop") -> dict[str, dict[str, Any]]:
    """Reference behaviours and baselines scored like a model on the same items (the numeric-calibration paper, section
    3.5, Table 4).

    Each value is :func:`summarize_calibration` of the baseline's :func:`calibration_item_scores`, with
    ``skipped`` counting the items where the baseline does not apply:

    - ``pick_higher_0.7`` (the name follows ``p``): p on the option with the higher count and 1 - p spread over the
      others. Equal counts give the uniform distribution.
    - ``pick_higher`` and ``pick_lower``: the same rule with p = 1 and p = 0. These three apply to colors and
      wordproblems only. Distributions ideals are uniform, so "higher" means nothing there (Table 4 has "-").
    - ``pick_first`` and ``pick_second``: all mass on the option mentioned first or second. For distributions, these
      are the first and second integers listed.
    - ``random_softmax``: ``softmax(u / T)`` with ``u_i ~ U(0, 1)`` independent and T = ``temperatures[0]`` (1.0).
      ``random_softmax_cold`` uses T = ``temperatures[1]`` (0.01).
      Section 3.5 names the temperature without a value. Table 4's two random rows match T = 1 and T = 0.01. For
      two options, E[H] is about 0.97 bits at T = 1 and about 4.75·T bits at small T (from E[d^2] = 1/6 for
      d = u1 - u2 and the integral of the binary entropy of a sigmoid). Against the colors ideal entropy of 0.86
      bits, these give RE +0.11 and -0.80, the values the table prints.

    Equal counts (``equal_counts``, :func:`calibration_item_set`, the rule model runs use too). A tenth of the
    colors and wordproblems items name the same count twice (a uniform ideal), where Pick Higher and Pick Lower
    are undefined. ``"drop"`` (default) leaves those items out of every baseline on those two datasets (counted in
    ``skipped`` and ``equal_counts``): the paper does not say so, but its Tables 4 and 5 imply it; with them left
    out every colors row is within 0.02 of the printed one (Pick Higher WD 0.46 / 0.47, Pick Lower 0.95 / 0.95,
    RE -0.87 / -0.86), with them in, Pick Higher and Lower read them as uniform and give WD 0.42 and 0.86, RE
    -0.78. ``"keep"`` (older name ``"uniform"``) keeps them so.

    The random draws come from ``numpy.random.default_rng(seed)``, taken in item order, so the result is
    deterministic.
    """
    items, dropped = calibration_item_set(items, equal_counts)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    if len(temperatures) != 2 or any(not (t > 0) for t in temperatures):
        raise ValueError(f"temperatures must be two positive numbers, got {temperatures!r}")
    rng = np.random.default_rng(seed)
    names = (f"pick_higher_{p:g}", "pick_higher", "pick_lower", "pick_first", "pick_second", "random_softmax",
             "random_softmax_cold")
    collected: dict[str, tuple[list, list]] = {n: ([], []) for n in names}
    skipped = dict.fromkeys(names, dropped)
    for item in items:
        q = _ideal(item.probabilities, None)
        k = len(q)
        higher, first = _item_indices(item)
        h_ideal, grid = _entropy(q), _grid_key(item)
        masses: dict[str, list[float] | None] = {}
        paired = item.category != "distributions"
        masses[names[0]] = _pick_higher_mass(q, p) if paired else None
        masses["pick_higher"] = _pick_higher_mass(q, 1.0) if paired else None
        masses["pick_lower"] = _pick_higher_mass(q, 0.0) if paired else None
        masses["pick_first"] = _one_hot(k, first)
        masses["pick_second"] = _one_hot(k, 1 - first if k == 2 else 1)
        for name, t in (("random_softmax", temperatures[0]), ("random_softmax_cold", temperatures[1])):
            z = rng.random(k) / t
            e = np.exp(z - z.max())
            masses[name] = (e / e.sum()).tolist()
        for name in names:
            mass = masses[name]
            if mass is None:
                skipped[name] += 1
                continue
            collected[name][0].append(_scores_checked(mass, q, h_ideal, higher, first, grid))
            collected[name][1].append(item.cluster)
    out = {}
    for name in names:
        scores, clusters = collected[name]
        summary = summarize_calibration(scores, clusters) if scores else {"n": 0}
        summary["skipped"] = skipped[name]
        summary["equal_counts"] = dropped
        out[name] = summary
    return out
