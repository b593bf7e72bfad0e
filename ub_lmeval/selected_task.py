"""A task class for lm-eval tasks whose ``custom_dataset`` honours ``--metadata '{"ids": [...]}'``: lm-eval's
``ConfigurableTask``, made to accept a task that the ids leave without documents.

``--metadata`` reaches every task of a group, so ids of one category leave the group's other tasks with no
document. lm-eval 0.4.13 refuses an empty task three times: its constructor reads the first document to learn the
task's shape (an IndexError), ``build_all_requests`` raises "did not find any docs", and ``evaluate`` reads the
filter names from ``task.instances[0]``. This class shows the constructor the first document of the unselected
dataset (same columns) while it probes, then runs the task with no request and no metric; lm-eval's group
aggregation leaves a child without the metric out (with a warning), so the group averages over the tasks that
have items. Used through ``class: !function utils.SelectedItemsTask`` in ``ub_ksn``'s template YAML; checked
against lm-eval 0.4.13 by ``tests/test_lmeval_ids.py``.
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval.api.task import ConfigurableTask

__all__ = ["SelectedItemsTask"]

log = logging.getLogger("lm_eval.ub_selected_task")  # lm-eval's handler and format


class SelectedItemsTask(ConfigurableTask):
    """A ``ConfigurableTask`` that may select no document (see the module docstring)."""

    def __init__(self, config: dict | None = None) -> None:
        config = {k: v for k, v in (config or {}).items() if k != "class"}  # the YAML's own `class:` key
        self._probing = True
        try:
            super().__init__(config=config)
        finally:
            self._probing = False
        self.task_docs = self.eval_docs

    @property
    def eval_docs(self) -> Any:
        docs = super().eval_docs
        if getattr(self, "_probing", False) and len(docs) == 0:
            meta = dict(self.config.metadata) if isinstance(self.config.metadata, dict) else {}
            meta["ids"] = None
            full = self.config.custom_dataset(**meta, **(self.config.dataset_kwargs or {}))
            split = self.config.test_split or self.config.validation_split
            return full[split].select(range(1))
        return docs

    def build_all_requests(self, **kwargs: Any) -> None:
        if len(self.eval_docs) == 0:
            log.warning("%s: none of the requested ids is in this task; it is skipped", self.config.task)
            self._instances = []
            return
        super().build_all_requests(**kwargs)

    @property
    def instances(self) -> list:
        return self._instances if self._instances else _NoInstances()

    def apply_filters(self) -> Any:
        if not self._instances:  # lm-eval's filters unpack the first instance
            return None
        return super().apply_filters()


class _NoInstances(list):
    """An empty instance list whose ``[0]`` names no filter (lm-eval 0.4.13 ``evaluate``: ``for filter_key in
    task.instances[0].filtered_resps``)."""

    def __getitem__(self, index: Any) -> Any:
        if index == 0:
            from types import SimpleNamespace

            return SimpleNamespace(filtered_resps={})
        return super().__getitem__(index)
