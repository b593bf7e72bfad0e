"""Bounds under mass of unknown place: the reply tree's missing mass and the listed route's unlisted
mass alike. Shared by :mod:`.reply_tree` and :mod:`.ksn_logprob` (which must not import each other both ways);
the formulas are in :mod:`.reply_tree`'s module docstring."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..metric_keys import per_n_key, split_key
from ..metrics.answer_distribution import p_enough_valid
from ..problems.base import Problem

__all__ = ["missing_mass_bounds", "threshold_test", "bounds_only", "MIN_DISTANCE_MASS",
           "leave_out_vanishing_distance", "mark_unresolved", "TARGET_P_PASS_WIDTH", "RESOLVED_KS_WIDTH"]

#: Below this valid mass a problem's ``ks_distance`` is the distance of a vanishing law (a model that writes a
#: valid answer once in a million replies): left out of the run's mean (NaN, the spec's reason) and kept in the
#: payload as ``ks_distance_low_mass``, in both routes. ``p_pass@N`` still counts the problem
#: (near 0).
MIN_DISTANCE_MASS = 1e-3
#: The p_pass bounds (at the largest N) a problem's route aims at; wider when the route stops, the problem is
#: unresolved (:func:`mark_unresolved`). The reply tree's stop target (``ub_core.logprob.reply_tree``).
TARGET_P_PASS_WIDTH = 0.1
#: A problem's ``ks_distance`` enters the run's mean only when its bounds are at most this wide; else it is NaN
#: (left out, counted) and its point and bounds stay in the payload (``ks_distance_unresolved``).
RESOLVED_KS_WIDTH = 0.1


def missing_mass_bounds(d: float, p_given: dict[int, float], valid: float, invalid: float, missing: float,
                        slots: int = 100, max_attempts: int = 5,
                        statistics: dict[int, list] | None = None, *, draws: dict[int, int] | None = None,
                        brackets: dict[int, tuple[float, float]] | None = None,
                        unplaced: float = 0.0) -> dict[str, Any]:
    """The bounds of :mod:`.reply_tree`'s module docstring: ``ks_distance_bounds`` and per N ``p_pass_bounds@N``
    (lo, hi), and ``p_pass@N`` (the point value: missing mass valid in the enumerated share).

    ``statistics`` (per N, the ``(KS statistic, passed, weight)`` of the count vectors of
    :func:`ub_core.metrics.answer_distribution.p_pass_at_n`, drawn or, for an exact sum, all of them with their
    probabilities) tightens the p_pass bounds where passing is a threshold on the statistic (:func:`_shift_bounds`,
    with the test's own critical values ``brackets`` where known); the tighter of the two bounds is kept. Where
    ``draws[N]`` is given, P(pass | N answers) is a Monte-Carlo share of that many draws and its 99%
    Clopper-Pearson interval widens the bounds (:func:`ub_core.logprob.number_cells.clopper_pearson`).
    ``unplaced`` is the part of ``valid`` whose place is unknown (cells, for a test that is no threshold on D):
    it counts in eps = (missing + unplaced) / (valid + missing) like missing mass, but as valid."""
    from .number_cells import clopper_pearson

    eps = min((missing + unplaced) / (valid + missing), 1.0) if valid + missing > 0 else 1.0
    out: dict[str, Any] = {"eps": eps, "ks_distance_bounds": [max(0.0, d - eps), min(1.0, d + eps)]
                           if not math.isnan(d) else [0.0, 1.0]}
    share = valid / (valid + invalid) if valid + invalid > 0 else 0.0
    v_point = min(valid + missing * share, 1.0)
    for n, pg in p_given.items():
        m = (draws or {}).get(n)
        delta = -math.expm1(n * math.log1p(-eps)) if eps < 1 else 1.0
        if math.isnan(pg):
            lo_given, hi_given = 0.0, 1.0
        else:
            p_lo, p_hi = clopper_pearson(pg * m, m) if m else (pg, pg)
            lo_given, hi_given = max(0.0, p_lo - delta), min(1.0, p_hi + delta)
        stats_n = (statistics or {}).get(n)
        shifted = _shift_bounds(stats_n, n, eps, (brackets or {}).get(n), m) if stats_n else None
        if shifted is not None:
            lo_given, hi_given = max(lo_given, shifted[0]), min(hi_given, shifted[1])
        lo = p_enough_valid(valid, n, slots, max_attempts) * lo_given
        hi = p_enough_valid(min(valid + missing, 1.0), n, slots, max_attempts) * hi_given
        out[per_n_key("p_pass_bounds", n)] = [lo, hi]
        out[per_n_key("p_pass", n)] = (math.nan if math.isnan(pg)
                                       else p_enough_valid(v_point, n, slots, max_attempts) * pg)
    return out


def _shift_bounds(statistics: list, n: int, eps: float, bracket: tuple[float, float] | None = None,
                  draws: int | None = None) -> tuple[float, float] | None:
    """Bounds of P(KS@N passes) under the true valid law, from the statistics of N draws of q, when passing means
    D <= c (the paper's test on a continuous support: scipy's exact two-sample p-value is a function of D, N and
    the truth's size).

    The true law is (1 - w) q + w R with w <= eps. Couple its N draws with N draws A from q: K ~ Binomial(N, eps)
    of them (at most) come from R instead, and replacing K of N values moves the empirical CDF by at most K/N, so
    D_true lies in [D_A - K/N, D_A + K/N]. With c_pass the largest passing and c_fail the smallest failing
    statistic (c_pass <= c < c_fail; the test's own, :func:`ub_core.logprob.number_cells.critical_bracket`,
    where ``bracket`` gives them, else the statistics drawn):

        P(pass) >= Σ_k Bin(k; N, eps) P(D_A <= c_pass - k/N),   P(pass) <= Σ_k Bin(k; N, eps) P(D_A < c_fail + k/N),

    P(D_A <= x) the share of the statistics' weights: exact for an exact sum, else a Monte-Carlo share of
    ``draws`` draws whose 99% Clopper-Pearson interval is carried into the bounds. Much tighter than the
    total-variation bound when eps N is small against the spread of D_A. None when the statistics contradict a
    threshold test."""
    from scipy import stats as sps

    from .number_cells import clopper_pearson

    d = np.array([s[0] for s in statistics], dtype=float)
    ok = np.array([bool(s[1]) for s in statistics])
    w = np.array([s[2] for s in statistics], dtype=float)
    seen_pass = float(d[ok].max()) if ok.any() else -math.inf
    seen_fail = float(d[~ok].min()) if (~ok).any() else math.inf
    if not seen_pass < seen_fail:
        return None
    c_pass, c_fail = (seen_pass, seen_fail) if bracket is None else bracket
    if c_pass < seen_pass or c_fail > seen_fail:
        return None  # the statistics disagree with the bracket: not this test
    order = np.argsort(d, kind="stable")
    ds, share = d[order], np.cumsum(w[order]) / w.sum()

    def at_most(x: float, strict: bool = False) -> float:
        i = int(np.searchsorted(ds, x, side="left" if strict else "right"))
        return float(share[i - 1]) if i > 0 else 0.0

    ks = np.arange(n + 1)
    pk = sps.binom.pmf(ks, n, min(max(eps, 0.0), 1.0))
    tol = 1e-12  # statistics are ratios of integers: rounding must not move a draw across the threshold
    lo = math.fsum(float(pk[k]) * at_most(c_pass - k / n + tol) for k in ks if pk[k] > 0) if c_pass > -math.inf else 0.0
    hi = 1.0 if c_fail == math.inf else min(1.0, math.fsum(float(pk[k]) * at_most(c_fail + k / n - tol, strict=True)
                                                           for k in ks if pk[k] > 0))
    if draws:
        lo, hi = clopper_pearson(lo * draws, draws)[0], clopper_pearson(hi * draws, draws)[1]
    return max(0.0, lo), min(1.0, hi)


def threshold_test(problem: Problem, method: str) -> bool:
    """Whether KS@N passes exactly when its statistic is at most a critical value: the paper's test on a
    continuous support (``scipy.stats.ks_2samp(method="exact")``, a function of D and the two sizes)."""
    return method == "paper" and problem.support == "continuous"


def bounds_only(out: dict[str, Any]) -> dict[str, Any]:
    """:func:`missing_mass_bounds` without its point values (``p_pass@N``): a route that states its own."""
    return {k: v for k, v in out.items() if split_key(k)[0] != "p_pass"}


def leave_out_vanishing_distance(scores: dict[str, float], payload: dict[str, Any]) -> None:
    """Below :data:`MIN_DISTANCE_MASS` of valid mass, move ``ks_distance`` (and ``jsd``) out of the scores
    (NaN: left out of the run's means) into the payload, where the problem's record keeps it."""
    if 0.0 < scores.get("valid_mass", 1.0) < MIN_DISTANCE_MASS:
        for key in ("ks_distance", "jsd"):
            if key in scores and not math.isnan(scores[key]):
                payload[f"{key}_low_mass"] = scores[key]
                scores[key] = math.nan


def mark_unresolved(scores: dict[str, float], payload: dict[str, Any], ns: Sequence[int],
                    target_p_pass_width: float = TARGET_P_PASS_WIDTH,
                    resolved_ks_width: float = RESOLVED_KS_WIDTH) -> None:
    """Leave a problem the route could not resolve out of the run's means, and count it (both routes).

    * ``p_pass`` bounds at the largest N wider than ``target_p_pass_width``: ``unresolved`` = 1, every ``p_pass@N``
      NaN (the headline mean leaves it out; a sure fail would be a claim the bounds do not make), its point kept in
      the payload as ``p_pass_unresolved@N``, and the distances left out likewise;
    * else ``unresolved`` = 0, and a KS distance whose bounds are wider than ``resolved_ks_width`` (a distance of
      a small valid mass) is NaN, kept in the payload as ``ks_distance_unresolved`` beside its bounds.

    A problem with malformed log-probabilities is counted by ``bad_logprobs`` instead (never unresolved)."""
    scores["unresolved"] = 0.0
    if scores.get("bad_logprobs"):
        return
    top = max(int(n) for n in ns)
    lo, hi = payload.get(per_n_key("p_pass_bounds", top), (0.0, 1.0))
    if hi - lo > target_p_pass_width:
        scores["unresolved"] = 1.0
        for n in ns:
            key = per_n_key("p_pass", int(n))
            if key in scores:
                payload[per_n_key("p_pass_unresolved", int(n))] = scores[key]
                scores[key] = math.nan
        scores["no_mass"] = 0.0  # not a finding: the missing mass may still be valid
    ks_lo, ks_hi = payload.get("ks_distance_bounds", (0.0, 1.0))
    if scores["unresolved"] or ks_hi - ks_lo > resolved_ks_width:
        for key in ("ks_distance", "jsd"):
            if key in scores and not math.isnan(scores[key]):
                payload[f"{key}_unresolved"] = scores[key]
                scores[key] = math.nan
