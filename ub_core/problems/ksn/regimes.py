"""Representative parameter regimes per family (UnpredictaBench, sec. 3.1 and appendix H).

The built-in bank does not read these: its problems take the release's own parameters, row by row
(:mod:`.release_processes`). They remain the reference settings on which every template (code-implicit program,
text-implicit story) is tested, one concentrated and one spread out per family.

Each of the 40 families has a *concentrated* setting (low variance, mass near the centre) and a *spread out*
setting (high variance, broad support). They are chosen so the spread setting's standard deviation is at least
twice the concentrated one's (a test checks this on the reference draws), and so integer-valued parameters stay
integers where a code-implicit program needs them (numbers of stages, trials, degrees of freedom).

The per-family templates live in :mod:`.templates`.
"""

from __future__ import annotations

REGIME_NAMES = ("concentrated", "spread")

REGIMES: dict[str, dict[str, dict]] = {
    # continuous, bounded interval
    "beta": {"concentrated": {"a": 30, "b": 20}, "spread": {"a": 0.6, "b": 0.6}},
    "arcsine": {"concentrated": {"low": 2, "high": 3}, "spread": {"low": -40, "high": 60}},
    "reciprocal": {"concentrated": {"a": 10, "b": 12}, "spread": {"a": 1, "b": 1000}},
    "triangular": {"concentrated": {"left": 9, "mode": 10, "right": 11},
                   "spread": {"left": 0, "mode": 20, "right": 100}},
    "truncated_normal": {"concentrated": {"loc": 50, "scale": 2, "low": 45, "high": 55},
                         "spread": {"loc": 0, "scale": 30, "low": -50, "high": 100}},
    "uniform": {"concentrated": {"low": 4.5, "high": 5.5}, "spread": {"low": -100, "high": 100}},
    # continuous, semi-infinite
    "erlang": {"concentrated": {"k": 20, "scale": 0.5}, "spread": {"k": 2, "scale": 20}},
    "f": {"concentrated": {"dfnum": 50, "dfden": 60}, "spread": {"dfnum": 3, "dfden": 10}},
    "frechet": {"concentrated": {"c": 8, "scale": 10, "loc": 0}, "spread": {"c": 2.5, "scale": 10, "loc": 0}},
    "gamma": {"concentrated": {"shape": 100, "scale": 0.1}, "spread": {"shape": 1.5, "scale": 20}},
    "pareto": {"concentrated": {"a": 10, "scale": 5}, "spread": {"a": 2.5, "scale": 5}},
    "rayleigh": {"concentrated": {"scale": 1}, "spread": {"scale": 20}},
    "rayleigh_mixture": {"concentrated": {"sigma": 0.35, "kernel": "normal",
                                          "kernel_params": {"loc": {"const": 0.8, "coef_R": 0.5}, "scale": 0.12}},
                         "spread": {"sigma": 6.0, "kernel": "gamma",
                                    "kernel_params": {"shape": 5, "scale": {"const": 0.0, "coef_R": 0.2}}}},
    "weibull": {"concentrated": {"a": 10, "scale": 5}, "spread": {"a": 1.2, "scale": 50}},
    "chi_squared": {"concentrated": {"df": 3}, "spread": {"df": 40}},
    "exponential": {"concentrated": {"scale": 0.5}, "spread": {"scale": 50}},
    "inverse_gaussian": {"concentrated": {"mean": 5, "scale": 200}, "spread": {"mean": 20, "scale": 5}},
    "log_normal": {"concentrated": {"mean": 2, "sigma": 0.05}, "spread": {"mean": 3, "sigma": 1.2}},
    # continuous, whole real line
    "gumbel": {"concentrated": {"loc": 10, "scale": 0.5}, "spread": {"loc": 0, "scale": 25}},
    "laplace": {"concentrated": {"loc": 3, "scale": 0.4}, "spread": {"loc": -10, "scale": 30}},
    "students_t": {"concentrated": {"df": 30, "loc": 5, "scale": 0.5}, "spread": {"df": 3, "loc": 0, "scale": 10}},
    "logistic": {"concentrated": {"loc": 20, "scale": 0.5}, "spread": {"loc": 0, "scale": 15}},
    "normal": {"concentrated": {"loc": 100, "scale": 1.5}, "spread": {"loc": 0, "scale": 40}},
    # discrete, finite support
    "bernoulli": {"concentrated": {"p": 0.95}, "spread": {"p": 0.5}},
    "poisson_binomial": {"concentrated": {"p": [0.98, 0.97, 0.99, 0.95]},
                         "spread": {"p": [0.2, 0.35, 0.5, 0.65, 0.8, 0.5, 0.4, 0.6, 0.3, 0.7, 0.45, 0.55]}},
    "beta_binomial": {"concentrated": {"n": 10, "a": 50, "b": 50}, "spread": {"n": 40, "a": 0.8, "b": 0.8}},
    "binomial": {"concentrated": {"n": 20, "p": 0.95}, "spread": {"n": 200, "p": 0.5}},
    "discrete_uniform": {"concentrated": {"low": 5, "high": 7}, "spread": {"low": -50, "high": 150}},
    "hypergeometric": {"concentrated": {"ngood": 5, "nbad": 95, "nsample": 10},
                       "spread": {"ngood": 50, "nbad": 50, "nsample": 60}},
    # discrete, infinite support
    "poisson": {"concentrated": {"lam": 2}, "spread": {"lam": 60}},
    "skellam": {"concentrated": {"mu1": 1, "mu2": 0.5}, "spread": {"mu1": 40, "mu2": 30}},
    "compound_poisson": {"concentrated": {"lam": 1, "p": 0.9}, "spread": {"lam": 8, "p": 0.2}},
    "geometric": {"concentrated": {"p": 0.8}, "spread": {"p": 0.05}},
    "negative_binomial": {"concentrated": {"n": 20, "p": 0.95}, "spread": {"n": 2, "p": 0.05}},
    # joint distributions, reduced to a scalar
    "dirichlet": {"concentrated": {"alpha": [50, 30, 20], "component": 0},
                  "spread": {"alpha": [0.5, 0.5, 0.5], "component": 0}},
    "multinomial": {"concentrated": {"n": 10, "pvals": [0.9, 0.05, 0.05], "component": 0},
                    "spread": {"n": 100, "pvals": [0.5, 0.3, 0.2], "component": 0}},
    "multivariate_normal": {
        "concentrated": {"mean": [1, 2], "cov": [[0.1, 0.05], [0.05, 0.1]], "reduce": "sum"},
        "spread": {"mean": [10, -5, 3], "cov": [[100, 40, 0], [40, 50, 10], [0, 10, 25]], "reduce": "sum"}},
    "multivariate_t": {
        "concentrated": {"loc": [0, 0], "shape": [[0.2, 0], [0, 0.2]], "df": 30, "component": 0},
        "spread": {"loc": [5, 5], "shape": [[100, 30], [30, 100]], "df": 4, "component": 1}},
    "negative_multinomial": {"concentrated": {"n": 10, "pvals": [0.9, 0.05, 0.05], "component": 0},
                             "spread": {"n": 5, "pvals": [0.2, 0.5, 0.3], "component": 0}},
    # mixed discrete-continuous
    "rectified_gaussian": {"concentrated": {"loc": 0.5, "scale": 1}, "spread": {"loc": 0, "scale": 30}},
    # non-numeric
    "categorical": {"concentrated": {"pvals": [0.9, 0.04, 0.03, 0.03], "labels": ["red", "green", "blue", "yellow"]},
                    "spread": {"pvals": [1 / 6] * 6,
                               "labels": ["apple", "banana", "cherry", "grape", "lemon", "mango"]}},
}
