"""A differential self-audit of sampling-free KS@N (issue 42): the route's bounds against the model's own samples.

For one problem and one offline writer (``ub/oracle``'s reply law written at full precision, with N significant
digits, or with digit runs of up to K digits per token: :class:`ub_core.logprob.oracle_replies.ReplyWriter`),
:func:`audit_problem` runs the sampling-free route the task would run (the listed route where the problem's
answers can be listed, else the reply tree with cells, :func:`ub_core.logprob.reply_tree.enumerate_problem_tree`)
and an independent route: ``runs`` sampled runs of N replies drawn from the same law, read by the KS@N scorer's
parser and tested by its own KS@N (:func:`ub_core.metrics.ks_at_n`). The bounds hold when the sampled pass count
is consistent with some pass probability inside ``p_pass_bounds@N``: its two-sided Clopper-Pearson interval at
``level`` meets the bounds. The KS distance of the law itself (its replies parsed) must lie inside
``ks_distance_bounds``, measured as the problem defines ``ks_distance`` on either route
(:func:`ub_core.logprob.reply_tree.truth_reference`: the truth's pmf where its answers can be listed, else its draws).

The grammar assumption, audited (issue 42). The tree places a begun number's unexpanded mass inside its interval
(:mod:`.number_cells`), which a writer breaks where it goes on from a cell's prefix otherwise: an exponent after a
mantissa (``repr`` writes ``5.44e-05``), or a reply the parser rejects. The audit measures that *escape mass* e of
the writer's own law (:func:`grammar_escape_mass`) and checks two statements, each of which a bug breaks:

* the bounds without the assumption (``..._unassumed``: cells counted as missing) contain the sampled pass rate
  and the law's distance, with no slack;
* the plain bounds do so within what e can move: the bounds are those of a law P' that agrees with the writer on
  every node the tree read and replaces each escaping reply below an unexpanded cell by one inside the cell's
  interval. Between the two laws' valid answers the total variation is at most tau = e / V (V the writer's valid
  mass), so the KS distance moves by at most tau and P(N answers pass) by at most 1 - (1 - tau)^N, and the valid
  mass by at most the escaping invalid mass (through ``p_enough_valid``).

A writer that keeps to the grammar (e = 0) gets no slack.

The problems and writers are drawn, not listed (:func:`audit_draw`): a seed from the date picks them, so no list
can be tuned to; ``tests/ksn_logprob/test_differential_audit.py`` runs a slice in CI and
``benchmarks/bench_bounds_audit.py`` the whole bank.
"""

from __future__ import annotations

import datetime as _dt
import math
import random
import re
from typing import Any, Sequence

import numpy as np

from ..problems.base import Problem
from ..metric_keys import per_n_key
from .number_cells import clopper_pearson

__all__ = ["WRITERS", "date_seed", "audit_draw", "audit_problem", "grammar_escape_mass", "sample_replies"]

#: The writers the audit draws from: (digits, number_token_digits[, split]); ``None`` digits is full precision
#: (``repr``, exponents below 1e-4); split ``random`` cuts digit runs at random (non-canonical tokenisations:
#: :class:`ub_core.logprob.oracle_replies.ReplyWriter`).
WRITERS: tuple[tuple, ...] = tuple(
    [(None, k) for k in (1, 2, 3, 4)] + [(d, k) for d in (1, 2, 3, 6, 10, 17) for k in (1, 3)]
    + [(None, 3, "random"), (6, 3, "random"), (3, 4, "random")])


def date_seed(day: _dt.date | None = None) -> int:
    """The audit's seed: the UTC date as ``YYYYMMDD`` (a new draw every day)."""
    day = day or _dt.datetime.now(_dt.timezone.utc).date()
    return day.year * 10_000 + day.month * 100 + day.day


def audit_draw(problems: Sequence[Problem], count: int, seed: int) -> list[tuple[Problem, tuple[int | None, int]]]:
    """``count`` (problem, writer) pairs drawn with ``seed``: problems without replacement, a writer each."""
    rng = random.Random(seed)
    picked = rng.sample(list(problems), min(count, len(problems)))
    return [(p, rng.choice(WRITERS)) for p in picked]


def sample_replies(law: Any, count: int, rng: np.random.Generator, eos: str, max_tokens: int = 256) -> list[str]:
    """``count`` replies drawn token by token from ``law.next_tokens`` (every next token listed), each step's law
    read once per text."""
    seen: dict[str, tuple[list[str], np.ndarray]] = {}
    out = []
    for _ in range(count):
        text = ""
        for _ in range(max_tokens):
            if text not in seen:
                dist = law.next_tokens(text, 10**9)
                seen[text] = ([t for t, _ in dist], np.cumsum([math.exp(lp) for _, lp in dist]))
            tokens, cum = seen[text]
            if not tokens:
                break
            tok = tokens[min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(tokens) - 1)]
            if tok == eos:
                break
            text += tok
        out.append(text)
    return out


_PLAIN_NUMBER = re.compile(r"\s*\{\s*[+-]?\d+(?:\.\d*)?\s*\}")


def grammar_escape_mass(problem: Problem, texts: Sequence[str], probs: Sequence[float]) -> tuple[float, float]:
    """``(escaping, escaping_invalid)``: the mass of the replies among ``texts`` (probabilities ``probs``) that go
    on from a numeric cell's prefix (:func:`.number_cells.number_cell` on the problem's support) to a reading
    outside that cell's interval, and the part of it the parser rejects (module docstring). A plain decimal in
    braces keeps to the grammar by construction (each of its prefixes' intervals holds it); every other reply is
    checked prefix by prefix."""
    from .number_cells import number_cell

    escaping = invalid = 0.0
    for text, prob in zip(texts, probs):
        if prob <= 0 or _PLAIN_NUMBER.fullmatch(text):
            continue
        res = problem.parse(text)
        value = float(res.value) if res.ok else None
        for i in range(1, len(text)):
            iv = number_cell(text[:i], problem.low, problem.high)
            if iv is not None and (value is None or not iv[0] <= value <= iv[1]):
                escaping += float(prob)
                invalid += float(prob) if value is None else 0.0
                break
    return escaping, invalid


def audit_problem(problem: Problem, writer: tuple[int | None, int] = (None, 1), *, n: int = 100, runs: int = 40,
                  max_requests: int = 1000, level: float = 1e-3, seed: int = 0) -> dict[str, Any]:
    """One problem's audit (module docstring): the route's bounds, the sampled pass rate, and whether they agree.

    Returns ``route``, ``p_pass`` and ``p_pass_bounds`` at N, ``sampled`` (pass share over ``runs`` runs),
    ``sampled_ci`` (its Clopper-Pearson interval at ``level``), ``ks_distance_bounds``, ``ks_law`` (the law's own
    KS distance to the truth draws), the bounds without the grammar assumption (``..._unassumed``), the writer's
    ``escape_mass`` (:func:`grammar_escape_mass`), ``requests``, ``stopped``, ``holds`` (both statements of the
    module docstring: the interval meets the bounds and the law's distance lies in them, the unassumed ones
    within 1e-9, the plain ones within the escape's slack), ``holds_unassumed`` and ``holds_without_slack``
    (the plain bounds with no slack: false where the writer's escape decided)."""
    from ..metrics import ks_at_n
    from ..metrics.answer_distribution import p_enough_valid
    from ..problems.candidates import candidate_set
    from .eos import OFFLINE_EOS
    from .ksn_logprob import RAW_DELIMITER, oracle_candidate_logprob, score_candidate_logprobs
    from .oracle_replies import oracle_reply_law
    from .reply_tree import (enumerate_problem_tree_sync, ks_distance_to_draws, read_leaves, score_reply_tree,
                             truth_reference)

    digits, token_digits, *rest = writer
    split = rest[0] if rest else "canonical"
    truth = np.asarray(problem.truth(), dtype=float)
    cs = candidate_set(problem)
    if cs is not None and digits is None:
        lps = [oracle_candidate_logprob(problem, RAW_DELIMITER + t) for t in cs.texts]
        scores, payload = score_candidate_logprobs(problem, lps, ns=(n,))
        route, requests, stopped = "listed", len(cs), "listed"
        law = oracle_reply_law(problem, digits=None)
    else:
        law = oracle_reply_law(problem, digits=digits, number_token_digits=token_digits, split=split)
        top_k = 1000 if token_digits >= 3 else 20
        tree = enumerate_problem_tree_sync(problem, lambda prefix: law.next_tokens(prefix, top_k),
                                           ends=[OFFLINE_EOS], top_k=top_k, max_requests=max_requests, ns=(n,))
        scores, payload = score_reply_tree(problem, tree, ns=(n,))
        route, requests, stopped = "tree", tree.requests, tree.stopped
    rng = np.random.default_rng(seed)
    sampled_law = route == "tree" and split == "random"
    if sampled_law:
        # the model is its next-token law: its replies are drawn token by token (its text law is not the canonical
        # writer's: a boundary's chance depends on what follows it), and the law's own distance and escape are
        # measured on those replies, their sampling error added to the slack below
        replies = sample_replies(law, runs * n, rng, OFFLINE_EOS)
        texts, counts = np.unique(np.array(replies, dtype=object), return_counts=True)
        texts, probs = [str(t) for t in texts], counts / counts.sum()
    else:
        texts, probs = law.texts, law.probs / law.probs.sum()
        picks = [rng.choice(len(texts), size=n, p=probs) for _ in range(runs)]
        replies = [texts[i] for run in picks for i in run]
    values, masses, _ = read_leaves(problem, dict(zip(texts, probs)))
    if masses.sum() <= 0:
        ks_law = math.nan
    else:  # one definition per problem, whatever the route: the truth's pmf where listable, else its draws
        ks_law = ks_distance_to_draws(masses, values, truth, truth_reference(problem, np.sort(truth))[0])
    passed = 0
    for r in range(runs):
        drawn = [problem.parse(t).value for t in replies[r * n:(r + 1) * n]]
        drawn = [v for v in drawn if v is not None]
        passed += bool(ks_at_n(drawn, truth, ns=(n,), support=problem.support)[n]["pass"])
    ci = clopper_pearson(passed, runs, 1.0 - level)
    lo, hi = payload.get(per_n_key("p_pass_bounds", n), (0.0, 1.0))
    ks_lo, ks_hi = payload.get("ks_distance_bounds", (0.0, 1.0))
    u_lo, u_hi = payload.get(per_n_key("p_pass_bounds_unassumed", n), (lo, hi))
    uks_lo, uks_hi = payload.get("ks_distance_bounds_unassumed", (ks_lo, ks_hi))
    escaping, escaping_invalid = grammar_escape_mass(problem, texts, probs) if route == "tree" else (0.0, 0.0)
    valid = min(float(masses.sum()), 1.0)  # a sum of probabilities may round above 1
    d_sampling = 0.0
    if sampled_law:  # shares of len(replies) draws: their upper confidence bounds; the distance within DKW's band
        count = len(replies)
        escaping = clopper_pearson(escaping * count, count, 1.0 - level)[1]
        escaping_invalid = clopper_pearson(escaping_invalid * count, count, 1.0 - level)[1]
        valid = clopper_pearson(valid * count, count, 1.0 - level)[0]
        d_sampling = math.sqrt(math.log(2.0 / level) / (2.0 * max(float(masses.sum()) * count, 1.0)))
    tau = min(escaping / valid, 1.0) if valid > 0 else 1.0
    p_slack = min(1.0, -math.expm1(n * math.log1p(-tau)) if tau < 1 else 1.0) + (
        p_enough_valid(min(valid + escaping_invalid, 1.0), n) - p_enough_valid(valid, n))

    def meets(b_lo: float, b_hi: float, d_lo: float, d_hi: float, p_pad: float, d_pad: float) -> bool:
        return (ci[0] <= b_hi + p_pad + 1e-9 and ci[1] >= b_lo - p_pad - 1e-9
                and (math.isnan(ks_law) or d_lo - d_pad - 1e-9 <= ks_law <= d_hi + d_pad + 1e-9))

    holds_unassumed = meets(u_lo, u_hi, uks_lo, uks_hi, 0.0, d_sampling)
    holds_exactly = meets(lo, hi, ks_lo, ks_hi, 0.0, d_sampling)
    holds = holds_unassumed and meets(lo, hi, ks_lo, ks_hi, p_slack, tau + d_sampling)
    return {"id": problem.id, "writer": writer, "route": route, "p_pass": scores.get(per_n_key("p_pass", n)),
            "p_pass_bounds": [float(lo), float(hi)], "sampled": passed / runs, "sampled_ci": list(ci),
            "ks_distance_bounds": [float(ks_lo), float(ks_hi)], "ks_law": ks_law, "requests": requests,
            "p_pass_bounds_unassumed": [float(u_lo), float(u_hi)],
            "ks_distance_bounds_unassumed": [float(uks_lo), float(uks_hi)],
            "escape_mass": escaping, "stopped": stopped, "holds": bool(holds),
            "holds_unassumed": bool(holds_unassumed), "holds_without_slack": bool(holds_exactly)}
