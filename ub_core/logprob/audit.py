"""A differential self-audit of sampling-free KS@N: the route's bounds against the model's own samples.

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

The grammar assumption, audited. The tree places a begun number's unexpanded mass inside its interval
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
from typing import Any, Sequence

import numpy as np

from ..problems.base import Problem
from ..metric_keys import per_n_key
from .number_cells import clopper_pearson

__all__ = ["WRITERS", "date_seed", "audit_draw", "audit_problem", "grammar_escape_mass", "sample_replies"]

#: The writers the audit draws from: (digits, number_token_digits[, split[, style[, collapse]]]); ``None`` digits
#: is full precision (``repr``, exponents below 1e-4); split ``random`` cuts digit runs at random (non-canonical
#: tokenisations); a style other than ``plain`` writes numbers otherwise (scientific notation, separators,
#: fractions, no leading zero); ``collapse`` 0.4 puts 0.4 of the mass on the median, a law near KS@100's critical
#: distance, so its pass rate is intermediate and a bias in the bounds shows
#: (:class:`ub_core.logprob.oracle_replies.ReplyWriter`).
WRITERS: tuple[tuple, ...] = tuple(
    [(None, k) for k in (1, 2, 3, 4)] + [(d, k) for d in (1, 2, 3, 6, 10, 17) for k in (1, 3)]
    + [(None, 3, "random"), (6, 3, "random"), (3, 4, "random")]
    + [(None, 1, "canonical", style) for style in ("scientific", "separators", "fraction", "no_leading_zero")]
    + [(None, 1, "canonical", "plain", 0.4), (6, 3, "canonical", "plain", 0.4)])


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


def grammar_escape_mass(problem: Problem, texts: Sequence[str], probs: Sequence[float]) -> tuple[float, float]:
    """``(escaping, escaping_invalid)``: the mass of the replies among ``texts`` (probabilities ``probs``) that go
    on from a numeric cell's prefix to a reading outside that cell's interval
    (:func:`.number_cells.escaping_prefixes`), and the part of it the parser rejects (module docstring)."""
    from .number_cells import escaping_prefixes

    escaping = invalid = 0.0
    for text, prob in zip(texts, probs):
        if prob <= 0:
            continue
        prefixes, unreadable = escaping_prefixes(problem, text)
        if prefixes:
            escaping += float(prob)
            invalid += float(prob) if unreadable else 0.0
    return escaping, invalid


def writer_of(writer: tuple) -> dict[str, Any]:
    """An audit writer tuple ``(digits, number_token_digits[, split[, style[, collapse]]])`` as
    :class:`ub_core.logprob.oracle_replies.ReplyWriter`'s fields."""
    digits, token_digits, *rest = writer
    rest = list(rest) + [None] * (3 - len(rest))
    return {"digits": digits, "number_token_digits": token_digits, "split": rest[0] or "canonical",
            "style": rest[1] or "plain", "collapse": float(rest[2] if rest[2] is not None else 0.0)}


def audit_problem(problem: Problem, writer: tuple = (None, 1), *, n: int = 100, runs: int = 40,
                  max_requests: int = 1000, level: float = 1e-3, seed: int = 0, probe: int | None = None
                  ) -> dict[str, Any]:
    """One problem's audit (module docstring): the route's bounds, the sampled pass rate, and whether they agree.

    Returns ``route``, ``p_pass`` and ``p_pass_bounds`` at N, ``sampled`` (pass share over ``runs`` runs),
    ``sampled_ci`` (its Clopper-Pearson interval at ``level``), ``ks_distance_bounds``, ``ks_law`` (the law's own
    KS distance to the truth draws), the bounds without the cells (``..._unassumed``) and with the grammar assumed
    (``..._given_grammar``: no escape), the writer's true ``escape_mass`` (:func:`grammar_escape_mass`), the
    probe's ``grammar_probe``, ``requests``, ``stopped``, ``unresolved``, ``holds`` (the plain bounds, with no
    slack: the sampled interval meets the p_pass bounds and the law's distance lies in the KS bounds),
    ``holds_unassumed``, ``holds_given_grammar`` and ``miss_given_grammar`` (how far the given-grammar bounds miss:
    the larger of the p_pass gap and the KS gap, 0 where they hold). ``probe``: the grammar probe's size (default
    :data:`ub_core.logprob.reply_tree.PROBE_REPLIES`; 0 draws none)."""
    from ..metrics import ks_at_n
    from ..problems.candidates import candidate_set
    from .eos import OFFLINE_EOS
    from .ksn_logprob import RAW_DELIMITER, oracle_candidate_logprob, score_candidate_logprobs
    from .oracle_replies import oracle_reply_law
    from .reply_tree import (PROBE_REPLIES, enumerate_problem_tree_sync, ks_distance_to_draws, read_leaves,
                             score_reply_tree, truth_reference)

    w = writer_of(writer)
    truth = np.asarray(problem.truth(), dtype=float)
    cs = candidate_set(problem)
    rng = np.random.default_rng(seed)
    plain_writer = w["digits"] is None and w["style"] == "plain" and w["collapse"] == 0.0
    if cs is not None and plain_writer:
        lps = [oracle_candidate_logprob(problem, RAW_DELIMITER + t) for t in cs.texts]
        scores, payload = score_candidate_logprobs(problem, lps, ns=(n,))
        route, requests, stopped = "listed", len(cs), "listed"
        law = oracle_reply_law(problem, digits=None)
    else:
        law = oracle_reply_law(problem, **w)
        top_k = 1000 if w["number_token_digits"] >= 3 else 20
        probe_rng = np.random.default_rng([seed, 7])

        def sample(k: int) -> list[str]:  # the grammar probe: replies drawn from the writer's own law
            if w["split"] == "random":
                return sample_replies(law, k, probe_rng, OFFLINE_EOS)
            texts = law.texts
            return [texts[i] for i in probe_rng.choice(len(texts), size=k, p=law.probs / law.probs.sum())]

        tree = enumerate_problem_tree_sync(problem, lambda prefix: law.next_tokens(prefix, top_k),
                                           ends=[OFFLINE_EOS], top_k=top_k, max_requests=max_requests, ns=(n,),
                                           sample=sample, probe=PROBE_REPLIES if probe is None else probe)
        scores, payload = score_reply_tree(problem, tree, ns=(n,))
        route, requests, stopped = "tree", tree.requests, tree.stopped
    sampled_law = route == "tree" and w["split"] == "random"
    if sampled_law:
        # the model is its next-token law: its replies are drawn token by token (its text law is not the canonical
        # writer's: a boundary's chance depends on what follows it), and the law's own distance is measured on
        # those replies, its sampling error (DKW) carried beside the bounds
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
    g_lo, g_hi = payload.get(per_n_key("p_pass_bounds_given_grammar", n), (lo, hi))
    gks_lo, gks_hi = payload.get("ks_distance_bounds_given_grammar", (ks_lo, ks_hi))
    escaping, _ = grammar_escape_mass(problem, texts, probs) if route == "tree" else (0.0, 0.0)
    d_sampling = 0.0
    if sampled_law:  # the law's distance is measured on len(replies) draws: within DKW's band at ``level``
        d_sampling = math.sqrt(math.log(2.0 / level) / (2.0 * max(float(masses.sum()) * len(replies), 1.0)))

    def miss(b_lo: float, b_hi: float, d_lo: float, d_hi: float) -> float:
        p_gap = max(b_lo - ci[1], ci[0] - b_hi, 0.0)
        d_gap = 0.0 if math.isnan(ks_law) else max(d_lo - d_sampling - ks_law, ks_law - d_hi - d_sampling, 0.0)
        return max(p_gap, d_gap)

    holds = miss(lo, hi, ks_lo, ks_hi) <= 1e-9
    return {"id": problem.id, "writer": writer, "route": route, "p_pass": scores.get(per_n_key("p_pass", n)),
            "p_pass_point": payload.get(per_n_key("p_pass_unresolved", n), scores.get(per_n_key("p_pass", n))),
            "p_pass_bounds": [float(lo), float(hi)], "sampled": passed / runs, "sampled_ci": list(ci),
            "ks_distance_bounds": [float(ks_lo), float(ks_hi)], "ks_law": ks_law, "requests": requests,
            "p_pass_bounds_unassumed": [float(u_lo), float(u_hi)],
            "ks_distance_bounds_unassumed": [float(uks_lo), float(uks_hi)],
            "p_pass_bounds_given_grammar": [float(g_lo), float(g_hi)],
            "ks_distance_bounds_given_grammar": [float(gks_lo), float(gks_hi)],
            "escape_mass": escaping, "grammar_probe": payload.get("grammar_probe"), "stopped": stopped,
            "unresolved": bool(scores.get("unresolved")), "holds": bool(holds),
            "holds_unassumed": miss(u_lo, u_hi, uks_lo, uks_hi) <= 1e-9,
            "holds_given_grammar": miss(g_lo, g_hi, gks_lo, gks_hi) <= 1e-9,
            "miss_given_grammar": miss(g_lo, g_hi, gks_lo, gks_hi)}
