"""A loaded six-sided die: P(6) = w, the other faces (1 - w) / 5 each. Only the public plug-in API is used."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ub_core import distributions as D
from ub_core.metric_spec import UNIT, MetricSpec
from ub_core.option_registry import Option
from ub_core.options import boolean
from ub_core.problems import problem_bank, scalar_problem
from ub_core.run_metrics import RunMetric


def _check(params):
    w = params.get("w")
    if set(params) != {"w"} or isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 < w < 1:
        raise D.ParameterError(f"loaded_die: expected {{'w': a number in (0, 1)}}, got {dict(params)!r}")
    return {"w": float(w)}


def _pmf(p):
    return np.array([(1 - p["w"]) / 5] * 5 + [p["w"]])


LOADED_DIE = D.Family(
    name="loaded_die", title="Loaded die", group="discrete_finite", support="discrete", param_doc="w in (0, 1)",
    check=_check, draw=lambda rng, p, n: rng.choice(np.arange(1.0, 7.0), size=n, p=_pmf(p)),
    text=lambda p: f"a die showing 6 with probability {p['w']:g}", bounds=lambda p: (1.0, 6.0))


def problems():
    return [scalar_problem(f"die-{round(100 * w)}", "loaded_die", {"w": w},
                           f"A die lands on 6 with probability {w:g} and on each other face equally often. Roll it.",
                           bank="dice_demo", bank_version="1", category="dice") for w in (0.1, 0.3, 0.6)]


BANK = problem_bank("dice_demo", "1", problems, id_prefixes=("die-",))


def six_share(values, truth) -> float:
    """The share of sixes among the valid answers."""
    return float(np.mean(np.asarray(values) == 6))


SIX_SHARE = MetricSpec("six_share", "share of sixes", True, "diagnostic", bounds=UNIT, family="loaded_die",
                       compute=six_share)


def six_bias(records) -> dict:
    """Mean of (share of sixes - w) over the problems, with its standard error across problems."""
    gaps = [r["six"] - r["w"] for r in records if math.isfinite(r["six"])]
    if not gaps:
        return {"value": math.nan, "se": math.nan}
    se = float(np.std(gaps, ddof=1) / math.sqrt(len(gaps))) if len(gaps) > 1 else math.nan
    return {"value": float(np.mean(gaps)), "se": se, "problems": float(len(gaps))}


SIX_BIAS = RunMetric("six_bias", "share of sixes minus w", None, family="loaded_die", extras=("problems",),
                     title="Loaded dice (share of sixes minus the stated w)",
                     record=lambda problem, row: {"w": problem.params["w"], "six": row["six_share"]},
                     compute=six_bias)

FACES_IN_PROMPT = Option(
    "faces_in_prompt", boolean, "name the faces 1 to 6 in the prompt", default=False, bank="dice_demo",
    apply=lambda items, on: [replace(p, prompt=p.prompt + " Its faces are 1 to 6.") for p in items] if on else items)
