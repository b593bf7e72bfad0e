""""Bad Dice Players" (Zhao, Du, Wang, ACL 2026) as an Inspect task: ``inspect eval ub_inspect/dice -T protocol=batch``.

One sample per law (15 laws, three tiers). ``protocol=batch`` sends one request for ``n`` values and reads every
number of the reply, all its blocks and none of its prose (:func:`~ub_core.parsing.parse_batch_reply`; a count other
than ``n`` is recorded, as the paper does); ``protocol=independent`` collects ``n`` one-value replies with
:func:`ub_inspect.ksn.solver.collect_values`. The values are scored by :func:`ub_core.metrics.dice.dice_scores`:
the test of the law at alpha (the headline: the pass rate), the Wasserstein-1 distance, the p-value, the count.
The science is :mod:`ub_core.metrics.dice` and :mod:`ub_core.problems.dice`; see README.md beside this file.
"""

from __future__ import annotations

import math

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from ub_core.metrics.dice import DICE_ALPHA, DICE_ORDER, dice_row
from ub_core.parsing import parse_batch_reply
from ub_core.problems import Problem, bank_version
from ub_core.problems.dice import dice_item, dice_items, protocol_prompt

from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import TaskOptions, choice, registry_task, str_list
from ub_inspect._problems import lookup_problem
from ub_inspect.ksn.solver import CollectedValues, collect_values
from ub_inspect.metrics import spec_metrics

__all__ = ["dice", "dice_scorer", "batch_values", "load_items", "record_to_sample"]

MAX_N = 100_000


def record_to_sample(item: Problem, protocol: str, n: int) -> Sample:
    """One law -> one Sample whose input is the protocol's request."""
    m = item.metadata
    return Sample(id=item.id, input=protocol_prompt(item, protocol, n), target="",
                  metadata={"law": m["law"], "tier": m["tier"], "protocol": protocol, "n": n,
                            "list_size": n if protocol == "batch" else 1})


@solver(name=registry_name("dice_batch_values"))
def batch_values(max_tokens: int | None = None) -> Solver:
    """One request; every number of the reply is a value (a reply without one is a recorded failure)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state, max_tokens=max_tokens) if max_tokens else await generate(state)
        text = state.output.completion if state.output else ""
        record = state.store_as(CollectedValues)
        parsed = parse_batch_reply(text)
        record.outputs = [text[:20_000]]
        record.attempts = record.requests = record.slots = 1
        if parsed.ok:
            record.values = [float(v) for v in parsed.value]
        else:
            record.failures = [str(parsed.reason)[:300]]
        return state

    return solve


@scorer(metrics=spec_metrics("dice"), name=registry_name("dice_scorer"))
def dice_scorer(convention: str = "default", alpha: float = DICE_ALPHA, seed: int = 0,
                version: str | None = None) -> Scorer:
    """The law's test (pass: p > alpha) and W1 of the collected values, in ``convention`` (:mod:`ub_core.metrics.dice`);
    a sample without values fails with undefined W1 and p-value."""

    async def score(state: TaskState, target: Target) -> Score:
        item = lookup_problem(state.sample_id, "dice", version)
        law = item.metadata["law"]
        n_asked = int(state.metadata.get("n", 0)) or 1
        values = [float(v) for v in state.store_as(CollectedValues).values if math.isfinite(float(v))]
        row = dice_row(law, values, n_asked, convention=convention, alpha=alpha, seed=seed)
        explanation = (f"{len(values)} values (asked {n_asked}); "
                       + (f"p = {row['p_value']:.3g}, W1 = {row['w1']:.3g}" if values else "no value read")
                       + f" ({convention} convention)")
        return Score(value=row, answer=", ".join(f"{v:g}" for v in values[:10]), explanation=explanation,
                     metadata={"law": law, "tier": item.metadata["tier"], "item_id": item.id,
                               "protocol": state.metadata.get("protocol"), "convention": convention,
                               "values": values[:MAX_N]})

    return score


def load_items(laws: str | list[str] | None = None, limit: int | None = None) -> list[Problem]:
    """The items a run asks: every law, or the comma list ``laws`` (release names, e.g. ``Gaussian,Cauchy``), the
    first ``limit`` of them."""
    names = str_list(laws, "laws")
    items = dice_items() if names in (None, ("all",)) else [dice_item(choice(n, "laws", DICE_ORDER)) for n in names]
    return items[:limit] if limit is not None else items


@task(name=registry_name("dice"))
@registry_task("dice")
def dice(o: TaskOptions) -> Task:
    tokens = o.max_tokens if o.max_tokens is not None else (24 * o.n + 64 if o.protocol == "batch" else 64)
    items = load_items(o.laws, o.limit)
    version = bank_version("dice")
    solve: Solver = (batch_values(max_tokens=tokens) if o.protocol == "batch" else
                     collect_values(n_samples=o.n, list_size=1, max_attempts=o.max_attempts,
                                    temperature=o.temperature, max_tokens=tokens, bank="dice", version=version))
    return package_task(
        dataset=MemoryDataset([record_to_sample(p, o.protocol, o.n) for p in items], name=f"dice-{o.protocol}"),
        solver=solve,
        scorer=dice_scorer(convention=o.convention, alpha=o.alpha, seed=o.seed, version=version),
        config=GenerateConfig(temperature=o.temperature, max_tokens=tokens),
        metadata={"bank": "dice", "protocol": o.protocol, "n": o.n, "convention": o.convention, "alpha": o.alpha,
                  "n_items": len(items)},
        version=version,
    )
