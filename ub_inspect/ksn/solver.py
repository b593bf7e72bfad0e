"""The sampling solver: many independent answers per problem, with top-ups and the retry protocol of UnpredictaBench.

Protocol (UnpredictaBench, sec. 4.1 and appendix K):

- One request asks for all the samples a problem still needs (``num_choices``). Providers that return fewer
  choices than asked (``hf/`` returns one) are topped up with further requests.
- Single-value prompting: ``n_samples`` *slots*. Each returned choice is an attempt for an open slot; a valid
  answer fills it, an unparseable or out-of-support one is retried, up to ``max_attempts`` attempts per slot,
  after which the slot is skipped. Every attempt is counted.
- List prompting (``list_size`` k > 1) and values read from reasoning tokens: replies are merged until
  ``n_samples`` values are collected (the first ``n_samples`` are kept). A reply with no valid value is a failed
  attempt; the run stops after ``max_attempts`` x the initial number of calls failed attempts.
- When the model's config carries a seed, request r of a problem uses ``seed + r``, so top-ups are not copies
  of the first request (vLLM repeats a seeded request exactly).

The per-sample record is the typed store model :class:`CollectedValues` (values, raw outputs, failures, attempt
counts; ``state.store_as(CollectedValues)``, or ``sample.store_as(CollectedValues)`` on a log's sample); the
scorer copies it into the Score metadata, so a log alone can be rescored.
"""

from __future__ import annotations

import math
from typing import Any

from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel
from pydantic import Field

from ub_core.parsing import find_numbers

from .._problems import lookup_problem
from .._store import write_record

__all__ = ["collect_values", "reply_text", "CollectedValues"]


class CollectedValues(StoreModel):
    """What :func:`collect_values` gathered for one sample (Inspect stores each field as ``CollectedValues:<name>``)."""

    values: list[Any] = Field(default_factory=list)  # parsed values (floats; lists for odds list prompting)
    outputs: list[str] = Field(default_factory=list)  # every reply's text, in order
    failures: list[str] = Field(default_factory=list)  # why each unusable reply was refused
    attempts: int = 0  # generations used (UnpredictaBench appendix K)
    requests: int = 0  # model calls
    slots: int = 0  # answer slots (single-value prompting) or calls planned (list prompting)
    retried_slots: int = 0
    skipped_slots: int = 0  # slots given up after max_attempts


def reply_text(choice: Any, value_source: str = "final") -> str:
    """The text of one choice: its final answer, or (``reasoning``) its reasoning tokens."""
    message = choice.message
    if value_source == "final":
        return message.text or ""
    content = message.content
    if isinstance(content, str):
        return ""
    return "\n".join(getattr(part, "reasoning", "") or "" for part in content
                     if getattr(part, "type", None) == "reasoning")


@solver
def collect_values(n_samples: int = 100, list_size: int = 1, max_attempts: int = 5, value_source: str = "final",
                   temperature: float = 1.0, max_tokens: int | None = 64, bank: str = "ksn",
                   version: str | None = None, dataset: str = "builtin", ground_truth: str | None = None,
                   split: str = "train") -> Solver:
    """Ask for ``n_samples`` answers per problem and keep the parsed values (see the module docstring). The
    problem is the sample's, found by :func:`ub_inspect._problems.lookup_problem` from ``bank``, ``version``,
    ``dataset``, ``ground_truth`` and ``split``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        problem = lookup_problem(state.sample_id, bank, version, dataset, ground_truth, split)
        k = int(state.metadata.get("list_size", list_size))
        model = get_model()
        base_seed = model.config.seed
        record = {"values": [], "outputs": [], "failures": [], "attempts": 0, "requests": 0,
                  "slots": 0, "retried_slots": 0, "skipped_slots": 0}
        request_no = 0

        async def ask(num: int) -> list:
            nonlocal request_no
            cfg = GenerateConfig(num_choices=num, temperature=temperature, max_tokens=max_tokens,
                                 seed=None if base_seed is None else base_seed + request_no)
            request_no += 1
            record["requests"] += 1
            out = await model.generate(state.messages, config=cfg)
            if out.error:
                record["failures"].append(f"provider error: {out.error}"[:300])
            return list(out.choices)

        if k == 1 and value_source == "final":
            pending = [0] * n_samples  # attempts used by each open slot
            record["slots"] = n_samples
            while pending:
                choices = (await ask(len(pending)))[: len(pending)]
                if not choices:  # nothing came back: every open slot spends an attempt
                    record["failures"].append("no choices returned")
                    record["attempts"] += len(pending)
                    choices_results = [None] * len(pending)
                else:
                    choices_results = []
                    for choice in choices:
                        text = reply_text(choice, value_source)
                        record["outputs"].append(text)
                        record["attempts"] += 1
                        res = problem.parse(text)
                        choices_results.append(res)
                still_open = []
                for i, used in enumerate(pending):
                    if i >= len(choices_results):
                        still_open.append(used)  # not attempted this round (fewer choices than asked)
                        continue
                    res = choices_results[i]
                    used += 1
                    if res is not None and res.ok:
                        record["values"].append(float(res.value))
                        record["retried_slots"] += used > 1
                    else:
                        if res is not None:
                            record["failures"].append(res.error or "unparseable")
                        if used >= max_attempts:
                            record["skipped_slots"] += 1
                            record["retried_slots"] += 1
                        else:
                            still_open.append(used)
                pending = still_open
        else:
            calls = math.ceil(n_samples / k)
            record["slots"] = calls
            budget = max_attempts * calls
            failed = 0
            while len(record["values"]) < n_samples and failed < budget:
                need = math.ceil((n_samples - len(record["values"])) / k)
                choices = await ask(need)
                if not choices:
                    record["failures"].append("no choices returned")
                    record["attempts"] += need
                    failed += need
                    continue
                for choice in choices:
                    text = reply_text(choice, value_source)
                    record["outputs"].append(text)
                    record["attempts"] += 1
                    if value_source == "reasoning":
                        numbers = find_numbers(text)
                        vals, errs = problem.check_values(numbers)
                        if not numbers:
                            errs = ["no number in the reasoning"]
                    else:
                        vals, errs = problem.parse_many(text)
                    record["values"].extend(vals)
                    record["failures"].extend(errs)
                    if not vals:
                        failed += 1
            record["values"] = record["values"][:n_samples]
        write_record(state, CollectedValues, **record)
        return state

    return solve
