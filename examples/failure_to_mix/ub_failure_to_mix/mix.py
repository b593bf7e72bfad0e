"""The ``ftm`` bank and its metrics: "Failure to Mix" (Yang & Zhang 2025, arXiv 2511.14630), the binary experiment.

Each problem states a probability p and asks for "1" with probability p, else "0" (one Bernoulli(p) draw);
r is the share of "1" among a run's valid answers. A model that follows the distribution has r = p; the paper
finds r a step function of p (0 below 1/2, 1 above). Its step-likeness S measures how far r is from the diagonal.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import stats

from ub_core.metric_spec import UNIT, MetricSpec
from ub_core.option_registry import Option
from ub_core.options import boolean
from ub_core.problems import problem_bank, scalar_problem
from ub_core.run_metrics import RunMetric

NAME, VERSION = "ftm", "1"
#: the stated probabilities, every 0.05 from 0 to 1 (0, 1/2 and 1 among them: see step_likeness)
GRID = tuple(round(0.05 * i, 2) for i in range(21))
#: the paper's binary prompt, as its summary words it ("return '1' with p probability, else '0'")
PROMPT = "Return '1' with {pct}% probability, else return '0'."


def problems() -> list:
    return [scalar_problem(f"ftm-p{round(100 * p):03d}", "bernoulli", {"p": p}, PROMPT.format(pct=round(100 * p)),
                           bank=NAME, bank_version=VERSION, category="binary", metadata={"p": p}) for p in GRID]


BANK = problem_bank(NAME, VERSION, problems, id_prefixes=("ftm-",))


def flip_rate(values, truth) -> float:
    """r = (number of "1") / (valid answers): the observed rate of "1" (the paper's r)."""
    return float(np.mean(values))


def flip_gap(values, truth, *, n, threshold, method, problem) -> float:
    """|r_N - p|: the distance of the share of "1" in the first N valid answers from the stated p."""
    return abs(float(np.mean(values)) - problem.params["p"])


FLIP_RATE = MetricSpec("flip_rate", "share of '1' (r)", True, "diagnostic", bounds=UNIT, bank=NAME, compute=flip_rate)
FLIP_GAP = MetricSpec("flip_gap", "|r - p| at N={n}", False, per_n=True, bounds=UNIT, bank=NAME, compute=flip_gap)


def _mean_abs_dev(n, q, p):
    """E|B_i/n_i - p_i| for B_i ~ Binomial(n_i, q_i), each summed exactly over its n_i + 1 outcomes."""
    k = np.arange(n.max() + 1)[:, None]  # the pmf is 0 beyond n_i
    return np.sum(stats.binom.pmf(k, n, q) * np.abs(k / n - p), axis=0)


def step_likeness(p, r, n) -> dict:
    """Step-likeness S (Failure to Mix's "step-similarity"): the area between the observed curve r(p) and r = p,
    by the trapezoid rule over the stated ps, scaled so that the step function r = 1[p > 1/2] scores 1:

        S = A(r) / A(step),   A(f) = sum_i (p_{i+1} - p_i) (|f_i - p_i| + |f_{i+1} - p_{i+1}|) / 2.

    On a grid holding 0, 1/2 and 1, A(step) = 1/4 and S = 4 A(r), the paper's scaling. S = 0 for r = p exactly.
    ``perfect``: E[S] of a perfect sampler at this run's sample sizes n_i (r_i = Binomial(n_i, p_i) / n_i), exact
    (E is linear: the trapezoid of the exact E|r_i - p_i|). ``se``: sqrt(sum_i w_i^2 Var|r_i - p_i|) / A(step)
    with w_i the trapezoid weights and each variance exact under Binomial(n_i, r_i) (plug-in r_i)."""
    p, r, n = (np.asarray(x, dtype=float) for x in (p, r, n))
    keep = np.isfinite(p) & np.isfinite(r) & (n >= 1)
    p, r, n = p[keep], r[keep], n[keep].astype(int)
    order = np.argsort(p)
    p, r, n = p[order], r[order], n[order]
    if len(np.unique(p)) < 2 or len(np.unique(p)) < len(p):
        return {"value": np.nan, "se": np.nan, "perfect": np.nan}  # no curve, or one p asked twice
    w = np.diff(p, prepend=p[0], append=p[-1])
    w = (w[:-1] + w[1:]) / 2  # trapezoid weights: A(f) = sum_i w_i |f_i - p_i|
    scale = np.sum(w * np.abs((p > 0.5) - p))
    var = r * (1 - r) / n + (r - p) ** 2 - _mean_abs_dev(n, r, p) ** 2
    perfect = _mean_abs_dev(n, p, p)
    return {"value": float(np.sum(w * np.abs(r - p)) / scale),
            "se": float(np.sqrt(np.sum(w ** 2 * np.clip(var, 0, None))) / scale),
            "perfect": float(np.sum(w * perfect) / scale)}


STEP_LIKENESS = RunMetric(
    "step_likeness", "step-likeness S", False, bank=NAME, extras=("perfect",),
    title="Failure to Mix (step-likeness S; 1 = a step function, 0 = r equal to p)",
    record=lambda problem, row: {"p": problem.params["p"], "r": row["flip_rate"], "n": row["n_valid"]},
    compute=lambda records: step_likeness(*zip(*((x["p"], x["r"], x["n"]) for x in records))))

ANSWER_INSTRUCTION = Option(
    "answer_instruction", boolean, "append our answer instruction to the paper's prompt (false: the prompt alone)",
    default=True, bank=NAME,
    apply=lambda items, on: items if on else [replace(p, append_instruction=False) for p in items])
