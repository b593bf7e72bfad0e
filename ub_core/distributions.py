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
``unpredictabench.families`` (found on first use of the name: :func:`get_family`). Which families a bank uses is an explicit list of names
(:data:`TABLE10_FAMILIES`, :data:`ODDS_EXTRA_FAMILIES`), never the order of registration, so registering another
family changes no bank.

Parameter names follow ``numpy.random.Generator`` where numpy has the distribution, otherwise scipy.stats'
shape names plus ``loc``/``scale``. Joint families (Dirichlet, multinomial, multivariate normal and t, negative
multinomial) are reduced to a stated scalar: one coordinate (``component``) or, for the multivariate normal/t,
optionally the sum of the coordinates (``reduce="sum"``).

Public entry point: :func:`sample` ``(family, params, size, seed) -> numpy.ndarray``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import stats

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


POS = dict(low=0.0, low_open=True)
PROB = dict(low=0.0, high=1.0)
INT_POS = dict(low=1, integer=True)
INT_NN = dict(low=0, integer=True)
REAL: dict = {}


# ---------------------------------------------------------------- absolutely continuous, bounded interval

def _check_beta(p):
    return _keep("beta", {"a": POS, "b": POS})(p)


_register(name="beta", title="Beta", group="continuous_bounded", support="continuous",
          param_doc="a, b > 0 (shape parameters); support [0, 1]",
          check=_check_beta, draw=lambda r, p, n: r.beta(p["a"], p["b"], n),
          text=lambda p: f"a Beta distribution with shape parameters alpha = {fmt(p['a'])} and beta = {fmt(p['b'])}"
                         " (values lie between 0 and 1)",
          scipy_dist=lambda p: stats.beta(p["a"], p["b"]), bounds=lambda p: (0.0, 1.0))


def _check_interval(fam):
    base = _keep(fam, {"low": REAL, "high": REAL})

    def check(p):
        out = base(p)
        if not out["low"] < out["high"]:
            raise ParameterError(f"{fam}: 'low' must be < 'high', got low={fmt(out['low'])}, high={fmt(out['high'])}")
        return out

    return check


_register(name="arcsine", title="Arcsine", group="continuous_bounded", support="continuous",
          param_doc="low < high; density 1/(pi*sqrt((x-low)(high-x))) on (low, high)",
          check=_check_interval("arcsine"),
          draw=lambda r, p, n: p["low"] + (p["high"] - p["low"]) * np.sin(0.5 * np.pi * r.random(n)) ** 2,
          text=lambda p: f"the arcsine distribution on the interval from {fmt(p['low'])} to {fmt(p['high'])} "
                         "(density proportional to 1/sqrt((x - low)(high - x)), so values pile up near both ends)",
          scipy_dist=lambda p: stats.arcsine(loc=p["low"], scale=p["high"] - p["low"]),
          bounds=lambda p: (p["low"], p["high"]))


def _check_reciprocal(p):
    out = _keep("reciprocal", {"a": POS, "b": POS})(p)
    if not out["a"] < out["b"]:
        raise ParameterError(f"reciprocal: 'a' must be < 'b', got a={fmt(out['a'])}, b={fmt(out['b'])}")
    return out


_register(name="reciprocal", title="Reciprocal (log-uniform)", group="continuous_bounded", support="continuous",
          param_doc="0 < a < b; density proportional to 1/x on [a, b]",
          check=_check_reciprocal,
          draw=lambda r, p, n: np.exp(r.uniform(math.log(p["a"]), math.log(p["b"]), n)),
          text=lambda p: f"the reciprocal (log-uniform) distribution on [{fmt(p['a'])}, {fmt(p['b'])}], "
                         "whose density is proportional to 1/x, so the logarithm of the value is uniform",
          scipy_dist=lambda p: stats.loguniform(p["a"], p["b"]), bounds=lambda p: (p["a"], p["b"]))


def _check_triangular(p):
    out = _keep("triangular", {"left": REAL, "mode": REAL, "right": REAL})(p)
    if not (out["left"] <= out["mode"] <= out["right"] and out["left"] < out["right"]):
        raise ParameterError("triangular: need left <= mode <= right and left < right, got "
                             f"left={fmt(out['left'])}, mode={fmt(out['mode'])}, right={fmt(out['right'])}")
    return out


_register(name="triangular", title="Triangular", group="continuous_bounded", support="continuous",
          param_doc="left <= mode <= right",
          check=_check_triangular, draw=lambda r, p, n: r.triangular(p["left"], p["mode"], p["right"], n),
          text=lambda p: f"a triangular distribution with minimum {fmt(p['left'])}, peak (mode) at "
                         f"{fmt(p['mode'])} and maximum {fmt(p['right'])}",
          scipy_dist=lambda p: stats.triang((p["mode"] - p["left"]) / (p["right"] - p["left"]),
                                            loc=p["left"], scale=p["right"] - p["left"]),
          bounds=lambda p: (p["left"], p["right"]))


def _check_truncnorm(p):
    out = _keep("truncated_normal", {"loc": REAL, "scale": POS, "low": REAL, "high": REAL})(p)
    if not out["low"] < out["high"]:
        raise ParameterError("truncated_normal: 'low' must be < 'high'")
    return out


def _truncnorm(p):
    return stats.truncnorm((p["low"] - p["loc"]) / p["scale"], (p["high"] - p["loc"]) / p["scale"],
                           loc=p["loc"], scale=p["scale"])


_register(name="truncated_normal", title="Truncated normal", group="continuous_bounded", support="continuous",
          param_doc="loc, scale > 0 of the parent normal; truncation interval [low, high]",
          check=_check_truncnorm,
          draw=lambda r, p, n: _truncnorm(p).rvs(size=n, random_state=r),
          text=lambda p: f"a normal distribution with mean {fmt(p['loc'])} and standard deviation "
                         f"{fmt(p['scale'])}, truncated to the interval [{fmt(p['low'])}, {fmt(p['high'])}] "
                         "(values outside are impossible; the density inside is renormalised)",
          scipy_dist=_truncnorm, bounds=lambda p: (p["low"], p["high"]))


def _odds_uniform(p, convention):
    return f"Continuous uniform distribution on the interval from {_exact(p['low'])} to {_exact(p['high'])}."


_register(name="uniform", title="Uniform", group="continuous_bounded", support="continuous",
          param_doc="low < high", check=_check_interval("uniform"),
          draw=lambda r, p, n: r.uniform(p["low"], p["high"], n),
          text=lambda p: f"the continuous uniform distribution on the interval [{fmt(p['low'])}, {fmt(p['high'])}]",
          styles={"odds": _odds_uniform},
          scipy_dist=lambda p: stats.uniform(p["low"], p["high"] - p["low"]),
          bounds=lambda p: (p["low"], p["high"]))

# ---------------------------------------------------------------- absolutely continuous, semi-infinite

_register(name="erlang", title="Erlang", group="continuous_semi_infinite", support="continuous",
          param_doc="k >= 1 integer (number of stages), scale > 0 (mean of each exponential stage)",
          check=_keep("erlang", {"k": INT_POS, "scale": POS}),
          draw=lambda r, p, n: r.gamma(p["k"], p["scale"], n),
          text=lambda p: f"an Erlang distribution with shape k = {fmt(p['k'])} and scale {fmt(p['scale'])} "
                         f"(the sum of {fmt(p['k'])} independent exponential waiting times, each with mean "
                         f"{fmt(p['scale'])})",
          scipy_dist=lambda p: stats.erlang(p["k"], scale=p["scale"]), bounds=lambda p: (0.0, math.inf))

_register(name="f", title="F", group="continuous_semi_infinite", support="continuous",
          param_doc="dfnum > 0, dfden > 0 (degrees of freedom)",
          check=_keep("f", {"dfnum": POS, "dfden": POS}),
          draw=lambda r, p, n: r.f(p["dfnum"], p["dfden"], n),
          text=lambda p: f"an F distribution with {fmt(p['dfnum'])} numerator and {fmt(p['dfden'])} "
                         "denominator degrees of freedom",
          scipy_dist=lambda p: stats.f(p["dfnum"], p["dfden"]), bounds=lambda p: (0.0, math.inf))

def _frechet_moments(p):
    """Mean loc + scale G(1 - 1/c) for c > 1, variance scale^2 (G(1 - 2/c) - G(1 - 1/c)^2) for c > 2, infinite
    otherwise (scipy's ``invweibull.stats`` returns finite nonsense below those shapes)."""
    c, s, loc = p["c"], p["scale"], p["loc"]
    mean = loc + s * math.gamma(1 - 1 / c) if c > 1 else math.inf
    var = s * s * (math.gamma(1 - 2 / c) - math.gamma(1 - 1 / c) ** 2) if c > 2 else math.inf
    return mean, var


_register(name="frechet", title="Fréchet", group="continuous_semi_infinite", support="continuous",
          param_doc="c > 0 (shape), scale > 0, loc (support starts at loc); CDF exp(-((x-loc)/scale)^-c)",
          check=_keep("frechet", {"c": POS, "scale": POS, "loc": dict(default=0.0)}),
          draw=lambda r, p, n: p["loc"] + p["scale"] * r.standard_exponential(n) ** (-1.0 / p["c"]),
          text=lambda p: f"a Fréchet distribution with shape {fmt(p['c'])}, scale {fmt(p['scale'])} and "
                         f"location {fmt(p['loc'])} (CDF exp(-((x - {fmt(p['loc'])}) / {fmt(p['scale'])})^"
                         f"(-{fmt(p['c'])})) for x > {fmt(p['loc'])})",
          scipy_dist=lambda p: stats.invweibull(p["c"], loc=p["loc"], scale=p["scale"]),
          analytic_moments=lambda p: _frechet_moments(p),
          bounds=lambda p: (p["loc"], math.inf))


def _odds_gamma(p, convention):
    return (f"Gamma distribution with shape {_exact(p['shape'])} and scale {_exact(p['scale'])} (scale, not rate: "
            f"the mean is shape * scale = {_exact(p['shape'] * p['scale'])}).")


_register(name="gamma", title="Gamma", group="continuous_semi_infinite", support="continuous",
          param_doc="shape > 0, scale > 0 (mean = shape * scale)",
          check=_keep("gamma", {"shape": POS, "scale": POS}),
          draw=lambda r, p, n: r.gamma(p["shape"], p["scale"], n),
          text=lambda p: f"a Gamma distribution with shape {fmt(p['shape'])} and scale {fmt(p['scale'])} "
                         f"(scale, not rate: the mean is shape x scale = {fmt(p['shape'] * p['scale'])})",
          styles={"odds": _odds_gamma},
          scipy_dist=lambda p: stats.gamma(p["shape"], scale=p["scale"]), bounds=lambda p: (0.0, math.inf))

_register(name="pareto", title="Pareto (type I)", group="continuous_semi_infinite", support="continuous",
          param_doc="a > 0 (tail index), scale > 0 (minimum value x_m); P(X > x) = (x_m/x)^a for x >= x_m",
          check=_keep("pareto", {"a": POS, "scale": POS}),
          draw=lambda r, p, n: p["scale"] * (1.0 + r.pareto(p["a"], n)),
          text=lambda p: f"a Pareto (type I) distribution with tail index {fmt(p['a'])} and minimum value "
                         f"{fmt(p['scale'])} (P(X > x) = ({fmt(p['scale'])}/x)^{fmt(p['a'])} for x >= "
                         f"{fmt(p['scale'])})",
          scipy_dist=lambda p: stats.pareto(p["a"], scale=p["scale"]), bounds=lambda p: (p["scale"], math.inf))

_register(name="rayleigh", title="Rayleigh", group="continuous_semi_infinite", support="continuous",
          param_doc="scale > 0 (sigma)",
          check=_keep("rayleigh", {"scale": POS}), draw=lambda r, p, n: r.rayleigh(p["scale"], n),
          text=lambda p: f"a Rayleigh distribution with scale parameter sigma = {fmt(p['scale'])} (the length "
                         f"of a 2-D vector whose coordinates are independent normals with standard deviation "
                         f"{fmt(p['scale'])})",
          scipy_dist=lambda p: stats.rayleigh(scale=p["scale"]), bounds=lambda p: (0.0, math.inf))

_register(name="weibull", title="Weibull", group="continuous_semi_infinite", support="continuous",
          param_doc="a > 0 (shape), scale > 0; CDF 1 - exp(-(x/scale)^a)",
          check=_keep("weibull", {"a": POS, "scale": POS}),
          draw=lambda r, p, n: p["scale"] * r.weibull(p["a"], n),
          text=lambda p: f"a Weibull distribution with shape {fmt(p['a'])} and scale {fmt(p['scale'])} "
                         f"(CDF 1 - exp(-(x/{fmt(p['scale'])})^{fmt(p['a'])}) for x >= 0)",
          scipy_dist=lambda p: stats.weibull_min(p["a"], scale=p["scale"]), bounds=lambda p: (0.0, math.inf))

_register(name="chi_squared", title="Chi-squared", group="continuous_semi_infinite", support="continuous",
          param_doc="df > 0 (degrees of freedom)",
          check=_keep("chi_squared", {"df": POS}), draw=lambda r, p, n: r.chisquare(p["df"], n),
          text=lambda p: f"a chi-squared distribution with {fmt(p['df'])} degrees of freedom",
          scipy_dist=lambda p: stats.chi2(p["df"]), bounds=lambda p: (0.0, math.inf))


def _odds_exponential(p, convention):
    if convention == "rate":
        return (f"Exponential distribution with rate lambda = {_exact(1.0 / p['scale'])} events per unit of "
                f"time (a rate, not a scale: the mean value is 1/lambda); values are >= 0.")
    return (f"Exponential distribution with scale {_exact(p['scale'])} (a scale, not a rate: the scale is the "
            f"mean value, and the rate is 1/scale); values are >= 0.")


_register(name="exponential", title="Exponential", group="continuous_semi_infinite", support="continuous",
          param_doc="scale > 0 (mean = 1/rate)",
          check=_keep("exponential", {"scale": POS}), draw=lambda r, p, n: r.exponential(p["scale"], n),
          text=lambda p: f"an exponential distribution with mean {fmt(p['scale'])} (scale {fmt(p['scale'])}, "
                         f"that is rate {fmt(1.0 / p['scale'])} per unit)",
          styles={"odds": _odds_exponential},
          scipy_dist=lambda p: stats.expon(scale=p["scale"]), bounds=lambda p: (0.0, math.inf))

_register(name="inverse_gaussian", title="Inverse Gaussian (Wald)", group="continuous_semi_infinite",
          support="continuous", param_doc="mean > 0, scale > 0 (the shape parameter lambda)",
          check=_keep("inverse_gaussian", {"mean": POS, "scale": POS}),
          draw=lambda r, p, n: r.wald(p["mean"], p["scale"], n),
          text=lambda p: f"an inverse Gaussian (Wald) distribution with mean {fmt(p['mean'])} and shape "
                         f"parameter lambda = {fmt(p['scale'])}",
          scipy_dist=lambda p: stats.invgauss(p["mean"] / p["scale"], scale=p["scale"]),
          bounds=lambda p: (0.0, math.inf))


def _odds_log_normal(p, convention):
    return (f"Log-normal distribution: the natural logarithm of a value is normally distributed with mean "
            f"{_exact(p['mean'])} and standard deviation {_exact(p['sigma'])} (so the median value is "
            f"exp({_exact(p['mean'])})).")


_register(name="log_normal", title="Log-normal", group="continuous_semi_infinite", support="continuous",
          param_doc="mean, sigma > 0: the mean and standard deviation of log(X)",
          check=_keep("log_normal", {"mean": REAL, "sigma": POS}),
          draw=lambda r, p, n: r.lognormal(p["mean"], p["sigma"], n),
          text=lambda p: f"a log-normal distribution whose logarithm is normal with mean {fmt(p['mean'])} and "
                         f"standard deviation {fmt(p['sigma'])} (so the median is exp({fmt(p['mean'])}))",
          styles={"odds": _odds_log_normal},
          scipy_dist=lambda p: stats.lognorm(p["sigma"], scale=math.exp(p["mean"])),
          bounds=lambda p: (0.0, math.inf))

# ---------------------------------------------------------------- absolutely continuous, whole real line


def _locscale(fam, extra: dict | None = None):
    return _keep(fam, {**(extra or {}), "loc": REAL, "scale": POS})


def _odds_gumbel(p, convention):
    return (f"Gumbel distribution of maxima (right-skewed) with location {_exact(p['loc'])} (its mode) and scale "
            f"{_exact(p['scale'])}.")


_register(name="gumbel", title="Gumbel", group="continuous_real_line", support="continuous",
          param_doc="loc (mode), scale > 0; CDF exp(-exp(-(x-loc)/scale))",
          check=_locscale("gumbel"), draw=lambda r, p, n: r.gumbel(p["loc"], p["scale"], n),
          text=lambda p: f"a Gumbel (maximum) distribution with location {fmt(p['loc'])} and scale "
                         f"{fmt(p['scale'])} (CDF exp(-exp(-(x - {fmt(p['loc'])}) / {fmt(p['scale'])})))",
          styles={"odds": _odds_gumbel},
          scipy_dist=lambda p: stats.gumbel_r(p["loc"], p["scale"]))

_register(name="laplace", title="Laplace", group="continuous_real_line", support="continuous",
          param_doc="loc, scale > 0 (density exp(-|x-loc|/scale)/(2 scale))",
          check=_locscale("laplace"), draw=lambda r, p, n: r.laplace(p["loc"], p["scale"], n),
          text=lambda p: f"a Laplace (double exponential) distribution with location {fmt(p['loc'])} and scale "
                         f"{fmt(p['scale'])} (density proportional to exp(-|x - {fmt(p['loc'])}| / "
                         f"{fmt(p['scale'])}))",
          scipy_dist=lambda p: stats.laplace(p["loc"], p["scale"]))

_register(name="students_t", title="Student's t", group="continuous_real_line", support="continuous",
          param_doc="df > 0, loc, scale > 0 (X = loc + scale * T_df)",
          check=_keep("students_t", {"df": POS, "loc": dict(default=0.0), "scale": dict(POS, default=1.0)}),
          draw=lambda r, p, n: p["loc"] + p["scale"] * r.standard_t(p["df"], n),
          text=lambda p: (f"a Student's t distribution with {fmt(p['df'])} degrees of freedom"
                          + ("" if p["loc"] == 0 and p["scale"] == 1 else
                             f", shifted to centre {fmt(p['loc'])} and scaled by {fmt(p['scale'])}"
                             f" (value = {fmt(p['loc'])} + {fmt(p['scale'])} x T)")),
          scipy_dist=lambda p: stats.t(p["df"], p["loc"], p["scale"]))

_register(name="cauchy", title="Cauchy", group="continuous_real_line", support="continuous",
          param_doc="loc, scale > 0 (density 1 / (pi scale (1 + ((x-loc)/scale)^2)); no mean)",
          check=_locscale("cauchy"), draw=lambda r, p, n: p["loc"] + p["scale"] * r.standard_cauchy(n),
          text=lambda p: f"a Cauchy distribution with location {fmt(p['loc'])} and scale {fmt(p['scale'])}",
          scipy_dist=lambda p: stats.cauchy(p["loc"], p["scale"]))

_register(name="logistic", title="Logistic", group="continuous_real_line", support="continuous",
          param_doc="loc, scale > 0; CDF 1/(1+exp(-(x-loc)/scale))",
          check=_locscale("logistic"), draw=lambda r, p, n: r.logistic(p["loc"], p["scale"], n),
          text=lambda p: f"a logistic distribution with location {fmt(p['loc'])} and scale {fmt(p['scale'])} "
                         f"(CDF 1 / (1 + exp(-(x - {fmt(p['loc'])}) / {fmt(p['scale'])})))",
          scipy_dist=lambda p: stats.logistic(p["loc"], p["scale"]))


def _odds_normal(p, convention):
    return f"Normal distribution with mean {_exact(p['loc'])} and standard deviation {_exact(p['scale'])}."


_register(name="normal", title="Normal", group="continuous_real_line", support="continuous",
          param_doc="loc (mean), scale > 0 (standard deviation)",
          check=_locscale("normal"), draw=lambda r, p, n: r.normal(p["loc"], p["scale"], n),
          text=lambda p: f"a normal distribution with mean {fmt(p['loc'])} and standard deviation "
                         f"{fmt(p['scale'])}",
          styles={"odds": _odds_normal},
          scipy_dist=lambda p: stats.norm(p["loc"], p["scale"]))

# ---------------------------------------------------------------- discrete, finite support

_register(name="bernoulli", title="Bernoulli", group="discrete_finite", support="discrete",
          param_doc="p in [0, 1]: P(X = 1)",
          check=_keep("bernoulli", {"p": PROB}), draw=lambda r, p, n: (r.random(n) < p["p"]).astype(float),
          text=lambda p: f"a Bernoulli distribution that gives 1 with probability {fmt(p['p'])} and 0 otherwise",
          scipy_dist=lambda p: stats.bernoulli(p["p"]), bounds=lambda p: (0.0, 1.0))


def _check_pbinom(params):
    unknown = set(params) - {"p"}
    if unknown:
        raise ParameterError(f"poisson_binomial: unknown parameter(s) {sorted(unknown)}; expected ['p']")
    return {"p": [float(x) for x in _vec("poisson_binomial", params, "p", prob=True, min_len=1)]}


def _pbinom_pmf(ps: Sequence[float]) -> np.ndarray:
    """Exact PMF of a sum of independent Bernoulli(p_i) by sequential convolution."""
    pmf = np.array([1.0])
    for q in ps:
        pmf = np.convolve(pmf, [1.0 - q, q])
    return pmf


_register(name="poisson_binomial", title="Poisson binomial", group="discrete_finite", support="discrete",
          param_doc="p: list of success probabilities of independent trials; X = number of successes",
          check=_check_pbinom,
          draw=lambda r, p, n: (r.random((n, len(p["p"]))) < np.asarray(p["p"])).sum(axis=1).astype(float),
          text=lambda p: f"the number of successes in {len(p['p'])} independent trials whose success "
                         f"probabilities are {fmt(p['p'])} (a Poisson binomial distribution)",
          scipy_dist=lambda p: stats.rv_discrete(values=(np.arange(len(p["p"]) + 1), _pbinom_pmf(p["p"]))),
          bounds=lambda p: (0.0, float(len(p["p"]))))

_register(name="beta_binomial", title="Beta-binomial", group="discrete_finite", support="discrete",
          param_doc="n >= 0 trials, a > 0, b > 0: p ~ Beta(a, b), X ~ Binomial(n, p)",
          check=_keep("beta_binomial", {"n": INT_NN, "a": POS, "b": POS}),
          draw=lambda r, p, n: r.binomial(p["n"], r.beta(p["a"], p["b"], n)).astype(float),
          text=lambda p: f"a beta-binomial distribution: the number of successes in {fmt(p['n'])} trials whose "
                         f"common success probability is itself drawn from Beta({fmt(p['a'])}, {fmt(p['b'])})",
          scipy_dist=lambda p: stats.betabinom(p["n"], p["a"], p["b"]), bounds=lambda p: (0.0, float(p["n"])))


def _odds_binomial(p, convention):
    return (f"Binomial distribution: the number of successes in {_exact(p['n'])} independent trials, each a "
            f"success with probability {_exact(p['p'])}; values 0 to {_exact(p['n'])}.")


_register(name="binomial", title="Binomial", group="discrete_finite", support="discrete",
          param_doc="n >= 0 trials, p in [0, 1]",
          check=_keep("binomial", {"n": INT_NN, "p": PROB}),
          draw=lambda r, p, n: r.binomial(p["n"], p["p"], n).astype(float),
          text=lambda p: f"a binomial distribution with {fmt(p['n'])} trials and success probability "
                         f"{fmt(p['p'])}",
          styles={"odds": _odds_binomial},
          scipy_dist=lambda p: stats.binom(p["n"], p["p"]), bounds=lambda p: (0.0, float(p["n"])))


def _check_dunif(params):
    out = _keep("discrete_uniform", {"low": dict(integer=True), "high": dict(integer=True)})(params)
    if out["low"] > out["high"]:
        raise ParameterError("discrete_uniform: 'low' must be <= 'high'")
    return out


_register(name="discrete_uniform", title="Discrete uniform", group="discrete_finite", support="discrete",
          param_doc="integers low <= high, both ends included",
          check=_check_dunif, draw=lambda r, p, n: r.integers(p["low"], p["high"], n, endpoint=True).astype(float),
          text=lambda p: f"the discrete uniform distribution on the integers from {fmt(p['low'])} to "
                         f"{fmt(p['high'])}, both ends included, each equally likely",
          scipy_dist=lambda p: stats.randint(p["low"], p["high"] + 1),
          bounds=lambda p: (float(p["low"]), float(p["high"])))


def _check_hyper(params):
    out = _keep("hypergeometric", {"ngood": INT_NN, "nbad": INT_NN, "nsample": INT_POS})(params)
    if out["nsample"] > out["ngood"] + out["nbad"]:
        raise ParameterError("hypergeometric: 'nsample' must be <= ngood + nbad")
    return out


_register(name="hypergeometric", title="Hypergeometric", group="discrete_finite", support="discrete",
          param_doc="ngood, nbad >= 0, 1 <= nsample <= ngood + nbad; X = good items in the draw",
          check=_check_hyper, draw=lambda r, p, n: r.hypergeometric(p["ngood"], p["nbad"], p["nsample"], n).astype(float),
          text=lambda p: f"the number of marked items when {fmt(p['nsample'])} items are drawn without "
                         f"replacement from a population of {fmt(p['ngood'] + p['nbad'])} items of which "
                         f"{fmt(p['ngood'])} are marked (a hypergeometric distribution)",
          scipy_dist=lambda p: stats.hypergeom(p["ngood"] + p["nbad"], p["ngood"], p["nsample"]),
          bounds=lambda p: (float(max(0, p["nsample"] - p["nbad"])), float(min(p["ngood"], p["nsample"]))))

# ---------------------------------------------------------------- discrete, infinite support


def _odds_poisson(p, convention):
    return f"Poisson distribution with mean (rate) lambda = {_exact(p['lam'])} events per interval; values 0, 1, 2, ..."


_register(name="poisson", title="Poisson", group="discrete_infinite", support="discrete",
          param_doc="lam >= 0 (mean)",
          check=_keep("poisson", {"lam": dict(low=0.0)}), draw=lambda r, p, n: r.poisson(p["lam"], n).astype(float),
          text=lambda p: f"a Poisson distribution with mean {fmt(p['lam'])}",
          styles={"odds": _odds_poisson},
          scipy_dist=lambda p: stats.poisson(p["lam"]), bounds=lambda p: (0.0, math.inf))

_register(name="skellam", title="Skellam", group="discrete_infinite", support="discrete",
          param_doc="mu1, mu2 > 0: X = N1 - N2 with independent Poisson means mu1, mu2",
          check=_keep("skellam", {"mu1": POS, "mu2": POS}),
          draw=lambda r, p, n: (r.poisson(p["mu1"], n) - r.poisson(p["mu2"], n)).astype(float),
          text=lambda p: f"a Skellam distribution: the difference N1 - N2 of two independent Poisson counts with "
                         f"means {fmt(p['mu1'])} and {fmt(p['mu2'])}",
          scipy_dist=lambda p: stats.skellam(p["mu1"], p["mu2"]))


def _check_cpois(params):
    """Jump sizes: geometric on 1, 2, ... with success probability ``p`` (the short form), or any registered
    numeric family ``jump = {family, params}`` (the general compound Poisson of the release programs)."""
    fam = "compound_poisson"
    unknown = set(params) - {"lam", "p", "jump"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}; expected lam and one of p, jump")
    lam = _num(fam, params, "lam", low=0.0)
    if ("p" in params) == ("jump" in params):
        raise ParameterError(f"{fam}: give exactly one of 'p' (geometric jumps) or 'jump' ({{family, params}})")
    if "p" in params:
        return {"lam": lam, "p": _num(fam, params, "p", low=0.0, low_open=True, high=1.0)}
    jump = params["jump"]
    if not isinstance(jump, Mapping) or set(jump) - {"family", "params"} or "family" not in jump:
        raise ParameterError(f"{fam}: 'jump' must be a mapping with keys family, params")
    name = jump["family"]
    if name in ("mixture", "uniform_permutation", "compound_poisson", "categorical") or name not in FAMILIES:
        raise ParameterError(f"{fam}: unsupported jump family {name!r}")
    return {"lam": lam, "jump": {"family": name, "params": FAMILIES[name].validate(jump.get("params", {}))}}


def _cpois_jumps(r, p, total):
    if "p" in p:
        return r.geometric(p["p"], total).astype(float)
    j = p["jump"]
    return np.asarray(FAMILIES[j["family"]].draw(r, j["params"], int(total)), dtype=float)


def _cpois_draw(r, p, n):
    counts = r.poisson(p["lam"], n)
    jumps = _cpois_jumps(r, p, counts.sum())
    # sum the jumps of each draw: segment sums via cumulative sums at the count boundaries
    csum = np.concatenate([[0.0], np.cumsum(jumps)])
    ends = np.cumsum(counts)
    out = csum[ends] - csum[ends - counts]
    return out if "jump" in p and FAMILIES[p["jump"]["family"]].support != "discrete" else np.rint(out)


def _cpois_support(p) -> str:
    if "p" in p or support_kind(p["jump"]["family"], p["jump"]["params"]) == "discrete":
        return "discrete"
    return "mixed" if p["lam"] > 0 else "discrete"  # an atom at 0 (no events) plus a continuous part


def _cpois_moments(p):
    """Mean lam E[J], variance lam E[J^2] (the law of total variance for a Poisson number of iid jumps J)."""
    if "p" in p:
        return p["lam"] / p["p"], p["lam"] * (2 - p["p"]) / p["p"] ** 2
    m, v = moments(p["jump"]["family"], p["jump"]["params"])
    return p["lam"] * m, p["lam"] * (v + m * m)


def _cpois_text(p):
    if "p" in p:
        each = (f"each event contributes an independent geometric amount on 1, 2, 3, ... with success probability "
                f"{fmt(p['p'])} (mean {fmt(1 / p['p'])})")
    else:
        each = f"each event contributes an independent amount drawn from {describe(p['jump']['family'], p['jump']['params'])}"
    return (f"a compound Poisson distribution: the number of events is Poisson with mean {fmt(p['lam'])}, {each}, "
            "and the value is the total (0 when there are no events)")


def _cpois_bounds(p):
    if "p" in p:
        return 0.0, math.inf
    lo, hi = support_bounds(p["jump"]["family"], p["jump"]["params"])
    return (0.0 if lo >= 0 else -math.inf), (0.0 if hi <= 0 else math.inf)


_register(name="compound_poisson", title="Compound Poisson", group="discrete_infinite", support="discrete",
          param_doc="lam >= 0 (mean number of events) and either p in (0, 1] (each event's size is geometric on 1, "
                    "2, ...) or jump = {family, params} (each event's size is a draw of that family)",
          check=_check_cpois, draw=_cpois_draw, text=_cpois_text, analytic_moments=_cpois_moments,
          bounds=_cpois_bounds, support_of=_cpois_support)


def _odds_geometric(p, convention):
    return (f"Geometric distribution: the number of independent trials up to and including the first success, "
            f"with success probability {_exact(p['p'])} per trial; values 1, 2, 3, ...")


_register(name="geometric", title="Geometric", group="discrete_infinite", support="discrete",
          param_doc="p in (0, 1]: number of trials up to and including the first success, support 1, 2, ...",
          check=_keep("geometric", {"p": dict(low=0.0, low_open=True, high=1.0)}),
          draw=lambda r, p, n: r.geometric(p["p"], n).astype(float),
          text=lambda p: f"a geometric distribution counting the trials up to and including the first success, "
                         f"with success probability {fmt(p['p'])} (support 1, 2, 3, ...)",
          styles={"odds": _odds_geometric},
          scipy_dist=lambda p: stats.geom(p["p"]), bounds=lambda p: (1.0, math.inf))

_register(name="negative_binomial", title="Negative binomial", group="discrete_infinite", support="discrete",
          param_doc="n > 0, p in (0, 1]: number of failures before the n-th success, support 0, 1, ...",
          check=_keep("negative_binomial", {"n": POS, "p": dict(low=0.0, low_open=True, high=1.0)}),
          draw=lambda r, p, n: r.negative_binomial(p["n"], p["p"], n).astype(float),
          text=lambda p: f"a negative binomial distribution counting the failures before success number "
                         f"{fmt(p['n'])}, with success probability {fmt(p['p'])} per trial (support 0, 1, 2, ...)",
          scipy_dist=lambda p: stats.nbinom(p["n"], p["p"]), bounds=lambda p: (0.0, math.inf))


# ---------------------------------------------------------------- joint distributions, reduced to a scalar

def _check_dirichlet(params):
    fam = "dirichlet"
    unknown = set(params) - {"alpha", "component"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}")
    alpha = _vec(fam, params, "alpha", positive=True, min_len=2)
    return {"alpha": [float(a) for a in alpha], "component": _component(fam, params, alpha.size)}


def _dirichlet_marginal(p):
    a = np.asarray(p["alpha"])
    c = p["component"]
    return stats.beta(a[c], a.sum() - a[c])


_register(name="dirichlet", title="Dirichlet", group="joint", support="continuous",
          param_doc="alpha: list of concentrations > 0; reduced to coordinate `component` (0-based)",
          check=_check_dirichlet,
          draw=lambda r, p, n: r.dirichlet(p["alpha"], n)[:, p["component"]],
          text=lambda p: f"a Dirichlet distribution with concentration parameters {fmt(p['alpha'])}; a draw is "
                         f"a vector of {len(p['alpha'])} proportions summing to 1, and the value to report is "
                         f"coordinate number {p['component'] + 1} of that vector",
          scipy_dist=_dirichlet_marginal, bounds=lambda p: (0.0, 1.0))


def _check_multinomial(params):
    fam = "multinomial"
    unknown = set(params) - {"n", "pvals", "component"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}")
    n = int(_num(fam, params, "n", **INT_NN))
    pv = _simplex(fam, params, "pvals")
    return {"n": n, "pvals": [float(x) for x in pv], "component": _component(fam, params, pv.size)}


def _odds_multinomial(p, convention):
    probs = ", ".join(f"outcome {i + 1} with probability {_exact(q)}" for i, q in enumerate(p["pvals"]))
    return (f"Multinomial distribution: {_exact(p['n'])} independent trials, each giving {probs}. The value is "
            f"the number of trials that give outcome {p['component'] + 1}.")


_register(name="multinomial", title="Multinomial", group="joint", support="discrete",
          param_doc="n trials, pvals (sums to 1); reduced to the count of category `component`",
          check=_check_multinomial,
          draw=lambda r, p, n: r.multinomial(p["n"], p["pvals"], n)[:, p["component"]].astype(float),
          text=lambda p: f"a multinomial distribution with {fmt(p['n'])} trials and category probabilities "
                         f"{fmt(p['pvals'])}; the value to report is the count of category number "
                         f"{p['component'] + 1}",
          styles={"odds": _odds_multinomial},
          scipy_dist=lambda p: stats.binom(p["n"], p["pvals"][p["component"]]),
          bounds=lambda p: (0.0, float(p["n"])))


def _check_mvn(params):
    fam = "multivariate_normal"
    unknown = set(params) - {"mean", "cov", "component", "reduce"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}")
    mean = _vec(fam, params, "mean", min_len=2)
    cov = _cov(fam, params, "cov", mean.size)
    return {"mean": mean.tolist(), "cov": cov.tolist(), "component": _component(fam, params, mean.size),
            "reduce": _reduce(fam, params)}


def _mvn_marginal(p):
    mean, cov = np.asarray(p["mean"]), np.asarray(p["cov"])
    if p["reduce"] == "sum":
        return stats.norm(mean.sum(), math.sqrt(cov.sum()))
    c = p["component"]
    return stats.norm(mean[c], math.sqrt(cov[c, c]))


def _reduction_text(p, what="coordinate"):
    if p["reduce"] == "sum":
        return "the value to report is the sum of the coordinates"
    return f"the value to report is {what} number {p['component'] + 1}"


def _reduce_draws(x, p):
    return x.sum(axis=1) if p["reduce"] == "sum" else x[:, p["component"]]


_register(name="multivariate_normal", title="Multivariate normal", group="joint", support="continuous",
          param_doc="mean vector, cov (SPD); reduced to coordinate `component` or, with reduce='sum', the sum",
          check=_check_mvn,
          draw=lambda r, p, n: _reduce_draws(r.multivariate_normal(p["mean"], p["cov"], n, method="cholesky"), p),
          text=lambda p: f"a multivariate normal distribution with mean vector {fmt(p['mean'])} and covariance "
                         f"matrix {fmt(p['cov'])}; {_reduction_text(p)}",
          scipy_dist=_mvn_marginal)


def _check_mvt(params):
    fam = "multivariate_t"
    unknown = set(params) - {"loc", "shape", "df", "component", "reduce"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}")
    loc = _vec(fam, params, "loc", min_len=2)
    shape = _cov(fam, params, "shape", loc.size)
    df = _num(fam, params, "df", **POS)
    return {"loc": loc.tolist(), "shape": shape.tolist(), "df": df,
            "component": _component(fam, params, loc.size), "reduce": _reduce(fam, params)}


def _mvt_draw(r, p, n):
    z = r.multivariate_normal(np.zeros(len(p["loc"])), p["shape"], n, method="cholesky")
    w = np.sqrt(r.chisquare(p["df"], n) / p["df"])
    return _reduce_draws(np.asarray(p["loc"]) + z / w[:, None], p)


def _mvt_marginal(p):
    loc, shape = np.asarray(p["loc"]), np.asarray(p["shape"])
    if p["reduce"] == "sum":
        return stats.t(p["df"], loc.sum(), math.sqrt(shape.sum()))
    c = p["component"]
    return stats.t(p["df"], loc[c], math.sqrt(shape[c, c]))


_register(name="multivariate_t", title="Multivariate t", group="joint", support="continuous",
          param_doc="loc vector, shape matrix (SPD), df > 0; reduced to a coordinate or the sum",
          check=_check_mvt, draw=_mvt_draw,
          text=lambda p: f"a multivariate Student's t distribution with {fmt(p['df'])} degrees of freedom, "
                         f"location vector {fmt(p['loc'])} and shape (scale) matrix {fmt(p['shape'])}; "
                         f"{_reduction_text(p)}",
          scipy_dist=_mvt_marginal)


def _check_negmult(params):
    fam = "negative_multinomial"
    unknown = set(params) - {"n", "pvals", "component"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}")
    n = _num(fam, params, "n", **POS)
    pv = _simplex(fam, params, "pvals", min_len=2)
    if pv[0] <= 0:
        raise ParameterError(f"{fam}: the stopping probability pvals[0] must be > 0")
    return {"n": n, "pvals": [float(x) for x in pv], "component": _component(fam, params, pv.size - 1)}


def _negmult_draw(r, p, n):
    pv = np.asarray(p["pvals"])
    # non-stopping trials before the n-th stop are NB(n, p0); split them among the other outcomes
    total = r.negative_binomial(p["n"], pv[0], n)
    q = pv[1 + p["component"]] / (1.0 - pv[0])
    return r.binomial(total, q).astype(float)


def _negmult_marginal(p):
    pv = p["pvals"]
    pc = pv[1 + p["component"]]
    return stats.nbinom(p["n"], pv[0] / (pv[0] + pc))


_register(name="negative_multinomial", title="Negative multinomial", group="joint", support="discrete",
          param_doc="n > 0 stops, pvals with pvals[0] the stopping outcome; reduced to the count of outcome "
                    "component+1",
          check=_check_negmult, draw=_negmult_draw,
          text=lambda p: f"a negative multinomial distribution: independent trials have outcome 0 (stop) with "
                         f"probability {fmt(p['pvals'][0])} and outcomes 1 to {len(p['pvals']) - 1} with "
                         f"probabilities {fmt(p['pvals'][1:])}; trials continue until outcome 0 has occurred "
                         f"{fmt(p['n'])} times, and the value to report is how many times outcome "
                         f"{p['component'] + 1} occurred",
          scipy_dist=_negmult_marginal, bounds=lambda p: (0.0, math.inf))


# ---------------------------------------------------------------- mixed discrete-continuous

def _rect_cdf_moments(p):
    mu, s = p["loc"], p["scale"]
    a = mu / s
    phi, Phi = stats.norm.pdf(a), stats.norm.cdf(a)
    m1 = mu * Phi + s * phi
    m2 = (mu * mu + s * s) * Phi + mu * s * phi
    return m1, m2 - m1 * m1


_register(name="rectified_gaussian", title="Rectified Gaussian", group="mixed", support="mixed",
          param_doc="loc, scale > 0 of the parent normal; X = max(0, Y), an atom at 0",
          check=_locscale("rectified_gaussian"),
          draw=lambda r, p, n: np.maximum(0.0, r.normal(p["loc"], p["scale"], n)),
          text=lambda p: f"a rectified Gaussian: draw from a normal distribution with mean {fmt(p['loc'])} and "
                         f"standard deviation {fmt(p['scale'])}, and replace any negative result by exactly 0",
          analytic_moments=_rect_cdf_moments, bounds=lambda p: (0.0, math.inf))


# ---------------------------------------------------------------- non-numeric

def _check_categorical(params):
    fam = "categorical"
    unknown = set(params) - {"pvals", "labels"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}")
    pv = _simplex(fam, params, "pvals")
    labels = params.get("labels")
    if labels is None:
        labels = [chr(ord("A") + i) for i in range(pv.size)]
    if (not isinstance(labels, (list, tuple)) or len(labels) != pv.size
            or not all(isinstance(x, str) and x.strip() for x in labels)):
        raise ParameterError(f"{fam}: 'labels' must be {pv.size} non-empty strings")
    if len({x.strip().lower() for x in labels}) != len(labels):
        raise ParameterError(f"{fam}: 'labels' must be distinct (case-insensitive)")
    return {"pvals": [float(x) for x in pv], "labels": list(labels)}


def _categorical_text(p):
    parts = ", ".join(f"'{lab}' with probability {fmt(q)}" for lab, q in zip(p["labels"], p["pvals"]))
    return f"a categorical distribution over {len(p['labels'])} labels: {parts}"


_register(name="categorical", title="Categorical", group="non_numeric", support="categorical",
          param_doc="pvals (sums to 1), labels; samples are the 0-based label codes",
          check=_check_categorical,
          draw=lambda r, p, n: r.choice(len(p["pvals"]), size=n, p=p["pvals"]).astype(float),
          text=_categorical_text,
          scipy_dist=lambda p: stats.rv_discrete(values=(np.arange(len(p["pvals"])), p["pvals"])),
          bounds=lambda p: (0.0, float(len(p["pvals"]) - 1)))

#: The 40 families of table 10 (UnpredictaBench, appendix A), in the table's order: the KS@N bank's generated problems,
#: the regimes and the implicit templates cover exactly these.
TABLE10_FAMILIES: tuple[str, ...] = (
    # continuous, bounded interval
    "beta", "arcsine", "reciprocal", "triangular", "truncated_normal", "uniform",
    # continuous, semi-infinite
    "erlang", "f", "frechet", "gamma", "pareto", "rayleigh_mixture", "weibull", "chi_squared", "exponential",
    "inverse_gaussian", "log_normal",
    # continuous, whole real line
    "gumbel", "laplace", "students_t", "logistic", "normal",
    # discrete, finite support
    "bernoulli", "poisson_binomial", "beta_binomial", "binomial", "discrete_uniform", "hypergeometric",
    # discrete, infinite support
    "poisson", "skellam", "compound_poisson", "geometric", "negative_binomial",
    # joint, reduced to a scalar
    "dirichlet", "multinomial", "multivariate_normal", "multivariate_t", "negative_multinomial",
    # mixed discrete-continuous
    "rectified_gaussian",
    # non-numeric
    "categorical",
)


# ---------------------------------------------------------------- finite numeric outcome sets (real-world tasks)

def _check_empirical(params):
    fam = "empirical_discrete"
    unknown = set(params) - {"values", "pvals"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}")
    values = _vec(fam, params, "values", min_len=1)
    pv = _simplex(fam, params, "pvals", min_len=1)
    if values.size != pv.size:
        raise ParameterError(f"{fam}: 'values' and 'pvals' must have the same length")
    if np.unique(values).size != values.size:
        raise ParameterError(f"{fam}: 'values' must be distinct")
    return {"values": values.tolist(), "pvals": pv.tolist()}


_register(name="empirical_discrete", title="Finite discrete", group="discrete_finite", support="discrete",
          param_doc="values (distinct numbers) with probabilities pvals (sum to 1)",
          check=_check_empirical,
          draw=lambda r, p, n: np.asarray(p["values"])[r.choice(len(p["values"]), size=n, p=p["pvals"])],
          text=lambda p: "a distribution on " + ", ".join(
              f"{fmt(v)} (probability {fmt(q)})" for v, q in zip(p["values"], p["pvals"])),
          scipy_dist=lambda p: stats.rv_discrete(values=(p["values"], p["pvals"])),
          bounds=lambda p: (min(p["values"]), max(p["values"])))

# ---------------------------------------------------------------- processes of the release programs

_RM_KERNELS = {"normal": ("loc", "scale"), "exponential": ("scale",), "gamma": ("shape", "scale")}
_RM_POSITIVE = {"scale", "shape"}


def _check_rayleigh_mixture(params):
    """A Rayleigh scale mixture: R ~ Rayleigh(sigma), then X from a kernel whose parameters are affine in R. Each
    kernel parameter is a number or ``{"const": c, "coef_R": b}`` meaning c + b R."""
    fam = "rayleigh_mixture"
    unknown = set(params) - {"sigma", "kernel", "kernel_params"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}; expected sigma, kernel, kernel_params")
    sigma = _num(fam, params, "sigma", low=0.0, low_open=True)
    kernel = params.get("kernel")
    if kernel not in _RM_KERNELS:
        raise ParameterError(f"{fam}: 'kernel' must be one of {', '.join(_RM_KERNELS)}, got {kernel!r}")
    kp = params.get("kernel_params")
    if not isinstance(kp, Mapping) or set(kp) != set(_RM_KERNELS[kernel]):
        raise ParameterError(f"{fam}: a {kernel} kernel needs kernel_params {list(_RM_KERNELS[kernel])}")
    out = {}
    for key in _RM_KERNELS[kernel]:
        v = kp[key]
        c, b = ((v.get("const"), v.get("coef_R")) if isinstance(v, Mapping) else (v, 0.0))
        c = _num(fam, {key: c}, key)
        b = _num(fam, {key: b}, key)
        if key in _RM_POSITIVE and (c < 0 or b < 0 or c + b == 0):
            raise ParameterError(f"{fam}: kernel {key} must be positive for every R > 0 (const, coef_R >= 0)")
        if kernel == "gamma" and key == "shape" and b != 0:
            raise ParameterError(f"{fam}: a gamma kernel's shape must not depend on R")
        out[key] = {"const": c, "coef_R": b}
    return {"sigma": sigma, "kernel": kernel, "kernel_params": out}


def _rm_value(spec, r):
    return spec["const"] + spec["coef_R"] * r


def _rayleigh_mixture_draw(r, p, n):
    radius = r.rayleigh(p["sigma"], n)
    kp = p["kernel_params"]
    if p["kernel"] == "normal":
        return r.normal(_rm_value(kp["loc"], radius), _rm_value(kp["scale"], radius))
    if p["kernel"] == "exponential":
        return r.exponential(_rm_value(kp["scale"], radius))
    return r.gamma(kp["shape"]["const"], _rm_value(kp["scale"], radius))


def _rayleigh_mixture_moments(p):
    """With E[R] = sigma sqrt(pi/2), E[R^2] = 2 sigma^2 and an affine a(R) = c + b R: E[a] = c + b E[R],
    E[a^2] = c^2 + 2cb E[R] + b^2 E[R^2]. Normal kernel: mean E[loc], variance E[scale^2] + Var(loc(R));
    exponential: mean E[scale], E[X^2] = 2 E[scale^2]; gamma(k): mean k E[scale], E[X^2] = k(k+1) E[scale^2]."""
    m1 = p["sigma"] * math.sqrt(math.pi / 2)
    m2 = 2 * p["sigma"] ** 2

    def mean(a):
        return a["const"] + a["coef_R"] * m1

    def second(a):
        return a["const"] ** 2 + 2 * a["const"] * a["coef_R"] * m1 + a["coef_R"] ** 2 * m2

    kp = p["kernel_params"]
    if p["kernel"] == "normal":
        mu = mean(kp["loc"])
        return mu, second(kp["scale"]) + second(kp["loc"]) - mu * mu
    if p["kernel"] == "exponential":
        mu = mean(kp["scale"])
        return mu, 2 * second(kp["scale"]) - mu * mu
    k = kp["shape"]["const"]
    mu = k * mean(kp["scale"])
    return mu, k * (k + 1) * second(kp["scale"]) - mu * mu


def _affine_text(a) -> str:
    c, b = a["const"], a["coef_R"]
    if b == 0:
        return fmt(c)
    term = "R" if b == 1 else f"{fmt(b)} R"
    return term if c == 0 else f"{fmt(c)} + {term}"


def _rayleigh_mixture_text(p):
    kp = p["kernel_params"]
    if p["kernel"] == "normal":
        kernel = (f"a normal distribution with mean {_affine_text(kp['loc'])} and standard deviation "
                  f"{_affine_text(kp['scale'])}")
    elif p["kernel"] == "exponential":
        kernel = f"an exponential distribution with mean {_affine_text(kp['scale'])}"
    else:
        kernel = (f"a gamma distribution with shape {fmt(kp['shape']['const'])} and scale "
                  f"{_affine_text(kp['scale'])}")
    return (f"a Rayleigh mixture: first draw R from a Rayleigh distribution with scale {fmt(p['sigma'])}, then draw "
            f"the value from {kernel}")


_register(name="rayleigh_mixture", title="Rayleigh mixture", group="continuous_semi_infinite", support="continuous",
          param_doc="sigma > 0 (Rayleigh scale of R); kernel normal|exponential|gamma; kernel_params affine in R "
                    "({const, coef_R} or a number)",
          check=_check_rayleigh_mixture, draw=_rayleigh_mixture_draw, text=_rayleigh_mixture_text,
          analytic_moments=_rayleigh_mixture_moments,
          bounds=lambda p: (-math.inf, math.inf) if p["kernel"] == "normal" else (0.0, math.inf))


def _check_categorical_sum(params):
    fam = "multinomial_weighted_sum"
    unknown = set(params) - {"n", "values", "pvals"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}; expected n, values, pvals")
    n = int(_num(fam, params, "n", low=1, integer=True))
    values = _vec(fam, params, "values", min_len=1)
    pv = _simplex(fam, params, "pvals", min_len=1)
    if values.size != pv.size:
        raise ParameterError(f"{fam}: 'values' and 'pvals' must have the same length")
    return {"n": n, "values": values.tolist(), "pvals": pv.tolist()}


def _categorical_sum_moments(p):
    v, q = np.asarray(p["values"]), np.asarray(p["pvals"])
    m = float(v @ q)
    return p["n"] * m, p["n"] * float((v - m) ** 2 @ q)


_register(name="multinomial_weighted_sum", title="Weighted multinomial total", group="discrete_finite",
          support="discrete",
          param_doc="n >= 1 trials; values with probabilities pvals: the value is the sum over the multinomial counts "
                    "of count_i * values_i (the total of n independent draws of the values)",
          check=_check_categorical_sum,
          draw=lambda r, p, n: (r.multinomial(p["n"], p["pvals"], size=n) @ np.asarray(p["values"], float)),
          text=lambda p: (f"the total of {p['n']} independent draws, each equal to "
                          + ", ".join(f"{fmt(v)} with probability {fmt(q)}" for v, q in zip(p["values"], p["pvals"]))),
          analytic_moments=_categorical_sum_moments,
          bounds=lambda p: (p["n"] * min(p["values"]), p["n"] * max(p["values"])),
          support_of=lambda p: "discrete" if all(float(v).is_integer() for v in p["values"]) else "continuous")


# ---------------------------------------------------------------- extras of the odds paper


def _odds_skew_normal(p, convention):
    return (f"Skew-normal distribution (Azzalini's form) with location {_exact(p['loc'])}, scale "
            f"{_exact(p['scale'])} and shape (skewness) parameter {_exact(p['a'])}; a negative shape skews it to "
            f"the left, and shape 0 gives the normal distribution with mean = location and standard deviation = scale.")


_register(name="skew_normal", title="Skew-normal", group="continuous_real_line", support="continuous",
          param_doc="a (skewness shape), loc, scale > 0 (density 2/scale phi(z) Phi(a z), z=(x-loc)/scale)",
          check=_keep("skew_normal", {"a": REAL, "loc": REAL, "scale": POS}),
          draw=lambda r, p, n: stats.skewnorm(p["a"], p["loc"], p["scale"]).rvs(size=n, random_state=r),
          text=lambda p: f"a skew-normal distribution with shape (skewness) parameter {fmt(p['a'])}, location "
                         f"{fmt(p['loc'])} and scale {fmt(p['scale'])} (density 2/scale * phi(z) * Phi(a z) with "
                         f"z = (x - location)/scale)",
          styles={"odds": _odds_skew_normal},
          scipy_dist=lambda p: stats.skewnorm(p["a"], p["loc"], p["scale"]))


def _check_power_law(params):
    return _keep("power_law", {"alpha": dict(low=1.0, low_open=True), "xmin": POS})(params)


def _odds_power_law(p, convention):
    return (f"Continuous power-law distribution with exponent alpha = {_exact(p['alpha'])} and minimum value "
            f"xmin = {_exact(p['xmin'])}: the density is proportional to x^(-alpha) for x >= xmin (alpha is the "
            f"exponent of the density, not of the tail), and no value is below xmin.")


_register(name="power_law", title="Power law", group="continuous_semi_infinite", support="continuous",
          param_doc="alpha > 1 (density exponent), xmin > 0: density (alpha-1)/xmin (x/xmin)^-alpha, x >= xmin",
          check=_check_power_law,
          draw=lambda r, p, n: p["xmin"] * (1.0 - r.random(n)) ** (-1.0 / (p["alpha"] - 1.0)),
          text=lambda p: f"a continuous power law with exponent alpha = {fmt(p['alpha'])} and minimum value "
                         f"xmin = {fmt(p['xmin'])} (density proportional to x^(-{fmt(p['alpha'])}) for x >= "
                         f"{fmt(p['xmin'])})",
          styles={"odds": _odds_power_law},
          scipy_dist=lambda p: stats.pareto(p["alpha"] - 1.0, scale=p["xmin"]),
          bounds=lambda p: (p["xmin"], math.inf))

ODDS_EXTRA_FAMILIES: tuple[str, ...] = ("skew_normal", "power_law")


# ---------------------------------------------------------------- mixtures and permutations

def _check_mixture(params):
    fam = "mixture"
    unknown = set(params) - {"components"}
    if unknown:
        raise ParameterError(f"{fam}: unknown parameter(s) {sorted(unknown)}; expected ['components']")
    comps = params.get("components")
    if not isinstance(comps, (list, tuple)) or len(comps) < 2:
        raise ParameterError(f"{fam}: 'components' must be a list of at least 2 {{family, params, weight}} items")
    out = []
    for i, c in enumerate(comps):
        if not isinstance(c, Mapping) or set(c) - {"family", "params", "weight"} or "family" not in c:
            raise ParameterError(f"{fam}: component {i} must be a mapping with keys family, params, weight")
        name = c["family"]
        if name in ("mixture", "uniform_permutation") or name not in FAMILIES:
            raise ParameterError(f"{fam}: component {i} has unsupported family {name!r}")
        sub = FAMILIES[name]
        if sub.support not in ("continuous", "discrete", "mixed"):
            raise ParameterError(f"{fam}: component {i} family {name!r} is not numeric")
        w = _num(fam, {"weight": c.get("weight")}, "weight", low=0.0, low_open=True)
        out.append({"family": name, "params": sub.validate(c.get("params", {})), "weight": w})
    total = sum(c["weight"] for c in out)
    if abs(total - 1.0) > 1e-9:
        raise ParameterError(f"{fam}: component weights must sum to 1, sum to {total:.12g}")
    return {"components": out}


def _mixture_draw(r, p, n):
    comps = p["components"]
    which = r.choice(len(comps), size=n, p=[c["weight"] for c in comps])
    out = np.empty(n, dtype=float)
    for i, c in enumerate(comps):
        idx = np.flatnonzero(which == i)
        if idx.size:
            out[idx] = FAMILIES[c["family"]].draw(r, c["params"], idx.size)
    return out


def _mixture_support(p) -> str:
    kinds = {support_kind(c["family"], c["params"]) for c in p["components"]}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _mixture_moments(p):
    mean = 0.0
    second = 0.0
    for c in p["components"]:
        m, v = moments(c["family"], c["params"])
        mean += c["weight"] * m
        second += c["weight"] * (v + m * m)
    return mean, second - mean * mean


def _mixture_text(p):
    parts = [f"with probability {fmt(c['weight'])}, {FAMILIES[c['family']].describe(c['params'])}"
             for c in p["components"]]
    return ("a mixture distribution: first pick one component at random, then draw from it. The components are: "
            + "; ".join(parts))


def _mixture_bounds(p):
    bs = [FAMILIES[c["family"]].bounds(c["params"]) for c in p["components"]]
    return min(b[0] for b in bs), max(b[1] for b in bs)


_register(name="mixture", title="Mixture", group="multimodal", support="continuous",
          param_doc="components: list of {family, params, weight}; weights sum to 1",
          check=_check_mixture, draw=_mixture_draw, text=_mixture_text,
          analytic_moments=_mixture_moments, bounds=_mixture_bounds, support_of=_mixture_support)


def _check_perm(params):
    return _keep("uniform_permutation", {"n": dict(low=1, integer=True)})(params)


_register(name="uniform_permutation", title="Uniform random permutation", group="permutation",
          support="permutation", param_doc="n >= 1 items; a draw is a permutation of 0..n-1 (shape (size, n))",
          check=_check_perm,
          draw=lambda r, p, n: np.argsort(r.random((n, p["n"])), axis=1),
          text=lambda p: f"a uniformly random ordering of {p['n']} items, every ordering equally likely",
          bounds=lambda p: (0.0, float(p["n"] - 1)))


_unregistered = [f for f in (*TABLE10_FAMILIES, *ODDS_EXTRA_FAMILIES) if f not in FAMILIES]
if _unregistered:  # pragma: no cover - an edit of this module that drops a family
    raise RuntimeError(f"distributions: named but not registered: {', '.join(_unregistered)}")


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
    from .plugins import FAMILIES_GROUP, discover, load_errors

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


def sample(family: str, params: Mapping, size: int, seed: int | np.random.Generator | np.random.SeedSequence | None = None
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
