"""The UnpredictaBench (KS@N) bank: 448 problems, one module per part.

- :mod:`.bank`: the composition and the assembly (:func:`ksn_problems`), ids; :mod:`.constants`: ``BANK``,
  ``BANK_VERSION``; :mod:`.release_names`: the release's folder and category names;
- :mod:`.regimes`: concentrated / spread-out parameters per family (the templates' reference settings);
- :mod:`.templates`: the prompt templates of all four kinds (registry in :mod:`.template_registry`);
- :mod:`.code_explicit`, :mod:`.text_implicit`, :mod:`.code_implicit`, :mod:`.multimodal`: the generated problems'
  programs, scenarios and mixtures;
- :mod:`.realworld` (machinery) with :mod:`.realworld_systems` (the 30 scenarios), and :mod:`.shuffling`.

Exact pmfs shared with other banks live in :mod:`ub_core.problems.exact_pmf`.
"""

from .bank import *  # noqa: F401,F403
from .bank import BANK, BANK_VERSION, CATEGORIES, REMOVED, TASK_TYPES, ksn_problems  # noqa: F401
