"""Sampling-free KS@N as an Inspect task: ``inspect eval ub_inspect/ksn_logprob --model vllm-completions/<model>``.

One Sample per KS@N problem of the bank: by default (``-T enumeration=auto``) the problems whose answer support
can be listed (``ub bank list --logprob``) take the listed route and every other problem is read through its
reply tree (``ub_core.logprob.reply_tree``: the model's top-k next tokens, expanded best first until 0.99 of the
reply mass is finished); ``-T enumeration=listed`` keeps only the first, ``tree`` sends every problem through the
second. The listed route reads
the log-probability of every candidate answer after the prompt (one ``prompt_logprobs`` request per candidate;
vLLM's prefix caching computes the shared prompt once), the scorer turns them into the model's answer
distribution q and scores it against the truth: ``ks_distance``, ``p_pass@N``, ``jsd``, ``valid_mass`` and
``entropy_ratio`` (:mod:`ub_core.logprob.ksn_logprob`). See README.md beside this file.
"""

from __future__ import annotations


import dataclasses
import logging
import math
import re
from typing import Any, Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel
from pydantic import Field

from ub_core.logprob.eos import OFFLINE_EOS, eos_text, served_eos_text, served_logprobs
from ub_core.logprob.ksn_logprob import (CHAT_DELIMITER, RAW_DELIMITER, candidate_continuations,
                                         candidate_record, end_texts, load_chat_tokenizer, render_chat,
                                         score_candidate_logprobs)
from ub_core.metric_keys import per_n_key
from ub_core.metrics import DEFAULT_NS
from ub_core.problems.candidates import candidate_set, enumerable_problems
from ub_core.logprob.reply_tree import (MAX_REQUESTS, MAX_TOKENS, PROBE_REPLIES, TARGET_KS_WIDTH, TARGET_P_PASS_WIDTH,
                                        ReplyTree, enumerate_problem_tree, score_reply_tree)
from ub_core.logprob.reply_tree import TOP_K as TREE_TOP_K
from ub_core.problems import Problem, bank_version
from ub_inspect.ksn.ksn import load_problems

from ub_inspect._inspect_private import built_inside_eval
from ub_inspect._naming import package_task, registry_name
from ub_inspect._problems import lookup_problem
from ub_inspect._options import OptionError, TaskOptions, first_per_category, registry_task, select_ids
from ub_inspect.metrics import spec_metrics
from ub_inspect.option_logprob import LOGPROB_TEMPERATURE, LogprobsUnavailableError, _token_text, continuation_logprobs
from ub_inspect.providers import UBModelAPI

log = logging.getLogger(__name__)

__all__ = ["ksn_logprob", "record_to_sample", "candidate_logprobs", "ksn_logprob_scorer", "CandidateLogprobs",
           "ReplyTreeRecord", "ENUMERATIONS"]

#: ``enumeration`` option values: ``listed`` (the answers listed in advance, ``ub bank list --logprob``), ``tree``
#: (every problem, by enumerating the reply tree: ``ub_core.logprob.reply_tree``), ``auto`` (listed where the answers
#: can be listed, the tree elsewhere: every problem).
ENUMERATIONS = ("listed", "tree", "auto")



class CandidateLogprobs(StoreModel):
    """What :func:`candidate_logprobs` read for one sample (stored as ``CandidateLogprobs:<field>``)."""

    context: str = ""  # raw or chat; empty until the solver ran
    delimiter: str = ""
    end: str = ""  # the text that ended each candidate (the model's end-of-sequence text by default)
    logprobs: list[float | None] = Field(default_factory=list)  # per candidate; None = probability 0
    boundary_merged: int = 0


class ReplyTreeRecord(StoreModel):
    """What the tree route read for one sample (stored as ``ReplyTreeRecord:<field>``): the context, the text that
    ends a reply, and the fields of the :class:`ub_core.logprob.reply_tree.ReplyTree` (its finished replies with their
    probabilities, the missing mass and the cost)."""

    context: str = ""  # raw or chat; empty until the solver ran
    end: str = ""
    tree: dict[str, Any] = Field(default_factory=dict)


def record_to_sample(problem: Problem, route: str = "listed") -> Sample:
    """One problem -> one Sample: the KS@N prompt as input; for the listed route its candidates in
    ``metadata["ub"]``, for the tree route (``route="tree"``) only the prompt there."""
    if route == "tree":
        return Sample(id=problem.id, input=problem.full_prompt, metadata={
            "category": problem.category, "family": problem.family, "kind": "tree", "uid": problem.uid or "",
            "n_candidates": 0, "ub": {"id": problem.id, "route": "tree", "prompt": problem.full_prompt,
                                      "support": problem.support}})
    rec = candidate_record(problem)
    return Sample(id=problem.id, input=rec["prompt"], metadata={
        "category": problem.category, "family": problem.family, "kind": rec["kind"], "uid": problem.uid or "",
        "n_candidates": len(rec["candidates"]), "ub": rec})


def _chat_tokenizer(chat_template: str | None):
    """The tokenizer whose chat template renders the prompt: ``model`` = the evaluated model's own (its name is
    a local folder or a cached hub id), any other value names one."""
    if chat_template is None:
        return None
    name = chat_template
    if chat_template == "model":
        try:
            name = get_model().name
        except Exception as exc:  # noqa: BLE001 - one line for the user
            raise OptionError(f"option chat_template=model: no active model ({exc})") from None
    try:
        return load_chat_tokenizer(name)
    except ValueError as exc:
        raise OptionError(str(exc)) from None


def _reply_end(end_of_answer: str, chat_tok: Any) -> str:
    """The text that ends a reply after a candidate (:func:`ub_core.logprob.ksn_logprob.end_texts`): for ``eos`` the
    end-of-sequence text of the chat tokenizer, else of the evaluated model's own tokenizer (its name is a local
    folder or a cached hub id), else of the tokenizer its server says it serves (a model served under an alias:
    :func:`ub_core.logprob.eos.served_eos_text`), :data:`OFFLINE_EOS` for ``ub/oracle`` and ``ub/collapse``; one
    line naming ``-T end_of_answer=<text>`` when none of them gives it."""
    if end_of_answer != "eos":
        return end_texts(end_of_answer)[0]
    model = get_model()
    if isinstance(model.api, UBModelAPI):
        return OFFLINE_EOS
    try:
        return eos_text(chat_tok, None if chat_tok is not None else model.name)
    except ValueError as exc:
        error = str(exc)
    base_url = getattr(model.api, "base_url", None)
    if chat_tok is None and base_url:  # a served alias: ask the server what it serves
        try:
            served = getattr(model.api, "service_model_name", None)  # openai-api/<service>/<name>: the name sent
            return served_eos_text(str(base_url), served() if callable(served) else model.name,
                                   getattr(model.api, "api_key", None))
        except ValueError as exc:
            error = f"{error}; {str(exc).removeprefix('end_of_answer=eos: ')}"
    raise OptionError(f"option {error}; give -T end_of_answer=<the text that ends a reply> (e.g. </s>) or "
                      f"-T end_of_answer=none (score reply prefixes)")


#: the last ``_tokenizer_and_end`` result, so that the preflight's and the solver's reads of one run are one
#: (a tokenizer load, or the server's /v1/models and /tokenizer_info): key -> (chat tokenizer, end text)
_LAST_END: dict[tuple, tuple[Any, str]] = {}


def _tokenizer_and_end(chat_template: str | None, end_of_answer: str) -> tuple[Any, str]:
    """``(chat tokenizer or None, the text that ends a reply)`` for the active model (:func:`_chat_tokenizer`,
    :func:`_reply_end`), read once per model, server and options; a failure is raised, never kept."""
    model = get_model()
    key = (model.name, str(getattr(model.api, "base_url", None)), type(model.api).__name__, chat_template,
           end_of_answer)
    if key not in _LAST_END:
        tok = _chat_tokenizer(chat_template)
        end = _reply_end(end_of_answer, tok)
        _LAST_END.clear()
        _LAST_END[key] = (tok, end)
    return _LAST_END[key]


def _preflight(chat_template: str | None, end_of_answer: str, enumeration: str, routes: dict[str, str]) -> None:
    """Before the run, where the evaluated model is known (``inspect eval --model M`` builds the task with M
    active): the text that ends a reply, and for a served model what log-probabilities its server reports, so that
    a run that could score nothing is refused with one line and a non-zero exit instead of failing in its first
    sample (Inspect then exits 0). Without an active model (the Python API builds the task first), the solver
    checks the same things."""
    if not built_inside_eval():  # a task object built before eval(task, model=...): the solver checks
        return
    try:
        model = get_model()
    except Exception:  # noqa: BLE001 - no active model: the solver checks
        return
    if isinstance(model.api, UBModelAPI):
        return
    _tokenizer_and_end(chat_template, end_of_answer)
    base_url = getattr(model.api, "base_url", None)
    if not base_url or not type(model.api).__name__.lower().endswith("completionsapi"):
        return
    served = getattr(model.api, "service_model_name", None)
    try:
        has = served_logprobs(str(base_url), served() if callable(served) else model.name,
                              getattr(model.api, "api_key", None))
    except ValueError as exc:
        raise OptionError(f"ksn_logprob: the server answers no completions request ({exc})") from None
    n_tree = sum(r == "tree" for r in routes.values())
    n_listed = len(routes) - n_tree
    if not has["prompt_logprobs"] and not has["top_logprobs"]:
        raise OptionError("ksn_logprob: the server reports neither prompt_logprobs nor top_logprobs; sampling-free "
                          "scoring reads one of them (vLLM's completions server reports both)")
    if n_tree and not has["top_logprobs"]:
        raise OptionError(f"ksn_logprob: {n_tree} of the {len(routes)} problems need the reply tree, which reads "
                          f"top_logprobs, and the server reports none; -T enumeration=listed scores the problems "
                          f"whose answers can be listed (from prompt_logprobs)")
    if n_listed and not has["prompt_logprobs"] and enumeration == "listed":
        raise OptionError("ksn_logprob: the listed route reads prompt_logprobs and the server reports none; "
                          "-T enumeration=auto or tree reads the reply tree from top_logprobs instead")


@solver(name=registry_name("candidate_logprobs"))
def candidate_logprobs(chat_template: str | None = None, delimiter: str | None = None,
                       end_of_answer: str = "eos", top_k: int = TREE_TOP_K, tree: dict[str, Any] | None = None
                       ) -> Solver:
    """Read each candidate's log-probability after the prompt (raw, or rendered through ``chat_template``),
    followed by the end of the reply (``end_of_answer``: see :func:`_reply_end`), and keep them in the store
    (:class:`CandidateLogprobs`; a log-probability ``None`` is probability 0). A tree-route sample instead
    enumerates the reply tree (:func:`ub_core.logprob.reply_tree.enumerate_problem_tree`, one ``top_k``
    next-token request per node, until the bounds are tight or the budget is spent) into :class:`ReplyTreeRecord`;
    ``tree`` holds that route's options: ``bank`` and ``version`` (where the sample's problem is), ``cells``,
    ``target_ks_width``, ``target_p_pass_width``, ``max_missing``, ``max_requests``, and ``score`` (the scorer's
    options, so the stop judges the bounds the scorer will report)."""
    state_cache: dict[str, Any] = {}
    tree_opts = dict(tree or {})

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if "tokenizer" not in state_cache:  # the active model is known only inside the solver
            state_cache["tokenizer"], state_cache["end"] = _tokenizer_and_end(chat_template, end_of_answer)
        tok, end = state_cache["tokenizer"], state_cache["end"]
        rec = state.metadata["ub"]
        context = rec["prompt"] if tok is None else render_chat(tok, rec["prompt"])
        if rec.get("route") == "tree":
            await _tree_into_store(state, context, tok, end, top_k, tree_opts)
            return state
        delim = delimiter if delimiter is not None else (RAW_DELIMITER if tok is None else CHAT_DELIMITER)
        texts = candidate_continuations(rec["candidates"], delim, (end,))
        if state_cache.get("no_prompt_logprobs") and tree_opts.get("complete_listed"):
            await _tree_into_store(state, context, tok, end, top_k, tree_opts)  # learnt once per run (below)
            return state
        try:
            values, merged = await continuation_logprobs(context, texts, end=end)
        except LogprobsUnavailableError as exc:
            if "returned no prompt_logprobs" not in str(exc):
                raise
            if not tree_opts.get("complete_listed"):  # advice in this task's own options
                raise LogprobsUnavailableError(
                    f"{str(exc).split(':')[0]}: the listed route needs a provider that reports them "
                    f"(vllm-completions/, openai-api-completions/ against vLLM); -T enumeration=auto or tree reads "
                    f"the reply tree from top_logprobs instead") from None
            # enumeration=auto on a server without prompt_logprobs: every listed problem of
            # this run takes the reply tree, which needs top_logprobs only
            state_cache["no_prompt_logprobs"] = True
            log.warning("ksn_logprob: the model reports no prompt_logprobs; enumeration=auto reads every problem "
                        "through its reply tree (top_logprobs)")
            await _tree_into_store(state, context, tok, end, top_k, tree_opts)
            return state
        record = state.store_as(CandidateLogprobs)
        record.context, record.delimiter, record.end = "chat" if tok is not None else "raw", delim, end
        record.logprobs = [None if v == -math.inf else float(v) for v in values]
        record.boundary_merged = merged
        if tree_opts.get("complete_listed") and _listed_too_wide(state.sample_id, record.logprobs, tree_opts):
            # enumeration=auto: the list misses mass the bounds cannot place (valid answers written otherwise, or
            # invalid replies); the reply tree reads what the list cannot
            try:
                await _tree_into_store(state, context, tok, end, top_k, tree_opts)
            except LogprobsUnavailableError as exc:
                log.warning(f"ksn_logprob: {state.sample_id}: the listed route's bounds are wide and the reply tree "
                            f"cannot complete them ({exc}); scored by the list, bounds as stated")
        return state

    return solve


#: Below this unlisted mass the listed route's bounds are never completed by the tree (the offline models' cut
#: mass, 1e-6, stays on the list): the cheap test before the bounds are computed.
LISTED_UNLISTED_FLOOR = 1e-3


def _listed_too_wide(sample_id: Any, logprobs: Sequence[float | None], tree_opts: dict[str, Any]) -> bool:
    """Whether the listed route's ``p_pass`` bounds at the largest N are wider than the tree route's target
    (:func:`ub_core.logprob.ksn_logprob.score_candidate_logprobs`: the unlisted mass is of unknown place)."""
    listed = math.fsum(math.exp(v) for v in logprobs if v is not None and v <= 0)
    if 1.0 - listed <= LISTED_UNLISTED_FLOOR:
        return False
    problem = lookup_problem(sample_id, tree_opts.get("bank", "ksn"), tree_opts.get("version"))
    opts = dict(tree_opts.get("score", {}))
    n = max(opts.get("ns", DEFAULT_NS))
    scores, payload = score_candidate_logprobs(problem, logprobs, **{**opts, "ns": (n,)})
    if scores.get("bad_logprobs"):
        return False  # malformed log-probabilities are the model's failure, counted as such, never papered over
    lo, hi = payload.get(per_n_key("p_pass_bounds", n), (0.0, 1.0))
    return hi - lo > tree_opts.get("target_p_pass_width", TARGET_P_PASS_WIDTH)


async def _tree_into_store(state: TaskState, context: str, tok: Any, end: str, top_k: int,
                           tree_opts: dict[str, Any]) -> None:
    """Enumerate the sample's reply tree (:func:`ub_core.logprob.reply_tree.enumerate_problem_tree`) into
    :class:`ReplyTreeRecord`."""
    problem = lookup_problem(state.sample_id, tree_opts.get("bank", "ksn"), tree_opts.get("version"))
    found = await enumerate_problem_tree(
        problem, lambda prefix: _next_tokens(context + prefix, top_k), ends=(end,),
        sample=lambda k: _sample_replies(context, k), probe=tree_opts.get("probe", PROBE_REPLIES),
        cells=tree_opts.get("cells", True), max_missing=tree_opts.get("max_missing"),
        max_requests=tree_opts.get("max_requests", MAX_REQUESTS), max_tokens=MAX_TOKENS, top_k=top_k,
        target_ks_width=tree_opts.get("target_ks_width", TARGET_KS_WIDTH),
        target_p_pass_width=tree_opts.get("target_p_pass_width", TARGET_P_PASS_WIDTH),
        **tree_opts.get("score", {}))
    store = state.store_as(ReplyTreeRecord)
    store.context, store.end = "chat" if tok is not None else "raw", end
    store.tree = dataclasses.asdict(found)


async def _sample_replies(context: str, k: int) -> list[str] | str:
    """``k`` replies sampled from the model after ``context`` at temperature 1 (the sampled KS@N run's): the reply
    tree's grammar probe (:func:`ub_core.logprob.reply_tree.grammar_escape`). A reply the server sends malformed
    makes the probe a one-line reason (then not drawn: the cells' escape counts as unbounded)."""
    config = GenerateConfig(max_tokens=MAX_TOKENS, temperature=LOGPROB_TEMPERATURE, num_choices=int(k))
    try:  # one request for the k replies (a server's n), one model event in the transcript
        out = await get_model().generate(context, config=config)
        return [str(c.message.text or "") for c in out.choices]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a malformed body (pydantic's errors too)
        return f"grammar probe: a sampled reply could not be read ({type(exc).__name__})"


async def _next_tokens(text: str, top_k: int) -> list[tuple[str, float]] | str:
    """The model's top-``top_k`` next tokens after ``text`` (one generated token, temperature 1: the model's own
    distribution), as ``(text, log-probability)`` pairs, unchecked (``ub_core.logprob.reply_tree`` names bad values).
    ``top_k`` goes to the server as it is (Inspect's completions providers send it as ``logprobs``, no cap at 20);
    a server that allows fewer (vLLM's ``--max-logprobs``, default 20) stops the run with one line."""
    try:
        out = await get_model().generate(text, config=GenerateConfig(logprobs=True, top_logprobs=top_k, max_tokens=1,
                                                                     temperature=LOGPROB_TEMPERATURE))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a malformed body (pydantic's errors too)
        if "greater than max allowed" not in str(exc):
            return f"the server's next-token list could not be read ({type(exc).__name__}: " \
                   f"{str(exc).splitlines()[0][:160] if str(exc) else 'no message'})"
        raise LogprobsUnavailableError(f"-T top_k={top_k}: the server returns fewer top log-probabilities "
                                       f"({_max_allowed(str(exc))}); serve with vllm serve --max-logprobs {top_k} "
                                       f"(Inspect's vllm providers: -M max_logprobs={top_k}) or lower -T top_k"
                                       ) from None
    except Exception as exc:  # noqa: BLE001 - only a server's top-k limit gets its own line
        if "greater than max allowed" not in str(exc):
            raise
        raise LogprobsUnavailableError(f"-T top_k={top_k}: the server returns fewer top log-probabilities "
                                       f"({_max_allowed(str(exc))}); serve with vllm serve --max-logprobs {top_k} "
                                       f"(Inspect's vllm providers: -M max_logprobs={top_k}) or lower -T top_k"
                                       ) from None
    lp = out.choices[0].logprobs if out.choices else None
    first = lp.content[0] if lp is not None and lp.content else None
    if first is None or not first.top_logprobs:
        raise LogprobsUnavailableError("the reply tree needs top_logprobs and the model returned none; use a "
                                       "provider that reports them (vllm-completions/, openai-api-completions/ "
                                       "against vLLM), or -T enumeration=listed with one that reports "
                                       "prompt_logprobs")
    return [(_token_text(t.token), t.logprob) for t in first.top_logprobs]


def _max_allowed(message: str) -> str:
    """The limit a vLLM server states (``... which is greater than max allowed: 20``), else a short reason."""
    hit = re.search(r"greater than max allowed:? *(\d+)", message)
    return f"at most {hit.group(1)}" if hit else "its --max-logprobs limit"


@scorer(metrics=spec_metrics("ksn_logprob"), name=registry_name("ksn_logprob_scorer"))
def ksn_logprob_scorer(ks_ns: Sequence[int] = DEFAULT_NS, threshold: float = 1e-4, method: str = "paper",
                       gt_size: int = 10_000, gt_seed: int = 0, draws: int = 2000, seed: int = 0,
                       version: str | None = None, n_samples: int = 100, max_attempts: int = 5,
                       bank: str = "ksn") -> Scorer:
    """The answer-distribution metrics of :func:`ub_core.logprob.ksn_logprob.score_candidate_logprobs`, for the sample's
    problem in the registered KS@N ``bank`` (at ``version``); ``p_pass@N`` predicts a sampled run of ``n_samples`` slots
    with ``max_attempts`` attempts each."""

    async def score(state: TaskState, target: Target) -> Score:
        problem = lookup_problem(state.sample_id, bank, version)
        if state.metadata["ub"].get("route") == "tree" or state.store_as(ReplyTreeRecord).context:
            # a tree-route sample, or a listed one whose bounds the tree completed (enumeration=auto)
            scored = _tree_score(problem, state.store_as(ReplyTreeRecord), dict(
                ns=ks_ns, threshold=threshold, method=method, truth_size=gt_size, truth_seed=gt_seed, draws=draws,
                seed=seed, slots=n_samples, max_attempts=max_attempts))
            if state.metadata["ub"].get("route") != "tree":
                scored.metadata["ub"]["route"] = "listed, completed by the tree"
                scored.metadata["ub"]["listed_logprobs"] = list(state.store_as(CandidateLogprobs).logprobs)
            return scored
        record = state.store_as(CandidateLogprobs)
        if not record.context:
            raise LogprobsUnavailableError(f"{problem.id}: no candidate log-probabilities in the store; run the "
                                           f"candidate_logprobs solver before this scorer")
        scores, payload = score_candidate_logprobs(problem, record.logprobs, ns=ks_ns, threshold=threshold,
                                                   method=method, truth_size=gt_size, truth_seed=gt_seed,
                                                   draws=draws, seed=seed, slots=n_samples,
                                                   max_attempts=max_attempts)
        q = payload["q"]
        rec = state.metadata["ub"]
        answer = rec["candidates"][max(range(len(q)), key=q.__getitem__)] if q else ""
        return Score(value=scores, answer=answer,
                     explanation=(f"valid mass {scores['valid_mass']:.3g} (unlisted {scores['missing_mass']:.3g}); KS "
                                  f"distance {scores['ks_distance']:.3g}; P(KS@{max(ks_ns)} passes) "
                                  f"{scores[per_n_key('p_pass', max(ks_ns))]:.3g} in "
                                  f"[{_bound(payload, max(ks_ns), 0):.3g}, {_bound(payload, max(ks_ns), 1):.3g}]"),
                     metadata={"ub": {**payload, "p": rec["p"], "values": rec["values"],
                                      "candidates": rec["candidates"], "logprobs": list(record.logprobs),
                                      "context": record.context, "delimiter": record.delimiter,
                                      "end": record.end,
                                      "boundary_merged": int(record.boundary_merged)}})

    return score


def _bound(payload: dict[str, Any], n: int, end: int) -> float:
    bounds = payload.get(per_n_key("p_pass_bounds", n))
    return float(bounds[end]) if bounds else math.nan


def _tree_score(problem: Problem, record: ReplyTreeRecord, options: dict) -> Score:
    """The tree route's score (:func:`ub_core.logprob.reply_tree.score_reply_tree`); the bounds ride in the metadata."""
    if not record.context:
        raise LogprobsUnavailableError(f"{problem.id}: no reply tree in the store; run the candidate_logprobs "
                                       f"solver before this scorer")
    tree = ReplyTree(**record.tree)
    scores, payload = score_reply_tree(problem, tree, **options)
    if tree.bad:
        log.warning(f"ksn_logprob: {problem.id}: malformed log-probabilities ({tree.bad}); counted in bad_logprobs")
    top = max(tree.leaves, key=tree.leaves.__getitem__) if tree.leaves else ""
    n = max(options["ns"])
    bounds = payload.get(per_n_key("p_pass_bounds", n), [math.nan, math.nan])
    probe = payload.get("grammar_probe") or {}
    point = payload.get(per_n_key("p_pass_unresolved", n), scores[per_n_key("p_pass", n)])
    return Score(value=scores, answer=top,
                 explanation=(f"enumerated {1 - tree.missing_mass:.3g} of the reply mass ({len(tree.leaves)} replies, "
                              f"{len(tree.cells)} numeric cells holding {sum(tree.cells.values()):.3g}) in "
                              f"{tree.requests} requests ({tree.stopped}); valid mass {scores['valid_mass']:.3g}; "
                              f"KS distance "
                              f"{scores['ks_distance']:.3g}; P(KS@{n} passes) {point:.3g} "
                              f"in [{bounds[0]:.3g}, {bounds[1]:.3g}]"
                              + (f"; grammar probe: {probe['escapes']} of {probe['probe']} sampled replies left a "
                                 f"cell, escape bound {probe['escape_bound']:.3g} at {probe['confidence']:.0%}"
                                 if probe.get("probe") or tree.cells else "")
                              + ("; unresolved: bounds wider than the target, left out of the means"
                                 if scores.get("unresolved") else "")
                              + (f"; malformed: {tree.bad}" if tree.bad else "")),
                 metadata={"ub": {**payload, "route": "tree", "context": record.context, "end": record.end,
                                  "leaves": dict(sorted(tree.leaves.items(), key=lambda kv: -kv[1])[:200]),
                                  "cell_texts": dict(sorted(tree.cells.items(), key=lambda kv: -kv[1])[:200]),
                                  "missing_mass": tree.missing_mass}})


@task(name=registry_name("ksn_logprob"))
@registry_task("ksn_logprob")
def ksn_logprob(o: TaskOptions) -> Task:
    bank, enumeration, end_of_answer, chat_template = o.bank, o.enumeration, o.end_of_answer, o.chat_template
    ns = list(o.ks_ns)
    if enumeration != "listed" and end_of_answer == "none":
        raise OptionError("option end_of_answer=none: the tree route needs the text that ends a reply")
    problems = list(load_problems(categories=o.categories, bank=bank))
    left_out: list[str] = []
    if enumeration == "listed":
        listed = [p for p, _ in enumerable_problems(problems)]
        if o.ids is None:  # nothing leaves silently: the problems the listed route cannot score are named
            left_out = sorted({p.id for p in problems} - {p.id for p in listed})
        problems = listed
    problems = select_ids(first_per_category(problems, o.limit_per_category), o.ids)
    if left_out:
        log.warning(f"ksn_logprob: {len(problems)} problems of bank {bank} scored, {len(left_out)} left out: "
                    f"their answers cannot be listed ({', '.join(left_out[:5])}"
                    f"{', ...' if len(left_out) > 5 else ''}); -T enumeration=auto scores them through the "
                    f"reply tree")
    routes = {p.id: "listed" if enumeration == "auto" and candidate_set(p) is not None else
              ("listed" if enumeration == "listed" else "tree") for p in problems}
    _preflight(chat_template, end_of_answer, enumeration, routes)
    threshold, method, gt_size, seed, draws = o.threshold, o.method, o.gt_size, o.seed, o.draws
    n_samples, max_attempts = o.n_samples, o.max_attempts
    return package_task(
        dataset=MemoryDataset([record_to_sample(p, routes[p.id]) for p in problems],
                              name="unpredictabench-ksn-logprob"),
        solver=candidate_logprobs(chat_template,
                                  o.delimiter, end_of_answer, o.top_k,
                                  tree=dict(bank=bank, version=bank_version(bank), cells=o.cells,
                                            max_missing=o.max_missing, max_requests=o.max_requests,
                                            target_ks_width=o.target_ks_width,
                                            target_p_pass_width=o.target_p_pass_width,
                                            complete_listed=enumeration == "auto",
                                            score=dict(ns=ns, threshold=threshold, method=method,
                                                       truth_size=gt_size, truth_seed=seed, draws=draws, seed=seed,
                                                       slots=n_samples, max_attempts=max_attempts))),
        scorer=ksn_logprob_scorer(ks_ns=ns, threshold=threshold, method=method, gt_size=gt_size, gt_seed=seed,
                                  draws=draws, seed=seed, version=bank_version(bank), n_samples=n_samples,
                                  max_attempts=max_attempts, bank=bank),
        metadata={"bank": bank, "route": "logprob", "enumeration": enumeration, "chat_template": chat_template,
                  "left_out": {"problems": left_out, "why": "answers cannot be listed (enumeration=listed)"}},
        version=bank_version(bank),
    )
