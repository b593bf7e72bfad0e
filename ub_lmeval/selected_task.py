"""A task class for lm-eval tasks whose ``custom_dataset`` honours ``--metadata '{"ids": [...]}'``: lm-eval's
``ConfigurableTask``, made to accept a task that the ids leave without documents.

``--metadata`` reaches every task of a group, so ids of one category leave the group's other tasks with no
document. lm-eval 0.4.13 refuses an empty task three times: its constructor reads the first document to learn the
task's shape (an IndexError), ``build_all_requests`` raises "did not find any docs", and ``evaluate`` reads the
filter names from ``task.instances[0]``. This class shows the constructor the first document of the unselected
dataset (same columns) while it probes, then runs the task with no request and no metric; lm-eval's group
aggregation leaves a child without the metric out (with a warning), so the group averages over the tasks that
have items. Used through ``class: !function utils.SelectedItemsTask`` in ``ub_ksn``'s template YAML; checked
against lm-eval 0.4.13 by ``tests/frameworks/test_lmeval_ids.py``.
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval.api.task import ConfigurableTask

__all__ = ["SelectedItemsTask", "BankTask"]

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


class BankTask(SelectedItemsTask):
    """``ub_ksn`` on a lab's own bank: the lab's one YAML names its task, this class and the bank::

        task: ub_ksn_my_bank
        class: !function ub_lmeval.selected_task.BankTask
        metadata:
          bank: my_bank

    and every other setting is ``ub_ksn``'s template (``ksn/_ub_ksn_template_yaml``: the dataset hook, 100
    generations at temperature 1, the filter, ``process_results`` and the metric list, which is the metric spec's),
    read with lm-eval's own YAML loader; a key of the lab's YAML wins over the template's. ``metadata.version`` is
    the bank's version unless the YAML gives one. The bank is found in the registry (a plug-in's, through the
    entry-point group ``unpredictabench.banks``); an unknown one is a one-line error listing the known banks.

    ``metric_list``: a YAML without one gets the bank's from the spec when the task is built
    (:func:`ub_lmeval.metric_lists.bank_metric_list`: the template's metrics, the bank's own, its run metrics); a
    YAML's own list must hold every one of those (lm-eval fails on a metric a document returns and the list lacks),
    or the task is a one-line error saying how to rewrite it."""

    TEMPLATE = "ksn/_ub_ksn_template_yaml"

    def __init__(self, config: dict | None = None) -> None:
        from unpredictabench_lm_eval_hook import load_task_yaml  # lm-eval's own loader (``!function``, ``include``)

        from ub_core.problems import bank_version

        from . import tasks_dir

        config = {k: v for k, v in (config or {}).items() if k != "class"}
        base = {k: v for k, v in load_task_yaml(tasks_dir() / self.TEMPLATE).items() if k != "class"}
        meta = {**(base.get("metadata") or {}), **(config.get("metadata") or {})}
        if not meta.get("bank"):
            raise ValueError(f"{config.get('task', 'task')}: BankTask needs metadata.bank, the name of a "
                             f"registered bank")
        meta.setdefault("version", bank_version(str(meta["bank"])))
        super().__init__({**base, **config, "metadata": meta,
                          "metric_list": _bank_metric_list(str(meta["bank"]), config)})


def _bank_metric_list(bank: str, config: dict) -> list[dict]:
    """The metric list of a :class:`BankTask` (its docstring): the YAML's, checked against the spec, or the spec's."""
    import importlib

    from .metric_lists import bank_metric_list

    def hook(qualified: str):  # a hook by full module path, as the YAML would name it
        module, _, name = qualified.rpartition(".")
        return getattr(importlib.import_module(module), name)

    wanted = bank_metric_list(bank)
    own = config.get("metric_list")
    if own is not None:
        listed = {row.get("metric") for row in own if isinstance(row, dict)}
        missing = [row["metric"] for row in wanted if row["metric"] not in listed]
        if missing:
            raise ValueError(f"{config.get('task', 'task')}: its metric_list lacks {', '.join(missing)} (bank "
                             f"{bank}'s metric spec); rewrite it: python -m ub_lmeval.metric_lists --bank {bank} "
                             f"--task {config.get('task', 'TASK')} --out FOLDER")
        return own
    prefix = "!function "
    return [{**row, "aggregation": hook(row["aggregation"][len(prefix):])
             if row["aggregation"].startswith(prefix) else row["aggregation"]} for row in wanted]
