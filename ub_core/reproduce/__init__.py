"""``ub reproduce stability|odds|dice --release DIR``: a paper's tables recomputed from its public release's outputs,
beside the release's own figures and the paper's, cell by cell; ``ub reproduce calibration``:
the numeric-calibration paper's baseline rows, which need no model, beside ours on our bank.

Each module (:mod:`.stability`, :mod:`.odds`, :mod:`.dice`, :mod:`.calibration`) exposes ``add_parser(subparsers)``,
which adds its sub-command.
"""

from __future__ import annotations

from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``ub reproduce`` and its sub-commands on the ``ub`` subparsers."""
    from . import calibration, dice, odds, stability

    rp = sub.add_parser("reproduce", help="recompute a paper's tables from its public release (stability, "
                                          "odds, dice) or its baselines (calibration), beside the paper's figures")
    rsub = rp.add_subparsers(dest="reproduce_command", required=True)
    stability.add_parser(rsub)
    odds.add_parser(rsub)
    calibration.add_parser(rsub)
    dice.add_parser(rsub)
