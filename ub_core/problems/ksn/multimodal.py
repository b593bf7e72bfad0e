"""Multimodal KS@N problems: a mixture of two members of one family, asked as a text-explicit prompt.

The 80 mixtures are the release's (``textual_multimodal_explicit_<regime>`` rows, one per table-10 family and
regime; :mod:`.release_processes`); the wording is ours.
"""

from __future__ import annotations

from ... import distributions as D


def multimodal_prompt(params: dict, variant: int = 0) -> str:
    """Our wording for a mixture; ``variant=1`` is a second phrasing (the release repeats one mixture in both
    regimes, and each problem needs its own prompt)."""
    if variant:
        return (f"Act as a sampler for {D.describe('mixture', params)}. Produce one value drawn from it at "
                "random.")
    return (f"You are acting as a random number generator for {D.describe('mixture', params)}. "
            "Draw from it at random.")
