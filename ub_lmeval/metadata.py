"""lm-eval's ``--metadata`` for the ub tasks: checked as Inspect's ``-T`` options are (:mod:`ub_core.options`), and
lm-eval's note about it printed once per run.

Every ub ``custom_dataset`` hook passes what it was called with to :func:`checked` with the options its task
family takes; a ub option it does not take (``categories``, ``n_samples``: Inspect's) or a bad value
(``threshold`` outside (0, 1)) is a one-line :class:`ub_core.options.OptionValueError` (``ub-lm-eval`` prints it
as ``ub-lm-eval: error: ...`` and exits with status 2), never an option dropped silently.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from ub_core import options

__all__ = ["checked", "KSN_OPTIONS", "KSN_LOGPROB_OPTIONS", "ODDS_OPTIONS", "OPTION_LOGPROB_OPTIONS",
           "STABILITY_OPTIONS", "print_metadata_note_once"]

#: The ``--metadata`` options of each ub lm-eval task family, with their checkers (None: the hook checks it).
#: ``category`` and ``version`` come from the task YAMLs' own ``metadata``.
KSN_OPTIONS: dict[str, Callable[[Any, str], Any] | None] = {
    "category": None, "ids": None, "bank": None, "threshold": options.threshold, "method": options.ks_method}
KSN_LOGPROB_OPTIONS = {**KSN_OPTIONS, "end_of_answer": None}
ODDS_OPTIONS: dict[str, Callable[[Any, str], Any] | None] = dict.fromkeys(
    ("task", "shots", "shot_type", "context", "families", "edition", "list_size", "convention", "yaml_task",
     "replies"))
OPTION_LOGPROB_OPTIONS: dict[str, Callable[[Any, str], Any] | None] = dict.fromkeys(
    ("bank", "category", "size", "ids", "trust_remote_code", "convention", "kl_floor", "equal_counts"))
STABILITY_OPTIONS: dict[str, Callable[[Any, str], Any] | None] = dict.fromkeys(
    ("subtask", "source", "bbh", "mmlu", "split", "size", "convention"))


def checked(task: str, metadata: Mapping[str, Any], accepted: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``accepted`` in ``metadata``, checked (:func:`ub_core.options.check_metadata`)."""
    return options.check_metadata(task, metadata, accepted)


class _Once(logging.Filter):
    """Lets the first record whose message holds ``needle`` through, and no later one."""

    def __init__(self, needle: str) -> None:
        super().__init__()
        self.needle, self.seen = needle, False

    def filter(self, record: logging.LogRecord) -> bool:
        if self.needle not in str(record.msg):
            return True
        if self.seen:
            return False
        self.seen = True
        return True


def print_metadata_note_once() -> None:
    """lm-eval 0.4.13 logs "Custom kwargs can be passed to `--metadata` ..." once per task that has a
    ``custom_dataset`` (``lm_eval.api.task.ConfigurableTask.download``): seven times for ``ub_ksn``. From this call
    on, the first is kept and the others dropped: once per process (an ``lm_eval`` / ``ub-lm-eval`` run), never
    again in a later run of the same Python session (called again, the next one is shown)."""
    logger = logging.getLogger("lm_eval.api.task")
    for f in [f for f in logger.filters if isinstance(f, _Once)]:
        logger.removeFilter(f)
    logger.addFilter(_Once("Custom kwargs can be passed to `--metadata`"))
