"""lm-eval hook functions (``!function`` targets) for the sampling-free KS@N tasks ``ub_ksn_logprob_<category>``
(group ``ub_ksn_logprob``). The science is :mod:`ub_core.ksn_logprob`.

- :func:`ksn_logprob_dataset` is the ``custom_dataset``: one document per KS@N problem of the category whose
  answer support can be listed, with ``candidates`` (the ``doc_to_choice`` list: every answer written as the
  prompt asks for it, ``{7}``). lm-eval's ``multiple_choice`` then asks one log-likelihood per candidate after the
  prompt, with its ``target_delimiter`` (``" "``) before it, or with none under ``--apply_chat_template``, where
  the candidate is the start of the assistant's reply.
- :func:`process_results_ksn_logprob` turns the per-candidate ``(logprob, is_greedy)`` results into the model's
  answer distribution and its scores (:func:`ub_core.ksn_logprob.score_candidate_logprobs`), plus ``q`` (the
  renormalised distribution, for the sample logs and ``ub report``).
"""

from __future__ import annotations

from typing import Any, Sequence

from ub_core.ksn_logprob import METRIC_KEYS, candidate_record, score_candidate_logprobs
from ub_core.metric_spec import KSN_LOGPROB_METRICS
from ub_core.problems.candidates import enumerable_problems
from ub_core.problems import get_problem, load_bank

from .ksn_hooks import lmeval_value, count, nanmean, select_ids, total

__all__ = ["ksn_logprob_docs", "ksn_logprob_dataset", "process_results_ksn_logprob", "nanmean", "total", "count",
           "METRIC_KEYS"]


def ksn_logprob_docs(category: str | None = None, ids: Any = None) -> list[dict]:
    """One document per enumerable problem of ``category`` (all categories when None): the candidate record of
    :func:`ub_core.ksn_logprob.candidate_record` (``id``, ``category``, ``prompt``, ``candidates``, ``values``,
    ``p``, ...). ``ids`` keeps only those problems, as for ``ub_ksn``."""
    problems = select_ids(load_bank("ksn", categories=[category] if category else None), ids, "ksn")
    return [candidate_record(p, cs) for p, cs in enumerable_problems(problems)]


def ksn_logprob_dataset(category: str | None = None, ids: Any = None, **kwargs: Any):
    """``custom_dataset`` hook, called with the task metadata (``category``) and the model_args keys."""
    from datasets import Dataset, DatasetDict

    return DatasetDict({"test": Dataset.from_list(ksn_logprob_docs(category, ids))})


def _logprobs(results: Sequence[Any], n: int, doc_id: str) -> list[float]:
    if len(results) != n:
        raise ValueError(f"{doc_id}: expected {n} log-likelihood results (one per candidate), got {len(results)}")
    return [float(r[0] if isinstance(r, (tuple, list)) else r) for r in results]


def process_results_ksn_logprob(doc: dict, results: list) -> dict:
    """One problem's per-candidate log-likelihoods -> the metrics of the ``ksn_logprob`` spec, plus ``q``."""
    problem = get_problem(doc["id"])
    lps = _logprobs(results, len(doc["candidates"]), doc["id"])
    scores, payload = score_candidate_logprobs(problem, lps)
    out: dict[str, Any] = {m.key: lmeval_value(m, scores[m.key]) for m in KSN_LOGPROB_METRICS
                           if "lmeval" in m.adapters}
    out["q"] = payload["q"] or []
    return out
