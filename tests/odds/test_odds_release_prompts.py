"""Every parameter that the odds release's prompts state, against our prompts.

``tests/data/odds_release_prompts.json`` holds the name-value pairs of the distribution block of the release's
zero-shot prompts (GPT-4 Turbo idealized files, three tasks, 14 distributions; Gemini Ultra real-world files, three
framings, 12 distributions) and the asked values of its percentile files, extracted by
``tools/odds_release_prompts.py`` from ``yahskapar/LLMs-and-Probabilistic-Reasoning`` (commit in the file). Our item of
the same distribution, framing and task must have the same parameters, and its prompt must state each of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ub_core.problems.odds import REAL_WORLD, TEST_PERCENTILES, odds_items

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "odds_release_prompts.json").read_text())

# the release's parameter names -> ours (the exponential's rate is our 1 / scale)
NAMES = {"normal": {"Mean": "loc", "Standard Deviation": "scale"},
         "log_normal": {"Log Mean (mu)": "mean", "Log Sigma (sigma)": "sigma"},
         "skew_normal": {"Location": "loc", "Scale": "scale", "Skew": "a"},
         "exponential": {"Rate": "rate"}, "power_law": {"Alpha": "alpha", "Xmin": "xmin"},
         "uniform": {"Min": "low", "Max": "high"}, "gamma": {"Shape": "shape", "Scale": "scale"},
         "gumbel": {"Location": "loc", "Scale": "scale"}, "poisson": {"Lambda": "lam"},
         "geometric": {"Probability of Success": "p"}, "binomial": {"Trials": "n", "Probability of Success": "p"},
         "multinomial": {"Trials": "n", "Probabilities": "pvals"}}


def _ours(params: dict, name: str):
    return 1.0 / params["scale"] if name == "rate" else params[name]


def _shown(v) -> list[str]:
    """How a number can be written in our prompts (3 decimals at most, trailing zeros dropped)."""
    if isinstance(v, list):  # every outcome's probability, in order
        return [", ".join(f"outcome {i} with probability {x:g}" for i, x in enumerate(v, 1))]
    return [f"{v:.3f}".rstrip("0").rstrip("."), f"{v:g}"]


def _check(family: str, stated: dict, params: dict, prompt: str) -> None:
    assert set(stated) == set(NAMES[family]), (family, stated)
    for release_name, value in stated.items():
        ours = _ours(params, NAMES[family][release_name])
        assert ours == pytest.approx(value, rel=1e-12), (family, release_name)
        assert any(text in prompt for text in _shown(value)), (family, release_name, value)


def test_the_file_covers_every_released_zero_shot_distribution():
    assert len(DATA["idealized"]) == 3 * 14 and len(DATA["real_world"]) == 3 * 12
    assert {r["name"] for r in DATA["real_world"]} == {rw.name for rw in REAL_WORLD}
    assert DATA["source"]["repository"] == "yahskapar/LLMs-and-Probabilistic-Reasoning"


@pytest.mark.parametrize("convention", ["paper", "release"])
def test_idealized_prompts_state_the_release_parameters(convention):
    items = {(p.metadata["task"], p.family, p.metadata["parameterisation"]): p
             for p in odds_items("full", shots=[0], contexts=["none"], convention=convention)}
    for rec in DATA["idealized"]:
        item = items[(rec["task"], rec["family"], rec["parameterisation"])]
        _check(rec["family"], rec["stated"], item.params if rec["task"] != "sampling" else
               {**item.params, **({"xmin": item.params["xmin"] + 0.5} if convention == "release" and
                                  rec["family"] == "power_law" else {})}, item.prompt)


def test_real_world_prompts_state_the_release_parameters_and_values():
    by_name = {rw.name: rw for rw in REAL_WORLD}
    contexts = [d if f == "context" else f"{d}_{f}" for d in ("health", "finance", "climate")
                for f in ("context", "idealized", "normal")]
    items = {(p.metadata["real_world"], p.metadata["framing"], p.metadata["target"]): p
             for p in odds_items("full", task="percentile", shots=[0], contexts=contexts)}
    for rec in DATA["real_world"]:
        rw, framing = by_name[rec["name"]], rec["framing"]
        mine = [items[(rw.name, framing, q)] for q in TEST_PERCENTILES]
        # the asked values are the data's, the same in the same order of targets
        assert [p.metadata["value"] for p in mine] == rec["values"]
        prompt = mine[5].prompt
        if framing == "normal":  # a Normal with the data's mean and sd
            _check("normal", rec["stated"], {"loc": rw.normal_mean, "scale": rw.normal_sd}, prompt)
        else:  # idealized and context: the fitted family and its parameters (the paper's context column)
            _check(rw.family, rec["stated"], mine[5].params, prompt)
