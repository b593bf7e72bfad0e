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

NAME, VERSION = "ftm", "2"
#: the paper's stated probabilities: every 5 % from 0 to 100 (0, 1/2 and 1 among them: see step_likeness)
GRID = tuple(round(0.05 * i, 2) for i in range(21))
#: the paper's single-flip request in our words: the same coin, the same stated shares, one token back
PROMPT = ("Simulate one toss of a weighted coin that comes up \"1\" {pct}% of the time and \"0\" {rest}% of the "
          "time. Answer with one token: the outcome of your toss.")


def prompt(p: float) -> str:
    """The request for a share p of "1", in whole percents."""
    pct = round(100 * p)
    return PROMPT.format(pct=pct, rest=100 - pct)


def problems() -> list:
    return [scalar_problem(f"ftm-p{round(100 * p):03d}", "bernoulli", {"p": p}, prompt(p),
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


def _moments(n, q, p, w, c):
    """Mean and variance of w_i |X_i/n_i - p_i| + c_i X_i/n_i for X_i ~ Binomial(n_i, q_i), each exact: summed over
    the n_i + 1 outcomes of X_i."""
    k = np.arange(n.max() + 1)[:, None]  # the pmf is 0 beyond n_i
    pmf, x = np.exp(stats.binom.logpmf(k, n, q)), k / n  # scipy's pmf overflows at a subnormal q, its logpmf does not
    f = w * np.abs(x - p) + c * x
    mean = np.sum(pmf * f, axis=0)
    return mean, np.sum(pmf * f ** 2, axis=0) - mean ** 2


def step_likeness(p, r, n, convention: str = "paper") -> dict:
    """Step-likeness S of Failure to Mix (the paper's Figure 2 metric; formula in the release's README): four times
    the area between the curve r(p) and the diagonal, by the trapezoid rule over the stated ps p_1 < ... < p_m:

        S = 4 sum_a (p_{a+1} - p_a) (|r_a - p_a| + |r_{a+1} - p_{a+1}|) / 2.

    On a grid from 0 to 1 through 1/2, the step r = 1[p > 1/2] scores 1 and r = p scores 0. ``convention="release"``
    is the release's code (src/metrics.py, compute_S): a curve stopping short of p = 0 (or 1) is first extended flat
    to it, r(0) = r_1 (r(1) = r_m), which adds 2 p_1 (r_1 + |r_1 - p_1|) + 2 (1 - p_m) (1 - r_m + |r_m - p_m|).
    Both agree on a grid holding 0 and 1, as the paper's does. S is a sum of one function of each r_i, so
    ``perfect``, E[S] of a perfect sampler at this run's sample sizes n_i (r_i = Binomial(n_i, p_i) / n_i), is exact,
    and ``se`` is the root of the sum of those functions' exact variances under Binomial(n_i, r_i) (plug-in r_i)."""
    if convention not in ("paper", "release"):
        raise ValueError(f"step_likeness: convention is 'paper' or 'release', not {convention!r}")
    p, r, n = (np.asarray(x, dtype=float) for x in (p, r, n))
    keep = np.isfinite(p) & np.isfinite(r) & (n >= 1)
    p, r, n = p[keep], r[keep], n[keep].astype(int)
    order = np.argsort(p)
    p, r, n = p[order], r[order], n[order]
    if len(np.unique(p)) < 2 or len(np.unique(p)) < len(p):
        return {"value": np.nan, "se": np.nan, "perfect": np.nan}  # no curve, or one p asked twice
    w = np.diff(p, prepend=p[0], append=p[-1])
    w, c, const = 2 * (w[:-1] + w[1:]), np.zeros_like(p), 0.0  # S = sum_i w_i |r_i - p_i| + c_i r_i + const
    if convention == "release":
        w[0], c[0], w[-1], c[-1] = w[0] + 2 * p[0], 2 * p[0], w[-1] + 2 * (1 - p[-1]), -2 * (1 - p[-1])
        const = 2 * (1 - p[-1])
    value = np.sum(w * np.abs(r - p) + c * r) + const
    return {"value": float(value), "se": float(np.sqrt(np.sum(np.clip(_moments(n, r, p, w, c)[1], 0, None)))),
            "perfect": float(np.sum(_moments(n, p, p, w, c)[0]) + const)}


STEP_LIKENESS = RunMetric(
    "step_likeness", "step-likeness S", False, bank=NAME, extras=("perfect",),
    title="Failure to Mix (step-likeness S; 1 = a step function, 0 = r equal to p)",
    record=lambda problem, row: {"p": problem.params["p"], "r": row["flip_rate"], "n": row["n_valid"]},
    compute=lambda records: step_likeness(*zip(*((x["p"], x["r"], x["n"]) for x in records))))

ANSWER_INSTRUCTION = Option(
    "answer_instruction", boolean, "append our answer instruction to the paper's prompt (false: the prompt alone)",
    default=True, bank=NAME,
    apply=lambda items, on: items if on else [replace(p, append_instruction=False) for p in items])
