"""Everything Inspect registers from this package (the ``inspect_ai`` entry point points here)."""

from inspect_ai.model import modelapi

from .ksn import ksn
from .stability import stability
from .reducers import tar, tar_raw


@modelapi(name="ub")
def ub() -> type:
    """``ub/oracle`` and ``ub/collapse``."""
    from .providers import UBModelAPI

    return UBModelAPI


__all__ = ["ksn", "stability", "tar", "tar_raw", "ub"]
