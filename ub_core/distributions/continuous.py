"""Absolutely continuous families: on a bounded interval, on a half-line, on the whole real line."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ._family import (
    INT_POS,
    POS,
    REAL,
    ParameterError,
    _exact,
    _keep,
    _locscale,
    _register,
    fmt,
)

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
