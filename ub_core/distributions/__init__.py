"""Distribution families of UnpredictaBench (UnpredictaBench, appendix A, table 10) and the extras of the odds paper.

Every family has
- a canonical snake_case ``name``;
- a ``support`` kind: ``continuous``, ``discrete``, ``categorical``, ``permutation`` or ``mixed`` (a continuous
  part plus atoms, e.g. the rectified Gaussian; scored like a discrete target because its samples tie);
- a ``group``: the table-10 heading it sits under;
- parameter validation with one-line :class:`ParameterError` messages;
- a vectorised sampler on :class:`numpy.random.Generator`;
- a scipy frozen distribution where scipy has one (for the CDF/PMF and the moments);
- ``describe(params, style)``: plain text that states the parameter convention (rate or scale, where a support
  starts, inclusive ends), in one of :data:`DESCRIPTION_STYLES`: ``prompt`` (the KS@N prompts' phrase, "a normal
  distribution with mean ...") or ``odds`` (the "What are the odds" description block, "Normal distribution with
  mean ... ."; only the families of that bank have it).

Families are registered with :func:`register_family`, or by an installed package under the entry-point group
``unpredictabench.families`` (found on first use of the name: :func:`get_family`). Which families a bank uses is
an explicit list of names (:data:`TABLE10_FAMILIES`, :data:`ODDS_EXTRA_FAMILIES`), never the order of
registration, so registering another family changes no bank. The families live in one module per kind of support
(:mod:`.continuous`, :mod:`.discrete`, :mod:`.joint`, :mod:`.outcomes`, :mod:`.mixtures`); the record, its
registry and the public functions in :mod:`._family`.

Parameter names follow ``numpy.random.Generator`` where numpy has the distribution, otherwise scipy.stats'
shape names plus ``loc``/``scale``. Joint families (Dirichlet, multinomial, multivariate normal and t, negative
multinomial) are reduced to a stated scalar: one coordinate (``component``) or, for the multivariate normal/t,
optionally the sum of the coordinates (``reduce="sum"``).

Public entry point: :func:`sample` ``(family, params, size, seed) -> numpy.ndarray``.
"""

from __future__ import annotations

from . import continuous, discrete, joint, mixtures, outcomes  # noqa: F401  (each registers its families)
from ._family import (  # noqa: F401
    DESCRIPTION_STYLES,
    FAMILIES,
    INT_NN,
    INT_POS,
    POS,
    PROB,
    REAL,
    STATED_AS,
    Family,
    ParameterError,
    _keep,
    describe,
    fmt,
    frozen,
    get_family,
    moments,
    register_family,
    sample,
    support_bounds,
    support_kind,
    validate,
)
from .mixtures import ODDS_EXTRA_FAMILIES
from .outcomes import TABLE10_FAMILIES, _affine_text  # noqa: F401

__all__ = [
    "Family",
    "ParameterError",
    "FAMILIES",
    "TABLE10_FAMILIES",
    "ODDS_EXTRA_FAMILIES",
    "DESCRIPTION_STYLES",
    "register_family",
    "get_family",
    "sample",
    "describe",
    "validate",
    "moments",
    "frozen",
    "support_bounds",
    "fmt",
]


_unregistered = [f for f in (*TABLE10_FAMILIES, *ODDS_EXTRA_FAMILIES) if f not in FAMILIES]
if _unregistered:  # pragma: no cover - an edit that drops a family
    raise RuntimeError(f"distributions: named but not registered: {', '.join(_unregistered)}")
