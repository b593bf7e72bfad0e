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

from ub_core import option_registry as registry

__all__ = ["checked", "KSN_OPTIONS", "KSN_LOGPROB_OPTIONS", "ODDS_OPTIONS", "OPTION_LOGPROB_OPTIONS",
           "STABILITY_OPTIONS", "DICE_OPTIONS", "DICE_MCQ_OPTIONS", "print_metadata_note_once"]


def _accepted(family: str) -> dict[str, Callable[[Any, str], Any] | None]:
    """The ``--metadata`` options of ``family``'s lm-eval tasks with their checkers (None: the hook checks it), from
    :mod:`ub_core.option_registry`. ``category`` and ``version`` come from the task YAMLs' own ``metadata``."""
    return {name: opt.check for name, opt in registry.family_options(family, "lmeval").items()}


KSN_OPTIONS = _accepted("ksn")
KSN_LOGPROB_OPTIONS = _accepted("ksn_logprob")
ODDS_OPTIONS = _accepted("odds")
OPTION_LOGPROB_OPTIONS = {**_accepted("calibration"), **_accepted("implicit")}
STABILITY_OPTIONS = _accepted("stability")
DICE_OPTIONS = _accepted("dice")
DICE_MCQ_OPTIONS = _accepted("dice_mcq")


def checked(task: str, metadata: Mapping[str, Any], accepted: Mapping[str, Any]) -> dict[str, Any]:
    """The options of ``accepted`` in ``metadata``, checked (:func:`ub_core.option_registry.check_metadata`)."""
    return registry.check_metadata(task, metadata, accepted)


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
