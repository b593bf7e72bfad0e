"""What are the odds (the odds paper): exact answers by hand, metrics by hand, shots, the nearest-shot baseline, the
oracle and collapse models, parsing (with a hypothesis fuzz), and both frameworks end to end on small subsets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import owens_t

from ub_core.metrics import (absolute_error, across_distributions, ks_statistic, mae, nearest_shot_answer,
                             odds_item_scores, parse_percentile, parse_probability, summarize_odds)
from ub_core.oracle import collapse_value, find_problem, oracle_values, render_replies
from ub_core.problems import load_bank
from ub_core.problems.odds import (DISTRIBUTIONS, SHOT_COUNTS, SHOT_TYPES, TASKS, TEST_PERCENTILES, odds_item,
                                   odds_items, percentile_of, probability_between)


def _phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


@pytest.fixture(scope="module")
def subset():
    return load_bank("odds")


# ------------------------------------------------------------------------------------------------ metrics by hand

def test_absolute_error_and_mae_by_hand():
    assert absolute_error(37, 40.5) == 3.5
    assert mae([10, 30], [12, 25]) == pytest.approx((2 + 5) / 2)
    with pytest.raises(ValueError):
        mae([1, 2], [1])
    with pytest.raises(ValueError):
        absolute_error(float("nan"), 1)


def test_across_distributions_by_hand():
    """The odds paper's ± (Tables 1 and 2): the SE of the distributions' mean scores, ddof 1. Distribution MAEs 2, 4
    and 9 (the second from 3 and 5; a NaN parse failure left out): mean 5, s^2 = (9 + 1 + 16) / 2 = 13,
    SE = sqrt(13 / 3)."""
    s = across_distributions({"a": [2.0], "b": [3.0, 5.0, math.nan], "c": [9.0], "empty": [math.nan, None]})
    assert s["mean"] == pytest.approx(5.0) and s["se"] == pytest.approx(math.sqrt(13 / 3))
    assert (s["distributions"], s["empty"]) == (3, 1)
    one = across_distributions({"a": [1.0, 3.0]})
    assert one["mean"] == 2.0 and math.isnan(one["se"])
    assert math.isnan(across_distributions({})["mean"])
    # summarize_odds reports it beside the bootstrap interval, per group
    rows = [{"context": "health", "distribution": d, "abs_error": e}
            for d, errs in (("steps", [1.0, 3.0]), ("sleep", [6.0, 6.0])) for e in errs]
    g = summarize_odds(rows, by=("context",))["by_context"]["health"]
    assert g["mean"] == pytest.approx(4.0) and g["low"] <= 4.0 <= g["high"]
    assert g["distribution_mean"] == pytest.approx(4.0) and g["distribution_se"] == pytest.approx(2.0)
    assert g["distributions"] == 2


def test_ks_statistic_by_hand():
    # F_a jumps 1/3 at 1, 2, 3; F_b jumps 1/4 at 2, 3, 4, 5. |F_a - F_b|: x=1: 1/3, x=2: 2/3 - 1/4, x=3: 1 - 1/2,
    # x=4: 1 - 3/4, x=5: 0 -> D = 1/2.
    assert ks_statistic([1, 2, 3], [2, 3, 4, 5]) == pytest.approx(0.5)
    # ties across the samples: a = {0, 0, 1}, b = {0, 1, 1, 1}: at 0 F_a = 2/3, F_b = 1/4 -> D = 5/12
    assert ks_statistic([0, 0, 1], [0, 1, 1, 1]) == pytest.approx(5 / 12)


def test_nearest_shot_baseline_by_hand():
    assert nearest_shot_answer(87.0, [96.1, 101.3, 106.7], [35.0, 55.0, 75.0]) == 35.0
    assert nearest_shot_answer(100.0, [95.0, 105.0], [40.0, 60.0]) == 40.0  # tie -> the smaller answer
    # intervals: L1 distance to (0, 4) is 2, to (2, 9) is 5
    assert nearest_shot_answer((1.0, 5.0), [(0.0, 4.0), (2.0, 9.0)], [0.3, 0.6]) == 0.3
    assert nearest_shot_answer(1.0, [], []) is None
    item = odds_item("odds-pct-normal-p0-q10-s3d")  # shots at 35, 55, 75; the value is the 10th percentile
    assert item.metadata["baseline_answer"] == pytest.approx(35.0, abs=0.01)
    assert odds_item_scores(item, "{10}")["baseline_abs_error"] == pytest.approx(25.0, abs=0.01)


# ------------------------------------------------------------------------------------------------ exact answers

def test_normal_percentile_and_probability_by_hand():
    item = odds_item("odds-pct-normal-p0-q10-s0")
    x = item.metadata["value"]
    assert "the value 87.184 " in item.prompt and x == 87.184  # 100 - 1.2816 * 10, shown to 3 decimals
    assert item.metadata["answer"] == pytest.approx(100 * _phi((x - 100) / 10), abs=1e-9)
    assert item.metadata["answer"] == pytest.approx(10.0, abs=0.01)
    prob = odds_item("odds-prb-normal-p0-p0.5-s0")
    lo, hi = prob.metadata["lo"], prob.metadata["hi"]
    # the 1st-99th percentile range holds 0.98 of the mass; the interval lies inside it
    by_hand = (_phi((hi - 100) / 10) - _phi((lo - 100) / 10)) / 0.98
    assert prob.metadata["answer"] == pytest.approx(by_hand, abs=1e-9)
    assert prob.metadata["answer"] == pytest.approx(0.5, abs=1e-3)
    assert odds_item("odds-prb-normal-p0-p1-s0").metadata["answer"] == pytest.approx(1.0, abs=1e-4)


def test_exponential_in_both_conventions():
    rate_item = odds_item("odds-pct-exponential-p0-q10-s0")  # the paper's rate 1/100
    assert "rate lambda = 0.01 events per unit" in rate_item.prompt
    x = rate_item.metadata["value"]
    assert rate_item.metadata["answer"] == pytest.approx(100 * (1 - math.exp(-0.01 * x)), abs=1e-9)
    assert rate_item.metadata["answer"] == pytest.approx(10.0, abs=0.01)
    rate2 = odds_item("odds-pct-exponential-p1-q50-s0")  # rate 2 per unit: median ln 2 / 2
    assert "rate lambda = 2 events per unit" in rate2.prompt
    assert rate2.metadata["value"] == round(math.log(2) / 2, 3)
    scale_item = odds_item("odds-pct-exponential-p2-q50-s0")  # scale (mean) 12: median 12 ln 2
    assert "scale 12 (a scale, not a rate" in scale_item.prompt and "rate lambda" not in scale_item.prompt
    x = scale_item.metadata["value"]
    assert x == round(12 * math.log(2), 3)
    assert scale_item.metadata["answer"] == pytest.approx(100 * (1 - math.exp(-x / 12)), abs=1e-9)
    prob = odds_item("odds-prb-exponential-p2-p0.5-s0")
    lo, hi = prob.metadata["lo"], prob.metadata["hi"]
    assert prob.metadata["answer"] == pytest.approx((math.exp(-lo / 12) - math.exp(-hi / 12)) / 0.98, abs=1e-9)


def test_geometric_mid_rank_and_probability_by_hand():
    item = odds_item("odds-pct-geometric-p0-q10-s0")  # p = 0.05, support 1, 2, ...
    assert "values 1, 2, 3" in item.prompt and "mid-rank" in item.prompt
    # Q(0.1): smallest x with 1 - 0.95^x >= 0.1 -> x >= ln 0.9 / ln 0.95 = 2.05 -> 3
    assert item.metadata["value"] == 3
    # mid-rank: (P(X < 3) + P(X <= 3)) / 2 = ((1 - 0.95^2) + (1 - 0.95^3)) / 2
    assert item.metadata["answer"] == pytest.approx(100 * ((1 - 0.95 ** 2) + (1 - 0.95 ** 3)) / 2, abs=1e-9)
    assert percentile_of("geometric", {"p": 0.05}, 1) == pytest.approx(100 * 0.05 / 2)
    prob = odds_item("odds-prb-geometric-p0-p0.3-s0")
    lo, hi = prob.metadata["lo"], prob.metadata["hi"]
    # restricted range: Q(0.01) = 1, Q(0.99) = ceil(ln 0.01 / ln 0.95) = 90; mass 1 - 0.95^90
    by_hand = (0.95 ** (lo - 1) - 0.95 ** hi) / (1 - 0.95 ** 90)
    assert prob.metadata["answer"] == pytest.approx(by_hand, abs=1e-12)
    assert probability_between("geometric", {"p": 0.05}, 1, 90) == pytest.approx(1.0)


def _binom_cdf(k: int, n: int, p) -> float:
    from fractions import Fraction

    p = Fraction(p)
    return float(sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(0, k + 1))) if k >= 0 else 0.0


def _poisson_cdf(k: int, lam: float) -> float:
    return math.fsum(math.exp(i * math.log(lam) - lam - math.lgamma(i + 1)) for i in range(0, k + 1))


def _mid_rank(cdf, x: int) -> float:
    return 100 * (cdf(x - 1) + cdf(x)) / 2


# closed-form CDFs, written from the textbook formulas (the bank uses scipy's frozen distributions)
_HAND_CDF = {
    "log_normal": lambda x: _phi((math.log(x) - 4.0) / 0.5),
    "skew_normal": lambda x: _phi((x - 100) / 10) - 2 * owens_t((x - 100) / 10, -10),  # Owen's T form
    "power_law": lambda x: 1 - (x / 100.0) ** (1 - 1.8),
    "uniform": lambda x: (x - 70.0) / 60.0,
    "gamma": lambda x: 1 - math.exp(-x / 20) * (1 + x / 20),  # shape 2 (Erlang)
    "gumbel": lambda x: math.exp(-math.exp(-(x - 1000.0) / 1000.0)),
}
_HAND_DISCRETE = {
    "poisson": lambda k: _poisson_cdf(k, 70.0),
    "binomial": lambda k: _binom_cdf(k, 1000, "1/2"),
    "multinomial": lambda k: _binom_cdf(k, 1000, "1/5"),  # component 0 of Multinomial(1000, (0.2, 0.3, 0.5))
}


@pytest.mark.parametrize("family", sorted(_HAND_CDF))
@pytest.mark.parametrize("q", [10, 90])
def test_continuous_percentiles_by_closed_form(family, q):
    item = odds_item(f"odds-pct-{family}-p0-q{q}-s0")
    x = item.metadata["value"]
    assert item.metadata["answer"] == pytest.approx(100 * _HAND_CDF[family](x), abs=1e-7)
    assert item.metadata["answer"] == pytest.approx(q, abs=0.5)  # the value is the q-th percentile, rounded


@pytest.mark.parametrize("family", sorted(_HAND_DISCRETE))
def test_discrete_percentiles_by_closed_form(family):
    item = odds_item(f"odds-pct-{family}-p0-q10-s0")
    x = item.metadata["value"]
    assert x == int(x)
    assert item.metadata["answer"] == pytest.approx(_mid_rank(_HAND_DISCRETE[family], int(x)), abs=1e-7)


def test_power_law_states_xmin_and_alpha_and_income_gumbel_is_the_fitted_one():
    item = odds_item("odds-pct-power_law-p0-q10-s0")
    assert "alpha" in item.prompt and "100" in item.prompt
    from ub_core.problems.odds_data import _gumbel_from_moments

    g = _gumbel_from_moments(66028.713, 53616.018)  # moment matching, kept as a helper
    assert g["loc"] + 0.5772156649015329 * g["scale"] == pytest.approx(66028.713)
    assert math.pi * g["scale"] / math.sqrt(6) == pytest.approx(53616.018)
    # the bank's income Gumbel is the release's fitted one (location 43,788.542, scale 35,382.156), which differs
    # from the moment-matched one; the context framing states the data's mean and sd
    income = odds_item("odds-pct-rw-household_income-idealized-q50-s0")
    assert income.params == {"loc": 43788.542, "scale": 35382.156}
    assert abs(g["loc"] - 43788.542) > 1000
    assert "43788.542" in income.prompt and "35382.156" in income.prompt
    assert "66028.713" in odds_item("odds-pct-rw-household_income-moments-q50-s0").prompt
    assert "43788.542" in odds_item("odds-pct-rw-household_income-context-q50-s0").prompt


# ------------------------------------------------------------------------------------------------ bank and shots

def test_subset_covers_every_family_task_and_shots_setting(subset):
    cells = {(p.family, p.metadata["task"], p.metadata["shots"], p.metadata["shot_type"])
             for p in subset if p.metadata["context"] == "none"}
    settings_ = [(0, "none")] + [(k, t) for k in SHOT_COUNTS if k for t in SHOT_TYPES]
    assert cells == {(f, t, k, s) for f in DISTRIBUTIONS for t in TASKS for k, s in settings_}
    assert len({p.id for p in subset}) == len(subset) == 576  # 396 idealised + 12 real-world x 5 framings x 3
    assert {p.metadata["target"] for p in subset if p.metadata["task"] == "percentile"} == set(TEST_PERCENTILES)
    contexts = {p.metadata["context"] for p in subset}
    assert {"health", "finance", "climate", "health_normal", "climate_idealized", "finance_moments"} <= contexts
    for p in subset:  # the prompt is what the oracle finds it by
        assert find_problem(p.full_prompt) is p


def test_shot_answers_never_equal_test_answers(subset):
    """Within every question distribution, each shot answer (either shot type) stays at least the display
    rounding away from every test answer (0.5 percentile points; 0.005 in probability). Checked on the subset
    and on every parameterisation of the discrete families, where shots had to be moved."""
    items = list(subset) + odds_items("full", families=["poisson", "geometric", "binomial", "multinomial"])
    tests, shots = {}, {}
    for p in items:
        m = p.metadata
        if m["task"] == "sampling":
            continue
        key = (m["task"], p.family, p.regime)
        tests.setdefault(key, set()).add(m["answer"])
        shots.setdefault(key, set()).update(m["shot_answers"])
    checked = 0
    for key, answers in tests.items():
        margin = 0.5 if key[0] == "percentile" else 0.005
        for s in shots.get(key, ()):
            assert min(abs(s - a) for a in answers) >= margin, key
            checked += 1
    assert checked > 100
    shot_pct = {round(s) for k, v in shots.items() if k[0] == "percentile" and k[1] == "normal" for s in v}
    assert shot_pct <= {5, 15, 25, 35, 45, 55, 65, 75, 85, 95}


def test_filters_reject_unknown_names():
    with pytest.raises(ValueError, match="unknown task"):
        odds_items(task="median")
    with pytest.raises(ValueError, match="shots"):
        odds_items(shots=[2])
    with pytest.raises(ValueError, match="unknown context"):
        odds_items(contexts=["sports"])


# ------------------------------------------------------------------------------------------------ reference models

def test_oracle_scores_zero_and_collapse_scores_the_expected_mae(subset):
    pct = [p for p in subset if p.metadata["task"] == "percentile" and p.metadata["context"] == "none"]
    oracle = [odds_item_scores(p, render_replies(p, oracle_values(p, 1))[0])["abs_error"] for p in pct]
    assert max(oracle) < 1e-9
    # Collapse answers 50. Each family of the subset asks each of the 11 targets once, and for a continuous family
    # the exact answer is the target to within 0.01 points, so the MAE is mean |t - 50| = 298 / 11.
    normal = [p for p in pct if p.family == "normal"]
    collapse = [odds_item_scores(p, render_replies(p, [collapse_value(p)])[0])["abs_error"] for p in normal]
    assert np.mean(collapse) == pytest.approx(298 / 11, abs=0.01)
    # probabilities: collapse answers 0.5; the normal family's 11 settings ask 0.1, ..., 1.0 and 0.1 again
    prb = [p for p in subset if p.metadata["task"] == "probability" and p.family == "normal"]
    collapse = [odds_item_scores(p, "{0.5}")["abs_error"] for p in prb]
    assert np.mean(collapse) == pytest.approx(100 * 2.9 / 11, abs=0.01)


def test_oracle_and_collapse_sampling_ks():
    item = odds_item("odds-smp-normal-p0-s0")
    truth = item.truth(10_000)
    row = odds_item_scores(item, oracle_values(item, 1000, seed=3), truth=truth)
    # D for 1000 vs 10000 true draws: sqrt(nm/(n+m)) D ~ Kolmogorov, whose 99.99% point is 2.3 -> D < 0.077
    assert row["ks_stat"] < 0.077 and row["ks@1000"] == 1.0 and row["n_valid"] == 1000
    collapsed = odds_item_scores(item, [collapse_value(item)] * 1000, truth=truth)
    assert collapsed["ks_stat"] == pytest.approx(0.5, abs=0.02)  # a point mass at the median
    assert collapsed["ks@100"] == 0.0


# ------------------------------------------------------------------------------------------------ parsing

def test_percentile_replies_parse_and_garbage_is_a_counted_failure():
    for text in ("37", "37%", "37th", "the 37th percentile", "{37}", "<answer>37th</answer>", "Answer: 37.0"):
        assert parse_percentile(text).value == 37.0, text
    for text in ("no idea", "", "{150}", "-3"):
        assert not parse_percentile(text).ok, text
    assert parse_probability("35%").value == pytest.approx(0.35)
    assert parse_probability("{0.35}").value == pytest.approx(0.35)
    assert not parse_probability("{3.5}").ok
    item = odds_item("odds-pct-normal-p0-q50-s0")
    row = odds_item_scores(item, "I cannot say.")
    assert row["parse_failed"] == 1.0 and row["n_failed"] == 1.0 and math.isnan(row["abs_error"])
    summary = summarize_odds([{"family": "normal", "shots": 0, "context": "none", "abs_error": 2.0},
                              {"family": "normal", "shots": 0, "context": "none", "abs_error": float("nan")},
                              {"family": "gamma", "shots": 3, "context": "none", "abs_error": 4.0}])
    assert summary["overall"]["mean"] == 3.0 and summary["overall"]["dropped"] == 1
    assert summary["by_family"]["gamma"]["mean"] == 4.0 and summary["by_shots"][0]["n"] == 1


@settings(max_examples=100, deadline=None)
@given(value=st.floats(min_value=0, max_value=100, allow_nan=False).map(lambda v: round(v, 2)),
       form=st.sampled_from(["{v}", "{v}%", "{v}th", "{{{v}}}", "<answer>{v}th</answer>", "The answer is {v}.",
                             "About the {v}th percentile", "Answer: {v} %"]),
       noise=st.text(alphabet="abcdefghij .,:;!?", max_size=20))
def test_fuzz_percentile_reply(value, form, noise):
    text = noise + "\n" + form.format(v=f"{value:g}")  # models often write something before the answer
    res = parse_percentile(text)
    assert res.ok and res.value == pytest.approx(value)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=60))
def test_fuzz_percentile_never_raises(text):
    res = parse_percentile(text)
    assert (res.ok and 0 <= res.value <= 100) or (not res.ok and res.error)


# ------------------------------------------------------------------------------------------------ end to end

@pytest.mark.slow
def test_inspect_oracle_and_collapse_end_to_end(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval

    from ub_inspect.odds import odds

    def run(model, **kw):
        log = inspect_eval(odds(**kw), model=model, log_dir=str(tmp_path), display="none")[0]
        assert log.status == "success", log.error
        (score,) = log.results.scores  # every run metric in one score (ub_inspect.metrics)
        return {k: v.value for k, v in score.metrics.items()}, log

    scores, log = run("ub/oracle", task="percentile", families="normal,geometric,gumbel", shots="0,3",
                      context="none,finance_normal")
    # 3 families x (0, 3 within distribution, 3 within family) + 2 finance Gumbels (income, rent) x 3 targets
    assert len(log.samples) == 15
    assert scores["abs_error"] == pytest.approx(0.0, abs=1e-9)
    # the headline, MAE, first, with its standard error and by family as the odds paper's tables
    assert next(iter(scores)) == "abs_error" and {"stderr", "normal", "geometric", "gumbel", "normal_stderr",
                                                   "baseline_abs_error", "baseline_abs_error_stderr"} <= set(scores)
    metas = [s.scores["odds_question_scorer"].metadata for s in log.samples]
    assert {"family", "task", "shots", "shot_type", "context"} <= set(metas[0])
    assert {m["context"] for m in metas} == {"none", "finance_normal"}
    assert scores["dist_se"] == 0.0 and scores["none_dist_se"] == 0.0  # the paper's ±, across distributions
    assert scores["finance_normal_dist_se"] == 0.0  # income and rent: two distributions
    scores, _ = run("ub/collapse", task="percentile", families="normal,uniform", shots=0, edition="full")
    # collapse answers 50: each distribution's MAE by hand (sum |50 - q| / 11 = 27.09 for a continuous family
    # whose exact answers are the targets), so the SE across the six distributions follows from them
    items = odds_items("full", task="percentile", shots=[0], families=["normal", "uniform"], contexts=["none"])
    per_dist: dict = {}
    for p in items:
        per_dist.setdefault(p.metadata["distribution"], []).append(abs(50.0 - p.metadata["answer"]))
    maes = [np.mean(v) for v in per_dist.values()]
    assert len(maes) == 6 and scores["dist_se"] == pytest.approx(np.std(maes, ddof=1) / math.sqrt(6), abs=1e-9)
    scores, _ = run("ub/collapse", task="probability", families="normal")
    assert scores["abs_error"] == pytest.approx(100 * 2.9 / 11, abs=0.01)
    scores, _ = run("ub/oracle", task="sampling", families="poisson,uniform", shots=0)
    assert scores["ks@1000"] == 1.0 and scores["n_valid"] == 1000
    assert scores["ks_stat"] < 0.077


@pytest.mark.slow
def test_lmeval_oracle_end_to_end(monkeypatch):
    pytest.importorskip("lm_eval")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    tm = ub_task_manager()
    assert {"ub_odds", "ub_odds_percentile", "ub_odds_probability", "ub_odds_sampling"} <= set(tm.all_tasks)
    res = simple_evaluate(model="ub-oracle", tasks=["ub_odds"], task_manager=tm, limit=3)["results"]
    assert res["ub_odds_percentile"]["abs_error,none"] == pytest.approx(0.0, abs=1e-9)
    assert res["ub_odds_probability"]["abs_error,none"] == pytest.approx(0.0, abs=1e-9)
    assert res["ub_odds_percentile"]["parse_failed,none"] == 0.0
    assert res["ub_odds_sampling"]["ks@1000,take_50"] == 1.0
    assert res["ub_odds_sampling"]["n_valid,take_50"] == 1000
    # ub-collapse answers 50 / 0.5: on the normal family the MAE is known by hand (see the test above)
    tm_n = ub_task_manager({"families": "normal", "context": "none"})
    col = simple_evaluate(model="ub-collapse", tasks=["ub_odds_percentile", "ub_odds_probability"],
                          task_manager=tm_n)
    assert col["n-samples"]["ub_odds_percentile"]["effective"] == 11
    assert col["results"]["ub_odds_percentile"]["abs_error,none"] == pytest.approx(298 / 11, abs=0.01)
    assert col["results"]["ub_odds_probability"]["abs_error,none"] == pytest.approx(100 * 2.9 / 11, abs=0.01)
    # the paper's ± across distributions: NaN for one distribution (normal p0); on the health domain's four real-world
    # distributions (targets 10, 50, 90 in the subset) collapse's MAE is 80/3 for each, so the SE is 0
    assert math.isnan(col["results"]["ub_odds_percentile"]["abs_error_dist_se,none"])
    health = simple_evaluate(model="ub-collapse", tasks=["ub_odds_percentile"],
                             task_manager=ub_task_manager({"context": "health"}))["results"]["ub_odds_percentile"]
    assert health["abs_error,none"] == pytest.approx(80 / 3) and health["abs_error_dist_se,none"] == 0.0
    # the paper's protocol: one value per reply, 1,000 replies per item
    single = simple_evaluate(model="ub-oracle", tasks=["ub_odds_sampling_single"], task_manager=tm, limit=2,
                             log_samples=True)
    row = single["results"]["ub_odds_sampling_single"]
    assert row["n_valid,take_1000"] == 1000 and row["ks@1000,take_1000"] == 1.0
    doc = single["samples"]["ub_odds_sampling_single"][0]
    assert len(doc["resps"][0]) == 1000 and "{v1" not in doc["arguments"][0][0]  # no list instruction
