"""The one way the tests build lm-eval task managers and read lm-eval task YAMLs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: How an lm-eval ``metric_list`` row names each metric-spec aggregation (``ub_core.metric_spec``): lm-eval's own
#: ``mean``, or one of our hooks, read by :func:`load_task_yaml` as the string ``"!function utils.<name>"``.
LMEVAL_AGGREGATION = {"mean": "mean", "nanmean": "!function utils.nanmean", "total": "!function utils.total"}


def ub_task_manager(metadata: dict[str, Any] | None = None):
    """An lm-eval ``TaskManager`` over this package's task YAMLs only (no lm-eval built-in tasks), with
    ``metadata`` attached to every task it loads (``ids``, ``size``, ``pretrained``, ...)."""
    from lm_eval.tasks import TaskManager

    import ub_lmeval

    return TaskManager(include_path=str(ub_lmeval.tasks_dir()), include_defaults=False, metadata=metadata)


class _TaskYamlLoader(yaml.SafeLoader):
    """A safe loader that reads lm-eval's ``!function module.name`` tag as the string ``"!function module.name"``
    (lm-eval's own loader imports the function; the tests compare names)."""


_TaskYamlLoader.add_constructor("!function",
                                lambda loader, node: f"!function {loader.construct_scalar(node)}")


def load_task_yaml(path: str | Path) -> Any:
    """The parsed lm-eval task or group YAML at ``path``, ``!function`` tags kept as strings."""
    return yaml.load(Path(path).read_text(), Loader=_TaskYamlLoader)
