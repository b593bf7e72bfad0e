"""Validation of the reply-tree route of sampling-free KS@N (``ub_core.logprob.reply_tree``) on the tiny
trained model (tests/support/tiny_trained.py), against ancestral sampling of the same model.

``next_tokens(prefix)`` reads the model's top-20 next tokens after ``prompt + prefix`` (tokenised afresh, full
softmax at temperature 1, each token id decoded alone, EOS written as its text ``</s>``: what an OpenAI-compatible
server's ``top_logprobs`` gives the Inspect solver), and :func:`enumerate_reply_tree_sync` expands the tree best
first until the missing mass M is at most MAX_MISSING (or MAX_REQUESTS were read: M is then larger and carried).
Replies are capped at MAX_NEW_TOKENS tokens in both routes: a longer reply is missing mass in the tree and a cut
text for the sampler, so it lies inside the bounds either way.

The problems are fixed in advance, never chosen by what the model answers:

- te-poisson-conc and te-negative_binomial-conc (TAUGHT_KSN, listable, 20% and 50% invalid replies, one of them
  a reply that starts with a valid candidate): the tree must give the listed route's valid mass and law within the
  missing mass (check 0), and the sampled checks below;
- three continuous problems that no list covers: te-uniform-spread (TAUGHT_KSN: valid {1} or {7}, far from its
  truth), te-normal-conc and te-exponential-conc (the bank's textbook continuous laws, not trained: the model does
  whatever it does there on this machine, and the checks compare that measurement with the tree's prediction).

With V the enumerated valid mass, I the invalid and M the missing mass, eps = M / (V + M), each problem's sampled
replies (temperature 1, the streams of tests/ksn_logprob/test_ksn_logprob_validation.py where the problems are
shared) must give

1. an invalid count among all sampled replies inside [Binomial(m, 1 - V - M) lower quantile, Binomial(m, 1 - V)
   upper quantile] (the true invalid share lies in [1 - V - M, 1 - V]);
2. valid values whose empirical CDF lies within eps + c of the enumerated law Q, c the Kolmogorov critical value
   for the check's level (the true valid law G is within eps of Q in sup norm, module docstring of
   ``ub_core.logprob.reply_tree``; the Kolmogorov distribution is conservative for a discrete G, Conover 1972);
3. a KS@N pass count over RUNS runs of each protocol (Inspect: 100 slots, 5 attempts; lm-eval: 100 replies, no
   retry) inside the binomial interval from the lower quantile at ``p_pass_bounds@N``'s low end to the upper
   quantile at its high end; where P(pass | N valid answers) is a Monte-Carlo estimate (2,000 draws), half the
   level goes to its Clopper-Pearson interval, whose ends are carried through the same bounds.

All sampled checks run at ALPHA / m for the m checks together (Bonferroni: the family fails by chance with
probability <= ALPHA = 1%).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from support.ancestral import (VALIDATION_SEED, assert_teeth, read_replies, replies_needed, sampled_pass_counts,
                               within_binomial)
from support.tiny_trained import TARGET_TOL, taught_invalid_mass, taught_invalid_replies
from ub_core.logprob.ksn_logprob import RAW_DELIMITER, score_candidate_logprobs
from ub_core.metrics import P_PASS_DRAWS
from ub_core.problems import get_problem
from ub_core.problems.candidates import candidate_set
from ub_core.logprob.reply_tree import (enumerate_reply_tree_sync, ks_distance_to_draws, missing_mass_bounds,
                                        read_leaves, score_reply_tree)

pytestmark = pytest.mark.slow

#: listable (TAUGHT_KSN) problems, with their streams' seeds in tests/ksn_logprob/test_ksn_logprob_validation.py
#: (SEED + index)
LISTED = {"te-poisson-conc": VALIDATION_SEED, "te-negative_binomial-conc": VALIDATION_SEED + 1}
CONTINUOUS = {"te-uniform-spread": VALIDATION_SEED + 100, "te-normal-conc": VALIDATION_SEED + 101,
              "te-exponential-conc": VALIDATION_SEED + 102}
PROTOCOLS = (("inspect", 100, 5), ("lmeval", 100, 1))
NS = (10, 50, 100)
#: runs per protocol: sampling is the cost (~27,000 replies in all, fewer where the listed validation drew them)
RUNS = 30
ALPHA = 0.01
MAX_MISSING = 0.002
MAX_REQUESTS = 2000
TOP_K = 20
#: check 0: float32 forward passes over different lengths (~1e-6), and token paths other than the tokenizer's own
#: spelling of a reply, which the tree adds to that reply and the listed route does not count
LISTED_TOL = 0.01


def _checks() -> int:
    return (len(LISTED) + len(CONTINUOUS)) * (2 + len(PROTOCOLS) * len(NS))


@pytest.fixture(scope="module")
def measured(tiny_lm):
    out = {}
    for pid, seed in {**LISTED, **CONTINUOUS}.items():
        problem = get_problem(pid)
        prompt = problem.full_prompt
        tree = enumerate_reply_tree_sync(lambda prefix, prompt=prompt: tiny_lm.next_tokens(prompt, prefix, TOP_K),
                                         ends=[tiny_lm.tok.eos_token], max_missing=MAX_MISSING,
                                         max_requests=MAX_REQUESTS, max_tokens=tiny_lm.max_new_tokens, top_k=TOP_K)
        assert tree.bad is None, (pid, tree.bad)
        predicted = {name: score_reply_tree(problem, tree, ns=NS, slots=slots, max_attempts=attempts)
                     for name, slots, attempts in PROTOCOLS}
        valid = predicted["inspect"][0]["valid_mass"]
        count = max(replies_needed(valid, s, a, RUNS) for _, s, a in PROTOCOLS)
        replies = read_replies(problem, tiny_lm.replies(prompt, count, seed))
        passes = sampled_pass_counts(replies, problem.truth(), problem.support, PROTOCOLS, NS, RUNS)
        out[pid] = {"problem": problem, "tree": tree, "predicted": predicted, "replies": replies, "passes": passes}
    return out


def test_the_tree_agrees_with_the_listed_route_within_the_missing_mass(measured, tiny_lm):
    """Check 0 (no sampling): on listable problems the tree's leaves that are exactly a candidate as written carry
    the listed route's valid mass and law within the tree's missing mass (the same quantity by two routes), and the
    tree's whole valid mass lies in the listed route's bounds [V, V + U]: what the tree finds beyond the candidate
    texts (valid answers written otherwise) is the listed route's unlisted mass, never more."""
    for pid in LISTED:
        r = measured[pid]
        problem, tree = r["problem"], r["tree"]
        cs = candidate_set(problem)
        lps = [tiny_lm.exact_reply_logprob(problem.full_prompt, RAW_DELIMITER + t) for t in cs.texts]
        listed, listed_payload = score_candidate_logprobs(problem, lps)
        values, masses, invalid = read_leaves(problem, tree.leaves)
        valid, miss = float(masses.sum()), tree.missing_mass
        as_listed = {RAW_DELIMITER + t: i for i, t in enumerate(cs.texts)}
        canon = np.array([tree.leaves.get(text, 0.0) for text in as_listed])
        canon_valid = float(canon.sum())
        eps = miss / (canon_valid + miss)
        listed_q = np.asarray(listed_payload["q"], dtype=float)
        cand_values = np.asarray(cs.values, dtype=float)
        # the listed law against the tree's leaves that are the candidates as written, both as laws of the value
        d = _sup_cdf(cand_values, canon, cand_values, listed_q)
        elsewhere = {t: m for t, m in tree.leaves.items() if t not in as_listed and problem.parse(t).ok}
        top = sorted(elsewhere.items(), key=lambda kv: -kv[1])[:3]
        print(f"{pid}: exact candidate replies tree {canon_valid:.4f} (missing {miss:.4f}) listed "
              f"{listed['valid_mass']:.4f}; sup |Q_tree - Q_listed| {d:.4f} (eps {eps:.4f}); valid written otherwise "
              f"{sum(elsewhere.values()):.4f} {top}")
        assert abs(canon_valid - listed["valid_mass"]) <= miss + LISTED_TOL, pid
        assert d <= eps + LISTED_TOL, pid
        assert listed["valid_mass"] - LISTED_TOL <= valid <= listed["valid_mass"] + listed["missing_mass"] + LISTED_TOL
        # teeth: these problems are taught invalid replies (targets within TARGET_TOL each), which the tree finds
        # as leaves, not as missing mass
        assert invalid >= taught_invalid_mass(pid) - TARGET_TOL * taught_invalid_replies(pid) - miss, (pid, invalid)
        assert miss <= MAX_MISSING


def _sup_cdf(values_a, masses_a, values_b, masses_b) -> float:
    """sup_x |A(x) - B(x)| for two laws given as masses at values (each renormalised)."""
    grid = np.union1d(values_a, values_b)
    cdfs = []
    for v, m in ((values_a, masses_a), (values_b, masses_b)):
        pmf = np.zeros(grid.size)
        np.add.at(pmf, np.searchsorted(grid, v), np.asarray(m, dtype=float) / float(np.sum(m)))
        cdfs.append(np.cumsum(pmf))
    return float(np.max(np.abs(cdfs[0] - cdfs[1])))


def test_the_sampled_invalid_share_lies_in_the_predicted_interval(measured):
    level = ALPHA / _checks()
    lines, bad = [], []
    for pid, r in measured.items():
        scores = r["predicted"]["inspect"][0]
        v, miss = scores["valid_mass"], scores["missing_mass"]
        m = len(r["replies"])
        invalid = sum(x is None for x in r["replies"])
        within_binomial(f"{pid}: predicted invalid share [{1 - v - miss:.4f}, {1 - v:.4f}] ({invalid / m:.4f} "
                        f"sampled)", invalid, m, max(1 - v - miss, 0.0), min(1 - v, 1.0), level, lines, bad)
    print("\n".join(lines))
    assert not bad, bad


def test_sampled_valid_values_follow_the_enumerated_law(measured):
    level = ALPHA / _checks()
    lines, bad = [], []
    for pid, r in measured.items():
        payload = r["predicted"]["inspect"][1]
        sample = np.asarray([x for x in r["replies"] if x is not None], dtype=float)
        d = ks_distance_to_draws(payload["q"], payload["values"], sample)
        eps = payload["eps"]
        crit = float(stats.kstwo.isf(level, sample.size))
        p = float(stats.kstwo.sf(max(d - eps, 0.0), sample.size))
        lines.append(f"{pid}: KS distance {d:.4f} over {sample.size} valid answers, eps {eps:.4f}, accept <= "
                     f"{eps + crit:.4f}; p of (d - eps) {p:.3g}")
        if d > eps + crit:
            bad.append(lines[-1])
    print("\n".join(lines))
    assert not bad, bad


def test_sampled_pass_rates_lie_in_the_predicted_p_pass_bounds(measured):
    level = ALPHA / _checks()
    lines, bad = [], []
    for pid, r in measured.items():
        tree = r["tree"]
        for name, slots, attempts in PROTOCOLS:
            scores, payload = r["predicted"][name]
            v, inv = scores["valid_mass"], payload["invalid_mass"]
            for n in NS:
                lo, hi = payload[f"p_pass_bounds@{n}"]
                a = level
                if not payload[f"p_pass_exact@{n}"]:  # Monte Carlo: half the level for its Clopper-Pearson interval
                    given = payload[f"p_pass_given_valid@{n}"]
                    ci = stats.binomtest(round(given * P_PASS_DRAWS), P_PASS_DRAWS).proportion_ci(1 - level / 2)
                    d = scores["ks_distance"]
                    lo = missing_mass_bounds(d, {n: ci.low}, v, inv, tree.missing_mass, slots,
                                             attempts)[f"p_pass_bounds@{n}"][0]
                    hi = missing_mass_bounds(d, {n: ci.high}, v, inv, tree.missing_mass, slots,
                                             attempts)[f"p_pass_bounds@{n}"][1]
                    a = level / 2
                within_binomial(f"{pid} {name} N={n}: predicted [{lo:.4f}, {hi:.4f}] "
                                f"({'exact' if payload[f'p_pass_exact@{n}'] else 'Monte Carlo'})",
                                r["passes"][name][n], RUNS, lo, hi, a, lines, bad)
    print("\n".join(lines))
    assert not bad, bad
    assert_teeth({(pid, name, n): (*r["predicted"][name][1][f"p_pass_bounds@{n}"],
                                   r["predicted"][name][1].get(f"p_pass_unresolved@{n}",
                                                               r["predicted"][name][0][f"p_pass@{n}"]))
                  for pid, r in measured.items()
                  for name, _, _ in PROTOCOLS for n in NS}, RUNS, level)
