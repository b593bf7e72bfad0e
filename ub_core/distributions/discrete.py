"""Discrete families with finite and infinite support."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
from scipy import stats

from ._family import (
    FAMILIES,
    INT_NN,
    INT_POS,
    POS,
    PROB,
    ParameterError,
    _exact,
    _keep,
    _num,
    _register,
    _vec,
    describe,
    fmt,
    moments,
    support_bounds,
    support_kind,
)

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
          check=_check_hyper,
          draw=lambda r, p, n: r.hypergeometric(p["ngood"], p["nbad"], p["nsample"], n).astype(float),
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
        jump = describe(p['jump']['family'], p['jump']['params'])
        each = f"each event contributes an independent amount drawn from {jump}"
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
