"""Speed of the KS@N pipeline on this machine, printed as figures (not a test).

1. Cold build of the full ground truth (448 problems x 10,000 draws) into an empty cache.
2. Scoring a full 448-problem run of 100 values each, with all metrics (KS@N for 7 N, WDZ with 999 permutations,
   JSD), for the oracle (fresh true draws) and for a collapsed "always the mode" run.
3. The Monte-Carlo permutation reference of the published code (10^6 multivariate-hypergeometric reallocations)
   against our exact p-value on several discrete problems, side by side, with the speed ratio.

Usage: python benchmarks/bench_scoring.py [--mc-resamples 1000000] [--mc-problems 4]
Goals (2-core machine): truth build <= 5 s; full scoring <= 10 s; exact >= 100x faster than the reference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mc-resamples", type=int, default=1_000_000)
    ap.add_argument("--mc-problems", type=int, default=4)
    args = ap.parse_args()

    os.environ["UB_CACHE_DIR"] = tempfile.mkdtemp(prefix="ub-bench-cache-")
    from ub_core import metrics
    from ub_core.cache import build_truth
    from ub_core.oracle import collapse_replies, oracle_replies
    from ub_core.problems import get_problem, load_bank
    from ub_core.ksn_scoring import score_jsonl

    t0 = time.perf_counter()
    bank = load_bank("ksn")
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    build_truth(bank, size=10_000, seed=0, progress=False)
    t_truth = time.perf_counter() - t0
    print(f"bank load (448 problems):                       {t_load:8.2f} s")
    print(f"ground truth, cold cache (448 x 10,000 draws):  {t_truth:8.2f} s   goal <= 5 s")

    for name, make in (("oracle", lambda p: oracle_replies(p, 100, seed=0)),
                       ("collapse", lambda p: collapse_replies(p, 100))):
        lines = [json.dumps({"id": p.id, "outputs": make(p)}) for p in bank]
        for workers in (1, os.cpu_count() or 1):
            t0 = time.perf_counter()
            run = score_jsonl(lines, method="paper", workers=workers)
            dt = time.perf_counter() - t0
            agg = run.aggregate["overall"]
            print(f"score full run, {name:8s}, {workers} process(es) (parse + KS@7N + WDZ + JSD): {dt:6.2f} s   "
                  f"goal <= 10 s   KS@1 {100 * agg['ks@1']['mean']:.1f}%  KS@100 {100 * agg['ks@100']['mean']:.1f}%"
                  f"  WDZ {agg['wdz']['mean']:.2f}  JSD {agg['jsd']['mean']:.3f}")

    # exact vs Monte-Carlo reference on discrete problems, each with 100 model values (a mildly wrong model:
    # oracle draws of the neighbouring regime, so the p-value is neither 1 nor 0)
    ids = ["te-poisson-conc", "te-binomial-conc", "ti-skellam-conc", "te-categorical-spread", "sh-integer-01",
           "te-geometric-conc"][: args.mc_problems]
    print(f"\nexact permutation p-value vs Monte-Carlo reference ({args.mc_resamples:,} resamples), 100 vs 10,000:")
    print(f"{'problem':24s} {'D':>7s} {'p exact':>11s} {'p MC':>11s} {'MC se':>9s} {'exact ms':>9s} {'MC s':>7s} "
          f"{'ratio':>8s}")
    ratios = []
    for pid in ids:
        p = get_problem(pid)
        truth = p.truth()
        rng = np.random.default_rng(1)
        a = p.sampler(rng, 100)
        a = np.where(rng.random(100) < 0.15, a + 1, a)  # a slightly shifted model
        reps = 20
        t0 = time.perf_counter()
        for _ in range(reps):
            d, pe = metrics.ks_2samp_exact(a, truth)
        t_exact = (time.perf_counter() - t0) / reps
        t0 = time.perf_counter()
        _, pmc = metrics.ks_2samp_permutation_mc(a, truth, n_resamples=args.mc_resamples, seed=0)
        t_mc = time.perf_counter() - t0
        se = np.sqrt(max(pe * (1 - pe), 1e-300) / args.mc_resamples)
        ratios.append(t_mc / t_exact)
        print(f"{pid:24s} {d:7.4f} {pe:11.3e} {pmc:11.3e} {se:9.1e} {1000 * t_exact:9.2f} {t_mc:7.2f} "
              f"{t_mc / t_exact:8.0f}x")
    print(f"speed ratio (MC reference / exact): min {min(ratios):.0f}x, median {np.median(ratios):.0f}x   "
          "goal >= 100x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
