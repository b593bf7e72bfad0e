"""Inspect AI adapter (tasks, solvers, scorers, providers). Built on ``ub_core``; see the project README."""

from ._naming import plugin_task_name  # noqa: E402  (a plug-in's task name: examples/failure_to_mix)

__all__ = ["plugin_task_name"]
