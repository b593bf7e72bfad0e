"""Implicit probabilistic reasoning (the implicit-reasoning paper) as an Inspect task: ``inspect eval
ub_inspect/implicit --model vllm-completions/<model>``.

One Sample per scenario (dice, coins, preference, choice, statistics) whose prompt ends right before the
outcome; the solver reads each outcome variant's log-probability, the scorer compares the normalised outcome
distribution with the exact one (Chebyshev, Manhattan, KL), and reports the missing mass and argmax accuracy.
See README.md beside this file.
"""

from __future__ import annotations


from inspect_ai import Task, task

from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import TaskOptions, registry_task
from ub_inspect.option_logprob import implicit_scorer, option_logprob_task_parts


@task(name=registry_name("implicit"))
@registry_task("implicit")
def implicit(o: TaskOptions) -> Task:
    parts = option_logprob_task_parts("implicit", o.categories, o.size, o.limit_per_category, o.mode, o.ids)
    parts["metadata"] = {**parts["metadata"], "convention": o.convention, "kl_floor": o.kl_floor}
    return package_task(**parts, scorer=implicit_scorer(o.convention, o.kl_floor))
