"""Exact probability mass functions, in :class:`fractions.Fraction` arithmetic: thread interleavings under a stated
scheduler, enumeration of random choices, convolution, Markov chains and Metropolis kernels, dice sums.

Used by the KS@N real-world problems (:mod:`ub_core.problems.ksn.realworld`) and the implicit log-probability bank
(:mod:`ub_core.problems.implicit`). Nothing here simulates: every probability is computed exactly.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections import defaultdict
from fractions import Fraction
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

__all__ = ["interleave", "convolve", "markov_distribution", "metropolis_kernel", "pmf_modality",
           "dice_sum_distribution"]

F = Fraction


def interleave(threads: Sequence[Sequence[Callable[[dict, dict], None]]], shared: Mapping[str, Any],
               outcome: Callable[[dict], Hashable]) -> dict:
    """Exact outcome distribution of a multi-threaded program under the uniform random scheduler.

    ``threads[i]`` is thread i's list of atomic steps; a step ``f(shared, local)`` mutates the shared state and the
    thread's local registers. At every step the scheduler picks one thread that still has steps left, each with
    equal probability, and runs its next step. When every thread is done, ``outcome(shared)`` is recorded. Every
    schedule is enumerated, each weighted by the product of its 1/(number of runnable threads) factors.
    """
    acc: dict = defaultdict(Fraction)

    def rec(pcs: tuple, sh: dict, locs: list, prob: Fraction) -> None:
        runnable = [i for i, t in enumerate(threads) if pcs[i] < len(t)]
        if not runnable:
            acc[outcome(sh)] += prob
            return
        share = prob / len(runnable)
        for i in runnable:
            sh2 = copy.deepcopy(sh)
            locs2 = [dict(x) for x in locs]
            threads[i][pcs[i]](sh2, locs2[i])
            rec(pcs[:i] + (pcs[i] + 1,) + pcs[i + 1:], sh2, locs2, share)

    rec(tuple(0 for _ in threads), dict(copy.deepcopy(dict(shared))), [{} for _ in threads], F(1))
    return dict(acc)


def convolve(*pmfs: Mapping[int, Fraction]) -> dict[int, Fraction]:
    """Exact pmf of a sum of independent integer variables."""
    out: dict[int, Fraction] = {0: F(1)}
    for pmf in pmfs:
        nxt: dict[int, Fraction] = defaultdict(Fraction)
        for a, p in out.items():
            for b, q in pmf.items():
                nxt[a + b] += p * q
        out = dict(nxt)
    return out


def markov_distribution(kernel: Sequence[Sequence[Fraction]], start: int, steps: int) -> list[Fraction]:
    """Exact law of a Markov chain's state after ``steps`` steps from ``start``: the row e_start K^steps."""
    k = len(kernel)
    for row in kernel:
        if len(row) != k or sum(row) != 1 or any(x < 0 for x in row):
            raise ValueError("kernel rows must be probability vectors of the kernel's size")
    dist = [F(int(i == start)) for i in range(k)]
    for _ in range(steps):
        dist = [sum((dist[i] * kernel[i][j] for i in range(k)), F(0)) for j in range(k)]
    return dist


def metropolis_kernel(weights: Sequence[int], proposal: Sequence[Sequence[Fraction]]) -> list[list[Fraction]]:
    """Metropolis-Hastings kernel for an unnormalised target and a proposal matrix (acceptance min(1, ratio))."""
    k = len(weights)
    kern = [[F(0)] * k for _ in range(k)]
    for i in range(k):
        for j in range(k):
            if i == j or proposal[i][j] == 0:
                continue
            ratio = F(weights[j]) * proposal[j][i] / (F(weights[i]) * proposal[i][j])
            kern[i][j] = proposal[i][j] * min(F(1), ratio)
        kern[i][i] = 1 - sum(kern[i][j] for j in range(k) if j != i)
    return kern


def _uniform(values: Sequence) -> dict:
    values = list(values)
    return {v: F(1, len(values)) for v in values}


def _enumerate(choices: Sequence[Mapping[Any, Fraction]], outcome: Callable[..., Hashable]) -> dict:
    """Exact law of ``outcome(*draws)`` where the draws are independent with the given pmfs."""
    # integer weights over a common denominator per choice keep the enumeration fast and exact
    scaled, denom = [], 1
    for c in choices:
        d = math.lcm(*(F(q).denominator for q in c.values()))
        scaled.append([(v, int(F(q) * d)) for v, q in c.items() if q])
        denom *= d
    acc: dict = defaultdict(int)
    for combo in itertools.product(*scaled):
        weight = 1
        for _, w in combo:
            weight *= w
        acc[outcome(*(v for v, _ in combo))] += weight
    return {k: F(w, denom) for k, w in acc.items()}


def pmf_modality(pmf: Mapping[int, Fraction]) -> str:
    """``multimodal`` when the pmf over its sorted support has two peaks separated by a clear valley.

    A peak is a maximal run of equal probabilities higher than both neighbouring runs; two peaks count as
    separated when each holds at least 5% mass and some value between them has at most 3/4 of the lower peak.
    """
    vals = sorted(v for v, p in pmf.items() if p > 0)
    ps = [pmf[v] for v in vals]
    runs: list[Fraction] = []
    for p in ps:
        if not runs or runs[-1] != p:
            runs.append(p)
    peaks = [i for i, p in enumerate(runs)
             if (i == 0 or runs[i - 1] < p) and (i == len(runs) - 1 or runs[i + 1] < p) and p >= F(1, 20)]
    for a, b in zip(peaks, peaks[1:]):
        if min(runs[a + 1:b]) <= F(3, 4) * min(runs[a], runs[b]):
            return "multimodal"
    return "unimodal"


def dice_sum_distribution(n_dice: int, faces: int) -> dict[int, Fraction]:
    """Exact distribution of the total of ``n_dice`` fair dice with faces 1..``faces``: the face counts convolved
    ``n_dice`` times (integer counts, so exact), divided by ``faces ** n_dice``."""
    if n_dice < 1 or faces < 2:
        raise ValueError(f"need at least one die with at least two faces, got {n_dice} dice of {faces} faces")
    counts = np.ones(1, dtype=object)
    face = np.ones(faces, dtype=object)
    for _ in range(n_dice):
        counts = np.convolve(counts, face)
    total = faces ** n_dice
    return {n_dice + i: Fraction(int(c), total) for i, c in enumerate(counts)}
