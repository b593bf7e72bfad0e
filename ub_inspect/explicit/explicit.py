"""The explicit twin of implicit probabilistic reasoning (the implicit-reasoning paper) as an Inspect task: ``inspect
eval ub_inspect/explicit --model vllm-completions/<model>``.

One Sample per 5-option MCQ whose prompt ends right before the answer letter; the solver reads each letter
variant's log-probability, the scorer reports MCQ accuracy (the most probable letter is the correct one) and
the normalised probability on the correct letter. See README.md beside this file.
"""

from __future__ import annotations


from inspect_ai import Task, task

from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import TaskOptions, registry_task
from ub_inspect.option_logprob import explicit_scorer, option_logprob_task_parts


@task(name=registry_name("explicit"))
@registry_task("explicit")
def explicit(o: TaskOptions) -> Task:
    parts = option_logprob_task_parts("explicit", o.categories, o.size, o.limit_per_category, o.mode, o.ids)
    parts["metadata"] = {**parts["metadata"], "convention": o.convention}
    return package_task(**parts, scorer=explicit_scorer(o.convention))
