"""A differential self-audit of sampling-free KS@N (issue 42): the route's bounds against the model's own samples.

For one problem and one offline writer (``ub/oracle``'s reply law written at full precision, with N significant
digits, or with digit runs of up to K digits per token: :class:`ub_core.logprob.oracle_replies.ReplyWriter`),
:func:`audit_problem` runs the sampling-free route the task would run (the listed route where the problem's
answers can be listed, else the reply tree with cells, :func:`ub_core.logprob.reply_tree.enumerate_problem_tree`)
and an independent route: ``runs`` sampled runs of N replies drawn from the same law, read by the KS@N scorer's
parser and tested by its own KS@N (:func:`ub_core.metrics.ks_at_n`). The bounds hold when the sampled pass count
is consistent with some pass probability inside ``p_pass_bounds@N``: its two-sided Clopper-Pearson interval at
``level`` meets the bounds. The KS distance of the law itself (its replies parsed) must lie inside
``ks_distance_bounds``, measured as each route defines ``ks_distance``: against the truth draws for the tree,
against the truth's pmf on the candidates for the listed route.

The problems and writers are drawn, not listed (:func:`audit_draw`): a seed from the date picks them, so no list
can be tuned to; ``tests/ksn_logprob/test_differential_audit.py`` runs a slice in CI and
``benchmarks/bench_bounds_audit.py`` the whole bank.
"""

from __future__ import annotations

import datetime as _dt
import math
import random
from typing import Any, Sequence

import numpy as np

from ..problems.base import Problem
from ..metric_keys import per_n_key
from .number_cells import clopper_pearson

__all__ = ["WRITERS", "date_seed", "audit_draw", "audit_problem"]

#: The writers the audit draws from: (digits, number_token_digits); ``None`` digits is full precision (``repr``,
#: exponents below 1e-4).
WRITERS: tuple[tuple[int | None, int], ...] = tuple(
    [(None, k) for k in (1, 2, 3, 4)] + [(d, k) for d in (1, 2, 3, 6, 10, 17) for k in (1, 3)])


def date_seed(day: _dt.date | None = None) -> int:
    """The audit's seed: the UTC date as ``YYYYMMDD`` (a new draw every day)."""
    day = day or _dt.datetime.now(_dt.timezone.utc).date()
    return day.year * 10_000 + day.month * 100 + day.day


def audit_draw(problems: Sequence[Problem], count: int, seed: int) -> list[tuple[Problem, tuple[int | None, int]]]:
    """``count`` (problem, writer) pairs drawn with ``seed``: problems without replacement, a writer each."""
    rng = random.Random(seed)
    picked = rng.sample(list(problems), min(count, len(problems)))
    return [(p, rng.choice(WRITERS)) for p in picked]


def audit_problem(problem: Problem, writer: tuple[int | None, int] = (None, 1), *, n: int = 100, runs: int = 40,
                  max_requests: int = 1000, level: float = 1e-3, seed: int = 0) -> dict[str, Any]:
    """One problem's audit (module docstring): the route's bounds, the sampled pass rate, and whether they agree.

    Returns ``route``, ``p_pass`` and ``p_pass_bounds`` at N, ``sampled`` (pass share over ``runs`` runs),
    ``sampled_ci`` (its Clopper-Pearson interval at ``level``), ``ks_distance_bounds``, ``ks_law`` (the law's own
    KS distance to the truth draws), ``requests``, ``stopped`` and ``holds`` (the interval meets the bounds and
    the law's distance lies in its bounds, within 1e-9)."""
    from ..metrics import ks_at_n
    from ..metrics.answer_distribution import ks_distance
    from ..problems.candidates import candidate_set
    from .eos import OFFLINE_EOS
    from .ksn_logprob import RAW_DELIMITER, oracle_candidate_logprob, score_candidate_logprobs
    from .oracle_replies import oracle_reply_law
    from .reply_tree import enumerate_problem_tree_sync, ks_distance_to_draws, read_leaves, score_reply_tree

    digits, token_digits = writer
    truth = np.asarray(problem.truth(), dtype=float)
    cs = candidate_set(problem)
    if cs is not None and digits is None:
        lps = [oracle_candidate_logprob(problem, RAW_DELIMITER + t) for t in cs.texts]
        scores, payload = score_candidate_logprobs(problem, lps, ns=(n,))
        route, requests, stopped = "listed", len(cs), "listed"
        law = oracle_reply_law(problem, digits=None)
    else:
        law = oracle_reply_law(problem, digits=digits, number_token_digits=token_digits)
        top_k = 1000 if token_digits >= 3 else 20
        tree = enumerate_problem_tree_sync(problem, lambda prefix: law.next_tokens(prefix, top_k),
                                           ends=[OFFLINE_EOS], top_k=top_k, max_requests=max_requests, ns=(n,))
        scores, payload = score_reply_tree(problem, tree, ns=(n,))
        route, requests, stopped = "tree", tree.requests, tree.stopped
    texts, probs = law.texts, law.probs / law.probs.sum()
    values, masses, _ = read_leaves(problem, dict(zip(texts, probs)))
    if masses.sum() <= 0:
        ks_law = math.nan
    elif route == "listed":  # the listed route's distance is to the truth's pmf on the candidates
        pmf = np.array([float(np.sum(np.asarray(cs.p)[np.asarray(cs.values, dtype=float) == v])) for v in values])
        ks_law = ks_distance(masses, pmf, values)
    else:  # the tree's is to the truth draws KS@N tests against
        ks_law = ks_distance_to_draws(masses, values, truth)
    rng = np.random.default_rng(seed)
    passed = 0
    for _ in range(runs):
        drawn = [problem.parse(texts[i]).value for i in rng.choice(len(texts), size=n, p=probs)]
        drawn = [v for v in drawn if v is not None]
        passed += bool(ks_at_n(drawn, truth, ns=(n,), support=problem.support)[n]["pass"])
    ci = clopper_pearson(passed, runs, 1.0 - level)
    lo, hi = payload.get(per_n_key("p_pass_bounds", n), (0.0, 1.0))
    ks_lo, ks_hi = payload.get("ks_distance_bounds", (0.0, 1.0))
    holds = ci[0] <= hi + 1e-9 and ci[1] >= lo - 1e-9 and (
        math.isnan(ks_law) or ks_lo - 1e-9 <= ks_law <= ks_hi + 1e-9)
    return {"id": problem.id, "writer": writer, "route": route, "p_pass": scores.get(per_n_key("p_pass", n)),
            "p_pass_bounds": [float(lo), float(hi)], "sampled": passed / runs, "sampled_ci": list(ci),
            "ks_distance_bounds": [float(ks_lo), float(ks_hi)], "ks_law": ks_law, "requests": requests,
            "stopped": stopped, "holds": bool(holds)}
