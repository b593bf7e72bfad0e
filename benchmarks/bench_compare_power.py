"""What the sampling-free p_pass@N buys a comparison: standard errors and minimum detectable effects of
KS@100 scored from sampled verdicts against the sampling-free pass probabilities, on the same model.

Models: mixtures of the offline reference models on the 175 problems with a listed support. ``mix w`` answers
each draw with the truth's law with probability w and with the collapsed answer otherwise, so its answer law is
w * truth + (1 - w) * point mass; its exact p_pass@100 per problem comes from ``score_candidate_logprobs`` (the
listed route's scorer). A sampled KS@100 verdict of a problem is Bernoulli(p_pass); ``sampling_noise_removed``
gives the two standard errors (law of total variance) for one model and for a pair.

    python benchmarks/bench_compare_power.py [--weights 1,0.99,0.97,0.95,0.9,0] [--limit K]

Prints one row per model and one per pair of neighbouring weights. Figures, not timed checks.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ub_core.metrics.paired import sampling_noise_removed
from ub_core.logprob.ksn_logprob import _collapse_index, score_candidate_logprobs
from ub_core.problems import load_bank
from ub_core.problems.candidates import candidate_set


def p_pass_of_mixture(problem, cs, w: float) -> float:
    q = w * np.asarray(cs.p, dtype=float)
    q[_collapse_index(problem, cs)] += 1 - w
    with np.errstate(divide="ignore"):
        logprobs = np.log(q)
    scores, _ = score_candidate_logprobs(problem, list(logprobs), cs=cs, ns=(100,))
    return float(scores["p_pass@100"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default="1,0.99,0.97,0.95,0.9,0")
    ap.add_argument("--limit", type=int, default=None, help="only the first K listable problems")
    args = ap.parse_args(argv)
    weights = [float(w) for w in args.weights.split(",")]
    problems = [(p, cs) for p in load_bank("ksn") for cs in [candidate_set(p)] if cs is not None][:args.limit]
    t0 = time.perf_counter()
    p = {w: np.array([p_pass_of_mixture(prob, cs, w) for prob, cs in problems]) for w in weights}
    print(f"{len(problems)} listable problems, p_pass@100 computed in {time.perf_counter() - t0:.0f} s")
    print(f"{'model':>10s} {'mean p_pass':>11s} {'SE free':>8s} {'SE sampled':>10s} {'var left':>8s} "
          f"{'MDE free':>8s} {'MDE sampled':>11s}")
    for w in weights:
        s = sampling_noise_removed(p[w])
        print(f"{'mix ' + str(w):>10s} {p[w].mean():11.4f} {s['se_free']:8.4f} {s['se_sampled']:10.4f} "
              f"{s['variance_ratio']:8.3f} {s['mde_free']:8.4f} {s['mde_sampled']:11.4f}")
    print("pairs (paired by problem; MDE of the paired difference):")
    for a, b in zip(weights, weights[1:]):
        s = sampling_noise_removed(p[a], p[b])
        diff = float(np.mean(p[a] - p[b]))
        print(f"{'mix ' + str(a) + ' vs ' + str(b):>22s}: diff {diff:+.4f}, SE free {s['se_free']:.4f} vs sampled "
              f"{s['se_sampled']:.4f} (variance left {s['variance_ratio']:.3f}), MDE {s['mde_free']:.4f} vs "
              f"{s['mde_sampled']:.4f}; detectable: free {abs(diff) > s['mde_free']}, sampled "
              f"{abs(diff) > s['mde_sampled']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
