"""lm-eval hook functions (``!function`` targets) for the option-logprob tasks: ``ub_calibration_*``,
``ub_implicit_*`` (group ``ub_logit``) and ``ub_explicit_*`` (group ``ub_explicit``). The science is
``ub_core.logprob.option_logprob`` and ``ub_core.metrics``.

- :func:`option_logprob_dataset` is the ``custom_dataset``: one document per item of one bank and category, edition
  ``size`` (metadata; default ``subset``). ``choices`` lists every surface variant of every option
  (``doc_to_choice``), ``choice_option`` the option each belongs to. When the metadata name a model
  (``pretrained``, or ``tokenizer``, as the CLI passes model_args) whose tokenizer loads offline, variants that
  encode to the same continuation token ids, exactly as lm-eval splits context+continuation, are requested
  once, and their ids are kept (``choice_token_ids``) so that, under the default ``convention`` (metadata
  ``exclusive``; ``paper`` is the literal joint probability), a variant whose tokens begin another's (``" 1"``,
  ``" 12"``) is not counted twice (:func:`ub_core.logprob.option_logprob.exclusive_probabilities`): the same definition
  as the Inspect tasks. Otherwise variants are deduplicated as strings, and an item where one option's variant is a
  text prefix of another's cannot be resolved: it is scored as given and counted in ``prefix_unresolved`` (pass
  ``tokenizer=`` in model_args, or metadata ``tokenizer``, to resolve it), unless the model reports its tokens with
  its log-probabilities (:class:`~ub_lmeval.results_json.TokenizedLogprob`: the offline ``ub-oracle`` and
  ``ub-collapse``, as Inspect's ``ub/`` providers do) or the values decide the pair
  (:func:`ub_core.logprob.option_logprob.unresolved_prefixes`).
- :func:`process_results_option_logprob` turns the per-choice ``(logprob, is_greedy)`` results into the option mass and
  the bank's scores (:func:`ub_core.logprob.option_logprob.scored_sample`); ``option_mass`` and ``predicted`` (lists) go
  to the ``--log_samples`` line only (``doc["ub_sample"]``, :func:`ub_lmeval.results_json.log_only`). Malformed
  log-probabilities from any model (NaN, +inf, above 0, not numbers, the wrong count, or variants whose
  probabilities sum above 1, as lm-eval's ``dummy`` model returns) make the item a counted ``bad_logprobs`` item,
  logged with the reason, whose metrics are NaN (left out of every mean): never an aborted run.
- Intervals and grids. lm-eval treats documents as independent; items that share an option pair or a scenario are
  not (the numeric-calibration paper clusters by option pair; clustering the implicit items by scenario is ours,
  that paper reports no intervals). Each headline metric's
  per-document value is a :class:`~ub_lmeval.results_json.ClusteredValue` (a float that remembers its cluster),
  so ``<metric>_stderr`` in the results is the cluster-robust standard error
  (:func:`ub_lmeval.ksn_hooks.nanmean_stderr`); the 95% interval is mean +- 1.96 x it.
  Calibration also reports ``grid_<b>``, the share of option-pair grids classified as behaviour b
  (the numeric-calibration paper's Figure 3) and ``grid_undetermined``, the share of grids too unbalanced to label
  (a limited run keeps part of a grid: :func:`ub_core.metrics.grid_behaviour_rates`), aggregated by
  :func:`grid_behaviour_rate` from each document's
  :func:`ub_core.logprob.option_logprob.behaviour_entry`.
- Direction: ``re`` (model entropy minus the ideal's, target 0) is two-sided: its ``higher_is_better`` is null,
  and ``abs_re`` (``|re|``, lower is better) is the ranked metric.
"""

from __future__ import annotations

import functools
import json
import logging
from typing import Any, Sequence

from ub_core.logprob.ksn_logprob import clean_logprobs
from ub_core.metrics import UNDETERMINED, check_equal_counts, grid_behaviour_rates
from ub_core.logprob.option_logprob import (BEHAVIOURS, COUNT_KEYS, METRIC_KEYS, check_convention, dedup_by_token_ids,
                                    flatten_variants, item_set, option_mass, scored_sample, unresolved_prefixes)
from ub_core.problems import OptionItem, load_bank

from .ksn_hooks import nanmean, select_ids, total
from .metadata import OPTION_LOGPROB_OPTIONS, checked
from .results_json import ClusteredValue, log_only

__all__ = ["option_logprob_docs", "option_logprob_dataset", "process_results_option_logprob", "continuation_token_ids",
           "nanmean", "total",
           "grid_behaviour_rate", "CLUSTERED_KEYS"]

#: The metrics whose standard error is clustered (by option pair or scenario), by bank.
CLUSTERED_KEYS = {"calibration": ("pm", "wd", "re", "abs_re"),
                  "implicit": ("chebyshev", "manhattan", "kl", "jsd_bits", "missing_mass", "argmax_acc"),
                  "explicit": ("mcq_acc", "p_correct")}

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=4)
def _tokenizer(name: str, trust_remote_code: bool = False):
    """The model's tokenizer from local files only (no network at run time); ``None`` when it cannot load."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(name, local_files_only=True, trust_remote_code=trust_remote_code)
    except Exception as exc:  # noqa: BLE001 - any failure means: fall back to string dedup, and say so
        log.warning("ub logit tasks: tokenizer %r did not load offline (%s); variants are deduplicated as "
                    "strings", name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return None


def continuation_token_ids(tokenizer, context: str, continuation: str) -> list[int]:
    """The continuation's token ids as lm-eval 0.4.13 computes them for a causal model (``_encode_pair``):
    trailing context spaces move to the continuation; ``encode(context + continuation)`` minus the length of
    ``encode(context)``. Special tokens are left out on both sides, which shifts neither split."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation
    whole = tokenizer.encode(context + continuation, add_special_tokens=False)
    ctx = tokenizer.encode(context, add_special_tokens=False)
    return list(whole[len(ctx):])


def option_logprob_docs(bank: str, category: str | None = None, size: str | None = "subset",
               tokenizer=None, ids: Any = None, convention: str = "exclusive",
               kl_floor: Any = None, equal_counts: Any = None) -> list[dict]:
    """One document per item (for calibration, of the equal-count rule ``equal_counts``, default ``drop``: the
    baselines' item set, :func:`ub_core.logprob.option_logprob.item_set`; the count left out is logged; other banks
    ignore it, as ``--metadata`` reaches every task of the ``ub_logit`` group): ``id``, ``category``, ``prompt``,
    ``options``, ``choices``, ``choice_option``,
    ``dedup`` (``token_ids`` or ``string``), ``convention``, ``kl_floor`` (implicit KL floor, None = the default
    ``ub_core.metrics.KL_FLOOR``) and ``record`` (the item's JSON record, for rescoring). ``ids`` keeps only those items
    (``--metadata '{"ids": "..."}'``)."""
    convention = check_convention(convention)
    kl_floor = None if kl_floor in (None, "") else float(kl_floor)
    if kl_floor is not None and not 0 < kl_floor < 1:
        raise ValueError(f"kl_floor must be in (0, 1), got {kl_floor!r}")
    # --metadata reaches every task of a group (ub_logit: calibration and implicit), so other banks ignore the rule
    rule = None if equal_counts in (None, "") or bank != "calibration" else check_equal_counts(equal_counts)
    wanted = ([s.strip() for s in ids.split(",")] if isinstance(ids, str)
              else list(ids) if isinstance(ids, (list, tuple)) else [])
    items, left_out = item_set(bank, load_bank(bank, categories=[category] if category else None, size=size), rule,
                               wanted)
    if left_out:
        log.info("ub logit tasks: %s %s: %d item(s) with equal counts left out (equal_counts=drop, as the "
                 "baselines)", bank, category or "", left_out)
    items = select_ids(items, ids, bank, size)
    docs = []
    for item in items:
        choices, owners = flatten_variants(item)
        dedup, kept_ids = "string", []
        if tokenizer is not None:
            token_ids = [continuation_token_ids(tokenizer, item.prompt, c) for c in choices]
            by_choice = dict(zip(choices, token_ids))
            choices, owners = dedup_by_token_ids(choices, owners, token_ids)
            kept_ids = [list(by_choice[c]) for c in choices]
            dedup = "token_ids"
        docs.append({"id": item.id, "category": item.category, "cluster": item.cluster, "prompt": item.prompt,
                     "options": list(item.options), "choices": list(choices), "choice_option": list(owners),
                     "choice_token_ids": kept_ids, "dedup": dedup, "convention": convention,
                     "kl_floor": kl_floor,
                     "record": json.dumps(item.to_record(), sort_keys=True)})
    return docs


def option_logprob_dataset(bank: str | None = None, category: str | None = None, size: str | None = "subset",
                  pretrained: Any = None, tokenizer: Any = None, trust_remote_code: Any = False, ids: Any = None,
                  convention: Any = "exclusive", kl_floor: Any = None, equal_counts: Any = None, **kwargs: Any):
    """``custom_dataset`` hook, called with the task metadata (``bank``, ``category``, ``size``) and the
    model_args keys (``pretrained``, ``tokenizer``); a ub option these tasks do not take is a one-line error
    (:mod:`ub_lmeval.metadata`)."""
    from datasets import Dataset, DatasetDict

    checked("ub_logit", kwargs, OPTION_LOGPROB_OPTIONS)

    if not bank:
        raise ValueError("ub logit task: metadata must name the bank (calibration, implicit or explicit)")
    name = tokenizer if isinstance(tokenizer, str) and tokenizer else pretrained
    tok = _tokenizer(str(name), str(trust_remote_code).lower() == "true") if isinstance(name, str) and name else None
    docs = option_logprob_docs(str(bank), category, size or "subset", tok, ids, convention or "exclusive", kl_floor,
                               equal_counts)
    return DatasetDict({"test": Dataset.from_list(docs)})


def _logprobs(results: Sequence[Any]) -> list[Any]:
    """lm-eval's ``(logprob, is_greedy)`` pairs -> the log-probabilities, unchecked
    (:func:`ub_core.logprob.ksn_logprob.clean_logprobs` names a hostile one)."""
    return [r[0] if isinstance(r, (tuple, list)) and r else r for r in results]


def _item_scores(item: OptionItem, doc: dict, results: list) -> tuple[dict[str, float], dict[str, Any], str | None]:
    """``(scores, payload, None)`` or, for malformed log-probabilities, ``({}, {}, reason)``. The payload carries
    ``prefix_unresolved`` (:func:`ub_core.logprob.option_logprob.unresolved_prefixes`; 0 under ``convention=paper``)."""
    choices = list(doc["choices"])
    lps, why = clean_logprobs(_logprobs(results), none_is_zero=False)
    if why is None and len(lps) != len(choices):
        why = f"expected {len(choices)} log-likelihood results (one per choice), got {len(lps)}"
    if why is not None:
        return {}, {}, why
    token_ids = doc.get("choice_token_ids") or None  # [] when the tokenizer was unknown (string dedup)
    if token_ids is None:  # a model that reports its tokens with its log-probabilities (TokenizedLogprob)
        told = [getattr(r[0] if isinstance(r, (tuple, list)) and r else r, "tokens", None) for r in results]
        token_ids = told if told and all(t is not None for t in told) else None
    if token_ids is not None and len(token_ids) != len(choices):
        raise ValueError(f"{doc.get('id')}: {len(token_ids)} token id lists for {len(choices)} choices")
    convention = check_convention(doc.get("convention") or "exclusive")
    keys = dict(zip(choices, (tuple(t) for t in token_ids))) if token_ids else None
    logprobs = dict(zip(choices, lps))
    try:
        mass = option_mass(item, logprobs, keys, convention)
        scores, payload = scored_sample(item, mass, doc.get("kl_floor"))
    except ValueError as exc:  # the model's numbers are no distribution (variants summing above 1)
        return {}, {}, str(exc).splitlines()[0]
    payload["prefix_unresolved"] = unresolved_prefixes(item, logprobs, keys) if convention == "exclusive" else 0
    return scores, payload, None


def process_results_option_logprob(doc: dict, results: list) -> dict:
    """One item's per-choice log-likelihoods -> its scores (the bank's
    :data:`ub_core.logprob.option_logprob.METRIC_KEYS`, the clustered ones as
    :class:`~ub_lmeval.results_json.ClusteredValue`), ``grid_<b>`` for calibration, and ``bad_logprobs`` (1.0 when the
    log-probabilities were malformed: every score is then NaN, and the reason is logged). ``option_mass`` and
    ``predicted`` (aligned with ``doc["options"]``; ``predicted`` is ``None`` when no mass falls on any option) go to
    the sample log."""
    item = OptionItem.from_record(json.loads(doc["record"]))
    scores, payload, why = _item_scores(item, doc, results)
    if why is not None:
        log.warning("ub logit tasks: %s: malformed log-probabilities (%s); counted in bad_logprobs", item.id, why)
        scores = {**{k: float("nan") for k in METRIC_KEYS[item.bank]}, **{k: 0.0 for k in COUNT_KEYS[item.bank]}}
    row: dict[str, Any] = dict(scores)
    for key in CLUSTERED_KEYS[item.bank]:
        row[key] = ClusteredValue(row[key], item.cluster)
    # the entry travels inside the grid_<b> values (an unlisted key would be averaged by lm-eval)
    entry = payload.pop("behaviour_entry", None)
    if item.bank == "calibration":
        for b in BEHAVIOURS + (UNDETERMINED,):
            row[f"grid_{b}"] = {"behaviour": b, "entry": entry}
    row["bad_logprobs"] = 1.0 if why is not None else 0.0
    unresolved = int(payload.get("prefix_unresolved", 0))
    row["prefix_unresolved"] = 1.0 if unresolved else 0.0
    if unresolved:
        _warn_unresolved(item.id, unresolved)
    log_only(doc, **payload, **({"bad_logprobs_reason": why} if why else {}))
    return row


_WARNED_UNRESOLVED: set[str] = set()


def _warn_unresolved(item_id: str, count: int) -> None:
    """Warn once per bank and process (the count is the ``prefix_unresolved`` metric; the item ids are in the
    samples), not once per item: a dice run without a tokenizer has hundreds of them."""
    bank = item_id.split("-", 1)[0]
    if bank in _WARNED_UNRESOLVED:
        return
    _WARNED_UNRESOLVED.add(bank)
    log.warning("ub logit tasks: %s: %d option variant(s) are a text prefix of another option's and no tokenizer "
                "gave their tokens; read as given, counted in prefix_unresolved (pass tokenizer= in model_args); "
                "further such items are counted without a warning", item_id, count)


def grid_behaviour_rate(items: Sequence[Any]) -> float:
    """Aggregation of ``grid_<b>``: the share of option-pair grids labelled b
    (:func:`ub_core.metrics.grid_behaviour_rates`); NaN when no document has a reference behaviour."""
    if not items:
        return float("nan")
    behaviour = items[0]["behaviour"]
    rates, _ = grid_behaviour_rates(i["entry"] for i in items if i.get("entry"))
    value = rates.get(behaviour)
    return float("nan") if value is None else float(value)
