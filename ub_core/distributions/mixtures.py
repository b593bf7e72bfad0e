"""The odds paper's extra families, mixtures of registered families, and uniform permutations."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from scipy import stats

from ._family import (
    FAMILIES,
    POS,
    REAL,
    ParameterError,
    _exact,
    _keep,
    _num,
    _register,
    fmt,
    moments,
    support_kind,
)

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

