"""Code-explicit KS@N problems: a short numpy/scipy program that draws from the family; the model is asked to run
it once and report what it prints. The program text is ours; the process is the family's.
"""

from __future__ import annotations

from typing import Callable

from ...distributions import fmt
from .template_registry import template, template_for


def _arr(x) -> str:
    return fmt(x)


def _jumps(p: dict) -> list[str]:
    if "p" in p:
        return [f"x = int(rng.geometric({fmt(p['p'])}, size=events).sum())"]
    fam, q = p["jump"]["family"], p["jump"]["params"]
    call = {"uniform": lambda: f"rng.uniform({fmt(q['low'])}, {fmt(q['high'])}, size=events)",
            "exponential": lambda: f"rng.exponential({fmt(q['scale'])}, size=events)",
            "gamma": lambda: f"rng.gamma({fmt(q['shape'])}, {fmt(q['scale'])}, size=events)",
            "empirical_discrete": lambda: f"rng.choice({_arr(q['values'])}, p={_arr(q['pvals'])}, size=events)",
            }[fam]()
    return [f"x = float({call}.sum())"]


def _rayleigh_mixture(p: dict) -> list[str]:
    from ...distributions import _affine_text

    kp = p["kernel_params"]
    lines = [f"r = rng.rayleigh({fmt(p['sigma'])})"]

    def aff(a):
        return _affine_text(a).replace(" R", " * r").replace("R", "r")

    if p["kernel"] == "normal":
        lines.append(f"x = rng.normal({aff(kp['loc'])}, {aff(kp['scale'])})")
    elif p["kernel"] == "exponential":
        lines.append(f"x = rng.exponential({aff(kp['scale'])})")
    else:
        lines.append(f"x = rng.gamma({fmt(kp['shape']['const'])}, {aff(kp['scale'])})")
    return lines


# Each entry returns the program lines after `rng = np.random.default_rng()` that set `x`.
_CODE_EXPLICIT: dict[str, Callable[[dict], list[str]]] = {
    "beta": lambda p: [f"x = rng.beta({fmt(p['a'])}, {fmt(p['b'])})"],
    "arcsine": lambda p: ["from scipy import stats",
                          f"x = stats.arcsine.rvs(loc={fmt(p['low'])}, scale={fmt(p['high'] - p['low'])}, "
                          "random_state=rng)"],
    "reciprocal": lambda p: ["from scipy import stats",
                             f"x = stats.loguniform.rvs({fmt(p['a'])}, {fmt(p['b'])}, random_state=rng)"],
    "triangular": lambda p: [f"x = rng.triangular({fmt(p['left'])}, {fmt(p['mode'])}, {fmt(p['right'])})"],
    "truncated_normal": lambda p: [
        "from scipy import stats",
        f"a, b = ({fmt(p['low'])} - {fmt(p['loc'])}) / {fmt(p['scale'])}, "
        f"({fmt(p['high'])} - {fmt(p['loc'])}) / {fmt(p['scale'])}",
        f"x = stats.truncnorm.rvs(a, b, loc={fmt(p['loc'])}, scale={fmt(p['scale'])}, random_state=rng)"],
    "uniform": lambda p: [f"x = rng.uniform({fmt(p['low'])}, {fmt(p['high'])})"],
    "erlang": lambda p: ["from scipy import stats",
                         f"x = stats.erlang.rvs({fmt(p['k'])}, scale={fmt(p['scale'])}, random_state=rng)"],
    "f": lambda p: [f"x = rng.f({fmt(p['dfnum'])}, {fmt(p['dfden'])})"],
    "frechet": lambda p: ["from scipy import stats",
                          f"x = stats.invweibull.rvs({fmt(p['c'])}, loc={fmt(p['loc'])}, scale={fmt(p['scale'])}, "
                          "random_state=rng)"],
    "gamma": lambda p: [f"x = rng.gamma(shape={fmt(p['shape'])}, scale={fmt(p['scale'])})"],
    "pareto": lambda p: ["from scipy import stats",
                         f"x = stats.pareto.rvs({fmt(p['a'])}, scale={fmt(p['scale'])}, random_state=rng)"],
    "rayleigh": lambda p: [f"x = rng.rayleigh(scale={fmt(p['scale'])})"],
    "weibull": lambda p: [f"x = {fmt(p['scale'])} * rng.weibull({fmt(p['a'])})"],
    "chi_squared": lambda p: [f"x = rng.chisquare({fmt(p['df'])})"],
    "exponential": lambda p: [f"x = rng.exponential(scale={fmt(p['scale'])})"],
    "inverse_gaussian": lambda p: [f"x = rng.wald(mean={fmt(p['mean'])}, scale={fmt(p['scale'])})"],
    "log_normal": lambda p: [f"x = rng.lognormal(mean={fmt(p['mean'])}, sigma={fmt(p['sigma'])})"],
    "gumbel": lambda p: [f"x = rng.gumbel(loc={fmt(p['loc'])}, scale={fmt(p['scale'])})"],
    "laplace": lambda p: [f"x = rng.laplace(loc={fmt(p['loc'])}, scale={fmt(p['scale'])})"],
    "students_t": lambda p: [f"x = {fmt(p['loc'])} + {fmt(p['scale'])} * rng.standard_t({fmt(p['df'])})"],
    "logistic": lambda p: [f"x = rng.logistic(loc={fmt(p['loc'])}, scale={fmt(p['scale'])})"],
    "normal": lambda p: [f"x = rng.normal(loc={fmt(p['loc'])}, scale={fmt(p['scale'])})"],
    "bernoulli": lambda p: [f"x = int(rng.binomial(1, {fmt(p['p'])}))"],
    "poisson_binomial": lambda p: [f"probs = np.array({_arr(p['p'])})",
                                   "x = int((rng.random(probs.size) < probs).sum())"],
    "beta_binomial": lambda p: ["from scipy import stats",
                                f"x = int(stats.betabinom.rvs({fmt(p['n'])}, {fmt(p['a'])}, {fmt(p['b'])}, "
                                "random_state=rng))"],
    "binomial": lambda p: [f"x = int(rng.binomial({fmt(p['n'])}, {fmt(p['p'])}))"],
    "discrete_uniform": lambda p: [f"x = int(rng.integers({fmt(p['low'])}, {fmt(p['high'])}, endpoint=True))"],
    "hypergeometric": lambda p: [f"x = int(rng.hypergeometric({fmt(p['ngood'])}, {fmt(p['nbad'])}, "
                                 f"{fmt(p['nsample'])}))"],
    "poisson": lambda p: [f"x = int(rng.poisson({fmt(p['lam'])}))"],
    "skellam": lambda p: ["from scipy import stats",
                          f"x = int(stats.skellam.rvs({fmt(p['mu1'])}, {fmt(p['mu2'])}, random_state=rng))"],
    "compound_poisson": lambda p: [f"events = rng.poisson({fmt(p['lam'])})", *_jumps(p)],
    "geometric": lambda p: [f"x = int(rng.geometric({fmt(p['p'])}))"],
    "negative_binomial": lambda p: [f"x = int(rng.negative_binomial({fmt(p['n'])}, {fmt(p['p'])}))"],
    "dirichlet": lambda p: [f"x = rng.dirichlet({_arr(p['alpha'])})[{p['component']}]"],
    "multinomial": lambda p: [f"x = int(rng.multinomial({fmt(p['n'])}, {_arr(p['pvals'])})[{p['component']}])"],
    "multivariate_normal": lambda p: [
        f"v = rng.multivariate_normal({_arr(p['mean'])}, {_arr(p['cov'])})",
        "x = v.sum()" if p["reduce"] == "sum" else f"x = v[{p['component']}]"],
    "multivariate_t": lambda p: [
        "from scipy import stats",
        f"v = stats.multivariate_t.rvs(loc={_arr(p['loc'])}, shape={_arr(p['shape'])}, df={fmt(p['df'])}, "
        "random_state=rng)",
        "x = v.sum()" if p["reduce"] == "sum" else f"x = v[{p['component']}]"],
    "negative_multinomial": lambda p: [
        f"# outcome 0 stops; count outcome {p['component'] + 1} until outcome 0 has happened {fmt(p['n'])} times",
        f"probs = {_arr(p['pvals'])}",
        "stops, x = 0, 0",
        f"while stops < {fmt(p['n'])}:",
        "    k = rng.choice(len(probs), p=probs)",
        "    stops += k == 0",
        f"    x += k == {p['component'] + 1}",
        "x = int(x)"],
    "rectified_gaussian": lambda p: [f"x = max(0.0, rng.normal({fmt(p['loc'])}, {fmt(p['scale'])}))"],
    "empirical_discrete": lambda p: [f"x = rng.choice({_arr(p['values'])}, p={_arr(p['pvals'])})"],
    "rayleigh_mixture": lambda p: _rayleigh_mixture(p),
    "multinomial_weighted_sum": lambda p: [
        f"counts = rng.multinomial({p['n']}, {_arr(p['pvals'])})",
        f"x = int(np.dot(counts, {_arr(p['values'])}))"],
    "categorical": lambda p: [f"labels = {p['labels']!r}",
                              f"x = rng.choice(labels, p={_arr(p['pvals'])})"],
}


def _program_builder(body: Callable[[dict], list[str]]) -> Callable[[dict], str]:
    def build(params: dict) -> str:
        lines = ["import numpy as np", "", "rng = np.random.default_rng()", *body(params), "print(x)"]
        return "\n".join(lines)

    return build


for _family, _body in _CODE_EXPLICIT.items():  # the code-explicit kind of the template registry (.templates)
    template("code_explicit", _family)(_program_builder(_body))


def code_explicit_program(family: str, params: dict) -> str:
    """The code-explicit program of ``family`` (validated ``params``): a direct library draw, printed. A family
    without one is a one-line ``ValueError``."""
    return template_for("code_explicit", family)(params)


def code_prompt(program: str) -> str:
    """Our wording for code tasks: the program and a request for one possible printed value."""
    return ("Here is a Python program that uses randomness:\n\n```python\n" + program.rstrip() +
            "\n```\n\nImagine actually running it: what does it print? Answer as if you had run it.")
