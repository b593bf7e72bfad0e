"""Sampling-free KS@N for every problem: enumerate the model's reply tree.

Design notes: docs/design/reply-tree.md.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import heapq
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

import numpy as np

from ..metric_spec import per_n_key, values_without_data
from ..metrics import DEFAULT_NS
from ..metrics.answer_distribution import p_enough_valid, p_pass_profile
from ..problems.base import Problem
from .bounds import (RESOLVED_KS_WIDTH, TARGET_P_PASS_WIDTH, leave_out_vanishing_distance, mark_unresolved,
                     missing_mass_bounds, threshold_test)
from .number_cells import CLOSED_NUMBER

__all__ = ["ReplyTree", "enumerate_reply_tree", "enumerate_reply_tree_sync", "enumerate_problem_tree",
           "enumerate_problem_tree_sync", "threshold_test", "TARGET_KS_WIDTH", "TARGET_P_PASS_WIDTH",
           "score_reply_tree", "read_leaves", "ks_distance_to_draws", "missing_mass_bounds", "TREE_KEYS", "MAX_MISSING",
           "MAX_REQUESTS", "MAX_TOKENS", "TOP_K", "without_grammar", "truth_reference", "TIGHT_GIVEN_MEASURED_GRAMMAR",
           "ESCAPE_STOP", "PROBE_REPLIES", "PROBE_CONFIDENCE", "grammar_escape", "RESOLVED_KS_WIDTH", "mark_unresolved"]

#: Stop once the finished replies hold 1 - MAX_MISSING of the probability (coverage 0.99).
MAX_MISSING = 0.01
#: Most next-token distributions read per problem.
MAX_REQUESTS = 4000
#: Deepest reply (in tokens) expanded; KS@N replies are a few tokens.
MAX_TOKENS = 64
#: The tree route stops when the KS-distance bounds are at most this wide...
TARGET_KS_WIDTH = 0.02
#: Nodes below this probability are left unexpanded (missing): they keep the frontier bounded.
MIN_NODE_MASS = 1e-7
#: The most top log-probabilities OpenAI-compatible servers return per token.
TOP_K = 20

#: The stop of a tree whose bounds are tight with its cells' escape measured (:func:`grammar_escape`): a sampled
#: probe of the model's replies bounds, at :data:`PROBE_CONFIDENCE`, the cells' mass that leaves their intervals,
#: and the bounds carry that bound. Without the cells (every cell's mass unplaced) they are wider: the
#: ``_unassumed`` bounds of :func:`score_reply_tree`.
TIGHT_GIVEN_MEASURED_GRAMMAR = "tight given the measured grammar"
#: The stop of a tree whose bounds the probe's escape bound alone keeps wider than the target (expanding the
#: missing mass cannot narrow them): the problem is left unresolved.
ESCAPE_STOP = "grammar escape"
#: Replies in the grammar probe (:func:`grammar_escape`): with none escaping, the escape rate's upper bound at
#: 95% is 1 - 0.05^(1/k), 0.015 for k = 200.
PROBE_REPLIES = 200
#: One-sided confidence of the probe's upper bound on the escape rate (Clopper-Pearson).
PROBE_CONFIDENCE = 0.95

#: The keys :func:`score_reply_tree` adds to the sampling-free scores (besides the ``ksn_logprob`` spec's).
TREE_KEYS = ("missing_mass",)

NextTokens = Callable[[str], Awaitable[Sequence[tuple[str, Any]]]]

# A number closed inside the braces: in the number grammar, its end (or what follows) still to be read.


@dataclass
class ReplyTree:
    """The enumerated replies of one problem.

    ``leaves`` maps each finished reply text to its probability; ``cells`` each unexpanded (or partly listed)
    numeric prefix to its mass (:func:`ub_core.logprob.number_cells.number_cell`: the mass of replies that finish
    that number, a value in the prefix's interval); ``missing_mass`` is ``1 - Σ leaves - Σ cells`` (at least
    0): unexpanded text prefixes and tokens no list showed; ``requests`` the next-token distributions read;
    ``context_tokens`` the reply tokens those requests carried after the prompt (Σ over requests of the node's
    depth: the work a server without prefix caching repeats); ``stopped`` why the expansion ended (``covered``,
    ``tight``: the bounds reached their targets, :data:`TIGHT_GIVEN_GRAMMAR`: they did only with the cells placed
    by the number grammar, ``exhausted``: nothing left worth expanding, ``budget``);
    ``number_mass`` the mass of the numeric prefixes expanded and ``number_escape`` the part of it their lists
    put outside the number grammar (the evidence for the cells' assumption); ``bad`` the reason a returned
    distribution was not a distribution (then the tree is unusable)."""

    leaves: dict[str, float] = field(default_factory=dict)
    missing_mass: float = 1.0
    requests: int = 0
    context_tokens: int = 0
    stopped: str = ""
    bad: str | None = None
    cells: dict[str, float] = field(default_factory=dict)
    number_mass: float = 0.0
    number_escape: float = 0.0
    #: the grammar probe: replies sampled from the model at the run's temperature (:func:`grammar_escape`);
    #: None where none was drawn (the cells' escape is then unbounded: all their mass may leave)
    probe: list[str] | None = None
    #: the one-line reasons of malformed next-token lists the expansion met and worked around (fewer tokens than
    #: asked where the list does not cover the mass, an end of reply that never comes)
    warnings: list[str] = field(default_factory=list)

    @property
    def covered_mass(self) -> float:
        return 1.0 - self.missing_mass


def _clean_distribution(tokens: Any, top_k: int) -> tuple[list[tuple[str, float]], str | None]:
    """A server's next-token list -> ``[(text, logprob)]``, or why it is not a distribution (hostile input:
    :func:`ub_core.logprob.ksn_logprob.clean_logprobs` names a bad log-probability; texts must be strings; the
    probabilities of distinct tokens cannot sum above 1)."""
    from .ksn_logprob import clean_logprobs

    if isinstance(tokens, str):  # an adapter's one-line reason why the server's answer could not be read
        return [], tokens
    if not isinstance(tokens, (list, tuple)):
        return [], f"next-token list is {type(tokens).__name__}, not a list"
    if len(tokens) > max(top_k, 1) * 4:
        return [], f"{len(tokens)} next tokens for top_k={top_k}"
    pairs = []
    for i, item in enumerate(tokens):
        if not isinstance(item, (tuple, list)) or len(item) != 2 or not isinstance(item[0], str):
            return [], f"next token {i} is not a (text, log-probability) pair"
        pairs.append(item)
    lps, reason = clean_logprobs([lp for _, lp in pairs], none_is_zero=True)
    if reason:
        return [], reason
    if math.fsum(math.exp(lp) for lp in lps) > 1.0 + 1e-4:
        return [], "next-token probabilities sum above 1"
    return [(t, lp) for (t, _), lp in zip(pairs, lps) if lp > -math.inf], None


#: Requests after a closed answer (texts with a ``}``) after which a tree whose lists never held the end of a reply
#: stops as malformed: a model lists the end of its reply right after a finished answer, so a wrong end text
#: shows here.
NO_END_AFTER_ANSWERS = 32


def _truncated(dist: list[tuple[str, float]], raw: Any, top_k: int) -> str | None:
    """Why a next-token list is cut short: fewer tokens than ``top_k`` asked while they hold visibly less than the
    whole mass (a server that lists all its tokens holds all of it), else None."""
    shown = len(raw) if isinstance(raw, (list, tuple)) else len(dist)
    mass = math.fsum(math.exp(lp) for _, lp in dist)
    if shown < top_k and mass < 1.0 - 1e-3:
        return (f"{shown} next tokens where {top_k} were asked, holding {mass:.3g} of the mass: a truncated list "
                f"(lower top_k to what the server returns)")
    return None


async def enumerate_reply_tree(next_tokens: NextTokens, *, ends: Sequence[str], stops: Sequence[str] = (),
                               max_missing: float | None = MAX_MISSING, max_requests: int = MAX_REQUESTS,
                               max_tokens: int = MAX_TOKENS, min_node_mass: float = MIN_NODE_MASS,
                               top_k: int = TOP_K, batch: int = 8,
                               cell_of: Callable[[str], tuple[float, float] | None] | None = None,
                               priority: Callable[[float, tuple[float, float]], float] | None = None,
                               done: Callable[[ReplyTree], bool | str] | None = None,
                               suspect: frozenset[str] | set[str] = frozenset()) -> ReplyTree:
    """Expand the reply tree best first (module docstring) and return its finished replies.

    ``next_tokens(prefix)`` returns the top-``top_k`` next tokens after ``prompt + prefix`` as ``(text,
    log-probability)`` pairs; a token whose text is one of ``ends`` (the end-of-sequence text; ``""`` too, as
    servers that skip special tokens report it) ends the reply; a text that reaches one of ``stops`` (generation
    stops such as lm-eval's ``"\\n\\n"``) ends it there. ``batch`` nodes are expanded concurrently (a server
    batches them); each distinct prefix is asked once.

    Numbers as intervals: with ``cell_of`` (text -> interval or None, :func:`ub_core.logprob.number_cells.number_cell`),
    a node that is a numeric prefix is a *cell*: when left unexpanded its mass goes to ``tree.cells``, and so does
    the mass its list did not show once expanded (the unlisted digits). ``priority(mass, interval)`` orders cells
    against text nodes (whose priority is their mass). The expansion stops when ``done(tree)`` says so (checked as
    the requests grow by a quarter), else when the leaves hold ``1 - max_missing`` (``None``: never), or at the
    budget. A cell in ``suspect`` (a prefix a probe reply left: :func:`enumerate_problem_tree`) is ranked by its
    mass, so the tree reads where the grammar was seen to fail."""
    if max_missing is not None and not 0.0 <= max_missing < 1.0:
        raise ValueError(f"max_missing must be in [0, 1), got {max_missing!r}")
    end_set = {e for e in ends if e} | {""}
    tree = ReplyTree()
    leaves: dict[str, float] = {}
    covered: list[float] = []
    cells: dict[str, float] = {}  # residual and pruned cell mass
    intervals: dict[str, tuple[float, float] | None] = {}
    frontier: list[tuple[float, int, str, int]] = [(-1.0, 0, "", 0)]  # (-priority, order, text, depth)
    pending: dict[str, float] = {"": 0.0}  # text -> log-probability not yet expanded (masses of equal texts add)
    asked: dict[str, list[tuple[str, float]]] = {}
    order = 1
    escape: list[float] = []
    number: list[float] = []
    in_number: set[str] = set()  # texts inside a number's subtree (a cell among their prefixes)

    def interval(text: str) -> tuple[float, float] | None:
        if cell_of is None:
            return None
        if text not in intervals:
            intervals[text] = cell_of(text)
        return intervals[text]

    def add_leaf(text: str, lp: float) -> None:
        leaves[text] = leaves.get(text, 0.0) + math.exp(lp)
        covered.append(math.exp(lp))

    def add_cell(text: str, mass: float) -> None:
        if mass > 0:
            cells[text] = cells.get(text, 0.0) + mass

    def rank_of(text: str, mass: float) -> float:
        iv = interval(text)
        if iv is None or priority is None or text in suspect:
            return mass
        return priority(mass, iv)

    def push(text: str, lp: float, depth: int) -> None:
        nonlocal order
        if text in pending:  # the same text by another token path: one node, masses add
            pending[text] = float(np.logaddexp(pending[text], lp))
        else:
            pending[text] = lp
        mass = math.exp(pending[text])
        heapq.heappush(frontier, (-rank_of(text, mass), order, text, depth))
        order += 1

    def expand(text: str, lp: float, depth: int, dist: list[tuple[str, float]]) -> None:
        iv = interval(text)
        listed = 0.0
        for tok, tlp in dist:
            child = lp + tlp
            listed += math.exp(tlp)
            if tok in end_set:
                add_leaf(text, child)
                continue
            reply = text + tok
            cut = min((i for i in (reply.find(s) for s in stops if s) if i >= 0), default=-1)
            if cut >= 0:
                add_leaf(reply[:cut], child)
                continue
            if iv is not None and interval(reply) is None and not CLOSED_NUMBER.fullmatch(reply):
                escape.append(math.exp(child))
            if iv is not None or text in in_number:
                in_number.add(reply)
            elif interval(reply) is not None:  # the mass that enters a number: each reply counted once
                number.append(math.exp(child))
            if depth + 1 < max_tokens and child >= math.log(min_node_mass):
                push(reply, child, depth + 1)
            elif interval(reply) is not None:
                add_cell(reply, math.exp(child))
        if iv is not None:
            add_cell(text, math.exp(lp) * max(0.0, 1.0 - listed))  # the unlisted digits stay in the interval

    def snapshot() -> ReplyTree:
        snap = dict(cells)
        for text, lp in pending.items():
            if interval(text) is not None:
                snap[text] = snap.get(text, 0.0) + math.exp(lp)
        known = math.fsum(covered) + math.fsum(snap.values())
        return ReplyTree(leaves=dict(leaves), missing_mass=min(max(1.0 - known, 0.0), 1.0), requests=tree.requests,
                         context_tokens=tree.context_tokens, cells=snap, number_mass=math.fsum(number),
                         number_escape=math.fsum(escape))

    next_check = batch
    ends_seen = False
    answers_asked = 0
    while True:
        if max_missing is not None and 1.0 - math.fsum(covered) <= max_missing:
            tree.stopped = "covered"
            break
        if done is not None and tree.requests >= next_check:
            next_check = max(next_check + batch, int(tree.requests * 1.25))
            verdict = done(snapshot())
            if verdict:
                tree.stopped = verdict if isinstance(verdict, str) else "tight"
                break
        work: list[tuple[str, float, int]] = []
        while frontier and len(work) < batch:
            neg, _, text, depth = heapq.heappop(frontier)
            if text not in pending:
                continue  # stale: expanded already, or this text's mass grew and it was pushed again
            if rank_of(text, math.exp(pending[text])) != -neg:
                continue
            work.append((text, pending.pop(text), depth))
        if not work:
            tree.stopped = "exhausted"
            break
        fresh = [t for t, _, _ in work if t not in asked]
        if tree.requests + len(fresh) > max_requests:
            for text, lp, _ in work:  # back to the frontier: unexpanded
                pending[text] = lp
            tree.stopped = "budget"
            break
        results = await asyncio.gather(*(next_tokens(t) for t in fresh))
        for text, res in zip(fresh, results):
            dist, reason = _clean_distribution(res, top_k)
            if reason is None:
                reason = _truncated(dist, res, top_k)
            if reason is None and any(tok in end_set for tok, _ in dist):
                ends_seen = True
            answers_asked += "}" in text
            if reason is None and not ends_seen and answers_asked >= NO_END_AFTER_ANSWERS:
                reason = (f"no next-token list in {answers_asked} requests after a finished answer held the end of "
                          f"a reply ({', '.join(repr(e) for e in sorted(end_set) if e) or 'none given'}): is it the "
                          f"served model's end-of-sequence text?")
            if reason:
                tree.bad = f"after {text!r}: {reason}"
                tree.stopped = "bad"
                tree.leaves, tree.missing_mass = {}, 1.0
                return tree
            asked[text] = dist
            tree.requests += 1
        for text, lp, depth in work:
            if text in fresh:
                tree.context_tokens += depth
            expand(text, lp, depth, asked[text])
    final = snapshot()
    final.stopped, final.bad = tree.stopped, None
    return final


def enumerate_reply_tree_sync(next_tokens: Callable[[str], Sequence[tuple[str, Any]]], **kw: Any) -> ReplyTree:
    """:func:`enumerate_reply_tree` for a plain function (the offline oracle, a local transformers model)."""

    async def call(prefix: str):
        return next_tokens(prefix)

    return asyncio.run(enumerate_reply_tree(call, **kw))


async def enumerate_problem_tree(problem: Problem, next_tokens: NextTokens, *, ends: Sequence[str],
                                 stops: Sequence[str] = (), cells: bool = True,
                                 target_ks_width: float = TARGET_KS_WIDTH,
                                 target_p_pass_width: float = TARGET_P_PASS_WIDTH, max_missing: float | None = None,
                                 max_requests: int = MAX_REQUESTS, max_tokens: int = MAX_TOKENS, top_k: int = TOP_K,
                                 batch: int = 8, sample: Callable[[int], Awaitable[Sequence[Any]]] | None = None,
                                 probe: int = PROBE_REPLIES, **score_options: Any) -> ReplyTree:
    """One problem's reply tree, expanded until its bounds are tight enough.

    :func:`enumerate_reply_tree` with the problem's numeric prefixes as cells (``cells``; numbers only), cells
    ranked by how far the truth's CDF moves across them (:func:`ub_core.logprob.number_cells.cell_priority`), and
    the stop when the scores of :func:`score_reply_tree` at the largest N (``score_options``: ``ns``,
    ``threshold``, ``method``, ... as the scorer gets them) have KS-distance bounds at most ``target_ks_width``
    wide (with the cells' escape at 0: what expansion can narrow) and ``p_pass`` bounds, with the measured escape,
    at most ``target_p_pass_width`` wide (or at ``max_missing`` left, when given, or at the budget). The same
    stop serves discrete supports: they are expanded until the bound is tight, not to a fixed coverage.

    The grammar probe. Where the tree has cells, ``sample(k)`` draws ``probe`` replies from the model at the run's
    temperature (as the sampled KS@N run draws them); they are kept in ``tree.probe`` and
    :func:`grammar_escape` bounds from them how much of the cells' mass leaves their intervals. A cell that a probe
    reply left is expanded by its mass (the tree reads where the grammar failed). Without ``sample`` (or with
    ``probe=0``) the escape is unbounded: every cell's mass may leave, and no stop is tight on the grammar. The
    stop :data:`ESCAPE_STOP` ends a tree whose measured escape alone keeps the p_pass bounds wider than the
    target. Its stop label: ``tight`` where the bounds are tight without the cells, else
    :data:`TIGHT_GIVEN_MEASURED_GRAMMAR`."""
    from .number_cells import cell_priority, number_cell, truth_atom

    opts = dict(score_options)
    ns = sorted({int(n) for n in opts.pop("ns", DEFAULT_NS)})
    truth = np.sort(np.asarray(problem.truth(size=opts.get("truth_size", 10_000),
                                             seed=opts.get("truth_seed", 0)), dtype=float))
    use_cells = bool(cells) and problem.answer_format == "number"
    cells_bound_p_pass = threshold_test(problem, opts.get("method", "paper")) or truth_atom(truth) is not None
    replies: list[str] | None = None
    probe_note: str | None = None
    if use_cells and sample is not None and probe > 0:
        replies, probe_note = _read_probe(await sample(int(probe)))
    suspect = _escaping_prefixes(problem, replies or [])

    def widths(snapshot: ReplyTree) -> tuple[dict[str, float], float, float]:
        scores, payload = score_reply_tree(problem, snapshot, ns=(ns[-1],), unassumed=False, **opts)
        ks_lo, ks_hi = payload.get("ks_distance_bounds_given_grammar", payload.get("ks_distance_bounds", (0.0, 1.0)))
        pp_lo, pp_hi = payload.get(per_n_key("p_pass_bounds", ns[-1]), (0.0, 1.0))
        return scores, ks_hi - ks_lo, pp_hi - pp_lo

    def done(snapshot: ReplyTree) -> bool | str:
        snapshot.probe = replies
        scores, ks_width, pp_width = widths(snapshot)
        if scores.get("no_mass") == 1.0 and pp_width <= target_p_pass_width:
            return True  # no valid reply found and too little mass left to pass: settled (no distance to bound)
        if ks_width > target_ks_width:
            return False
        # cells tighten p_pass where passing is a threshold on D, or the permutation test's truth has at most one
        # tie, at its minimum (score_reply_tree); elsewhere their mass counts as unplaced, which expanding cells
        # cannot resolve, so the KS target alone stops
        if pp_width <= target_p_pass_width or (use_cells and not cells_bound_p_pass and bool(snapshot.cells)):
            return True
        if snapshot.cells:  # would reading every missing reply help? not where the cells' escape alone is too wide
            settled = dataclasses.replace(snapshot, missing_mass=0.0)
            if widths(settled)[2] > target_p_pass_width:
                return ESCAPE_STOP
        return False

    tree = await enumerate_reply_tree(
        next_tokens, ends=ends, stops=stops, max_missing=max_missing, max_requests=max_requests,
        max_tokens=max_tokens, top_k=top_k, batch=batch,
        cell_of=functools.partial(number_cell, low=problem.low, high=problem.high) if use_cells else None,
        priority=(lambda mass, iv: cell_priority(mass, iv, truth)) if use_cells else None, done=done,
        suspect=suspect)
    tree.probe = replies
    if probe_note:
        tree.warnings.append(probe_note)
    if tree.stopped == "tight" and tree.cells and done(without_grammar(tree)) is not True:
        tree.stopped = TIGHT_GIVEN_MEASURED_GRAMMAR  # tight with the cells, their escape measured by the probe
    return tree


#: The most characters of one probe reply read (a reply is a few tokens; longer text is cut, never stored whole).
MAX_PROBE_CHARS = 4096


def _read_probe(replies: Any) -> tuple[list[str] | None, str | None]:
    """A sampler's replies -> ``(texts, None)``, or ``(None, why)`` when they are not a list of texts (hostile
    input: then the probe counts as not drawn, and the cells' escape as unbounded)."""
    if not isinstance(replies, (list, tuple)):
        return None, f"grammar probe: the sampler returned {type(replies).__name__}, not a list of replies"
    if not all(isinstance(r, str) for r in replies):
        return None, "grammar probe: a sampled reply is not text"
    return [r[:MAX_PROBE_CHARS] for r in replies], None


def _escaping_prefixes(problem: Problem, replies: Sequence[str]) -> set[str]:
    """The numeric prefixes (:func:`.number_cells.number_cell` on the problem's support) of each reply whose
    reading lies outside that prefix's interval: where the number grammar was seen to fail."""
    from .number_cells import escaping_prefixes

    return {prefix for text in dict.fromkeys(replies) for prefix in escaping_prefixes(problem, text)[0]}


def grammar_escape(problem: Problem, tree: ReplyTree, confidence: float = PROBE_CONFIDENCE) -> dict[str, Any]:
    """How much of the tree's cell mass may leave the cells' intervals, measured by its grammar probe.

    Each probe reply (``tree.probe``, k replies sampled from the model) is walked through the tree: it *escapes*
    when a cell of the tree (a key of ``tree.cells``) is a prefix of its text and the problem's parser reads it
    outside that cell's interval, or not at all. The mass X of the replies that enter a cell and leave it is at
    most P(a reply escapes), so with x escapes among k replies

        e = min(U, CP_upper(x, k; confidence))

    (U the cells' mass, CP_upper the one-sided Clopper-Pearson bound) bounds X at that confidence
    (:func:`ub_core.logprob.number_cells.escape_eps` and :func:`.number_cells.ks_distance_bounds` turn it into
    bounds). Without a probe e = U. The tree's stop looks at the bound as it grows, so the stated confidence is
    that of one look; each look uses the same probe.

    Returns ``probe`` (k), ``escapes`` (x), ``escape_rate_hi``, ``escape_bound`` (e) and ``confidence``."""
    from scipy import stats

    cell_mass = float(math.fsum(tree.cells.values()))
    replies = tree.probe or []
    k = len(replies)
    if not tree.cells:
        return {"probe": k, "escapes": 0, "escape_rate_hi": 0.0, "escape_bound": 0.0, "confidence": confidence}
    from .number_cells import number_cell

    intervals = {text: number_cell(text) for text in tree.cells}
    escapes = 0
    for text, count in Counter(replies).items():  # each distinct reply walked and read once
        on_path = [intervals[text[:i]] for i in range(1, len(text) + 1) if text[:i] in intervals]
        if not on_path:
            continue
        res = problem.parse(text)
        value = float(res.value) if res.ok else None
        if any(iv is None or value is None or not iv[0] <= value <= iv[1] for iv in on_path):
            escapes += count
    rate = 1.0 if k == 0 or escapes >= k else float(stats.beta.ppf(confidence, escapes + 1, k - escapes))
    return {"probe": k, "escapes": escapes, "escape_rate_hi": rate, "escape_bound": min(cell_mass, rate),
            "confidence": confidence}


def enumerate_problem_tree_sync(problem: Problem, next_tokens: Callable[[str], Sequence[tuple[str, Any]]],
                                **kw: Any) -> ReplyTree:
    """:func:`enumerate_problem_tree` for plain functions (the offline oracle, a local transformers model):
    ``next_tokens`` and, where given, the grammar probe's ``sample``."""

    async def call(prefix: str):
        return next_tokens(prefix)

    plain_sample = kw.pop("sample", None)

    async def sample(k: int):
        return plain_sample(k)

    return asyncio.run(enumerate_problem_tree(problem, call, sample=sample if plain_sample else None, **kw))


# ------------------------------------------------------------------------------------------------ scoring

def read_leaves(problem: Problem, leaves: dict[str, float]) -> tuple[np.ndarray, np.ndarray, float]:
    """The finished replies read by the problem's parser: ``(values, masses, invalid_mass)`` with the masses of
    replies that read as the same scalar pooled, values sorted."""
    pooled: dict[float, float] = {}
    invalid = 0.0
    for text, mass in leaves.items():
        res = problem.parse(text)
        if res.ok:
            v = float(res.value)
            pooled[v] = pooled.get(v, 0.0) + mass
        else:
            invalid += mass
    values = np.array(sorted(pooled), dtype=float)
    return values, np.array([pooled[v] for v in values], dtype=float), invalid


def ks_distance_to_draws(q: Any, values: Any, truth_draws: Any,
                        reference: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """``sup_x |Q(x) - F(x)|``: Q the CDF of the masses ``q`` (renormalised) at ``values``, F the empirical CDF of
    ``truth_draws``: the two-sample KS statistic of an infinite sample from q against the draws (UnpredictaBench
    sec. 3.3, eq. 1, in the limit); or F a :func:`.number_cells.step_cdf` ``reference`` (the truth's pmf). Both are
    step functions, so the supremum is taken at their jump points."""
    from .number_cells import cdf_at, step_cdf

    qa = np.asarray(q, dtype=float)
    va = np.asarray(values, dtype=float)
    if qa.size == 0 or qa.sum() <= 0:
        return math.nan
    ref = reference if reference is not None else step_cdf(truth_draws)
    order = np.argsort(va, kind="stable")
    va, qa = va[order], qa[order] / qa.sum()
    grid = np.union1d(va, ref[0])
    model_cdf = np.zeros(grid.size)
    np.add.at(model_cdf, np.searchsorted(grid, va), qa)
    model_cdf = np.cumsum(model_cdf)
    return float(min(np.max(np.abs(model_cdf - cdf_at(ref, grid))), 1.0))


def truth_reference(problem: Problem, truth_sorted: Any) -> tuple[tuple[np.ndarray, np.ndarray], str]:
    """``(reference CDF, name)`` of a problem's ``ks_distance``, one definition whatever the route: the
    truth's pmf where its answers can be listed (:func:`ub_core.problems.candidates.candidate_set`; the listed
    route's definition, so a listed problem the tree completes, or a listable one scored by the tree, keeps it),
    else the empirical CDF of the truth draws KS@N tests against (``"draws"``)."""
    from ..problems.candidates import candidate_set
    from .number_cells import step_cdf

    cs = candidate_set(problem)
    if cs is not None:
        return step_cdf(cs.values, cs.p), "pmf"
    return step_cdf(truth_sorted), "draws"


def _cell_rows(tree: ReplyTree) -> np.ndarray:
    """The tree's cells as rows ``(a, b, mass)`` (:func:`ub_core.logprob.number_cells.number_cell`)."""
    from .number_cells import number_cell

    rows = []
    for text, mass in tree.cells.items():
        iv = number_cell(text)
        if iv is None:
            raise ValueError(f"cell {text!r} is not a numeric prefix")
        rows.append((iv[0], iv[1], float(mass)))
    out = np.array(rows, dtype=float).reshape(-1, 3)
    # in interval order, not insertion order: a tree read back from a log (its dict re-ordered) scores the same
    return out[np.lexsort((out[:, 2], out[:, 1], out[:, 0]))]


def score_reply_tree(problem: Problem, tree: ReplyTree, *, ns: Sequence[int] = DEFAULT_NS, threshold: float = 1e-4,
                     method: str = "paper", truth_size: int = 10_000, truth_seed: int = 0, draws: int = 2000,
                     seed: int = 0, slots: int = 100, max_attempts: int = 5,
                     unassumed: bool = True, target_p_pass_width: float = TARGET_P_PASS_WIDTH,
                     probe_confidence: float = PROBE_CONFIDENCE,
                     escape: float | None = None) -> tuple[dict[str, float], dict[str, Any]]:
    """One problem's enumerated reply tree -> ``(scores, payload)`` with the keys of the ``ksn_logprob`` spec
    (``jsd`` and ``entropy_ratio`` are NaN: they need the truth's pmf, which only listed supports have) plus
    ``missing_mass``. ``payload`` holds the bounds (module docstring; with cells, :mod:`.number_cells`), ``q``
    and ``values`` (cells at their midpoints), per N ``p_pass_given_valid@N``, ``p_pass_se@N`` and
    ``p_pass_exact@N``, and the tree's cost (``requests``, ``context_tokens``, ``leaves``, ``cells``,
    ``cell_mass``, ``stopped``, ``number_escape``); with cells on the permutation test, per N
    ``p_pass_odd_ties@N``, the share of Monte-Carlo samples with a tie the truth's atom does not explain (each
    counted a fail in the lower bound and a pass in the upper one).

    ``valid_mass`` counts the cells as valid (the grammar assumption of :mod:`.number_cells`). What that
    assumption buys is stated beside it: ``cell_mass`` (the cells' mass, placed by the assumption
    alone) and, with ``unassumed``, ``ks_distance_bounds_unassumed`` and per N ``p_pass_bounds_unassumed@N``,
    the bounds with every cell's mass as missing (of unknown place and validity: a begun number may still take an
    exponent, ``{5.44`` becoming ``{5.44e-05}``, or leave the grammar otherwise). Those rest on nothing the tree
    has not read.

    The plain bounds rest on the measured grammar: :func:`grammar_escape` bounds, from the tree's probe of sampled
    replies at ``probe_confidence``, the cells' mass that leaves their intervals (``escape``, when given, replaces
    that bound), and the bounds carry it (:func:`.number_cells.ks_distance_bounds`, :func:`.number_cells.escape_eps`;
    the lower valid mass is V - e). ``payload["grammar_probe"]`` states the probe; ``ks_distance_bounds_given_grammar``
    and, with ``unassumed``, ``p_pass_bounds_given_grammar@N`` are the bounds with no escape at all (the grammar
    assumed, not measured: for audits of how far they miss).

    Unresolved (with ``unassumed``, the scorer's call: :func:`mark_unresolved`): a problem whose ``p_pass`` bounds
    at the largest N are wider than ``target_p_pass_width`` has ``unresolved`` 1 and its ``p_pass@N`` and distances
    NaN (left out of the means, counted), their points kept in the payload."""
    from .number_cells import cell_p_pass, cell_p_pass_permutation, critical_bracket, ks_distance_bounds

    if unassumed:
        scores, payload = score_reply_tree(problem, tree, ns=ns, threshold=threshold, method=method,
                                           truth_size=truth_size, truth_seed=truth_seed, draws=draws, seed=seed,
                                           slots=slots, max_attempts=max_attempts, unassumed=False,
                                           probe_confidence=probe_confidence, escape=escape)
        options = dict(threshold=threshold, method=method, truth_size=truth_size, truth_seed=truth_seed, draws=draws,
                       seed=seed, slots=slots, max_attempts=max_attempts)
        payload.update(_unassumed_bounds(problem, tree, payload, ns=ns, **options))
        payload.update(_given_grammar_bounds(problem, tree, payload, ns=ns, **options))
        mark_unresolved(scores, payload, ns, target_p_pass_width)
        return scores, payload

    ns = sorted({int(n) for n in ns})
    cells = _cell_rows(tree)
    cell_mass = float(math.fsum(cells[:, 2].tolist()))
    cost = {"requests": tree.requests, "context_tokens": tree.context_tokens, "leaves": len(tree.leaves),
            "cells": len(cells), "cell_mass": cell_mass, "stopped": tree.stopped,
            "number_mass": tree.number_mass, "number_escape": tree.number_escape}
    scores: dict[str, float] = values_without_data("ksn_logprob", ns)  # p_pass@N 0 until a valid answer is found
    if tree.bad:
        scores.update(no_mass=0.0, bad_logprobs=1.0, missing_mass=math.nan, unresolved=0.0)
        return scores, {"q": None, "bad_logprobs": tree.bad, **cost}
    probe = grammar_escape(problem, tree, probe_confidence)
    if escape is not None:
        probe["escape_bound"] = min(max(float(escape), 0.0), cell_mass)
    e = probe["escape_bound"]
    cost["grammar_probe"] = probe
    if tree.warnings:
        cost["warnings"] = list(tree.warnings)
    values, masses, invalid = read_leaves(problem, tree.leaves)
    leaf_valid = float(math.fsum(masses.tolist()))
    valid = min(leaf_valid + cell_mass, 1.0)
    scores.update(valid_mass=valid, no_mass=0.0, bad_logprobs=0.0, missing_mass=tree.missing_mass)
    if valid <= 0:
        scores["no_mass"] = 1.0
        return scores, {"q": None, "invalid_mass": invalid, **cost,
                        **missing_mass_bounds(math.nan, {n: math.nan for n in ns}, 0.0, invalid,
                                              tree.missing_mass, slots, max_attempts)}
    truth = np.sort(np.asarray(problem.truth(size=truth_size, seed=truth_seed), dtype=float))
    mids = (cells[:, 0] + cells[:, 1]) / 2
    point_values = np.concatenate([values, mids])
    point_masses = np.concatenate([masses, cells[:, 2]])
    order = np.argsort(point_values, kind="stable")
    point_values, point_masses = point_values[order], point_masses[order]
    reference, reference_name = truth_reference(problem, truth)
    d = ks_distance_to_draws(point_masses, point_values, truth, reference)
    ks_bounds = list(ks_distance_bounds(values, masses, cells, tree.missing_mass, truth, reference, escape=e))
    ks_given = list(ks_distance_bounds(values, masses, cells, tree.missing_mass, truth, reference)) if e > 0 \
        else list(ks_bounds)
    M = tree.missing_mass
    valid_lo = max(valid - e, min(leaf_valid, valid))  # escaping cell mass may be invalid
    share = valid / (valid + invalid) if valid + invalid > 0 else 0.0
    v_point = min(valid + M * share, 1.0)
    payload: dict[str, Any] = {"q": (point_masses / valid).tolist(), "values": point_values.tolist(),
                               "invalid_mass": invalid, **cost, "ks_distance_bounds": ks_bounds,
                               "ks_distance_bounds_given_grammar": ks_given, "ks_distance_to": reference_name}
    scores["ks_distance"] = d
    results: dict[int, dict[str, Any]] = {}
    if len(cells) and threshold_test(problem, method):
        # cells on the paper's continuous test: the interval statistics of number_cells
        results = {n: cell_p_pass(values, masses, cells, M, truth, n, critical_bracket(n, truth.size, threshold),
                                  draws=draws, seed=seed, escape=e) for n in ns}
    elif len(cells):
        # cells on the permutation test (support mixed, or method "exact"): the truth's one tie block at its
        # minimum fixes the test's critical values per block size (number_cells, "permutation test"); None where
        # the truth has another tie structure
        for n in ns:
            r = cell_p_pass_permutation(values, masses, cells, M, truth, n, threshold, low=problem.low, draws=draws,
                                        seed=seed, escape=e)
            if r is None:
                results = {}
                break
            results[n] = r
    leave_out_vanishing_distance(scores, payload)
    if results:
        payload["eps"] = next(iter(results.values()))["eps"]
        for n, r in results.items():
            scores[per_n_key("p_pass", n)] = p_enough_valid(v_point, n, slots, max_attempts) * r["p"]
            payload[per_n_key("p_pass_bounds", n)] = [p_enough_valid(valid_lo, n, slots, max_attempts) * r["lo"],
                                                      p_enough_valid(min(valid + M, 1.0), n, slots,
                                                                     max_attempts) * r["hi"]]
            payload[per_n_key("p_pass_given_valid", n)] = r["p"]
            payload[per_n_key("p_pass_se", n)] = r["se"]
            payload[per_n_key("p_pass_exact", n)] = False
            if "odd_share" in r:
                payload[per_n_key("p_pass_odd_ties", n)] = r["odd_share"]
        return scores, payload
    # leaves only (or cells on a test that is neither a threshold on D nor the permutation test of one tie block:
    # their mass is then as uncertain as missing mass for P(pass), at their midpoints for the point value)
    prof = p_pass_profile(point_masses, point_values, truth, ns, threshold, method=method, support=problem.support,
                          draws=draws, seed=seed, keep_statistics=True)
    thresh = threshold_test(problem, method)
    bounds = missing_mass_bounds(d, {n: prof[n]["p_pass"] for n in ns}, valid, invalid, M, slots, max_attempts,
                                 None if len(cells) else {n: prof[n].get("statistics") for n in ns},
                                 draws={n: prof[n]["draws"] for n in ns if not prof[n]["exact"]},
                                 brackets=({n: critical_bracket(n, truth.size, threshold) for n in ns}
                                           if thresh else None),
                                 unplaced=cell_mass)
    payload["eps"] = bounds["eps"]
    for n in ns:
        scores[per_n_key("p_pass", n)] = p_enough_valid(v_point, n, slots, max_attempts) * prof[n]["p_pass"]
        lo, hi = bounds[per_n_key("p_pass_bounds", n)]
        if valid_lo < valid:  # the cells' escaping mass may be invalid: the lower valid mass falls with it
            full = p_enough_valid(valid, n, slots, max_attempts)
            lo = lo * p_enough_valid(valid_lo, n, slots, max_attempts) / full if full > 0 else 0.0
        payload[per_n_key("p_pass_bounds", n)] = [lo, hi]
        payload[per_n_key("p_pass_given_valid", n)] = prof[n]["p_pass"]
        payload[per_n_key("p_pass_se", n)] = prof[n]["se"]
        payload[per_n_key("p_pass_exact", n)] = prof[n]["exact"]
    return scores, payload


def without_grammar(tree: ReplyTree) -> ReplyTree:
    """``tree`` with every cell's mass moved to the missing mass: what the tree knows without the number-grammar
    assumption (:mod:`.number_cells`)."""
    cell_mass = math.fsum(tree.cells.values())
    return dataclasses.replace(tree, leaves=dict(tree.leaves), missing_mass=min(tree.missing_mass + cell_mass, 1.0),
                               cells={})


def _unassumed_bounds(problem: Problem, tree: ReplyTree, payload: dict[str, Any], *, ns: Sequence[int],
                      **options: Any) -> dict[str, Any]:
    """The bounds of :func:`score_reply_tree` with the cells' mass as missing (its docstring): the same keys with
    ``_unassumed`` added. Without cells they are the plain bounds."""
    keys = ["ks_distance_bounds"] + [per_n_key("p_pass_bounds", int(n)) for n in ns]
    if tree.cells and not tree.bad:
        payload = score_reply_tree(problem, without_grammar(tree), ns=ns, unassumed=False, **options)[1]
    named = {"ks_distance_bounds": "ks_distance_bounds_unassumed"}
    named.update({per_n_key("p_pass_bounds", int(n)): per_n_key("p_pass_bounds_unassumed", int(n)) for n in ns})
    return {named[k]: list(payload[k]) for k in keys if k in payload}


def _given_grammar_bounds(problem: Problem, tree: ReplyTree, payload: dict[str, Any], *, ns: Sequence[int],
                          **options: Any) -> dict[str, Any]:
    """Per N ``p_pass_bounds_given_grammar@N``: the p_pass bounds of :func:`score_reply_tree` with no escape from
    the cells (the number grammar assumed, not measured). Equal to the plain bounds where the escape bound is 0."""
    keys = {per_n_key("p_pass_bounds", int(n)): per_n_key("p_pass_bounds_given_grammar", int(n)) for n in ns}
    if (payload.get("grammar_probe") or {}).get("escape_bound", 0.0) > 0 and not tree.bad:
        payload = score_reply_tree(problem, tree, ns=ns, unassumed=False, escape=0.0, **options)[1]
    return {new: list(payload[old]) for old, new in keys.items() if old in payload}
