"""The data of the "What are the odds" bank (the odds paper): families, parameterisations, target and shot tables, the
real-world distributions with the numbers of the paper's public release, and the prompt wording.

Numbers only; how they become items (exact answers, shots, prompts, editions) is :mod:`ub_core.problems.odds`,
whose docstring says how we read the paper and which re-exports every public name here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TASKS = ("percentile", "probability", "sampling")
TASK_SHORT = {"percentile": "pct", "probability": "prb", "sampling": "smp"}
#: the names of the 12 idealised distributions (``ub_core.distributions`` family names)
DISTRIBUTIONS = ("normal", "log_normal", "skew_normal", "exponential", "power_law", "uniform", "gamma", "gumbel",
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

#: ``paper`` (default): what the odds paper states. ``release``: what its public code computes (see the module
#: docstring).
CONVENTIONS = ("paper", "release")
# The release's within-distribution shot percentiles (``generate_intermediate_percentiles_stats_examples``): its
# 7 and 9 shot sets differ from ours (the paper states only the 3-shot set, 35/55/75).
RELEASE_SHOT_PERCENTILES = {1: (55,), 3: (35, 55, 75), 5: (15, 35, 55, 75, 95), 7: (5, 15, 35, 45, 55, 75, 95),
                            9: (5, 15, 25, 35, 45, 55, 75, 85, 95)}
# The release's within-family shots take their answer from the variant's *test* percentiles (1, 10, ..., 99;
# ``generate_few_shot_percentile_examples`` draws one at random): we take them deterministically from the release's
# own test-percentile map (``generate_distribution_percentiles_stats_examples``), which includes 1, 50 and 99.
RELEASE_FAMILY_SHOT_PERCENTILES = {1: (50,), 3: (30, 50, 70), 5: (10, 30, 50, 70, 90),
                                   7: (1, 10, 30, 50, 70, 90, 99), 9: (1, 10, 20, 30, 50, 70, 80, 90, 99)}
# The release's probability shot sets (``generate_intermediate_probabilities_stats_examples``, 0.33 as released,
# and the within-family map of test probabilities).
RELEASE_SHOT_PROBABILITIES = {1: (0.55,), 3: (0.33, 0.55, 0.75), 5: (0.15, 0.35, 0.55, 0.75, 0.95),
                              7: (0.15, 0.25, 0.35, 0.55, 0.75, 0.85, 0.95),
                              9: (0.05, 0.15, 0.25, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95)}
RELEASE_FAMILY_SHOT_PROBABILITIES = {1: (0.5,), 3: (0.3, 0.5, 0.7), 5: (0.1, 0.3, 0.5, 0.7, 0.9),
                                     7: (0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9),
                                     9: (0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.8, 0.9, 1.0)}
# The release samples the power law with scale xmin - 0.5 (a discrete power law's continuous approximation) while
# the prompt states xmin.
RELEASE_POWER_LAW_SHIFT = 0.5

# The restricted range of the probability questions (the odds paper, appendix A.2: 1st to 99th percentile).
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
FAMILY_RANGES: dict[str, dict[str, tuple]] = {
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
            "health_idealized", "finance_idealized", "climate_idealized", "health_moments", "finance_moments",
            "climate_moments")


@dataclass(frozen=True)
class RealWorld:
    """One real-world distribution of the odds paper (sec. 4, appendix C) with the numbers its public release states:
    ``family``/``params`` are the fitted idealised distribution, which the "idealized" framing states alone and the
    "context" framing states after the real-world background (the release's ``distnameandstats`` outputs, whose
    prompts reproduce the paper's real-world-context column); ``stated_mean`` and ``stated_sd`` are the data's mean
    and sd, which our "moments" framing states with the family's name (the release's template
    ``templates/real_world_distributions/real_world.py`` does so too, but its released outputs do not use it);
    ``normal_mean``/``normal_sd`` are those of the Normal approximation (``real_world_normal_approx.py``);
    ``data_values`` are the data's values at the percentiles :data:`TEST_PERCENTILES` (the release's ground-truth
    tables in ``real_world_prompt_generator.py``)."""

    name: str
    domain: str
    family: str
    params: dict
    stated_mean: float
    stated_sd: float
    normal_mean: float
    normal_sd: float
    data_values: tuple
    context: str            # who and what the data are (our wording)
    question: str           # the question, with {x} for the value
    unit: str


_GAMMA_E = 0.5772156649015329


def _gumbel_from_moments(mean: float, sd: float) -> dict:
    """The Gumbel with this mean and sd (moment matching). Not the paper's: its income and rent Gumbels are fitted
    (see :data:`REAL_WORLD`); kept for comparisons."""
    scale = sd * math.sqrt(6.0) / math.pi
    return {"loc": mean - _GAMMA_E * scale, "scale": scale}


_FITBIT = ("The data are per-user daily averages of adults aged 18 to 65 in the United States who wear a Fitbit "
           "device and are active every day (calendar year 2023); the sample is balanced by age and by gender.")
_ACS = ("The data are from the Census Bureau's American Community Survey Public Use Microdata Sample (ACS PUMS) "
        "for the year 2018, covering households in the United States.")
_NOAA = ("The data are measurements recorded in 2018 at weather stations across the continental United States, "
         "from NOAA's Global Historical Climatology Network daily (GHCNd), with readings flagged by its quality "
         "checks removed.")

REAL_WORLD: tuple[RealWorld, ...] = (
    # health (Fitbit): (A) step count, (B) resting heart rate, (C) sleep duration, (D) exercise minutes
    RealWorld("step_count", "health", "normal", {"loc": 8366.971, "scale": 3291.940}, 8366.971, 3291.940,
              8366.971, 3291.940,
              (2174.61, 4433.794, 5558.104, 6445.293, 7244.214, 8028.321, 8845.736, 9791.713, 11000.567, 12792.197,
               17510.718), _FITBIT, "What is the percentile of an average of {x} steps per day among these users?",
              "steps"),
    RealWorld("resting_heart_rate", "health", "normal", {"loc": 67.882, "scale": 7.723}, 67.86, 7.72, 67.86, 7.72,
              (52.286, 57.838, 60.905, 63.324, 65.49, 67.552, 69.692, 71.971, 74.651, 78.33, 85.438), _FITBIT,
              "What is the percentile of an average resting heart rate of {x} beats per minute among these users?",
              "beats per minute"),
    RealWorld("sleep_minutes", "health", "skew_normal", {"a": -1.177, "loc": 427.930, "scale": 58.050}, 392.62,
              45.97, 392.62, 45.97,
              (280.833, 331.325, 354.023, 369.714, 382.807, 394.37, 405.83, 417.892, 431.841, 450.636, 493.97),
              _FITBIT, "What is the percentile of an average of {x} minutes of sleep per day among these users?",
              "minutes"),
    RealWorld("exercise_minutes", "health", "log_normal", {"mean": 3.543, "sigma": 0.677}, 43.20, 30.50, 43.20,
              30.50, (7.286, 13.788, 19.158, 24.212, 29.466, 35.226, 42.0, 50.431, 62.089, 82.821, 153.72), _FITBIT,
              "What is the percentile of an average of {x} exercise minutes per day among these users?", "minutes"),
    # finance (ACS PUMS 2018): (E) household income, (F) gross rent, (G) electricity cost, (H) water cost
    RealWorld("household_income", "finance", "gumbel", {"loc": 43788.542, "scale": 35382.156}, 66028.713,
              53616.018, 66028.713, 53616.018,
              (0.0, 14400.0, 24500.0, 33600.0, 42900.0, 52800.0, 64800.0, 79000.0, 99000.0, 132400.0, 267000.0),
              _ACS, "What is the percentile of an annual household income of ${x}?", "dollars"),
    RealWorld("monthly_rent", "finance", "gumbel", {"loc": 1053.066, "scale": 488.890}, 1347.261, 674.234,
              1347.261, 674.234, (331.0, 666.0, 813.0, 937.0, 1055.0, 1187.0, 1355.0, 1548.0, 1800.0, 2235.0, 3635.0),
              _ACS, "What is the percentile of a monthly gross rent of ${x}?", "dollars"),
    RealWorld("electricity_cost", "finance", "skew_normal", {"a": 7.105, "loc": 509.827, "scale": 1624.607},
              1792.453, 997.107, 1792.453, 997.107,
              (360.0, 720.0, 960.0, 1200.0, 1320.0, 1560.0, 1800.0, 2160.0, 2520.0, 3240.0, 4800.0), _ACS,
              "What is the percentile of an annual household electricity cost of ${x}?", "dollars"),
    RealWorld("water_cost", "finance", "exponential", {"scale": 1.0 / 0.00172}, 584.638, 520.797, 584.638, 520.797,
              (20.0, 50.0, 90.0, 180.0, 360.0, 480.0, 600.0, 780.0, 1000.0, 1200.0, 2400.0), _ACS,
              "What is the percentile of an annual household water cost of ${x}?", "dollars"),
    # climate (NOAA GHCNd 2018): (I) temperature, (J) precipitation, (K) wind speed, (L) humidity
    RealWorld("temperature", "climate", "normal", {"loc": 10.643, "scale": 12.628}, 10.643, 12.628, 10.643, 12.628,
              (-21.7, -6.4, -0.4, 3.8, 8.0, 11.8, 15.3, 18.9, 22.8, 26.8, 30.9), _NOAA,
              "What is the percentile of a daily average temperature of {x} degrees Celsius?", "degrees Celsius"),
    RealWorld("precipitation", "climate", "skew_normal", {"a": 13.395, "loc": 60.505, "scale": 858.484}, 754.201,
              505.754, 754.201, 505.754,
              (17.8, 178.47, 293.6, 402.2, 517.8, 647.5, 802.2, 975.6, 1216.46, 1526.86, 2025.849), _NOAA,
              "What is the percentile of an annual precipitation of {x} millimetres at a station?", "millimetres"),
    # the release's fitted log-normal of wind speed (median exp(1.558) = 4.75) does not match its own data (median
    # 3.0, mean 3.303); we state it as released (see the README's conventions table)
    RealWorld("wind_speed", "climate", "log_normal", {"mean": 1.558, "sigma": 0.340}, 3.303, 1.723, 3.303, 1.723,
              (0.5, 1.3, 1.8, 2.2, 2.6, 3.0, 3.5, 4.0, 4.7, 5.7, 8.2), _NOAA,
              "What is the percentile of a daily average wind speed of {x} metres per second?", "metres per second"),
    RealWorld("relative_humidity", "climate", "skew_normal", {"a": -4.939, "loc": 89.849, "scale": 27.019}, 68.599,
              16.688, 68.599, 16.688, (23.0, 45.0, 55.0, 62.0, 67.0, 71.0, 75.0, 79.0, 83.0, 88.0, 96.0), _NOAA,
              "What is the percentile of a daily average relative humidity of {x}%?", "percent"),
)
#: idealized: the fitted distribution alone; context: the background plus the fitted distribution (the paper's
#: real-world-context column); moments: the background plus the family's name and the data's mean and sd (ours);
#: normal: the background plus a Normal with the data's mean and sd (the paper's Normal approximation).
RW_FRAMINGS = ("idealized", "context", "moments", "normal")
# How the real-world "moments" framing names a family.
TITLES = {"normal": "Normal", "log_normal": "Log-normal", "gumbel": "Gumbel", "skew_normal": "Skew-normal",
          "exponential": "Exponential"}


# ------------------------------------------------------------------------------------------------ prompt wording

PCT_TASK = ("Estimate the percentile of a value within a probability distribution: the percentage (0 to 100) of "
            "the distribution's probability that lies below the value.")
PCT_DISCRETE = (" For a discrete distribution, count half of the probability of the value itself as lying below it "
                "(the mid-rank percentile).")
PRB_TASK = ("Estimate a probability within a probability distribution. Consider only the values from the "
            "distribution's 1st percentile up to its 99th percentile (both included), and give the probability, "
            "between 0 and 1, that a value from that restricted range lies between two given numbers (both "
            "included).")
SMP_TASK = "Draw one value at random from a probability distribution."
#: How every odds prompt begins (the offline models check it before indexing the bank).
PROMPT_OPENINGS = (PCT_TASK, PRB_TASK, SMP_TASK)
NO_TOOLS = "Do not write code or use any tools; answer from your own reasoning."
PCT_ANSWER = "Answer with a single number from 0 to 100 inside curly braces, in the form {number}, and nothing else."
PRB_ANSWER = "Answer with a single number from 0 to 1 inside curly braces, in the form {number}, and nothing else."
# The release convention asks for the answer inside <answer> tags, as the release's prompts do; this also keeps its
# prompts distinct from the paper convention's (the offline models find an item by its prompt).
PCT_ANSWER_TAGS = "Reply with only a number from 0 to 100, written between <answer> and </answer>."
PRB_ANSWER_TAGS = "Reply with only a number from 0 to 1, written between <answer> and </answer>."
SMP_RELEASE = "Give only the number you drew."
