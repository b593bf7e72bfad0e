"""Equivalences between families: re-expressing a law in the prompt's intended family, the scipy spec of a
family, and tidy integer parameters."""
from __future__ import annotations

import math

from .samplers import num


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
        out = {"dist": dist, "shapes": {k: num(v) for k, v in (shapes or {}).items()}, "loc": num(loc),
               "scale": num(scale)}
        if note:
            out["note"] = note
        return out
    try:
        if fam == "beta":
            return sp("beta", {"a": p["a"], "b": p["b"]})
        if fam == "arcsine":
            return sp("arcsine", loc=p["low"], scale=p["high"] - p["low"])
        if fam == "reciprocal":
            return sp("loguniform", {"a": p["a"], "b": p["b"]})
        if fam == "triangular":
            w = p["right"] - p["left"]
            return sp("triang", {"c": (p["mode"] - p["left"]) / w}, p["left"], w)
        if fam == "truncated_normal":
            return sp("truncnorm", {"a": (p["low"] - p["loc"]) / p["scale"], "b": (p["high"] - p["loc"]) / p["scale"]},
                      p["loc"], p["scale"])
        if fam == "uniform":
            return sp("uniform", loc=p["low"], scale=p["high"] - p["low"])
        if fam == "erlang":
            return sp("erlang", {"a": p["k"]}, scale=p["scale"])
        if fam == "f":
            return sp("f", {"dfn": p["dfnum"], "dfd": p["dfden"]})
        if fam == "frechet":
            return sp("invweibull", {"c": p["c"]}, p.get("loc", 0.0), p["scale"])
        if fam == "gamma":
            return sp("gamma", {"a": p["shape"]}, scale=p["scale"])
        if fam == "pareto":
            return sp("pareto", {"b": p["a"]}, scale=p["scale"])
        if fam == "rayleigh":
            return sp("rayleigh", scale=p["scale"])
        if fam == "weibull":
            return sp("weibull_min", {"c": p["a"]}, scale=p["scale"])
        if fam == "chi_squared":
            return sp("chi2", {"df": p["df"]})
        if fam == "exponential":
            return sp("expon", scale=p["scale"])
        if fam == "inverse_gaussian":
            return sp("invgauss", {"mu": p["mean"] / p["scale"]}, scale=p["scale"])
        if fam == "log_normal":
            return sp("lognorm", {"s": p["sigma"]}, scale=math.exp(p["mean"]))
        if fam in ("gumbel", "laplace", "logistic", "normal"):
            return sp({"gumbel": "gumbel_r", "normal": "norm"}.get(fam, fam), loc=p["loc"], scale=p["scale"])
        if fam == "students_t":
            return sp("t", {"df": p["df"]}, p.get("loc", 0.0), p.get("scale", 1.0))
        if fam == "bernoulli":
            return sp("bernoulli", {"p": p["p"]})
        if fam == "beta_binomial":
            return sp("betabinom", {"n": p["n"], "a": p["a"], "b": p["b"]})
        if fam == "binomial":
            return sp("binom", {"n": p["n"], "p": p["p"]})
        if fam == "discrete_uniform":
            return sp("randint", {"low": p["low"], "high": p["high"] + 1})
        if fam == "hypergeometric":
            return sp("hypergeom", {"M": p["ngood"] + p["nbad"], "n": p["ngood"], "N": p["nsample"]})
        if fam == "poisson":
            return sp("poisson", {"mu": p["lam"]})
        if fam == "skellam":
            return sp("skellam", {"mu1": p["mu1"], "mu2": p["mu2"]})
        if fam == "geometric":
            return sp("geom", {"p": p["p"]})
        if fam == "negative_binomial":
            return sp("nbinom", {"n": p["n"], "p": p["p"]})
        if fam == "dirichlet":
            a = p["alpha"][p["component"]]
            return sp("beta", {"a": a, "b": sum(p["alpha"]) - a}, note="marginal of the reported coordinate")
        if fam == "multinomial":
            return sp("binom", {"n": p["n"], "p": p["pvals"][p["component"]]}, note="marginal of the reported count")
        if fam == "multivariate_normal":
            if p.get("reduce") == "sum":
                return sp("norm", loc=sum(p["mean"]), scale=math.sqrt(sum(map(sum, p["cov"]))),
                          note="sum of coordinates")
            c = p["component"]
            return sp("norm", loc=p["mean"][c], scale=math.sqrt(p["cov"][c][c]),
                      note="marginal of the reported coordinate")
        if fam == "multivariate_t":
            c = p["component"]
            return sp("t", {"df": p["df"]}, p["loc"][c], math.sqrt(p["shape"][c][c]),
                      note="marginal of the reported coordinate")
        if fam == "negative_multinomial":
            p0, pc = p["pvals"][0], p["pvals"][1 + p["component"]]
            return sp("nbinom", {"n": p["n"], "p": p0 / (p0 + pc)}, note="marginal of the reported count")
        if fam == "empirical_discrete":
            return {"dist": "rv_discrete", "values": [p["values"], p["pvals"]]}
        if fam == "mixture":
            return {"dist": "mixture",
                    "components": [{"weight": c["weight"], **(scipy_spec(c["family"], c["params"]) or {})}
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
