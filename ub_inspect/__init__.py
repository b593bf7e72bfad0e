"""Inspect AI adapter (tasks, solvers, scorers, providers). Built on ``ub_core``; see the project README."""

__all__ = ["plugin_task_name"]


def __getattr__(name: str):
    """``plugin_task_name`` (a plug-in's task name: ``examples/failure_to_mix``), imported on first use: importing
    this package needs no inspect-ai (``ub score`` asks ``ub_inspect.logs`` whether a file is an Inspect log)."""
    if name == "plugin_task_name":
        from ._naming import plugin_task_name

        return plugin_task_name
    raise AttributeError(f"module 'ub_inspect' has no attribute {name!r}")
