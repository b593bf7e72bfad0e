""""Bad Dice Players" downstream MCQ task as an Inspect task: ``inspect eval ub_inspect/dice_mcq -T n=1000``.

``n`` requests, each asking for one new four-option question with its answer key (our prompt,
:mod:`ub_core.problems.dice_mcq`); the key's letter is read with :func:`ub_core.parsing.answer_key.read_answer_key`
and the letters of the run are tested for uniformity over A-D with :func:`ub_core.metrics.dice.letter_uniformity`
(Pearson's chi-square, 3 degrees of freedom): ``p_value``, ``chi2``, ``uniform`` (1 when p > alpha), each letter's
share of the keys read, and the share of replies with a key (``read``; a reply without one is left out of the
test and counted). See README.md beside this file.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import generate

from ub_core.metrics.dice import DICE_ALPHA, MCQ_LETTERS, letter_uniformity
from ub_core.parsing.answer_key import read_answer_key
from ub_core.problems.dice_mcq import DiceMcqItem, mcq_items

from ub_inspect._naming import package_task, registry_name
from ub_inspect._options import TaskOptions, registry_task

__all__ = ["dice_mcq", "dice_mcq_scorer", "letter_uniformity_metric", "record_to_sample"]

#: the version of the task's requests (its prompt wording)
TASK_VERSION = "1"


def record_to_sample(item: DiceMcqItem) -> Sample:
    return Sample(id=item.id, input=item.prompt, target="", metadata={"topic": item.topic, "index": item.index})


def _letter_counts(scores: list[SampleScore]) -> tuple[dict[str, int], int]:
    counts = dict.fromkeys(MCQ_LETTERS, 0)
    unread = 0
    for s in scores:
        value = s.score.value if isinstance(s.score.value, dict) else {}
        letter = next((k for k in MCQ_LETTERS if value.get(k) == 1), None)
        if letter is None:
            unread += 1
        else:
            counts[letter] += 1
    return counts, unread


@metric(name=registry_name("letter_uniformity"))
def letter_uniformity_metric(alpha: float = DICE_ALPHA) -> Metric:
    """The run's answer-key letters against uniform over A-D: ``p_value`` (headline), ``chi2``, ``uniform``
    (p > alpha), ``share_A`` ... ``share_D`` of the keys read, ``read`` (share of replies with a key), ``n`` (keys
    read); with no key read, the test is undefined (NaN) and ``uniform`` is 0."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        counts, unread = _letter_counts(scores)
        n = sum(counts.values())
        out = {"p_value": float("nan"), "chi2": float("nan"), "uniform": 0.0}
        if n:
            res = letter_uniformity(counts)
            out.update(p_value=res["p_value"], chi2=res["chi2"], uniform=float(res["p_value"] > alpha))
        out.update({f"share_{k}": (counts[k] / n if n else float("nan")) for k in MCQ_LETTERS})
        out.update(read=n / (n + unread) if n + unread else float("nan"), n=float(n))
        return out

    return compute


@scorer(metrics=[letter_uniformity_metric()], name=registry_name("dice_mcq_scorer"))
def dice_mcq_scorer(alpha: float = DICE_ALPHA) -> Scorer:
    """One reply -> ``{"A": 0/1, ..., "D": 0/1, "read": 0/1}``: which letter its answer key marks, if any."""

    async def score(state, target: Target) -> Score:
        text = state.output.completion if state.output else ""
        letter = read_answer_key(text)
        value = {k: float(letter == k) for k in MCQ_LETTERS}
        value["read"] = float(letter is not None)
        return Score(value=value, answer=letter or "", explanation=(
            f"answer key {letter}" if letter else "no answer key (Correct Answer: A-D) in the reply"))

    return score


@task(name=registry_name("dice_mcq"))
@registry_task("dice_mcq")
def dice_mcq(o: TaskOptions) -> Task:
    return package_task(
        dataset=MemoryDataset([record_to_sample(item) for item in mcq_items(o.n)], name="dice-mcq"),
        solver=generate(),
        scorer=dice_mcq_scorer(alpha=o.alpha),
        config=GenerateConfig(temperature=o.temperature, max_tokens=400 if o.max_tokens is None else o.max_tokens),
        metadata={"bank": "dice", "task": "mcq", "n": o.n, "alpha": o.alpha},
        version=TASK_VERSION,
    )
