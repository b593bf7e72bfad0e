"""Joint distributions (Dirichlet, multinomial, multivariate normal and t, negative multinomial), each reduced to a
stated scalar: one coordinate or the sum."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ._family import (
    INT_NN,
    POS,
    ParameterError,
    _component,
    _cov,
    _exact,
    _num,
    _reduce,
    _register,
    _simplex,
    _vec,
    fmt,
)

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
