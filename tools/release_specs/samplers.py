"""Sampler calls: import aliases, dotted paths, the signatures of numpy / scipy / python samplers, and the
canonical (family, params) of one library draw."""
from __future__ import annotations

import ast
import math
import operator
import re

import numpy as np

from .symbolic import C, F, isc, RNGObj, Unclassifiable


BUILTIN_FUNCS = {"len", "float", "int", "sum", "max", "min", "abs", "list", "range", "round", "tuple", "sorted",
                 "enumerate", "print", "str", "bool", "dict", "zip", "any", "all"}
RNG_CTORS = {"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"}
CONSTS = {"numpy.pi": math.pi, "math.pi": math.pi, "numpy.e": math.e, "math.e": math.e, "numpy.inf": math.inf,
          "math.inf": math.inf}


def import_aliases(tree) -> dict[str, str]:
    al = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                al[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                al[a.asname or a.name] = f"{node.module}.{a.name}"
    return al


def path_of(node, env, ctx) -> str | None:
    if isinstance(node, ast.Name):
        if node.id in env:
            v = env[node.id]
            if isc(v) and isinstance(v.value, RNGObj):
                return "Generator"
            return None
        if node.id in ctx.aliases:
            return ctx.aliases[node.id]
        if node.id in BUILTIN_FUNCS:
            return "builtins." + node.id
        return None
    if isinstance(node, ast.Attribute):
        base = path_of(node.value, env, ctx)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        p = path_of(node.func, env, ctx)
        if p in RNG_CTORS:
            return "Generator"
        if p and p.startswith("scipy.stats.") and p.count(".") == 2:
            return p + "()"
        return None
    return None


NOT_SAMPLERS = {"default_rng", "seed", "RandomState", "Generator", "get_state", "set_state", "SeedSequence"}


def sampler_of(p: str):
    """(library, name, frozen) for a sampler path, else None."""
    if p.startswith("numpy.random.") and p.count(".") == 2:
        name = p.split(".")[2]
        return None if name in NOT_SAMPLERS else ("numpy", name, False)
    if p.startswith("Generator.") and p.count(".") == 1:
        return ("numpy", p.split(".")[1], False)
    m = re.match(r"^scipy\.stats\.(\w+)(\(\))?\.rvs$", p)
    if m:
        return ("scipy", m.group(1), bool(m.group(2)))
    if p.startswith("random.") and p.count(".") == 1:
        return ("random", p.split(".")[1], False)
    return None


NP_SIG = {
    "uniform": (["low", "high", "size"], {"low": 0.0, "high": 1.0}),
    "normal": (["loc", "scale", "size"], {"loc": 0.0, "scale": 1.0}),
    "standard_normal": (["size"], {}),
    "exponential": (["scale", "size"], {"scale": 1.0}),
    "standard_exponential": (["size"], {}),
    "gamma": (["shape", "scale", "size"], {"scale": 1.0}),
    "standard_gamma": (["shape", "size"], {}),
    "beta": (["a", "b", "size"], {}),
    "binomial": (["n", "p", "size"], {}),
    "poisson": (["lam", "size"], {"lam": 1.0}),
    "geometric": (["p", "size"], {}),
    "negative_binomial": (["n", "p", "size"], {}),
    "lognormal": (["mean", "sigma", "size"], {"mean": 0.0, "sigma": 1.0}),
    "laplace": (["loc", "scale", "size"], {"loc": 0.0, "scale": 1.0}),
    "logistic": (["loc", "scale", "size"], {"loc": 0.0, "scale": 1.0}),
    "gumbel": (["loc", "scale", "size"], {"loc": 0.0, "scale": 1.0}),
    "rayleigh": (["scale", "size"], {"scale": 1.0}),
    "chisquare": (["df", "size"], {}),
    "f": (["dfnum", "dfden", "size"], {}),
    "wald": (["mean", "scale", "size"], {}),
    "triangular": (["left", "mode", "right", "size"], {}),
    "randint": (["low", "high", "size"], {"high": None}),
    "integers": (["low", "high", "size", "dtype", "endpoint"], {"high": None, "endpoint": False}),
    "random": (["size"], {}),
    "random_sample": (["size"], {}),
    "rand": ([], {}),
    "choice": (["a", "size", "replace", "p"], {"replace": True, "p": None}),
    "multinomial": (["n", "pvals", "size"], {}),
    "dirichlet": (["alpha", "size"], {}),
    "multivariate_normal": (["mean", "cov", "size"], {}),
    "hypergeometric": (["ngood", "nbad", "nsample", "size"], {}),
    "standard_t": (["df", "size"], {}),
    "weibull": (["a", "size"], {}),
}
SCIPY_SHAPES = {
    "loguniform": ["a", "b"], "reciprocal": ["a", "b"], "truncnorm": ["a", "b"], "nbinom": ["n", "p"],
    "chi2": ["df"], "skellam": ["mu1", "mu2"], "hypergeom": ["M", "n", "N"], "pareto": ["b"], "gamma": ["a"],
    "erlang": ["a"], "triang": ["c"], "beta": ["a", "b"], "t": ["df"], "weibull_min": ["c"], "lognorm": ["s"],
    "logistic": [], "laplace": [], "gumbel_r": [], "norm": [], "f": ["dfn", "dfd"], "betabinom": ["n", "a", "b"],
    "invweibull": ["c"], "invgauss": ["mu"], "poisson": ["mu"], "geom": ["p"], "expon": [], "uniform": [],
    "binom": ["n", "p"], "bernoulli": ["p"], "randint": ["low", "high"], "dirichlet": ["alpha"],
    "multivariate_normal": ["mean", "cov"], "rayleigh": [], "cauchy": [],
}
SCIPY_DISCRETE = {"nbinom", "skellam", "hypergeom", "betabinom", "poisson", "geom", "binom", "bernoulli", "randint"}
SCIPY_MULTI = {"dirichlet", "multivariate_normal"}
PY_SIG = {
    "random": ([], {}), "uniform": (["a", "b"], {}), "randint": (["a", "b"], {}), "choice": (["seq"], {}),
    "choices": (["population", "weights"], {"weights": None, "k": 1}), "shuffle": (["x"], {}),
    "sample": (["population", "k"], {}), "gauss": (["mu", "sigma"], {"mu": 0.0, "sigma": 1.0}),
    "normalvariate": (["mu", "sigma"], {"mu": 0.0, "sigma": 1.0}), "expovariate": (["lambd"], {}),
}


def bind(names, defaults, args, kws):
    b = {k: (v if isinstance(v, ast.AST) else C(v)) for k, v in defaults.items()}
    for n, a in zip(names, args):
        b[n] = a
    b.update(kws)
    return b


def val(n):
    if n is None:
        return None
    return n.value if isc(n) else n


def num(x):
    """Clean a numeric value for JSON (numpy -> python, floats to 12 significant digits)."""
    if isinstance(x, np.ndarray):
        return [num(v) for v in x.tolist()]
    if isinstance(x, (list, tuple)):
        return [num(v) for v in x]
    if isinstance(x, dict):
        return {k: num(v) for k, v in x.items()}
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isfinite(x):
            return float(f"{x:.15g}")
        return x
    return x


def is_const_val(x):
    return not isinstance(x, ast.AST)


def arith(op, a, b):
    """a op b on values that may be AST nodes (kept symbolic then)."""
    if is_const_val(a) and is_const_val(b):
        return op(a, b)
    ops = {operator.add: ast.Add(), operator.sub: ast.Sub(), operator.mul: ast.Mult(), operator.truediv: ast.Div()}
    wa = a if isinstance(a, ast.AST) else C(a)
    wb = b if isinstance(b, ast.AST) else C(b)
    return ast.BinOp(left=wa, op=ops[op], right=wb)


def _canon_numpy(name, g, size):
    """A numpy ``Generator`` / ``numpy.random`` sampler in our conventions."""
    simple = {
        "uniform": ("uniform", {"low": g("low"), "high": g("high")}),
        "normal": ("normal", {"loc": g("loc"), "scale": g("scale")}),
        "standard_normal": ("normal", {"loc": 0.0, "scale": 1.0}),
        "exponential": ("exponential", {"scale": g("scale")}),
        "standard_exponential": ("exponential", {"scale": 1.0}),
        "gamma": ("gamma", {"shape": g("shape"), "scale": g("scale")}),
        "standard_gamma": ("gamma", {"shape": g("shape"), "scale": 1.0}),
        "beta": ("beta", {"a": g("a"), "b": g("b")}),
        "binomial": ("binomial", {"n": g("n"), "p": g("p")}),
        "poisson": ("poisson", {"lam": g("lam")}),
        "geometric": ("geometric", {"p": g("p")}),
        "negative_binomial": ("negative_binomial", {"n": g("n"), "p": g("p")}),
        "lognormal": ("log_normal", {"mean": g("mean"), "sigma": g("sigma")}),
        "laplace": ("laplace", {"loc": g("loc"), "scale": g("scale")}),
        "logistic": ("logistic", {"loc": g("loc"), "scale": g("scale")}),
        "gumbel": ("gumbel", {"loc": g("loc"), "scale": g("scale")}),
        "rayleigh": ("rayleigh", {"scale": g("scale")}),
        "chisquare": ("chi_squared", {"df": g("df")}),
        "f": ("f", {"dfnum": g("dfnum"), "dfden": g("dfden")}),
        "wald": ("inverse_gaussian", {"mean": g("mean"), "scale": g("scale")}),
        "triangular": ("triangular", {"left": g("left"), "mode": g("mode"), "right": g("right")}),
        "hypergeometric": ("hypergeometric", {"ngood": g("ngood"), "nbad": g("nbad"), "nsample": g("nsample")}),
        "standard_t": ("students_t", {"df": g("df"), "loc": 0.0, "scale": 1.0}),
        "weibull": ("weibull", {"a": g("a"), "scale": 1.0}),
        "multinomial": ("multinomial", {"n": g("n"), "pvals": g("pvals")}),
        "dirichlet": ("dirichlet", {"alpha": g("alpha")}),
        "multivariate_normal": ("multivariate_normal", {"mean": g("mean"), "cov": g("cov")}),
    }
    if name in simple:
        k, p = simple[name]
        return k, p, size
    if name in ("random", "random_sample"):
        return "uniform", {"low": 0.0, "high": 1.0}, size
    if name == "rand":
        return "uniform", {"low": 0.0, "high": 1.0}, size
    if name == "randint":
        lo, hi = g("low"), g("high")
        if hi is None:
            lo, hi = 0, lo
        return "discrete_uniform", {"low": lo, "high": arith(operator.sub, hi, 1)}, size
    if name == "integers":
        lo, hi = g("low"), g("high")
        if hi is None:
            lo, hi = 0, lo
        end = g("endpoint")
        return "discrete_uniform", {"low": lo, "high": hi if end else arith(operator.sub, hi, 1)}, size
    if name == "choice":
        a = g("a")
        values = list(range(int(a))) if isinstance(a, (int, np.integer)) else a
        if isinstance(values, np.ndarray):
            values = values.tolist()
        return "choice", {"values": values, "pvals": g("p"), "replace": g("replace")}, size
    raise Unclassifiable(f"numpy sampler '{name}' not modelled")


def _canon_scipy(name, g, size):
    """A ``scipy.stats.<dist>.rvs`` call in our conventions (``loc`` and ``scale`` folded in where the family has
    them; a shifted or scaled law of a family without them is not modelled)."""
    loc, scale = g("loc"), g("scale")
    loc = 0.0 if loc is None else loc
    scale = 1.0 if scale is None else scale
    ls = lambda: is_const_val(loc) and is_const_val(scale) and loc == 0 and scale == 1  # noqa: E731
    if name in ("loguniform", "reciprocal") and is_const_val(loc) and loc == 0:
        return "reciprocal", {"a": arith(operator.mul, g("a"), scale), "b": arith(operator.mul, g("b"), scale)}, size
    if name == "truncnorm":
        return "truncated_normal", {"loc": loc, "scale": scale,
                                    "low": arith(operator.add, loc, arith(operator.mul, g("a"), scale)),
                                    "high": arith(operator.add, loc, arith(operator.mul, g("b"), scale))}, size
    if name == "nbinom" and loc == 0:
        return "negative_binomial", {"n": g("n"), "p": g("p")}, size
    if name == "chi2" and ls():
        return "chi_squared", {"df": g("df")}, size
    if name == "skellam" and loc == 0:
        return "skellam", {"mu1": g("mu1"), "mu2": g("mu2")}, size
    if name == "hypergeom" and loc == 0:
        return "hypergeometric", {"ngood": g("n"), "nbad": arith(operator.sub, g("M"), g("n")),
                                  "nsample": g("N")}, size
    if name == "pareto" and loc == 0:
        return "pareto", {"a": g("b"), "scale": scale}, size
    if name == "gamma" and loc == 0:
        return "gamma", {"shape": g("a"), "scale": scale}, size
    if name == "erlang" and loc == 0:
        return "erlang", {"k": g("a"), "scale": scale}, size
    if name == "triang":
        return "triangular", {"left": loc, "mode": arith(operator.add, loc, arith(operator.mul, g("c"), scale)),
                              "right": arith(operator.add, loc, scale)}, size
    if name == "beta" and ls():
        return "beta", {"a": g("a"), "b": g("b")}, size
    if name == "t":
        return "students_t", {"df": g("df"), "loc": loc, "scale": scale}, size
    if name == "weibull_min" and loc == 0:
        return "weibull", {"a": g("c"), "scale": scale}, size
    if name == "lognorm" and loc == 0:
        sc = scale
        mean = math.log(sc) if is_const_val(sc) else F("log", sc)
        return "log_normal", {"mean": mean, "sigma": g("s")}, size
    if name in ("logistic", "laplace", "norm", "gumbel_r"):
        fam = {"norm": "normal", "gumbel_r": "gumbel"}.get(name, name)
        return fam, {"loc": loc, "scale": scale}, size
    if name == "f" and ls():
        return "f", {"dfnum": g("dfn"), "dfden": g("dfd")}, size
    if name == "betabinom" and loc == 0:
        return "beta_binomial", {"n": g("n"), "a": g("a"), "b": g("b")}, size
    if name == "invweibull":
        return "frechet", {"c": g("c"), "scale": scale, "loc": loc}, size
    if name == "invgauss" and loc == 0:
        return "inverse_gaussian", {"mean": arith(operator.mul, g("mu"), scale), "scale": scale}, size
    if name == "poisson" and loc == 0:
        return "poisson", {"lam": g("mu")}, size
    if name == "geom" and loc == 0:
        return "geometric", {"p": g("p")}, size
    if name == "expon" and loc == 0:
        return "exponential", {"scale": scale}, size
    if name == "uniform":
        return "uniform", {"low": loc, "high": arith(operator.add, loc, scale)}, size
    if name == "binom" and loc == 0:
        return "binomial", {"n": g("n"), "p": g("p")}, size
    if name == "bernoulli" and loc == 0:
        return "bernoulli", {"p": g("p")}, size
    if name == "randint" and loc == 0:
        return "discrete_uniform", {"low": g("low"), "high": arith(operator.sub, g("high"), 1)}, size
    if name == "rayleigh" and loc == 0:
        return "rayleigh", {"scale": scale}, size
    if name == "dirichlet":
        return "dirichlet", {"alpha": g("alpha")}, size
    if name == "multivariate_normal":
        return "multivariate_normal", {"mean": g("mean"), "cov": g("cov")}, size
    raise Unclassifiable(f"scipy.stats.{name}.rvs with these loc/scale not modelled")


def _canon_python(name, g):
    """A python ``random`` sampler in our conventions (no ``size``)."""
    if name == "random":
        return "uniform", {"low": 0.0, "high": 1.0}, None
    if name == "uniform":
        return "uniform", {"low": g("a"), "high": g("b")}, None
    if name == "randint":
        return "discrete_uniform", {"low": g("a"), "high": g("b")}, None
    if name in ("gauss", "normalvariate"):
        return "normal", {"loc": g("mu"), "scale": g("sigma")}, None
    if name == "expovariate":
        return "exponential", {"scale": arith(operator.truediv, 1.0, g("lambd"))}, None
    if name == "choice":
        return "choice", {"values": g("seq"), "pvals": None, "replace": True}, None
    if name == "choices":
        return "choices", {"values": g("population"), "pvals": g("weights"), "k": g("k")}, None
    if name == "sample":
        return "sample", {"population": g("population"), "k": g("k")}, None
    raise Unclassifiable(f"random.{name} not modelled")


def canon(lib, name, b):
    """(kind, params, size) in our registry's parameter conventions; kind may be a vector kind."""
    g = lambda k: val(b.get(k))  # noqa: E731
    size = b.get("size")
    if lib == "numpy":
        return _canon_numpy(name, g, size)
    if lib == "scipy":
        return _canon_scipy(name, g, size)
    if lib == "random":
        return _canon_python(name, g)
    raise Unclassifiable(f"unknown sampler library {lib}")


def make_draw(lib, name, args, kws, ctx, api, text):
    if lib == "numpy":
        if name == "rand":
            names, defaults = [], {}
            kws = dict(kws)
            if args:
                kws["size"] = C(tuple(val(a) for a in args)) if len(args) > 1 else args[0]
            args = []
        else:
            names, defaults = NP_SIG.get(name, ([], {}))
    elif lib == "scipy":
        shapes = SCIPY_SHAPES.get(name)
        if shapes is None:
            raise Unclassifiable(f"scipy.stats.{name} not modelled")
        if name in SCIPY_MULTI:
            names = shapes + ["size", "random_state"]
        elif name in SCIPY_DISCRETE:
            names = shapes + ["loc", "size", "random_state"]
        else:
            names = shapes + ["loc", "scale", "size", "random_state"]
        defaults = {}
    else:
        names, defaults = PY_SIG.get(name, ([], {}))
    b = bind(names, defaults, args, kws)
    kind, params, size = canon(lib, name, b)
    if size is not None and isc(size) and size.value is None:
        size = None
    return ctx.draw(kind, params, size, api, text)


def sc(params):
    return all(is_const_val(v) for v in params.values())
