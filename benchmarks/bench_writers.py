"""Sampling-free KS@N per writer: how often the bounds hold the writer's exact law, how wide they are, what they cost,
and how many problems are left unresolved (``ub_core.logprob.reply_tree``, its grammar probe).

Each writer is ``ub/oracle``'s law (100,000 true draws; the listed candidates where the answers can be listed and
the writer is the canonical one) written one way (:class:`ub_core.logprob.oracle_replies.ReplyWriter`): canonical
(full precision, ``repr``), scientific notation for every value (``{4.5240E-01}``), thousands separators
(``{1,234.5}``), fractions (``{453/1000}``), no leading zero (``{.4524}``). Per problem the route runs as the task
runs it (the problem's tree with its probe of 200 replies drawn from the same law, stop at KS bounds 0.02 and
p_pass@100 bounds 0.1 wide, ``--max-requests``), and the exact law is the writer's own replies read by the
problem's parser: its KS distance to the truth, and its p_pass@100 (1,000 runs of 100 answers drawn from the
law's valid values and tested by KS@N itself, times P(enough valid); Monte-Carlo error as 4 standard errors). A
problem *holds* when both lie in its bounds. Printed per writer: problems, share holding, median p_pass@100 width,
median requests, unresolved (p_pass bounds wider than 0.1: left out of the means), and the problems that fail to
hold.

    python benchmarks/bench_writers.py --limit 12 --seed 5     # a draw of continuous (tree) problems, ~10 min
    python benchmarks/bench_writers.py --writers canonical --ids ti-dirichlet-spread,...   # named problems
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from ub_core.logprob.eos import OFFLINE_EOS  # noqa: E402
from ub_core.logprob.oracle_replies import oracle_reply_law  # noqa: E402
from ub_core.logprob.reply_tree import (enumerate_problem_tree_sync, ks_distance_to_draws, read_leaves,  # noqa: E402
                                        score_reply_tree, truth_reference)
from ub_core.metrics import ks_at_n, p_enough_valid  # noqa: E402
from ub_core.problems import get_problem, load_bank  # noqa: E402
from ub_core.problems.candidates import candidate_set  # noqa: E402

WRITERS = {"canonical": "plain", "scientific": "scientific", "separators": "separators", "fractions": "fraction",
           "no leading zero": "no_leading_zero"}
N = 100
#: sampled runs behind each law's own pass rate (its error, 4 standard errors, is the check's slack)
RUNS = 1000


def run(problem, style: str, max_requests: int, seed: int) -> dict:
    law = oracle_reply_law(problem, style=style)
    tree = enumerate_problem_tree_sync(problem, lambda pre: law.next_tokens(pre, 20), ends=[OFFLINE_EOS], ns=(N,),
                                       max_requests=max_requests, sample=law.sampler(seed))
    scores, payload = score_reply_tree(problem, tree, ns=(N,))
    values, masses, _ = read_leaves(problem, dict(zip(law.texts, law.probs)))
    truth = np.sort(np.asarray(problem.truth(), dtype=float))
    d = ks_distance_to_draws(masses, values, truth, truth_reference(problem, truth)[0])
    # the law's own pass rate: RUNS runs of N answers drawn from its valid values, tested by KS@N itself
    rng = np.random.default_rng([seed, 11])
    valid = float(masses.sum())
    share = 0.0
    if valid > 0:
        picks = rng.choice(len(values), size=(RUNS, N), p=masses / valid)
        share = float(np.mean([ks_at_n(values[row], truth, ns=(N,), support=problem.support)[N]["pass"]
                               for row in picks]))
    p_exact = p_enough_valid(min(valid, 1.0), N, 100, 5) * share
    slack = 4 * math.sqrt(max(share * (1 - share), 1.0 / RUNS) / RUNS) + 1e-9
    lo, hi = payload[f"p_pass_bounds@{N}"]
    ks_lo, ks_hi = payload["ks_distance_bounds"]
    holds = (lo - slack <= p_exact <= hi + slack) and (ks_lo - 1e-9 <= d <= ks_hi + 1e-9)
    return {"id": problem.id, "holds": holds, "width": hi - lo, "requests": tree.requests,
            "unresolved": bool(scores.get("unresolved")), "stopped": tree.stopped, "p_exact": p_exact,
            "bounds": (lo, hi), "ks": d, "ks_bounds": (ks_lo, ks_hi)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=12, help="problems drawn from the tree problems of the bank")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--max-requests", type=int, default=1000)
    ap.add_argument("--writers", default=",".join(WRITERS))
    ap.add_argument("--ids", default=None, help="these problems (comma-separated) instead of a draw")
    args = ap.parse_args()
    pool = [p for p in load_bank("ksn") if candidate_set(p) is None and p.answer_format == "number"]
    if args.ids:
        problems = [get_problem(i) for i in args.ids.split(",")]
    else:
        problems = random.Random(args.seed).sample(pool, min(args.limit, len(pool)))
    print(f"{len(problems)} problems (seed {args.seed}): {', '.join(p.id for p in problems)}")
    print("| writer | problems | bounds hold the exact law | median p_pass@100 width | median requests | unresolved |"
          " time |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    misses = []
    for name in args.writers.split(","):
        t = time.time()
        rows = [run(p, WRITERS[name], args.max_requests, args.seed) for p in problems]
        held = sum(r["holds"] for r in rows)
        print(f"| {name} | {len(rows)} | {held}/{len(rows)} | {statistics.median(r['width'] for r in rows):.3f} | "
              f"{statistics.median(r['requests'] for r in rows):.0f} | {sum(r['unresolved'] for r in rows)} | "
              f"{time.time() - t:.0f} s |", flush=True)
        if args.ids:
            for r in rows:
                print(f"  {r['id']}: p_pass@100 bounds [{r['bounds'][0]:.3f}, {r['bounds'][1]:.3f}] (exact "
                      f"{r['p_exact']:.3f}), {r['requests']} requests, {r['stopped']}", flush=True)
        misses += [(name, r) for r in rows if not r["holds"]]
    for name, r in misses:
        print(f"miss: {name} {r['id']}: p_pass exact {r['p_exact']:.4f} bounds {r['bounds']}, KS {r['ks']:.4f} "
              f"bounds {r['ks_bounds']} ({r['stopped']})")


if __name__ == "__main__":
    main()
