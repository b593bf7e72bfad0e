"""Numeric calibration (the numeric-calibration paper) as an Inspect task: ``inspect eval ub_inspect/calibration --model
vllm-completions/<model>``.

One Sample per item (colors, wordproblems, distributions); the solver reads the log-probability of every surface
variant of every option right after the prompt, the scorer sums them per option and reports PM, WD, RE and
the reference-behaviour rates. See README.md beside this file.
"""

from __future__ import annotations

from inspect_ai import Task, task

from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import TaskOptions, registry_task
from ub_inspect.option_logprob import calibration_scorer, option_logprob_task_parts


@task(name=registry_name("calibration"))
@registry_task("calibration")
def calibration(o: TaskOptions) -> Task:
    parts = option_logprob_task_parts("calibration", o.categories, o.size, o.limit_per_category, o.mode, o.ids,
                                      o.equal_counts)
    parts["metadata"] = {**parts["metadata"], "convention": o.convention}
    return package_task(**parts, scorer=calibration_scorer(o.convention))
