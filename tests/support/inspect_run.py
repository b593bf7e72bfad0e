"""One Inspect run of a task on a model, checked to have succeeded: its log and its first scorer's metrics."""

from __future__ import annotations

from typing import Any


def run_task(task: Any, model: str, log_dir: Any) -> tuple[dict[str, Any], Any]:
    """``(metrics of the first scorer by name, the EvalLog)`` of ``task`` run on ``model`` into ``log_dir``."""
    from inspect_ai import eval as inspect_eval

    log = inspect_eval(task, model=model, log_dir=str(log_dir), display="none")[0]
    assert log.status == "success", log.error
    score = log.results.scores[0]
    return {k: v.value for k, v in score.metrics.items()}, log
