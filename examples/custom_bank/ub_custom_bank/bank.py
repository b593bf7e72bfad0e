"""The ``custom_demo`` bank: three sampled problems, one of them on a distribution family this package adds (Zipf).

The package's entry points (``pyproject.toml``) register :data:`BANK` under ``unpredictabench.banks`` and
:data:`ZIPF` under ``unpredictabench.families``; nothing here registers anything on import.
"""

from __future__ import annotations

import math

from scipy import stats

from ub_core import distributions as D
from ub_core.problems import problem_bank, scalar_problem

NAME = "custom_demo"
#: Bump whenever a problem changes: it keys the ground-truth cache and is the runs' task version.
VERSION = "1"


def _check_zipf(params):
    unknown = set(params) - {"a"}
    if unknown:
        raise D.ParameterError(f"zipf: unknown parameter(s) {sorted(unknown)}; expected ['a']")
    a = params.get("a")
    if isinstance(a, bool) or not isinstance(a, (int, float)) or not a > 1 or not math.isfinite(a):
        raise D.ParameterError(f"zipf: a must be a finite number > 1, got {a!r}")
    return {"a": float(a)}


#: Zipf (zeta) distribution on 1, 2, 3, ...: P(k) = k^-a / zeta(a), a > 1 (numpy's ``Generator.zipf``).
ZIPF = D.Family(
    name="zipf", title="Zipf (zeta)", group="discrete_infinite", support="discrete",
    param_doc="a > 1 (exponent)", check=_check_zipf,
    draw=lambda rng, p, n: rng.zipf(p["a"], n).astype(float),
    text=lambda p: f"a Zipf (zeta) distribution on the whole numbers 1, 2, 3, ... with exponent {D.fmt(p['a'])}, "
                   f"where the probability of k is proportional to k to the power -{D.fmt(p['a'])}",
    scipy_dist=lambda p: stats.zipf(p["a"]),
    bounds=lambda p: (1.0, math.inf),
)


def _problem(pid: str, family: str, params: dict, prompt: str, category: str):
    return scalar_problem(pid, family, params, prompt, bank=NAME, bank_version=VERSION, category=category)


def problems() -> list:
    """The bank's problems: our own prompts, two categories."""
    return [
        _problem("cust-zipf", "zipf", {"a": 2.5},
                 "Think of the number of times a randomly chosen word appears in a long novel, modelled as a Zipf "
                 "distribution with exponent 2.5 on 1, 2, 3, .... Report one such count, drawn at random.",
                 "word_counts"),
        _problem("cust-normal", "normal", {"loc": 170.0, "scale": 8.0},
                 "Pick one adult at random from a population whose heights follow a normal distribution with mean "
                 "170 cm and standard deviation 8 cm. What is their height in cm?", "measurements"),
        _problem("cust-weekday", "categorical",
                 {"labels": ["Monday", "Friday", "Sunday"], "pvals": [0.5, 0.3, 0.2]},
                 "A delivery arrives on Monday half of the time, on Friday 30% of the time and on Sunday otherwise. "
                 "Name the day of one delivery, drawn at random.", "measurements"),
    ]


BANK = problem_bank(NAME, VERSION, problems, id_prefixes=("cust-",))
