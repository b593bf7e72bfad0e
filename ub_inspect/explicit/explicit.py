"""The explicit twin of implicit probabilistic reasoning (the implicit-reasoning paper) as an Inspect task: ``inspect eval
ub_inspect/explicit --model vllm-completions/<model>``.

One Sample per 5-option MCQ whose prompt ends right before the answer letter; the solver reads each letter
variant's log-probability, the scorer reports MCQ accuracy (the most probable letter is the correct one) and
the normalised probability on the correct letter. See README.md beside this file.
"""

from __future__ import annotations


from inspect_ai import Task, task

from ub_core.logprob.option_logprob import check_convention
from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import task_options
from ub_inspect.option_logprob import explicit_scorer, option_logprob_task_parts


@task(name=registry_name("explicit"))
def explicit(categories: str | list[str] | None = None, size: str = "subset", limit_per_category: int | None = None,
             mode: str = "prompt_logprobs", ids: str | list[str] | None = None,
             convention: str = "exclusive") -> Task:
    """Explicit probabilistic reasoning: MCQ answered by the next-token probability of each letter.

    Args:
        categories: dice, coins, preference, choice, statistics (a list or a comma-separated string).
        size: ``subset`` (stratified default) or ``full``.
        limit_per_category: keep only the first N items of each category (quick checks).
        mode: ``prompt_logprobs`` (completions providers) or ``top_logprobs`` (top-20 lists, read token by token).
        ids: keep only these item ids (a list or a comma-separated string), in bank order.
        convention: ``exclusive`` (default: the probability that the reply is the option; a variant whose tokens
            begin another's loses that one's mass) or ``paper`` (the literal joint probability of the tokens);
            ``ub_core.logprob.option_logprob``.
    """
    with task_options("explicit", locals()):
        convention = check_convention(convention)
        parts = option_logprob_task_parts("explicit", categories, size, limit_per_category, mode, ids)
    parts["metadata"] = {**parts["metadata"], "convention": convention}
    return package_task(**parts, scorer=explicit_scorer(convention))
