"""The registry of per-family prompt templates (a leaf module: the template modules import it to register).

Import :mod:`.templates`, not this module, to look templates up: it loads every kind first, so a lookup never
depends on which modules happen to have been imported.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ... import distributions as D

__all__ = ["TEMPLATE_KINDS", "template", "template_for", "family_table"]

#: The kinds of per-family templates: the KS@N categories whose prompt is built per family. ``text_explicit`` is
#: every registered family's own description (:meth:`ub_core.distributions.Family.describe`); the other three
#: register their builders with :func:`template` in ``code_explicit.py``, ``code_implicit.py``, ``text_implicit.py``.
TEMPLATE_KINDS = ("text_explicit", "text_implicit", "code_explicit", "code_implicit")
_REGISTERED_KINDS = ("text_implicit", "code_explicit", "code_implicit")

# kind -> {family: builder}, filled by the @template decorator when a template module is imported
_TEMPLATES: dict[str, dict[str, Callable[[dict], str]]] = {}


def template(kind: str, family: str) -> Callable[[Callable[[dict], str]], Callable[[dict], str]]:
    """Decorator: register ``builder(params) -> str`` as the ``kind`` template of the registered distribution
    ``family``, e.g. ``@template("code_implicit", "beta")``. The builder gets validated params (see
    :func:`template_for`); it is returned unchanged. A second, different builder for the same kind and family is
    an error (registering the same function again, as a module reload does, replaces it)."""
    if kind not in _REGISTERED_KINDS:
        raise ValueError(f"unknown template kind {kind!r}; expected one of {', '.join(_REGISTERED_KINDS)}")
    D.get_family(family)  # an unknown family raises a one-line ParameterError

    def register(builder: Callable[[dict], str]) -> Callable[[dict], str]:
        table = _TEMPLATES.setdefault(kind, {})
        old = table.get(family)
        if old is not None and (old.__module__, old.__qualname__) != (builder.__module__, builder.__qualname__):
            raise ValueError(f"{kind}: {family!r} already has a template ({old.__module__}.{old.__qualname__})")
        table[family] = builder
        return builder

    return register


def template_for(kind: str, family: str) -> Callable[[dict], str]:
    """The ``kind`` template of ``family`` as ``build(params) -> str``, which validates ``params`` first. A
    family without one raises a one-line ValueError."""
    if kind not in TEMPLATE_KINDS:
        raise ValueError(f"unknown template kind {kind!r}; expected one of {', '.join(TEMPLATE_KINDS)}")
    if kind == "text_explicit":
        builder = D.get_family(family).describe  # every registered family describes itself
    else:
        try:
            builder = _TEMPLATES[kind][family]
        except KeyError:
            raise ValueError(f"{kind}: no template for family {family!r}") from None

    def build(params: dict) -> str:
        return builder(D.validate(family, params))

    build.__name__ = f"{kind}_{family}"
    build.__doc__ = f"{kind.replace('_', '-')} template for {family} (params validated first)."
    return build


def family_table(kind: str, families: Sequence[str] | None = None) -> dict[str, Callable[[dict], str]]:
    """``{family: builder}`` (:func:`template_for`) for ``families``, by default the 40 table-10 families
    (:data:`ub_core.distributions.TABLE10_FAMILIES`, an explicit list: templates registered for other families
    are not included). A family without a template is an error."""
    names = D.TABLE10_FAMILIES if families is None else tuple(families)
    missing = [] if kind == "text_explicit" else [f for f in names if f not in _TEMPLATES.get(kind, {})]
    if missing:
        raise RuntimeError(f"{kind}: no template for {', '.join(missing)}")
    return {f: template_for(kind, f) for f in names}
