"""Numeric calibration (the numeric-calibration paper) as an Inspect task: ``inspect eval ub_inspect/calibration --model
vllm-completions/<model>``.

One Sample per item (colors, wordproblems, distributions); the solver reads the log-probability of every surface
variant of every option right after the prompt, the scorer sums them per option and reports PM, WD, RE and
the reference-behaviour rates. See README.md beside this file.
"""

from __future__ import annotations


from inspect_ai import Task, task

from ub_core.logprob.option_logprob import check_convention
from ub_core.metrics import check_equal_counts
from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import task_options
from ub_inspect.option_logprob import calibration_scorer, option_logprob_task_parts


@task(name=registry_name("calibration"))
def calibration(categories: str | list[str] | None = None, size: str = "subset", limit_per_category: int | None = None,
                mode: str = "prompt_logprobs", ids: str | list[str] | None = None,
                convention: str = "exclusive", equal_counts: str = "drop") -> Task:
    """Numeric calibration of next-token probabilities.

    Args:
        categories: colors, wordproblems, distributions (a list or a comma-separated string; default all).
        size: ``subset`` (stratified default) or ``full``.
        limit_per_category: keep only the first N items of each category (quick checks).
        mode: ``prompt_logprobs`` (completions providers; exact for multi-token options) or ``top_logprobs``
            (top-20 lists, read token by token).
        ids: keep only these item ids (a list or a comma-separated string), in bank order.
        convention: ``exclusive`` (default: the probability that the reply is the option; a variant whose tokens
            begin another's loses that one's mass) or ``paper`` (the literal joint probability of the tokens);
            ``ub_core.logprob.option_logprob``.
        equal_counts: ``drop`` (default) leaves the colors and wordproblems items with equal counts out, as the
            baselines of ``ub reproduce calibration`` do, or ``keep`` (``ub_core.metrics.calibration_item_set``);
            the task metadata state the rule and the count left out.
    """
    with task_options("calibration", locals()):
        convention = check_convention(convention)
        parts = option_logprob_task_parts("calibration", categories, size, limit_per_category, mode, ids,
                                          check_equal_counts(equal_counts))
    parts["metadata"] = {**parts["metadata"], "convention": convention}
    return package_task(**parts, scorer=calibration_scorer(convention))
