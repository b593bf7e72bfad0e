"""Sampling-free KS@N: the framework-free half of ``ub_inspect/ksn_logprob`` and ``ub_ksn_logprob``.

KS@N (UnpredictaBench, sec. 3.3) samples 100 replies and tests them. Where a problem's answers can be listed
(:mod:`ub_core.problems.candidates`: discrete families cut at 1 - 1e-6 of the truth's mass and at most 200
integers, categorical and real-world label problems, shuffles of up to 5 items), the log-probability of each
candidate answer after the prompt gives the model's whole answer distribution q instead, and
:mod:`ub_core.metrics.answer_distribution` turns q into ``ks_distance``, ``p_pass@N``, ``jsd``, ``valid_mass`` and
``entropy_ratio`` without sampling.

How a candidate is scored. The prompt is the one ``ub_inspect/ksn`` and ``ub_ksn`` send (``Problem.full_prompt``).
The candidate is written exactly as that prompt asks for the answer (``{7}``, ``{green}``, ``{9, 4, 1}``) and
follows the *context* after a *delimiter*:

* raw text (completions models, lm-eval without ``--apply_chat_template``): context = the prompt, delimiter
  ``" "`` (lm-eval's ``target_delimiter``: a completion continues the text after a space);
* chat models: context = the prompt rendered as one user message through the model's chat template with the
  generation prompt (:func:`render_chat`), delimiter ``""``: the candidate is the start of the assistant's reply.
  This is lm-eval's own rule for ``multiple_choice`` under ``--apply_chat_template``.

Each candidate is followed by the *end of the answer* (:func:`end_texts`): by default the model's
end-of-sequence token (its text, e.g. ``</s>``, which tokenizers and servers read as the special token), and in
lm-eval also by its ``until`` stop ``"\\n\\n"``, where generation is cut too. So q(c) is the probability that the
reply is *exactly* c, not that it starts with c: a reply ``{1} {1, 2}`` starts with the candidate ``{1}`` but the
KS@N scorer reads it as invalid, and ``{1} {2}`` reads as 2. ``valid_mass`` is then the probability that the reply
is one of the candidates as written, a lower bound of the probability of a valid reply (other valid forms, such as
``{1} {2}`` or ``1``, are not listed). ``end_of_answer=none`` restores the prefix probability (an upper bound).

The log-probability of a candidate is the sum over its tokens (``prompt_logprobs`` in vLLM and Inspect, lm-eval's
``loglikelihood``); :func:`score_candidate_logprobs` renormalises on the candidates with log-sum-exp and scores,
``p_pass@N`` modelling the sampled protocol's retries of invalid replies.

The offline reference models (:func:`oracle_candidate_logprob`): the oracle gives every candidate its true
log-probability, so q = p, ``ks_distance`` = 0 and ``p_pass@N`` is the truth's own pass rate; the collapsed model
puts all mass on the answer ``ub/collapse`` repeats in KS@N (:func:`ub_core.oracle.collapse_value`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..metric_spec import metric_keys, per_n_key, values_without_data
from ..metrics import DEFAULT_NS
from ..metrics.answer_distribution import _LOGPROB_SLACK, answer_distribution_scores, p_enough_valid
from ..problems.base import Problem
from ..problems.candidates import CandidateSet, candidate_set
from .bounds import (MIN_DISTANCE_MASS, bounds_only, leave_out_vanishing_distance, mark_unresolved,
                     missing_mass_bounds, threshold_test)
from .eos import OFFLINE_EOS, load_local_tokenizer

__all__ = ["METRIC_KEYS", "MIN_DISTANCE_MASS", "RAW_DELIMITER", "CHAT_DELIMITER", "END_OF_ANSWER",
           "candidate_record", "score_candidate_logprobs", "clean_logprobs", "combine_end_logprobs",
           "candidate_continuations", "end_texts", "render_chat", "load_chat_tokenizer", "oracle_candidate_logprob",
           "split_candidate_text", "ORACLE_MODES"]

#: The per-problem metric keys both adapters report (``ub_core.metric_spec``, family ``ksn_logprob``).
METRIC_KEYS = metric_keys("ksn_logprob")
#: What separates the context from the candidate: a space after raw text, nothing after a chat template's
#: generation prompt (lm-eval's ``target_delimiter`` and its ``--apply_chat_template`` rule).
RAW_DELIMITER = " "
CHAT_DELIMITER = ""
ORACLE_MODES = ("oracle", "collapse")
#: ``end_of_answer`` option values besides a literal text (:func:`end_texts`); the default is ``eos``.
END_OF_ANSWER = ("eos", "none")


def candidate_record(problem: Problem, cs: CandidateSet | None = None) -> dict[str, Any]:
    """A JSON-serialisable record of one problem's candidates (an lm-eval document's fields, an Inspect sample's
    metadata): ``id``, ``category``, ``family``, ``kind``, ``support``, ``prompt``, ``candidates`` (texts),
    ``values`` (scored scalars), ``p`` (true probabilities), ``cut``."""
    cs = candidate_set(problem) if cs is None else cs
    if cs is None:
        raise ValueError(f"{problem.id}: its answer support cannot be listed (ub bank list --logprob)")
    return {"id": problem.id, "uid": problem.uid or "", "category": problem.category, "family": problem.family,
            "kind": cs.kind, "support": problem.support, "prompt": problem.full_prompt, "candidates": list(cs.texts),
            "values": [float(v) for v in cs.values], "p": [float(x) for x in cs.p], "cut": bool(cs.cut)}


def clean_logprobs(logprobs: Sequence[Any], none_is_zero: bool = True) -> tuple[list[float], str | None]:
    """Model log-probabilities -> floats, or the reason they cannot be read (they are hostile input).

    ``-inf`` is probability 0 (a candidate the model never writes), and so is ``None`` where ``none_is_zero``
    (Inspect's store keeps ``-inf`` as ``None``; from a model, lm-eval's results, ``None`` is a reason). Anything
    else that is not a log-probability is a reason, never an exception: NaN, ``+inf``, a value above 0 beyond
    rounding (``1e-6``), a boolean, a string, an integer too large for a float."""
    out: list[float] = []
    for i, v in enumerate(logprobs):
        if v is None:
            if not none_is_zero:
                return [], f"log-probability {i} is missing (None)"
            out.append(-math.inf)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return [], f"log-probability {i} is {type(v).__name__}, not a number"
        try:
            x = float(v)
        except OverflowError:
            return [], f"log-probability {i} is an integer too large for a float"
        if math.isnan(x) or x == math.inf:
            return [], f"log-probability {i} is {x}"
        if x > _LOGPROB_SLACK:
            return [], f"log-probability {i} is {x:.6g} > 0: not a probability"
        out.append(min(x, 0.0))
    return out, None


def combine_end_logprobs(logprobs: Sequence[Any], n_candidates: int, n_ends: int) -> list[Any]:
    """Per-candidate log-probabilities from the candidate-major list of :func:`candidate_continuations`:
    ``log Σ_e P(c e)`` over the end texts ``e`` (disjoint replies: the reply ends one way or the other). A
    malformed entry passes through unchanged, so :func:`clean_logprobs` names it."""
    if len(logprobs) != n_candidates * n_ends:
        raise ValueError(f"expected {n_candidates} x {n_ends} log-probabilities, got {len(logprobs)}")
    if n_ends == 1:
        return list(logprobs)
    out: list[Any] = []
    for c in range(n_candidates):
        group = list(logprobs[c * n_ends:(c + 1) * n_ends])
        clean, reason = clean_logprobs(group)
        out.append(next(v for v in group if clean_logprobs([v])[1]) if reason else _logsumexp(clean))
    return out


def candidate_continuations(texts: Sequence[str], delimiter: str, ends: Sequence[str] = ("",)) -> list[str]:
    """What follows the context for each (candidate, end) pair, candidate-major: ``delimiter + text + end``."""
    return [delimiter + t + e for t in texts for e in ends]


def end_texts(end_of_answer: str, eos_text: str | None = None, stops: Sequence[str] = ()) -> tuple[str, ...]:
    """The texts that can end a reply right after a candidate, per the ``end_of_answer`` option:

    * ``"eos"``: the model's end-of-sequence token (``eos_text``, the tokenizer's ``eos_token``; servers and
      tokenizers read the special token's text as that token), then any generation ``stops`` (lm-eval's
      ``until``), so q(c) = P(the reply is exactly c);
    * ``"none"``: nothing: q(c) = P(the reply *starts* with c), an upper bound of the exact reply;
    * any other text: that text, then the ``stops``."""
    if end_of_answer == "none":
        return ("",)
    if end_of_answer == "eos":
        if not eos_text:
            raise ValueError("end_of_answer=eos: the model's tokenizer has no end-of-sequence token; give the text "
                             "that ends a reply (end_of_answer=<text>) or end_of_answer=none")
        first = eos_text
    else:
        if not isinstance(end_of_answer, str) or not end_of_answer:
            raise ValueError(f"end_of_answer: 'eos', 'none' or the text that ends a reply, got {end_of_answer!r}")
        first = end_of_answer
    return (first, *[t for t in stops if t and t != first])


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values, default=-math.inf)
    if top == -math.inf:
        return -math.inf
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def score_candidate_logprobs(problem: Problem, logprobs: Sequence[Any], *, cs: CandidateSet | None = None,
                             ns: Sequence[int] = DEFAULT_NS, threshold: float = 1e-4, method: str = "paper",
                             truth_size: int = 10_000, truth_seed: int = 0, draws: int = 2000, seed: int = 0,
                             slots: int = 100, max_attempts: int = 5, none_is_zero: bool = True,
                             known_invalid: float = 0.0) -> tuple[dict[str, float], dict[str, Any]]:
    """One problem's candidate log-probabilities -> ``(scores, payload)``.

    ``logprobs`` is aligned with the candidate texts: ``log P(reply = candidate)`` when each candidate was scored
    followed by the end of the answer (:func:`end_texts`), ``-inf`` (and ``None`` where ``none_is_zero``)
    meaning probability 0. The
    answer distribution is ``q_i = exp(l_i - logsumexp(l))`` (log-sum-exp, so candidates all below ``-745``,
    where ``exp`` underflows, still give their relative law) and the valid mass ``V = exp(logsumexp(l))``.

    ``scores`` has the keys of :data:`METRIC_KEYS`: ``valid_mass`` (V), ``ks_distance``, ``jsd``,
    ``entropy_ratio`` (:mod:`ub_core.metrics.answer_distribution`), for each N of ``ns``

        p_pass@N = P(Binomial(slots, 1 - (1 - V)^max_attempts) >= N) x P(KS@N passes | N answers i.i.d. from q)

    (the sampled protocol: ``slots`` answer slots, invalid replies retried up to ``max_attempts`` attempts, a run
    short of N valid answers fails; :func:`ub_core.metrics.p_enough_valid`; Inspect's ``ub_inspect/ksn``: 100
    and 5, lm-eval's ``ub_ksn``: 100 and 1), ``no_mass`` (1 when the model put no mass on any candidate:
    ``valid_mass`` is 0, ``p_pass@N`` 0 as a sampled run scores it, a fail, and the distances NaN, undefined) and
    ``bad_logprobs`` (1 when a log-probability is malformed: NaN, ``+inf``, above 0, not a number, or the
    candidates' probabilities sum above 1, which disjoint replies cannot; ``p_pass@N`` is 0, a counted failure,
    every other metric NaN, and ``payload["bad_logprobs"]`` says why). The values without an answer distribution
    are the spec's (:func:`ub_core.metric_spec.values_without_data`).
    ``payload`` records ``q``, per N the pass probability given N valid answers ``p_pass_given_valid@N``, the
    chance of reaching N valid answers ``p_enough_valid@N``, the standard errors ``p_pass_se@N`` and which N
    were computed exactly (``p_pass_exact@N``). The truth draws are the KS@N scorer's
    (``problem.truth(truth_size, truth_seed)``), so ``p_pass@N`` predicts that scorer's verdict.

    What the list cannot see. A model can write a valid answer in a form no candidate text
    lists (``{1} {1, 1}``, ``{01}``, ``1``: the reader accepts them), and those replies are not among the exact
    candidate replies. So ``V`` is a *lower* bound of the valid mass, and the rest, ``missing_mass`` =
    ``U = 1 - V``, is mass of unknown validity and place: invalid replies, or valid answers written otherwise,
    anywhere in the support. The point values take it as invalid (a sampled run retries it); the payload states
    what holds for every placement: ``unlisted_mass`` (U), ``eps`` = U' / (V + U'), ``ks_distance_bounds`` and
    per N ``p_pass_bounds@N``, from :func:`ub_core.logprob.bounds.missing_mass_bounds` with U' = U -
    ``known_invalid`` (mass of replies known to be invalid, measured by the caller: the listed route alone knows
    none). A test that is a threshold on the KS statistic gets the tighter shift bound there. The bounds assume
    the candidates were scored as exact replies (``end_of_answer`` other than ``none``).
    """
    cs = candidate_set(problem) if cs is None else cs
    if cs is None:
        raise ValueError(f"{problem.id}: its answer support cannot be listed (ub bank list --logprob)")
    if not 0.0 <= float(known_invalid) <= 1.0:
        raise ValueError(f"known_invalid = {known_invalid!r}: a mass, in [0, 1]")
    lps, reason = clean_logprobs(logprobs, none_is_zero) if len(logprobs) == len(cs) else (
        [], f"{len(logprobs)} log-probabilities for {len(cs)} candidates")
    log_total = -math.inf if reason else _logsumexp(lps)
    if reason is None and log_total > math.log1p(_LOGPROB_SLACK):  # disjoint replies sum to <= 1
        reason = f"candidate probabilities sum to {math.exp(log_total):.6g} > 1"
    if reason is not None or log_total == -math.inf:  # no answer distribution: the spec's value without data
        scores = values_without_data("ksn_logprob", ns)  # p_pass@N 0 (the sampled run fails), distances NaN
        if reason is not None:
            scores.update(no_mass=0.0, bad_logprobs=1.0, missing_mass=0.0, unresolved=0.0)
            return scores, {"q": None, "bad_logprobs": reason}
        scores.update(valid_mass=0.0, no_mass=1.0, bad_logprobs=0.0, missing_mass=1.0)
        # the unlisted mass (all of it) may still be valid, anywhere
        bounds = missing_mass_bounds(math.nan, {int(n): math.nan for n in ns}, 0.0, known_invalid,
                                     max(1.0 - known_invalid, 0.0), slots, max_attempts)
        payload = {"q": None, "unlisted_mass": 1.0, **bounds_only(bounds)}
        mark_unresolved(scores, payload, [int(n) for n in ns])
        return scores, payload
    q = np.exp(np.asarray(lps, dtype=float) - log_total)
    valid = min(math.exp(log_total), 1.0)
    truth = problem.truth(size=truth_size, seed=truth_seed)
    raw = answer_distribution_scores(q, cs.p, cs.values, truth, ns=ns, threshold=threshold, method=method,
                                     support=problem.support, draws=draws, seed=seed, keep_statistics=True)
    unlisted = max(0.0, 1.0 - valid)
    scores: dict[str, float] = {"valid_mass": valid, "ks_distance": raw["ks_distance"]}
    payload: dict[str, Any] = {"q": [float(x) for x in q], "unlisted_mass": unlisted, "ks_distance_to": "pmf"}
    ns_sorted = sorted({int(n) for n in ns})
    for n in ns_sorted:  # in the spec's order (ub_core.metric_spec)
        enough = p_enough_valid(valid, n, slots, max_attempts)
        scores[per_n_key("p_pass", n)] = enough * raw[per_n_key("p_pass", n)]
        payload[per_n_key("p_pass_given_valid", n)] = raw[per_n_key("p_pass", n)]
        payload[per_n_key("p_enough_valid", n)] = enough
        payload[per_n_key("p_pass_se", n)] = enough * raw[per_n_key("p_pass_se", n)]
        payload[per_n_key("p_pass_exact", n)] = raw[per_n_key("p_pass_exact", n)]
    payload.update(_unlisted_bounds(problem, raw, valid, unlisted, known_invalid, ns_sorted, truth, threshold,
                                    method, slots, max_attempts))
    scores.update(jsd=raw["jsd"], entropy_ratio=raw["entropy_ratio"], no_mass=0.0, bad_logprobs=0.0,
                  missing_mass=unlisted)
    leave_out_vanishing_distance(scores, payload)
    mark_unresolved(scores, payload, ns_sorted)
    return scores, payload


def _unlisted_bounds(problem: Problem, raw: dict[str, Any], valid: float, unlisted: float, known_invalid: float,
                     ns: Sequence[int], truth: Any, threshold: float, method: str, slots: int,
                     max_attempts: int) -> dict[str, Any]:
    """The bounds of :func:`score_candidate_logprobs` under the unlisted mass (its docstring): the reply tree's
    :func:`ub_core.logprob.bounds.missing_mass_bounds` with the candidates as leaves, ``known_invalid`` as
    the enumerated invalid mass and the rest of the unlisted mass as missing."""
    from .number_cells import critical_bracket

    if not -1e-9 <= float(known_invalid) <= unlisted + 1e-6:  # a measured share: round-off, never a contradiction
        raise ValueError(f"known_invalid = {known_invalid!r}: a mass of replies outside the candidates, in "
                         f"[0, {unlisted:.6g}] (1 - the candidates' mass)")
    invalid = min(max(float(known_invalid), 0.0), unlisted)
    statistics = {n: raw.get(per_n_key("p_pass_statistics", n)) for n in ns}
    statistics = {n: s for n, s in statistics.items() if s}
    draws = {n: raw.get(per_n_key("p_pass_draws", n)) for n in ns if not raw[per_n_key("p_pass_exact", n)]}
    size = len(truth)
    brackets = {n: critical_bracket(n, size, threshold) for n in ns} if threshold_test(problem, method) else None
    out = missing_mass_bounds(raw["ks_distance"], {n: raw[per_n_key("p_pass", n)] for n in ns}, valid, invalid,
                              unlisted - invalid, slots, max_attempts, statistics or None, draws=draws,
                              brackets=brackets)
    return bounds_only(out)


# ------------------------------------------------------------------------------------------------ chat templates

def load_chat_tokenizer(name: str, trust_remote_code: bool = False):
    """The tokenizer of ``name`` (see :func:`load_local_tokenizer`) for its chat template. A one-line
    ``ValueError`` when it cannot be loaded or has no template."""
    tok = load_local_tokenizer(name, "chat_template", trust_remote_code)
    if not getattr(tok, "chat_template", None):
        raise ValueError(f"chat_template: the tokenizer {name!r} has no chat template")
    return tok


def render_chat(tokenizer: Any, prompt: str) -> str:
    """``prompt`` as one user message through the tokenizer's chat template, generation prompt added: the text a
    chat model's reply continues. A leading BOS token the template writes is removed, because a completions
    server adds its own when it tokenises the text (two BOS tokens would shift every log-probability)."""
    text = tokenizer.apply_chat_template([{"role": "user", "content": str(prompt)}], tokenize=False,
                                         add_generation_prompt=True)
    bos = getattr(tokenizer, "bos_token", None)
    if bos and text.startswith(bos):
        text = text[len(bos):]
    return text


# ------------------------------------------------------------------------------------------------ offline models

def split_candidate_text(problem: Problem, continuation: str, delimiter: str = RAW_DELIMITER
                         ) -> tuple[int, str] | None:
    """``(index, rest)``: the candidate that ``continuation`` (what follows the prompt) starts with, after the
    delimiter, and the text after it (an end of answer such as :data:`OFFLINE_EOS`, or ``""``); ``None`` when it
    starts with no candidate. Candidates are whole answers and none is a prefix of another, so at most one fits."""
    cs = candidate_set(problem)
    if cs is None or not continuation.startswith(delimiter):
        return None
    text = continuation[len(delimiter):]
    for i, cand in enumerate(cs.texts):
        if text.startswith(cand):
            return i, text[len(cand):]
    return None


def _collapse_index(problem: Problem, cs: CandidateSet) -> int:
    from ..oracle import collapse_value, render_value

    return cs.texts.index(render_value(problem, collapse_value(problem)))


def oracle_candidate_logprob(problem: Problem, continuation: str, mode: str = "oracle",
                             delimiter: str = RAW_DELIMITER) -> float:
    """log P(continuation | prompt) of the offline reference models for a KS@N problem with a listed support:
    ``log p`` of the candidate it writes (oracle), 0 for the collapsed answer and ``-inf`` for the others
    (collapse), ``-inf`` for anything that is not a candidate. Their replies are exactly one candidate, so a
    candidate followed by their end-of-sequence text :data:`OFFLINE_EOS` has the same probability, and one
    followed by anything else (lm-eval's ``"\\n\\n"`` stop) has none."""
    if mode not in ORACLE_MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(ORACLE_MODES)}")
    cs = candidate_set(problem)
    found = split_candidate_text(problem, continuation, delimiter)
    if cs is None or found is None or found[1] not in ("", OFFLINE_EOS):
        return -math.inf  # not a candidate, or one followed by more than the end of the reply
    idx = found[0]
    if mode == "collapse":
        return 0.0 if idx == _collapse_index(problem, cs) else -math.inf
    p = float(cs.p[idx])
    return math.log(p) if p > 0 else -math.inf

