""""What are the odds" (the odds paper) as an Inspect task: ``inspect eval ub_inspect/odds -T task=percentile``.

Three tasks on 12 idealised families (and, for percentiles, real-world framings): estimate a percentile, estimate
the probability of an interval, or draw 1,000 samples. Percentile and probability items get one reply each,
scored by absolute error (percentage points) against the exact answer and against the nearest-shot baseline;
sampling items collect 1,000 values with ``ub_inspect.ksn.solver.collect_values`` and are scored by the KS statistic
and KS@N. The science is ``ub_core.problems.odds`` and ``ub_core.metrics.odds``; see README.md beside this file.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

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
from ub_inspect._options import (OptionError, choice, int_list, integer, positive_int, real, str_list,
                                 task_options)
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
def odds_sampling_scorer(ks_ns: list[int] = list(ODDS_KS_NS), gt_size: int = 10_000, gt_seed: int = 0,
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
def odds(task: str = "percentile", shots: str | int | list[int] | None = None, shot_type: str | None = None, context: str | list[str] = "none",
         families: str | list[str] | None = None, limit: int | None = None, edition: str = "subset", n_samples: int = 1000,
         list_size: int = 1, ks_ns: str | int | list[int] = ODDS_KS_NS, gt_size: int = 10_000, seed: int = 0,
         max_attempts: int = 5, temperature: float = 0.7, max_tokens: int | None = None,
         convention: str = "paper") -> Task:
    """What are the odds (the odds paper).

    Args:
        task: ``percentile``, ``probability`` or ``sampling``.
        shots: shot counts to keep, e.g. ``3`` or ``0,3,9`` (default: all of 0, 1, 3, 5, 7, 9).
        shot_type: ``distribution`` or ``family`` (default both; 0-shot items are always kept).
        context: ``none`` (idealised), ``health``, ``finance``, ``climate``, their ``_normal`` and ``_idealized``
            framings, a comma list, or ``all`` (real-world framings are percentile items).
        families: comma list of families (default all 12).
        limit: keep the first N matching items.
        edition: ``subset`` (default; every family x task x shots setting) or ``full``.
        n_samples: values collected per sampling item (paper: 1,000).
        list_size: sampling only: values asked per reply (list prompting), 1 = one draw per reply as in the paper.
        ks_ns: the N of KS@N for sampling (default 10, 100, 1000).
        gt_size, seed: ground-truth draws per sampling item and their seed.
        max_attempts: sampling: attempts per answer slot before it is skipped.
        temperature: the paper's 0.7.
        max_tokens: per reply (default 64; sampling lists 24 per value).
        convention: ``paper`` (default: what the odds paper states) or ``release`` (what its public code computes; see
            the README's conventions table).
    """
    with task_options("odds", locals()):
        task_name = choice(task, "task", TASKS)
        k = positive_int(list_size, "list_size")
        if task_name != "sampling" and k != 1:
            raise OptionError(f"option list_size: applies to task=sampling only; {task_name} items take "
                              f"list_size=1, got {k}")
        convention = choice(convention, "convention", CONVENTIONS)
        temperature = real(temperature, "temperature", low=0)
        tokens = (positive_int(max_tokens, "max_tokens") if max_tokens is not None
                  else (64 if k == 1 else 24 * k))
        items = load_items(task_name, shots, shot_type, context, families, limit, str(edition), convention)
        version = bank_version("odds")
        if task_name == "sampling":
            n = positive_int(n_samples, "n_samples")
            if k > n:
                raise OptionError(f"option list_size: must be at most n_samples ({n}), got {k}")
            ns = int_list(ks_ns, "ks_ns")
            too_big = [x for x in ns if x > n]
            if too_big:  # KS@N needs N values: it would read 0 for every model, the oracle included
                raise OptionError(f"option ks_ns: each N must be at most n_samples ({n}), got {too_big[0]}")
            solver: Solver = collect_values(n_samples=n, list_size=k,
                                            max_attempts=positive_int(max_attempts, "max_attempts"),
                                            temperature=temperature, max_tokens=tokens, bank="odds",
                                            version=version)
            score = odds_scorer(task_name, version, ks_ns=list(ns), gt_size=positive_int(gt_size, "gt_size"),
                                gt_seed=integer(seed, "seed", low=0))
        else:
            solver = generate()
            score = odds_scorer(task_name, version)
    return package_task(
        dataset=MemoryDataset([record_to_sample(p, k) for p in items], name=f"odds-{task_name}"),
        solver=solver,
        scorer=score,
        config=GenerateConfig(temperature=temperature, max_tokens=tokens),
        metadata={"bank": "odds", "task": task_name, "edition": str(edition), "convention": convention,
                  "n_items": len(items)},
        version=bank_version("odds"),
    )
