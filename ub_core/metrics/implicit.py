"""Metrics of implicit probabilistic reasoning and its explicit MCQ twin (the implicit-reasoning paper, sections 3.4,
3.5, 4.1, 4.2).

Inputs. ``option_mass[i]`` is the probability the model puts on option ``i``: the summed next-token probability of
its surface variants, or for a multi-token outcome the product of its tokens' probabilities (section 3.1). The
adapters compute it. The predicted distribution is ``q = option_mass / sum(option_mass)``, normalised over the valid
outcomes (section 3.4). The ideal distribution ``p`` is ``item.probabilities``.

Model output is hostile input. Masses must be finite and in [0, 1 + 1e-6], one per option; anything else raises
a one-line ``ValueError``. All-zero mass is a valid answer (the model puts nothing on any outcome): missing mass
1.0 and ``no_mass`` 1 (counted). Its renormalisation is undefined, so the model's distribution is taken to put all
its mass on "other", an outcome outside the valid ones (:func:`no_mass_distances`): Chebyshev 1, Manhattan 2,
JSD 1 bit, KL set by its floor, argmax wrong. Every distance mean therefore counts every item:
a model that reads as no mass in one mode (``top_logprobs``, an outcome outside the lists) scores the worst
distance there instead of leaving the mean. Under the
``paper`` convention of :mod:`ub_core.logprob.option_logprob` the sum may exceed 1 when one outcome's tokens are a
prefix of another's ("1" and "10"), so then :func:`missing_mass` is negative. It is reported as it is, not clipped.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .intervals import clustered_interval

__all__ = ["chebyshev_distance", "manhattan_distance", "kl_divergence", "missing_mass", "unique_mode",
           "predicted_distribution", "implicit_item_scores", "explicit_item_scores", "summarize_implicit",
           "KL_FLOOR", "IMPLICIT_SCORE_KEYS", "EXPLICIT_SCORE_KEYS", "kl_floor_decides", "js_divergence_bits",
           "no_mass_distances"]

#: Floor for predicted probabilities inside the KL logarithm (see :func:`kl_divergence`).
KL_FLOOR = 1e-12
#: per option, the float round-off :func:`missing_mass` treats as 0
_ROUND_OFF = 1e-15
_MASS_TOL = 1e-6
_SUM_TOL = 1e-6
IMPLICIT_SCORE_KEYS = ("chebyshev", "manhattan", "kl", "jsd_bits", "missing_mass", "argmax_correct", "no_mass",
                       "kl_floored")
EXPLICIT_SCORE_KEYS = ("mcq_correct", "p_correct", "no_mass")


def _vector(x: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers") from None
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def _pair(p: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    a, b = _vector(p, "p"), _vector(q, "q")
    if a.size != b.size:
        raise ValueError(f"p has {a.size} entries but q has {b.size}")
    return a, b


def _distribution(x: np.ndarray, name: str) -> None:
    if np.any(x < 0):
        raise ValueError(f"{name} has negative entries")
    if not math.isclose(float(x.sum()), 1.0, abs_tol=_SUM_TOL):
        raise ValueError(f"{name} must sum to 1, sums to {float(x.sum()):.6g}")


def chebyshev_distance(p: Any, q: Any) -> float:
    """Chebyshev (L-infinity) distance ``max_i |p_i - q_i|`` (the implicit-reasoning paper, sections 3.4 and 4.2). It
    measures the largest bias towards or against a single outcome."""
    a, b = _pair(p, q)
    return float(np.max(np.abs(a - b)))


def manhattan_distance(p: Any, q: Any) -> float:
    """Manhattan (L1) distance ``sum_i |p_i - q_i|`` (the implicit-reasoning paper, sections 3.4 and 4.2). It is in [0,
    2] for two distributions; a sum of float terms can overshoot 2 by round-off (2.0000000000000004 for disjoint
    supports), which is clipped to 2."""
    a, b = _pair(p, q)
    return float(min(2.0, np.sum(np.abs(a - b))))


def kl_divergence(p: Any, q: Any, floor: float = KL_FLOOR) -> float:
    """Kullback-Leibler divergence ``KL(p || q) = sum_i p_i ln(p_i / q_i)`` in nats (the implicit-reasoning paper,
    sections 3.4 and 4.2).

    Direction. The paper names the metric but does not state a direction. We take ``p`` = the ideal distribution
    and ``q`` = the model's prediction: the extra log-loss of predicting with ``q`` when outcomes follow ``p``.
    This is finite whenever the model gives every possible outcome some mass, and ideal zeros (outcomes ruled out
    by the evidence) do not make it infinite.

    Zeros. Terms with ``p_i = 0`` contribute 0 (the 0 ln 0 = 0 convention). A prediction ``q_i = 0`` where
    ``p_i > 0`` would make the divergence infinite, so such entries of ``q`` are raised to ``floor`` (1e-12) and
    ``q`` is renormalised.
    Such a term then costs about ``p_i * 27.6``: large, finite, and averageable. Both inputs must be
    distributions (entries >= 0, sum 1 within 1e-6). The result is >= 0 and never NaN.
    """
    a, b = _pair(p, q)
    _distribution(a, "p")
    _distribution(b, "q")
    if not 0 < floor < 1:
        raise ValueError(f"floor must be in (0, 1), got {floor!r}")
    mask = a > 0
    if np.any(b[mask] < floor):  # only then: a perfect prediction keeps KL exactly 0
        b = np.where(mask, np.maximum(b, floor), b)
        b = b / b.sum()
    return float(max(0.0, np.sum(a[mask] * np.log(a[mask] / b[mask]))))


def js_divergence_bits(p: Any, q: Any) -> float:
    """Jensen-Shannon divergence in bits (Lin 1991, "Divergence measures based on the Shannon entropy", IEEE Trans.
    Inf. Theory 37(1), eq. 4.1 with equal weights), a bounded companion of :func:`kl_divergence`:

        JSD(p, q) = 1/2 KL(p || m) + 1/2 KL(q || m),   m = (p + q) / 2,   logarithms base 2
                  = H(m) - (H(p) + H(q)) / 2

    It lies in [0, 1]: 0 exactly when p = q, 1 exactly when the supports are disjoint; it is symmetric and needs
    no floor (m > 0 wherever p or q is), so a confident wrong prediction costs at most 1 bit instead of the
    floor's ~27.6 nats; its square root is a metric (Endres and Schindelin 2003). Not the KS@N family's ``jsd``
    (:func:`ub_core.metrics.jsd`: natural log, between kernel density estimates). Both inputs must be
    distributions (entries >= 0, sum 1 within 1e-6); round-off outside [0, 1] is clipped.
    """
    a, b = _pair(p, q)
    _distribution(a, "p")
    _distribution(b, "q")
    total = a + b  # x / m = 2 x / (a + b): m = total / 2 underflows to 0 beside a subnormal x (5e-324)

    def half(x: np.ndarray) -> float:
        on = x > 0
        return float(np.sum(x[on] * np.log2(2 * x[on] / total[on])))

    return float(min(1.0, max(0.0, 0.5 * half(a) + 0.5 * half(b))))


def no_mass_distances(p: Any, floor: float = KL_FLOOR) -> dict[str, float]:
    """The distances of an item where the model puts no mass on any outcome.

    ``m / sum(m)`` is undefined there, so the model's distribution is taken as all mass on "other", an outcome
    outside the valid ones: with ``p' = (p, 0)`` and ``q' = (0, ..., 0, 1)`` over the outcomes plus "other",

        Chebyshev = max|p' - q'| = 1,   Manhattan = sum|p' - q'| = 2,   JSD = 1 bit (disjoint supports),
        KL = KL(p' || q') with q' floored (:func:`kl_divergence`) = sum_{p_i > 0} p_i ln(p_i (1 + k+ floor) / floor)

    (k+ the outcomes the ideal allows, each raised to ``floor``), the worst value of each and the KL floor's
    (``kl_floored`` 1). The one reading that needs no renormalisation: the model's mass, all of it, is outside the
    outcomes. Chebyshev, Manhattan and JSD are returned as these exact values (summing p' in floats can leave
    Manhattan at 2 - 2e-16)."""
    a = _vector(p, "p")
    _distribution(a, "p")
    pe, qe = np.append(a, 0.0), np.append(np.zeros_like(a), 1.0)
    return {"chebyshev": 1.0, "manhattan": 2.0, "kl": kl_divergence(pe, qe, floor=floor), "jsd_bits": 1.0,
            "kl_floored": float(kl_floor_decides(pe, qe, floor))}


def missing_mass(option_mass: Any) -> float:
    """Probability the model puts outside the valid outcomes: ``1 - sum_i option_mass_i`` (the implicit-reasoning paper,
    section 3.5, table 1). It can be negative when one outcome's tokens are a prefix of another's (see the module
    docstring)."""
    m = _mass(option_mass)
    missing = float(1.0 - m.sum())
    # exact masses that sum to 1 leave a round-off of a few 1e-16 either side (the oracle's left 17 of 80 items
    # at -2.2e-16, which a report rejected as outside [0, 1]): that is no mass, not a negative one
    return 0.0 if abs(missing) <= _ROUND_OFF * max(1, m.size) else missing


def unique_mode(ideal: Any) -> int | None:
    """Index of the ideal distribution's most likely outcome, or None when the maximum is shared. The implicit-reasoning
    paper section 4.1 scores argmax accuracy only on problems with a unique maximum. Ties are compared within 1e-12."""
    a = _vector(ideal, "ideal")
    top = float(a.max())
    modes = np.flatnonzero(np.abs(a - top) <= 1e-12)
    return int(modes[0]) if modes.size == 1 else None


def _mass(option_mass: Any, n_options: int | None = None) -> np.ndarray:
    m = _vector(option_mass, "option_mass")
    if n_options is not None and m.size != n_options:
        raise ValueError(f"option_mass has {m.size} entries but the item has {n_options} options")
    if np.any(m < 0) or np.any(m > 1 + _MASS_TOL):
        raise ValueError("option_mass entries must be probabilities in [0, 1]")
    return m


def predicted_distribution(option_mass: Any, n_options: int | None = None) -> np.ndarray:
    """``option_mass / sum(option_mass)``: the model's distribution over the valid outcomes (the implicit-reasoning
    paper's section 3.4). All-zero mass has no distribution and is an error."""
    m = _mass(option_mass, n_options)
    total = float(m.sum())
    if total <= 0:
        raise ValueError("option_mass is all zero; no distribution over the options")
    return m / total


def _strict_argmax(q: np.ndarray) -> int | None:
    top = float(q.max())
    winners = np.flatnonzero(q == top)
    return int(winners[0]) if winners.size == 1 else None


def kl_floor_decides(p: Any, q: Any, floor: float = KL_FLOOR) -> bool:
    """Whether :func:`kl_divergence` raises some ``q_i`` to ``floor`` (an outcome the ideal allows that the model
    gives less than ``floor``): then the value is set by the floor, not by the model (about ``p_i ln(p_i / floor)``
    per such outcome, 8.8 nats for ``p_i = 1/3`` at 1e-12), and the item is counted (``kl_floored``)."""
    a, b = _pair(p, q)
    return bool(np.any(b[a > 0] < floor))


def implicit_item_scores(item: Any, option_mass: Any, kl_floor: float = KL_FLOOR) -> dict[str, float | None]:
    """Scores of one implicit item (the implicit-reasoning paper, sections 3.4, 3.5, 4.1, 4.2).

    With ``p = item.probabilities`` and ``q`` = the normalised ``option_mass``, the scores are:

    - ``chebyshev`` = max |p - q|;
    - ``manhattan`` = sum |p - q|;
    - ``kl`` = KL(p || q) in nats, ``q`` floored at ``kl_floor`` (:func:`kl_divergence`);
    - ``kl_floored`` = 1.0 when the floor decides the KL value (:func:`kl_floor_decides`), else 0.0; its mean over
      the items is the share of *items* whose KL the floor decided (``kl_floor_share``, reported beside KL), not
      the share of the KL mean: one floored item can carry 99.8% of the mean while the share reads 0.5;
    - ``jsd_bits`` = JSD(p, q) in bits, in [0, 1] (:func:`js_divergence_bits`), the bounded divergence beside KL;
    - ``missing_mass`` = 1 - sum(option_mass);
    - ``argmax_correct``:
      - 1.0 when q's strict maximum sits on p's unique mode, and 0.0 when it does not (a tie for q's top counts
        as 0.0, so a flat prediction earns no credit);
      - None when p has no unique mode.
    - ``no_mass`` = 1.0 when every outcome gets zero mass, else 0.0: then ``q`` does not exist, the missing mass is
      1.0, the distances are those of all mass outside the outcomes (:func:`no_mass_distances`: Chebyshev 1,
      Manhattan 2, JSD 1, KL floored) and argmax is 0.0 where p has a unique mode (no outcome predicted: wrong),
      so every item counts in every mean.
    """
    p = np.asarray(item.probabilities, dtype=float)
    m = _mass(option_mass, len(item.options))
    mode = unique_mode(p)
    if float(m.sum()) <= 0:
        return {**no_mass_distances(p, kl_floor), "missing_mass": missing_mass(m),
                "argmax_correct": None if mode is None else 0.0, "no_mass": 1.0}
    q = predicted_distribution(m)
    return {
        "chebyshev": chebyshev_distance(p, q),
        "manhattan": manhattan_distance(p, q),
        "kl": kl_divergence(p, q, floor=kl_floor),
        "jsd_bits": js_divergence_bits(p, q),
        "missing_mass": missing_mass(option_mass),
        "argmax_correct": None if mode is None else float(_strict_argmax(q) == mode),
        "no_mass": 0.0,
        "kl_floored": float(kl_floor_decides(p, q, kl_floor)),
    }


def explicit_item_scores(item: Any, option_mass: Any) -> dict[str, float | None]:
    """Scores of one explicit MCQ item (the implicit-reasoning paper, sections 3.1 and 3.4: the probability of the
    correct answer):

    - ``mcq_correct`` = 1.0 when the letter with the strictly largest mass is the correct one, else 0.0 (all-zero
      mass picks no letter: 0.0);
    - ``p_correct`` = option_mass[answer] / sum(option_mass), the normalised probability of the correct letter;
      None when every letter gets zero mass;
    - ``no_mass`` = 1.0 when every letter gets zero mass, else 0.0.
    """
    answer = getattr(item, "answer_index", None)
    if answer is None:
        raise ValueError(f"{getattr(item, 'id', 'item')}: not an MCQ item (no answer_index)")
    m = _mass(option_mass, len(item.options))
    if float(m.sum()) <= 0:
        return {"mcq_correct": 0.0, "p_correct": None, "no_mass": 1.0}
    q = predicted_distribution(m)
    return {"mcq_correct": float(_strict_argmax(q) == answer), "p_correct": float(q[answer]), "no_mass": 0.0}


def summarize_implicit(item_scores: Sequence[Mapping[str, Any]], clusters: Sequence[Any],
                       confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """Mean of each score over items, with a clustered t interval (:func:`clustered_interval`; the implicit-reasoning
    paper reports scenario-level variation, section 4.1 and figure 6, but no intervals: clustering by scenario is ours;
    fewer than :data:`~ub_core.metrics.MIN_CLUSTERS` scenarios fall back to the unclustered error).

    ``item_scores[k]`` is one item's dict from :func:`implicit_item_scores` or :func:`explicit_item_scores`, and
    ``clusters[k]`` its ``item.cluster``. For every key present, the None entries (argmax on items without a unique
    mode) are left out and counted. Returns ``{key: {"mean", "low", "high", "n", "excluded"}}``. A key with no
    values has ``mean``, ``low`` and ``high`` None.
    """
    scores = list(item_scores)
    labels = list(clusters)
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} score dicts but {len(labels)} cluster labels")
    keys: list[str] = []
    for s in scores:
        if not isinstance(s, Mapping):
            raise ValueError(f"each item's scores must be a dict, got {type(s).__name__}")
        keys.extend(k for k in s if k not in keys)
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        vals, labs, excluded = [], [], 0
        for s, c in zip(scores, labels):
            v = s.get(key)
            if v is None:
                excluded += 1
                continue
            v = float(v)
            if not math.isfinite(v):
                raise ValueError(f"score {key!r} is not finite: {v!r}")
            vals.append(v)
            labs.append(c)
        if not vals:
            out[key] = {"mean": None, "low": None, "high": None, "n": 0, "excluded": excluded}
            continue
        low, high = clustered_interval(vals, labs, confidence=confidence)
        out[key] = {"mean": float(np.mean(vals)), "low": low, "high": high, "n": len(vals), "excluded": excluded}
    return out
