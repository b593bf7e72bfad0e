"""p_pass bounds with cells on the mixed support, printed (not a test).

Every ``mixed`` problem of the ``ksn`` bank: ub/oracle's law at full precision (``render_value`` of
``oracle_values``, 20,000 draws, one digit per token) enumerated by ``enumerate_problem_tree_sync`` (the
problem's own stop: KS bounds 0.02, p_pass bounds 0.1 at N = 100) and scored by ``score_reply_tree`` at N = 10
and 100. Per problem: the truth's atom count, the stop, requests, cells, the KS and p_pass@100 bounds and their
widths, the enumeration's and one scoring's wall time (this machine; the critical values are cached per process,
so the first problem of a given atom count pays for them).

Usage: PYTHONPATH=. python benchmarks/bench_mixed_cells.py [problem ids...]
"""

from __future__ import annotations

import sys
import time

import numpy as np


def main(ids: list[str]) -> None:
    from ub_core.logprob.oracle_replies import OracleReplyLaw
    from ub_core.logprob.reply_tree import enumerate_problem_tree_sync, score_reply_tree
    from ub_core.oracle import oracle_values, render_value
    from ub_core.problems import get_problem, load_bank

    problems = [get_problem(i) for i in ids] or [p for p in load_bank("ksn") if p.support == "mixed"]
    print(f"{'problem':32s} {'t0':>5s} {'stop':>9s} {'req':>4s} {'cells':>5s} {'ks width':>8s} "
          f"{'p_pass@100 bounds':>18s} {'width':>6s} {'enum s':>6s} {'score s':>7s}")
    for p in problems:
        texts = [render_value(p, v) for v in oracle_values(p, 20_000, seed=3)]
        u, c = np.unique(np.asarray(texts, dtype=object), return_counts=True)
        law = OracleReplyLaw({str(t): k / len(texts) for t, k in zip(u, c)}, p.id, exact=False)
        t = time.perf_counter()
        tree = enumerate_problem_tree_sync(p, lambda pre, law=law: law.next_tokens(pre, 20), ends=["</s>"],
                                           ns=(100,), sample=law.sampler(0))
        t_enum = time.perf_counter() - t
        t = time.perf_counter()
        _, pl = score_reply_tree(p, tree, ns=(10, 100))
        t_score = time.perf_counter() - t
        ks_lo, ks_hi = pl["ks_distance_bounds"]
        lo, hi = pl["p_pass_bounds@100"]
        t0 = int((p.truth(size=10_000, seed=0) == 0).sum())
        print(f"{p.id:32s} {t0:5d} {tree.stopped:>9s} {tree.requests:4d} {len(tree.cells):5d} {ks_hi - ks_lo:8.4f} "
              f"[{lo:.4f}, {hi:.4f}] {hi - lo:6.4f} {t_enum:6.1f} {t_score:7.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
