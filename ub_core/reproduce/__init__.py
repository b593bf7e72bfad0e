"""``ub reproduce``: the papers' tables recomputed from their public releases' outputs, beside ours."""

from __future__ import annotations

from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``ub reproduce`` and its sub-commands on the ``ub`` subparsers."""
    from . import odds

    rp = sub.add_parser("reproduce", help="a paper's tables from its release's outputs, beside ours")
    rsub = rp.add_subparsers(dest="reproduce_command", required=True)
    odds.add_parser(rsub)
