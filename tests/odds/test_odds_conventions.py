"""What are the odds (the odds paper): the twelve real-world distributions (closed-form and data-derived checks), the
paper and release conventions (one test per documented difference), and the option checks of both adapters."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ub_core.metrics import odds_item_scores
from ub_core.oracle import find_problem, oracle_values, render_replies
from ub_core.problems.odds import (CONVENTIONS, REAL_WORLD, RELEASE_FAMILY_SHOT_PERCENTILES, RELEASE_SHOT_PERCENTILES,
                                   SHOT_PERCENTILE_POOL, TEST_PERCENTILES, odds_item, odds_items, odds_problems,
                                   percentile_of, probability_between)

# ------------------------------------------------------------------------------------------------ real world

# The fitted distributions of the release's idealized_real_world.py, built directly in scipy (independent of
# ub_core.distributions), and the data's mean and sd that real_world.py states.
_SCIPY = {
    "step_count": stats.norm(8366.971, 3291.940),
    "resting_heart_rate": stats.norm(67.882, 7.723),
    "sleep_minutes": stats.skewnorm(-1.177, 427.930, 58.050),
    "exercise_minutes": stats.lognorm(0.677, scale=math.exp(3.543)),
    "household_income": stats.gumbel_r(43788.542, 35382.156),
    "monthly_rent": stats.gumbel_r(1053.066, 488.890),
    "electricity_cost": stats.skewnorm(7.105, 509.827, 1624.607),
    "water_cost": stats.expon(scale=1 / 0.00172),
    "temperature": stats.norm(10.643, 12.628),
    "precipitation": stats.skewnorm(13.395, 60.505, 858.484),
    "wind_speed": stats.lognorm(0.340, scale=math.exp(1.558)),
    "relative_humidity": stats.skewnorm(-4.939, 89.849, 27.019),
}
_STATED = {"step_count": (8366.971, 3291.940), "resting_heart_rate": (67.86, 7.72), "sleep_minutes": (392.62, 45.97),
           "exercise_minutes": (43.20, 30.50), "household_income": (66028.713, 53616.018),
           "monthly_rent": (1347.261, 674.234), "electricity_cost": (1792.453, 997.107),
           "water_cost": (584.638, 520.797), "temperature": (10.643, 12.628), "precipitation": (754.201, 505.754),
           "wind_speed": (3.303, 1.723), "relative_humidity": (68.599, 16.688)}


def test_twelve_real_world_distributions_four_per_domain():
    assert len(REAL_WORLD) == 12 and {rw.name for rw in REAL_WORLD} == set(_SCIPY)
    domains = [rw.domain for rw in REAL_WORLD]
    assert {d: domains.count(d) for d in set(domains)} == {"health": 4, "finance": 4, "climate": 4}
    full = odds_items("full", contexts=["health", "finance", "climate", "health_normal", "finance_normal",
                                        "climate_normal", "health_idealized", "finance_idealized",
                                        "climate_idealized", "health_moments", "finance_moments", "climate_moments"])
    assert len(full) == 12 * 5 * 11  # 4 zero-shot framings + context with 3 shots, 11 targets each


@pytest.mark.parametrize("name", sorted(_SCIPY))
def test_real_world_closed_form_and_data_checks(name):
    rw = next(r for r in REAL_WORLD if r.name == name)
    ref = _SCIPY[name]
    items = {(p.metadata["framing"], p.metadata["target"], p.metadata["shots"]): p
             for p in odds_items("full", contexts=[rw.domain, f"{rw.domain}_normal", f"{rw.domain}_idealized",
                                                   f"{rw.domain}_moments"])
             if p.metadata["real_world"] == name}
    for q, v in zip(TEST_PERCENTILES, rw.data_values):
        for framing in ("idealized", "context", "moments", "normal"):
            item = items[(framing, q, 0)]
            # the question is the data's value at the q-th percentile and the answer is q (the odds paper, sec. 5.2)
            assert item.metadata["value"] == v and item.metadata["answer"] == q
        # closed form: the fitted distribution's percentile of that value, against scipy built independently
        assert items[("idealized", q, 0)].metadata["fitted_answer"] == pytest.approx(100 * ref.cdf(v), abs=1e-8)
    # our frozen family is the same distribution as scipy's: percentiles vs scipy's ppf
    from ub_core import distributions as D
    ours = D.frozen(rw.family, D.validate(rw.family, rw.params))
    for q in (0.01, 0.25, 0.5, 0.9, 0.99):
        assert float(ours.ppf(q)) == pytest.approx(float(ref.ppf(q)), rel=1e-9)
    # the framings state the release's numbers
    mean, sd = _STATED[name]
    assert f"mean {mean} and standard deviation {sd}" in items[("moments", 50, 0)].prompt
    # the context framing states the fitted distribution, as the idealized one does, after the background
    fitted = items[("idealized", 50, 0)].prompt.split("Distribution: ")[1].split("\n")[0]
    assert f"Distribution: {fitted}\n" in items[("context", 50, 0)].prompt
    assert "Background: " in items[("context", 50, 0)].prompt
    assert "Background: " not in items[("idealized", 50, 0)].prompt
    assert items[("normal", 50, 0)].prompt.count("Normal distribution with mean") == 1
    # data-derived: the released percentile values are increasing, and the fit matches the data except for the
    # released wind-speed log-normal (median exp(1.558) = 4.75 against the data's 3.0; README, conventions)
    assert np.all(np.diff(rw.data_values) > 0)
    fit_gap = np.mean(np.abs(100 * ref.cdf(rw.data_values) - np.array(TEST_PERCENTILES)))
    mean_gap = abs(ref.mean() - mean) / sd
    if name == "wind_speed":
        assert fit_gap > 20 and mean_gap > 0.9
    else:
        assert fit_gap < 4.0 and mean_gap < 0.1


def test_real_world_three_shots_are_interpolated_data_percentiles():
    item = odds_item("odds-pct-rw-temperature-context-q10-s3d")
    # 35th: halfway between the 30th (3.8) and 40th (8.0) data values; 55th: (11.8 + 15.3) / 2; 75th: (18.9 + 22.8) / 2
    assert item.metadata["shot_values"] == pytest.approx([5.9, 13.55, 20.85])
    assert item.metadata["shot_answers"] == [35.0, 55.0, 75.0]


# ------------------------------------------------------------------------------------------------ conventions

def test_convention_names_and_ids():
    assert CONVENTIONS == ("paper", "release")
    with pytest.raises(ValueError, match="convention"):
        odds_problems("subset", "code")
    rel = odds_problems("subset", "release")
    assert len(rel) == len(odds_problems("subset")) and all(p.id.endswith("-rel") for p in rel)
    assert odds_item(rel[0].id) is rel[0]


def test_difference_probability_restriction_applied_twice():
    """Paper: P(interval | 1st-99th percentile range), so a continuous central p-interval has probability p.
    Release: the range restricted again to its own 1st-99th percentiles, so p / 0.98 for p < 1 (0.102, ..., 0.918)."""
    for p in (0.1, 0.5, 0.9):
        paper = odds_item(f"odds-prb-normal-p0-p{p:g}-s0")
        release = odds_item(f"odds-prb-normal-p0-p{p:g}-s0-rel")
        assert (paper.metadata["lo"], paper.metadata["hi"]) == (release.metadata["lo"], release.metadata["hi"])
        lo, hi = paper.metadata["lo"], paper.metadata["hi"]
        z = stats.norm(100, 10)
        assert paper.metadata["answer"] == pytest.approx((z.cdf(hi) - z.cdf(lo)) / 0.98, abs=1e-9)
        assert paper.metadata["answer"] == pytest.approx(p, abs=1e-4)
        # release, by hand: conditioning on [Q(0.0198), Q(0.9802)], mass 0.9604
        assert release.metadata["answer"] == pytest.approx((z.cdf(hi) - z.cdf(lo)) / 0.9604, abs=1e-9)
        assert release.metadata["answer"] == pytest.approx(p / 0.98, abs=1e-4)
    assert odds_item("odds-prb-normal-p0-p1-s0-rel").metadata["answer"] == pytest.approx(1.0)
    # discrete: the doubly restricted range of a Poisson(70) by hand
    lam = {"lam": 70.0}
    d = stats.poisson(70)
    r_lo, r_hi = d.ppf(0.01), d.ppf(0.99)
    below, mass = d.cdf(r_lo - 1), d.cdf(r_hi) - d.cdf(r_lo - 1)
    a, b = d.ppf(below + 0.01 * mass), d.ppf(below + 0.99 * mass)
    assert probability_between("poisson", lam, 65, 75, "release") == pytest.approx(
        (d.cdf(75) - d.cdf(64)) / (d.cdf(b) - d.cdf(a - 1)), abs=1e-12)
    assert probability_between("poisson", lam, 65, 75) == pytest.approx((d.cdf(75) - d.cdf(64)) / mass, abs=1e-12)


def test_difference_discrete_interval_is_a_quantile_of_the_restricted_distribution():
    """The release reads a probability interval off the sample already restricted to its 1st-99th
    percentiles (``calculate_target_ranges``), so for a discrete family its ends are quantiles of the *restricted*
    distribution, Qr(u) = Q(P(X < Q(0.01)) + u P(Q(0.01) <= X <= Q(0.99))) at u = (1 -+ p) / 2. Geometric(0.05) at
    0.9: the release shows [1, 56] (its 0-shot GPT-4 Turbo prompts say "between 1.0 and 56.0"); the paper
    convention's Q(0.01 + 0.98 u) gives [2, 56]."""
    d = stats.geom(0.05)
    r_lo, r_hi = d.ppf(0.01), d.ppf(0.99)
    below, mass = d.cdf(r_lo - 1), d.cdf(r_hi) - d.cdf(r_lo - 1)
    for p, release_shows in ((0.9, (1.0, 56.0)), (0.2, (10.0, 18.0)), (0.4, (7.0, 24.0)), (1.0, (1.0, 90.0))):
        rel = odds_item(f"odds-prb-geometric-p0-p{p:g}-s0-rel").metadata
        assert (rel["lo"], rel["hi"]) == release_shows
        by_hand = (d.ppf(below + mass * (1 - p) / 2), d.ppf(below + mass * (1 + p) / 2)) if p < 1 else (r_lo, r_hi)
        assert (rel["lo"], rel["hi"]) == by_hand
        assert rel["answer"] == pytest.approx(probability_between("geometric", {"p": 0.05}, *release_shows, "release"))
    paper = odds_item("odds-prb-geometric-p0-p0.9-s0").metadata
    assert (paper["lo"], paper["hi"]) == (2.0, 56.0) == (d.ppf(0.01 + 0.98 * 0.05), d.ppf(0.01 + 0.98 * 0.95))
    # continuous families: the restricted quantile is Q(0.01 + 0.98 u), the same interval in both conventions
    for fam in ("normal", "gamma"):
        a, b = (odds_item(f"odds-prb-{fam}-p0-p0.5-s0{s}").metadata for s in ("", "-rel"))
        assert (a["lo"], a["hi"]) == (b["lo"], b["hi"])


def test_difference_power_law_scale_xmin_minus_half():
    """Paper: a power law with minimum xmin. Release: sampled with scale xmin - 0.5, while the prompt says xmin."""
    alpha, xmin = 1.8, 100.0
    paper = odds_item("odds-pct-power_law-p0-q10-s0")
    release = odds_item("odds-pct-power_law-p0-q10-s0-rel")
    assert paper.metadata["value"] == pytest.approx(xmin * 0.9 ** (-1 / (alpha - 1)), abs=1e-3)
    assert release.metadata["value"] == pytest.approx((xmin - 0.5) * 0.9 ** (-1 / (alpha - 1)), abs=1e-3)
    assert "xmin = 100" in release.prompt
    smp = odds_item("odds-smp-power_law-p0-s0-rel")
    truth = smp.truth(20_000, seed=1)
    assert truth.min() >= 99.5 and (truth < 100).sum() > 0  # P(X < 100) = 1 - (99.5/100)^0.8 = 0.4%
    assert odds_item("odds-smp-power_law-p0-s0").truth(20_000, seed=1).min() >= 100
    # the release's probability for the paper's interval: same distribution family, shifted scale
    lo, hi = paper.metadata["value"], 300.0
    assert probability_between("power_law", {"alpha": alpha, "xmin": 99.5}, lo, hi) != pytest.approx(
        probability_between("power_law", {"alpha": alpha, "xmin": xmin}, lo, hi), abs=1e-4)


def test_difference_shot_answers_at_test_percentiles():
    """Paper (sec. 5.1): shot answers avoid the test answers (5, 15, ..., 95). Release: within-family shots answer
    with a test percentile (1, 10, ..., 99: e.g. 1, 50, 99), and its 7/9-shot within-distribution sets differ."""
    fam_rel = odds_item("odds-pct-normal-p0-q10-s7f-rel").metadata["shot_answers"]
    assert fam_rel == [float(q) for q in RELEASE_FAMILY_SHOT_PERCENTILES[7]]
    assert {1.0, 50.0, 99.0} <= set(fam_rel) and set(fam_rel) <= set(map(float, TEST_PERCENTILES))
    fam_paper = odds_item("odds-pct-normal-p0-q10-s7f").metadata["shot_answers"]
    assert all(min(abs(s - t) for t in TEST_PERCENTILES) >= 0.5 for s in fam_paper)
    dist_rel = odds_item("odds-pct-normal-p0-q10-s9d-rel").metadata["shot_answers"]
    assert dist_rel == [float(q) for q in RELEASE_SHOT_PERCENTILES[9]] and 45.0 in dist_rel
    dist_paper = odds_item("odds-pct-normal-p0-q10-s9d").metadata["shot_answers"]
    assert {round(s) for s in dist_paper} <= set(SHOT_PERCENTILE_POOL) and 45 not in {round(s) for s in dist_paper}
    assert "<answer>1.0</answer>" in odds_item("odds-pct-normal-p0-q10-s7f-rel").prompt


def test_difference_discrete_percentile_mid_rank_or_target():
    """Paper convention here: the mid-rank percentile of the shown value, stated in the prompt. Release: the target
    percentile itself (its answers are the percentiles the values were read at), without the mid-rank sentence."""
    paper = odds_item("odds-pct-binomial-p0-q10-s0")
    release = odds_item("odds-pct-binomial-p0-q10-s0-rel")
    x = paper.metadata["value"]
    assert release.metadata["value"] == x == stats.binom(1000, 0.5).ppf(0.1)
    d = stats.binom(1000, 0.5)
    assert paper.metadata["answer"] == pytest.approx(50 * (d.cdf(x - 1) + d.cdf(x)), abs=1e-9)
    assert release.metadata["answer"] == 10.0
    assert abs(paper.metadata["answer"] - 10.0) > 0.3  # 10.305: P(X = x) is 0.6% here
    assert "mid-rank" in paper.prompt and "mid-rank" not in release.prompt
    assert percentile_of("binomial", {"n": 1000, "p": 0.5}, x) == paper.metadata["answer"]


def test_release_oracle_is_perfect_and_finds_every_item():
    rel = odds_problems("subset", "release")
    questions = [p for p in rel if p.metadata["task"] != "sampling"]
    for p in rel:
        assert find_problem(p.full_prompt) is p
    errors = [odds_item_scores(p, render_replies(p, oracle_values(p, 1))[0])["abs_error"] for p in questions]
    assert max(errors) < 1e-9
    # the same question in the paper convention has a different answer for a discrete family
    p = odds_item("odds-pct-geometric-p0-q50-s0")
    assert find_problem(p.full_prompt) is p


# ------------------------------------------------------------------------------------------------ adapter options

def test_lmeval_option_checks():
    from ub_lmeval.odds_hooks import check_options, odds_docs

    assert check_options("sampling", 20, "sampling", 50) == ("sampling", 20, "paper")
    assert check_options("sampling", 1, "sampling", 1000, "release") == ("sampling", 1, "release")
    for bad in (1, -1, 0, "x", 21):
        with pytest.raises(ValueError, match="list_size"):
            check_options("sampling", bad, "sampling", 50)
    with pytest.raises(ValueError, match="list_size must be 20 here"):
        check_options("sampling", 1, "sampling", 50)
    with pytest.raises(ValueError, match="contradicts this task"):
        check_options("sampling", 1, "percentile")
    with pytest.raises(ValueError, match="list_size applies to sampling only"):
        check_options("percentile", 20, "percentile")
    with pytest.raises(ValueError, match="convention must be one of paper, release"):
        check_options("percentile", 1, "percentile", None, "code")
    with pytest.raises(ValueError, match="task must be one of"):
        check_options("median")
    docs = odds_docs("probability", families="normal", convention="release", yaml_task="probability")
    assert docs and all(d["id"].endswith("-rel") for d in docs)


def test_lmeval_refuses_contradictory_metadata_end_to_end(monkeypatch):
    pytest.importorskip("lm_eval")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    def run(task, metadata, **kw):
        tm = ub_task_manager(metadata)
        return simple_evaluate(model="ub-oracle", tasks=[task], task_manager=tm, **kw)

    with pytest.raises(ValueError, match="list_size=1 gives 50 replies x 1 = 50 values"):
        run("ub_odds_sampling", {"list_size": 1}, limit=1)
    with pytest.raises(ValueError, match="list_size must be a positive integer"):
        run("ub_odds_sampling", {"list_size": -1}, limit=1)
    with pytest.raises(ValueError, match="task='sampling' contradicts this task"):
        run("ub_odds_percentile", {"task": "sampling"}, limit=1)
    res = run("ub_odds_probability", {"convention": "release", "families": "normal,binomial"})["results"]
    assert res["ub_odds_probability"]["abs_error,none"] == pytest.approx(0.0, abs=1e-9)


def test_inspect_option_checks_and_release_convention(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval

    from ub_inspect.odds import odds

    with pytest.raises(ValueError, match="option list_size: applies to task=sampling only"):
        odds(task="percentile", list_size=20)
    with pytest.raises(ValueError, match="option list_size"):
        odds(task="sampling", list_size=-1)
    with pytest.raises(ValueError, match="option ks_ns: each N must be at most n_samples"):
        odds(task="sampling", n_samples=50)
    with pytest.raises(ValueError, match="option convention: must be one of paper, release"):
        odds(convention="code")
    log = inspect_eval(odds(task="percentile", families="binomial,power_law", shots="0,7", convention="release"),
                       model="ub/oracle", log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    assert all(s.id.endswith("-rel") for s in log.samples)
    (score,) = log.results.scores
    assert score.metrics["abs_error"].value == pytest.approx(0.0, abs=1e-9)
    # list prompting with n_samples and ks_ns that fit is accepted
    assert odds(task="sampling", families="normal", shots=0, n_samples=100, ks_ns="10,100", list_size=10)
