"""The KS@N bank's constants, in a leaf module: the bank's builders (``bank``, ``realworld``, ``shuffling``) import
them from here, never from each other (``realworld`` and ``shuffling`` imported ``BANK_VERSION`` from
``bank``, which imports them back)."""

from __future__ import annotations

__all__ = ["BANK", "BANK_VERSION"]

#: The bank's name in the registry (``ub_core.problems.load_bank("ksn")``).
BANK = "ksn"
#: Bumped whenever a problem's definition changes; stamped on every problem and checked against the lm-eval YAMLs.
#: "2": the published release's 448 problems, uid for uid.
BANK_VERSION = "2"
