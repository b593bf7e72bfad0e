"""Run-to-run stability (the non-determinism paper) as an Inspect task: ``inspect eval ub_inspect/stability --model
vllm/<model>``.

One Sample per multiple-choice question, asked ``epochs`` times at temperature 0 with top_p 1 and a fixed seed
(the non-determinism paper, sec. 5). The scorer marks each epoch; metrics over all epochs give TARa@N (the headline),
TARr@N, BestAcc, WorstAcc, median and mean accuracy and the accuracy spread (see ``scorer.py`` and README.md
beside this file).
"""

from __future__ import annotations


from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from ub_core.problems import bank_version
from ub_core.problems.stability import StabilityItem, load_stability_items

from .._naming import package_task, registry_name

from .._options import TaskOptions, registry_task
from ..reducers import tar_a
from .scorer import stability_scorer

#: N when neither ``-T epochs`` nor Inspect's ``--epochs`` gives it (the paper uses 10)
DEFAULT_EPOCHS = 5

__all__ = ["stability", "record_to_sample"]


def record_to_sample(item: StabilityItem) -> Sample:
    """One item -> one Sample: the prompt lists the lettered options and asks for ``ANSWER: X``."""
    meta = item.to_record(with_prompt=False)
    meta["n_options"] = len(item.options)
    return Sample(id=item.id, input=item.prompt, target=item.answer, metadata=meta)


@task(name=registry_name("stability"))
@registry_task("stability")
def stability(o: TaskOptions) -> Task:
    items = load_stability_items(o.subtasks, o.source, bbh=o.bbh, mmlu=o.mmlu, split=o.split, limit=o.limit,
                                 size=o.size)
    return package_task(
        dataset=MemoryDataset([record_to_sample(it) for it in items], name="stability"),
        solver=generate(),
        scorer=stability_scorer(o.convention),
        epochs=Epochs(DEFAULT_EPOCHS if o.epochs is None else o.epochs, tar_a()),  # the headline TARa: scorer.py
        config=GenerateConfig(temperature=0.0, top_p=1.0, seed=o.seed, max_tokens=o.max_tokens),
        # not the epochs: Inspect's --epochs may override n after this; eval.config.epochs is the N that ran
        metadata={"bank": "stability", "source": o.source, "convention": o.convention},
        version=bank_version("stability"),
    )
