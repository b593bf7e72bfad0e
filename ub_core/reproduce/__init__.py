"""``ub reproduce <family> --release DIR``: a paper's tables recomputed from its public release, beside the
release's own figures, cell by cell (issue 27, section 3).

Each family module (``stability``, and ``odds`` where present) exposes ``add_parser(subparsers)``, which adds its
sub-command under ``ub reproduce``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["add_parser", "FAMILIES"]

#: family modules tried, in this order; a missing one is left out of ``ub reproduce``
FAMILIES = ("stability", "odds")


def add_parser(sub: Any) -> None:
    """Register ``ub reproduce`` and the sub-commands of every importable family module on the ``ub``
    subparsers."""
    rp = sub.add_parser("reproduce", help="recompute a paper's tables from its public release, beside the "
                                          "release's own figures")
    rsub = rp.add_subparsers(dest="reproduce_command", required=True)
    for family in FAMILIES:
        try:
            module = importlib.import_module(f"{__name__}.{family}")
        except ImportError as e:
            if e.name != f"{__name__}.{family}":  # the module exists but is broken: say so
                raise
            continue
        module.add_parser(rsub)
