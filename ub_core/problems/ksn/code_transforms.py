"""The release's code-implicit transformations, as our own programs ("the same transformations").

Each code-implicit release program reaches its law by one construction (a Gumbel by ``log(-log U)``, a Poisson by
Knuth's product of uniforms, a beta as a ratio of gammas, ...). :data:`TRANSFORMS` maps the name of each
construction to a builder ``(params, extra) -> program`` that writes the same construction with the row's
parameters, in our own code. ``release_processes.json`` names each code-implicit row's construction (``transform``;
``transform_params`` where the program needs numbers the law does not keep, such as the weights of a linear
combination). A row whose construction has no builder here uses the family's template
(:mod:`.code_implicit`), which reaches the same law another way.

Every program prints one draw of the row's law exactly; ``tests/ksn/test_bank.py`` runs each bank program and compares
its output with the truth.
"""

from __future__ import annotations

from typing import Callable

from .code_implicit import _exp1, _list, _n, _plus, _program, _times

__all__ = ["TRANSFORMS", "transform_program"]


def _unit_open() -> list[str]:
    """``u`` uniform on (0, 1), both ends excluded (a log or a ratio of it must stay finite)."""
    return ["u = rng.random()", "while u == 0.0:", "    u = rng.random()"]


def _gumbel_loglog(p, _):
    return _program(*_unit_open(), f"x = {_n(p['loc'])} - {_n(p['scale'])} * np.log(-np.log(u))", "print(x)")


def _exp_log_u(p, _):
    return _program(f"x = {_times(p['scale'], _exp1())}", "print(x)")


def _logistic_logit(p, _):
    return _program(*_unit_open(), f"x = {_plus(p['loc'], _times(p['scale'], 'np.log(u / (1.0 - u))'))}",
                    "print(x)")


def _laplace_inverse(p, _):
    return _program("u = rng.random() - 0.5", "while abs(u) == 0.5:", "    u = rng.random() - 0.5",
                    f"x = {_n(p['loc'])} - {_n(p['scale'])} * np.sign(u) * np.log(1.0 - 2.0 * abs(u))",
                    "print(x)")


def _normal_affine(p, _):
    return _program(f"x = {_plus(p['loc'], _times(p['scale'], 'rng.standard_normal()'))}", "print(x)")


def _normal_direct(p, _):
    return _program(f"x = rng.normal({_n(p['loc'])}, {_n(p['scale'])})", "print(x)")


def _lognormal_exp_normal(p, _):
    return _program(f"x = np.exp(rng.normal({_n(p['mean'])}, {_n(p['sigma'])}))", "print(x)")


def _uniform_affine(p, _):
    return _program(f"x = {_plus(p['low'], _times(p['high'] - p['low'], 'rng.random()'))}", "print(x)")


def _beta_gamma_ratio(p, _):
    return _program(f"g1 = rng.gamma({_n(p['a'])})", f"g2 = rng.gamma({_n(p['b'])})", "x = g1 / (g1 + g2)",
                    "print(x)")


def _gamma_direct(p, _):
    return _program(f"x = rng.gamma({_n(p['shape'])}, {_n(p['scale'])})", "print(x)")


def _gamma_boost(p, _):
    # Gamma(a) = Gamma(a + 1) * U^(1/a): the boost for shapes below 1
    boosted = "rng.gamma(" + _n(p["shape"] + 1) + ")"
    return _program(*_unit_open(), f"x = {_times(p['scale'], boosted)} * u ** (1 / {_n(p['shape'])})",
                    "print(x)")


def _truncnorm_ppf(p, _):
    a, b = (p["low"] - p["loc"]) / p["scale"], (p["high"] - p["loc"]) / p["scale"]
    return ("import numpy as np\nfrom scipy.stats import norm\n\nrng = np.random.default_rng()\n"
            f"lo, hi = norm.cdf({_n(a)}), norm.cdf({_n(b)})\n"
            "u = rng.random()\n"
            f"x = {_plus(p['loc'], _times(p['scale'], 'norm.ppf(lo + u * (hi - lo))'))}\n"
            "print(x)\n")


def _poisson_knuth(p, _):
    return _program(f"limit = np.exp(-{_n(p['lam'])})", "count, prod = 0, rng.random()", "while prod > limit:",
                    "    count += 1", "    prod *= rng.random()", "print(count)")


def _geometric_ceil(p, _):
    return _program(*_unit_open(), f"x = max(1, int(np.ceil(np.log(u) / np.log(1 - {_n(p['p'])}))))", "print(x)")


def _binomial_direct(p, _):
    n = 1 if "n" not in p else p["n"]
    return _program(f"x = int(rng.binomial({_n(n)}, {_n(p['p'])}))", "print(x)")


def _bernoulli_indicator(p, _):
    return _program(f"x = int(rng.random() < {_n(p['p'])})", "print(x)")


def _randint_direct(p, _):
    return _program(f"x = int(rng.integers({_n(p['low'])}, {_n(p['high'])}, endpoint=True))", "print(x)")


def _choice_direct(p, _):
    return _program(f"x = rng.choice({_list(p['values'])}, p={_list(p['pvals'])})",
                    "print(int(x) if float(x).is_integer() else float(x))")


def _searchsorted(p, _):
    return _program(f"values = {_list(p['values'])}", f"edges = np.cumsum({_list(p['pvals'])})",
                    "i = min(int(np.searchsorted(edges, rng.random(), side='right')), len(values) - 1)",
                    "print(values[i])")


def _skellam_difference(p, _):
    return _program(f"x = int(rng.poisson({_n(p['mu1'])}) - rng.poisson({_n(p['mu2'])}))", "print(x)")


def _dirichlet_gammas(p, _):
    return _program(f"g = rng.gamma({_list(p['alpha'])})", f"x = g[{p['component']}] / g.sum()", "print(x)")


def _erlang_log_product(p, _):
    return _program(f"x = -{_n(p['scale'])} * np.log(np.prod(1.0 - rng.random({int(p['k'])})))", "print(x)")


def _arcsine_cos(p, _):
    return _program("angle = rng.uniform(0, 2 * np.pi)",
                    f"x = {_plus(p['low'], _times(p['high'] - p['low'], '(1 + np.cos(angle)) / 2'))}", "print(x)")


def _mvn_combination(p, extra):
    return _program(f"centre = np.array({_list(extra['mean'])})",
                    f"L = np.linalg.cholesky(np.array({[list(map(float, r)) for r in extra['cov']]}))",
                    f"point = centre + L @ rng.standard_normal({len(extra['mean'])})",
                    f"x = float(np.dot({_list(extra['weights'])}, point))", "print(x)")


def _weighted_counts(p, _):
    return _program(f"counts = rng.multinomial({int(p['n'])}, {_list(p['pvals'])})",
                    f"x = int(np.dot(counts, {_list(p['values'])}))", "print(x)")


def _compound_gamma_shape(p, _):
    j = p["jump"]["params"]
    return _program(f"events = rng.poisson({_n(p['lam'])})",
                    f"x = rng.gamma(events * {_n(j['shape'])}, {_n(j['scale'])}) if events > 0 else 0.0", "print(x)")


def _compound_sum(p, _):
    j = p["jump"]
    if j["family"] != "gamma":
        raise ValueError("compound_sum: gamma jumps only")
    return _program(f"events = rng.poisson({_n(p['lam'])})",
                    f"x = float(rng.gamma({_n(j['params']['shape'])}, {_n(j['params']['scale'])}, size=events).sum())",
                    "print(x)")


TRANSFORMS: dict[str, Callable[[dict, dict], str]] = {
    "gumbel_loglog": _gumbel_loglog, "exp_log_u": _exp_log_u, "logistic_logit": _logistic_logit,
    "laplace_inverse": _laplace_inverse, "normal_affine": _normal_affine, "normal_direct": _normal_direct,
    "uniform_affine": _uniform_affine, "lognormal_exp_normal": _lognormal_exp_normal,
    "beta_gamma_ratio": _beta_gamma_ratio,
    "uniform_direct": _uniform_affine,  # on [0, 1) the affine map is rng.random() itself
    "gamma_direct": _gamma_direct, "gamma_boost": _gamma_boost, "truncnorm_ppf": _truncnorm_ppf,
    "poisson_knuth": _poisson_knuth, "geometric_ceil": _geometric_ceil, "binomial_direct": _binomial_direct,
    "bernoulli_indicator": _bernoulli_indicator, "randint_direct": _randint_direct, "choice_direct": _choice_direct,
    "searchsorted": _searchsorted, "skellam_difference": _skellam_difference, "dirichlet_gammas": _dirichlet_gammas,
    "erlang_log_product": _erlang_log_product, "arcsine_cos": _arcsine_cos, "mvn_combination": _mvn_combination,
    "weighted_counts": _weighted_counts, "compound_gamma_shape": _compound_gamma_shape,
    "compound_sum": _compound_sum,
}


def transform_program(name: str, params: dict, extra: dict | None = None) -> str:
    """The program of construction ``name`` for validated ``params`` (``extra``: the row's transform_params)."""
    try:
        build = TRANSFORMS[name]
    except KeyError:
        raise ValueError(f"no code-implicit construction {name!r}; known: {', '.join(sorted(TRANSFORMS))}") from None
    return build(params, extra or {})
