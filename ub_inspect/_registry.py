"""Everything Inspect registers from this package (the ``inspect_ai`` entry point points here)."""

from inspect_ai.model import modelapi

from .calibration import calibration
from .explicit import explicit
from .implicit import implicit
from .ksn import ksn
from .ksn_logprob import ksn_logprob
from .odds import odds
from .reducers import tar, tar_raw
from .stability import stability


@modelapi(name="ub")
def ub() -> type:
    """``ub/oracle`` and ``ub/collapse``."""
    from .providers import UBModelAPI

    return UBModelAPI


__all__ = ["ksn", "ksn_logprob", "calibration", "implicit", "explicit", "odds", "stability", "tar", "tar_raw", "ub"]
