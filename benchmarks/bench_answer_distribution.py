"""Sampling-free KS on this machine, printed as figures (not a test).

1. Which KS@N problems have an enumerable answer support (``ub_core.problems.candidates``), by category, and
   the distribution of their candidate counts (and of distinct scored scalars); time to build every set.
2. Time of the full metric set per problem (``answer_distribution_scores``: ks_distance, jsd, entropy_ratio,
   valid_mass and p_pass@N for the 7 default Ns, 2,000 Monte-Carlo draws where the exact sum is larger), for
   three models: the oracle (q = p), a tilted model (the truth blended 50/50 with its shift by one candidate, or
   with geometric weights for shuffles) and a collapsed model (all mass on the mode). Also the same for the
   tilted model without the exact screen (``screen=False``), on the first ``--no-screen`` problems.

Usage: python benchmarks/bench_answer_distribution.py [--limit N] [--draws 2000] [--no-screen 10]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict

import numpy as np


def _tilted(cs) -> np.ndarray:
    other = 0.5 ** np.arange(cs.p.size) if cs.kind == "permutation" else np.roll(cs.p, 1)
    return 0.5 * cs.p + 0.5 * other / other.sum()


def _collapsed(cs) -> np.ndarray:
    q = np.zeros(cs.p.size)
    q[int(np.argmax(cs.p))] = 1.0
    return q


def _pct(xs, qs=(0, 25, 50, 75, 90, 100)) -> str:
    return "  ".join(f"p{q}={np.percentile(xs, q):.3g}" for q in qs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="time only the first N enumerable problems (0: all)")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--no-screen", type=int, default=10, help="problems timed without the screen (slow)")
    args = ap.parse_args()

    from ub_core.metrics import answer_distribution_scores
    from ub_core.problems import load_bank
    from ub_core.problems.candidates import candidate_set, why_not_enumerable

    bank = load_bank("ksn")
    t0 = time.perf_counter()
    sets = [(p, candidate_set(p)) for p in bank]
    t_build = time.perf_counter() - t0
    enum = [(p, cs) for p, cs in sets if cs is not None]
    total = Counter(p.category for p in bank)
    got = Counter(p.category for p, _ in enum)
    print(f"enumerable: {len(enum)} of {len(bank)} problems (built and parse-verified in {t_build:.2f} s)")
    for cat in sorted(total):
        print(f"  {cat:14s} {got[cat]:3d} / {total[cat]:3d}")
    reasons = Counter()
    for p, cs in sets:
        if cs is None and p.support not in ("continuous", "mixed"):
            reasons[why_not_enumerable(p).split(" spans ")[0] + " spans > 200 integers"] += 1
        elif cs is None:
            reasons[f"{p.support} support"] += 1
    print("not enumerable: " + "; ".join(f"{k}: {v}" for k, v in reasons.most_common()))
    sizes = np.array([len(cs) for _, cs in enum])
    scalars = np.array([cs.scalar_support.size for _, cs in enum])
    print(f"candidates per problem: {_pct(sizes)}  mean={sizes.mean():.1f}")
    print(f"distinct scalars:       {_pct(scalars)}")
    edges = [1, 2, 3, 6, 11, 21, 51, 101, 201]
    hist = np.histogram(sizes, bins=edges)[0]
    print("histogram: " + ", ".join(f"{lo}-{hi - 1}: {c}" for lo, hi, c in zip(edges[:-1], edges[1:], hist)))
    by_kind = defaultdict(list)
    for _, cs in enum:
        by_kind[cs.kind].append(len(cs))
    print("by kind: " + ", ".join(f"{k} {len(v)} (median {int(np.median(v))} candidates)"
                                  for k, v in sorted(by_kind.items())))

    timed = enum[: args.limit] if args.limit else enum
    print(f"\nfull metric set (7 Ns, {args.draws} draws) on {len(timed)} problems:")
    for name, make in (("oracle", lambda cs: cs.p), ("tilted", _tilted), ("collapsed", _collapsed)):
        times, pp100, n_exact = [], [], 0
        for p, cs in timed:
            truth = p.truth()
            t0 = time.perf_counter()
            s = answer_distribution_scores(make(cs), cs.p, cs.values, truth, support=p.support, draws=args.draws)
            times.append(time.perf_counter() - t0)
            pp100.append(s["p_pass@100"])
            n_exact += sum(bool(v) for k, v in s.items() if k.startswith("p_pass_exact@"))
        times = np.array(times)
        print(f"  {name:9s} s/problem: {_pct(times, (0, 50, 90, 100))}  total {times.sum():.1f} s; "
              f"mean p_pass@100 {np.mean(pp100):.3f}; exact for {n_exact} of {7 * len(timed)} (problem, N)")
    if args.no_screen:
        sub = timed[: args.no_screen]
        for screen in (True, False):
            t0 = time.perf_counter()
            for p, cs in sub:
                answer_distribution_scores(_tilted(cs), cs.p, cs.values, p.truth(), support=p.support,
                                           draws=args.draws, screen=screen)
            print(f"  tilted, screen={screen!s:5s}: {(time.perf_counter() - t0) / len(sub):.2f} s/problem "
                  f"(first {len(sub)} problems)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
