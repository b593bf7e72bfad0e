"""lm-eval hook functions (``!function`` targets) for the sampling-free KS@N tasks ``ub_ksn_logprob_<category>``
(group ``ub_ksn_logprob``). The science is :mod:`ub_core.logprob.ksn_logprob`.

- :func:`ksn_logprob_dataset` is the ``custom_dataset``: one document per KS@N problem of the category whose
  answer support can be listed, with ``candidates`` (every answer written as the prompt asks for it, ``{7}``) and
  ``choices`` (the ``doc_to_choice`` list: each candidate followed by each text that ends a reply, the model's
  end-of-sequence text and ub_ksn's ``"\\n\\n"`` stop: :func:`reply_ends`). lm-eval's ``multiple_choice`` then
  asks one log-likelihood per choice after the prompt, with its ``target_delimiter`` (``" "``) before it, or with
  none under ``--apply_chat_template``, where the candidate is the start of the assistant's reply.
- :func:`process_results_ksn_logprob` turns the per-candidate ``(logprob, is_greedy)`` results into the model's
  answer distribution and its scores (:func:`ub_core.logprob.ksn_logprob.score_candidate_logprobs`); ``q`` (the
  renormalised distribution, for ``ub report``) goes to the sample log only (``doc["ub_sample"]``).
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

from ub_core.logprob.eos import eos_text, served_eos_text
from ub_core.logprob.ksn_logprob import (METRIC_KEYS, candidate_continuations, candidate_record, combine_end_logprobs,
                                         end_texts, score_candidate_logprobs)
from ub_core.metric_spec import as_metric_value, run_specs
from ub_core.metrics import DEFAULT_NS
from ub_core.problems.candidates import enumerable_problems
from ub_core.problems import get_problem, load_bank

from .ksn_hooks import DEFAULT_THRESHOLD, nanmean, select_ids, total
from .metadata import KSN_LOGPROB_OPTIONS, checked
from .results_json import log_only

__all__ = ["ksn_logprob_docs", "ksn_logprob_dataset", "process_results_ksn_logprob", "reply_ends", "nanmean",
           "total", "METRIC_KEYS", "UB_KSN_STOPS", "LMEVAL_SLOTS"]

#: ub_ksn's generations per problem (``repeats``); it retries no invalid reply.
LMEVAL_SLOTS = 100


log = logging.getLogger(__name__)

#: ub_ksn's generation stops (``generation_kwargs.until``): a reply that goes on with one of them is cut there.
UB_KSN_STOPS = ("\n\n",)

_warned: set[str] = set()


def reply_ends(end_of_answer: str = "eos", pretrained: Any = None, tokenizer: Any = None, base_url: Any = None,
               model: Any = None) -> tuple[str, ...]:
    """The texts that end a reply after a candidate (:func:`ub_core.logprob.ksn_logprob.end_texts`): with
    ``end_of_answer="eos"`` the end-of-sequence text of the tokenizer that ``--model_args`` names
    (``tokenizer=``, else ``pretrained=``; local files only), then ub_ksn's ``"\\n\\n"`` stop. When no
    tokenizer is named or loadable, a server model (``base_url=``, ``model=`` of lm-eval's ``local-completions``)
    is asked what it serves (:func:`ub_core.logprob.eos.served_eos_text`: a model under an alias). When that gives
    nothing either (API models without a tokenizer, the offline ``ub-oracle`` / ``ub-collapse``) the
    candidates are scored as reply prefixes (``end_of_answer=none``), with one warning: pass
    ``--metadata '{"end_of_answer": "<the text that ends a reply>"}'`` to score exact replies."""
    if end_of_answer != "eos":
        return end_texts(str(end_of_answer), None, UB_KSN_STOPS)
    name = tokenizer if isinstance(tokenizer, str) and tokenizer else pretrained
    eos, why = None, "no tokenizer= or pretrained= in --model_args"
    if isinstance(name, str) and name:
        try:
            eos = eos_text(name=name)
        except ValueError as exc:
            why = str(exc)
    if not eos and isinstance(base_url, str) and base_url:
        try:
            eos = served_eos_text(base_url, model if isinstance(model, str) and model else None)
        except ValueError as exc:
            why = f"{why}; {str(exc).removeprefix('end_of_answer=eos: ')}"
    if eos:
        return end_texts("eos", eos, UB_KSN_STOPS)
    if why not in _warned:
        _warned.add(why)
        log.warning(f"ub_ksn_logprob: {why}; candidates are scored as reply prefixes (end_of_answer=none, "
                            f"q(c) = P(reply starts with c)). Pass --metadata '{{\"end_of_answer\": \"<text>\"}}' "
                            f"with the text that ends a reply to score exact replies.")
    return ("",)


def ksn_logprob_docs(category: str | None = None, ids: Any = None, ends: Sequence[str] = ("",),
                     bank: str = "ksn", threshold: float = DEFAULT_THRESHOLD, method: str = "paper") -> list[dict]:
    """One document per enumerable problem of ``category`` (all categories when None): the candidate record of
    :func:`ub_core.logprob.ksn_logprob.candidate_record` (``id``, ``category``, ``prompt``, ``candidates``, ``values``,
    ``p``, ...), plus ``ends`` (the texts that end a reply) and ``choices`` (the ``doc_to_choice`` list: each
    candidate followed by each end, candidate-major). ``ids`` keeps only those problems, as for ``ub_ksn``;
    ``bank`` is the registered bank of sampled problems (``ksn``, or a plug-in's); ``threshold`` and ``method``
    are the KS test's that ``p_pass@N`` predicts."""
    problems = select_ids(load_bank(bank, categories=[category] if category else None), ids, bank)
    docs = []
    for p, cs in enumerable_problems(problems):
        rec = candidate_record(p, cs)
        docs.append({**rec, "bank": p.bank, "ends": list(ends), "threshold": float(threshold), "method": str(method),
                     "choices": candidate_continuations(rec["candidates"], "", ends)})
    return docs


def ksn_logprob_dataset(category: str | None = None, ids: Any = None, end_of_answer: str = "eos",
                        pretrained: Any = None, tokenizer: Any = None, bank: str = "ksn",
                        threshold: Any = DEFAULT_THRESHOLD, method: Any = "paper", **kwargs: Any):
    """``custom_dataset`` hook, called with the task metadata (``category``; ``ids``, ``end_of_answer``,
    ``threshold`` and ``method`` from ``--metadata``, checked as Inspect's ``-T`` options: :mod:`ub_lmeval.metadata`)
    and the model_args keys (``pretrained``, ``tokenizer``, or a server's ``base_url`` and ``model``: whose
    end-of-sequence text ends a reply, :func:`reply_ends`)."""
    from datasets import Dataset, DatasetDict

    opts = checked("ub_ksn_logprob", {**kwargs, "threshold": threshold, "method": method}, KSN_LOGPROB_OPTIONS)
    return DatasetDict({"test": Dataset.from_list(ksn_logprob_docs(category, ids,
                                                                   reply_ends(end_of_answer, pretrained, tokenizer,
                                                                              kwargs.get("base_url"),
                                                                              kwargs.get("model")),
                                                                   str(bank), opts["threshold"], opts["method"]))})


def _logprobs(results: Sequence[Any]) -> list[Any]:
    """lm-eval's ``(logprob, is_greedy)`` pairs -> the log-probabilities, unchecked (hostile values are named by
    :func:`ub_core.logprob.ksn_logprob.clean_logprobs`)."""
    return [r[0] if isinstance(r, (tuple, list)) and r else r for r in results]


def process_results_ksn_logprob(doc: dict, results: list) -> dict:
    """One problem's per-(candidate, end) log-likelihoods -> the metrics of the ``ksn_logprob`` spec (``q`` to the
    sample log). ``p_pass@N`` predicts ``ub_ksn``: 100 generations, invalid replies not retried. Malformed
    log-likelihoods (from any model, lm-eval's ``dummy`` included) make the problem a counted ``bad_logprobs`` item,
    logged."""
    problem = get_problem(doc["id"], bank=doc.get("bank"))
    ends = doc.get("ends") or [""]
    n = len(doc["candidates"])
    lps = _logprobs(results)
    if len(lps) == n * len(ends):  # else the wrong count is named by score_candidate_logprobs
        lps = combine_end_logprobs(lps, n, len(ends))
    scores, payload = score_candidate_logprobs(problem, lps, slots=LMEVAL_SLOTS, max_attempts=1, none_is_zero=False,
                                               threshold=float(doc.get("threshold", DEFAULT_THRESHOLD)),
                                               method=str(doc.get("method", "paper")))
    if payload.get("bad_logprobs"):
        log.warning(f"ub_ksn_logprob: {doc['id']}: {payload['bad_logprobs']}; counted in bad_logprobs")
    unresolved = bool(scores.get("unresolved"))  # left out of the p_pass means (NaN, utils.nanmean), counted
    out: dict[str, Any] = {key: scores[key] if unresolved and m.kind == "rate" else as_metric_value(m, scores[key])
                           for key, m in run_specs("ksn_logprob", DEFAULT_NS, adapter="lmeval")}
    log_only(doc, q=payload["q"] or [], **({"bad_logprobs_reason": payload["bad_logprobs"]}
                                            if payload.get("bad_logprobs") else {}))
    return out
