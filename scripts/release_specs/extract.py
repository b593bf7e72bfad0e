#!/usr/bin/env python3
"""Static extraction of the UnpredictaBench release's ground-truth programs into family specs.

Every program under ``ground_truth_codes/<task folder>/<uid>.py`` of the release mirror is parsed with
:mod:`ast` and NEVER executed. For each program the script records

* uid, task folder, the folder whose ``questions.json`` the uid was derived from (uuid5 of
  ``"<folder>/questions.json:<index>"``, NAMESPACE_URL) and that index, category, regime;
* the distribution the generation prompt asked for (``prompts/<folder>_prompts.json[index]``), when there is one;
* the literal module-level assignments (``ast.literal_eval``) and, separately, module-level names whose value
  could be folded from literals (``np.array([...])``, ``(a - mu) / sigma`` ...);
* every sampler call (numpy.random / Generator / scipy.stats ``.rvs`` / python ``random``), with arguments
  resolved to literals where the names are module-level constants;
* a classification: family name + parameters in the conventions of ``ub_core/distributions.py``
  (read statically; the registry is imported, read-only, only to validate parameters), obtained by a small
  symbolic evaluation of the sampling loop (constant folding + pattern rules for the usual constructions:
  inverse-CDF transforms, compound draws, while-loop samplers, mixtures selected by an index draw).

Outputs (next to this file): ``specs.json`` and ``SUMMARY.md``.
Run: ``python3 extract.py`` (a few seconds; reads the mirror with ``git cat-file``).
"""
from __future__ import annotations

import ast
import collections
import itertools
import json
import math
import operator
import os
import re
import subprocess
import sys
import uuid

import numpy as np

# The release: a git checkout or bare mirror, named by ``--mirror DIR`` or ``$UB_RELEASE_MIRROR`` (no default: a
# default path would silently read whatever is there on another machine). The project is the checkout that holds
# this file (its registry is read, read-only, to validate parameters), never another one on the path.
MIRROR = os.environ.get("UB_RELEASE_MIRROR", "")
MAIN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------------------------------------ release I/O


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", MIRROR, *args], capture_output=True, text=True, check=True).stdout


def read_blobs(paths_to_sha: dict[str, str]) -> dict[str, str]:
    """Read many blobs at once with ``git cat-file --batch``."""
    shas = list(paths_to_sha.values())
    proc = subprocess.run(["git", "-C", MIRROR, "cat-file", "--batch"], input=("\n".join(shas) + "\n").encode(),
                          capture_output=True, check=True)
    data = proc.stdout
    out_by_sha: dict[str, str] = {}
    pos = 0
    for sha in shas:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode().split()
        size = int(header[2])
        out_by_sha[sha] = data[nl + 1: nl + 1 + size].decode("utf-8")
        pos = nl + 1 + size + 1
    return {p: out_by_sha[s] for p, s in paths_to_sha.items()}


def list_programs() -> dict[str, str]:
    out = {}
    for line in git("ls-tree", "-r", "HEAD", "ground_truth_codes").splitlines():
        meta, path = line.split("\t", 1)
        if path.endswith(".py"):
            out[path] = meta.split()[2]
    return out


TASK_PREFIX = {"textual_explicit": "text_explicit", "textual_implicit": "text_implicit",
               "code_explicit": "code_explicit", "code_implicit": "code_implicit",
               "textual_multimodal_explicit": "multimodal"}


def folder_meta(folder: str) -> tuple[str, str | None]:
    if folder == "realworld_human":
        return "real_world", None
    if folder == "shuffling_human":
        return "shuffling", None
    m = re.match(r"^(.*)_(concentrated|spread_out)_gpt-5\.4$", folder)
    if not m or m.group(1) not in TASK_PREFIX:
        raise ValueError(f"unknown task folder {folder}")
    return TASK_PREFIX[m.group(1)], m.group(2)


def uid_index(folders: list[str], limit: int = 200) -> dict[str, tuple[str, int]]:
    """uid -> (folder, index): the release derives uids as uuid5(NAMESPACE_URL, '<folder>/questions.json:<i>')."""
    table = {}
    for f in folders:
        for i in range(limit):
            table[str(uuid.uuid5(uuid.NAMESPACE_URL, f"{f}/questions.json:{i}"))] = (f, i)
    return table


def load_prompts(folder: str) -> list[dict] | None:
    name = folder.replace("_gpt-5.4", "")
    try:
        return json.loads(git("show", f"HEAD:prompts/{name}_prompts.json"))
    except subprocess.CalledProcessError:
        return None


SUBCAT_TO_FAMILY = {
    "Beta": "beta", "Triangular": "triangular", "Truncated Normal": "truncated_normal", "Uniform": "uniform",
    "Reciprocal": "reciprocal", "Arcsine": "arcsine", "Erlang": "erlang", "F": "f", "Gamma": "gamma",
    "Pareto": "pareto", "Weibull": "weibull", "Chi Squared": "chi_squared", "Exponential": "exponential",
    "Inverse Gaussian": "inverse_gaussian", "Log Normal": "log_normal", "Rayleigh Mixture": "rayleigh_mixture",
    "Fréchet": "frechet", "Gumbel": "gumbel", "Laplace": "laplace", "Student's T": "students_t",
    "Logistic": "logistic", "Normal": "normal", "Bernoulli": "bernoulli", "Poisson Binomial": "poisson_binomial",
    "Beta Binomial": "beta_binomial", "Binomial": "binomial", "Discrete Uniform": "discrete_uniform",
    "Hypergeometric": "hypergeometric", "Poisson": "poisson", "Skellam": "skellam", "Geometric": "geometric",
    "Negative Binomial": "negative_binomial", "Compound Poisson": "compound_poisson", "Dirichlet": "dirichlet",
    "Multinomial": "multinomial", "Multivariate Normal": "multivariate_normal", "Multivariate T": "multivariate_t",
    "Negative Multinomial": "negative_multinomial", "Categorical": "categorical",
    "Rectified Gaussian": "rectified_gaussian",
}

# ------------------------------------------------------------------------------------------------ our registry


def our_families() -> dict[str, str]:
    """Family name -> param_doc, read statically from ub_core/distributions.py (register_family / _register)."""
    src = open(os.path.join(MAIN, "ub_core", "distributions.py"), encoding="utf-8").read()
    out = {}
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_register":
            kw = {k.arg: k.value for k in node.keywords}
            if isinstance(kw.get("name"), ast.Constant):
                doc = kw.get("param_doc")
                out[kw["name"].value] = ast.unparse(doc) if doc is not None else ""
    return out


def registry_validator():
    """Our registry's validate(), imported read-only (no bytecode written); None if it cannot be imported."""
    sys.dont_write_bytecode = True
    sys.path.insert(0, MAIN)
    try:
        from ub_core.distributions import FAMILIES  # noqa: WPS433
    except Exception:  # pragma: no cover
        return None
    finally:
        sys.path.pop(0)

    def validate(family, params):
        fam = FAMILIES.get(family)
        if fam is None:
            return None
        try:
            fam.validate(params)
            return "ok"
        except Exception as exc:  # noqa: BLE001
            return f"error: {exc}"

    return validate


# ------------------------------------------------------------------------------------------------ symbolic values


class RNGObj:
    def __repr__(self):
        return "<Generator>"


class Unclassifiable(Exception):
    pass


def C(v):
    return ast.Constant(value=v)


def isc(n) -> bool:
    return isinstance(n, ast.Constant)


def isnum(n) -> bool:
    return isc(n) and isinstance(n.value, (int, float, np.integer, np.floating)) and not isinstance(n.value, bool)


DRAW = "__draw__"


def dnode(d) -> ast.Call:
    return ast.Call(func=ast.Name(id=DRAW, ctx=ast.Load()), args=[C(d.id)], keywords=[])


def F(name, *args) -> ast.Call:
    return ast.Call(func=ast.Name(id="F:" + name, ctx=ast.Load()), args=list(args), keywords=[])


def fname(n):
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("F:"):
        return n.func.id[2:]
    return None


def unk(n) -> ast.Name:
    try:
        text = ast.unparse(n)
    except Exception:  # noqa: BLE001
        text = type(n).__name__
    return ast.Name(id="?" + text, ctx=ast.Load())


def has_unknown(n) -> str | None:
    for x in ast.walk(n):
        if isinstance(x, ast.Name) and x.id.startswith("?"):
            return x.id[1:]
    return None


class Draw:
    def __init__(self, did, kind, params, size=None, api="", text=""):
        self.id, self.kind, self.params, self.size, self.api, self.text = did, kind, params, size, api, text


class Ctx:
    def __init__(self, aliases):
        self.aliases = aliases
        self.draws: list[Draw] = []
        self.appends: dict[str, ast.AST] = {}
        self.notes: list[str] = []
        self.override: dict[str, int] = {}
        self.selector_weights = None
        self.has_defs = False

    def draw(self, kind, params, size=None, api="", text="") -> ast.Call:
        d = Draw(len(self.draws), kind, params, size, api, text)
        self.draws.append(d)
        return dnode(d)

    def as_draw(self, n):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == DRAW:
            return self.draws[n.args[0].value]
        return None


def show(n, ctx=None) -> str:
    """Readable text of a folded expression (draws shown as their API call)."""
    class R(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if ctx is not None and ctx.as_draw(node) is not None:
                d = ctx.as_draw(node)
                return ast.Name(id=f"<{d.kind}#{d.id}>", ctx=ast.Load())
            if fname(node):
                node.func = ast.Name(id=fname(node), ctx=ast.Load())
            return node

        def visit_Constant(self, node):
            v = node.value
            if isinstance(v, np.ndarray):
                return ast.Name(id=repr(v.tolist()), ctx=ast.Load())
            if isinstance(v, (np.floating, np.integer)):
                return ast.Constant(value=v.item())
            if isinstance(v, float):
                return ast.Constant(value=float(f"{v:.15g}"))
            return node
    try:
        import copy
        return ast.unparse(R().visit(copy.deepcopy(n)))
    except Exception:  # noqa: BLE001
        return "<expr>"


# ------------------------------------------------------------------------------------------------ paths & samplers

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


def canon(lib, name, b):
    """(kind, params, size) in our registry's parameter conventions; kind may be a vector kind."""
    g = lambda k: val(b.get(k))  # noqa: E731
    size = b.get("size")
    if lib == "numpy":
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
    if lib == "scipy":
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
    if lib == "random":
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


# ------------------------------------------------------------------------------------------------ folding

BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
       ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.MatMult: operator.matmul}
CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
       ast.NotEq: operator.ne}


def _norm_cdf(x, loc=0.0, scale=1.0):
    return 0.5 * (1.0 + math.erf((x - loc) / (scale * math.sqrt(2.0))))


def _norm_ppf(q, loc=0.0, scale=1.0):
    from scipy.stats import norm  # pure function, used for constant folding only
    return float(norm.ppf(q, loc, scale))


PURE = {
    "numpy.array": lambda x, dtype=None, **k: np.array(x, dtype=dtype),
    "numpy.asarray": lambda x, dtype=None, **k: np.asarray(x, dtype=dtype),
    "numpy.log": np.log, "numpy.exp": np.exp, "numpy.sqrt": np.sqrt, "numpy.sin": np.sin, "numpy.cos": np.cos,
    "numpy.append": np.append, "numpy.concatenate": lambda seq, **k: np.concatenate(seq),
    "numpy.arange": np.arange, "numpy.zeros": lambda *a, **k: np.zeros(*a, **k), "numpy.ones": np.ones,
    "numpy.cumsum": np.cumsum, "numpy.sum": np.sum, "numpy.prod": np.prod, "numpy.linalg.cholesky": np.linalg.cholesky,
    "numpy.isclose": np.isclose, "numpy.all": np.all, "numpy.any": np.any, "numpy.abs": np.abs, "numpy.ceil": np.ceil,
    "numpy.dot": np.dot, "numpy.zeros_like": np.zeros_like,
    "math.exp": math.exp, "math.log": math.log, "math.sqrt": math.sqrt, "math.ceil": math.ceil,
    "scipy.stats.norm.cdf": lambda x, loc=0.0, scale=1.0: _norm_cdf(x, loc, scale),
    "scipy.stats.norm.ppf": _norm_ppf,
    "builtins.len": len, "builtins.float": float, "builtins.int": int, "builtins.sum": sum, "builtins.max": max,
    "builtins.min": min, "builtins.abs": abs, "builtins.list": list, "builtins.range": lambda *a: list(range(*a)),
    "builtins.round": round, "builtins.tuple": tuple, "builtins.sorted": sorted, "builtins.str": str,
}
SYMFUN = {
    "numpy.log": "log", "math.log": "log", "numpy.exp": "exp", "math.exp": "exp", "numpy.sqrt": "sqrt",
    "math.sqrt": "sqrt", "numpy.sin": "sin", "math.sin": "sin", "numpy.cos": "cos", "math.cos": "cos",
    "numpy.sum": "sum", "builtins.sum": "sum", "numpy.prod": "prod", "numpy.abs": "abs", "builtins.abs": "abs",
    "numpy.sign": "sign", "numpy.ceil": "ceil", "math.ceil": "ceil", "builtins.max": "max", "numpy.maximum": "max",
    "builtins.min": "min", "builtins.float": "float", "builtins.int": "int", "numpy.searchsorted": "searchsorted",
    "numpy.dot": "dot", "scipy.stats.norm.ppf": "norm_ppf", "scipy.stats.norm.cdf": "norm_cdf",
    "numpy.floor": "floor", "builtins.len": "len",
}
SAFE_METHODS = {"sum", "prod", "copy", "tolist", "astype", "mean", "cumsum", "item", "join", "keys", "values"}


def fold(n, env, ctx):
    t = type(n)
    if t is ast.Constant:
        return n
    if t is ast.Name:
        if n.id in env:
            return env[n.id]
        if n.id in ("float", "int", "bool", "str"):
            return C({"float": float, "int": int, "bool": bool, "str": str}[n.id])
        return unk(n)
    if t is ast.Attribute:
        p = path_of(n, env, ctx)
        if p in CONSTS:
            return C(CONSTS[p])
        base = fold(n.value, env, ctx)
        if isc(base) and isinstance(base.value, np.ndarray) and n.attr in ("T", "size", "shape"):
            return C(getattr(base.value, n.attr))
        return unk(n)
    if t is ast.BinOp:
        left, right = fold(n.left, env, ctx), fold(n.right, env, ctx)
        if isc(left) and isc(right):
            try:
                return C(BIN[type(n.op)](left.value, right.value))
            except Exception:  # noqa: BLE001
                pass
        v = vector_algebra(n.op, left, right, ctx)
        if v is not None:
            return v
        return ast.BinOp(left=left, op=n.op, right=right)
    if t is ast.UnaryOp:
        o = fold(n.operand, env, ctx)
        if isc(o):
            try:
                return C({ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}[type(n.op)](o.value))
            except Exception:  # noqa: BLE001
                pass
        return ast.UnaryOp(op=n.op, operand=o)
    if t is ast.BoolOp:
        vals = [fold(v, env, ctx) for v in n.values]
        if all(isc(v) for v in vals):
            if isinstance(n.op, ast.And):
                return C(all(v.value for v in vals))
            return C(any(v.value for v in vals))
        return ast.BoolOp(op=n.op, values=vals)
    if t is ast.Compare:
        left = fold(n.left, env, ctx)
        comps = [fold(c, env, ctx) for c in n.comparators]
        if isc(left) and all(isc(c) for c in comps):
            try:
                ok, cur = True, left.value
                for op, c in zip(n.ops, comps):
                    ok = ok and bool(CMP[type(op)](cur, c.value))
                    cur = c.value
                return C(ok)
            except Exception:  # noqa: BLE001
                pass
        return ast.Compare(left=left, ops=n.ops, comparators=comps)
    if t is ast.IfExp:
        test = fold(n.test, env, ctx)
        if isc(test):
            return fold(n.body if test.value else n.orelse, env, ctx)
        return ast.IfExp(test=test, body=fold(n.body, env, ctx), orelse=fold(n.orelse, env, ctx))
    if t in (ast.List, ast.Tuple):
        elts = [fold(e, env, ctx) for e in n.elts]
        if all(isc(e) for e in elts):
            vals = [e.value for e in elts]
            return C(vals if t is ast.List else tuple(vals))
        return (ast.List if t is ast.List else ast.Tuple)(elts=elts, ctx=ast.Load())
    if t is ast.Dict:
        keys = [fold(k, env, ctx) if k is not None else None for k in n.keys]
        vals = [fold(v, env, ctx) for v in n.values]
        if all(k is not None and isc(k) for k in keys) and all(isc(v) for v in vals):
            return C({k.value: v.value for k, v in zip(keys, vals)})
        return ast.Dict(keys=keys, values=vals)
    if t is ast.Subscript:
        v = fold(n.value, env, ctx)
        s = fold(n.slice, env, ctx)
        dv = ctx.as_draw(v)
        if dv is not None and isnum(dv.size or C(None)) and dv.size.value == 1 and isc(s) and s.value == 0:
            return ctx.draw(dv.kind, dv.params, None, dv.api, dv.text + "[0]")
        if isc(v) and isc(s):
            try:
                return C(v.value[s.value])
            except Exception:  # noqa: BLE001
                pass
        return ast.Subscript(value=v, slice=s, ctx=ast.Load())
    if t is ast.Slice:
        parts = [fold(x, env, ctx) if x is not None else C(None) for x in (n.lower, n.upper, n.step)]
        if all(isc(x) for x in parts):
            return C(slice(*[x.value for x in parts]))
        return unk(n)
    if t is ast.Call:
        return fold_call(n, env, ctx)
    return unk(n)


def fold_call(n, env, ctx):
    p = path_of(n.func, env, ctx)
    args = []
    for a in n.args:
        if isinstance(a, ast.Starred):
            v = fold(a.value, env, ctx)
            if isc(v) and isinstance(v.value, (list, tuple)):
                args.extend(C(x) for x in v.value)
            else:
                return unk(n)
        else:
            args.append(fold(a, env, ctx))
    kws = {k.arg: fold(k.value, env, ctx) for k in n.keywords if k.arg}
    if p:
        if p in RNG_CTORS:
            return C(RNGObj())
        s = sampler_of(p)
        if s:
            lib, name, frozen = s
            if frozen:  # scipy.stats.X(...).rvs(...)
                fc = n.func.value
                fargs = [fold(a, env, ctx) for a in fc.args]
                fkws = {k.arg: fold(k.value, env, ctx) for k in fc.keywords if k.arg}
                rkws = dict(fkws)
                rkws.update(kws)
                if args:
                    rkws["size"] = args[0]
                args, kws = fargs, rkws
            if lib == "random" and name == "shuffle":
                return unk(n)  # handled as a statement
            return make_draw(lib, name, args, kws, ctx, api=p, text=ast.unparse(n))
        if p in PURE and all(isc(a) for a in args) and all(isc(v) for v in kws.values()):
            try:
                return C(PURE[p](*[a.value for a in args], **{k: v.value for k, v in kws.items()}))
            except Exception:  # noqa: BLE001
                pass
        sym = SYMFUN.get(p)
        if sym:
            if sym in ("float", "int") and len(args) == 1:
                return args[0]
            return F(sym, *args)
        return unk(n)
    if isinstance(n.func, ast.Attribute):
        recv = fold(n.func.value, env, ctx)
        m = n.func.attr
        if isc(recv) and all(isc(a) for a in args) and all(isc(v) for v in kws.values()) and m in SAFE_METHODS:
            try:
                return C(getattr(recv.value, m)(*[a.value for a in args], **{k: v.value for k, v in kws.items()}))
            except Exception:  # noqa: BLE001
                pass
        if m in ("copy", "tolist", "item", "astype"):
            return recv
        if m in ("sum", "prod", "mean"):
            return F(m, recv)
        if m == "join" and isc(recv):
            return F("join", recv, *args)
    return unk(n)


def is_std_normal(d):
    return d is not None and d.kind == "normal" and d.params.get("loc") == 0 and d.params.get("scale") == 1


def vector_algebra(op, left, right, ctx):
    """Fold-time constructions on vector draws: L @ z, mu + mvn, mvn * sqrt(nu/chi2), gamma_vec / sum(gamma_vec)."""
    dl, dr = ctx.as_draw(left), ctx.as_draw(right)
    if isinstance(op, ast.MatMult) and isc(left) and is_std_normal(dr) and isnum(dr.size or C(None)):
        L = np.asarray(left.value, dtype=float)
        return ctx.draw("multivariate_normal", {"mean": np.zeros(L.shape[0]), "cov": L @ L.T}, None,
                        "derived", "L @ standard_normal(k) with L = cholesky(S)")
    if isinstance(op, ast.Add):
        for c, d in ((left, dr), (right, dl)):
            if isc(c) and d is not None and d.kind in ("multivariate_normal", "multivariate_t") \
                    and isinstance(c.value, (list, tuple, np.ndarray)) and np.ndim(c.value) == 1:
                key = "mean" if d.kind == "multivariate_normal" else "loc"
                if not is_const_val(d.params[key]):
                    return None
                params = dict(d.params)
                params[key] = np.asarray(d.params[key], dtype=float) + np.asarray(c.value, dtype=float)
                return ctx.draw(d.kind, params, d.size, "derived", f"vector shift of {d.kind}#{d.id}")
    if isinstance(op, ast.Mult):
        for v, s in ((dl, right), (dr, left)):
            if v is not None and v.kind == "multivariate_normal" and fname(s) == "sqrt" and is_const_val(v.params["mean"]) \
                    and np.allclose(np.asarray(v.params["mean"], dtype=float), 0):
                inner = s.args[0]
                if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div) and isnum(inner.left):
                    chi = ctx.as_draw(inner.right)
                    if chi is not None and chi.kind == "chi_squared" and is_const_val(chi.params["df"]) \
                            and abs(chi.params["df"] - inner.left.value) < 1e-12:
                        return ctx.draw("multivariate_t", {"loc": v.params["mean"], "shape": v.params["cov"],
                                                           "df": chi.params["df"]}, v.size, "derived",
                                        "mvn(0, S) * sqrt(nu / chi2(nu))")
    if isinstance(op, ast.Div) and dl is not None and dl.kind == "gamma" and fname(right) == "sum" \
            and ctx.as_draw(right.args[0]) is dl:
        shape = dl.params["shape"]
        if is_const_val(shape) and np.ndim(shape) == 1 and is_const_val(dl.params["scale"]):
            return ctx.draw("dirichlet", {"alpha": np.asarray(shape, dtype=float)}, None, "derived",
                            "gamma(alpha_i) / sum")
    return None


# ------------------------------------------------------------------------------------------------ statements


def names_in(node):
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}


def assign(tgt, v, env, ctx):
    if isinstance(tgt, ast.Name):
        env[tgt.id] = v
    elif isinstance(tgt, (ast.Tuple, ast.List)):
        n = len(tgt.elts)
        if isc(v) and isinstance(v.value, (list, tuple, np.ndarray)) and len(v.value) == n:
            for e, x in zip(tgt.elts, v.value):
                assign(e, C(x), env, ctx)
        elif isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) == n:
            for e, x in zip(tgt.elts, v.elts):
                assign(e, x, env, ctx)
        else:
            for e in tgt.elts:
                assign(e, unk(v), env, ctx)
    elif isinstance(tgt, ast.Subscript):
        base = tgt.value
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            env[base.id] = unk(tgt)


def exec_block(stmts, env, ctx):
    for s in stmts:
        exec_stmt(s, env, ctx)


def exec_stmt(s, env, ctx):
    if isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Assert, ast.Raise, ast.Break, ast.Continue)):
        return
    if isinstance(s, (ast.FunctionDef, ast.ClassDef)):
        ctx.has_defs = True
        return
    if isinstance(s, ast.Assign):
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and s.targets[0].id in ctx.override:
            name = s.targets[0].id
            call = s.value
            pkw = [k.value for k in call.keywords if k.arg == "p"]
            ctx.selector_weights = val(fold(pkw[0], env, ctx)) if pkw else None
            env[name] = C(ctx.override[name])
            return
        v = fold(s.value, env, ctx)
        for tgt in s.targets:
            assign(tgt, v, env, ctx)
        return
    if isinstance(s, ast.AnnAssign) and s.value is not None:
        assign(s.target, fold(s.value, env, ctx), env, ctx)
        return
    if isinstance(s, ast.AugAssign):
        if isinstance(s.target, ast.Name):
            env[s.target.id] = fold(ast.BinOp(left=ast.Name(id=s.target.id, ctx=ast.Load()), op=s.op, right=s.value),
                                    env, ctx)
        else:
            assign(s.target, None, env, ctx)
        return
    if isinstance(s, ast.Expr):
        call = s.value
        if isinstance(call, ast.Call):
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr == "append" and isinstance(f.value, ast.Name) and call.args:
                ctx.appends[f.value.id] = fold(call.args[0], env, ctx)
                if f.value.id in env:  # the list is mutated: its folded value is no longer known
                    env[f.value.id] = unk(call)
                return
            if isinstance(f, ast.Attribute) and f.attr in ("extend", "insert", "pop", "remove", "sort", "reverse") \
                    and isinstance(f.value, ast.Name):
                env[f.value.id] = unk(call)
                return
            p = path_of(f, env, ctx)
            if p in ("random.shuffle", "numpy.random.shuffle", "Generator.shuffle") and call.args \
                    and isinstance(call.args[0], ast.Name):
                name = call.args[0].id
                items = env.get(name, unk(call.args[0]))
                env[name] = ctx.draw("shuffle", {"items": val(items)}, None, p, ast.unparse(call))
                return
        return
    if isinstance(s, ast.If):
        test = fold(s.test, env, ctx)
        if isc(test):
            exec_block(s.body if test.value else s.orelse, env, ctx)
            return
        saved = dict(ctx.appends)
        e1, e2 = dict(env), dict(env)
        exec_block(s.body, e1, ctx)
        a1 = ctx.appends
        ctx.appends = dict(saved)
        exec_block(s.orelse, e2, ctx)
        a2 = ctx.appends
        for k in set(e1) | set(e2):
            v1, v2 = e1.get(k, env.get(k)), e2.get(k, env.get(k))
            if v1 is v2:
                env[k] = v1
            else:
                env[k] = ast.IfExp(test=test, body=v1 if v1 is not None else unk(s),
                                   orelse=v2 if v2 is not None else unk(s))
        merged = {}
        for k in set(a1) | set(a2):
            v1, v2 = a1.get(k, saved.get(k)), a2.get(k, saved.get(k))
            merged[k] = v1 if v1 is v2 else ast.IfExp(test=test, body=v1 if v1 is not None else unk(s),
                                                       orelse=v2 if v2 is not None else unk(s))
        ctx.appends = merged
        return
    if isinstance(s, ast.While):
        if recognize_negmult_while(s, env, ctx) or recognize_knuth_while(s, env, ctx):
            return
        mark_unknown(s, env, ctx, "while-loop not recognised")
        return
    if isinstance(s, ast.For):
        if recognize_cumulative_for(s, env, ctx) or recognize_counter_for(s, env, ctx):
            return
        mark_unknown(s, env, ctx, "inner for-loop not recognised")
        return
    # anything else: mark names it assigns as unknown
    mark_unknown(s, env, ctx, f"statement {type(s).__name__} not modelled")


def mark_unknown(s, env, ctx, why):
    ctx.notes.append(why)
    for x in ast.walk(s):
        if isinstance(x, (ast.Assign, ast.AugAssign)):
            for tgt in (x.targets if isinstance(x, ast.Assign) else [x.target]):
                for nm in ast.walk(tgt):
                    if isinstance(nm, ast.Name):
                        env[nm.id] = unk(s)
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "append" \
                and isinstance(x.func.value, ast.Name):
            ctx.appends[x.func.value.id] = unk(s)
            env[x.func.value.id] = unk(s)


def _choice_in(stmts, env, ctx):
    """The (name, call) of an `outcome = <...>.choice(K or list, p=probs)` statement in a block."""
    for st in ast.walk(ast.Module(body=stmts, type_ignores=[])):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                and isinstance(st.value, ast.Call):
            p = path_of(st.value.func, env, ctx) or ""
            if p.endswith(".choice"):
                return st.targets[0].id, st.value
    return None, None


def recognize_negmult_while(s, env, ctx) -> bool:
    """while failures < x0: outcome = choice(K, p); if outcome == stop: failures += 1 [else] counts[idx] += 1."""
    t = s.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Lt)
            and isinstance(t.left, ast.Name)):
        return False
    fail = t.left.id
    x0 = fold(t.comparators[0], env, ctx)
    if not isnum(x0):
        return False
    oname, call = _choice_in(s.body, env, ctx)
    if oname is None:
        return False
    a = fold(call.args[0], env, ctx) if call.args else None
    pk = [k.value for k in call.keywords if k.arg == "p"]
    if a is None or not pk:
        return False
    pv = fold(pk[0], env, ctx)
    if not (isc(a) and isc(pv)):
        return False
    values = list(range(int(a.value))) if isinstance(a.value, (int, np.integer)) else list(np.asarray(a.value).tolist())
    probs = [float(x) for x in np.asarray(pv.value, dtype=float)]
    stop = None
    count_map: dict[int, int] = {}
    counts_name = None

    def scan(stmts, cond):  # cond: None (always) / ('eq', v) / ('ne', v)
        nonlocal stop, counts_name
        for st in stmts:
            if isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and isinstance(st.test.left, ast.Name) \
                    and st.test.left.id == oname and isinstance(st.test.ops[0], ast.Eq):
                v = fold(st.test.comparators[0], env, ctx)
                scan(st.body, ("eq", v.value))
                scan(st.orelse, ("ne", v.value))
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and st.target.id == fail:
                if cond and cond[0] == "eq":
                    stop = cond[1]
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Subscript) \
                    and isinstance(st.target.value, ast.Name):
                counts_name = st.target.value.id
                for o in values:
                    if cond and ((cond[0] == "eq" and o != cond[1]) or (cond[0] == "ne" and o == cond[1])):
                        continue
                    e2 = dict(env)
                    e2[oname] = C(o)
                    idx = fold(st.target.slice, e2, ctx)
                    if isnum(idx):
                        count_map[int(o)] = int(idx.value)
    scan(s.body, None)
    if stop is None or counts_name is None:
        return False
    p_stop = probs[values.index(stop)]
    env[counts_name] = ctx.draw("negmult_counts", {"n": x0.value, "values": values, "probs": probs, "stop": stop,
                                                    "count_index": count_map}, None, "while-loop",
                                "negative-multinomial trial loop")
    env[fail] = C(x0.value)
    env[oname] = unk(s)
    ctx.notes.append(f"while-loop = negative multinomial trials (stop outcome {stop}, p_stop={p_stop})")
    return True


def recognize_knuth_while(s, env, ctx) -> bool:
    """while product > threshold: product *= U; count += 1   (Knuth's Poisson sampler)."""
    t = s.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Gt)
            and isinstance(t.left, ast.Name)):
        return False
    prod_name = t.left.id
    thr = fold(t.comparators[0], env, ctx)
    if not isnum(thr):
        return False
    count_name = None
    mult_ok = False
    for st in s.body:
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            if st.target.id == prod_name and isinstance(st.op, ast.Mult):
                d = ctx.as_draw(fold(st.value, env, ctx))
                mult_ok = d is not None and d.kind == "uniform" and d.params == {"low": 0.0, "high": 1.0}
            elif isinstance(st.op, ast.Add) and isnum(fold(st.value, env, ctx)) and fold(st.value, env, ctx).value == 1:
                count_name = st.target.id
    if not (mult_ok and count_name):
        return False
    c0, p0 = env.get(count_name), env.get(prod_name)
    if not (isnum(c0) and isnum(p0) and p0.value == 1):
        return False
    lam = -math.log(thr.value)
    d = ctx.draw("poisson", {"lam": lam}, None, "while-loop", "Knuth product-of-uniforms loop")
    env[count_name] = ast.BinOp(left=d, op=ast.Add(), right=C(c0.value + 1))
    env[prod_name] = unk(s)
    ctx.notes.append(f"while-loop = Knuth Poisson sampler, lam = -log({thr.value:.6g})")
    return True


def recognize_cumulative_for(s, env, ctx) -> bool:
    """for i, p in enumerate(probs): cum += p; if u < cum: out.append(i); break  else: out.append(K)."""
    it = s.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate"):
        return False
    probs = fold(it.args[0], env, ctx)
    if not isc(probs) or not isinstance(s.target, ast.Tuple):
        return False
    idx_name = s.target.elts[0].id
    out_name, u_draw = None, None
    for st in ast.walk(ast.Module(body=s.body, type_ignores=[])):
        if isinstance(st, ast.If) and isinstance(st.test, ast.Compare):
            u_draw = ctx.as_draw(fold(st.test.left, env, ctx))
            for b in st.body:
                if isinstance(b, ast.Expr) and isinstance(b.value, ast.Call) and isinstance(b.value.func, ast.Attribute) \
                        and b.value.func.attr == "append" and isinstance(b.value.args[0], ast.Name) \
                        and b.value.args[0].id == idx_name:
                    out_name = b.value.func.value.id
    if out_name is None or u_draw is None or u_draw.kind != "uniform":
        return False
    pv = [float(x) for x in np.asarray(probs.value, dtype=float)]
    values = list(range(len(pv)))
    if s.orelse:
        last = fold(s.orelse[0].value.args[0], env, ctx) if isinstance(s.orelse[0], ast.Expr) else None
        if isnum(last):
            values.append(int(last.value))
            pv.append(1.0 - sum(pv))
    ctx.appends[out_name] = ctx.draw("choice", {"values": values, "pvals": pv, "replace": True}, None, "for-loop",
                                     "inverse-CDF scan over cumulative probabilities")
    ctx.notes.append("for-loop = inverse-CDF categorical scan")
    return True


def recognize_counter_for(s, env, ctx) -> bool:
    """for _ in range(m): if U > c: counter += 1   ->  counter + Binomial(m, P(U > c))."""
    it = fold(s.iter, env, ctx)
    if not (isc(it) and isinstance(it.value, list)) or len(s.body) != 1 or not isinstance(s.body[0], ast.If):
        return False
    st = s.body[0]
    if st.orelse or len(st.body) != 1 or not isinstance(st.body[0], ast.AugAssign):
        return False
    tgt = st.body[0].target
    if not isinstance(tgt, ast.Name) or not isnum(env.get(tgt.id, C(None))):
        return False
    test = fold(st.test, env, ctx)
    p = bernoulli_prob(test, ctx)
    if p is None:
        return False
    d = ctx.draw("binomial", {"n": len(it.value), "p": p}, None, "for-loop", "count of successes in a for-loop")
    env[tgt.id] = ast.BinOp(left=C(env[tgt.id].value), op=ast.Add(), right=d)
    ctx.notes.append("for-loop = binomial count")
    return True


def bernoulli_prob(test, ctx):
    """P(test) for a comparison of a U(a, b) draw with a constant."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right, op = test.left, test.comparators[0], test.ops[0]
    d = ctx.as_draw(left)
    c = right
    if d is None:
        d, c = ctx.as_draw(right), left
        op = {ast.Lt: ast.Gt(), ast.LtE: ast.GtE(), ast.Gt: ast.Lt(), ast.GtE: ast.LtE()}.get(type(op))
    if d is None or op is None or not isnum(c):
        return None
    cdf = scalar_cdf(d)
    if cdf is None:
        return None
    q = cdf(float(c.value))
    return q if isinstance(op, (ast.Lt, ast.LtE)) else 1.0 - q


def scalar_cdf(d):
    if not all(is_const_val(v) for v in d.params.values()):
        return None
    if d.kind == "uniform":
        lo, hi = d.params["low"], d.params["high"]
        return lambda x: min(1.0, max(0.0, (x - lo) / (hi - lo)))
    if d.kind == "normal":
        return lambda x: _norm_cdf(x, d.params["loc"], d.params["scale"])
    return None


# ------------------------------------------------------------------------------------------------ classification


class Law:
    def __init__(self, family, params, pattern, notes=None, extra=None):
        self.family, self.params, self.pattern = family, params, pattern
        self.notes = list(notes or [])
        self.extra = dict(extra or {})

    def __repr__(self):
        return f"Law({self.family}, {self.params}, {self.pattern})"


def linear(n):
    """n = const + sum(coef * term) with numeric const/coefs; terms are non-linear atoms."""
    if isnum(n):
        return float(n.value), []
    if isinstance(n, ast.BinOp):
        if isinstance(n.op, (ast.Add, ast.Sub)):
            c1, t1 = linear(n.left)
            c2, t2 = linear(n.right)
            s = 1.0 if isinstance(n.op, ast.Add) else -1.0
            return c1 + s * c2, t1 + [(s * k, t) for k, t in t2]
        if isinstance(n.op, ast.Mult):
            if isnum(n.left):
                c, t = linear(n.right)
                k = float(n.left.value)
                return k * c, [(k * a, b) for a, b in t]
            if isnum(n.right):
                c, t = linear(n.left)
                k = float(n.right.value)
                return k * c, [(k * a, b) for a, b in t]
        if isinstance(n.op, ast.Div) and isnum(n.right):
            c, t = linear(n.left)
            k = 1.0 / float(n.right.value)
            return k * c, [(k * a, b) for a, b in t]
        if isinstance(n.op, ast.Mult):  # (k * X) * Y -> k * (X * Y)
            for side in ("left", "right"):
                c, t = linear(getattr(n, side))
                if abs(c) < 1e-300 and len(t) == 1 and abs(t[0][0] - 1) > 1e-15:
                    other = n.right if side == "left" else n.left
                    prod = ast.BinOp(left=t[0][1], op=ast.Mult(), right=other) if side == "left" \
                        else ast.BinOp(left=other, op=ast.Mult(), right=t[0][1])
                    return 0.0, [(t[0][0], prod)]
    if isinstance(n, ast.UnaryOp):
        if isinstance(n.op, ast.USub):
            c, t = linear(n.operand)
            return -c, [(-a, b) for a, b in t]
        if isinstance(n.op, ast.UAdd):
            return linear(n.operand)
    return 0.0, [(1.0, n)]


def merge_terms(terms, ctx):
    out: dict[str, list] = {}
    for k, t in terms:
        key = ast.dump(t) if not isinstance(t, ast.AST) else show_key(t)
        if key in out:
            out[key][0] += k
        else:
            out[key] = [k, t]
    return [(k, t) for k, t in out.values() if abs(k) > 0]


def show_key(t):
    try:
        return ast.dump(t)
    except Exception:  # noqa: BLE001
        return repr(id(t))


def std_uniform(n, ctx):
    d = ctx.as_draw(n)
    return d is not None and d.kind == "uniform" and d.size is None \
        and all(is_const_val(v) for v in d.params.values()) \
        and abs(d.params["low"]) < 1e-9 and abs(d.params["high"] - 1) < 1e-9 and d


def uniform_like(n, ctx):
    """The U(0,1) draw u when n is u or 1 - u (same law)."""
    if std_uniform(n, ctx):
        return ctx.as_draw(n)
    c, t = linear(n)
    if len(t) == 1 and abs(c - 1) < 1e-12 and abs(t[0][0] + 1) < 1e-12 and std_uniform(t[0][1], ctx):
        return ctx.as_draw(t[0][1])
    return None


def neg_log_uniform(n, ctx):
    """True when n = -log(U) (or -log(1-U)), an Exp(1) variable."""
    c, t = linear(n)
    return abs(c) < 1e-12 and len(t) == 1 and abs(t[0][0] + 1) < 1e-12 and fname(t[0][1]) == "log" \
        and uniform_like(t[0][1].args[0], ctx) is not None


def sc(params):
    return all(is_const_val(v) for v in params.values())


def law(n, ctx) -> Law:
    u = has_unknown(n)
    if u is not None:
        raise Unclassifiable(f"depends on code the static analyser does not model: {u[:120]}")
    if isc(n):
        return Law("constant", {"value": num(n.value)}, "constant")
    d = ctx.as_draw(n)
    if d is not None:
        return law_of_draw(d, ctx)
    special = special_law(n, ctx)
    if special is not None:
        return special
    c, terms = linear(n)
    terms = merge_terms(terms, ctx)
    if not terms:
        return Law("constant", {"value": c}, "constant")
    if len(terms) == 1:
        a, core = terms[0]
        if a == 1 and abs(c) < 1e-15 and core is n:
            base, a0, b0, pat = core_law(core, ctx)
            return affine_law(base, a0, b0, pat)
        base, a0, b0, pat = core_law(core, ctx)
        return affine_law(base, a * a0, a * b0 + c, pat)
    return multi_term_law(c, terms, ctx)


def special_law(n, ctx):
    fn = fname(n)
    if isinstance(n, ast.Subscript):
        return subscript_law(n, ctx)
    if isinstance(n, ast.IfExp):
        return ifexp_law(n, ctx)
    if isinstance(n, ast.Compare):
        p = bernoulli_prob(n, ctx)
        if p is not None:
            return Law("bernoulli", {"p": num(p)}, "indicator: U < p")
        raise Unclassifiable(f"comparison not modelled: {show(n, ctx)}")
    if fn == "max" and len(n.args) == 2:
        a, b = n.args
        inner = b if isnum(a) else a if isnum(b) else None
        zero = a if isnum(a) else b
        if inner is not None and zero.value == 0:
            L = law(inner, ctx)
            if L.family == "normal":
                return Law("rectified_gaussian", dict(L.params), "max(0, normal)")
        raise Unclassifiable(f"max() not modelled: {show(n, ctx)}")
    if fn in ("sum",):
        return sum_law(n.args[0], ctx)
    if fn == "dot":
        d = ctx.as_draw(n.args[0])
        w = n.args[1]
        if d is not None and d.kind == "multinomial" and isc(w) and sc(d.params):
            return Law("multinomial_weighted_sum", {"n": num(d.params["n"]), "values": num(w.value),
                                                    "pvals": num(d.params["pvals"])},
                       "dot(multinomial counts, values) = sum of n iid categorical values")
        raise Unclassifiable(f"dot() not modelled: {show(n, ctx)}")
    if fn == "join":
        d = ctx.as_draw(n.args[1]) if len(n.args) > 1 else None
        if d is not None and d.kind == "shuffle":
            return shuffle_law(d, joined=n.args[0].value)
        raise Unclassifiable(f"string join not modelled: {show(n, ctx)}")
    if fn == "ceil":
        inner = n.args[0]
        c, t = linear(inner)
        if abs(c) < 1e-12 and len(t) == 1 and fname(t[0][1]) == "log" and uniform_like(t[0][1].args[0], ctx):
            k = t[0][0]  # log(U) * k with k = 1/log(1-p) < 0
            if k < 0:
                return Law("geometric", {"p": num(1.0 - math.exp(1.0 / k))}, "ceil(log U / log(1-p)) (inverse CDF)")
        raise Unclassifiable(f"ceil() not modelled: {show(n, ctx)}")
    return None


def subscript_law(n, ctx):
    v, s = n.value, n.slice
    if not isc(s):
        raise Unclassifiable(f"symbolic index: {show(n, ctx)}")
    idx = s.value
    d = ctx.as_draw(v)
    if d is None:
        raise Unclassifiable(f"subscript of a non-draw: {show(n, ctx)}")
    size1 = d.size is not None and isnum(d.size) and d.size.value == 1
    if isinstance(idx, tuple) and len(idx) == 2 and size1 and idx[0] == 0:
        idx = idx[1]
    elif size1 and d.kind not in ("dirichlet", "multinomial", "multivariate_normal", "multivariate_t",
                                  "negmult_counts") and idx == 0:
        return law_of_draw(d, ctx, allow_size1=True)
    elif size1 and idx == 0:
        # dirichlet.rvs(alpha, size=1)[0] -> still the vector
        return law_of_vector(d, ctx)
    if d.kind == "choices" and idx == 0:
        return choice_law(d.params["values"], d.params["pvals"], "random.choices(...)[0]")
    return component_law(d, int(idx), ctx)


def law_of_vector(d, ctx):
    raise Unclassifiable(f"vector-valued {d.kind} without a component index")


def component_law(d, i, ctx):
    L = _component_law(d, i, ctx)
    if d.api == "derived":
        L.pattern += f" [vector built as {d.text}]"
    return L


def _component_law(d, i, ctx):
    p = d.params
    if not sc(p):
        raise Unclassifiable(f"symbolic parameters of {d.kind}")
    if d.kind == "dirichlet":
        return Law("dirichlet", {"alpha": num(p["alpha"]), "component": i}, f"dirichlet coordinate {i}")
    if d.kind == "multinomial":
        return Law("multinomial", {"n": num(p["n"]), "pvals": num(p["pvals"]), "component": i},
                   f"multinomial count {i}")
    if d.kind == "multivariate_normal":
        return Law("multivariate_normal", {"mean": num(p["mean"]), "cov": num(p["cov"]), "component": i},
                   f"multivariate normal coordinate {i}")
    if d.kind == "multivariate_t":
        return Law("multivariate_t", {"loc": num(p["loc"]), "shape": num(p["shape"]), "df": num(p["df"]),
                                      "component": i}, f"multivariate t coordinate {i}")
    if d.kind == "negmult_counts":
        return negmult_law(d, [i], "negative multinomial count")
    raise Unclassifiable(f"component of {d.kind}")


def negmult_law(d, idxs, pattern):
    p = d.params
    inv = {}
    for o, j in p["count_index"].items():
        inv.setdefault(j, []).append(o)
    outcomes = sorted({o for j in idxs for o in inv.get(j, [])})
    if p["stop"] in outcomes:
        raise Unclassifiable("negative multinomial count includes the stopping outcome")
    probs = dict(zip(p["values"], p["probs"]))
    p_stop = probs[p["stop"]]
    others = [o for o in p["values"] if o != p["stop"]]
    if len(outcomes) == 1:
        o = outcomes[0]
        pv = [p_stop] + [probs[x] for x in others]
        return Law("negative_multinomial", {"n": num(p["n"]), "pvals": num(pv), "component": others.index(o)},
                   f"{pattern} (while-loop trials until {num(p['n'])} stops)")
    q = sum(probs[o] for o in outcomes)
    return Law("negative_binomial", {"n": num(p["n"]), "p": num(p_stop / (p_stop + q))},
               f"sum of negative multinomial counts = negative binomial ({pattern})",
               notes=[f"counts of outcomes {outcomes} summed; stop probability {num(p_stop)}"])


def choice_law(values, pvals, pattern):
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        raise Unclassifiable("choice over a non-literal population")
    k = len(values)
    pv = [1.0 / k] * k if pvals is None else [float(x) for x in np.asarray(pvals, dtype=float)]
    if all(isinstance(v, str) for v in values):
        return Law("categorical", {"pvals": num(pv), "labels": list(values)}, pattern)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values):
        # merge duplicates
        acc: dict = collections.OrderedDict()
        for v, q in zip(values, pv):
            acc[num(v)] = acc.get(num(v), 0.0) + q
        return Law("empirical_discrete", {"values": list(acc.keys()), "pvals": num(list(acc.values()))}, pattern)
    raise Unclassifiable("choice over mixed / non-scalar items")


def shuffle_law(d, joined=None):
    items = d.params["items"]
    if not isinstance(items, (list, tuple)):
        raise Unclassifiable("shuffle of a non-literal list")
    extra = {"items": list(items)}
    if joined is not None:
        extra["joined_with"] = joined
    return Law("uniform_permutation", {"n": len(items)}, f"{d.api} of a literal list", extra=extra)


def law_of_draw(d, ctx, allow_size1=False) -> Law:
    if d.size is not None and not allow_size1:
        if not (isnum(d.size) and d.size.value == 1):
            raise Unclassifiable(f"vector draw {d.kind}(size={show(d.size, ctx)}) used as the output")
    p = d.params
    pattern = f"direct {d.api}" if d.api not in ("derived", "while-loop", "for-loop") else d.text
    if d.kind == "shuffle":
        return shuffle_law(d)
    if d.kind == "choice":
        if not sc({k: v for k, v in p.items()}):
            raise Unclassifiable("choice with symbolic population/probabilities")
        return choice_law(p["values"], p["pvals"], pattern)
    if d.kind in ("choices", "sample"):
        raise Unclassifiable(f"{d.kind} output (list) not modelled")
    if d.kind in ("dirichlet", "multinomial", "multivariate_normal", "multivariate_t", "negmult_counts"):
        raise Unclassifiable(f"vector-valued {d.kind} printed without a component")
    if sc(p):
        if d.kind == "binomial" and np.ndim(p["n"]) == 0 and np.ndim(p["p"]) > 0:
            raise Unclassifiable("vector of Bernoulli trials printed without summing")
        return Law(d.kind, {k: num(v) for k, v in p.items()}, pattern)
    return compound_draw_law(d, ctx)


def compound_draw_law(d, ctx) -> Law:
    """A draw whose parameters are themselves random."""
    p = d.params
    sym = {k: v for k, v in p.items() if isinstance(v, ast.AST)}
    inner = {}
    for k, v in sym.items():
        for x in ast.walk(v):
            dd = ctx.as_draw(x)
            if dd is not None:
                inner[dd.id] = dd
    if d.kind == "binomial" and set(sym) == {"p"} and ctx.as_draw(p["p"]) is not None:
        b = ctx.as_draw(p["p"])
        if b.kind == "beta" and sc(b.params):
            return Law("beta_binomial", {"n": num(p["n"]), "a": num(b.params["a"]), "b": num(b.params["b"])},
                       "beta -> binomial compound (p ~ Beta(a, b), X ~ Binomial(n, p))")
    if len(inner) == 1:
        r = next(iter(inner.values()))
        if r.kind == "rayleigh" and sc(r.params):
            sigma = r.params["scale"]
            kp = {}
            for k, v in p.items():
                if isinstance(v, ast.AST):
                    c, t = linear(v)
                    t = merge_terms(t, ctx)
                    if len(t) == 1 and ctx.as_draw(t[0][1]) is r:
                        kp[k] = {"const": num(c), "coef_R": num(t[0][0])}
                    else:
                        kp[k] = {"expr": show(v, ctx)}
                else:
                    kp[k] = num(v)
            if d.kind == "normal" and kp.get("loc") == 0 and kp.get("scale") == {"const": 0.0, "coef_R": 1.0}:
                return Law("laplace", {"loc": 0.0, "scale": num(sigma)},
                           "rayleigh mixture: R ~ Rayleigh(s), X ~ Normal(0, R)  => Laplace(0, s)",
                           notes=["normal scale mixture with a Rayleigh scale is exactly Laplace(0, sigma)"],
                           extra={"rayleigh_mixture": {"sigma": num(sigma), "kernel": d.kind, "kernel_params": kp}})
            return Law("rayleigh_mixture", {"sigma": num(sigma), "kernel": d.kind, "kernel_params": kp},
                       f"rayleigh mixture: R ~ Rayleigh(sigma), X ~ {d.kind}(params depending on R)")
    raise Unclassifiable(f"{d.kind} with random parameters {', '.join(sorted(sym))}: "
                         + "; ".join(f"{k}={show(v, ctx)}" for k, v in sym.items()))


def sum_law(x, ctx) -> Law:
    d = ctx.as_draw(x)
    if d is None:
        raise Unclassifiable(f"sum of a non-draw: {show(x, ctx)}")
    p = d.params
    if d.kind == "binomial" and sc(p) and np.ndim(p["p"]) == 1:
        if p["n"] == 1:
            return Law("poisson_binomial", {"p": num(p["p"])}, "sum of Bernoulli(p_i) trials")
        raise Unclassifiable("sum of binomials with n > 1")
    if d.kind == "choice" and sc(p) and p.get("replace") is False and isnum(d.size or C(None)):
        vals = np.asarray(p["values"])
        if set(np.unique(vals).tolist()) <= {0, 1} and p.get("pvals") is None:
            good = int(vals.sum())
            return Law("hypergeometric", {"ngood": good, "nbad": int(len(vals) - good), "nsample": int(d.size.value)},
                       "sum of a sample without replacement from a 0/1 urn")
    if d.kind == "negmult_counts":
        return negmult_law(d, sorted(set(p["count_index"].values())), "sum over the count vector")
    if d.size is not None and not isc(d.size):
        return compound_sum_law(d, d.size, ctx)
    raise Unclassifiable(f"sum of {d.kind} draws not modelled")


def compound_sum_law(d, size_node, ctx) -> Law:
    nd = ctx.as_draw(size_node)
    if nd is None or nd.kind != "poisson" or not sc(nd.params):
        raise Unclassifiable("random-size sum whose count is not a Poisson draw")
    jump = jump_law(d)
    return compound_poisson_law(nd.params["lam"], jump, "sum of N ~ Poisson(lam) iid jumps")


def jump_law(d):
    if not sc(d.params):
        raise Unclassifiable("jump distribution with random parameters")
    if d.kind == "choice":
        return choice_law(d.params["values"], d.params["pvals"], "jump")
    return Law(d.kind, {k: num(v) for k, v in d.params.items()}, "jump")


def compound_poisson_law(lam, jump, pattern):
    if jump.family == "geometric":
        return Law("compound_poisson", {"lam": num(lam), "p": jump.params["p"]}, pattern)
    return Law(f"compound_poisson[{jump.family}]", {"lam": num(lam), "jump": {"family": jump.family,
                                                                               "params": jump.params}}, pattern,
               notes=["our compound_poisson has geometric jump sizes only"])


def ifexp_law(n, ctx) -> Law:
    test, body, orelse = n.test, n.body, n.orelse
    # compound Poisson: 0 if N == 0 else sum of N jumps
    if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.Eq) and isnum(test.comparators[0]) \
            and test.comparators[0].value == 0 and isnum(body) and body.value == 0:
        nd = ctx.as_draw(test.left)
        if nd is not None and nd.kind == "poisson":
            x = orelse
            if fname(x) == "sum":
                dj = ctx.as_draw(x.args[0])
                if dj is not None and dj.size is not None and ctx.as_draw(dj.size) is nd:
                    return compound_poisson_law(nd.params["lam"], jump_law(dj), "N ~ Poisson; 0 if N == 0 else sum of N jumps")
            dj = ctx.as_draw(x)
            if dj is not None and dj.kind == "gamma" and isinstance(dj.params["shape"], ast.AST):
                c, t = linear(dj.params["shape"])
                if abs(c) < 1e-12 and len(t) == 1 and ctx.as_draw(t[0][1]) is nd and is_const_val(dj.params["scale"]):
                    jump = Law("gamma", {"shape": num(t[0][0]), "scale": num(dj.params["scale"])}, "jump")
                    return compound_poisson_law(nd.params["lam"], jump,
                                                "N ~ Poisson; Gamma(N*shape, scale) = sum of N Gamma(shape, scale) jumps")
    # triangular inverse CDF
    tri = triangular_ifexp(n, ctx)
    if tri is not None:
        return tri
    ig = inverse_gaussian_ifexp(n, ctx)
    if ig is not None:
        return ig
    # threshold categorical on one continuous draw
    cat = threshold_categorical(n, ctx)
    if cat is not None:
        return cat
    raise Unclassifiable(f"conditional expression not modelled: {show(n, ctx)[:160]}")


def triangular_ifexp(n, ctx):
    t = n.test
    if not (isinstance(t, ast.Compare) and isinstance(t.ops[0], (ast.Lt, ast.LtE)) and isnum(t.comparators[0])):
        return None
    u = std_uniform(t.left, ctx)
    if not u:
        return None
    fc = float(t.comparators[0].value)
    c1, t1 = linear(n.body)
    c2, t2 = linear(n.orelse)
    if not (len(t1) == 1 and len(t2) == 1 and fname(t1[0][1]) == "sqrt" and fname(t2[0][1]) == "sqrt"):
        return None
    a, b = c1, c2
    k1c, k1t = linear(t1[0][1].args[0])
    k2c, k2t = linear(t2[0][1].args[0])
    if not (len(k1t) == 1 and abs(k1c) < 1e-12 and ctx.as_draw(k1t[0][1]) is u and len(k2t) == 1
            and ctx.as_draw(k2t[0][1]) is u):
        return None
    k1 = k1t[0][0]
    mode = a + k1 / (b - a)
    if abs((mode - a) / (b - a) - fc) > 1e-9 or abs(k2c - (b - a) * (b - mode)) > 1e-6 * max(1, abs(k2c)):
        return None
    return Law("triangular", {"left": num(a), "mode": num(mode), "right": num(b)},
               "triangular inverse CDF (if U < (c-a)/(b-a): a + sqrt(U(b-a)(c-a)) else b - sqrt((1-U)(b-a)(b-c)))")


def inverse_gaussian_ifexp(n, ctx):
    t = n.test
    if not (isinstance(t, ast.Compare) and std_uniform(t.left, ctx) and isinstance(t.comparators[0], ast.BinOp)
            and isinstance(t.comparators[0].op, ast.Div) and isnum(t.comparators[0].left)):
        return None
    mu = float(t.comparators[0].left.value)
    o = n.orelse
    if not (isinstance(o, ast.BinOp) and isinstance(o.op, ast.Div) and isnum(o.left)
            and abs(o.left.value - mu * mu) < 1e-9 * max(1, mu * mu)):
        return None
    lam = None
    for x in ast.walk(n.body):
        if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Div) and isnum(x.right):
            if any(ctx.as_draw(y) is not None for y in ast.walk(x.left)):
                lam = float(x.right.value) / 2.0
                break
    if lam is None:
        return None
    return Law("inverse_gaussian", {"mean": num(mu), "scale": num(lam)},
               "Michael-Schucany-Haas transformation (normal^2 + uniform acceptance)")


def threshold_categorical(n, ctx):
    """Nested IfExp on comparisons of one continuous draw with constants, constant leaves."""
    leaves = []
    d_ref = []

    def walk(node, lo, hi):
        if isc(node):
            leaves.append((node.value, lo, hi))
            return True
        if not isinstance(node, ast.IfExp):
            return False
        t = node.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isnum(t.comparators[0])):
            return False
        d = ctx.as_draw(t.left)
        if d is None or scalar_cdf(d) is None:
            return False
        if d_ref and d_ref[0] is not d:
            return False
        d_ref[:1] = [d]
        c = float(t.comparators[0].value)
        if isinstance(t.ops[0], (ast.Lt, ast.LtE)):
            return walk(node.body, lo, min(hi, c)) and walk(node.orelse, max(lo, c), hi)
        if isinstance(t.ops[0], (ast.Gt, ast.GtE)):
            return walk(node.body, max(lo, c), hi) and walk(node.orelse, lo, min(hi, c))
        return False
    if not walk(n, -math.inf, math.inf) or not d_ref:
        return None
    cdf = scalar_cdf(d_ref[0])
    acc: dict = collections.OrderedDict()
    for v, lo, hi in leaves:
        q = max(0.0, (cdf(hi) if hi < math.inf else 1.0) - (cdf(lo) if lo > -math.inf else 0.0))
        acc[v] = acc.get(v, 0.0) + q
    labels, pv = list(acc.keys()), list(acc.values())
    pattern = f"thresholds on one {d_ref[0].kind} draw"
    if all(isinstance(v, str) for v in labels):
        return Law("categorical", {"pvals": num(pv), "labels": labels}, pattern)
    return Law("empirical_discrete", {"values": num(labels), "pvals": num(pv)}, pattern)


def core_law(core, ctx):
    """(base law, a0, b0, pattern) with core = a0 * X + b0, X ~ base law."""
    d = ctx.as_draw(core)
    if fname(core) == "sum" and fname(core.args[0]) == "log":
        dv = ctx.as_draw(core.args[0].args[0])
        if dv is not None and dv.kind == "uniform" and isnum(dv.size or C(None)) and dv.params == {"low": 0.0, "high": 1.0}:
            return Law("gamma", {"shape": int(dv.size.value), "scale": 1.0}, ""), -1.0, 0.0, \
                "sum of log of k uniforms = -Gamma(k, 1)"
    if d is not None or isinstance(core, (ast.Subscript, ast.IfExp, ast.Compare)) \
            or fname(core) in ("max", "sum", "dot", "join", "ceil"):
        L = law(core, ctx)
        return L, 1.0, 0.0, L.pattern
    fn = fname(core)
    if fn == "log":
        x = core.args[0]
        if uniform_like(x, ctx):
            return Law("exponential", {"scale": 1.0}, ""), -1.0, 0.0, "log(U) = -Exp(1)"
        if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Div):
            u = std_uniform(x.left, ctx)
            c, t = linear(x.right)
            if u and len(t) == 1 and abs(c - 1) < 1e-12 and abs(t[0][0] + 1) < 1e-12 and ctx.as_draw(t[0][1]) is u:
                return Law("logistic", {"loc": 0.0, "scale": 1.0}, ""), 1.0, 0.0, "log(U/(1-U)) (logistic inverse CDF)"
        if neg_log_uniform(x, ctx):
            return Law("gumbel", {"loc": 0.0, "scale": 1.0}, ""), -1.0, 0.0, "log(-log U) (Gumbel inverse CDF)"
        if fname(x) == "prod":
            dv = ctx.as_draw(x.args[0])
            if dv is not None and dv.kind == "uniform" and isnum(dv.size or C(None)) and dv.params == {"low": 0.0, "high": 1.0}:
                return Law("gamma", {"shape": int(dv.size.value), "scale": 1.0}, ""), -1.0, 0.0, \
                    "log(prod of k uniforms) = -Gamma(k, 1)"
    if fn == "sum" and fname(core.args[0]) == "log":
        dv = ctx.as_draw(core.args[0].args[0])
        if dv is not None and dv.kind == "uniform" and isnum(dv.size or C(None)) and dv.params == {"low": 0.0, "high": 1.0}:
            return Law("gamma", {"shape": int(dv.size.value), "scale": 1.0}, ""), -1.0, 0.0, \
                "sum of log of k uniforms = -Gamma(k, 1)"
    if fn == "exp":
        L = law(core.args[0], ctx)
        if L.family == "normal":
            return Law("log_normal", {"mean": L.params["loc"], "sigma": L.params["scale"]}, ""), 1.0, 0.0, \
                "exp(normal)"
        if L.family == "uniform":
            r12 = lambda x: float(f"{math.exp(x):.12g}")  # noqa: E731  (exp(log(a)) round-trip noise)
            return Law("reciprocal", {"a": r12(L.params["low"]), "b": r12(L.params["high"])}, ""), \
                1.0, 0.0, "exp(uniform(log a, log b)) (log-uniform)"
    if fn in ("cos", "sin"):
        ang = angle_uniform(core.args[0], ctx)
        if ang:
            return Law("arcsine", {"low": -1.0, "high": 1.0}, ""), 1.0, 0.0, f"{fn}(uniform angle over a full period)"
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Pow) and isnum(core.right):
        e = float(core.right.value)
        base = core.left
        if neg_log_uniform(base, ctx):
            if e < 0:
                return Law("frechet", {"c": num(-1.0 / e), "scale": 1.0, "loc": 0.0}, ""), 1.0, 0.0, \
                    "(-log U)^(-1/c) (Frechet inverse CDF)"
            return Law("weibull", {"a": num(1.0 / e), "scale": 1.0}, ""), 1.0, 0.0, "(-log(1-U))^(1/k) (Weibull inverse CDF)"
        if std_uniform(base, ctx) and e < 0:
            return Law("pareto", {"a": num(-1.0 / e), "scale": 1.0}, ""), 1.0, 0.0, "U^(-1/a) (Pareto inverse CDF)"
        if fname(base) == "sin" and abs(e - 2) < 1e-12:
            if quarter_period_uniform(base.args[0], ctx) or angle_uniform(base.args[0], ctx):
                return Law("arcsine", {"low": 0.0, "high": 1.0}, ""), 1.0, 0.0, "sin(angle)^2 (arcsine)"
        dz = ctx.as_draw(base)
        if is_std_normal(dz) and dz.size is None and abs(e - 2) < 1e-12:
            return Law("chi_squared", {"df": 1}, ""), 1.0, 0.0, "Z^2 with Z ~ N(0,1)"
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Pow) and isnum(core.left) and std_uniform(core.right, ctx):
        r = float(core.left.value)
        lo, hi = (1.0, r) if r > 1 else (r, 1.0)
        return Law("reciprocal", {"a": num(lo), "b": num(hi)}, ""), 1.0, 0.0, "r^U (log-uniform)"
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Mult):
        dz = ctx.as_draw(core.left)
        if is_std_normal(dz) and ctx.as_draw(core.right) is dz:
            return Law("chi_squared", {"df": 1}, ""), 1.0, 0.0, "Z*Z with Z ~ N(0,1)"
        for g_node, pw in ((core.left, core.right), (core.right, core.left)):
            g = ctx.as_draw(g_node)
            if g is not None and g.kind == "gamma" and sc(g.params) and isinstance(pw, ast.BinOp) \
                    and isinstance(pw.op, ast.Pow) and std_uniform(pw.left, ctx) and isnum(pw.right):
                shape = g.params["shape"] - 1.0
                if shape > 0 and abs(1.0 / shape - pw.right.value) < 1e-9:
                    return Law("gamma", {"shape": num(shape), "scale": num(g.params["scale"])}, ""), 1.0, 0.0, \
                        "Gamma(a+1) * U^(1/a) boost = Gamma(a)"
        sg, lg = (core.left, core.right) if fname(core.left) == "sign" else (core.right, core.left)
        if fname(sg) == "sign" and fname(lg) == "log":
            ud = ctx.as_draw(sg.args[0])
            c, t = linear(lg.args[0])
            if ud is not None and ud.kind == "uniform" and sc(ud.params) and abs(ud.params["low"] + 0.5) < 1e-12 \
                    and abs(ud.params["high"] - 0.5) < 1e-12 and abs(c - 1) < 1e-12 and len(t) == 1 \
                    and abs(t[0][0] + 2) < 1e-12 and fname(t[0][1]) == "abs" and ctx.as_draw(t[0][1].args[0]) is ud:
                return Law("laplace", {"loc": 0.0, "scale": 1.0}, ""), -1.0, 0.0, \
                    "sign(U) * log(1 - 2|U|), U ~ U(-1/2, 1/2) (Laplace inverse CDF)"
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Div):
        r = ratio_law(core, ctx)
        if r is not None:
            return r
    if fn == "norm_ppf":
        tn = truncnorm_ppf(core, ctx)
        if tn is not None:
            return tn
    if fn == "searchsorted" and isc(core.args[0]) and std_uniform(core.args[1], ctx):
        cut = np.asarray(core.args[0].value, dtype=float)
        pv = np.diff(np.concatenate([[0.0], cut]))
        return Law("empirical_discrete", {"values": list(range(len(pv))), "pvals": num(pv)}, ""), 1.0, 0.0, \
            "searchsorted(cumsum(p), U) (inverse-CDF categorical)"
    raise Unclassifiable(f"transformation not modelled: {show(core, ctx)[:160]}")


def angle_uniform(x, ctx):
    d = ctx.as_draw(x)
    if d is not None and d.kind == "uniform" and sc(d.params):
        return abs((d.params["high"] - d.params["low"]) - 2 * math.pi) < 1e-9
    c, t = linear(x)
    return len(t) == 1 and std_uniform(t[0][1], ctx) and abs(abs(t[0][0]) - 2 * math.pi) < 1e-9


def quarter_period_uniform(x, ctx):
    c, t = linear(x)
    return abs(c) < 1e-12 and len(t) == 1 and std_uniform(t[0][1], ctx) and abs(t[0][0] - math.pi / 2) < 1e-9


def truncnorm_ppf(core, ctx):
    """norm.ppf(lo_cdf + U * (hi_cdf - lo_cdf)) -> truncated standard normal on [ppf(lo_cdf), ppf(hi_cdf)]."""
    c, t = linear(core.args[0])
    if len(t) == 1 and std_uniform(t[0][1], ctx):
        lo_cdf, width = c, t[0][0]
        lo, hi = float(f"{_norm_ppf(lo_cdf):.10g}"), float(f"{_norm_ppf(lo_cdf + width):.10g}")  # ppf(cdf(x)) noise
        return Law("truncated_normal", {"loc": 0.0, "scale": 1.0, "low": lo, "high": hi}, ""), 1.0, 0.0, \
            "norm.ppf(F(a) + U (F(b) - F(a))) (truncated normal inverse CDF)"
    return None


def ratio_law(core, ctx):
    num_c, num_t = linear(core.left)
    den_c, den_t = linear(core.right)
    # Student t: Z / sqrt(V / df)
    if abs(num_c) < 1e-12 and len(num_t) == 1 and is_std_normal(ctx.as_draw(num_t[0][1])) and fname(core.right) == "sqrt":
        vc, vt = linear(core.right.args[0])
        if abs(vc) < 1e-12 and len(vt) == 1:
            v = ctx.as_draw(vt[0][1])
            if v is not None and v.kind == "chi_squared" and sc(v.params) and abs(vt[0][0] * v.params["df"] - 1) < 1e-9:
                return Law("students_t", {"df": num(v.params["df"]), "loc": 0.0, "scale": 1.0}, ""), num_t[0][0], 0.0, \
                    "Z / sqrt(V/df), V ~ chi2(df)"
    if abs(num_c) < 1e-12 and abs(den_c) < 1e-12 and len(num_t) == 1 and len(den_t) == 1:
        x, y = ctx.as_draw(num_t[0][1]), ctx.as_draw(den_t[0][1])
        if x is not None and y is not None and x.kind == y.kind == "chi_squared" and sc(x.params) and sc(y.params):
            d1, d2 = x.params["df"], y.params["df"]
            k = (num_t[0][0] / den_t[0][0]) * (d1 / d2)
            return Law("f", {"dfnum": num(d1), "dfden": num(d2)}, ""), k, 0.0, "(chi2(d1)/d1) / (chi2(d2)/d2)"
    # Beta via gammas: X / (X + Y)
    if abs(num_c) < 1e-12 and len(num_t) == 1 and abs(den_c) < 1e-12 and len(den_t) == 2:
        x = ctx.as_draw(num_t[0][1])
        ds = [ctx.as_draw(tt) for _, tt in den_t]
        if x is not None and x in ds and all(abs(k - num_t[0][0]) < 1e-12 for k, _ in den_t):
            y = ds[1] if ds[0] is x else ds[0]
            if x.kind == y.kind == "gamma" and sc(x.params) and sc(y.params) and x.params["scale"] == y.params["scale"]:
                return Law("beta", {"a": num(x.params["shape"]), "b": num(y.params["shape"])}, ""), 1.0, 0.0, \
                    "X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b)"
    if isnum(core.left):
        c, t = linear(core.right)
        if abs(c) < 1e-12 and len(t) == 1 and isinstance(t[0][1], ast.BinOp) and isinstance(t[0][1].op, ast.Pow) \
                and std_uniform(t[0][1].left, ctx) and isnum(t[0][1].right) and t[0][1].right.value > 0:
            e = float(t[0][1].right.value)
            return Law("pareto", {"a": num(1.0 / e), "scale": 1.0}, ""), float(core.left.value) / t[0][0], 0.0, \
                "x_m / U^(1/a) (Pareto inverse CDF)"
    return None


def multi_term_law(c, terms, ctx):
    ds = [ctx.as_draw(t) for _, t in terms]
    # components of one vector draw
    if all(isinstance(t, ast.Subscript) and isnum(t.slice) for _, t in terms):
        bases = {id(ctx.as_draw(t.value)) for _, t in terms}
        if len(bases) == 1 and ctx.as_draw(terms[0][1].value) is not None:
            v = ctx.as_draw(terms[0][1].value)
            idx = [int(t.slice.value) for _, t in terms]
            coefs = [k for k, _ in terms]
            if v.kind == "multivariate_normal" and sc(v.params):
                mean, cov = np.asarray(v.params["mean"], float), np.asarray(v.params["cov"], float)
                w = np.zeros(len(mean))
                for i, k in zip(idx, coefs):
                    w[i] += k
                if abs(c) < 1e-12 and np.allclose(w, 1):
                    return Law("multivariate_normal", {"mean": num(mean), "cov": num(cov), "reduce": "sum"},
                               "sum of all multivariate normal coordinates")
                return Law("normal", {"loc": num(float(w @ mean) + c), "scale": num(math.sqrt(float(w @ cov @ w)))},
                           "linear combination of multivariate normal coordinates",
                           notes=[f"weights {num(w)} + {num(c)}; our multivariate_normal reduces only to a coordinate or the sum"],
                           extra={"mvn": {"mean": num(mean), "cov": num(cov), "weights": num(w), "offset": num(c)}})
            if v.kind == "negmult_counts" and abs(c) < 1e-12 and all(abs(k - 1) < 1e-12 for k in coefs):
                return negmult_law(v, idx, "sum of count components")
    if len(terms) == 2 and all(d is not None for d in ds) and ds[0] is not ds[1]:
        (k1, _), (k2, _) = terms
        a, b = ds
        if a.kind == b.kind == "poisson" and sc(a.params) and sc(b.params) and abs(k1 + k2) < 1e-12 \
                and abs(abs(k1) - 1) < 1e-12 and abs(c) < 1e-12:
            pos, neg = (a, b) if k1 > 0 else (b, a)
            return Law("skellam", {"mu1": num(pos.params["lam"]), "mu2": num(neg.params["lam"])},
                       "difference of two Poisson draws")
        if a.kind == b.kind == "exponential" and sc(a.params) and sc(b.params) and abs(k1 + k2) < 1e-12 \
                and a.params["scale"] == b.params["scale"]:
            return Law("laplace", {"loc": num(c), "scale": num(abs(k1) * a.params["scale"])},
                       "loc + (Exp - Exp) (Laplace as difference of exponentials)")
        if a.kind == b.kind == "normal" and sc(a.params) and sc(b.params):
            return Law("normal", {"loc": num(c + k1 * a.params["loc"] + k2 * b.params["loc"]),
                                  "scale": num(math.hypot(k1 * a.params["scale"], k2 * b.params["scale"]))},
                       "linear combination of independent normals")
    raise Unclassifiable("sum of several random terms not modelled: "
                         + " + ".join(f"{num(k)}*{show(t, ctx)}" for k, t in terms)[:200])


def affine_law(L: Law, a: float, b: float, pattern: str) -> Law:
    """Law of a*X + b for X ~ L."""
    fam, p = L.family, dict(L.params)
    notes, extra = list(L.notes), dict(L.extra)
    if abs(a - 1) < 1e-12 and abs(b) < 1e-12:
        return Law(fam, {k: num(v) for k, v in p.items()}, pattern or L.pattern, notes, extra)
    if pattern and pattern.startswith("direct "):
        pattern += " then affine a*X + b"
    if abs(a) < 1e-15:
        raise Unclassifiable("degenerate affine transform")
    out = None
    if fam in ("normal", "logistic", "laplace") or (fam == "students_t"):
        out = dict(p)
        out["loc"] = a * p["loc"] + b
        out["scale"] = abs(a) * p["scale"]
    elif fam == "gumbel" and a > 0:
        out = {"loc": a * p["loc"] + b, "scale": a * p["scale"]}
    elif fam in ("uniform", "arcsine"):
        lo, hi = sorted((a * p["low"] + b, a * p["high"] + b))
        out = {"low": lo, "high": hi}
    elif fam == "triangular":
        lo, hi = sorted((a * p["left"] + b, a * p["right"] + b))
        out = {"left": lo, "mode": a * p["mode"] + b, "right": hi}
    elif fam == "truncated_normal":
        lo, hi = sorted((a * p["low"] + b, a * p["high"] + b))
        out = {"loc": a * p["loc"] + b, "scale": abs(a) * p["scale"], "low": lo, "high": hi}
    elif fam == "frechet" and a > 0:
        out = {"c": p["c"], "scale": a * p["scale"], "loc": a * p["loc"] + b}
    elif a > 0 and abs(b) < 1e-15:
        if fam in ("exponential", "rayleigh"):
            out = {"scale": a * p["scale"]}
        elif fam == "gamma":
            out = {"shape": p["shape"], "scale": a * p["scale"]}
        elif fam == "erlang":
            out = {"k": p["k"], "scale": a * p["scale"]}
        elif fam == "weibull":
            out = {"a": p["a"], "scale": a * p["scale"]}
        elif fam == "pareto":
            out = {"a": p["a"], "scale": a * p["scale"]}
        elif fam == "log_normal":
            out = {"mean": p["mean"] + math.log(a), "sigma": p["sigma"]}
        elif fam == "reciprocal":
            out = {"a": a * p["a"], "b": a * p["b"]}
        elif fam == "chi_squared":
            fam, out = "gamma", {"shape": p["df"] / 2.0, "scale": 2.0 * a}
        elif fam == "students_t":
            out = {"df": p["df"], "loc": 0.0, "scale": a}
        elif fam == "f":
            raise Unclassifiable(f"scaled F ({a:.6g} * F)")
    elif fam == "empirical_discrete":
        ints = float(a).is_integer() and float(b).is_integer() and all(float(v).is_integer() for v in p["values"])
        out = {"values": [int(a * v + b) if ints else a * v + b for v in p["values"]], "pvals": p["pvals"]}
    elif fam == "geometric" and abs(a - 1) < 1e-12 and abs(b + 1) < 1e-12:
        fam, out = "negative_binomial", {"n": 1, "p": p["p"]}
        notes.append("geometric - 1: number of failures before the first success (support 0, 1, ...)")
        pattern = (pattern + "; " if pattern else "") + "geometric shifted to start at 0"
    elif fam == "poisson" and abs(a - 1) < 1e-12 and float(b).is_integer():
        raise Unclassifiable(f"Poisson shifted by {b}")
    if out is None:
        raise Unclassifiable(f"affine transform {a:.6g}*X + {b:.6g} of {fam} not expressible")
    return Law(fam, {k: num(v) for k, v in out.items()}, pattern or L.pattern, notes, extra)


# ------------------------------------------------------------------------------------------------ equivalences


def _intlike(x):
    return isinstance(x, (int, float)) and float(x).is_integer()


def to_intended(fam, p, target):
    """Params of `target` giving exactly the law `fam(p)`, or None."""
    if fam == target or target is None:
        return None
    try:
        if target == "erlang" and fam == "gamma" and _intlike(p["shape"]):
            return {"k": int(p["shape"]), "scale": p["scale"]}
        if target == "erlang" and fam == "exponential":
            return {"k": 1, "scale": p["scale"]}
        if target == "gamma" and fam == "erlang":
            return {"shape": p["k"], "scale": p["scale"]}
        if target == "gamma" and fam == "exponential":
            return {"shape": 1, "scale": p["scale"]}
        if target == "gamma" and fam == "chi_squared":
            return {"shape": num(p["df"] / 2), "scale": 2.0}
        if target == "chi_squared" and fam == "gamma" and abs(p["scale"] - 2) < 1e-12:
            return {"df": num(2 * p["shape"])}
        if target == "exponential" and ((fam == "gamma" and p["shape"] == 1) or (fam == "erlang" and p["k"] == 1)
                                        or (fam == "weibull" and p["a"] == 1)):
            return {"scale": p["scale"]}
        if target == "weibull" and fam == "exponential":
            return {"a": 1, "scale": p["scale"]}
        if target == "bernoulli" and fam == "binomial" and p["n"] == 1:
            return {"p": p["p"]}
        if target == "binomial" and fam == "bernoulli":
            return {"n": 1, "p": p["p"]}
        if target == "binomial" and fam == "poisson_binomial" and len(set(p["p"])) == 1:
            return {"n": len(p["p"]), "p": p["p"][0]}
        if target == "poisson_binomial" and fam == "binomial":
            return {"p": [p["p"]] * int(p["n"])}
        if target == "uniform" and fam == "beta" and p["a"] == 1 and p["b"] == 1:
            return {"low": 0.0, "high": 1.0}
        if target == "beta" and fam == "uniform" and p["low"] == 0 and p["high"] == 1:
            return {"a": 1, "b": 1}
        if target == "beta" and fam == "dirichlet":
            a = p["alpha"][p["component"]]
            return {"a": a, "b": num(sum(p["alpha"]) - a)}
        if target == "binomial" and fam == "multinomial":
            return {"n": p["n"], "p": p["pvals"][p["component"]]}
        if target == "normal" and fam == "multivariate_normal" and p.get("reduce") != "sum":
            c = p["component"]
            return {"loc": p["mean"][c], "scale": num(math.sqrt(p["cov"][c][c]))}
        if target == "students_t" and fam == "multivariate_t":
            c = p["component"]
            return {"df": p["df"], "loc": p["loc"][c], "scale": num(math.sqrt(p["shape"][c][c]))}
        if target == "negative_binomial" and fam == "negative_multinomial":
            p0, pc = p["pvals"][0], p["pvals"][1 + p["component"]]
            return {"n": p["n"], "p": num(p0 / (p0 + pc))}
        if target == "categorical" and fam == "empirical_discrete" and p["values"] == list(range(len(p["values"]))):
            return {"pvals": p["pvals"]}
        if target == "discrete_uniform" and fam == "empirical_discrete":
            v = p["values"]
            if v == list(range(int(v[0]), int(v[0]) + len(v))) and max(p["pvals"]) - min(p["pvals"]) < 1e-12:
                return {"low": int(v[0]), "high": int(v[-1])}
        if target == "empirical_discrete" and fam == "discrete_uniform":
            k = int(p["high"]) - int(p["low"]) + 1
            return {"values": list(range(int(p["low"]), int(p["high"]) + 1)), "pvals": [num(1 / k)] * k}
    except (KeyError, IndexError, TypeError, ZeroDivisionError):
        return None
    return None


def scipy_spec(fam, p):
    """The same law in scipy.stats conventions (dist name, shape args, loc, scale); marginals for joint families."""
    def sp(dist, shapes=None, loc=0.0, scale=1.0, note=None):
        out = {"dist": dist, "shapes": {k: num(v) for k, v in (shapes or {}).items()}, "loc": num(loc), "scale": num(scale)}
        if note:
            out["note"] = note
        return out
    try:
        if fam == "beta": return sp("beta", {"a": p["a"], "b": p["b"]})
        if fam == "arcsine": return sp("arcsine", loc=p["low"], scale=p["high"] - p["low"])
        if fam == "reciprocal": return sp("loguniform", {"a": p["a"], "b": p["b"]})
        if fam == "triangular":
            w = p["right"] - p["left"]
            return sp("triang", {"c": (p["mode"] - p["left"]) / w}, p["left"], w)
        if fam == "truncated_normal":
            return sp("truncnorm", {"a": (p["low"] - p["loc"]) / p["scale"], "b": (p["high"] - p["loc"]) / p["scale"]},
                      p["loc"], p["scale"])
        if fam == "uniform": return sp("uniform", loc=p["low"], scale=p["high"] - p["low"])
        if fam == "erlang": return sp("erlang", {"a": p["k"]}, scale=p["scale"])
        if fam == "f": return sp("f", {"dfn": p["dfnum"], "dfd": p["dfden"]})
        if fam == "frechet": return sp("invweibull", {"c": p["c"]}, p.get("loc", 0.0), p["scale"])
        if fam == "gamma": return sp("gamma", {"a": p["shape"]}, scale=p["scale"])
        if fam == "pareto": return sp("pareto", {"b": p["a"]}, scale=p["scale"])
        if fam == "rayleigh": return sp("rayleigh", scale=p["scale"])
        if fam == "weibull": return sp("weibull_min", {"c": p["a"]}, scale=p["scale"])
        if fam == "chi_squared": return sp("chi2", {"df": p["df"]})
        if fam == "exponential": return sp("expon", scale=p["scale"])
        if fam == "inverse_gaussian": return sp("invgauss", {"mu": p["mean"] / p["scale"]}, scale=p["scale"])
        if fam == "log_normal": return sp("lognorm", {"s": p["sigma"]}, scale=math.exp(p["mean"]))
        if fam in ("gumbel", "laplace", "logistic", "normal"):
            return sp({"gumbel": "gumbel_r", "normal": "norm"}.get(fam, fam), loc=p["loc"], scale=p["scale"])
        if fam == "students_t": return sp("t", {"df": p["df"]}, p.get("loc", 0.0), p.get("scale", 1.0))
        if fam == "bernoulli": return sp("bernoulli", {"p": p["p"]})
        if fam == "beta_binomial": return sp("betabinom", {"n": p["n"], "a": p["a"], "b": p["b"]})
        if fam == "binomial": return sp("binom", {"n": p["n"], "p": p["p"]})
        if fam == "discrete_uniform": return sp("randint", {"low": p["low"], "high": p["high"] + 1})
        if fam == "hypergeometric":
            return sp("hypergeom", {"M": p["ngood"] + p["nbad"], "n": p["ngood"], "N": p["nsample"]})
        if fam == "poisson": return sp("poisson", {"mu": p["lam"]})
        if fam == "skellam": return sp("skellam", {"mu1": p["mu1"], "mu2": p["mu2"]})
        if fam == "geometric": return sp("geom", {"p": p["p"]})
        if fam == "negative_binomial": return sp("nbinom", {"n": p["n"], "p": p["p"]})
        if fam == "dirichlet":
            a = p["alpha"][p["component"]]
            return sp("beta", {"a": a, "b": sum(p["alpha"]) - a}, note="marginal of the reported coordinate")
        if fam == "multinomial":
            return sp("binom", {"n": p["n"], "p": p["pvals"][p["component"]]}, note="marginal of the reported count")
        if fam == "multivariate_normal":
            if p.get("reduce") == "sum":
                return sp("norm", loc=sum(p["mean"]), scale=math.sqrt(sum(map(sum, p["cov"]))), note="sum of coordinates")
            c = p["component"]
            return sp("norm", loc=p["mean"][c], scale=math.sqrt(p["cov"][c][c]), note="marginal of the reported coordinate")
        if fam == "multivariate_t":
            c = p["component"]
            return sp("t", {"df": p["df"]}, p["loc"][c], math.sqrt(p["shape"][c][c]), note="marginal of the reported coordinate")
        if fam == "negative_multinomial":
            p0, pc = p["pvals"][0], p["pvals"][1 + p["component"]]
            return sp("nbinom", {"n": p["n"], "p": p0 / (p0 + pc)}, note="marginal of the reported count")
        if fam == "empirical_discrete":
            return {"dist": "rv_discrete", "values": [p["values"], p["pvals"]]}
        if fam == "mixture":
            return {"dist": "mixture", "components": [{"weight": c["weight"], **(scipy_spec(c["family"], c["params"]) or {})}
                                                      for c in p["components"]]}
    except (KeyError, IndexError, TypeError, ZeroDivisionError):
        return None
    return None


INT_PARAMS = {"n", "k", "ngood", "nbad", "nsample", "component"}
INT_FAMILY_PARAMS = {"discrete_uniform": {"low", "high"}}


def tidy_params(fam, p):
    out = {}
    for k, v in p.items():
        v = num(v)
        if (k in INT_PARAMS or k in INT_FAMILY_PARAMS.get(fam, set())) and isinstance(v, float) and v.is_integer() \
                and fam not in ("negative_binomial", "negative_multinomial"):
            v = int(v)
        if fam == "multinomial" and k == "n" and isinstance(v, float) and v.is_integer():
            v = int(v)
        out[k] = v
    return out


# ------------------------------------------------------------------------------------------------ program driver


def find_main_loop(tree):
    for i, s in enumerate(tree.body):
        if isinstance(s, ast.For) and isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Name) \
                and s.iter.func.id == "range" and s.iter.args and isinstance(s.iter.args[0], ast.Constant):
            return i, s
    return None, None


def printed_list(post, appends, ctx, env):
    """Name of the list the program prints (and a note when the print is not the plain list)."""
    for s in reversed(post):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) \
                and s.value.func.id == "print" and s.value.args:
            a = s.value.args[0]
            if isinstance(a, ast.Name):
                if a.id in appends:
                    return a.id, None
                for s2 in post:  # derived list, e.g. a flattening comprehension
                    if isinstance(s2, ast.Assign) and any(isinstance(t, ast.Name) and t.id == a.id for t in s2.targets):
                        srcs = names_in(s2.value) & set(appends)
                        if srcs:
                            return srcs.pop(), f"prints {a.id} = {ast.unparse(s2.value)}"
            if isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name):
                inner = a.value.id
                for s2 in post:
                    if isinstance(s2, ast.Assign) and any(isinstance(t, ast.Name) and t.id == inner for t in s2.targets):
                        srcs = names_in(s2.value) & set(appends)
                        if srcs:
                            return srcs.pop(), f"prints {ast.unparse(a)} with {inner} = {ast.unparse(s2.value)}"
                if inner in appends:
                    return inner, f"prints {ast.unparse(a)}"
    if len(appends) == 1:
        return next(iter(appends)), "no plain print found"
    return None, "printed list not found"


def find_selector(body, env, ctx):
    """A mixture / outcome selector `k = choice([0..m-1] or m, p=w)` whose value is used in an index or a test."""
    for idx, s in enumerate(body):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, ast.Call):
            p = path_of(s.value.func, env, ctx) or ""
            if not p.endswith(".choice") or not any(k.arg == "p" for k in s.value.keywords) or not s.value.args:
                continue
            tmp = Ctx(ctx.aliases)
            a = fold(s.value.args[0], env, tmp)
            if not isc(a):
                continue
            vals = list(range(int(a.value))) if isinstance(a.value, (int, np.integer)) else list(np.asarray(a.value).tolist())
            if vals != list(range(len(vals))):
                continue
            name = s.targets[0].id
            used = False
            for later in body[idx + 1:]:
                for x in ast.walk(later):
                    if isinstance(x, ast.Subscript) and name in names_in(x.slice):
                        used = True
                    if isinstance(x, (ast.If, ast.IfExp, ast.While)) and name in names_in(x.test):
                        used = True
            if used:
                return name, len(vals)
    return None, 0


def analyze_program(src: str) -> dict:
    tree = ast.parse(src)
    aliases = import_aliases(tree)
    li, loop = find_main_loop(tree)
    result: dict = {"literals": {}, "derived_constants": {}, "sampler_calls": [], "notes": []}
    ctx0 = Ctx(aliases)
    env: dict = {}
    pre = tree.body if loop is None else tree.body[:li]
    exec_block(pre, env, ctx0)
    for s in pre:
        if isinstance(s, ast.Assign):
            for tgt in s.targets:
                if isinstance(tgt, ast.Name):
                    try:
                        lit = ast.literal_eval(s.value)
                        if lit == [] or lit == {}:
                            continue  # output accumulators
                        result["literals"][tgt.id] = num(lit)
                    except Exception:  # noqa: BLE001
                        v = env.get(tgt.id)
                        if v is not None and isc(v) and not isinstance(v.value, RNGObj):
                            try:
                                json.dumps(num(v.value))
                                result["derived_constants"][tgt.id] = {"value": num(v.value),
                                                                       "expr": ast.unparse(s.value)}
                            except TypeError:
                                pass
    result["sampler_calls"] = list_sampler_calls(tree, env, aliases)
    if loop is None:
        raise_note = "no top-level `for _ in range(N)` sampling loop"
        result["classification"] = {"status": "unclassifiable", "reason": raise_note}
        return result
    result["n_draws"] = loop.iter.args[0].value
    post = tree.body[li + 1:]
    sel, m = find_selector(loop.body, env, ctx0)
    try:
        if sel:
            comps = []
            for i in range(m):
                ctx = Ctx(aliases)
                ctx.override = {sel: i}
                e = dict(env)
                exec_block(loop.body, e, ctx)
                name, pnote = printed_list(post, ctx.appends, ctx, e)
                if name is None:
                    raise Unclassifiable(pnote)
                L = law(ctx.appends[name], ctx)
                w = ctx.selector_weights
                comps.append((L, None if w is None else float(np.asarray(w, dtype=float)[i]), ctx))
                if pnote:
                    result["notes"].append(pnote)
            result["notes"].append(f"selector `{sel}` = choice over {m} indices; body specialised per index")
            if all(L.family == "constant" for L, _, _ in comps):
                values = [L.params["value"] for L, _, _ in comps]
                L = choice_law(values, [w for _, w, _ in comps], "outcome = choice(K, p) printed directly")
                L.notes.append("the selector draw is itself the printed outcome")
            else:
                comp_specs = []
                for Lc, w, c in comps:
                    comp_specs.append({"family": Lc.family, "params": tidy_params(Lc.family, Lc.params),
                                       "weight": num(w)})
                pats = [Lc.pattern for Lc, _, _ in comps]
                L = Law("mixture", {"components": comp_specs}, "mixture: index = choice(K, p=weights); "
                        + " | ".join(sorted(set(pats))), extra={"component_patterns": pats})
            result["notes"].extend(n for _, _, c in comps for n in c.notes)
        else:
            ctx = Ctx(aliases)
            e = dict(env)
            exec_block(loop.body, e, ctx)
            name, pnote = printed_list(post, ctx.appends, ctx, e)
            if pnote:
                result["notes"].append(pnote)
            if name is None:
                raise Unclassifiable(pnote)
            if ctx.has_defs or ctx0.has_defs:
                result["notes"].append("program defines functions/classes")
            out = ctx.appends[name]
            dv = ctx.as_draw(out)
            if pnote and "for sublist in" in pnote and dv is not None and dv.kind == "multinomial" and sc(dv.params):
                pv = [float(x) for x in dv.params["pvals"]]
                if max(pv) - min(pv) > 1e-12:
                    raise Unclassifiable("pooled counts of a multinomial with unequal probabilities")
                L = Law("binomial", {"n": num(dv.params["n"]), "p": num(pv[0])},
                        "pooled multinomial count vectors (all categories equiprobable, so every count is Binomial(n, p))",
                        notes=["prints the flattened count vectors: all components pooled; values dependent within a draw",
                               pnote + " (only part of the draws is printed)"],
                        extra={"multinomial": {"n": num(dv.params["n"]), "pvals": num(pv)}})
            else:
                L = law(out, ctx)
                if L.family == "constant":
                    raise Unclassifiable(f"output folds to the constant {L.params['value']!r} (suspect: unmodelled mutation)")
            result["notes"].extend(ctx.notes)
            result["output_expression"] = show(out, ctx)
            if pnote and "[:" in pnote:
                L.notes.append(pnote + " (only part of the draws is printed)")
        result["classification"] = {"status": "classified", "law": L}
    except Unclassifiable as exc:
        result["classification"] = {"status": "unclassifiable", "reason": str(exc)}
    return result


def list_sampler_calls(tree, env, aliases):
    ctx = Ctx(aliases)
    rng_names = {t.id for s in ast.walk(tree) if isinstance(s, ast.Assign) for t in s.targets
                 if isinstance(t, ast.Name) and isinstance(s.value, ast.Call)
                 and (path_of(s.value.func, {}, ctx) or "") in RNG_CTORS}
    env2 = dict(env)
    for r in rng_names:
        env2[r] = C(RNGObj())
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        p = path_of(node.func, env2, ctx)
        if not p or not sampler_of(p):
            continue
        lib, name, frozen = sampler_of(p)

        def res(a):
            v = fold(a, env, Ctx(aliases))
            if isc(v) and not isinstance(v.value, RNGObj):
                try:
                    x = num(v.value.tolist() if isinstance(v.value, np.ndarray) else v.value)
                    json.dumps(x)
                    return x
                except (TypeError, ValueError):
                    pass
            return {"expr": ast.unparse(a)}
        args = [res(a) for a in node.args]
        kwargs = {k.arg: res(k.value) for k in node.keywords if k.arg}
        if frozen:
            fc = node.func.value
            kwargs = {"frozen_args": [res(a) for a in fc.args],
                      "frozen_kwargs": {k.arg: res(k.value) for k in fc.keywords if k.arg}, **kwargs}
        out.append({"call": ast.unparse(node), "sampler": p.replace("Generator.", "numpy.random.Generator."),
                    "args": args, "kwargs": kwargs})
    return out


# ------------------------------------------------------------------------------------------------ real-world tasks
# Exact outcome distributions of the real-world programs the generic rules cannot model (functions/classes,
# generator expressions, data-dependent loops). Derived by hand from the program text (facts about the release),
# then computed here by enumeration or numerical integration.

RW_DESCRIPTION = {
    "055818d5": "random ordering of 5 objects A-E, one per line",
    "06484ed3": "two groups ({A,B}, {1,2}) listed in random order, one random member printed per group",
    "0c05ec86": "three labelled groups (vowels/consonants/digits) in random order, each with a random member",
    "22b4c8f7": "uniform pick of one of 2 labels (A, B)",
    "24dd7917": "an event of probability 0.1 prints 1, otherwise 2",
    "2ae92ae8": "uniform pick of one of 3 labels (A, B, C)",
    "41b48a16": "a uniformly random number (0-3) of objects A-C collected in random order, or '(no output)'",
    "4328470e": "four messages (Alpha..Delta) with iid Uniform(0,100) delays; the first to arrive",
    "495df063": "counter starting at 100, incremented in each of 100 steps with probability 0.9; final value",
    "64b5842a": "standard-normal reading bucketed: < 0 -> A, [0, 1) -> B, >= 1 -> C",
    "69a1d67d": "uniform pick of one of 3 labels (A, B, C)",
    "6ab4349d": "uniform pick of one of 3 labels (A, B, C)",
    "7a1fe43e": "uniform pick of one of 2 labels (A, B)",
    "8843cf28": "'parent' and 'child' lines in random order",
    "975577ef": "uniform pick of one of 3 labels (A, B, C)",
    "9843572d": "race of packets X, Y over identical links (40 + U(-10,10)) and router delay U(0,20); first processed",
    "99ba8a6f": "parent and child each print both thread names (p 0.1) or one random thread; lines interleaved at random",
    "9ee2ce7d": "uniform pick between the orders 'AB' and 'BA'",
    "a99b8031": "random ordering of A, B, one per line",
    "abe99455": "one state-machine step: A/B/C with probabilities 0.2/0.5/0.3",
    "ac50a73d": "uniform pick of one of 3 labels (A, B, C)",
    "b3c2bd87": "four packets, channel delays 20/35/25/30 + U(-10,10), switch U(0,10), server U(0,10); first received",
    "bf238170": "uniform pick of one of 3 labels (A, B, C)",
    "bf34e215": "two packets on paths with base latency 50 and 70 plus U(-20,20) each; first to arrive",
    "c0c46088": "merge of two queues AAA and BBB, picking a non-empty queue at random each step; the 6-letter sequence",
    "c24f0c53": "delete A, B, C in random order; 'Deleting X' lines",
    "db145ef3": "uniform pick of one of 3 labels (A, B, C)",
    "e329c07f": "load balancer picking Replica A or Replica B uniformly",
    "e5938429": "four streams (Red, Blue, Green, Yellow) with iid Uniform(0,100) times; the first",
    "ffff0598": "uniform pick among 3 workflow actions (validate_input, retry_request, escalate_issue)",
}


def _cat(outcomes: dict, pattern: str) -> Law:
    labels = list(outcomes)
    return Law("categorical", {"pvals": num([outcomes[k] for k in labels]), "labels": labels}, pattern,
               notes=["derived by hand from the program, probabilities computed by enumeration/integration"])


def _rw_06484ed3():
    groups = [["A", "B"], ["1", "2"]]
    out = collections.OrderedDict()
    for order in itertools.permutations(groups):
        for picks in itertools.product(*order):
            out["\n".join(picks)] = out.get("\n".join(picks), 0) + 0.5 / 4
    return _cat(out, "random group order x random member per group")


def _rw_0c05ec86():
    groups = [("vowels", "AEI"), ("consonants", "BCD"), ("digits", "123")]
    out = collections.OrderedDict()
    for order in itertools.permutations(groups):
        for v, c, d in itertools.product("AEI", "BCD", "123"):
            m = {"vowels": v, "consonants": c, "digits": d}
            key = "\n".join(f"{name}: {m[name]}" for name, _ in order)
            out[key] = out.get(key, 0) + 1.0 / (6 * 27)
    return _cat(out, "shuffle of 3 groups x independent uniform members")


def _rw_41b48a16():
    out = collections.OrderedDict()
    objs = ["A", "B", "C"]
    for k in range(4):
        perms = list(itertools.permutations(objs, k))
        for pr in perms:
            key = "\n".join(pr) if pr else "(no output)"
            out[key] = out.get(key, 0) + 0.25 / len(perms)
    return _cat(out, "k ~ U{0..3}; ordered random k-subset of A-C")


def _rw_uniform_labels(labels):
    def f():
        return _cat(collections.OrderedDict((x, 1.0 / len(labels)) for x in labels),
                    "argmin of iid continuous times (each label equally likely)")
    return f


def _rw_495df063():
    values = list(range(100, 201))
    pv = [math.comb(100, k) * 0.9 ** k * 0.1 ** (100 - k) for k in range(101)]
    return Law("empirical_discrete", {"values": values, "pvals": num(pv)}, "100 + Binomial(100, 0.9)",
               notes=["equivalently Binomial(n=100, p=0.9) shifted by +100 (our binomial has no shift)"],
               extra={"shifted_binomial": {"n": 100, "p": 0.9, "shift": 100}})


def _rw_bf34e215():
    # A = 50 + U(-20,20), B = 70 + U(-20,20); P(B < A) = P(D > 20), D = U1 - U2 triangular on [-40, 40]
    p_b = (40 - 20) ** 2 / (2 * 40 ** 2)
    return _cat(collections.OrderedDict([("A", 1 - p_b), ("B", p_b)]), "race of two uniform latencies")


def _rw_9843572d():
    return _cat(collections.OrderedDict([("X", 0.5), ("Y", 0.5)]), "race of two iid delays (symmetric)")


def _rw_b3c2bd87():
    h = 0.001
    grid_v = np.full(int(20 / h), 1 / 20)      # U(-10, 10)
    grid_s = np.full(int(10 / h), 1 / 10)      # U(0, 10)
    dens = np.convolve(np.convolve(grid_v, grid_s) * h, grid_s) * h   # density of V + S + R on [-10, 30]
    t = -10 + h * (np.arange(dens.size) + 0.5)
    cdf = np.cumsum(dens) * h
    bases = {"P1": 20, "P2": 35, "P3": 25, "P4": 30}
    lo, hi = min(bases.values()) - 10, max(bases.values()) + 30
    x = np.arange(lo, hi, h) + h / 2
    f = {k: np.interp(x - b, t, dens, left=0, right=0) for k, b in bases.items()}
    Fc = {k: np.interp(x - b, t, cdf, left=0, right=1) for k, b in bases.items()}
    out = collections.OrderedDict()
    for k in bases:
        surv = np.ones_like(x)
        for j in bases:
            if j != k:
                surv *= 1 - Fc[j]
        out[k] = float(np.sum(f[k] * surv) * h)
    s = sum(out.values())
    out = collections.OrderedDict((k, round(v / s, 5)) for k, v in out.items())
    L = _cat(out, "argmin of base_i + U(-10,10) + U(0,10) + U(0,10)")
    L.notes.append("numerical integration (grid 0.001), about 4-5 correct digits")
    return L


def _rw_99ba8a6f():
    P = ["parent-thread-1", "parent-thread-2"]
    Cn = ["child-thread-1", "child-thread-2"]
    popts = [(tuple(P), 0.1), ((P[0],), 0.45), ((P[1],), 0.45)]
    copts = [(tuple(Cn), 0.1), ((Cn[0],), 0.45), ((Cn[1],), 0.45)]
    out = collections.OrderedDict()
    for (po, pp), (co, cp) in itertools.product(popts, copts):
        items = list(po) + list(co)
        perms = list(itertools.permutations(items))
        for pr in perms:
            key = "\n".join(pr)
            out[key] = out.get(key, 0) + pp * cp / len(perms)
    return _cat(out, "each side prints both threads w.p. 0.1 else one random thread; uniform interleaving")


def _rw_c0c46088():
    out = collections.OrderedDict()

    def rec(a, b, seq, p):
        if a == 0 and b == 0:
            out[seq] = out.get(seq, 0) + p
            return
        if a > 0 and b > 0:
            rec(a - 1, b, seq + "A", p / 2)
            rec(a, b - 1, seq + "B", p / 2)
        elif a > 0:
            rec(a - 1, b, seq + "A", p)
        else:
            rec(a, b - 1, seq + "B", p)
    rec(3, 3, "", 1.0)
    return _cat(out, "random choice between non-empty queues until both are empty")


def _rw_c24f0c53():
    return Law("uniform_permutation", {"n": 3}, "random.shuffle of a literal list, lines 'Deleting X'",
               extra={"items": ["A", "B", "C"], "line_format": "Deleting {x}", "joined_with": "\n"})


RW_MANUAL = {
    "06484ed3": _rw_06484ed3, "0c05ec86": _rw_0c05ec86, "41b48a16": _rw_41b48a16,
    "4328470e": _rw_uniform_labels(["Alpha", "Beta", "Gamma", "Delta"]),
    "e5938429": _rw_uniform_labels(["Red", "Blue", "Green", "Yellow"]),
    "495df063": _rw_495df063, "bf34e215": _rw_bf34e215, "9843572d": _rw_9843572d, "b3c2bd87": _rw_b3c2bd87,
    "99ba8a6f": _rw_99ba8a6f, "c0c46088": _rw_c0c46088, "c24f0c53": _rw_c24f0c53,
}


def realworld_answer_types() -> dict[str, dict]:
    data = json.loads(git("show", "HEAD:realworld_mapping.json"))
    out = {}
    for group, spec in data.items():
        for u in spec.get("uids:", []):
            md = u.get("metadata", {}) or {}
            out[u["value"]] = {"group": group, "how_to_handle": spec.get("how_to_handle"),
                               "type": md.get("type"), "possible_outcomes": md.get("possible_outcomes")
                               or (len(md["mapping"]) if md.get("mapping") else None),
                               "number_of_lines": md.get("number_of_lines"),
                               "lines": [md.get("min_lines"), md.get("max_lines")] if "min_lines" in md else None,
                               "mapping_labels": list(md["mapping"]) if md.get("mapping") else None}
    return out


# ------------------------------------------------------------------------------------------------ main


def build_specs():
    programs = list_programs()
    sources = read_blobs(programs)
    folders = sorted({p.split("/")[1] for p in programs})
    uidmap = uid_index(folders)
    prompts = {f: load_prompts(f) for f in folders}
    ours = our_families()
    validate = registry_validator()
    rw_types = realworld_answer_types()
    specs = []
    for path in sorted(programs):
        _, folder, fn = path.split("/")
        uid = fn[:-3]
        src_folder, index = uidmap.get(uid, (None, None))
        cat_folder = src_folder or folder
        category, regime = folder_meta(cat_folder)
        rec = {"uid": uid, "task_folder": folder, "uid_folder": src_folder, "question_index": index,
               "category": category, "regime": regime}
        if src_folder and src_folder != folder:
            rec["misfiled"] = (f"program stored under {folder} but its uid is {src_folder}/questions.json:{index}; "
                               f"category taken from {src_folder}")
        pr = prompts.get(src_folder) if src_folder else None
        if pr and index is not None and index < len(pr):
            sub = pr[index]["subcategory"].replace(" Distribution", "")
            rec["intended_subcategory"] = sub
            rec["intended_group"] = pr[index]["category"]
            rec["intended_family"] = SUBCAT_TO_FAMILY.get(sub)
        else:
            rec["intended_subcategory"] = rec["intended_family"] = None
        res = analyze_program(sources[path])
        cls = res.pop("classification")
        rec.update(res)
        if category == "real_world":
            rec["realworld"] = {"simulates": RW_DESCRIPTION.get(uid[:8]), **rw_types.get(uid, {})}
            if uid[:8] in RW_MANUAL:
                if cls["status"] == "unclassifiable":
                    rec["ast_reason"] = cls["reason"]
                else:
                    rec["ast_law"] = {"family": cls["law"].family, "params": num(cls["law"].params)}
                cls = {"status": "classified", "law": RW_MANUAL[uid[:8]](), "derivation": "manual"}
        rec["derivation"] = cls.get("derivation", "ast")
        if cls["status"] == "classified":
            L = cls["law"]
            fam, params = L.family, tidy_params(L.family, L.params)
            rec["natural_family"], rec["natural_params"] = fam, params
            target = rec.get("intended_family")
            if fam == "mixture":
                comps = []
                for comp in params["components"]:
                    cconv = to_intended(comp["family"], comp["params"], target)
                    if cconv is not None:
                        comps.append({"family": target, "params": tidy_params(target, cconv), "weight": comp["weight"]})
                    else:
                        comps.append(comp)
                if comps != params["components"]:
                    rec.setdefault("notes", []).append(f"mixture components re-expressed as the intended family {target}")
                params = {"components": comps}
                target = None
            conv = to_intended(fam, params, target)
            if conv is not None:
                rec["family"], rec["params"] = target, tidy_params(target, conv)
                rec.setdefault("notes", []).append(f"{fam} re-expressed as the intended family {target} (same law)")
            else:
                rec["family"], rec["params"] = fam, params
            rec["pattern"] = L.pattern
            sps = scipy_spec(rec["family"], rec["params"])
            if sps is not None:
                rec["scipy"] = sps
            rec["notes"] = rec.get("notes", []) + L.notes
            if L.extra:
                rec["extra"] = num(L.extra)
            fams = [c["family"] for c in rec["params"]["components"]] if rec["family"] == "mixture" else [rec["family"]]
            missing = sorted({f for f in fams if f not in ours})
            rec["status"] = "classified_missing_family" if missing else "classified"
            if missing:
                rec["missing_families"] = missing
            if validate and not missing:
                rec["registry_validation"] = validate(rec["family"], rec["params"])
            if rec["family"] == "mixture":
                rec["components_summary"] = [f"{c['family']}@{c['weight']}" for c in rec["params"]["components"]]
            if target and rec["family"] != target and not (rec["family"] == "mixture"):
                rec["intended_mismatch"] = f"prompt asked for {target}, program samples {rec['family']}"
        else:
            rec["status"] = "unclassifiable"
            rec["reason"] = cls["reason"]
            rec["family"] = rec["params"] = None
        specs.append(rec)
    return specs, ours


# ------------------------------------------------------------------------------------------------ summary


def bank_counter():
    cmd = ("from ub_core.problems import load_bank; import collections, json; b=load_bank('ksn'); "
           "print(json.dumps([[p.category, p.family, p.regime, p.id] for p in b]))")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        out = subprocess.run([sys.executable, "-c", cmd], cwd=MAIN, capture_output=True, text=True, check=True,
                             env=env, timeout=110).stdout
        return json.loads(out.strip().splitlines()[-1])
    except Exception as exc:  # noqa: BLE001
        print(f"warning: could not load our bank: {exc}", file=sys.stderr)
        return None


def write_summary(specs, ours, bank):
    L = []
    w = L.append
    w("# UnpredictaBench release vs our KS@N bank: static extraction summary\n")
    w("Generated by `extract.py` (AST only; no release program was executed). Per-uid details: `specs.json`.\n")
    w("Status legend: **have** = classified into a family our registry has (`ub_core/distributions.py`); "
      "**lack** = classified into a family we do not have; **unclass.** = not classified (reason given).\n")
    w("Family names / parameters follow our registry. `family` is re-expressed in the prompt's intended family "
      "where the law is exactly a member of it (e.g. Gamma with integer shape -> erlang); `natural_family` keeps "
      "what the code calls.\n")
    tot = collections.Counter(s["status"] for s in specs)
    w(f"**Total {len(specs)} programs: {tot['classified']} have, {tot['classified_missing_family']} lack, "
      f"{tot['unclassifiable']} unclassifiable.**\n")
    mis = [s for s in specs if s.get("misfiled")]
    if mis:
        w("**Uid provenance.** Every uid is `uuid5(NAMESPACE_URL, '<folder>/questions.json:<index>')`, and the index "
          "matches `prompts/<folder>_prompts.json[index]` (the distribution the generator was asked for). "
          f"{len(mis)} programs are stored in another folder than their uid's:\n")
        for s in mis:
            w(f"- `{s['uid']}`: {s['misfiled']} (intended {s['intended_subcategory']})")
        w("")
    w("## Per category\n")
    w("| category | n | have | lack | unclass. | of which hand-derived (AST rules could not) |")
    w("|---|---|---|---|---|---|")
    for c in ["text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal", "real_world", "shuffling"]:
        ss = [s for s in specs if s["category"] == c]
        cc = collections.Counter(s["status"] for s in ss)
        man = sum(1 for s in ss if s["derivation"] == "manual")
        w(f"| {c} | {len(ss)} | {cc['classified']} | {cc['classified_missing_family']} | {cc['unclassifiable']} | {man} |")
    w("")
    man = [s for s in specs if s["derivation"] == "manual"]
    if man:
        # the uids only: the static rules' reasons quote the release's code
        w(f"{len(man)} real-world programs were classified by hand (exact enumeration or integration coded in "
          "`extract.py`, section 'real-world tasks'), because the static rules do not model their constructs "
          "(classes, generator expressions, a data-dependent while loop, `min` over a dict, a non-literal shuffle): "
          + ", ".join(f"`{s['uid'][:8]}`" for s in man) + ".\n")
    # per folder table
    w("## Per task folder\n")
    w("| task folder | n | have | lack | unclass. | lacking families | prompt/program mismatches |")
    w("|---|---|---|---|---|---|---|")
    by_folder = collections.defaultdict(list)
    for s in specs:
        by_folder[s["task_folder"]].append(s)
    for f in sorted(by_folder):
        ss = by_folder[f]
        c = collections.Counter(s["status"] for s in ss)
        lack = collections.Counter(m for s in ss for m in s.get("missing_families", []))
        mm = sum(1 for s in ss if s.get("intended_mismatch"))
        w(f"| {f} | {len(ss)} | {c['classified']} | {c['classified_missing_family']} | {c['unclassifiable']} | "
          f"{', '.join(f'{k} ({v})' for k, v in sorted(lack.items())) or '-'} | {mm} |")
    w("")
    un = [s for s in specs if s["status"] == "unclassifiable"]
    w("## Unclassifiable programs (grouped by reason)\n")
    if not un:
        w("None.\n")
    groups = collections.defaultdict(list)
    for s in un:
        key = re.sub(r":.*", "", s["reason"])
        groups[key].append(s)
    for k, ss in sorted(groups.items()):
        w(f"- **{k}** ({len(ss)}): " + "; ".join(f"`{s['uid'][:8]}` {s['task_folder']} ({s['reason'][len(k):][:150].strip(': ')})" for s in ss))
    w("")
    lack_all = [s for s in specs if s["status"] == "classified_missing_family"]
    w("## Programs classified into families we lack\n")
    for s in lack_all:
        w(f"- `{s['uid'][:8]}` {s['task_folder']} (intended {s.get('intended_subcategory')}): "
          f"`{s['family']}` {json.dumps(s['params'])[:220]}")
    w("")
    mm = [s for s in specs if s.get("intended_mismatch")]
    w("## Prompt vs program mismatches (the program's law is not a member of the family the prompt names)\n")
    w("The ground truth is the program; these are worth knowing when matching uid for uid.\n")
    for s in mm:
        w(f"- `{s['uid'][:8]}` {s['task_folder']}: intended **{s['intended_subcategory']}**, program = "
          f"`{s['family']}` {json.dumps(s['params'])[:160]} ({s.get('pattern', '')[:90]})")
    w("")
    # code_implicit patterns
    w("## code_implicit: transformation patterns\n")
    ci = [s for s in specs if s["category"] == "code_implicit"]
    pc = collections.Counter()
    ex = {}
    for s in ci:
        pat = s.get("pattern") or ("UNCLASSIFIED: " + s.get("reason", "")[:80])
        key = re.sub(r"coordinate \d+", "coordinate i", pat)
        if key.startswith("direct ") and "affine" not in key:
            key = "no transformation: direct library sampler under renamed variables (" + key[7:] + ")"
        elif key.startswith("direct "):
            key = "affine transform of a library draw (" + key[7:].replace(" then affine a*X + b", "") + ")"
        pc[key] += 1
        ex.setdefault(key, []).append(f"{s['uid'][:8]}->{s.get('family')}")
    w("| pattern | count | examples (uid -> family) |")
    w("|---|---|---|")
    for k, v in pc.most_common():
        w(f"| {k} | {v} | {', '.join(ex[k][:4])} |")
    w("")
    # multimodal
    w("## multimodal: mixture components and weights\n")
    mmod = [s for s in specs if s["category"] == "multimodal"]
    wc = collections.Counter()
    fc = collections.Counter()
    same = 0
    for s in mmod:
        if s.get("family") == "mixture":
            comps = s["params"]["components"]
            wc[tuple(c["weight"] for c in comps)] += 1
            fams = tuple(c["family"] for c in comps)
            fc[" + ".join(fams)] += 1
            same += len(set(fams)) == 1
    w(f"{len(mmod)} programs; {sum(1 for s in mmod if s.get('family') == 'mixture')} classified as mixtures, "
      f"all with {set(len(s['params']['components']) for s in mmod if s.get('family') == 'mixture')} components; "
      f"{same} mix two members of the SAME family (the prompt's family) with different parameters, selected by "
      "`np.random.choice([0, 1], p=weights)`. Non-mixture results: "
      + (", ".join(f"`{s['uid'][:8]}` -> {s.get('family') or s.get('reason', '')[:60]}" for s in mmod
                   if s.get("family") != "mixture") or "none") + "\n")
    w("Weights: " + ", ".join(f"{list(k)} x{v}" for k, v in wc.most_common()) + "\n")
    w("| component families | count |")
    w("|---|---|")
    for k, v in fc.most_common():
        w(f"| {k} | {v} |")
    w("")
    # realworld
    w("## realworld_human (30): what each program simulates, answer type, our family\n")
    for s in specs:
        if s["category"] != "real_world":
            continue
        r = s.get("realworld", {})
        at = f"{r.get('group')} / {r.get('how_to_handle')}"
        if r.get("type"):
            at += f" / type={r['type']}"
        if r.get("possible_outcomes"):
            at += f" / {r['possible_outcomes']} outcomes"
        if r.get("number_of_lines"):
            at += f" / {r['number_of_lines']} lines"
        fam = s.get("family") or "UNCLASSIFIED"
        extra = ""
        if fam == "categorical":
            labs = s["params"]["labels"]
            extra = f" {len(labs)} outcomes" + (f", pvals {s['params']['pvals']}" if len(labs) <= 4 else "")
        elif fam == "empirical_discrete":
            extra = f" {len(s['params']['values'])} values"
        elif fam == "uniform_permutation":
            extra = f" n={s['params']['n']} items={s.get('extra', {}).get('items')}"
        w(f"- `{s['uid']}`: {r.get('simulates')} | answer: {at} | ours: `{fam}`{extra} ({s['derivation']})")
    w("")
    w("## shuffling_human (20): item lists\n")
    for s in specs:
        if s["category"] == "shuffling":
            w(f"- `{s['uid']}`: {json.dumps(s.get('extra', {}).get('items'))} -> `{s.get('family')}` n={s['params']['n'] if s.get('params') else '?'}")
    w("")
    # bank comparison
    w("## Comparison with our bank (`load_bank('ksn')`)\n")
    if bank is None:
        w("Could not load our bank.\n")
    else:
        bc = collections.Counter((c, f) for c, f, _, _ in bank)
        w(f"Our bank: {len(bank)} problems. Counter((category, family)): "
          + ", ".join(f"{c}/{f}: {n}" for (c, f), n in sorted(bc.items())) + "\n")
        cats = ["text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal", "real_world", "shuffling"]
        w("| category | release n | our n | release families our bank lacks (by program law) | "
          "our families the release lacks | by prompt-intended family: lacked by our bank |")
        w("|---|---|---|---|---|---|")
        for c in cats:
            rs = [s for s in specs if s["category"] == c]
            ob = collections.Counter(f for cc, f, _, _ in bank if cc == c)
            if c == "multimodal":
                rel = collections.Counter(comp["family"] for s in rs if s.get("family") == "mixture"
                                          for comp in s["params"]["components"])
                ourset = set()
                for cc, f, _, pid in bank:
                    pass
                ours_comp = bank_mixture_components(c)
                lack = sorted(set(rel) - set(ours_comp))
                extra_ours = sorted(set(ours_comp) - set(rel))
                intended = sorted({s.get("intended_family") for s in rs} - set(ours_comp) - {None})
                w(f"| {c} | {len(rs)} | {sum(ob.values())} | mixture components: {', '.join(lack) or '-'} | "
                  f"mixture components: {', '.join(extra_ours) or '-'} | {', '.join(intended) or '-'} |")
                continue
            rel = collections.Counter(s.get("family") or "UNCLASSIFIED" for s in rs)
            lack = sorted(set(rel) - set(ob))
            extra_ours = sorted(set(ob) - set(rel))
            intended = sorted({s.get("intended_family") for s in rs if s.get("intended_family")} - set(ob))
            w(f"| {c} | {len(rs)} | {sum(ob.values())} | {', '.join(f'{k} ({rel[k]})' for k in lack) or '-'} | "
              f"{', '.join(f'{k} ({ob[k]})' for k in extra_ours) or '-'} | {', '.join(intended) or '-'} |")
        w("")
        w("### Slot-level comparison (category x regime x family)\n")
        w("Release slot = (regime, family the generation prompt asked for); ours = (regime, family) of `load_bank('ksn')`. "
          "Release `spread_out` = our `spread`. A release slot whose program law differs from the prompt's family is "
          "shown as `intended -> program family`.\n")
        for c in ["text_explicit", "text_implicit", "code_explicit", "code_implicit"]:
            for reg_r, reg_o in (("concentrated", "concentrated"), ("spread_out", "spread")):
                rel = collections.Counter(s["intended_family"] for s in specs if s["category"] == c and s["regime"] == reg_r)
                ob = collections.Counter(f for cc, f, rg, _ in bank if cc == c and rg == reg_o)
                only_rel = sorted(set(rel) - set(ob))
                only_ours = sorted(set(ob) - set(rel))
                progs = collections.defaultdict(set)
                for s in specs:
                    if s["category"] == c and s["regime"] == reg_r and s.get("family") != s["intended_family"]:
                        progs[s["intended_family"]].add(s.get("family") or "UNCLASSIFIED")
                diff = "; ".join(f"{k} -> {'/'.join(sorted(v))}" for k, v in sorted(progs.items()))
                w(f"- {c} / {reg_o}: release {sum(rel.values())}, ours {sum(ob.values())}; release-only: "
                  f"{', '.join(only_rel) or '-'}; ours-only: {', '.join(only_ours) or '-'}"
                  + (f"; program law differs from prompt: {diff}" if diff else ""))
        mm_rel = collections.Counter(s["intended_family"] for s in specs if s["category"] == "multimodal")
        w(f"- multimodal: release = 2-component mixtures of the SAME family, one per prompt family and regime "
          f"({len(mm_rel)} families x 2 regimes); ours = 80 2-component mixtures pairing DIFFERENT families from a pool "
          f"of {len(bank_mixture_components('multimodal'))} ({', '.join(sorted(bank_mixture_components('multimodal')))}).")
        w("")
        w("Per category release family counts (program law, after re-expression in the intended family):\n")
        for c in cats:
            rs = [s for s in specs if s["category"] == c]
            rel = collections.Counter(s.get("family") or "UNCLASSIFIED" for s in rs)
            w(f"- {c}: " + ", ".join(f"{k} {v}" for k, v in sorted(rel.items())))
        w("")
    return "\n".join(L) + "\n"


_BANK_MIX = None


def bank_mixture_components(category):
    global _BANK_MIX
    if _BANK_MIX is None:
        cmd = ("from ub_core.problems import load_bank; import json; b=load_bank('ksn'); "
               "print(json.dumps([[p.category, [c['family'] for c in p.params.get('components', [])]] for p in b "
               "if p.family=='mixture']))")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        try:
            out = subprocess.run([sys.executable, "-c", cmd], cwd=MAIN, capture_output=True, text=True, check=True,
                                 env=env, timeout=110).stdout
            _BANK_MIX = json.loads(out.strip().splitlines()[-1])
        except Exception:  # noqa: BLE001
            _BANK_MIX = []
    return collections.Counter(f for c, fs in _BANK_MIX if c == category for f in fs)


def main():
    global MIRROR
    if "--mirror" in sys.argv:
        at = sys.argv.index("--mirror")
        if at + 1 >= len(sys.argv):
            sys.exit("extract.py: --mirror needs a folder")
        MIRROR = sys.argv[at + 1]
    if not MIRROR or not os.path.isdir(MIRROR):
        sys.exit("extract.py: name the release checkout or mirror with --mirror DIR (or UB_RELEASE_MIRROR)")
    specs, ours = build_specs()
    # facts only in the written table: the release's own code text (call sources, output expressions) stays out
    public = []
    for spec in specs:
        spec = {k: v for k, v in spec.items() if k != "output_expression"}
        spec["sampler_calls"] = [{k: v for k, v in c.items() if k != "call"} for c in spec.get("sampler_calls", [])]
        public.append(spec)
    with open(os.path.join(OUT_DIR, "specs.json"), "w", encoding="utf-8") as fh:
        json.dump(public, fh, indent=1, ensure_ascii=False, default=str)
    bank = None if "--no-bank" in sys.argv else bank_counter()
    with open(os.path.join(OUT_DIR, "SUMMARY.md"), "w", encoding="utf-8") as fh:
        fh.write(write_summary(specs, ours, bank))
    c = collections.Counter(s["status"] for s in specs)
    print(f"{len(specs)} programs: {dict(c)}")


if __name__ == "__main__":
    main()
