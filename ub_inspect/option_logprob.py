"""Shared pieces of the option-logprob tasks (``ub_inspect/calibration``, ``ub_inspect/implicit``,
``ub_inspect/explicit``): samples, the solver that reads each option variant's log-probability, the scorers
and the NaN-skipping metrics. The science is ``ub_core.logprob.option_logprob`` and ``ub_core.metrics``.

Two ways to get the log-probabilities (``mode``):

- ``prompt_logprobs``: one request per surface variant with the input ``prompt + variant`` and
  ``GenerateConfig(prompt_logprobs=1, max_tokens=1)``; the variant's log-probability is the sum over the
  trailing prompt tokens that spell it (``choice.prompt_logprobs``). Completions-style providers
  (``vllm-completions/``, ``openai-api-completions/`` against vLLM or SGLang) return these; chat providers
  wrap the text in a template, so the trailing tokens are not the variant and the solver stops with an error.
- ``top_logprobs``: ``GenerateConfig(logprobs=True, top_logprobs=20, max_tokens=1)``; a variant's log-probability is
  read token by token from the next-token top-20 lists: the first request sends the prompt; where a listed token
  spells the start of a variant, the next request sends the prompt followed by that token, and so on until the
  variant is spelled (one request per distinct prefix, shared by the variants that begin with it). A variant whose
  next token is not in a list counts as probability 0, and is counted (``multi_token_variants``) when a listed
  token began it. Exact where the provider tokenises the prompt plus a prefix as it tokenises the whole reply and
  the continuation follows the prompt directly (completions providers); with chat providers it measures the
  reply's first tokens.

Both modes keep each variant's tokens (their texts), so both score the same definition as lm-eval with a local
tokenizer: ``-T convention=exclusive`` (default) is the probability that the reply *is* the option, and
``-T convention=paper`` the literal joint probability of its tokens (:mod:`ub_core.logprob.option_logprob`).

The solver keeps what it read in the typed store model :class:`OptionLogprobs` (mode, the variant list, their
log-probabilities with ``None`` = not observed / probability 0, and the boundary and multi-token counts). The
scorer turns it into the option mass and the bank's scores.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any, Mapping, Sequence

from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, Logprob, Logprobs, ModelOutput, get_model
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel
from pydantic import Field

from ub_core.logprob.option_logprob import (
    COUNT_KEYS,
    check_convention,
    flatten_variants,
    option_mass,
    scored_sample,
    unresolved_prefixes,
    variant_logprobs_from_choices,
)
from ub_core.logprob.option_logprob import item_set
from ub_core.problems import OptionItem, bank_version, load_bank

from ._naming import registry_name
from ._store import read_record, write_record
from ._options import choice, first_per_category, select_ids, str_list
from .metrics import grid_rates, nan_mean, nan_stderr, spec_metrics, totals

__all__ = ["MODES", "CONTINUATIONS", "OptionLogprobs", "LogprobsUnavailableError", "record_to_sample", "load_items",
           "option_logprobs", "calibration_scorer", "implicit_scorer", "explicit_scorer", "nan_mean", "nan_stderr",
           "variant_logprob_from_prompt_logprobs", "continuation_logprobs", "option_logprob_task_parts",
           "multi_token_variants"]

log = logging.getLogger(__name__)

MODES = ("prompt_logprobs", "top_logprobs")


class OptionLogprobs(StoreModel):
    """What :func:`option_logprobs` read for one sample (stored as ``OptionLogprobs:<field>``)."""

    mode: str = ""  # prompt_logprobs or top_logprobs; empty until the solver ran
    choices: list[str] = Field(default_factory=list)  # every surface variant of every option
    logprobs: list[float | None] = Field(default_factory=list)  # None = not observed / probability 0
    boundary_merged: int = 0  # variants whose first token also held the end of the prompt
    multi_token_variants: int = 0  # top_logprobs: variants begun by a listed token but not read to the end (read as 0)
    token_texts: list[list[str] | None] = Field(default_factory=list)  # each variant's tokens; None = not read

#: A provider whose API class has this attribute set reads many continuations in one request: ``generate(prompt,
#: config)`` with ``config.extra_body[CONTINUATIONS]`` the list of continuations returns, in
#: ``output.metadata[CONTINUATIONS]``, one entry per continuation, in order: the ``[token, logprob]`` pairs of
#: the ``prompt_logprobs`` of ``prompt + continuation`` (what one request per continuation would return; at least
#: the tokens that spell the continuation), or None where there are none. Plain JSON, not one choice per
#: continuation: Inspect handles each choice of an output at length. The offline models do
#: (:class:`ub_inspect.providers.UBModelAPI`); served providers get one request per continuation.
CONTINUATIONS = "ub_continuations"

TOP_K = 20  # the most top log-probabilities OpenAI-compatible servers return
# The papers read the model's own next-token distribution, i.e. at temperature 1. Servers report raw log-probabilities
# whatever the temperature, but transformers scales its scores by it (and refuses 0 when sampling), so 1 is the
# value that is right everywhere; the one generated token is discarded.
LOGPROB_TEMPERATURE = 1.0


class LogprobsUnavailableError(RuntimeError):
    """The model returned no usable log-probabilities; ``str()`` is one line saying what to do."""


def record_to_sample(item: OptionItem) -> Sample:
    """One item -> one Sample: the prompt as input, the item record in ``metadata["ub"]``, and the keys the
    grouped metrics read (``category``, ``cluster``)."""
    return Sample(id=item.id, input=item.prompt,
                  metadata={"bank": item.bank, "category": item.category, "cluster": item.cluster,
                            "family": item.family, "ub": item.to_record()})


def load_items(bank: str, categories: Any = None, size: str = "subset",
               limit_per_category: Any = None, ids: Any = None, equal_counts: str | None = None) -> list[OptionItem]:
    """The bank's items (``-T categories``, ``size``, ``limit_per_category``, ``ids`` coerced here); for
    calibration, the items of the equal-count rule ``equal_counts`` (:func:`ub_core.metrics.calibration_item_set`,
    the baselines' rule; applied before ``limit_per_category``)."""
    return _items_left_out(bank, categories, size, limit_per_category, ids, equal_counts)[0]


def _items_left_out(bank: str, categories: Any, size: str, limit_per_category: Any, ids: Any,
                    equal_counts: str | None) -> tuple[list[OptionItem], int]:
    cats = str_list(categories, "categories")
    size = choice(size, "size", ("subset", "full"))
    items, left_out = item_set(bank, load_bank(bank, categories=cats, size=size), equal_counts,
                               str_list(ids, "ids") or ())
    return select_ids(first_per_category(items, limit_per_category), ids), left_out


# ------------------------------------------------------------------------------------------------ solver

def _model_name() -> str:
    try:
        return str(get_model())
    except Exception:  # noqa: BLE001 - only for the message
        return "this model"


def variant_logprob_from_prompt_logprobs(tokens: Sequence[Any], variant: str, end: str = "") -> tuple[float, bool]:
    """Sum the log-probabilities of the trailing prompt tokens that spell ``variant``.

    Tokens are taken from the end until their text covers the variant. Returns ``(logprob, merged)``:
    ``merged`` is True when the first of those tokens also holds the end of the prompt (the tokenizer merged
    across the boundary; its log-probability is then included, as lm-eval does). Raises
    :class:`LogprobsUnavailableError` when the trailing text is not the variant (a chat template was added).

    ``end`` is a special token's text that ``variant`` ends with (the end-of-sequence token after a candidate):
    the last token is that token, whether the provider reports it by its text or, decoding with special tokens
    skipped, as an empty string.
    """
    total, merged, _ = trailing_tokens(tokens, variant, end)
    return total, merged


def trailing_tokens(tokens: Sequence[Any], variant: str, end: str = "") -> tuple[float, bool, list[str]]:
    """:func:`variant_logprob_from_prompt_logprobs` plus the texts of the tokens read, in order (the variant's
    token sequence, which the ``exclusive`` convention compares between variants)."""
    tokens = list(tokens)
    total = 0.0
    texts: list[str] = []
    if end and variant.endswith(end) and tokens and _token_text(str(tokens[-1].token)) in (end, ""):
        total, tokens, variant = float(tokens[-1].logprob), tokens[:-1], variant[:-len(end)]
        texts.append(end)
    text = ""
    for tok in reversed(tokens):
        piece = _token_text(str(tok.token))
        text = piece + text
        texts.insert(0, piece)
        total += float(tok.logprob)
        if len(text) >= len(variant):
            break
    if len(text) < len(variant) or not text.endswith(variant):
        raise LogprobsUnavailableError(
            f"{_model_name()}: the prompt log-probabilities end with {text[-len(variant) - 10:]!r}, not the "
            f"option text {variant!r}; the provider changed the input (a chat template?). Use a completions "
            f"provider (vllm-completions/, openai-api-completions/).")
    return total, len(text) > len(variant), texts


def _no_logprobs(what: str, mode: str) -> LogprobsUnavailableError:
    other = "top_logprobs" if mode == "prompt_logprobs" else "prompt_logprobs"
    return LogprobsUnavailableError(
        f"{_model_name()} returned no {what}: -T mode={mode} needs a provider that reports them "
        f"(see ub_inspect/calibration README: vllm-completions/ or openai-api-completions/ for prompt_logprobs, "
        f"any provider with top_logprobs for top_logprobs); try -T mode={other} or another provider.")


async def continuation_logprobs(prompt: str, choices: Sequence[str], end: str = "") -> tuple[list[float], int]:
    """The summed log-probability of each of ``choices`` right after ``prompt``: one request per choice with
    ``prompt_logprobs`` (the provider's prefix cache shares the prompt), plus how many choices' first token also
    held the end of the prompt (:func:`variant_logprob_from_prompt_logprobs`; ``end``: a special token's text
    each choice ends with)."""
    logprobs, merged, _ = await continuation_reads(prompt, choices, end)
    return logprobs, merged


async def continuation_reads(prompt: str, choices: Sequence[str], end: str = "") -> tuple[list[float], int,
                                                                                        list[list[str]]]:
    """:func:`continuation_logprobs` plus each choice's token texts (:func:`trailing_tokens`)."""
    model = get_model()
    config = GenerateConfig(prompt_logprobs=1, max_tokens=1, temperature=LOGPROB_TEMPERATURE)
    if getattr(getattr(model, "api", None), CONTINUATIONS, False) and choices:  # one request reads them all
        out = await model.generate(prompt, config=config.merge(GenerateConfig(
            extra_body={CONTINUATIONS: list(choices)})))
        pairs = (out.metadata or {}).get(CONTINUATIONS)
        read = ([None if r is None else Logprobs(content=[Logprob(token=t, logprob=lp) for t, lp in r])
                 for r in pairs] if isinstance(pairs, list) and len(pairs) == len(choices) else [None])
    else:
        outputs: list[ModelOutput] = await asyncio.gather(*[model.generate(prompt + v, config=config)
                                                            for v in choices])
        read = [out.choices[0].prompt_logprobs if out.choices else None for out in outputs]
    logprobs, merged, texts = [], 0, []
    for variant, plp in zip(choices, read):
        if plp is None or not plp.content:
            raise _no_logprobs("prompt_logprobs", "prompt_logprobs")
        lp, m, toks = trailing_tokens(plp.content, variant, end)
        logprobs.append(lp)
        merged += int(m)
        texts.append(toks)
    return logprobs, merged, texts


async def _next_token_table(text: str) -> dict[str, float]:
    """The top-``TOP_K`` next tokens after ``text`` as ``{token text: log-probability}`` (raw and decoded forms)."""
    model = get_model()
    out = await model.generate(text, config=GenerateConfig(logprobs=True, top_logprobs=TOP_K, max_tokens=1,
                                                           temperature=LOGPROB_TEMPERATURE))
    lp = out.choices[0].logprobs if out.choices else None
    first = lp.content[0] if lp is not None and lp.content else None
    if first is None or not first.top_logprobs:
        raise _no_logprobs("top_logprobs", "top_logprobs")
    table: dict[str, float] = {}
    for t in first.top_logprobs:
        for form in {t.token, _token_text(t.token)}:
            table[form] = max(float(t.logprob), table.get(form, -math.inf))
    return table


async def _by_top_logprobs(prompt: str,
                           choices: Sequence[str]) -> tuple[list[float | None], list[list[str] | None], int]:
    """Each choice's log-probability read token by token from next-token top lists (module docstring), its token
    texts (``None`` when it could not be read), and how many choices a listed token began but no list finished."""
    tables: dict[str, dict[str, float]] = {}

    async def table(spelled: str) -> dict[str, float]:
        if spelled not in tables:
            tables[spelled] = await _next_token_table(prompt + spelled)
        return tables[spelled]

    values: list[float | None] = []
    keys: list[list[str] | None] = []
    unread = 0
    for variant in choices:
        spelled, total, tokens = "", 0.0, []
        while spelled != variant:
            rest = variant[len(spelled):]
            # the longest listed token that spells the next part (a whole-word token over its pieces)
            listed = await table(spelled)
            step = max((t for t in listed if t and rest.startswith(t)), key=len, default=None)
            if step is None:
                break
            total += tables[spelled][step]
            tokens.append(step)
            spelled += step
        if spelled == variant:
            values.append(total)
            keys.append(tokens)
        else:
            values.append(None)
            keys.append(None)
            # begun by a listed token that is more than a space ("R" of "RED"; a bare " " begins every variant)
            unread += int(any(t.strip() for t in tokens) and total > -math.inf)
    return values, keys, unread


def multi_token_variants(choices: Sequence[str], first_tokens: Mapping[str, float]) -> int:
    """How many variants are absent from the first-token list while a strict prefix of them is in it (``" 1"``
    listed, ``" 12"`` asked): such a variant spans several tokens; the ``top_logprobs`` route reads it from
    further lists (:func:`_by_top_logprobs`)."""
    return sum(1 for v in choices if v not in first_tokens
               and any(len(t) < len(v) and t.strip() and v.startswith(t) for t in first_tokens))


def _token_text(token: str) -> str:
    """A raw vocabulary token as text: ``hf/`` reports ``convert_ids_to_tokens`` strings, where byte-level BPE
    writes a leading space as ``Ġ`` and SentencePiece as ``▁``; servers report decoded text already."""
    return " " + token[1:] if token[:1] in ("\u0120", "\u2581") else token


@solver(name=registry_name("option_logprobs"))
def option_logprobs(mode: str = "prompt_logprobs") -> Solver:
    """Read the log-probability and the tokens of every surface variant of every option after the prompt (module
    docstring) and keep them in the store (:class:`OptionLogprobs`)."""
    mode = choice(mode, "mode", MODES)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        item = OptionItem.from_record(state.metadata["ub"])
        choices, _ = flatten_variants(item)
        merged = multi = 0
        if mode == "prompt_logprobs":
            values, merged, keys = await continuation_reads(item.prompt, choices)
        else:
            values, keys, multi = await _by_top_logprobs(item.prompt, choices)
            if multi:
                log.warning("%s: %d option variant(s) begin with a listed token but leave the top-%d lists; "
                            "-T mode=top_logprobs reads them as probability 0", item.id, multi, TOP_K)
        # JSON-safe: probability 0 is None (logs write -inf as null)
        logprobs = [None if v is None or v == -math.inf else float(v) for v in values]
        write_record(state, OptionLogprobs, mode=mode, choices=list(choices), logprobs=logprobs,
                     token_texts=[None if k is None else list(k) for k in keys], boundary_merged=merged,
                     multi_token_variants=multi)
        return state

    return solve


# ------------------------------------------------------------------------------------------------ metrics



def _metrics(bank: str) -> list:
    """From the bank's :mod:`ub_core.metric_spec` entries (:func:`ub_inspect.metrics.spec_metrics`): the headline
    with its per-category values, for calibration the share of grids labelled with each reference behaviour
    (``grid_<b>``, the numeric-calibration paper's Figure 3), the counts
    :data:`ub_core.logprob.option_logprob.COUNT_KEYS` (``no_mass``, ``kl_floored``, ``prefix_unresolved``), then per key
    the NaN-skipping mean and its standard error, clustered by ``cluster`` (option pair, as the numeric-calibration
    paper; scenario, ours), per dataset (``<category>_<key>``: the papers report each dataset separately) and pooled
    over the run's datasets (ours), the pooled SE stratified by dataset as lm-eval's group SE
    (:func:`ub_core.metrics.stratified_stderr`)."""
    run = ((grid_rates(),) if bank == "calibration" else ()) + (totals(list(COUNT_KEYS[bank])),)
    return spec_metrics(bank, cluster="cluster", run_metrics=run, strata="category")


# ------------------------------------------------------------------------------------------------ scorers

def _score(state: TaskState, convention: str, kl_floor: float | None = None) -> Score:
    item = OptionItem.from_record(state.metadata["ub"])
    # validated once (a StoreModel validates at every field read: ub_inspect._store.read_record)
    stored = read_record(state, OptionLogprobs)
    mode, choices, read, token_texts = stored.mode, stored.choices, stored.logprobs, stored.token_texts
    boundary_merged, multi_token = stored.boundary_merged, stored.multi_token_variants
    if not mode:
        raise LogprobsUnavailableError(f"{item.id}: no log-probabilities in the store; run the option_logprobs "
                                       f"solver before this scorer")
    keys = (dict(zip(choices, (None if k is None else tuple(k) for k in token_texts)))
            if token_texts else None)  # logs written before tokens were kept have none
    logprobs = variant_logprobs_from_choices(choices, read)
    mass = option_mass(item, logprobs, keys, convention)
    unresolved = unresolved_prefixes(item, logprobs, keys) if convention == "exclusive" else 0
    if unresolved:
        log.warning("%s: %d option variant(s) are a text prefix of another option's and their tokens are unknown; "
                    "read as given (not exclusive)", item.id, unresolved)
    value, payload = scored_sample(item, mass, kl_floor)
    value["prefix_unresolved"] = float(bool(unresolved))
    predicted = payload["predicted"]
    answer = item.options[max(range(len(mass)), key=lambda i: mass[i])] if predicted is not None else ""
    pm = float(sum(payload["option_mass"]))
    return Score(value=value, answer=answer,
                 explanation=f"mass on the options {pm:.3g}; normalised "
                             + ("-" if predicted is None else ", ".join(
                                 f"{o}={q:.3g}" for o, q in zip(item.options, predicted))),
                 metadata={"ub": {**item.to_record(), **payload, "mode": mode,
                                  "choices": list(choices), "logprobs": list(read),
                                  "boundary_merged": int(boundary_merged), "convention": convention,
                                  "token_texts": list(token_texts), "prefix_unresolved": unresolved,
                                  "multi_token_variants": int(multi_token)}})


@scorer(metrics=_metrics("calibration"), name=registry_name("calibration_scorer"))
def calibration_scorer(convention: str = "exclusive") -> Scorer:
    """PM, WD, RE and reference behaviours (the numeric-calibration paper) from the option mass."""

    convention = check_convention(convention)

    async def score(state: TaskState, target: Target) -> Score:
        return _score(state, convention)

    return score


@scorer(metrics=_metrics("implicit"), name=registry_name("implicit_scorer"))
def implicit_scorer(convention: str = "exclusive", kl_floor: float | None = None) -> Scorer:
    """Chebyshev, Manhattan, KL, missing mass and argmax accuracy (the implicit-reasoning paper) from the option
    mass."""

    convention = check_convention(convention)

    async def score(state: TaskState, target: Target) -> Score:
        return _score(state, convention, kl_floor)

    return score


@scorer(metrics=_metrics("explicit"), name=registry_name("explicit_scorer"))
def explicit_scorer(convention: str = "exclusive") -> Scorer:
    """MCQ accuracy and the probability on the correct letter (the implicit-reasoning paper's explicit twin)."""

    convention = check_convention(convention)

    async def score(state: TaskState, target: Target) -> Score:
        return _score(state, convention)

    return score


def option_logprob_task_parts(bank: str, categories: Any = None, size: str = "subset", limit_per_category: Any = None,
                     mode: str = "prompt_logprobs", ids: Any = None, equal_counts: str | None = None) -> dict[str, Any]:
    """Dataset, solver and metadata shared by the three task functions (each adds its scorer and builds the Task
    with :func:`ub_inspect._naming.package_task`). Calibration's metadata state the equal-count rule and how many
    items it left out (``equal_counts``, ``equal_counts_left_out``)."""
    from inspect_ai.dataset import MemoryDataset

    mode = choice(mode, "mode", MODES)
    items, left_out = _items_left_out(bank, categories, size, limit_per_category, ids, equal_counts)
    metadata: dict[str, Any] = {"bank": bank, "size": size, "mode": mode}
    if bank == "calibration":
        metadata.update(equal_counts=equal_counts or "drop", equal_counts_left_out=left_out)
    return {"dataset": MemoryDataset([record_to_sample(i) for i in items], name=f"unpredictabench-{bank}"),
            "solver": option_logprobs(mode), "metadata": metadata, "version": bank_version(bank)}
