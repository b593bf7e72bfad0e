"""Coverage and cost of the reply-tree route of sampling-free KS@N, printed (not a test).

(a) **The oracle's law, every problem of the ``ksn`` bank**: :func:`ub_core.logprob.oracle_replies.oracle_reply_law`
    (the listed candidates with their exact probabilities where the support can be listed, else 100,000 true draws
    written with ``digits`` significant digits, split into tokens as a digit-per-token tokenizer would) enumerated by
    :func:`enumerate_reply_tree_sync` with the route's defaults (stop at missing mass 0.01, 4,000 requests, top-20
    next tokens). Per support kind: how many reach 0.99, requests (median, p90, max), leaves (median, max), and the
    problems that cannot, with the reason. With ``-M digits=2`` and ``-M digits=3`` (at the default, full
    precision, every draw is its own reply: ``--digits 0`` runs it).
(b) **The tiny trained model** (tests/support/tiny_trained.py) on CPU with transformers, for a spread of listed and
    continuous problems: the tree (one top-20 next-token request per expanded prefix, each a forward pass over
    prompt + prefix; the reply tokens those requests carry, ``context_tokens``, and the prompt tokens with and
    without a server's prefix caching), against sampling 100 answers (one request with n = 100: the prompt once
    plus every generated token, EOS included). Wall times are this tiny model's on this machine: what carries over
    is the request and token counts.
(c) **The offline models' law memory and request time**: for unlistable problems drawn at random, the size of
    one full-precision law (:attr:`OracleReplyLaw.nbytes`), its build time and peak traced memory, and the time of
    one next-token request along a best-first walk (one-digit and three-digit tokens, top_k=1000); then the
    process's peak resident memory after building a law for every unlistable problem through the provider's
    bounded cache (``--cache-laws N`` of them; 0 skips).

(d) **The tree route's targets**: problems drawn at random (two thirds continuous or mixed), ub/oracle's full-precision
    law with one-digit tokens at top-20 and three-digit tokens at top-1000, and ub/collapse, through the tree route
    with cells (:func:`enumerate_problem_tree_sync`): requests, bounds, and tokens against sampling 100 answers.
    Part (a) is the route without cells (leaves only), kept to show why cells are needed.

Usage: PYTHONPATH=.:tests python benchmarks/bench_ksn_tree.py [--skip-targets] [--skip-oracle] [--skip-model]
       [--skip-laws]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import numpy as np

KINDS = ("continuous", "discrete", "mixed", "categorical", "permutation")
#: (b): the sampling-free validations' problems (taught, listable), one learnt at its truth, and continuous ones
MODEL_IDS = ("te-poisson-conc", "te-negative_binomial-conc", "te-bernoulli-spread", "te-discrete_uniform-conc",
             "te-uniform-spread", "te-normal-conc", "te-exponential-conc", "te-beta-conc", "te-gamma-spread",
             "rw-os_concurrency-02")


def _pct(xs, q):
    return float(np.percentile(xs, q)) if xs else float("nan")


def oracle_coverage(digits: int | None) -> None:
    from ub_core.logprob.eos import OFFLINE_EOS
    from ub_core.problems import load_bank
    from ub_core.logprob.oracle_replies import oracle_reply_law
    from ub_core.logprob.reply_tree import enumerate_reply_tree_sync

    rows = defaultdict(list)
    t0 = time.perf_counter()
    for p in load_bank("ksn"):
        law = oracle_reply_law(p, digits=digits)
        tree = enumerate_reply_tree_sync(law.next_tokens, ends=[OFFLINE_EOS])
        rows[p.support].append((p.id, tree, len(law), law.exact))
    wall = time.perf_counter() - t0
    print(f"\n(a) ub/oracle's reply law, {digits or 'all'} significant digits (continuous answers), "
          f"stop at missing 0.01, 4,000 requests, top-20; {wall:.0f}s for the bank")
    print(f"{'support':12} {'problems':>8} {'reach 0.99':>10} {'requests med/p90/max':>21} {'leaves med/max':>15} "
          f"{'replies med':>11}")
    failures = []
    total = covered = 0
    for kind in KINDS:
        got = rows.get(kind, [])
        ok = [t for _, t, _, _ in got if t.missing_mass <= 0.01]
        req = [t.requests for _, t, _, _ in got]
        leaves = [len(t.leaves) for _, t, _, _ in got]
        replies = [n for _, _, n, _ in got]
        total, covered = total + len(got), covered + len(ok)
        print(f"{kind:12} {len(got):>8} {len(ok):>10} {statistics.median(req) if req else 0:>9.0f} /"
              f"{_pct(req, 90):>5.0f} /{max(req, default=0):>5} {statistics.median(leaves) if leaves else 0:>8.0f} /"
              f"{max(leaves, default=0):>5} {statistics.median(replies) if replies else 0:>11.0f}")
        for pid, t, n, exact in got:
            if t.missing_mass > 0.01:
                failures.append((kind, pid, t, n, exact))
    print(f"{'all':12} {total:>8} {covered:>10}")
    why = {"budget": "the 4,000 requests spent", "exhausted": "nothing left above the node floor"}
    for (kind, stopped), group in _grouped(failures).items():
        missing = [t.missing_mass for _, t, _ in group]
        replies = [n for _, _, n in group]
        print(f"  cannot ({len(group)} {kind}, {why.get(stopped, stopped)}): missing mass median "
              f"{statistics.median(missing):.3f}, max {max(missing):.3f}; distinct replies in the law median "
              f"{statistics.median(replies):.0f} (min {min(replies)}), leaves reached median "
              f"{statistics.median([len(t.leaves) for _, t, _ in group]):.0f}; e.g. "
              f"{', '.join(pid for pid, _, _ in group[:6])}{' ...' if len(group) > 6 else ''}")


def _grouped(failures):
    groups = defaultdict(list)
    for kind, pid, t, n, _ in failures:
        groups[kind, t.stopped].append((pid, t, n))
    return groups


def model_cost() -> None:
    from support.ancestral import TinyLM
    from support.tiny_trained import ensure_tiny_trained
    from ub_core.problems import get_problem
    from ub_core.problems.candidates import candidate_set
    from ub_core.logprob.reply_tree import enumerate_problem_tree_sync, score_reply_tree

    import torch

    lm = TinyLM.load(ensure_tiny_trained())
    torch.manual_seed(0)
    print("\n(b) tiny trained model (transformers, CPU): tree route (cells, stop at the bounds' targets, top-20, "
          "replies <= 16 tokens) vs sampling 100 answers")
    print(f"{'problem':26} {'support':10} {'cand':>4} | {'tree: req':>9} {'covered':>7} {'leaves':>6} "
          f"{'reply tok':>9} {'tok cached':>10} {'uncached':>8} {'wall s':>6} | {'sampling: req':>13} "
          f"{'tokens':>6} {'wall s':>6} | valid, p_pass@100 [bounds]")
    for pid in MODEL_IDS:
        problem = get_problem(pid)
        prompt = problem.full_prompt
        cs = candidate_set(problem)
        n_prompt = len(lm.tok(prompt)["input_ids"])
        t0 = time.perf_counter()
        tree = enumerate_problem_tree_sync(problem, lambda prefix, prompt=prompt: lm.next_tokens(prompt, prefix),
                                           ends=[lm.tok.eos_token], max_tokens=lm.max_new_tokens, ns=(100,))
        tree_wall = time.perf_counter() - t0
        scores, payload = score_reply_tree(problem, tree, ns=(100,))
        t0 = time.perf_counter()
        _, generated = lm.sample(prompt, 100)
        sample_wall = time.perf_counter() - t0
        bounds = payload.get("p_pass_bounds@100", [float("nan")] * 2)
        print(f"{pid:26} {problem.support:10} {len(cs) if cs else '-':>4} | {tree.requests:>9} "
              f"{1 - tree.missing_mass:>7.4f} {len(tree.leaves):>6} {tree.context_tokens:>9} "
              f"{n_prompt + tree.context_tokens:>10} {tree.requests * n_prompt + tree.context_tokens:>8} "
              f"{tree_wall:>6.2f} | {'1 (n=100)':>13} {n_prompt + generated:>6} {sample_wall:>6.2f} | "
              f"{scores['valid_mass']:.3f}, {scores['p_pass@100']:.3f} [{bounds[0]:.3f}, {bounds[1]:.3f}]")
    print("\nTokens: 'tok cached' = the prompt once plus the reply tokens every request carried (a server with prefix "
          "caching, as vLLM); 'uncached' = the prompt per request. Sampling: the prompt once plus every generated "
          "token. The tree generates one token per request.")


def law_cost(problems: int = 8, walk: int = 200, cache_laws: int = 0) -> None:
    import heapq
    import random
    import re
    import tracemalloc
    from pathlib import Path

    from ub_core.logprob import oracle_replies
    from ub_core.logprob.oracle_replies import OracleReplyLaw, ReplyWriter
    from ub_core.problems import load_bank
    from ub_core.problems.candidates import candidate_set

    unlisted = [p for p in load_bank("ksn") if candidate_set(p) is None]
    picked = random.Random(33).sample(unlisted, problems)
    print(f"\n(c) offline law size and request time, {problems} of the {len(unlisted)} unlistable problems "
          f"(100,000 full-precision draws each)")
    print(f"{'problem':32} {'K':>2} {'replies':>8} {'held MB':>8} {'peak MB':>8} {'build s':>8} "
          f"{'req ms med/p90/max':>20} {'children max':>12}")
    for p in picked:
        for k in (1, 3):
            tracemalloc.start()
            t0 = time.perf_counter()
            law = OracleReplyLaw.for_problem(p, writer=ReplyWriter(None, k))
            build = time.perf_counter() - t0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            times, widest = [], 0
            frontier = [(-0.0, "")]
            while frontier and len(times) < walk:  # best first, as the tree route walks
                lp, prefix = heapq.heappop(frontier)
                t0 = time.perf_counter()
                top = law.next_tokens(prefix, top_k=1000)
                times.append(1e3 * (time.perf_counter() - t0))
                widest = max(widest, len(top))
                for tok, child in top:
                    if tok != "</s>":
                        heapq.heappush(frontier, (lp - child, prefix + tok))
            print(f"{p.id:32} {k:>2} {len(law):>8} {law.nbytes / 2**20:>8.2f} {peak / 2**20:>8.1f} {build:>8.2f} "
                  f"{_pct(times, 50):>6.2f}/{_pct(times, 90):>5.2f}/{max(times):>6.2f} {widest:>12}")
    if cache_laws:
        def rss_peak():
            return int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024

        before = rss_peak()
        t0 = time.perf_counter()
        for p in unlisted[:cache_laws]:
            oracle_replies.oracle_reply_law(p)
        held = sum(v.nbytes for v in oracle_replies._LAWS.values())
        print(f"built {min(cache_laws, len(unlisted))} laws through the cache in {time.perf_counter() - t0:.0f}s: "
              f"{len(oracle_replies._LAWS)} kept ({held / 2**20:.0f} MB held; bound {oracle_replies.MAX_CACHED_LAWS} "
              f"laws, {oracle_replies.MAX_CACHE_BYTES / 2**20:.0f} MiB); peak RSS {before:.0f} -> {rss_peak():.0f} MB")


#: (d): the writers of the tree route's targets: (label, number_token_digits, top_k)
TARGET_WRITERS = (("full precision, 1-digit tokens, top-20", 1, 20),
                  ("full precision, 3-digit tokens, top-1000", 3, 1000))


def targets(n_problems: int = 24, seed: int = 33) -> None:
    """(d) The tree route's targets: problems drawn at random (two thirds continuous or mixed), the tree route with
    cells (:func:`enumerate_problem_tree_sync`, its defaults: stop at KS bounds 0.02 wide and p_pass@100 bounds
    0.1 wide, 4,000 requests) on ub/oracle's full-precision law for each writer of :data:`TARGET_WRITERS`, and
    on ub/collapse. Requests and reply tokens against sampling 100 answers; prompt tokens are counted as
    whitespace words (the offline models have no tokenizer)."""
    from ub_core.logprob.eos import OFFLINE_EOS
    from ub_core.logprob.oracle_replies import ReplyWriter, oracle_reply_law
    from ub_core.logprob.reply_tree import enumerate_problem_tree_sync, score_reply_tree
    from ub_core.oracle import oracle_values
    from ub_core.problems import load_bank

    bank = list(load_bank("ksn"))
    rng = np.random.default_rng(seed)
    numeric = [p for p in bank if p.support in ("continuous", "mixed")]
    other = [p for p in bank if p.support not in ("continuous", "mixed")]
    k = round(n_problems * 2 / 3)
    picked = [numeric[i] for i in rng.choice(len(numeric), k, replace=False)]
    picked += [other[i] for i in rng.choice(len(other), n_problems - k, replace=False)]
    print(f"\n(d) tree route targets: {len(picked)} problems at random (seed {seed}; {k} continuous or mixed), tree "
          f"route with cells, stop at the bounds' targets; targets: p_pass@100 >= 0.95 with bounds <= 0.1 wide, "
          f"median requests <= 1,000, ub/collapse's p_pass@100 upper bound <= 0.05 where its KS distance >= 0.1")
    for label, token_digits, top_k in TARGET_WRITERS:
        writer = ReplyWriter(None, token_digits)
        print(f"\n  ub/oracle, {label}")
        print(f"  {'problem':28} {'support':11} {'req':>5} {'stop':>9} {'cells':>6} {'missing':>8} "
              f"{'KS [bounds]':>24} {'p_pass@100 [bounds]':>27} {'reply tok':>9} {'cached':>7} {'uncached':>8} "
              f"{'sampling':>8} {'s':>5}")
        reqs, misses = [], []
        for p in picked:
            law = oracle_reply_law(p, digits=None, number_token_digits=token_digits)
            t0 = time.perf_counter()
            tree = enumerate_problem_tree_sync(p, lambda pre, law=law, top_k=top_k: law.next_tokens(pre, top_k),
                                               ends=[OFFLINE_EOS], top_k=top_k, ns=(100,), sample=law.sampler(0))
            scores, pay = score_reply_tree(p, tree, ns=(100,))
            wall = time.perf_counter() - t0
            prompt = len(p.full_prompt.split())
            reply = statistics.mean(len(writer.tokens(writer.write(p, v))) + 1 for v in oracle_values(p, 100, seed=1))
            lo, hi = pay.get("p_pass_bounds@100", [0.0, 1.0])
            klo, khi = pay.get("ks_distance_bounds", [0.0, 1.0])
            reqs.append(tree.requests)
            ok = lo >= 0.95 and hi - lo <= 0.1
            if not ok:
                misses.append(p.id)
            print(f"  {p.id:28} {p.support:11} {tree.requests:>5} {tree.stopped:>9} {len(tree.cells):>6} "
                  f"{tree.missing_mass:>8.4f} {scores['ks_distance']:>7.4f} [{klo:.4f}, {khi:.4f}] "
                  f"{scores['p_pass@100']:>8.4f} [{lo:.4f}, {hi:.4f}]{'' if ok else ' X'} {tree.context_tokens:>9} "
                  f"{prompt + tree.context_tokens:>7} {tree.requests * prompt + tree.context_tokens:>8} "
                  f"{prompt + 100 * reply:>8.0f} {wall:>5.1f}")
        print(f"  median requests {statistics.median(reqs):.0f} (max {max(reqs)}); p_pass@100 target missed by "
              f"{len(misses)} of {len(picked)}{': ' + ', '.join(misses) if misses else ''}")
    print("\n  ub/collapse (one reply per problem)")
    bad = []
    for p in picked:
        law = oracle_reply_law(p, mode="collapse")
        tree = enumerate_problem_tree_sync(p, lambda pre, law=law: law.next_tokens(pre, 20), ends=[OFFLINE_EOS],
                                           ns=(100,), sample=law.sampler(0))
        scores, pay = score_reply_tree(p, tree, ns=(100,))
        hi = pay.get("p_pass_bounds@100", [0.0, 1.0])[1]
        if scores["ks_distance"] >= 0.1 and hi > 0.05:
            bad.append(f"{p.id} (KS {scores['ks_distance']:.3f}, upper {hi:.3f})")
    print(f"  upper bound > 0.05 where KS distance >= 0.1: {len(bad)} of {len(picked)}"
          f"{': ' + '; '.join(bad) if bad else ''}")
    print("  Tokens: 'reply tok' = reply tokens the tree's requests carried after the prompt; 'cached' = prompt once "
          "plus those (a server with prefix caching); 'uncached' = the prompt per request plus those; 'sampling' = "
          "the prompt once plus 100 replies with their end token.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-oracle", action="store_true")
    ap.add_argument("--skip-model", action="store_true")
    ap.add_argument("--skip-laws", action="store_true")
    ap.add_argument("--skip-targets", action="store_true")
    ap.add_argument("--targets-n", type=int, default=24, help="(d): problems drawn at random")
    ap.add_argument("--digits", type=int, nargs="*", default=None,
                    help="oracle digits, 0 = full precision (default: 2 and 3)")
    ap.add_argument("--cache-laws", type=int, default=273, help="(c): laws built through the cache (0 skips)")
    args = ap.parse_args()
    if not args.skip_targets:
        targets(args.targets_n)
    if not args.skip_oracle:
        for digits in args.digits or (2, 3):
            oracle_coverage(digits or None)
    if not args.skip_laws:
        law_cost(cache_laws=args.cache_laws)
    if not args.skip_model:
        model_cost()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
