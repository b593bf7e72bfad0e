"""Implicit probabilistic reasoning (the implicit-reasoning paper) as an Inspect task: ``inspect eval ub_inspect/implicit --model
vllm-completions/<model>``.

One Sample per scenario (dice, coins, preference, choice, statistics) whose prompt ends right before the
outcome; the solver reads each outcome variant's log-probability, the scorer compares the normalised outcome
distribution with the exact one (Chebyshev, Manhattan, KL), and reports the missing mass and argmax accuracy.
See README.md beside this file.
"""

from __future__ import annotations


from inspect_ai import Task, task

from ub_core.logprob.option_logprob import check_convention
from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import task_options
from ub_inspect.option_logprob import implicit_scorer, option_logprob_task_parts


@task(name=registry_name("implicit"))
def implicit(categories: str | list[str] | None = None, size: str = "subset", limit_per_category: int | None = None,
             mode: str = "prompt_logprobs", ids: str | list[str] | None = None,
             convention: str = "exclusive", kl_floor: float | None = None) -> Task:
    """Implicit probabilistic reasoning from next-token probabilities.

    Args:
        categories: dice, coins, preference, choice, statistics, dice_shown (ours) (a list or a comma-separated
            string).
        size: ``subset`` (stratified default) or ``full``.
        limit_per_category: keep only the first N items of each category (quick checks).
        mode: ``prompt_logprobs`` (completions providers; exact for multi-token outcomes) or ``top_logprobs``
            (top-20 lists, read token by token).
        ids: keep only these item ids (a list or a comma-separated string), in bank order.
        convention: ``exclusive`` (default: the probability that the reply is the option; a variant whose tokens
            begin another's loses that one's mass) or ``paper`` (the literal joint probability of the tokens);
            ``ub_core.logprob.option_logprob``.
        kl_floor: the floor the model's probabilities are raised to inside KL(ideal || model) (default 1e-12,
            ``ub_core.metrics.KL_FLOOR``); ``kl_floored`` counts the items where it sets the value.
    """
    with task_options("implicit", locals()):
        convention = check_convention(convention)
        floor = None if kl_floor is None else _floor(kl_floor)
        parts = option_logprob_task_parts("implicit", categories, size, limit_per_category, mode, ids)
    parts["metadata"] = {**parts["metadata"], "convention": convention, "kl_floor": floor}
    return package_task(**parts, scorer=implicit_scorer(convention, floor))


def _floor(value) -> float:
    try:
        floor = float(value)
    except (TypeError, ValueError):
        floor = float("nan")
    if not 0 < floor < 1:
        raise ValueError(f"-T kl_floor must be a number in (0, 1), got {value!r}")
    return floor
