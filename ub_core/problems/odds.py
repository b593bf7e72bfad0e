"""The "What are the odds" bank (seed 004): percentiles, probabilities and sampling on 12 idealised families.

What the paper fixes, and how we read it
----------------------------------------
- **Families** (seed 004, sec. 4): normal, log-normal, skew-normal, exponential, power law, uniform, gamma, Gumbel,
  Poisson, geometric, binomial, and a multinomial read as one outcome's count. Each family has three
  parameterisations: ``p0`` is the question distribution of the paper's released configuration (normal 100/10,
  log-normal 4.0/0.5, exponential rate 1/100, power law alpha 1.8 xmin 100, uniform 70-130, gamma 2/20,
  skew-normal 100/10/-10, Gumbel 1000/1000, Poisson 70, geometric 0.05, binomial 1000/0.5, multinomial 1000 trials
  with probabilities 0.2/0.3/0.5); ``p1`` and ``p2`` are our own, chosen to move scale and shape. For the
  multinomial, ``p0``/``p1``/``p2`` are the counts of outcomes 1, 2 and 3 of the paper's multinomial (the paper
  reports the three outcomes separately).
- **Percentile questions** (sec. 3, task 1): the value is the exact quantile ``Q(q)`` at the target percentiles
  1, 10, 20, ..., 90, 99, rounded for display to 3 decimals (integers for discrete families). The answer is the
  exact percentile of the *displayed* value. Continuous: ``100 F(x)``. Discrete: the **mid-rank**
  ``100 (P(X < x) + P(X <= x)) / 2``. The paper reads the value off a large sample and takes the target itself as
  the answer; for a discrete value that target lies somewhere in ``[100 P(X < x), 100 P(X <= x)]``, and the
  mid-rank is the centre of that interval (and the population form of ``percentileofscore(kind="mean")``). The
  prompt states the mid-rank rule for discrete families, so the question has one right answer.
- **Probability questions** (sec. 3, task 3): only values from the 1st to the 99th percentile are considered
  (both inclusive); for a target p in 0.1, ..., 1.0 the interval is the central p-quantile range of that restricted
  distribution, ``[Q(0.01 + 0.98 (1 - p) / 2), Q(0.01 + 0.98 (1 + p) / 2)]``, rounded for display. The answer is
  the exact conditional probability ``P(lo <= X <= hi | Q(0.01) <= X <= Q(0.99))`` of the displayed interval.
- **Sampling** (sec. 3, task 2): one draw per reply, 1,000 draws per problem; ground truth from our exact samplers.
- **Shots** (sec. 5.1): 0, 1, 3, 5, 7 or 9 worked examples, either from the same distribution (``distribution``)
  or from other distributions of the family (``family``), whose parameters are drawn once, with a fixed seed,
  from the paper's ranges for examples. Shot answers sit at the percentiles 5, 15, ..., 95 and the probabilities
  0.05, ..., 0.95 (:data:`SHOT_PERCENTILES` maps a shot count to the ones used), so they never equal a test answer;
  for a discrete family whose shot value would coincide with a test value we move the shot to the next value up
  that no test uses. Sampling shots are example draws.
- **Real-world contexts** (sec. 4 and 5.2, appendix C): the paper's health, finance and climate distributions
  come from data we cannot ship (Fitbit users, ACS PUMS, NOAA GHCNd). What the paper states of them becomes the
  ground truth: average daily exercise minutes as a log-normal with log-mean 3.543 and log-sd 0.677, daily step
  count as a normal with mean 8366.971 and sd 3291.940, 2018 US household income as a Gumbel with mean 66028.713
  and sd 53616.018, and average 2018 US temperature as a normal with mean 10.643 and sd 12.628 degrees Celsius.
  Each is asked as a percentile question in three framings, the three conditions of the paper's Table 2:
  ``<domain>_idealized`` (the distribution alone), ``<domain>`` (real-world context plus the distribution) and
  ``<domain>_normal`` (real-world context plus a Normal with the truth's mean and sd, a deliberately misspecified
  description for the non-normal ones), plus the paper's "context & 3 shots" condition (``<domain>`` with three
  within-distribution shots).

Items are :class:`~ub_core.problems.base.Problem` records. Percentile and probability items are deterministic
questions: their ``sampler`` returns the exact answer (a point mass), so the Random Machine oracle answers exactly;
the exact answer and everything scoring needs (value, interval, shots, the nearest-shot answer, the answer a
collapsed model gives) sit in ``metadata``.

Ids are stable: ``odds-pct-<family>-<p>-q<target>-<shots>``, ``odds-prb-<family>-<p>-p<target>-<shots>``,
``odds-smp-<family>-<p>-<shots>``, ``odds-pct-rw-<name>-<framing>-q<target>-<shots>`` where ``<shots>`` is ``s0``,
``s<k>d`` (within distribution) or ``s<k>f`` (within family).

Editions: ``full`` is every combination (8,888 items). ``subset`` (the default, 444 items) keeps every family x task
x shots setting once, on the paper's parameterisation, rotating the target so every target appears, plus three
targets of each real-world distribution and framing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from .. import distributions as D
from ..distributions import fmt
from ..metrics.odds import nearest_shot_answer
from .base import Problem

__all__ = ["BANK", "BANK_VERSION", "TASKS", "FAMILIES", "SHOT_COUNTS", "SHOT_TYPES", "CONTEXTS", "TEST_PERCENTILES",
           "SHOT_PERCENTILE_POOL", "TEST_PROBABILITIES", "SHOT_PROBABILITY_POOL", "SHOT_PERCENTILES",
           "PARAMETERISATIONS", "REAL_WORLD", "percentile_of", "probability_between", "odds_problems",
           "odds_items", "odds_item", "is_odds_problem", "PROMPT_OPENINGS"]

BANK = "odds"
# Bump when any prompt, parameter or answer changes: it keys the ground-truth cache.
BANK_VERSION = "1"

TASKS = ("percentile", "probability", "sampling")
TASK_SHORT = {"percentile": "pct", "probability": "prb", "sampling": "smp"}
FAMILIES = ("normal", "log_normal", "skew_normal", "exponential", "power_law", "uniform", "gamma", "gumbel",
            "poisson", "geometric", "binomial", "multinomial")
DISCRETE = frozenset({"poisson", "geometric", "binomial", "multinomial"})
SHOT_COUNTS = (0, 1, 3, 5, 7, 9)
SHOT_TYPES = ("distribution", "family")

TEST_PERCENTILES = (1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 99)
SHOT_PERCENTILE_POOL = (5, 15, 25, 35, 45, 55, 65, 75, 85, 95)
TEST_PROBABILITIES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SHOT_PROBABILITY_POOL = (0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95)
# Which shot percentiles a k-shot prompt uses: spread over the distribution (the paper's 3 shots are 35, 55, 75).
# Probability shots use the same table divided by 100.
SHOT_PERCENTILES = {1: (55,), 3: (35, 55, 75), 5: (15, 35, 55, 75, 95), 7: (15, 25, 35, 55, 75, 85, 95),
                    9: (5, 15, 25, 35, 55, 65, 75, 85, 95)}

# The restricted range of the probability questions (seed 004, appendix A.2: 1st to 99th percentile).
RANGE_LOW, RANGE_HIGH = 0.01, 0.99
# Digits shown for continuous values in prompts (the paper rounds to 3 decimals).
DECIMALS = 3

# (family, params in ub_core.distributions names, exponential convention); p0 is the paper's question distribution.
_PAPER_MULTINOMIAL = [0.2, 0.3, 0.5]
PARAMETERISATIONS: dict[str, tuple[dict, ...]] = {
    "normal": ({"loc": 100.0, "scale": 10.0}, {"loc": 0.0, "scale": 1.0}, {"loc": 2500.0, "scale": 400.0}),
    "log_normal": ({"mean": 4.0, "sigma": 0.5}, {"mean": 0.0, "sigma": 1.0}, {"mean": 7.5, "sigma": 1.2}),
    "skew_normal": ({"a": -10.0, "loc": 100.0, "scale": 10.0}, {"a": 4.0, "loc": 0.0, "scale": 2.0},
                    {"a": 2.0, "loc": 50.0, "scale": 15.0}),
    # the paper states a rate (1/100); p1 is stated as a rate too, p2 as a scale (the mean)
    "exponential": ({"scale": 100.0}, {"scale": 0.5}, {"scale": 12.0}),
    "power_law": ({"alpha": 1.8, "xmin": 100.0}, {"alpha": 2.5, "xmin": 1.0}, {"alpha": 3.0, "xmin": 10.0}),
    "uniform": ({"low": 70.0, "high": 130.0}, {"low": 0.0, "high": 1.0}, {"low": -5.0, "high": 20.0}),
    "gamma": ({"shape": 2.0, "scale": 20.0}, {"shape": 0.5, "scale": 1.0}, {"shape": 9.0, "scale": 0.5}),
    "gumbel": ({"loc": 1000.0, "scale": 1000.0}, {"loc": 0.0, "scale": 1.0}, {"loc": 20.0, "scale": 4.0}),
    "poisson": ({"lam": 70.0}, {"lam": 8.0}, {"lam": 25.0}),
    "geometric": ({"p": 0.05}, {"p": 0.1}, {"p": 0.02}),
    "binomial": ({"n": 1000, "p": 0.5}, {"n": 20, "p": 0.3}, {"n": 200, "p": 0.1}),
    "multinomial": ({"n": 1000, "pvals": _PAPER_MULTINOMIAL, "component": 0},
                    {"n": 1000, "pvals": _PAPER_MULTINOMIAL, "component": 1},
                    {"n": 1000, "pvals": _PAPER_MULTINOMIAL, "component": 2}),
}
EXPONENTIAL_CONVENTION = ("rate", "rate", "scale")

# The paper's ranges for the parameters of within-family example distributions (its released configuration).
_FAMILY_RANGES: dict[str, dict[str, tuple]] = {
    "normal": {"loc": (80, 120), "scale": (5, 20)},
    "log_normal": {"mean": (3.0, 10.0), "sigma": (0.3, 1.5)},
    "skew_normal": {"a": (-10, 10), "loc": (80, 120), "scale": (5, 20)},
    "exponential": {"rate": (1 / 200, 1 / 50)},
    "power_law": {"alpha": (1.5, 2.0), "xmin": (80, 200)},
    "uniform": {"low": (50, 100), "high": (100, 150)},
    "gamma": {"shape": (1.5, 2.5), "scale": (15, 30)},
    "gumbel": {"loc": (800, 1200), "scale": (800, 1200)},
    "poisson": {"lam": (50, 90)},
    "geometric": {"p": (0.01, 0.07)},
    "binomial": {"n": (800, 1200), "p": (0.3, 0.7)},
    "multinomial": {"n": (800, 1200)},
}
N_FAMILY_VARIANTS = 9  # enough for the largest shot count

CONTEXTS = ("none", "health", "finance", "climate", "health_normal", "finance_normal", "climate_normal",
            "health_idealized", "finance_idealized", "climate_idealized")


@dataclass(frozen=True)
class RealWorld:
    """One real-world distribution of seed 004 (sec. 4), with the parameters the paper states."""

    name: str
    domain: str
    family: str
    params: dict
    stated_as: str          # how the description states it: "natural" parameters or "moments" (mean, sd)
    context: str            # who and what the data are (our wording)
    question: str           # the question, with {x} for the value and {u} for the unit
    unit: str
    integer_values: bool = False


_GAMMA_E = 0.5772156649015329


def _gumbel_from_moments(mean: float, sd: float) -> dict:
    scale = sd * math.sqrt(6.0) / math.pi
    return {"loc": mean - _GAMMA_E * scale, "scale": scale}


REAL_WORLD: tuple[RealWorld, ...] = (
    RealWorld("exercise_minutes", "health", "log_normal", {"mean": 3.543, "sigma": 0.677}, "natural",
              "The data are the average daily exercise minutes of adults aged 18 to 65 in the United States who "
              "wear a Fitbit device and are active every day; the sample is balanced by age and by gender.",
              "What is the percentile of an average of {x} exercise minutes per day among these users?", "minutes"),
    RealWorld("step_count", "health", "normal", {"loc": 8366.971, "scale": 3291.940}, "natural",
              "The data are the average daily step counts of adults aged 18 to 65 in the United States who wear a "
              "Fitbit device and are active every day; the sample is balanced by age and by gender.",
              "What is the percentile of an average of {x} steps per day among these users?", "steps",
              integer_values=True),
    RealWorld("household_income", "finance", "gumbel", _gumbel_from_moments(66028.713, 53616.018), "moments",
              "The data are the annual incomes of households in the United States in 2018, from the Census "
              "Bureau's American Community Survey Public Use Microdata Sample (ACS PUMS).",
              "What is the percentile of an annual household income of ${x}?", "dollars"),
    RealWorld("temperature", "climate", "normal", {"loc": 10.643, "scale": 12.628}, "natural",
              "The data are the daily average temperatures recorded in 2018 at weather stations across the "
              "continental United States, from NOAA's Global Historical Climatology Network daily (GHCNd), with "
              "readings flagged by its quality checks removed.",
              "What is the percentile of a daily average temperature of {x} degrees Celsius?", "degrees Celsius"),
)
RW_FRAMINGS = ("idealized", "context", "normal")


# ------------------------------------------------------------------------------------------------ exact answers

def _key(family: str, params: Mapping) -> tuple:
    return (family, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())))


@lru_cache(maxsize=None)
def _frozen_by_key(key: tuple):
    family, items = key
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in items}
    return D.frozen(family, params)


def _dist(family: str, params: Mapping):
    return _frozen_by_key(_key(family, params))


def _is_discrete(family: str) -> bool:
    return family in DISCRETE


def percentile_of(family: str, params: Mapping, x: float) -> float:
    """Exact percentile (0-100) of ``x``: ``100 F(x)`` for a continuous family, the mid-rank
    ``100 (P(X < x) + P(X <= x)) / 2`` for a discrete one (see the module docstring)."""
    dist = _dist(family, params)
    if not _is_discrete(family):
        return float(100.0 * dist.cdf(x))
    below = float(dist.cdf(math.ceil(x) - 1))  # P(X < x) for integer support
    at_or_below = float(dist.cdf(math.floor(x)))
    return 100.0 * (below + at_or_below) / 2.0


def _restricted_range(family: str, params: Mapping) -> tuple[float, float]:
    return _restricted_range_by_key(_key(family, params))


@lru_cache(maxsize=None)
def _restricted_range_by_key(key: tuple) -> tuple[float, float]:
    dist = _frozen_by_key(key)
    return float(dist.ppf(RANGE_LOW)), float(dist.ppf(RANGE_HIGH))


def probability_between(family: str, params: Mapping, lo: float, hi: float) -> float:
    """Exact ``P(lo <= X <= hi | Q(0.01) <= X <= Q(0.99))``, both ends inclusive (seed 004, task 3)."""
    dist = _dist(family, params)
    r_lo, r_hi = _restricted_range(family, params)
    a, b = max(lo, r_lo), min(hi, r_hi)
    if _is_discrete(family):
        mass = float(dist.cdf(r_hi) - dist.cdf(r_lo - 1))
        if b < a:
            return 0.0
        return float((dist.cdf(math.floor(b)) - dist.cdf(math.ceil(a) - 1)) / mass)
    mass = RANGE_HIGH - RANGE_LOW
    if b <= a:
        return 0.0
    return float(min(1.0, (dist.cdf(b) - dist.cdf(a)) / mass))


def _num(x: Any) -> str:
    """A parameter as the prompt states it: :func:`fmt`'s short form when it is exact, else more digits."""
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_num(v) for v in x) + "]"
    s = fmt(x)
    try:
        exact = float(s) == float(x)
    except ValueError:  # a fraction such as 1/3, which fmt writes only when it is exact
        exact = True
    return s if exact else f"{float(x):.12g}"


def _show(x: float, integer: bool) -> float:
    """The value as the prompt shows it (rounded), as a float."""
    if integer:
        return float(int(round(x)))
    return float(round(float(x), DECIMALS))


def _text(x: float, integer: bool) -> str:
    if integer:
        return str(int(round(x)))
    s = f"{x:.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _quantile_value(family: str, params: Mapping, q: float) -> float:
    return _show(float(_dist(family, params).ppf(q)), _is_discrete(family))


def _interval(family: str, params: Mapping, p: float) -> tuple[float, float]:
    """The displayed central interval holding probability ``p`` of the restricted distribution."""
    span = RANGE_HIGH - RANGE_LOW
    lo_q = RANGE_LOW + span * (1.0 - p) / 2.0
    hi_q = RANGE_LOW + span * (1.0 + p) / 2.0
    dist = _dist(family, params)
    disc = _is_discrete(family)
    return _show(float(dist.ppf(lo_q)), disc), _show(float(dist.ppf(hi_q)), disc)


# ------------------------------------------------------------------------------------------------ descriptions

def describe(family: str, params: Mapping, convention: str = "rate") -> str:
    """Our description block of a distribution, stating every parameter convention."""
    p = dict(params)
    if family == "normal":
        return f"Normal distribution with mean {_num(p['loc'])} and standard deviation {_num(p['scale'])}."
    if family == "log_normal":
        return (f"Log-normal distribution: the natural logarithm of a value is normally distributed with mean "
                f"{_num(p['mean'])} and standard deviation {_num(p['sigma'])} (so the median value is "
                f"exp({_num(p['mean'])})).")
    if family == "skew_normal":
        return (f"Skew-normal distribution (Azzalini's form) with location {_num(p['loc'])}, scale "
                f"{_num(p['scale'])} and shape (skewness) parameter {_num(p['a'])}; a negative shape skews it to "
                f"the left, and shape 0 gives the normal distribution with mean = location and standard deviation = scale.")
    if family == "exponential":
        if convention == "rate":
            return (f"Exponential distribution with rate lambda = {_num(1.0 / p['scale'])} events per unit of "
                    f"time (a rate, not a scale: the mean value is 1/lambda); values are >= 0.")
        return (f"Exponential distribution with scale {_num(p['scale'])} (a scale, not a rate: the scale is the "
                f"mean value, and the rate is 1/scale); values are >= 0.")
    if family == "power_law":
        return (f"Continuous power-law distribution with exponent alpha = {_num(p['alpha'])} and minimum value "
                f"xmin = {_num(p['xmin'])}: the density is proportional to x^(-alpha) for x >= xmin (alpha is the "
                f"exponent of the density, not of the tail), and no value is below xmin.")
    if family == "uniform":
        return f"Continuous uniform distribution on the interval from {_num(p['low'])} to {_num(p['high'])}."
    if family == "gamma":
        return (f"Gamma distribution with shape {_num(p['shape'])} and scale {_num(p['scale'])} (scale, not rate: "
                f"the mean is shape * scale = {_num(p['shape'] * p['scale'])}).")
    if family == "gumbel":
        return (f"Gumbel distribution of maxima (right-skewed) with location {_num(p['loc'])} (its mode) and scale "
                f"{_num(p['scale'])}.")
    if family == "poisson":
        return f"Poisson distribution with mean (rate) lambda = {_num(p['lam'])} events per interval; values 0, 1, 2, ..."
    if family == "geometric":
        return (f"Geometric distribution: the number of independent trials up to and including the first success, "
                f"with success probability {_num(p['p'])} per trial; values 1, 2, 3, ...")
    if family == "binomial":
        return (f"Binomial distribution: the number of successes in {_num(p['n'])} independent trials, each a "
                f"success with probability {_num(p['p'])}; values 0 to {_num(p['n'])}.")
    if family == "multinomial":
        probs = ", ".join(f"outcome {i + 1} with probability {_num(q)}" for i, q in enumerate(p["pvals"]))
        return (f"Multinomial distribution: {_num(p['n'])} independent trials, each giving {probs}. The value is "
                f"the number of trials that give outcome {p['component'] + 1}.")
    raise ValueError(f"odds: no description for family {family!r}")


def _moments_text(family_title: str, mean: float, sd: float) -> str:
    return (f"{family_title} distribution with mean {_text(mean, False)} and standard deviation "
            f"{_text(sd, False)}.")


_TITLES = {"normal": "Normal", "log_normal": "Log-normal", "gumbel": "Gumbel"}


# ------------------------------------------------------------------------------------------------ prompts

_PCT_TASK = ("Estimate the percentile of a value within a probability distribution: the percentage (0 to 100) of "
             "the distribution's probability that lies below the value.")
_PCT_DISCRETE = (" For a discrete distribution, count half of the probability of the value itself as lying below it "
                 "(the mid-rank percentile).")
_PRB_TASK = ("Estimate a probability within a probability distribution. Consider only the values from the "
             "distribution's 1st percentile up to its 99th percentile (both included), and give the probability, "
             "between 0 and 1, that a value from that restricted range lies between two given numbers (both "
             "included).")
_SMP_TASK = "Draw one value at random from a probability distribution."
#: How every odds prompt begins (the offline models check it before indexing the bank).
PROMPT_OPENINGS = (_PCT_TASK, _PRB_TASK, _SMP_TASK)
_NO_TOOLS = "Do not write code or use any tools; answer from your own reasoning."
_PCT_ANSWER = "Answer with a single number from 0 to 100 inside curly braces, in the form {number}, and nothing else."
_PRB_ANSWER = "Answer with a single number from 0 to 1 inside curly braces, in the form {number}, and nothing else."


def _pct_question(x_text: str) -> str:
    return f"What is the percentile of the value {x_text} in this distribution?"


def _prb_question(lo_text: str, hi_text: str) -> str:
    return (f"Within the 1st-to-99th-percentile range, what is the probability that a value lies between "
            f"{lo_text} and {hi_text}?")


def _examples_block(shots: list[dict]) -> str:
    if not shots:
        return ""
    parts = ["Worked examples:"]
    for i, s in enumerate(shots, 1):
        parts.append(f"Example {i}\nDistribution: {s['description']}\n"
                     + (f"Question: {s['question']}\n" if s.get("question") else "")
                     + f"Answer: {{{s['answer_text']}}}")
    return "\n\n".join(parts) + "\n\n"


def _assemble(task_text: str, shots: list[dict], description: str, question: str | None, answer: str | None,
              context: str | None = None) -> str:
    head = task_text + (f"\n\nBackground: {context}" if context else "")
    body = _examples_block(shots) + f"Distribution: {description}"
    if question:
        body += f"\nQuestion: {question}"
    tail = f"\n\n{_NO_TOOLS}" + (f" {answer}" if answer else "")
    return f"{head}\n\n{body}{tail}"


# ------------------------------------------------------------------------------------------------ shots

@lru_cache(maxsize=None)
def family_variants(family: str) -> tuple[tuple[dict, str], ...]:
    """The within-family example distributions: ``N_FAMILY_VARIANTS`` parameter sets drawn once from the paper's
    ranges (a fixed seed per family; reals rounded to 3 decimals, integer ranges kept integer), each with the
    exponential convention used to state it."""
    seed = int.from_bytes(family.encode(), "little") % (2 ** 32)
    rng = np.random.default_rng([4, seed])
    out = []
    questions = [_key(family, D.validate(family, p)) for p in PARAMETERISATIONS[family]]
    while len(out) < N_FAMILY_VARIANTS:
        raw = {}
        for name, (lo, hi) in _FAMILY_RANGES[family].items():
            v = rng.uniform(lo, hi)
            raw[name] = int(v) if isinstance(lo, int) and isinstance(hi, int) else round(float(v), 3)
        conv = "rate"
        if family == "exponential":  # the paper draws a rate; we keep 5 decimals of it (its range is 0.005-0.02)
            raw = {"scale": 1.0 / round(float(rng.uniform(1 / 200, 1 / 50)), 5)}
        if family == "multinomial":
            while True:  # the paper keeps every probability >= 0.1, rounded to 3 decimals
                probs = rng.dirichlet(np.ones(3))
                if np.all(probs >= 0.1):
                    break
            probs = np.round(probs, 3)
            probs[np.argmax(probs)] += 1.0 - probs.sum()
            raw["pvals"] = [round(float(q), 3) for q in probs]
            raw["component"] = int(rng.integers(3))
        params = D.validate(family, raw)
        if _key(family, params) in questions:
            continue
        out.append((params, conv))
    return tuple(out)


# A shot answer keeps at least this distance from every test answer of the question's distribution, more than
# the rounding of the shown shot answer (one decimal for percentiles, three for probabilities).
PERCENTILE_MARGIN = 0.5
PROBABILITY_MARGIN = 0.005
_MAX_NUDGES = 200


def _clear(answer: float, tests: tuple[float, ...], margin: float) -> bool:
    return all(abs(answer - t) >= margin for t in tests)


def _percentile_shot(family: str, params: Mapping, conv: str, q: int, taken: frozenset,
                     tests: tuple[float, ...]) -> dict:
    """A percentile example at shot percentile ``q``. A discrete value that a test question uses (``taken``), or
    whose answer falls within :data:`PERCENTILE_MARGIN` of a test answer, moves to the next value up; a
    continuous one moves up by 0.1 percentile."""
    disc = _is_discrete(family)
    qq = q / 100.0
    x = _quantile_value(family, params, qq)
    answer = percentile_of(family, params, x)
    for _ in range(_MAX_NUDGES):
        if x not in taken and _clear(answer, tests, PERCENTILE_MARGIN):
            break
        if disc:
            x += 1.0
        else:
            qq += 0.001
            x = _quantile_value(family, params, qq)
        answer = percentile_of(family, params, x)
    else:  # pragma: no cover - would be a bank construction bug
        raise RuntimeError(f"odds: no clear percentile shot near {q} for {family} {dict(params)}")
    return {"family": family, "params": dict(params), "description": describe(family, params, conv),
            "value": x, "question": _pct_question(_text(x, disc)), "answer": answer,
            "answer_text": f"{answer:.1f}", "target": q}


def _probability_shot(family: str, params: Mapping, conv: str, p: float, taken: frozenset,
                      tests: tuple[float, ...]) -> dict:
    """A probability example at shot probability ``p``; an interval that a test uses, or whose answer falls
    within :data:`PROBABILITY_MARGIN` of a test answer, widens at the top (one value for discrete families,
    0.1 percentile for continuous ones)."""
    disc = _is_discrete(family)
    lo, hi = _interval(family, params, p)
    answer = probability_between(family, params, lo, hi)
    r_hi = _restricted_range(family, params)[1]
    hi_q = float(_dist(family, params).cdf(hi))
    for _ in range(_MAX_NUDGES):
        if (lo, hi) not in taken and _clear(answer, tests, PROBABILITY_MARGIN):
            break
        if disc:
            hi += 1.0
        else:
            hi_q += 0.001
            hi = _show(float(_dist(family, params).ppf(hi_q)), False)
        if hi > r_hi and not disc:
            raise RuntimeError(f"odds: no clear probability shot near {p} for {family}")  # pragma: no cover
        answer = probability_between(family, params, lo, hi)
    else:  # pragma: no cover - would be a bank construction bug
        raise RuntimeError(f"odds: no clear probability shot near {p} for {family} {dict(params)}")
    text = "1" if answer >= 1 else f"{answer:.3f}"
    return {"family": family, "params": dict(params), "description": describe(family, params, conv),
            "lo": lo, "hi": hi, "question": _prb_question(_text(lo, disc), _text(hi, disc)), "answer": answer,
            "answer_text": text, "target": p}


@lru_cache(maxsize=None)
def _family_shot(task: str, family: str, index: int, q: int, tests: tuple[float, ...]) -> dict:
    """Shot ``index`` of a within-family prompt: variant ``index`` of the family at shot percentile ``q``, kept
    clear of the question distribution's test answers ``tests``."""
    params, conv = family_variants(family)[index]
    if task == "percentile":
        return _percentile_shot(family, params, conv, q, frozenset(), tests)
    return _probability_shot(family, params, conv, q / 100.0, frozenset(), tests)


def _sampling_shot(family: str, params: Mapping, conv: str, rng: np.random.Generator) -> dict:
    disc = _is_discrete(family)
    x = _show(float(D.get_family(family).draw(rng, D.validate(family, params), 1)[0]), disc)
    return {"family": family, "params": dict(params), "description": describe(family, params, conv),
            "value": x, "answer": x, "answer_text": _text(x, disc)}


# ------------------------------------------------------------------------------------------------ building items

def _shot_spec(k: int, shot_type: str | None) -> str:
    return "s0" if k == 0 else f"s{k}{shot_type[0]}"


def _shot_settings() -> list[tuple[int, str | None]]:
    return [(0, None)] + [(k, t) for k in SHOT_COUNTS if k for t in SHOT_TYPES]


def _point_mass(value: float):
    def sampler(rng: np.random.Generator, size: int, _v=float(value)) -> np.ndarray:
        return np.full(int(size), _v)

    return sampler


def _family_sampler(family: str, params: Mapping):
    fam = D.get_family(family)
    p = D.validate(family, params)

    def sampler(rng: np.random.Generator, size: int, _fam=fam, _p=p) -> np.ndarray:
        return _fam.draw(rng, _p, size)

    return sampler


@dataclass(frozen=True)
class _Spec:
    family: str
    params: dict
    convention: str
    ptag: str


@lru_cache(maxsize=1)
def _idealized_specs() -> tuple[_Spec, ...]:
    out = []
    for fam in FAMILIES:
        for i, raw in enumerate(PARAMETERISATIONS[fam]):
            conv = EXPONENTIAL_CONVENTION[i] if fam == "exponential" else "none"
            out.append(_Spec(fam, D.validate(fam, raw), conv, f"p{i}"))
    return tuple(out)


def _base_meta(task: str, spec: _Spec, k: int, shot_type: str | None, context: str = "none") -> dict:
    return {"task": task, "family": spec.family, "parameterisation": spec.ptag, "convention": spec.convention,
            "shots": k, "shot_type": shot_type or "none", "context": context}




def _percentile_items(spec: _Spec) -> list[Problem]:
    fam, params, disc = spec.family, spec.params, _is_discrete(spec.family)
    values = {q: _quantile_value(fam, params, q / 100.0) for q in TEST_PERCENTILES}
    taken = set(values.values())
    variants = family_variants(fam)
    items = []
    answers = {q: percentile_of(fam, params, x) for q, x in values.items()}
    tests = tuple(answers.values())
    own = {q: _percentile_shot(fam, params, spec.convention, q, frozenset(taken), tests)
           for q in SHOT_PERCENTILE_POOL}
    for k, shot_type in _shot_settings():
        if k == 0:
            shots: list[dict] = []
        elif shot_type == "distribution":
            shots = [own[q] for q in SHOT_PERCENTILES[k]]
        else:
            shots = [_family_shot("percentile", fam, i, q, tests) for i, q in enumerate(SHOT_PERCENTILES[k])]
        for q in TEST_PERCENTILES:
            x = values[q]
            answer = answers[q]
            task_text = _PCT_TASK + (_PCT_DISCRETE if disc else "")
            prompt = _assemble(task_text, shots, describe(fam, params, spec.convention), _pct_question(_text(x, disc)),
                               _PCT_ANSWER)
            pid = f"odds-pct-{fam}-{spec.ptag}-q{q}-{_shot_spec(k, shot_type)}"
            meta = _base_meta("percentile", spec, k, shot_type)
            meta.update(target=q, value=x, answer=answer, collapse_answer=50.0, shot_answers=[s["answer"] for s in shots],
                        shot_values=[s["value"] for s in shots],
                        baseline_answer=nearest_shot_answer(x, [s["value"] for s in shots], [s["answer"] for s in shots]))
            items.append(Problem(id=pid, bank=BANK, category="percentile", task_type="percentile", family=fam,
                                 params=params, regime=spec.ptag, modality="text", support="continuous",
                                 answer_format="number", prompt=prompt, sampler=_point_mass(answer),
                                 subcategory="none", low=0.0, high=100.0, metadata=meta, append_instruction=False))
    return items


def _probability_items(spec: _Spec) -> list[Problem]:
    fam, params, disc = spec.family, spec.params, _is_discrete(spec.family)
    intervals = {p: _interval(fam, params, p) for p in TEST_PROBABILITIES}
    taken = set(intervals.values())
    variants = family_variants(fam)
    items = []
    answers = {p: probability_between(fam, params, *intervals[p]) for p in TEST_PROBABILITIES}
    tests = tuple(answers.values())
    own = {q: _probability_shot(fam, params, spec.convention, q / 100.0, frozenset(taken), tests)
           for q in SHOT_PERCENTILE_POOL}
    for k, shot_type in _shot_settings():
        if k == 0:
            shots: list[dict] = []
        elif shot_type == "distribution":
            shots = [own[q] for q in SHOT_PERCENTILES[k]]
        else:
            shots = [_family_shot("probability", fam, i, q, tests) for i, q in enumerate(SHOT_PERCENTILES[k])]
        for p in TEST_PROBABILITIES:
            lo, hi = intervals[p]
            answer = answers[p]
            prompt = _assemble(_PRB_TASK, shots, describe(fam, params, spec.convention),
                               _prb_question(_text(lo, disc), _text(hi, disc)), _PRB_ANSWER)
            pid = f"odds-prb-{fam}-{spec.ptag}-p{p:g}-{_shot_spec(k, shot_type)}"
            meta = _base_meta("probability", spec, k, shot_type)
            meta.update(target=p, lo=lo, hi=hi, answer=answer, collapse_answer=0.5,
                        shot_answers=[s["answer"] for s in shots],
                        baseline_answer=nearest_shot_answer((lo, hi), [(s["lo"], s["hi"]) for s in shots],
                                                        [s["answer"] for s in shots]))
            items.append(Problem(id=pid, bank=BANK, category="probability", task_type="probability", family=fam,
                                 params=params, regime=spec.ptag, modality="text", support="continuous",
                                 answer_format="number", prompt=prompt, sampler=_point_mass(answer),
                                 subcategory="none", low=0.0, high=1.0, metadata=meta, append_instruction=False))
    return items


def _sampling_items(spec: _Spec) -> list[Problem]:
    from .base import seed_sequence

    fam, params = spec.family, spec.params
    support = D.support_kind(fam, params)
    low, high = D.support_bounds(fam, params)
    variants = family_variants(fam)
    items = []
    for k, shot_type in _shot_settings():
        pid = f"odds-smp-{fam}-{spec.ptag}-{_shot_spec(k, shot_type)}"
        rng = np.random.default_rng(seed_sequence(pid + "/shots", 0))
        if k == 0:
            shots: list[dict] = []
        elif shot_type == "distribution":
            shots = [_sampling_shot(fam, params, spec.convention, rng) for _ in range(k)]
        else:
            shots = [_sampling_shot(fam, vp, vconv, rng) for vp, vconv in variants[:k]]
        prompt = _assemble(_SMP_TASK, shots, describe(fam, params, spec.convention), None, None)
        meta = _base_meta("sampling", spec, k, shot_type)
        meta.update(shot_values=[s["value"] for s in shots])
        items.append(Problem(id=pid, bank=BANK, category="sampling", task_type="sampling", family=fam,
                             params=params, regime=spec.ptag, modality="text", support=support,
                             answer_format="integer" if support == "discrete" else "number", prompt=prompt,
                             sampler=_family_sampler(fam, params), subcategory="none", low=low, high=high,
                             metadata=meta))
    return items


def _real_world_items() -> list[Problem]:
    items = []
    for rw in REAL_WORLD:
        params = D.validate(rw.family, rw.params)
        spec = _Spec(rw.family, params, "none", rw.name)
        mean, var = D.moments(rw.family, params)
        sd = math.sqrt(var)
        if rw.stated_as == "moments":
            true_desc = _moments_text(_TITLES[rw.family], mean, sd)
        else:
            true_desc = describe(rw.family, params)
        # the Normal approximation of the paper's Table 2, worded as one (for a normal truth it is exact, and the
        # wording keeps its prompt distinct from the context framing's)
        normal_desc = "Approximately a " + _moments_text("Normal", mean, sd)
        integer = rw.integer_values
        values = {q: _show(float(_dist(rw.family, params).ppf(q / 100.0)), integer) for q in TEST_PERCENTILES}
        taken = set(values.values())
        settings = [("idealized", 0), ("context", 0), ("normal", 0), ("context", 3)]
        for framing, k in settings:
            context = {"idealized": f"{rw.domain}_idealized", "context": rw.domain,
                       "normal": f"{rw.domain}_normal"}[framing]
            description = normal_desc if framing == "normal" else true_desc
            background = None if framing == "idealized" else rw.context
            shots = []
            for q in (SHOT_PERCENTILES[k] if k else ()):
                x = _show(float(_dist(rw.family, params).ppf(q / 100.0)), integer)
                ans = percentile_of(rw.family, params, x)
                question = (_pct_question(_text(x, integer)) if framing == "idealized"
                            else rw.question.format(x=_text(x, integer)))
                shots.append({"description": description, "question": question, "value": x, "answer": ans,
                              "answer_text": f"{ans:.1f}"})
            for q in TEST_PERCENTILES:
                x = values[q]
                question = (_pct_question(_text(x, integer)) if framing == "idealized"
                            else rw.question.format(x=_text(x, integer)))
                answer = percentile_of(rw.family, params, x)
                prompt = _assemble(_PCT_TASK, shots, description, question, _PCT_ANSWER, context=background)
                pid = f"odds-pct-rw-{rw.name}-{framing}-q{q}-{_shot_spec(k, 'distribution' if k else None)}"
                meta = _base_meta("percentile", spec, k, "distribution" if k else None, context)
                meta.update(target=q, value=x, answer=answer, collapse_answer=50.0, real_world=rw.name,
                            framing=framing, shot_answers=[s["answer"] for s in shots],
                            shot_values=[s["value"] for s in shots],
                            baseline_answer=nearest_shot_answer(x, [s["value"] for s in shots], [s["answer"] for s in shots]))
                items.append(Problem(id=pid, bank=BANK, category="percentile", task_type="percentile",
                                     family=rw.family, params=params, regime=rw.name, modality="text",
                                     support="continuous", answer_format="number", prompt=prompt,
                                     sampler=_point_mass(answer), subcategory=context, low=0.0, high=100.0,
                                     metadata=meta, append_instruction=False))
    return items


@lru_cache(maxsize=None)
def _spec_items(index: int) -> tuple[Problem, ...]:
    spec = _idealized_specs()[index]
    return tuple(_percentile_items(spec) + _probability_items(spec) + _sampling_items(spec))


@lru_cache(maxsize=1)
def _real_world() -> tuple[Problem, ...]:
    return tuple(_real_world_items())


@lru_cache(maxsize=1)
def _full() -> tuple[Problem, ...]:
    items: list[Problem] = []
    for i in range(len(_idealized_specs())):
        items.extend(_spec_items(i))
    items.extend(_real_world())
    ids = [p.id for p in items]
    if len(set(ids)) != len(ids):  # pragma: no cover - a construction bug, caught by the tests
        raise RuntimeError("odds bank: duplicate ids")
    return tuple(items)


@lru_cache(maxsize=1)
def _subset() -> tuple[Problem, ...]:
    """Every family x task x shots setting once on the paper's parameterisation (p0), the target rotating with the
    setting so all targets appear; three targets of each real-world distribution and framing."""
    keep = []
    settings = _shot_settings()
    pool = [p for i, spec in enumerate(_idealized_specs()) if spec.ptag == "p0" for p in _spec_items(i)]
    for p in pool + list(_real_world()):
        m = p.metadata
        if m["context"] != "none":
            idx = TEST_PERCENTILES.index(m["target"])
            if idx % 4 == 1:  # targets 10, 50, 90
                keep.append(p)
            continue
        if m["parameterisation"] != "p0":
            continue
        if m["task"] == "sampling":
            keep.append(p)
            continue
        s = settings.index((m["shots"], None if m["shot_type"] == "none" else m["shot_type"]))
        targets = TEST_PERCENTILES if m["task"] == "percentile" else TEST_PROBABILITIES
        f = FAMILIES.index(p.family)
        if targets[(s + f) % len(targets)] == m["target"]:
            keep.append(p)
    return tuple(keep)


def odds_problems(size: str | None = None) -> tuple[Problem, ...]:
    """The bank: ``size`` ``"subset"`` (default) or ``"full"``."""
    if size in (None, "subset"):
        return _subset()
    if size == "full":
        return _full()
    raise ValueError(f"odds: unknown edition {size!r}; expected subset or full")


def odds_items(size: str | None = None, *, task: str | None = None, shots: Any = None, shot_type: str | None = None,
               contexts: Any = None, families: Any = None) -> list[Problem]:
    """Items of an edition filtered by task, shot counts, shot type (``distribution``/``family``; 0-shot items are
    kept whatever the type), contexts and families. Unknown names raise a one-line ValueError."""
    if task is not None and task not in TASKS:
        raise ValueError(f"odds: unknown task {task!r}; expected one of {', '.join(TASKS)}")
    if shot_type is not None and shot_type not in SHOT_TYPES:
        raise ValueError(f"odds: unknown shot_type {shot_type!r}; expected one of {', '.join(SHOT_TYPES)}")
    shot_set = None if shots is None else {int(k) for k in shots}
    if shot_set and not shot_set <= set(SHOT_COUNTS):
        raise ValueError(f"odds: shots must be among {SHOT_COUNTS}, got {sorted(shot_set)}")
    ctx = None if contexts is None else set(contexts)
    if ctx and not ctx <= set(CONTEXTS):
        raise ValueError(f"odds: unknown context {sorted(ctx - set(CONTEXTS))[0]!r}; expected {', '.join(CONTEXTS)}")
    fams = None if families is None else set(families)
    if fams and not fams <= set(FAMILIES):
        raise ValueError(f"odds: unknown family {sorted(fams - set(FAMILIES))[0]!r}; expected {', '.join(FAMILIES)}")
    out = []
    for p in odds_problems(size):
        m = p.metadata
        if task and m["task"] != task:
            continue
        if shot_set is not None and m["shots"] not in shot_set:
            continue
        if shot_type and m["shots"] and m["shot_type"] != shot_type:
            continue
        if ctx is not None and m["context"] not in ctx:
            continue
        if fams is not None and p.family not in fams:
            continue
        out.append(p)
    return out


@lru_cache(maxsize=2)
def _by_id(edition: str) -> dict[str, Problem]:
    return {p.id: p for p in odds_problems(edition)}


def odds_item(item_id: str) -> Problem:
    """The item with this id (the subset is searched first; its items are the full edition's objects)."""
    for edition in ("subset", "full"):
        if item_id in _by_id(edition):
            return _by_id(edition)[item_id]
    raise KeyError(f"unknown odds item id {item_id!r}")


def is_odds_problem(problem: Any) -> bool:
    return getattr(problem, "bank", None) == BANK
