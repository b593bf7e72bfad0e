"""Multimodal KS@N problems: mixtures of two components built from recognisable families, asked as text-explicit
prompts.
"""

from __future__ import annotations

import math

from ... import distributions as D
from .regimes import REGIME_NAMES


def _component(name: str, c: float, w: float) -> tuple[str, dict]:
    """A component of family ``name`` with mean about ``c`` and standard deviation about ``w``.

    Families whose spread is tied to their mean (Poisson, chi-squared) ignore ``w``; the rest are solved for it,
    so ``w`` really controls how concentrated the mixture's modes are.
    """
    c = float(c)
    w = float(w)
    r3 = round
    if name == "normal":
        return name, {"loc": c, "scale": w}
    if name == "laplace":
        return name, {"loc": c, "scale": r3(w / math.sqrt(2), 3)}
    if name == "logistic":
        return name, {"loc": c, "scale": r3(w * math.sqrt(3) / math.pi, 3)}
    if name == "gumbel":
        scale = r3(w * math.sqrt(6) / math.pi, 3)
        return name, {"loc": r3(c - 0.5772 * scale, 3), "scale": scale}
    if name == "students_t":
        return name, {"df": 5, "loc": c, "scale": r3(w / math.sqrt(5 / 3), 3)}
    if name == "uniform":
        h = r3(w * math.sqrt(3), 2)
        return name, {"low": c - h, "high": c + h}
    if name == "triangular":
        h = r3(w * math.sqrt(6), 2)
        return name, {"left": c - h, "mode": c, "right": c + h}
    if name == "discrete_uniform":
        h = max(1, int(round(w * math.sqrt(3))))
        return name, {"low": int(round(c)) - h, "high": int(round(c)) + h}
    if name == "gamma":
        return name, {"shape": r3((c / w) ** 2, 3), "scale": r3(w * w / c, 4)}
    if name == "log_normal":
        s2 = math.log(1 + (w / c) ** 2)
        return name, {"mean": r3(math.log(c) - s2 / 2, 4), "sigma": r3(math.sqrt(s2), 4)}
    if name == "poisson":
        return name, {"lam": c}
    if name == "binomial":
        p = min(0.9, max(0.1, 1 - w * w / c))
        return name, {"n": int(round(c / p)), "p": r3(p, 3)}
    if name == "negative_binomial":
        p = min(0.9, max(0.05, c / (w * w)))
        return name, {"n": r3(c * p / (1 - p), 3), "p": r3(p, 3)}
    if name == "weibull":
        from scipy.optimize import brentq
        from scipy.special import gamma as G

        cv2 = (w / c) ** 2
        k = brentq(lambda k: G(1 + 2 / k) / G(1 + 1 / k) ** 2 - 1 - cv2, 0.2, 500)
        k = r3(k, 3)
        return name, {"a": k, "scale": r3(c / G(1 + 1 / k), 4)}
    if name == "truncated_normal":
        return name, {"loc": c, "scale": w, "low": r3(c - 2.5 * w, 3), "high": r3(c + 2.5 * w, 3)}
    if name == "pareto":
        cv = w / c
        a = 1 + math.sqrt(1 + 1 / (cv * cv))
        return name, {"a": r3(a, 3), "scale": r3(c * (a - 1) / a, 4)}
    if name == "chi_squared":
        return name, {"df": c}
    if name == "erlang":
        k = max(1, int(round((c / w) ** 2)))
        return name, {"k": k, "scale": r3(c / k, 4)}
    if name == "inverse_gaussian":
        return name, {"mean": c, "scale": r3(c ** 3 / (w * w), 3)}
    if name == "skellam":
        var = max(w * w, abs(c) + 1)
        return name, {"mu1": r3((var + c) / 2, 3), "mu2": r3((var - c) / 2, 3)}
    raise ValueError(f"no multimodal component maker for {name!r}")


# The 20 recognisable families the multimodal problems are built from (the highlighted rows of table 10).
# Families whose spread is tied to their mean (exponential, geometric, Rayleigh) are left out: a component with
# standard deviation equal to its mean cannot make a separated mode.
MULTIMODAL_FAMILIES = ("normal", "laplace", "logistic", "gumbel", "students_t", "uniform", "triangular",
                       "discrete_uniform", "gamma", "log_normal", "poisson", "binomial", "negative_binomial",
                       "weibull", "truncated_normal", "chi_squared", "erlang", "inverse_gaussian", "pareto",
                       "skellam")


def multimodal_specs() -> list[dict]:
    """40 two-component mixtures x {concentrated, spread}: deterministic, so ids and truths never move."""
    fams = MULTIMODAL_FAMILIES
    specs = []
    for i in range(40):
        a = fams[i % 20]
        b = fams[(7 * i + 3) % 20]
        w1 = (0.5, 0.4, 0.3, 0.6)[i % 4]
        for regime in REGIME_NAMES:
            if regime == "concentrated":
                c1 = 8 + 2 * (i % 5)
                c2 = c1 + 25 + 5 * (i % 3)
                s1, s2 = 1.0 + 0.25 * (i % 3), 1.5 + 0.25 * (i % 2)
            else:
                c1 = 30 + 5 * (i % 5)
                c2 = c1 + 120 + 20 * (i % 3)
                s1, s2 = 10.0 + 2 * (i % 3), 18.0 + 3 * (i % 2)
            fa, pa = _component(a, c1, s1)
            fb, pb = _component(b, c2, s2)
            specs.append({"index": i + 1, "regime": regime, "params": {"components": [
                {"family": fa, "params": pa, "weight": w1},
                {"family": fb, "params": pb, "weight": round(1 - w1, 10)}]}})
    return specs


def multimodal_prompt(params: dict) -> str:
    return (f"You are acting as a random number generator for {D.describe('mixture', params)}. "
            "Draw from it at random.")
