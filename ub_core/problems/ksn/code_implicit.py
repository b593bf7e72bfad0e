"""Code-implicit programs: short Python programs whose printed value follows a family's distribution exactly.

``CODE_IMPLICIT[family](params) -> str`` returns a complete, runnable program (``import numpy as np``, at most
``math`` besides, ``rng = np.random.default_rng()`` and one final ``print``). The target distribution is never
sampled with its own numpy/scipy method: it is reached through a transformation of other draws (sums of squared
standard normals, inverse CDFs of uniforms, arrival counting, rejection, shuffling, Cholesky factors, ...).
Every construction is exact, not an approximation; ``tests/ksn/test_implicit_templates.py`` checks each program
against :func:`ub_core.distributions.sample` with two-sample tests.

Integer-valued results are printed as Python ints, categorical results as the label string, the rest as floats.
Where a construction needs an integer (degrees of freedom, stages, stops) and the parameter is not one, the
program falls back to another exact construction (usually through ``rng.gamma``), so any valid parameters work.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

from ...distributions import fmt
from .template_registry import family_table, template

__all__ = ["CODE_IMPLICIT", "implicit_program"]


def _n(x) -> str:
    """A Python literal for ``x`` that evaluates to the same float (``fmt``, which writes 1/6 as a fraction,
    where that round-trips, else the full repr)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return str(int(x))
    x = float(x)
    s = fmt(x)
    return s if float(Fraction(s)) == x else repr(x)


def _list(xs) -> str:
    return "[" + ", ".join(_n(x) for x in xs) + "]"


def _is_int(x) -> bool:
    return float(x).is_integer()


def _program(*body: str) -> str:
    lines = ["import numpy as np", "", "rng = np.random.default_rng()", *body]
    return "\n".join(lines) + "\n"


def _plus(loc: float, expr: str) -> str:
    """``loc + expr`` without a ``0 +``."""
    return expr if float(loc) == 0 else f"{_n(loc)} + {expr}"


def _times(scale: float, expr: str) -> str:
    return expr if float(scale) == 1 else f"{_n(scale)} * {expr}"


def _chi2_lines(var: str, df: float) -> list[str]:
    """Lines setting ``var`` to a chi-squared(df) draw: squared standard normals, or a gamma for fractional df."""
    if _is_int(df) and df <= 400:
        return [f"{var} = np.sum(rng.standard_normal({int(df)}) ** 2)"]
    return [f"{var} = 2 * rng.gamma({_n(df / 2)})"]


def _exp1(size: int | None = None) -> str:
    """An expression for standard exponential draw(s) from uniforms (1 - u lies in (0, 1], so the log is finite)."""
    return "-np.log(1.0 - rng.random())" if size is None else f"-np.log(1.0 - rng.random({size}))"


# ---------------------------------------------------------------------------------------------- continuous, bounded

@template("code_implicit", "beta")
def _beta(p):
    a, b = p["a"], p["b"]
    if _is_int(a) and _is_int(b) and a + b - 1 <= 400:
        return _program(f"points = np.sort(rng.random({int(a + b - 1)}))",
                        f"x = points[{int(a) - 1}]",
                        "print(x)")
    return _program(f"g1 = rng.gamma({_n(a)})",
                    f"g2 = rng.gamma({_n(b)})",
                    "x = g1 / (g1 + g2)",
                    "print(x)")


@template("code_implicit", "arcsine")
def _arcsine(p):
    return _program("angle = rng.uniform(0, 2 * np.pi)",
                    f"x = {_plus(p['low'], _times(p['high'] - p['low'], 'np.sin(angle) ** 2'))}",
                    "print(x)")


@template("code_implicit", "reciprocal")
def _reciprocal(p):
    return _program("u = rng.random()",
                    "x = " + (_n(p["b"]) if float(p["a"]) == 1 else f"{_n(p['a'])} * ({_n(p['b'])} / {_n(p['a'])})")
                    + " ** u",
                    "print(x)")


@template("code_implicit", "triangular")
def _triangular(p):
    left, mode, right = p["left"], p["mode"], p["right"]
    if abs((mode - left) - (right - mode)) < 1e-12 * max(1.0, right - left):
        return _program("u1, u2 = rng.random(), rng.random()",
                        f"x = {_plus(left, _times((right - left) / 2, '(u1 + u2)'))}",
                        "print(x)")
    return _program(f"lo, peak, hi = {_n(left)}, {_n(mode)}, {_n(right)}",
                    "u = rng.random()",
                    "if u < (peak - lo) / (hi - lo):",
                    "    x = lo + np.sqrt(u * (hi - lo) * (peak - lo))",
                    "else:",
                    "    x = hi - np.sqrt((1 - u) * (hi - lo) * (hi - peak))",
                    "print(x)")


@template("code_implicit", "truncated_normal")
def _truncated_normal(p):
    return _program("while True:",
                    f"    x = {_plus(p['loc'], _times(p['scale'], 'rng.standard_normal()'))}",
                    f"    if {_n(p['low'])} <= x <= {_n(p['high'])}:",
                    "        break",
                    "print(x)")


@template("code_implicit", "uniform")
def _uniform(p):
    return _program("z = rng.standard_normal(2)",
                    "angle = np.arctan2(z[1], z[0])",
                    f"x = {_plus(p['low'], _times(p['high'] - p['low'], '(angle + np.pi) / (2 * np.pi)'))}",
                    "print(x)")


# ---------------------------------------------------------------------------------------------- semi-infinite

@template("code_implicit", "erlang")
def _erlang(p):
    return _program(f"stages = {_n(p['scale'])} * ({_exp1(int(p['k']))})",
                    "x = stages.sum()",
                    "print(x)")


@template("code_implicit", "f")
def _f(p):
    return _program(*_chi2_lines("top", p["dfnum"]), *_chi2_lines("bottom", p["dfden"]),
                    f"x = (top / {_n(p['dfnum'])}) / (bottom / {_n(p['dfden'])})",
                    "print(x)")


@template("code_implicit", "frechet")
def _frechet(p):
    return _program(f"e = {_exp1()}",
                    "x = " + _plus(p["loc"], _times(p["scale"], "e ** (-1 / " + _n(p["c"]) + ")")),
                    "print(x)")


@template("code_implicit", "gamma")
def _gamma(p):
    shape, scale = p["shape"], p["scale"]
    if _is_int(2 * shape) and 2 * shape <= 400:
        return _program(f"z = rng.standard_normal({int(2 * shape)})",
                        f"x = {_times(scale / 2, 'np.sum(z ** 2)')}",
                        "print(x)")
    # Marsaglia-Tsang squeeze-free rejection (exact), boosted for shapes below 1
    return _program(f"a, boost = {_n(shape)}, 1.0",
                    "if a < 1:",
                    "    boost, a = rng.random() ** (1 / a), a + 1",
                    "d = a - 1 / 3",
                    "c = 1 / np.sqrt(9 * d)",
                    "while True:",
                    "    z = rng.standard_normal()",
                    "    v = (1 + c * z) ** 3",
                    "    if v > 0 and np.log(rng.random()) < 0.5 * z * z + d - d * v + d * np.log(v):",
                    "        break",
                    f"x = {_times(scale, 'd * v * boost')}",
                    "print(x)")


@template("code_implicit", "pareto")
def _pareto(p):
    return _program("u = 1.0 - rng.random()",
                    "x = " + _times(p["scale"], "u ** (-1 / " + _n(p["a"]) + ")"),
                    "print(x)")


@template("code_implicit", "rayleigh")
def _rayleigh(p):
    return _program(f"dx, dy = {_times(p['scale'], 'rng.standard_normal(2)')}",
                    "x = np.hypot(dx, dy)",
                    "print(x)")


@template("code_implicit", "weibull")
def _weibull(p):
    return _program(f"e = {_exp1()}",
                    "x = " + _times(p["scale"], "e ** (1 / " + _n(p["a"]) + ")"),
                    "print(x)")


@template("code_implicit", "chi_squared")
def _chi_squared(p):
    return _program(*_chi2_lines("x", p["df"]), "print(x)")


@template("code_implicit", "exponential")
def _exponential(p):
    return _program("z = rng.standard_normal(2)",
                    f"x = {_n(p['scale'])} * (z[0] ** 2 + z[1] ** 2) / 2",
                    "print(x)")


@template("code_implicit", "inverse_gaussian")
def _inverse_gaussian(p):
    return _program(f"mu, lam = {_n(p['mean'])}, {_n(p['scale'])}",
                    "y = rng.standard_normal() ** 2",
                    "w = mu + mu * mu * y / (2 * lam) - mu / (2 * lam) * np.sqrt(4 * mu * lam * y + (mu * y) ** 2)",
                    "if rng.random() <= mu / (mu + w):",
                    "    x = w",
                    "else:",
                    "    x = mu * mu / w",
                    "print(x)")


@template("code_implicit", "log_normal")
def _log_normal(p):
    return _program("u1, u2 = 1.0 - rng.random(), rng.random()",
                    "z = np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)",
                    f"x = np.exp({_plus(p['mean'], _times(p['sigma'], 'z'))})",
                    "print(x)")


# ---------------------------------------------------------------------------------------------- real line

@template("code_implicit", "gumbel")
def _gumbel(p):
    return _program("z = rng.standard_normal(2)",
                    "e = (z[0] ** 2 + z[1] ** 2) / 2",
                    "x = " + (_n(p["loc"]) + " - " if float(p["loc"]) != 0 else "-") + _times(p["scale"], "np.log(e)"),
                    "print(x)")


@template("code_implicit", "laplace")
def _laplace(p):
    return _program(f"e1, e2 = {_exp1(2)}",
                    f"x = {_plus(p['loc'], _times(p['scale'], '(e1 - e2)'))}",
                    "print(x)")


@template("code_implicit", "students_t")
def _students_t(p):
    return _program("z = rng.standard_normal()",
                    *_chi2_lines("s", p["df"]),
                    "x = " + _plus(p["loc"], _times(p["scale"], "z / np.sqrt(s / " + _n(p["df"]) + ")")),
                    "print(x)")


@template("code_implicit", "logistic")
def _logistic(p):
    return _program(f"e1, e2 = {_exp1(2)}",
                    f"x = {_plus(p['loc'], _times(p['scale'], 'np.log(e1 / e2)'))}",
                    "print(x)")


@template("code_implicit", "normal")
def _normal(p):
    return _program("r = np.sqrt(-2 * np.log(1.0 - rng.random()))",
                    "theta = 2 * np.pi * rng.random()",
                    f"x = {_plus(p['loc'], _times(p['scale'], 'r * np.sin(theta)'))}",
                    "print(x)")


# ---------------------------------------------------------------------------------------------- discrete, finite

@template("code_implicit", "bernoulli")
def _bernoulli(p):
    return _program(f"x = int(np.floor(rng.random() + {_n(p['p'])}))",
                    "print(x)")


@template("code_implicit", "poisson_binomial")
def _poisson_binomial(p):
    return _program(f"chances = {_list(p['p'])}",
                    "hits = 0",
                    "for c in chances:",
                    "    if rng.random() < c:",
                    "        hits += 1",
                    "print(hits)")


@template("code_implicit", "beta_binomial")
def _beta_binomial(p):
    return _program(f"q = rng.beta({_n(p['a'])}, {_n(p['b'])})",
                    f"flips = rng.random({int(p['n'])})",
                    "x = int(np.sum(flips < q))",
                    "print(x)")


@template("code_implicit", "binomial")
def _binomial(p):
    return _program(f"u = rng.random({int(p['n'])})",
                    f"x = int(np.sum(u < {_n(p['p'])}))",
                    "print(x)")


@template("code_implicit", "discrete_uniform")
def _discrete_uniform(p):
    lo, hi = int(p["low"]), int(p["high"])
    return _program("u = rng.random()",
                    "x = int(np.floor(" + _plus(lo, str(hi - lo + 1) + " * u") + "))",
                    "print(x)")


@template("code_implicit", "hypergeometric")
def _hypergeometric(p):
    return _program(f"items = np.repeat([1, 0], [{int(p['ngood'])}, {int(p['nbad'])}])",
                    "rng.shuffle(items)",
                    f"x = int(items[:{int(p['nsample'])}].sum())",
                    "print(x)")


# ---------------------------------------------------------------------------------------------- discrete, infinite

@template("code_implicit", "poisson")
def _poisson(p):
    return _program(f"t = {_exp1()}",
                    "count = 0",
                    f"while t <= {_n(p['lam'])}:",
                    "    count += 1",
                    f"    t += {_exp1()}",
                    "print(count)")


@template("code_implicit", "skellam")
def _skellam(p):
    total = p["mu1"] + p["mu2"]
    return _program(f"t = {_exp1()}",
                    "score = 0",
                    f"while t <= {_n(total)}:",
                    f"    score += 1 if rng.random() * {_n(total)} < {_n(p['mu1'])} else -1",
                    f"    t += {_exp1()}",
                    "print(score)")


def _jump_expr(jump: dict) -> str:
    """An expression for one draw of a compound Poisson jump ``{family, params}``, by a transformation of uniforms
    where one is short (the compound total itself is never sampled by a library method)."""
    fam, q = jump["family"], jump["params"]
    if fam == "uniform":
        return _plus(q["low"], _times(q["high"] - q["low"], "rng.random()"))
    if fam == "exponential":
        return _times(q["scale"], _exp1())
    if fam == "gamma":
        return f"rng.gamma({_n(q['shape'])}, {_n(q['scale'])})"
    if fam == "empirical_discrete":
        return f"rng.choice({_list(q['values'])}, p={_list(q['pvals'])})"
    if fam == "geometric":
        return f"rng.geometric({_n(q['p'])})"
    raise ValueError(f"code_implicit compound_poisson: no jump expression for {fam!r}")


@template("code_implicit", "compound_poisson")
def _compound_poisson(p):
    # events of a rate-lam Poisson process on [0, 1]: exponential gaps until the clock passes lam
    if "jump" in p:
        discrete = p["jump"]["family"] in ("empirical_discrete", "geometric") and all(
            float(v).is_integer() for v in p["jump"]["params"].get("values", [1]))
        return _program(f"t = {_exp1()}",
                        "total = 0" if discrete else "total = 0.0",
                        f"while t <= {_n(p['lam'])}:",
                        f"    total += {_jump_expr(p['jump'])}",
                        f"    t += {_exp1()}",
                        "print(int(total))" if discrete else "print(total)")
    return _program(f"t = {_exp1()}",
                    "total = 0",
                    f"while t <= {_n(p['lam'])}:",
                    "    size = 1",
                    f"    while rng.random() >= {_n(p['p'])}:",
                    "        size += 1",
                    "    total += size",
                    f"    t += {_exp1()}",
                    "print(total)")


@template("code_implicit", "geometric")
def _geometric(p):
    return _program("tries = 1",
                    f"while rng.random() >= {_n(p['p'])}:",
                    "    tries += 1",
                    "print(tries)")


@template("code_implicit", "negative_binomial")
def _negative_binomial(p):
    n, q = p["n"], p["p"]
    if _is_int(n):
        return _program("wins = misses = 0",
                        f"while wins < {int(n)}:",
                        f"    if rng.random() < {_n(q)}:",
                        "        wins += 1",
                        "    else:",
                        "        misses += 1",
                        "print(misses)")
    # a gamma-distributed rate, then arrivals counted up to that rate (exact mixture form)
    return _program(f"rate = rng.gamma({_n(n)}, (1 - {_n(q)}) / {_n(q)})",
                    f"t = {_exp1()}",
                    "count = 0",
                    "while t <= rate:",
                    "    count += 1",
                    f"    t += {_exp1()}",
                    "print(count)")


# ---------------------------------------------------------------------------------------------- joint, reduced

@template("code_implicit", "dirichlet")
def _dirichlet(p):
    alpha, c = p["alpha"], p["component"]
    if all(_is_int(2 * a) for a in alpha) and 2 * sum(alpha) <= 2000:
        sizes = "[" + ", ".join(str(int(2 * a)) for a in alpha) + "]"
        return _program(f"energy = [np.sum(rng.standard_normal(k) ** 2) for k in {sizes}]",
                        f"x = energy[{c}] / sum(energy)",
                        "print(x)")
    return _program(f"g = [rng.gamma(a) for a in {_list(alpha)}]",
                    f"x = g[{c}] / sum(g)",
                    "print(x)")


@template("code_implicit", "multinomial")
def _multinomial(p):
    return _program(f"edges = np.cumsum({_list(p['pvals'])})[:-1]",
                    f"u = rng.random({int(p['n'])})",
                    "kinds = np.searchsorted(edges, u, side='right')",
                    f"x = int(np.sum(kinds == {p['component']}))",
                    "print(x)")


@template("code_implicit", "multivariate_normal")
def _multivariate_normal(p):
    last = "x = v.sum()" if p["reduce"] == "sum" else f"x = v[{p['component']}]"
    mat = "[" + ", ".join(_list(row) for row in p["cov"]) + "]"
    return _program(f"m = np.array({_list(p['mean'])})",
                    f"L = np.linalg.cholesky(np.array({mat}))",
                    f"v = m + L @ rng.standard_normal({len(p['mean'])})",
                    last,
                    "print(x)")


@template("code_implicit", "multivariate_t")
def _multivariate_t(p):
    last = "x = v.sum()" if p["reduce"] == "sum" else f"x = v[{p['component']}]"
    mat = "[" + ", ".join(_list(row) for row in p["shape"]) + "]"
    return _program(f"centre = np.array({_list(p['loc'])})",
                    f"L = np.linalg.cholesky(np.array({mat}))",
                    f"z = L @ rng.standard_normal({len(p['loc'])})",
                    *_chi2_lines("s", p["df"]),
                    f"v = centre + z / np.sqrt(s / {_n(p['df'])})",
                    last,
                    "print(x)")


@template("code_implicit", "negative_multinomial")
def _negative_multinomial(p):
    n, pv, c = p["n"], p["pvals"], p["component"] + 1
    if _is_int(n):
        return _program(f"edges = np.cumsum({_list(pv)})[:-1]",
                        "stops = count = 0",
                        f"while stops < {int(n)}:",
                        "    k = int(np.searchsorted(edges, rng.random(), side='right'))",
                        "    if k == 0:",
                        "        stops += 1",
                        f"    elif k == {c}:",
                        "        count += 1",
                        "print(count)")
    # the other outcomes arrive at a gamma-distributed total rate; keep the ones of the reported kind
    p0 = pv[0]
    return _program(f"rate = rng.gamma({_n(n)}, (1 - {_n(p0)}) / {_n(p0)})",
                    f"t = {_exp1()}",
                    "count = 0",
                    "while t <= rate:",
                    f"    count += int(rng.random() * (1 - {_n(p0)}) < {_n(pv[c])})",
                    f"    t += {_exp1()}",
                    "print(count)")


# ---------------------------------------------------------------------------------------------- mixed, categorical

@template("code_implicit", "rectified_gaussian")
def _rectified_gaussian(p):
    return _program("z = rng.standard_normal()",
                    f"x = max(0.0, {_plus(p['loc'], _times(p['scale'], 'z'))})",
                    "print(x)")


@template("code_implicit", "categorical")
def _categorical(p):
    labels, pv = p["labels"], p["pvals"]
    if max(pv) - min(pv) < 1e-12:
        return _program(f"labels = {labels!r}",
                        "u = rng.random()",
                        "print(labels[int(u * len(labels))])")
    return _program(f"labels = {labels!r}",
                    f"weights = {_list(pv)}",
                    "u = rng.random()",
                    "pick = labels[-1]",
                    "for label, w in zip(labels, weights):",
                    "    if u < w:",
                    "        pick = label",
                    "        break",
                    "    u -= w",
                    "print(pick)")


# ---------------------------------------------------------------------------------------------- release processes

def _affine(a: dict, var: str = "r") -> str:
    c, b = a["const"], a["coef_R"]
    if b == 0:
        return _n(c)
    return _plus(c, _times(b, var))


@template("code_implicit", "rayleigh_mixture")
def _rayleigh_mixture(p):
    kp = p["kernel_params"]
    lines = [f"r = {_n(p['sigma'])} * np.sqrt(2 * {_exp1()})  # Rayleigh by inverting its CDF"]
    if p["kernel"] == "normal":
        lines.append(f"x = {_plus(0, _affine(kp['loc']))} + ({_affine(kp['scale'])}) * rng.standard_normal()")
    elif p["kernel"] == "exponential":
        lines.append(f"x = ({_affine(kp['scale'])}) * {_exp1()}")
    else:
        k = kp["shape"]["const"]
        if _is_int(k):
            lines.append(f"x = ({_affine(kp['scale'])}) * {_exp1(int(k))}.sum()")
        else:
            lines.append(f"x = ({_affine(kp['scale'])}) * rng.gamma({_n(k)})")
    return _program(*lines, "print(float(x))")


def _inverse_cdf_lines(values, pvals, target: str = "x") -> list[str]:
    return [f"values = {_list(values)}",
            f"weights = {_list(pvals)}",
            "u = rng.random()",
            f"{target} = values[-1]",
            "for value, w in zip(values, weights):",
            "    if u < w:",
            f"        {target} = value",
            "        break",
            "    u -= w"]


@template("code_implicit", "empirical_discrete")
def _empirical_discrete(p):
    return _program(*_inverse_cdf_lines(p["values"], p["pvals"]), "print(x)")


@template("code_implicit", "multinomial_weighted_sum")
def _multinomial_weighted_sum(p):
    body = _inverse_cdf_lines(p["values"], p["pvals"], "pick")
    return _program("total = 0",
                    f"for _ in range({int(p['n'])}):",
                    *["    " + line for line in body[2:]],
                    "    total += pick",
                    "print(total)").replace("rng = np.random.default_rng()",
                                            "rng = np.random.default_rng()\n" + "\n".join(body[:2]), 1)


CODE_IMPLICIT: dict[str, Callable[[dict], str]] = family_table("code_implicit")


def implicit_program(family: str, params: dict) -> str:
    """The code-implicit program of ``family`` with ``params``."""
    return CODE_IMPLICIT[family](params)
