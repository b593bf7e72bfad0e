"""Everything Inspect registers from this package (the ``inspect_ai`` entry point points here)."""

from inspect_ai.model import modelapi

from ._inspect_private import register_unqualified_alias
from .calibration import calibration
from .dice import dice
from .dice.dice import dice_scorer
from .dice_mcq import dice_mcq
from .dice_mcq.dice_mcq import dice_mcq_scorer
from .explicit import explicit
from .implicit import implicit
from .ksn import ksn
from .ksn.scorer import ksn_scorer
from .ksn_logprob import ksn_logprob
from .ksn_logprob.ksn_logprob import ksn_logprob_scorer
from .option_logprob import calibration_scorer, explicit_scorer, implicit_scorer
from .odds import odds
from .odds.odds import odds_question_scorer, odds_sampling_scorer
from .reducers import tar, tar_a, tar_r, tar_raw
from .stability import stability
from .stability.scorer import stability_scorer

# `inspect score LOG` rebuilds each scorer by the unqualified name the log records
# (ub_inspect._inspect_private.register_unqualified_alias)
for _scorer in (ksn_scorer, ksn_logprob_scorer, calibration_scorer, implicit_scorer, explicit_scorer,
                odds_question_scorer, odds_sampling_scorer, stability_scorer, dice_scorer, dice_mcq_scorer):
    register_unqualified_alias(_scorer)


@modelapi(name="ub")
def ub() -> type:
    """``ub/oracle`` and ``ub/collapse``."""
    from .providers import UBModelAPI

    return UBModelAPI


__all__ = ["ksn", "ksn_logprob", "calibration", "implicit", "explicit", "odds", "stability", "dice", "dice_mcq",
           "tar_a", "tar_r", "tar",
           "tar_raw", "ub"]
