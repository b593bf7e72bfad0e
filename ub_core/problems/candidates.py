"""The enumerable answer support of a KS@N problem: every answer a model may give, with its true probability.

Design notes: docs/design/candidates.md.
"""

from __future__ import annotations

import itertools
import math
import weakref
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from .base import Problem

__all__ = ["Candidate", "CandidateSet", "MAX_CANDIDATES", "TAIL_MASS", "MAX_SHUFFLE_ITEMS", "candidate_set",
           "why_not_enumerable", "enumerable_problems", "format_candidate_listing", "candidate_listing"]

#: Most candidates a problem may have and still count as enumerable.
MAX_CANDIDATES = 200
#: Most truth mass the cut tails of an infinite (or too wide) discrete support may hold together.
TAIL_MASS = 1e-6
#: Longest list a shuffle may have to be enumerable (5! = 120 orders).
MAX_SHUFFLE_ITEMS = 5


@dataclass(frozen=True)
class Candidate:
    """One answer: its text as the prompt asks for it, its scored scalar and its true probability."""

    text: str
    value: float
    p: float


@dataclass(frozen=True, eq=False)
class CandidateSet:
    """The candidates of one problem, as parallel arrays (the metrics take ``values`` and ``p``).

    ``kind`` is ``"discrete"``, ``"categorical"`` or ``"permutation"``; ``covered_mass`` is Σ p (1 for finite
    supports listed whole, at least ``1 - TAIL_MASS`` for cut ones); ``cut`` says whether tails were cut.
    """

    problem_id: str
    kind: str
    texts: tuple[str, ...]
    values: np.ndarray
    p: np.ndarray
    cut: bool = False

    def __len__(self) -> int:
        return len(self.texts)

    def __iter__(self):
        return (Candidate(t, float(v), float(q)) for t, v, q in zip(self.texts, self.values, self.p))

    @property
    def covered_mass(self) -> float:
        return float(math.fsum(self.p.tolist()))

    @property
    def scalar_support(self) -> np.ndarray:
        """The distinct scored scalars in increasing order (n Z1 values for a shuffle of n items)."""
        return np.unique(self.values)


# ------------------------------------------------------------------------------------------------ exact pmfs

def _family_pmf(family: str, params: dict, ks: np.ndarray) -> np.ndarray | None:
    """Exact pmf of a discrete family at the integers ``ks`` (None where we have none)."""
    from .. import distributions as D

    if family == "mixture":
        total = np.zeros(ks.size)
        for c in params["components"]:
            sub = _family_pmf(c["family"], c["params"], ks)
            if sub is None:
                return None
            total += c["weight"] * sub
        return total
    if family == "compound_poisson":
        if "p" in params:
            return _compound_poisson_pmf(params["lam"], params["p"], ks)
        return _panjer_pmf(params["lam"], params["jump"], ks)
    if family == "multinomial_weighted_sum":
        return _categorical_sum_pmf(params, ks)
    dist = D.frozen(family, params)
    if dist is None or not hasattr(dist, "pmf"):
        return None
    return np.asarray(dist.pmf(ks), dtype=float)


def _compound_poisson_pmf(lam: float, p: float, ks: np.ndarray) -> np.ndarray:
    """P(S = k) for S = sum of J ~ Poisson(lam) jumps, each geometric on {1, 2, ...} with success probability p.

    A sum of j such jumps is j plus a negative-binomial(j, p) count of failures, so
    ``P(S = k) = sum_{j=1..k} Poisson(j; lam) * NB(k - j; j, p)`` for k >= 1 and ``P(S = 0) = exp(-lam)``.
    The series stops where the Poisson tail beyond j is below 1e-17 (it bounds the omitted terms).
    """
    from scipy import stats

    ks = np.asarray(ks, dtype=np.int64)
    kmax = int(ks.max()) if ks.size else 0
    js = np.arange(kmax + 1)
    small = np.flatnonzero(stats.poisson.sf(js, lam) < 1e-17)
    jmax = int(small[0]) + 1 if small.size else kmax  # P(J > jmax - 1) < 1e-17: later terms are negligible
    jmax = min(jmax, kmax)
    out = np.zeros(ks.size)
    out[ks == 0] = math.exp(-lam)
    pos = ks >= 1
    for j in range(1, jmax + 1):
        w = stats.poisson.pmf(j, lam)
        out[pos] += w * stats.nbinom.pmf(ks[pos] - j, j, p)
    return out


def _integer_jump_pmf(jump: dict) -> np.ndarray | None:
    """The pmf of a jump law on 0, 1, ..., m as an array (None unless it lives on finitely many such integers)."""
    if jump["family"] != "empirical_discrete":
        return None
    values = np.asarray(jump["params"]["values"], dtype=float)
    if values.min() < 0 or not np.all(values == np.round(values)):
        return None
    f = np.zeros(int(values.max()) + 1)
    np.add.at(f, values.astype(np.int64), jump["params"]["pvals"])
    return f


def _panjer_pmf(lam: float, jump: dict, ks: np.ndarray) -> np.ndarray | None:
    """P(S = k) for a compound Poisson S with jumps on 0..m, by Panjer's recursion: g(0) = exp(-lam (1 - f(0))),
    g(k) = (lam / k) sum_{j=1..min(k, m)} j f(j) g(k - j) (Panjer 1981, the (a, b, 0) class with a = 0, b = lam)."""
    f = _integer_jump_pmf(jump)
    if f is None:
        return None
    ks = np.asarray(ks, dtype=np.int64)
    kmax = int(ks.max()) if ks.size else 0
    g = np.zeros(kmax + 1)
    g[0] = math.exp(-lam * (1 - f[0]))
    jf = np.arange(f.size) * f
    for k in range(1, kmax + 1):
        j = np.arange(1, min(k, f.size - 1) + 1)
        g[k] = lam / k * float(np.dot(jf[j], g[k - j]))
    out = np.zeros(ks.size)
    ok = ks >= 0
    out[ok] = g[ks[ok]]
    return out


def _categorical_sum_pmf(params: dict, ks: np.ndarray) -> np.ndarray | None:
    """P(S = k) for S the total of n iid draws of integer values: the n-fold convolution of the value pmf."""
    f = _integer_jump_pmf({"family": "empirical_discrete", "params": params})
    if f is None:
        return None
    total = np.ones(1)
    for _ in range(int(params["n"])):
        total = np.convolve(total, f)
    ks = np.asarray(ks, dtype=np.int64)
    out = np.zeros(ks.size)
    ok = (ks >= 0) & (ks < total.size)
    out[ok] = total[ks[ok]]
    return out


def _cut_interval(problem: Problem, tail_mass: float) -> tuple[int, int, bool] | str:
    """(lo, hi, cut) of the candidate integers, or a reason why there is no such interval."""
    from .. import distributions as D

    low, high = problem.low, problem.high
    if math.isfinite(low) and math.isfinite(high) and high - low + 1 <= MAX_CANDIDATES:
        return int(math.ceil(low)), int(math.floor(high)), False
    # cut each tail at < tail_mass / 2: scan outward from the bulk with the exact pmf
    dist = D.frozen(problem.family, problem.params) if problem.family not in ("mixture", "compound_poisson") \
        else None
    half = tail_mass / 2.0
    if dist is not None and hasattr(dist, "ppf"):
        lo = int(dist.ppf(half))  # smallest k with F(k) >= half: the integers below it hold < half
        hi = int(dist.isf(half))  # smallest k with S(k) <= half: the integers above it hold <= half
        lo = max(lo, int(math.ceil(low)) if math.isfinite(low) else lo)
        # ppf/isf are floating-point inversions: check the tails with the cdf/sf and widen where needed
        while lo > low and dist.cdf(lo - 1) >= half:
            lo -= 1
        while dist.sf(hi) > half:
            hi += 1
    else:
        lo, hi = _scan_cut(problem, half)
    if hi - lo + 1 > MAX_CANDIDATES:
        return f"its support cut at {tail_mass:g} of the mass spans {hi - lo + 1} integers (> {MAX_CANDIDATES})"
    return lo, hi, True


def _mixture_left_start(problem: Problem, half: float) -> tuple[int, float]:
    """Where to start summing a discrete mixture on the whole line, and the exact mass below that point: the lowest
    of its components' ``half / 1000`` quantiles, so the scan starts near the bulk instead of far left of it (a
    Skellam mixture scanned from -100,000 took ~4 s). Without a quantile function for every component, -100,000
    and no mass below it, as the components' bulks lie far right of it."""
    from .. import distributions as D

    comps = problem.params.get("components", []) if problem.family == "mixture" else []
    frozen = [(c["weight"], D.frozen(c["family"], c["params"])) for c in comps]
    if not frozen or any(d is None or not hasattr(d, "ppf") or not hasattr(d, "cdf") for _, d in frozen):
        return -100_000, 0.0
    q = half / 1000
    start = min(int(d.ppf(q)) for _, d in frozen)
    # ppf is a floating-point inversion: step left until each component holds at most q below the start
    while any(d.cdf(start - 1) > q for _, d in frozen):
        start -= 1
    return start, float(math.fsum(w * float(d.cdf(start - 1)) for w, d in frozen))


def _scan_cut(problem: Problem, half: float) -> tuple[int, int]:
    """The cut interval of a family without a scipy ppf (mixtures, compound Poisson) by summing its exact pmf."""
    start = int(math.ceil(problem.low)) if math.isfinite(problem.low) else None
    below = 0.0  # the exact mass below ``start``
    if start is None:  # a discrete mixture on the whole line
        start, below = _mixture_left_start(problem, half)
    span = 1 << 12
    while True:
        ks = np.arange(start, start + span)
        pmf = _family_pmf(problem.family, problem.params, ks)
        if pmf is None:
            raise RuntimeError(f"{problem.id}: no exact pmf")
        cdf = below + np.cumsum(pmf)
        if cdf[-1] >= 1.0 - half / 4 or span > 1 << 22:
            break
        span <<= 2
    lo = int(ks[np.searchsorted(cdf, half, side="left")])  # first k with F(k) >= half
    sf = 1.0 - cdf
    hi = int(ks[np.argmax(sf <= half)])
    # 1 - cdf loses ~1e-16 absolute: far below half = 5e-7, so the cut is still within the budget
    return lo, hi


# ------------------------------------------------------------------------------------------------ candidate sets

def why_not_enumerable(problem: Any, *, max_candidates: int = MAX_CANDIDATES, tail_mass: float = TAIL_MASS
                       ) -> str | None:
    """One line saying why ``problem`` has no enumerable support, or None when it has one."""
    try:
        _build(problem, max_candidates, tail_mass)
    except _NotEnumerable as e:
        return str(e)
    return None


class _NotEnumerable(Exception):
    pass


_CACHE: "weakref.WeakKeyDictionary[Problem, dict]" = weakref.WeakKeyDictionary()


def candidate_set(problem: Problem, *, max_candidates: int = MAX_CANDIDATES, tail_mass: float = TAIL_MASS
                  ) -> CandidateSet | None:
    """The enumerable answer support of a KS@N problem (see the module docstring), or None.

    Cached per problem object (weakly) and limits; the first call parses every candidate back with ``problem.parse``.
    """
    key = (max_candidates, tail_mass)
    per_problem = _CACHE.setdefault(problem, {}) if isinstance(problem, Problem) else {}
    if key in per_problem:
        return per_problem[key]
    try:
        cs = _build(problem, max_candidates, tail_mass)
    except _NotEnumerable:
        cs = None
    per_problem[key] = cs
    return cs


def _build(problem: Any, max_candidates: int, tail_mass: float) -> CandidateSet:
    if not isinstance(problem, Problem):
        raise _NotEnumerable(f"{getattr(problem, 'id', problem)!r} is not a sampled (KS@N) problem")
    if not problem.append_instruction:
        raise _NotEnumerable("its prompt carries its own answer instruction, so the answer's written form is not "
                             "ours to enumerate")
    if isinstance(max_candidates, bool) or not isinstance(max_candidates, int) or max_candidates < 1:
        raise ValueError(f"max_candidates must be a positive integer, got {max_candidates!r}")
    if not (isinstance(tail_mass, (int, float)) and 0.0 < tail_mass < 1.0):
        raise ValueError(f"tail_mass must be in (0, 1), got {tail_mass!r}")
    fmt_ = problem.answer_format
    if fmt_ == "permutation":
        cs = _shuffle_set(problem)
    elif fmt_ == "option":
        cs = _option_set(problem)
    elif problem.support == "discrete" and fmt_ == "integer":
        cs = _integer_set(problem, tail_mass)
    elif problem.support == "discrete":
        raise _NotEnumerable(f"its discrete support is answered in the {fmt_!r} format, not as whole numbers")
    else:
        raise _NotEnumerable(f"its support is {problem.support} (only discrete, categorical and shuffle "
                             "problems have a support that can be listed)")
    if len(cs) > max_candidates:
        raise _NotEnumerable(f"it has {len(cs)} candidate answers (> {max_candidates})")
    _verify(problem, cs)
    return cs


def _exact_metadata_pmf(problem: Problem) -> dict | None:
    pmf = (problem.metadata or {}).get("exact_pmf")
    return dict(pmf) if isinstance(pmf, dict) and pmf else None


def _option_set(problem: Problem) -> CandidateSet:
    options = problem.options
    if not options:
        raise _NotEnumerable("an option problem without options")
    exact = _exact_metadata_pmf(problem)
    if exact is not None:
        p = np.array([float(exact.get(o, 0.0)) for o in options])
    elif problem.family == "categorical":
        p = np.asarray(problem.params["pvals"], dtype=float)
    else:
        raise _NotEnumerable(f"no exact pmf for the option family {problem.family!r}")
    texts = tuple("{" + o + "}" for o in options)
    return CandidateSet(problem.id, "categorical", texts, np.arange(len(options), dtype=float), p)


def _integer_set(problem: Problem, tail_mass: float) -> CandidateSet:
    exact = _exact_metadata_pmf(problem)
    if exact is not None:  # real-world integer outcomes: an exact, finite pmf
        lo, hi, cut = int(math.ceil(problem.low)), int(math.floor(problem.high)), False
        if hi - lo + 1 > MAX_CANDIDATES:
            raise _NotEnumerable(f"its outcomes span {hi - lo + 1} integers (> {MAX_CANDIDATES})")
        ks = np.arange(lo, hi + 1)
        table = {int(k): float(v) for k, v in exact.items()}
        p = np.array([table.get(int(k), 0.0) for k in ks])
    else:
        got = _cut_interval(problem, tail_mass)
        if isinstance(got, str):
            raise _NotEnumerable(got)
        lo, hi, cut = got
        ks = np.arange(lo, hi + 1)
        p = _family_pmf(problem.family, dict(problem.params), ks)
        if p is None:
            raise _NotEnumerable(f"no exact pmf for the family {problem.family!r}")
        if 1.0 - math.fsum(p.tolist()) > tail_mass * (1 + 1e-9):
            raise RuntimeError(f"{problem.id}: candidates keep only {math.fsum(p.tolist()):.12g} of the mass")
    texts = tuple("{" + str(int(k)) + "}" for k in ks)
    return CandidateSet(problem.id, "discrete", texts, ks.astype(float), p, cut=cut)


def _shuffle_set(problem: Problem) -> CandidateSet:
    from ..metrics import lehmer_z1

    items = problem.options
    n = len(items)
    if n > MAX_SHUFFLE_ITEMS:
        raise _NotEnumerable(f"a shuffle of {n} items has {math.factorial(n)} orders (> {MAX_SHUFFLE_ITEMS} items)")
    orders = list(itertools.permutations(range(n)))
    texts = tuple("{" + ", ".join(items[i] for i in order) + "}" for order in orders)
    values = np.array([lehmer_z1(order) for order in orders], dtype=float)
    p = np.full(len(orders), 1.0 / len(orders))
    return CandidateSet(problem.id, "permutation", texts, values, p)


def _verify(problem: Problem, cs: CandidateSet) -> None:
    """Each candidate text parses back, with the problem's own parser, to the candidate's scalar."""
    for text, value in zip(cs.texts, cs.values):
        res = problem.parse(text)
        if not res.ok or float(res.value) != float(value):
            raise RuntimeError(f"{problem.id}: candidate {text!r} parses to "
                               f"{res.value if res.ok else res.error!r}, not {value!r}")


def enumerable_problems(problems: Iterable[Any]) -> list[tuple[Any, CandidateSet]]:
    """(problem, candidate set) for each problem of ``problems`` that has an enumerable support, in order."""
    out = []
    for p in problems:
        cs = candidate_set(p) if isinstance(p, Problem) else None
        if cs is not None:
            out.append((p, cs))
    return out


def format_candidate_listing(problems: Sequence[Any]) -> str:
    """The table ``ub bank list --logprob`` prints: one row per enumerable problem with its candidate count, the
    number of distinct scored scalars and the truth mass the candidates cover, then a count line."""
    rows = enumerable_problems(problems)
    width = max((len(p.id) for p, _ in rows), default=2)
    lines = [f"{'id'.ljust(width)}  {'category':14s}  {'family':22s}  {'kind':11s}  candidates  scalars  mass"]
    for p, cs in rows:
        lines.append(f"{p.id.ljust(width)}  {p.category:14s}  {p.family:22s}  {cs.kind:11s}  {len(cs):10d}  "
                     f"{cs.scalar_support.size:7d}  {cs.covered_mass:.7f}")
    lines.append(f"{len(rows)} of {len(problems)} problems have an enumerable answer support")
    return "\n".join(lines)


def candidate_listing(problems: Sequence[Any], as_json: bool = False) -> int:
    """``ub bank list --logprob``: print the table of :func:`format_candidate_listing`, or with ``as_json`` one
    JSON record per enumerable problem (``id``, ``category``, ``family``, ``kind``, ``n_candidates``,
    ``n_scalars``, ``covered_mass``, ``cut``). Returns the exit code."""
    import json
    import sys

    if not as_json:
        print(format_candidate_listing(problems))
        return 0
    recs = [{"id": p.id, "category": p.category, "family": p.family, "kind": cs.kind, "n_candidates": len(cs),
             "n_scalars": int(cs.scalar_support.size), "covered_mass": cs.covered_mass, "cut": cs.cut}
            for p, cs in enumerable_problems(problems)]
    json.dump(recs, sys.stdout)
    sys.stdout.write("\n")
    return 0
