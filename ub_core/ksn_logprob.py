"""Sampling-free KS@N (issue 18): the framework-free half of ``ub_inspect/ksn_logprob`` and ``ub_ksn_logprob``.

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

The log-probability of a candidate is the sum over its tokens (``prompt_logprobs`` in vLLM and Inspect, lm-eval's
``loglikelihood``); :func:`score_candidate_logprobs` renormalises on the candidates and scores.

The offline reference models (:func:`oracle_candidate_logprob`): the oracle gives every candidate its true
log-probability, so q = p, ``ks_distance`` = 0 and ``p_pass@N`` is the truth's own pass rate; the collapsed model
puts all mass on the answer ``ub/collapse`` repeats in KS@N (:func:`ub_core.oracle.collapse_value`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .metric_spec import metric_keys
from .metrics import DEFAULT_NS
from .metrics.answer_distribution import answer_distribution_scores, probabilities_from_logprobs
from .problems.base import Problem
from .problems.candidates import CandidateSet, candidate_set

__all__ = ["METRIC_KEYS", "RAW_DELIMITER", "CHAT_DELIMITER", "candidate_record",
           "score_candidate_logprobs", "render_chat", "load_chat_tokenizer", "oracle_candidate_logprob",
           "split_candidate_text", "ORACLE_MODES"]

#: The per-problem metric keys both adapters report (``ub_core.metric_spec``, family ``ksn_logprob``).
METRIC_KEYS = metric_keys("ksn_logprob")
#: What separates the context from the candidate: a space after raw text, nothing after a chat template's
#: generation prompt (lm-eval's ``target_delimiter`` and its ``--apply_chat_template`` rule).
RAW_DELIMITER = " "
CHAT_DELIMITER = ""
ORACLE_MODES = ("oracle", "collapse")


def candidate_record(problem: Problem, cs: CandidateSet | None = None) -> dict[str, Any]:
    """A JSON-serialisable record of one problem's candidates (an lm-eval document's fields, an Inspect sample's
    metadata): ``id``, ``category``, ``family``, ``kind``, ``support``, ``prompt``, ``candidates`` (texts),
    ``values`` (scored scalars), ``p`` (true probabilities), ``cut``."""
    cs = candidate_set(problem) if cs is None else cs
    if cs is None:
        raise ValueError(f"{problem.id}: its answer support cannot be listed (ub bank list --logprob)")
    return {"id": problem.id, "uid": problem.uid or "", "category": problem.category, "family": problem.family, "kind": cs.kind,
            "support": problem.support, "prompt": problem.full_prompt, "candidates": list(cs.texts),
            "values": [float(v) for v in cs.values], "p": [float(x) for x in cs.p], "cut": bool(cs.cut)}


def score_candidate_logprobs(problem: Problem, logprobs: Sequence[Any], *, cs: CandidateSet | None = None,
                             ns: Sequence[int] = DEFAULT_NS, threshold: float = 1e-4, method: str = "paper",
                             truth_size: int = 10_000, truth_seed: int = 0, draws: int = 2000, seed: int = 0
                             ) -> tuple[dict[str, float], dict[str, Any]]:
    """One problem's candidate log-probabilities -> ``(scores, payload)``.

    ``logprobs`` is aligned with the candidate texts; ``None`` and ``-inf`` mean probability 0 (not observed).
    ``scores`` has the keys of :data:`METRIC_KEYS` (``valid_mass``, ``ks_distance``, ``jsd``, ``entropy_ratio``,
    ``p_pass@N`` for each N of ``ns``, and ``no_mass``, 1 when the model put no mass on any candidate, when every
    other metric is NaN). ``payload`` records ``q`` (the renormalised answer distribution), the standard errors
    ``p_pass_se@N`` and which N were computed exactly (``p_pass_exact@N``). The truth draws are the KS@N scorer's
    (``problem.truth(truth_size, truth_seed)``), so ``p_pass@N`` predicts that scorer's verdict.
    """
    cs = candidate_set(problem) if cs is None else cs
    if cs is None:
        raise ValueError(f"{problem.id}: its answer support cannot be listed (ub bank list --logprob)")
    if len(logprobs) != len(cs):
        raise ValueError(f"{problem.id}: {len(logprobs)} log-probabilities for {len(cs)} candidates")
    lps = [-math.inf if v is None else v for v in logprobs]
    q = probabilities_from_logprobs(lps)
    raw = answer_distribution_scores(q, cs.p, cs.values, problem.truth(size=truth_size, seed=truth_seed),
                                     ns=ns, threshold=threshold, method=method, support=problem.support,
                                     draws=draws, seed=seed)
    total = float(math.fsum(q.tolist()))
    scores: dict[str, float] = {"valid_mass": raw["valid_mass"], "ks_distance": raw["ks_distance"]}
    for n in sorted({int(n) for n in ns}):  # in the spec's order (ub_core.metric_spec)
        scores[f"p_pass@{n}"] = raw[f"p_pass@{n}"]
    scores.update(jsd=raw["jsd"], entropy_ratio=raw["entropy_ratio"], no_mass=float(total <= 0))
    payload = {"q": [float(x) / total for x in q] if total > 0 else None,
               **{k: v for k, v in raw.items() if k.startswith(("p_pass_se@", "p_pass_exact@"))}}
    return scores, payload


# ------------------------------------------------------------------------------------------------ chat templates

def load_chat_tokenizer(name: str, trust_remote_code: bool = False):
    """The tokenizer of ``name`` (a local folder or a hub id already in the local cache; nothing is downloaded),
    for its chat template. A one-line ``ValueError`` when it cannot be loaded or has no template."""
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(name), local_files_only=True, trust_remote_code=trust_remote_code)
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the user
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"chat_template: cannot load the tokenizer {name!r} from local files ({first})") from None
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

def split_candidate_text(problem: Problem, continuation: str, delimiter: str = RAW_DELIMITER) -> int | None:
    """Index of the candidate that ``continuation`` (what follows the prompt) writes, or ``None``."""
    cs = candidate_set(problem)
    if cs is None or not continuation.startswith(delimiter):
        return None
    text = continuation[len(delimiter):]
    try:
        return cs.texts.index(text)
    except ValueError:
        return None


def _collapse_index(problem: Problem, cs: CandidateSet) -> int:
    from .oracle import collapse_value, render_value

    return cs.texts.index(render_value(problem, collapse_value(problem)))


def oracle_candidate_logprob(problem: Problem, continuation: str, mode: str = "oracle",
                             delimiter: str = RAW_DELIMITER) -> float:
    """log P(continuation | prompt) of the offline reference models for a KS@N problem with a listed support:
    ``log p`` of the candidate it writes (oracle), 0 for the collapsed answer and ``-inf`` for the others
    (collapse), ``-inf`` for anything that is not a candidate."""
    if mode not in ORACLE_MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(ORACLE_MODES)}")
    cs = candidate_set(problem)
    idx = split_candidate_text(problem, continuation, delimiter)
    if cs is None or idx is None:
        return -math.inf
    if mode == "collapse":
        return 0.0 if idx == _collapse_index(problem, cs) else -math.inf
    p = float(cs.p[idx])
    return math.log(p) if p > 0 else -math.inf

