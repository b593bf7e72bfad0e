"""The task class of the ``ub_ksn_<category>`` tasks: lm-eval's ``ConfigurableTask``, made to accept a category
that ``--metadata '{"ids": [...]}'`` leaves empty.

``--metadata`` reaches every task of the ``ub_ksn`` group, so ids of one category leave the other six with no
document. lm-eval 0.4 refuses an empty task twice: its constructor reads the first document to learn the task's
shape (an IndexError), and ``build_all_requests`` raises "did not find any docs". This class shows the
constructor one document of the category while it probes, then runs the task with no request and no metric; the
group averages over the categories that have problems (lm-eval's group aggregation skips a child without the
metric, with a warning).
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval.api.task import ConfigurableTask

from .hooks import ksn_docs

__all__ = ["KsnCategoryTask"]

log = logging.getLogger("lm_eval.ub_ksn")  # lm-eval's handler and format


class KsnCategoryTask(ConfigurableTask):
    """A ``ub_ksn`` category task that may select no problem (see the module docstring)."""

    def __init__(self, config: dict | None = None) -> None:
        config = {k: v for k, v in (config or {}).items() if k != "class"}
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
            from datasets import Dataset

            meta = self.config.metadata if isinstance(self.config.metadata, dict) else {}
            return Dataset.from_list(ksn_docs(meta.get("category"))[:1])
        return docs

    def build_all_requests(self, **kwargs: Any) -> None:
        if len(self.eval_docs) == 0:
            log.warning("%s: none of the requested ids is in this category; the task is skipped",
                        self.config.task)
            self._instances = []
            return
        super().build_all_requests(**kwargs)

    @property
    def instances(self) -> list:
        # lm-eval's evaluator reads the filter names from ``instances[0]``: an empty task offers none
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
