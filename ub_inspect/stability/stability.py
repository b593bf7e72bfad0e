"""Run-to-run stability (the non-determinism paper) as an Inspect task: ``inspect eval ub_inspect/stability --model vllm/<model>``.

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
from ub_core.metrics.stability import CONVENTIONS

from .._options import choice, integer, positive_int, registry_checked, str_list
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
def stability(epochs: int | None = None, subtasks: str | list[str] | None = None, source: str = "builtin", limit: int | None = None,
              bbh: str | None = None, mmlu: str | None = None, split: str = "test", size: str | None = None,
              seed: int = 0, max_tokens: int | None = None, convention: str = "paper") -> Task:
    """The non-determinism paper's TARr@N / TARa@N and accuracy extremes over N "deterministic" runs.

    Args:
        epochs: N, the number of identical runs (default 5; paper: 10). Inspect's ``--epochs`` overrides it;
            the log's ``tar_a_summary`` reports the N that ran (``epochs``).
        subtasks: some of navigate, logical_deduction_three_objects, geometric_shapes, ruin_names,
            college_mathematics, high_school_european_history, professional_accounting, public_relations
            (a list or a comma-separated string; default all eight).
        source: ``builtin`` (generated items and small labelled stand-ins, offline), ``hf`` (BBH and MMLU from the
            hub or local exports given by ``bbh`` / ``mmlu``), or a path / HF id used for every chosen subtask.
        limit: at most this many questions per subtask.
        bbh: with ``source=hf``, the BBH dataset id or local export (default lukaemon/bbh).
        mmlu: with ``source=hf``, the MMLU dataset id or local export (default cais/mmlu).
        split: dataset split for hub and local sources.
        size: built-in edition: ``subset`` (default, 328 items) or ``full`` (1,210 items; BBH-sized).
        seed: the fixed generation seed, the same in every epoch.
        max_tokens: per reply (default: the provider's).
        convention: ``paper`` (default: the paper's definitions, our reader) or ``release`` (the rules of the
            paper's public release ``llm-stability``: its reader, its TARa, spread = best - worst; see README).
    """
    registry_checked("stability", locals())
    convention = choice(convention, "convention", CONVENTIONS)
    n = DEFAULT_EPOCHS if epochs is None else positive_int(epochs, "epochs")
    cap = positive_int(limit, "limit") if limit is not None else None
    items = load_stability_items(str_list(subtasks, "subtasks"), str(source), bbh=bbh, mmlu=mmlu, split=str(split),
                                 limit=cap, size=size)
    return package_task(
        dataset=MemoryDataset([record_to_sample(it) for it in items], name="stability"),
        solver=generate(),
        scorer=stability_scorer(convention),
        epochs=Epochs(n, tar_a()),  # the headline TARa reads the tar_a reduction (scorer.py)
        config=GenerateConfig(temperature=0.0, top_p=1.0, seed=integer(seed, "seed", low=0),
                              max_tokens=None if max_tokens is None else positive_int(max_tokens, "max_tokens")),
        # not the epochs: Inspect's --epochs may override n after this; eval.config.epochs is the N that ran
        metadata={"bank": "stability", "source": str(source), "convention": convention},
        version=bank_version("stability"),
    )
