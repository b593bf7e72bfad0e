"""The :class:`Family` record, its registry, and the parameter checkers every family uses."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np


class ParameterError(ValueError):
    """A family's parameters are invalid; the message is one line naming the family and the parameter."""


# --------------------------------------------------------------------------------------------------------------
# parameter checking helpers

def fmt(x: Any) -> str:
    """Format a number for prompts and programs: integers without a decimal point, simple fractions as ``a/b``
    (1/6, not 0.166667), other reals with up to 6 significant digits."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x)).lower()
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        short = f"{x:.6g}"
        if float(short) != x:
            # a simple fraction such as 1/6 is written as one, so probabilities still sum to exactly 1
            frac = Fraction(x).limit_denominator(100)
            if frac.denominator > 1 and abs(float(frac) - x) <= 1e-15 * max(1.0, abs(x)):
                return f"{frac.numerator}/{frac.denominator}"
        return short
    return str(x)


def _exact(x: Any) -> str:
    """A parameter as the odds-style description states it: :func:`fmt`'s short form when that is exact, else up
    to 12 significant digits (so a rate such as 1/0.00172 is not cut to 6 digits)."""
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_exact(v) for v in x) + "]"
    s = fmt(x)
    try:
        exact = float(s) == float(x)
    except ValueError:  # a fraction such as 1/3, which fmt writes only when it is exact
        exact = True
    return s if exact else f"{float(x):.12g}"


def _num(fam: str, params: Mapping, key: str, *, low: float | None = None, high: float | None = None,
         low_open: bool = False, high_open: bool = False, integer: bool = False) -> float:
    if key not in params:
        raise ParameterError(f"{fam}: missing parameter '{key}'")
    v = params[key]
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{fam}: parameter '{key}' must be a number, got {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise ParameterError(f"{fam}: parameter '{key}' must be finite, got {v}")
    if integer and not v.is_integer():
        raise ParameterError(f"{fam}: parameter '{key}' must be an integer, got {fmt(v)}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ParameterError(f"{fam}: parameter '{key}' must be {'>' if low_open else '>='} {fmt(low)}, got {fmt(v)}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ParameterError(f"{fam}: parameter '{key}' must be {'<' if high_open else '<='} {fmt(high)}, got {fmt(v)}")
    return v


def _vec(fam: str, params: Mapping, key: str, *, positive: bool = False, prob: bool = False,
         min_len: int = 1) -> np.ndarray:
    if key not in params:
        raise ParameterError(f"{fam}: missing parameter '{key}'")
    try:
        v = np.asarray(params[key], dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{fam}: parameter '{key}' must be a list of numbers, got {params[key]!r}") from None
    if v.ndim != 1 or v.size < min_len:
        raise ParameterError(f"{fam}: parameter '{key}' must be a list of at least {min_len} numbers")
    if not np.all(np.isfinite(v)):
        raise ParameterError(f"{fam}: parameter '{key}' must contain only finite numbers")
    if positive and np.any(v <= 0):
        raise ParameterError(f"{fam}: every entry of '{key}' must be > 0")
    if prob:
        if np.any(v < 0) or np.any(v > 1):
            raise ParameterError(f"{fam}: every entry of '{key}' must be in [0, 1]")
    return v


def _simplex(fam: str, params: Mapping, key: str, min_len: int = 2) -> np.ndarray:
    v = _vec(fam, params, key, prob=True, min_len=min_len)
    if abs(v.sum() - 1.0) > 1e-9:
        raise ParameterError(f"{fam}: '{key}' must sum to 1, sums to {v.sum():.12g}")
    return v


def _component(fam: str, params: Mapping, dim: int) -> int:
    c = params.get("component", 0)
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) or not 0 <= int(c) < dim:
        raise ParameterError(f"{fam}: 'component' must be an integer in [0, {dim - 1}], got {c!r}")
    return int(c)


def _reduce(fam: str, params: Mapping) -> str:
    r = params.get("reduce", "component")
    if r not in ("component", "sum"):
        raise ParameterError(f"{fam}: 'reduce' must be 'component' or 'sum', got {r!r}")
    return r


def _cov(fam: str, params: Mapping, key: str, dim: int) -> np.ndarray:
    if key not in params:
        raise ParameterError(f"{fam}: missing parameter '{key}'")
    try:
        m = np.asarray(params[key], dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{fam}: '{key}' must be a square matrix of numbers") from None
    if m.shape != (dim, dim):
        raise ParameterError(f"{fam}: '{key}' must be {dim}x{dim}, got shape {m.shape}")
    if not np.allclose(m, m.T) or np.any(np.linalg.eigvalsh(m) <= 0):
        raise ParameterError(f"{fam}: '{key}' must be symmetric positive definite")
    return m


# --------------------------------------------------------------------------------------------------------------
# the Family record

Sampler = Callable[[np.random.Generator, Mapping, int], np.ndarray]

#: The wordings :func:`describe` knows: ``prompt`` (every family; :attr:`Family.text`) and ``odds`` (the families
#: of the "What are the odds" bank; :attr:`Family.styles`).
DESCRIPTION_STYLES = ("prompt", "odds")
#: How an odds-style description states an exponential: as a ``rate`` or a ``scale``; ``none`` for other families.
STATED_AS = ("rate", "scale", "none")


@dataclass(frozen=True)
class Family:
    """One distribution family. ``check`` validates and returns normalised params; ``draw`` samples; ``text``
    is the ``prompt``-style description of validated params; ``styles`` maps another style name (``odds``) to a
    ``(params, convention) -> str`` description."""

    name: str
    title: str
    group: str
    support: str
    param_doc: str
    check: Callable[[Mapping], dict]
    draw: Sampler
    text: Callable[[Mapping], str]
    scipy_dist: Callable[[Mapping], Any] | None = None
    analytic_moments: Callable[[Mapping], tuple[float, float]] | None = None
    bounds: Callable[[Mapping], tuple[float, float]] = field(default=lambda p: (-math.inf, math.inf))
    styles: Mapping[str, Callable[[Mapping, str], str]] = field(default_factory=dict, compare=False)
    #: The support kind of validated params, for families whose kind depends on them (``support`` otherwise).
    support_of: Callable[[Mapping], str] | None = field(default=None, compare=False)

    def validate(self, params: Mapping) -> dict:
        if not isinstance(params, Mapping):
            raise ParameterError(f"{self.name}: params must be a mapping, got {type(params).__name__}")
        return self.check(params)

    def sample(self, params: Mapping, size: int, rng: np.random.Generator) -> np.ndarray:
        p = self.validate(params)
        return self.draw(rng, p, int(size))

    def describe(self, params: Mapping, style: str = "prompt", convention: str = "rate") -> str:
        """The description of ``params`` in ``style`` (see :data:`DESCRIPTION_STYLES`); ``convention`` says how
        an ``odds``-style exponential is stated (``rate`` or ``scale``; ``none`` for other families)."""
        if style not in DESCRIPTION_STYLES:
            raise ParameterError(f"unknown description style {style!r}; expected one of "
                                 f"{', '.join(DESCRIPTION_STYLES)}")
        if convention not in STATED_AS:
            raise ParameterError(f"unknown convention {convention!r}; expected one of {', '.join(STATED_AS)}")
        p = self.validate(params)
        if style == "prompt":
            return self.text(p)
        if style not in self.styles:
            raise ParameterError(f"{self.name}: no {style}-style description")
        return self.styles[style](p, convention)


FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> Family:
    """Add ``family`` to :data:`FAMILIES` (under ``family.name``, which must be new) and return it. Registering
    a family adds it to no bank: banks name their families explicitly."""
    if not isinstance(family, Family):
        raise TypeError(f"register_family needs a Family, got {type(family).__name__}")
    if family.name in FAMILIES:
        raise ParameterError(f"family {family.name!r} is already registered")
    FAMILIES[family.name] = family
    return family


def _register(**kw) -> Family:
    return register_family(Family(**kw))


def _keep(fam: str, spec: dict[str, dict]) -> Callable[[Mapping], dict]:
    """Build a checker from {param: kwargs for _num}; unknown keys are an error."""

    def check(params: Mapping) -> dict:
        unknown = set(params) - set(spec)
        if unknown:
            raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}; expected {sorted(spec)}")
        out = {}
        for key, kw in spec.items():
            kw = dict(kw)
            default = kw.pop("default", None)
            if key not in params and default is not None:
                out[key] = default
                continue
            v = _num(fam, params, key, **kw)
            out[key] = int(v) if kw.get("integer") else v
        return out

    return check


def _locscale(fam, extra: dict | None = None):
    return _keep(fam, {**(extra or {}), "loc": REAL, "scale": POS})


POS = dict(low=0.0, low_open=True)
PROB = dict(low=0.0, high=1.0)
INT_POS = dict(low=1, integer=True)
INT_NN = dict(low=0, integer=True)
REAL: dict = {}


# --------------------------------------------------------------------------------------------------------------
# public functions

def get_family(name: str) -> Family:
    """Return the :class:`Family` called ``name``, a registered one or one an installed package declares under the
    entry-point group ``unpredictabench.families`` (:mod:`ub_core.plugins`); unknown names raise a one-line
    ``KeyError``-free ValueError."""
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        pass
    from ..plugins import FAMILIES_GROUP, discover, load_errors

    if isinstance(name, str):
        discover(FAMILIES_GROUP, Family, FAMILIES, register_family, force=True)
        if name in FAMILIES:
            return FAMILIES[name]
    why = load_errors(FAMILIES_GROUP).get(name) if isinstance(name, str) else None
    raise ParameterError(f"unknown distribution family {name!r}; known: {', '.join(sorted(FAMILIES))}"
                         + (f" (the plug-in {name!r} could not be loaded: {why})" if why else ""))


def validate(family: str, params: Mapping) -> dict:
    """Validate and normalise ``params`` for ``family`` (defaults filled in)."""
    return get_family(family).validate(params)


def support_kind(family: str, params: Mapping | None = None) -> str:
    """The support kind; a mixture's depends on its components."""
    fam = get_family(family)
    if fam.support_of is not None and params is not None:
        return fam.support_of(fam.validate(params))
    return fam.support


def sample(family: str, params: Mapping, size: int,
           seed: int | np.random.Generator | np.random.SeedSequence | None = None
           ) -> np.ndarray:
    """Draw ``size`` values of ``family`` with ``params``.

    ``seed`` may be an int, a :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`. The same
    seed gives bit-identical draws in any process. Scalar families return shape ``(size,)`` floats; the
    permutation family returns ``(size, n)`` integer indices.
    """
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ParameterError(f"size must be a non-negative integer, got {size!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return get_family(family).sample(params, int(size), rng)


def describe(family: str, params: Mapping, style: str = "prompt", *, convention: str = "rate") -> str:
    """Plain-text description of ``family`` with ``params`` (validated first), stating the parameter convention.

    The one describer of the package: ``style="prompt"`` (default) is the phrase the KS@N prompts embed ("a normal
    distribution with mean 0 and standard deviation 1"); ``style="odds"`` is the description block of the "What
    are the odds" bank ("Normal distribution with mean 0 and standard deviation 1."), where ``convention`` states
    an exponential as a ``rate`` (default) or a ``scale`` (``none`` for the other families). A family without the
    style, an unknown style or convention raise a one-line :class:`ParameterError`.
    """
    return get_family(family).describe(params, style, convention)


def frozen(family: str, params: Mapping):
    """The scipy frozen distribution of ``family`` (or of its scalar reduction), or ``None`` where scipy has none."""
    fam = get_family(family)
    if fam.scipy_dist is None:
        return None
    return fam.scipy_dist(fam.validate(params))


def moments(family: str, params: Mapping) -> tuple[float, float]:
    """Analytic (mean, variance) of the scalar a draw reports; ``inf``/``nan`` where a moment does not exist."""
    fam = get_family(family)
    p = fam.validate(params)
    if fam.analytic_moments is not None:
        return fam.analytic_moments(p)
    if fam.scipy_dist is None:
        raise ParameterError(f"{family}: no analytic moments available")
    m, v = fam.scipy_dist(p).stats(moments="mv")
    return float(m), float(v)


def support_bounds(family: str, params: Mapping) -> tuple[float, float]:
    """Closed bounds (low, high) of the support; infinite where unbounded."""
    fam = get_family(family)
    return fam.bounds(fam.validate(params))
