"""Mixed discrete-continuous, non-numeric and finite-outcome families, and the processes of the release programs."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from scipy import stats

from ._family import ParameterError, _locscale, _num, _register, _simplex, _vec, fmt

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
