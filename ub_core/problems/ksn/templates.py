"""Per-family prompt templates of the KS@N bank, every kind loaded: ``template_for(kind, family)(params)``.

The four kinds (:data:`TEMPLATE_KINDS`): ``text_explicit`` (the family's own description), ``text_implicit``
(stories, ``text_implicit.py``), ``code_explicit`` (direct library calls, ``code_explicit.py``) and
``code_implicit`` (constructions from simpler draws, ``code_implicit.py``). This module imports every template
module eagerly, so ``template_for("text_implicit", "beta")`` works in a fresh process; the registry itself lives
in the leaf module :mod:`.template_registry`, which the template modules import to register (no import circle).
An unknown kind or a family without a template is a one-line ``ValueError``; unknown families a one-line
``ParameterError``.
"""

from __future__ import annotations

from . import code_explicit, code_implicit, text_implicit  # noqa: F401  (each registers its templates on import)
from .template_registry import TEMPLATE_KINDS, family_table, template, template_for

__all__ = ["TEMPLATE_KINDS", "template", "template_for", "family_table"]
