""""What are the odds" (the odds paper) as an Inspect task: ``inspect eval ub_inspect/odds -T task=percentile``.

Three tasks on 12 idealised families (and, for percentiles, real-world framings): estimate a percentile, estimate
the probability of an interval, or draw 1,000 samples. Percentile and probability items get one reply each,
scored by absolute error (percentage points) against the exact answer and against the nearest-shot baseline;
sampling items collect 1,000 values with ``ub_inspect.ksn.solver.collect_values`` and are scored by the KS statistic
and KS@N. The science is ``ub_core.problems.odds`` and ``ub_core.metrics.odds``; see README.md beside this file.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Solver, TaskState, generate

from ub_core.metrics import ODDS_KS_NS, odds_item_scores
from ub_core.problems import Problem, bank_version
from ub_core.problems.odds import CONTEXTS, CONVENTIONS, DISTRIBUTIONS, SHOT_COUNTS, SHOT_TYPES, TASKS, odds_items

from ub_inspect._naming import package_task, registry_name
from ub_inspect._problems import lookup_problem
from ub_inspect._options import (OptionError, TaskOptions, choice, positive_int, registry_task, str_list)
from ub_inspect.metrics import distribution_se, spec_metrics
from ub_inspect.ksn.solver import CollectedValues, collect_values

__all__ = ["odds", "record_to_sample", "odds_scorer", "load_items"]

# Metadata every Score and Sample carries (what dashboards group by).
GROUP_KEYS = ("family", "task", "shots", "shot_type", "context", "distribution")


def record_to_sample(item: Problem, list_size: int = 1) -> Sample:
    """One odds item -> one Sample. Sampling items may use list prompting (``list_size`` values per reply)."""
    m = item.metadata
    if m["task"] == "sampling" and list_size > 1:
        prompt = item.list_prompt(list_size)
    else:
        prompt = item.full_prompt
    meta = {key: m[key] for key in GROUP_KEYS}
    meta.update(parameterisation=m["parameterisation"], list_size=list_size if m["task"] == "sampling" else 1,
                odds_convention=m.get("odds_convention", "paper"))
    target = "" if m["task"] == "sampling" else repr(float(m["answer"]))
    return Sample(id=item.id, input=prompt, target=target, metadata=meta)


# ------------------------------------------------------------------------------------------------ metrics



# ub_core.metric_spec: the headline grouped by family, then the means; and the paper's ± across distributions
QUESTION_METRICS = spec_metrics("odds_question", run_metrics=(distribution_se("abs_error"),))
SAMPLING_METRICS = spec_metrics("odds_sampling", run_metrics=(distribution_se("ks_stat"),))


def _score(item: Problem, row: Mapping[str, float], answer: str, explanation: str, extra: dict) -> Score:
    m = item.metadata
    meta = {key: m[key] for key in GROUP_KEYS}
    meta.update(item_id=item.id, parameterisation=m["parameterisation"], **extra)
    return Score(value=dict(row), answer=answer, explanation=explanation, metadata=meta)


@scorer(metrics=QUESTION_METRICS, name=registry_name("odds_question_scorer"))
def odds_question_scorer(version: str | None = None) -> Scorer:
    """Absolute error (percentage points) of a percentile or probability reply, and of the nearest-shot
    baseline; parse failures are counted (``parse_failed``) and left out of the MAE. The item is the sample's, in
    the odds bank ``version``."""

    async def score(state: TaskState, target: Target) -> Score:
        item = lookup_problem(state.sample_id, "odds", version)
        text = state.output.completion if state.output else ""
        row = odds_item_scores(item, text)
        m = item.metadata
        explanation = (f"exact {m['answer']:.4g}; " + ("unparseable reply" if row["parse_failed"]
                                                       else f"error {row['abs_error']:.3g} points"))
        return _score(item, row, text[:200], explanation,
                      {"exact": float(m["answer"]), "baseline_answer": m.get("baseline_answer")})

    return score


@scorer(metrics=SAMPLING_METRICS, name=registry_name("odds_sampling_scorer"))
def odds_sampling_scorer(ks_ns: Sequence[int] = ODDS_KS_NS, gt_size: int = 10_000, gt_seed: int = 0,
                         version: str | None = None) -> Scorer:
    """KS statistic of all collected values against the ground truth, KS@N, and the counts of valid and failed
    replies (from the solver's record). The item is the sample's, in the odds bank ``version``."""

    async def score(state: TaskState, target: Target) -> Score:
        item = lookup_problem(state.sample_id, "odds", version)
        record = state.store_as(CollectedValues)
        values = list(record.values)
        row = odds_item_scores(item, values, ns=ks_ns, truth_size=gt_size, truth_seed=gt_seed)
        row["n_failed"] = float(len(record.failures))
        ks = row["ks_stat"]
        explanation = f"{len(values)} valid values; KS statistic " + ("n/a" if math.isnan(ks) else f"{ks:.3f}")
        return _score(item, row, ", ".join(f"{v:g}" for v in values[:10]), explanation,
                      {"values": values, "failures": list(record.failures)[:50],
                       "attempts": record.attempts, "gt_size": gt_size, "gt_seed": gt_seed})

    return score


def odds_scorer(task_name: str, version: str | None = None, **kw) -> Scorer:
    """The scorer of an odds task: sampling items by KS, question items by absolute error."""
    return (odds_sampling_scorer(version=version, **kw) if task_name == "sampling"
            else odds_question_scorer(version=version))


# ------------------------------------------------------------------------------------------------ options

def _shot_counts(value: Any) -> tuple[int, ...] | None:
    if value is None or value == "":
        return None
    items = value if isinstance(value, (list, tuple)) else str(value).replace(" ", "").strip("[]()").split(",")
    out = []
    for x in items:
        try:
            k = int(str(x).strip())
        except ValueError:
            raise ValueError(f"option shots: expected integers among {SHOT_COUNTS}, got {x!r}") from None
        if k not in SHOT_COUNTS:
            raise ValueError(f"option shots: each value must be one of {SHOT_COUNTS}, got {k}")
        out.append(k)
    return tuple(out)


def _names(value: Any, name: str, allowed: tuple[str, ...]) -> tuple[str, ...] | None:
    names = str_list(value, name)
    if names is None or names == ("all",):
        return None
    for n in names:
        choice(n, name, allowed)
    return names


def load_items(task_name: str = "percentile", shots: str | int | list[int] | None = None, shot_type: str | None = None,
               context: str | list[str] = "none", families: str | list[str] | None = None, limit: int | None = None,
               edition: str = "subset", convention: str = "paper") -> list[Problem]:
    """The items a task run asks (one line errors for unknown names, or when nothing matches)."""
    task_name = choice(task_name, "task", TASKS)
    stype = None if shot_type in (None, "", "all", "both") else choice(shot_type, "shot_type", SHOT_TYPES)
    items = odds_items(choice(edition, "edition", ("subset", "full")), task=task_name, shots=_shot_counts(shots),
                       shot_type=stype, contexts=_names(context, "context", CONTEXTS),
                       families=_names(families, "families", DISTRIBUTIONS),
                       convention=choice(str(convention), "convention", CONVENTIONS))
    if limit is not None:
        items = items[: positive_int(limit, "limit")]
    if not items:
        raise ValueError(f"odds: no items for task={task_name} shots={shots} shot_type={shot_type} "
                         f"context={context} families={families} (real-world contexts have percentile items only)")
    return items


@task(name=registry_name("odds"))
@registry_task("odds")
def odds(o: TaskOptions) -> Task:
    task_name, k = o.task, o.list_size
    if task_name != "sampling" and k != 1:
        raise OptionError(f"option list_size: applies to task=sampling only; {task_name} items take "
                          f"list_size=1, got {k}")
    tokens = o.max_tokens if o.max_tokens is not None else (64 if k == 1 else 24 * k)
    items = load_items(task_name, o.shots, o.shot_type, o.context, o.families, o.limit, o.edition, o.convention)
    version = bank_version("odds")
    if task_name == "sampling":
        n = o.n_samples
        if k > n:
            raise OptionError(f"option list_size: must be at most n_samples ({n}), got {k}")
        too_big = [x for x in o.ks_ns if x > n]
        if too_big:  # KS@N needs N values: it would read 0 for every model, the oracle included
            raise OptionError(f"option ks_ns: each N must be at most n_samples ({n}), got {too_big[0]}")
        solver: Solver = collect_values(n_samples=n, list_size=k, max_attempts=o.max_attempts,
                                        temperature=o.temperature, max_tokens=tokens, bank="odds", version=version)
        score = odds_scorer(task_name, version, ks_ns=list(o.ks_ns), gt_size=o.gt_size, gt_seed=o.seed)
    else:
        solver = generate()
        score = odds_scorer(task_name, version)
    return package_task(
        dataset=MemoryDataset([record_to_sample(p, k) for p in items], name=f"odds-{task_name}"),
        solver=solver,
        scorer=score,
        config=GenerateConfig(temperature=o.temperature, max_tokens=tokens),
        metadata={"bank": "odds", "task": task_name, "edition": o.edition, "convention": o.convention,
                  "n_items": len(items)},
        version=version,
    )
