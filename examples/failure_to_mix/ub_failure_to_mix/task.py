"""The Inspect task ``ub_failure_to_mix/mix``: unpredictabench's KS@N task on the ftm bank, whose plug-in metrics
(step-likeness S first) it reports because they are scoped to that bank."""

from inspect_ai import task

from ub_inspect import plugin_task_name
from ub_inspect.ksn import ksn


def _anchor() -> None:
    return None


@task(name=plugin_task_name("ub_failure_to_mix", "mix", _anchor))
def mix(answer_instruction: bool = True, n_samples: int = 100, seed: int = 0, temperature: float = 1.0):
    """Failure to Mix: ``n_samples`` answers per stated p; ``answer_instruction=false`` asks the paper's prompt
    alone."""
    return ksn(bank="ftm", bank_options={"answer_instruction": answer_instruction}, n_samples=n_samples, seed=seed,
               temperature=temperature)
