"""Sampling-free KS: metrics of a model's whole answer distribution q over an enumerable support.

Where a KS@N problem's answers can be listed (:mod:`ub_core.problems.candidates`), the log-probability of each
candidate answer gives the model's answer distribution directly, with no sampling. Inputs, one entry per candidate:

* ``q``: the model's probability of the candidate, *before* renormalising (``exp`` of the summed token
  log-probabilities; :func:`probabilities_from_logprobs` turns log-probabilities into these);
* ``p``: the candidate's true probability (``CandidateSet.p``);
* ``values``: its scored scalar (``CandidateSet.values``: the integer, the option code, or the order's Lehmer Z1;
  several candidates may share one scalar, e.g. the 120 orders of a 5-item shuffle share 5 Z1 values).

The metrics renormalise q on the candidates (the model's answer distribution *given* a well-formed answer, which
is what KS@N tests: its retries replace failed replies) and report the mass they cover separately
(:func:`valid_mass`).

NaN policy (as for WDZ in :mod:`ub_core.metrics`): malformed input, a bug on the caller's side, raises a one-line
``ValueError`` (NaN or +inf entries, negative probabilities, log-probabilities above 0, length mismatch, empty
input). A model that puts no mass at all on the candidates (all log-probabilities ``-inf``) has no answer
distribution: its ``valid_mass`` is 0 and every other metric is NaN, to be counted and left out of means.

Usage::

    from ub_core.metrics import answer_distribution_scores, probabilities_from_logprobs
    from ub_core.problems import get_problem
    from ub_core.problems.candidates import candidate_set

    problem = get_problem("te-poisson-conc")
    cs = candidate_set(problem)
    q = probabilities_from_logprobs(logprobs)          # one summed log-probability per candidate text
    scores = answer_distribution_scores(q, cs.p, cs.values, problem.truth(), support=problem.support)
    scores["ks_distance"], scores["p_pass@100"], scores["p_pass_se@100"]

References: UnpredictaBench (UnpredictaBench) sec. 3.3, eq. 1 (KS@N and its two-sample KS test), appendix C.1 (Lehmer
Z1), appendix C.3 (Jensen-Shannon divergence).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np
from scipy import special

from .inputs import _sample
from .sampling import DEFAULT_NS, ks_at_n
from ..metric_keys import per_n_key

__all__ = ["probabilities_from_logprobs", "valid_mass", "ks_distance", "jsd_pmf", "entropy_ratio", "p_pass_at_n",
           "p_pass_profile", "answer_distribution_scores", "p_enough_valid", "P_PASS_DRAWS", "P_PASS_MODES"]

#: Monte-Carlo draws of :func:`p_pass_at_n` (at least 2,000).
P_PASS_DRAWS = 2000
#: ``mode`` of :func:`p_pass_at_n`: ``auto`` (exact where it costs no more than the Monte Carlo), ``exact``, ``mc``.
P_PASS_MODES = ("auto", "exact", "mc")
#: A log-probability this far above 0 is rounding noise; beyond it the input is broken (as in
#: ``ub_core.logprob.option_logprob``).
_LOGPROB_SLACK = 1e-6
#: Most compositions ``mode="exact"`` enumerates before refusing (each costs one exact KS p-value, ~0.3-2 ms).
_EXACT_HARD_LIMIT = 1_000_000


# ============================================================================================ input checks

def _vector(x: Any, name: str) -> np.ndarray:
    """A non-empty 1-D float array without NaN (the shared checks of :func:`.inputs._sample`)."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers") from None
    return _sample(arr, name)


def _masses(x: Any, name: str) -> np.ndarray:
    """Non-negative finite probabilities (not necessarily summing to 1)."""
    arr = _vector(x, name)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains an infinite probability")
    if np.any(arr < 0):
        raise ValueError(f"{name} contains a negative probability")
    return arr


def _same_length(**arrays: np.ndarray) -> None:
    sizes = {k: v.size for k, v in arrays.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError("length mismatch: " + ", ".join(f"{k} has {n}" for k, n in sizes.items()))


def _values(x: Any) -> np.ndarray:
    arr = _vector(x, "values")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values contains an infinite value")
    return arr


def _total(arr: np.ndarray) -> float:
    return math.fsum(arr.tolist())


def _truth_pmf(p: Any, name: str = "p") -> np.ndarray:
    arr = _masses(p, name)
    total = _total(arr)
    if total <= 0:
        raise ValueError(f"{name} has no mass: the true probabilities must not all be 0")
    return arr / total


def _by_value(values: np.ndarray, *masses: np.ndarray) -> tuple[np.ndarray, ...]:
    """The distinct values in increasing order and each mass vector summed per value."""
    uniq, inverse = np.unique(values, return_inverse=True)
    return (uniq, *(np.bincount(inverse, weights=m, minlength=uniq.size) for m in masses))


# ============================================================================================ simple metrics

def probabilities_from_logprobs(logprobs: Any) -> np.ndarray:
    """Candidate probabilities ``q_i = exp(l_i)`` from summed token log-probabilities ``l_i``.

    ``-inf`` is a candidate the model never writes (q_i = 0). NaN, ``+inf`` or a log-probability above
    ``1e-6`` (a probability above 1 beyond rounding) raise ``ValueError``; values in (0, 1e-6] are rounding noise
    and count as 0 (probability 1).
    """
    arr = _vector(logprobs, "logprobs")
    if np.any(arr == np.inf):
        raise ValueError("logprobs contains +inf")
    if np.any(arr > _LOGPROB_SLACK):
        raise ValueError(f"logprobs contains a log-probability above 0 ({float(arr.max()):.6g}): not a probability")
    with np.errstate(under="ignore"):
        return np.exp(np.minimum(arr, 0.0))


def valid_mass(q: Any) -> float:
    """The mass the model puts on the candidate answers: ``V = Σ_i q_i`` before renormalising.

    The candidates are whole, distinct answers in the requested format (none is a prefix of another), so V <= 1;
    1 - V is the mass on everything else: other formats, prose, answers outside a cut support. A sum above
    ``1 + 1e-6`` means the inputs are not probabilities of disjoint answers and raises ``ValueError``.
    """
    arr = _masses(q, "q")
    total = _total(arr)
    if total > 1.0 + _LOGPROB_SLACK:
        raise ValueError(f"q sums to {total:.9g} > 1: not the probabilities of disjoint answers")
    return float(min(total, 1.0))


def ks_distance(q: Any, p: Any, values: Any) -> float:
    """Kolmogorov distance between the model's and the true answer distributions on the ordered support.

    ``D = sup_x |Q(x) - F(x)|`` with ``Q(x) = Σ_{i: v_i <= x} q_i / Σ_i q_i`` (q renormalised on the candidates)
    and ``F(x) = Σ_{i: v_i <= x} p_i / Σ_i p_i``; both are step functions that only jump at candidate values, so
    the supremum is the maximum over the distinct values. It is the population value of the two-sample KS
    statistic that KS@N tests (UnpredictaBench, sec. 3.3, eq. 1): as N grows, the KS@N statistic of i.i.d. draws from q
    tends to D. The order is the order of the scored scalar: integers, option codes, or for shuffles the Lehmer
    Z1 values (UnpredictaBench, appendix C.1), several orders sharing one Z1.

    p is renormalised too: on a support cut at 1 - 1e-6 of the truth's mass this moves F by at most 1e-6.
    Returns a float in [0, 1]; NaN when q has no mass on the candidates.
    """
    qa, pa, va = _masses(q, "q"), _truth_pmf(p), _values(values)
    _same_length(q=qa, p=pa, values=va)
    total = _total(qa)
    if total <= 0:
        return math.nan
    _, qv, pv = _by_value(va, qa / total, pa)
    d = float(np.max(np.abs(np.cumsum(qv) - np.cumsum(pv))))
    return min(max(d, 0.0), 1.0)


def jsd_pmf(q: Any, p: Any) -> float:
    """Jensen-Shannon divergence of two probability vectors over the same candidates (natural log).

    ``JSD(q, p) = KL(q || m)/2 + KL(p || m)/2`` with ``m = (q + p)/2`` and ``KL(a || b) = Σ a_i ln(a_i / b_i)``
    (0 ln 0 = 0; ``scipy.special.rel_entr``), q and p renormalised; in [0, ln 2]. This is the divergence of seed
    000, appendix C.3, taken on the exact answer distributions instead of on KDEs of two samples (the sample
    version is :func:`ub_core.metrics.jsd`; on discrete data its KDE smooths the atoms, so the two differ).
    NaN when q has no mass.
    """
    qa, pa = _masses(q, "q"), _truth_pmf(p)
    _same_length(q=qa, p=pa)
    total = _total(qa)
    if total <= 0:
        return math.nan
    qa = qa / total
    m = 0.5 * (qa + pa)
    val = 0.5 * float(np.sum(special.rel_entr(qa, m))) + 0.5 * float(np.sum(special.rel_entr(pa, m)))
    return min(max(val, 0.0), math.log(2.0))


def entropy_ratio(q: Any, p: Any) -> float:
    """``H(q) / H(p)`` with ``H(x) = -Σ x_i ln x_i`` over the candidates, both renormalised.

    1 for a model as random as the truth, 0 for a collapsed model (all mass on one answer), above 1 for one more
    spread out than the truth. NaN when q has no mass, or when H(p) = 0 (a truth with a single answer, where
    the ratio is undefined).
    """
    qa, pa = _masses(q, "q"), _truth_pmf(p)
    _same_length(q=qa, p=pa)
    total = _total(qa)
    if total <= 0:
        return math.nan
    h_p = float(np.sum(special.entr(pa)))
    if h_p <= 0:
        return math.nan
    return float(np.sum(special.entr(qa / total))) / h_p


# ============================================================================================ p_pass@N

def _positive_int(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return int(v)


def _truth_draws(x: Any) -> np.ndarray:
    """The truth draws as a sorted float array (sorted once; ks_at_n then sorts a sorted array)."""
    try:
        arr = np.asarray(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError("truth_draws must be a sequence of numbers") from None
    if arr.size == 0:
        raise ValueError("truth_draws is empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError("truth_draws contains NaN or infinite values")
    return np.sort(arr)


def _compositions(n: int, k: int) -> int:
    return math.comb(n + k - 1, k - 1)


def p_pass_at_n(q: Any, values: Any, truth_draws: Any, n: int, threshold: float = 1e-4, *, method: str = "paper",
                support: str = "discrete", draws: int = P_PASS_DRAWS, seed: int = 0, mode: str = "auto",
                exact_limit: int | None = None, screen: bool = True, keep_statistics: bool = False) -> dict[str, Any]:
    """Probability that KS@N passes when the N answers are drawn i.i.d. from q.

    KS@N (UnpredictaBench, sec. 3.3, eq. 1) takes the first N valid answers and passes when the two-sample KS p-value
    against the truth draws is ``>= threshold`` (paper: 1e-4). With X_1..X_N i.i.d. from the renormalised q,

        p_pass@N = P(KSpvalue(X_1..X_N, truth) >= threshold) = Σ_c Mult(c; N, q) 1[pass(c)]

    where c runs over the count vectors of the N answers over the distinct values with mass (the p-value only
    depends on the counts). Each c is scored exactly as the KS@N scorer (``ub_core.ksn_scoring.score_values``)
    scores a sample: :func:`ub_core.metrics.ks_at_n` with the same ``truth_draws`` (the problem's cached 10,000
    draws, seed 0), ``method``, ``support`` (the problem's support kind: discrete, categorical and permutation
    targets get the exact permutation p-value under ties) and ``threshold``.

    Computation:

    * exact: the sum over all C(N + K - 1, K - 1) count vectors of the K values with mass, multinomial
      probabilities from log-gamma. ``mode="auto"`` takes it when there are at most ``exact_limit`` (default
      ``draws``) vectors, i.e. when it is no more work than the Monte Carlo: always for K = 1 or 2 and N <= 100;
      ``se`` is 0;
    * Monte Carlo: ``draws`` count vectors from ``numpy`` ``multinomial(N, q)`` under a generator seeded by
      ``(seed, N)``, each distinct vector scored once; the estimate is the pass fraction and ``se`` its binomial
      standard error ``sqrt(p (1 - p) / draws)`` (0 when every draw agrees; then ``3 / draws`` bounds the
      other outcome's rate at 95%).

    Screening (``screen=True``, permutation-test p-values only: ``method="exact"`` or a support other than
    ``continuous``): the p-value is ``P(∪_k E_k)``, E_k the event that the permuted statistic reaches the
    observed h at block end k, and each ``P(E_k)`` is a hypergeometric tail (the sample's share of the first t_k
    pooled points). So ``max_k P(E_k) <= p <= Σ_k P(E_k)``: a count vector whose lower bound is at least the
    threshold passes, one whose union bound is below it fails, each with a 1e-6 relative margin for rounding,
    and only the rest get the exact p-value. The lower bound is the exact hypergeometric tail at the block end of
    the observed maximum; the upper bound sums Hoeffding's bound for sampling without replacement,
    ``2 exp(-2 (h/M)^2 / min(n_a, t_k, M - t_k))``, over the block ends (cheap, and tight enough for clear
    failures). The decisions are those of the exact p-value (a test checks them
    one by one against ``ks_at_n``); the screen only saves time (most vectors are far from the threshold).

    Returns ``{"n", "p_pass", "se", "exact", "draws"}`` (``draws`` is the number of count vectors evaluated or
    drawn). With no mass on the candidates, ``p_pass`` and ``se`` are NaN. With ``keep_statistics`` and a test
    without screening, also ``statistics``: per distinct drawn vector ``(KS statistic, passed, times drawn)``, or
    for an exact sum per count vector ``(KS statistic, passed, probability)``
    (:func:`ub_core.logprob.reply_tree.missing_mass_bounds` uses them).
    """
    qa, va = _masses(q, "q"), _values(values)
    _same_length(q=qa, values=va)
    n = _positive_int(n, "n")
    draws = _positive_int(draws, "draws")
    if mode not in P_PASS_MODES:
        raise ValueError(f"mode must be one of {', '.join(P_PASS_MODES)}, got {mode!r}")
    limit = draws if exact_limit is None else _positive_int(exact_limit, "exact_limit")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    truth = _truth_draws(truth_draws)
    # validate threshold / method / support / truth once, with ks_at_n's own messages
    ks_at_n(va[:1], truth, ns=(1,), threshold=threshold, method=method, support=support)
    total = _total(qa)
    if total <= 0:
        return {"n": n, "p_pass": math.nan, "se": math.nan, "exact": False, "draws": 0}
    uniq, qv = _by_value(va, qa / total)
    keep = qv > 0
    vals, probs = uniq[keep], qv[keep] / _total(qv[keep])
    k = vals.size

    cache: dict[bytes, bool] = {}
    statistic: dict[bytes, float] = {}

    def passes(counts: np.ndarray) -> bool:
        key = counts.tobytes()
        hit = cache.get(key)
        if hit is None:
            sample = np.repeat(vals, counts)
            res = ks_at_n(sample, truth, ns=(n,), threshold=threshold, method=method, support=support)[n]
            hit = cache[key] = bool(res["pass"])
            statistic[key] = float(res["statistic"])
        return hit

    use_screen = bool(screen) and (method == "exact" or support != "continuous")
    # scipy's two-sample p-value is a function of the statistic D (and the two sizes): the test passes exactly
    # when D is at most a critical value, so a search over the drawn vectors sorted by D finds it
    by_threshold = bool(screen) and not use_screen
    row_stats: dict[bytes, float] = {}

    def decide(rows: np.ndarray) -> np.ndarray:
        if by_threshold and len(rows) > 32:
            ok, d = _decide_by_threshold(rows, vals, truth, passes)
            row_stats.update((row.tobytes(), float(x)) for row, x in zip(rows, d))
            return ok
        verdict = _screen_rows(rows, vals, truth, threshold) if use_screen else np.full(len(rows), -1)
        return np.array([bool(v) if v >= 0 else passes(row) for row, v in zip(rows, verdict)], dtype=bool)

    n_comp = _compositions(n, k)
    if mode == "exact" or (mode == "auto" and n_comp <= limit):
        if n_comp > _EXACT_HARD_LIMIT:
            raise ValueError(f"exact {per_n_key('p_pass', n)} needs {n_comp} count vectors (> {_EXACT_HARD_LIMIT}); "
                             "use mode='mc'")
        rows = np.array([np.bincount(np.asarray(c, dtype=np.int64), minlength=k)
                         for c in itertools.combinations_with_replacement(range(k), n)], dtype=np.int64)
        ok = decide(rows)
        log_all = special.gammaln(n + 1) - special.gammaln(rows + 1).sum(axis=1) + rows @ np.log(probs)
        p = math.fsum(np.exp(log_all[ok]).tolist())
        out = {"n": n, "p_pass": min(max(p, 0.0), 1.0), "se": 0.0, "exact": True, "draws": n_comp}
        if keep_statistics and not use_screen:  # every vector with its probability: the statistic's exact law
            d = _ks_statistics(rows, vals, truth)
            out["statistics"] = [(float(x), bool(k), float(w)) for x, k, w in zip(d, ok, np.exp(log_all))]
        return out

    rng = np.random.default_rng(np.random.SeedSequence([int(seed), n]))
    counts = rng.multinomial(n, probs, size=draws)
    rows, freq = np.unique(counts, axis=0, return_counts=True)
    ok = decide(rows)
    hits = int(freq[ok].sum())
    p = hits / draws
    out = {"n": n, "p_pass": p, "se": math.sqrt(p * (1.0 - p) / draws), "exact": False, "draws": draws}
    if keep_statistics and not use_screen:
        out["statistics"] = [(statistic.get(row.tobytes(), row_stats.get(row.tobytes())), bool(k), int(f))
                             for row, k, f in zip(rows, ok, freq)]
    return out


def _ks_statistics(rows: np.ndarray, vals: np.ndarray, truth: np.ndarray, chunk: int = 256) -> np.ndarray:
    """The two-sample KS statistic of each count vector over ``vals`` against the sorted ``truth`` draws, as
    ``scipy.stats.ks_2samp`` computes it (both empirical CDFs at every pooled value), in chunks of rows."""
    grid = np.union1d(vals, truth)
    pos = np.searchsorted(grid, vals)
    truth_cdf = np.searchsorted(truth, grid, side="right") / truth.size
    n = rows[0].sum()
    out = np.empty(len(rows))
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        a = np.zeros((len(part), grid.size))
        a[:, pos] = part
        out[start:start + chunk] = np.abs(np.cumsum(a, axis=1) / n - truth_cdf).max(axis=1)
    return out


def _decide_by_threshold(rows: np.ndarray, vals: np.ndarray, truth: np.ndarray,
                         passes) -> tuple[np.ndarray, np.ndarray]:
    """Pass / fail of every count vector when passing means D <= c (scipy's continuous two-sample test): the
    vectors sorted by D, a bisection with ``passes`` (the real test) finds the last passing one, about log2(rows)
    tests instead of one per vector. Safety, so the decisions stay the test's own: vectors whose D is within 1e-9
    of the boundary are tested themselves (rounding), and 16 spread probes are checked against the split; any
    disagreement (a test that is not a threshold on D) falls back to testing every vector."""
    d = _ks_statistics(rows, vals, truth)
    order = np.argsort(d, kind="stable")
    lo, hi = -1, len(order)  # order[:lo + 1] pass, order[hi:] fail
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(rows[order[mid]]):
            lo = mid
        else:
            hi = mid
    ok = np.zeros(len(rows), dtype=bool)
    ok[order[:lo + 1]] = True
    edges = [d[order[i]] for i in (lo, hi) if 0 <= i < len(order)]
    near = np.zeros(len(rows), dtype=bool)
    for e in edges:
        near |= np.abs(d - e) <= 1e-9
    probes = np.unique(np.linspace(0, len(order) - 1, 16).astype(int))
    if any(passes(rows[order[i]]) != ok[order[i]] for i in probes):
        return np.array([passes(row) for row in rows], dtype=bool), d
    for i in np.flatnonzero(near):
        ok[i] = passes(rows[i])
    return ok, d


def _screen_rows(rows: np.ndarray, vals: np.ndarray, truth: np.ndarray, threshold: float) -> np.ndarray:
    """Sure decisions of the permutation KS test for count vectors ``rows`` over ``vals``: 1 pass, 0 fail,
    -1 undecided (see :func:`p_pass_at_n`, "Screening").

    With n_a answers, n_b truth draws and M = n_a + n_b, block end k (t_k pooled points, A_k of them answers)
    has the integer deviation ``|A_k M - t_k n_a| = |A_k n_b - B_k n_a|``; h is its maximum. Under the
    permutation null A_k is hypergeometric (M, n_a, t_k), and E_k = {A_k <= floor((t_k n_a - h) / M)} ∪
    {A_k >= ceil((t_k n_a + h) / M)}.
    """
    from scipy import stats

    rows = np.asarray(rows, dtype=np.int64)
    n_a = int(rows[0].sum())
    n_b = truth.size
    M = n_a + n_b
    grid = np.union1d(np.unique(truth), vals)
    b_counts = np.bincount(np.searchsorted(grid, truth), minlength=grid.size).astype(np.int64)
    a_counts = np.zeros((rows.shape[0], grid.size), dtype=np.int64)
    a_counts[:, np.searchsorted(grid, vals)] = rows
    A = np.cumsum(a_counts, axis=1)
    B = np.cumsum(b_counts)
    t = A + B
    dev = np.abs(A * n_b - B * n_a)
    h = dev.max(axis=1, keepdims=True)
    # block ends: grid points holding a pooled value, the last (t = M, deviation 0) left out
    cut = ((a_counts + b_counts) > 0) & (t < M)
    # lower bound: the exact hypergeometric tail at the block end where the observed deviation is largest
    star = np.argmax(dev, axis=1)
    rix = np.arange(rows.shape[0])
    t_star, hs = t[rix, star], h[:, 0]
    lo = np.floor_divide(t_star * n_a - hs, M)
    hi = -np.floor_divide(-(t_star * n_a + hs), M)
    with np.errstate(all="ignore"):
        lower = stats.hypergeom.cdf(lo, M, n_a, t_star) + stats.hypergeom.sf(hi - 1, M, n_a, t_star)
    lower = np.nan_to_num(lower, nan=0.0)
    # upper bound: union over the block ends of Hoeffding's bound for sampling without replacement,
    # P(|A_k - t_k n_a / M| >= h / M) <= 2 exp(-2 (h/M)^2 / m_k), m_k = min(n_a, t_k, M - t_k) (the
    # hypergeometric law is symmetric in draws and marked items, and in complements)
    m = np.maximum(np.minimum(np.minimum(t, M - t), n_a), 1)
    with np.errstate(over="ignore", under="ignore"):
        bound = np.where(cut, 2.0 * np.exp(-2.0 * (h / M) ** 2 / m), 0.0)
    upper = bound.sum(axis=1)
    verdict = np.full(rows.shape[0], -1, dtype=np.int64)
    verdict[lower >= threshold * (1 + 1e-6)] = 1
    verdict[upper <= threshold * (1 - 1e-6)] = 0
    verdict[h[:, 0] == 0] = 1  # identical ECDFs: p = 1
    return verdict


def p_enough_valid(valid: float, n: int, slots: int = 100, max_attempts: int = 5) -> float:
    """Probability that a sampled KS@N run collects at least ``n`` valid answers.

    The sampling protocol (UnpredictaBench, appendix K; ``ub_inspect/ksn``): ``slots`` answer slots (100), each
    given up to ``max_attempts`` attempts (5); an invalid reply is retried, and a slot whose attempts all fail is
    skipped. Replies are independent with probability ``V = valid`` of being valid, so a slot is filled with
    probability ``s = 1 - (1 - V)^A`` and the number of valid answers is ``Binomial(slots, s)``:

        P(enough) = P(Binomial(S, 1 - (1 - V)^A) >= N).

    lm-eval's ``ub_ksn`` retries nothing: 100 generations, ``max_attempts = 1``. KS@N of a run short of N valid
    answers fails, so ``p_pass@N = P(enough) x P(KS@N passes | N valid answers)`` (the valid answers of a run
    are i.i.d. from the renormalised q whatever the retries). NaN for a NaN ``valid``.
    """
    from scipy import stats

    n, slots, attempts = (_positive_int(x, name) for x, name in ((n, "n"), (slots, "slots"),
                                                                   (max_attempts, "max_attempts")))
    v = float(valid)
    if math.isnan(v):
        return math.nan
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"valid must be a probability, got {valid!r}")
    if n > slots:
        return 0.0
    filled = -math.expm1(attempts * math.log1p(-v)) if v < 1.0 else 1.0  # 1 - (1 - V)^A without cancellation
    return float(min(max(stats.binom.sf(n - 1, slots, filled), 0.0), 1.0))


def p_pass_profile(q: Any, values: Any, truth_draws: Any, ns: Sequence[int] | None = None, threshold: float = 1e-4,
                   **kw) -> dict[int, dict[str, Any]]:
    """:func:`p_pass_at_n` for each N of ``ns`` (default: the KS@N default Ns, 1, 2, 5, 10, 20, 50, 100)."""
    ns = DEFAULT_NS if ns is None else ns
    truth = _truth_draws(truth_draws)
    return {int(n): p_pass_at_n(q, values, truth, n, threshold, **kw) for n in sorted({int(n) for n in ns})}


def answer_distribution_scores(q: Any, p: Any, values: Any, truth_draws: Any, *, ns: Sequence[int] | None = None,
                               threshold: float = 1e-4, **kw) -> dict[str, Any]:
    """All the metrics of one problem as a flat dict (the sampling-free metric keys).

    Keys: ``valid_mass``, ``ks_distance``, ``jsd``, ``entropy_ratio``, and per N ``p_pass@N``, ``p_pass_se@N``,
    ``p_pass_exact@N``. ``ks_distance`` and ``p_pass`` work on the scored scalar (candidates sharing a value
    pooled); ``jsd`` and ``entropy_ratio`` on the candidates themselves (for a shuffle, its n! orders, so a model
    that always keeps the list's second item in second place loses entropy even if its Z1 law is right).
    ``q`` is the unnormalised candidate mass (see the module docstring); ``kw`` goes to
    :func:`p_pass_at_n` (``method``, ``support``, ``draws``, ``seed``, ``mode``, ``exact_limit``).
    """
    out: dict[str, Any] = {"valid_mass": valid_mass(q), "ks_distance": ks_distance(q, p, values),
                           "jsd": jsd_pmf(q, p), "entropy_ratio": entropy_ratio(q, p)}
    for n, r in p_pass_profile(q, values, truth_draws, ns, threshold, **kw).items():
        out[per_n_key("p_pass", n)] = r["p_pass"]
        out[per_n_key("p_pass_se", n)] = r["se"]
        out[per_n_key("p_pass_exact", n)] = r["exact"]
        if "statistics" in r:  # keep_statistics: the statistic's law, for bounds under unlisted mass
            out[per_n_key("p_pass_statistics", n)] = r["statistics"]
            out[per_n_key("p_pass_draws", n)] = r.get("draws")
    return out
