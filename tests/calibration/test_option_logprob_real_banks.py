"""The log-probability families on the REAL banks (calibration, implicit, explicit), through both adapters:
clustered standard errors, compatibility and grid behaviour rates (the numeric-calibration paper's Figures 2 and 3), the
oracle ceiling on every category, the collapsed model's exact behaviour rates, and a tiny local model through lm-eval's
hf.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ub_core.logprob.option_logprob import BEHAVIOURS, behaviour_entry, score_row
from ub_core.metrics import clustered_stderr, grid_behaviour_rates
from ub_core.problems import get_problem, load_bank

CAL = ("colors", "wordproblems", "distributions")
IMP = ("dice", "coins", "preference", "choice", "statistics", "dice_shown")


# ------------------------------------------------------------------------------------------------ ub_core

def test_clustered_stderr_by_hand():
    # values 1, 3 | 2, 6 in clusters a | b: mean 3; deviation sums a: -2 + 0 = -2, b: -1 + 3 = 2
    # SE = sqrt(C/(C-1) * (4 + 4)) / n = sqrt(2 * 8) / 4 = 1
    assert clustered_stderr([1, 3, 2, 6], ["a", "a", "b", "b"], min_clusters=2) == pytest.approx(1.0)
    # every value its own cluster: the ordinary std(ddof=1)/sqrt(n)
    x = np.random.default_rng(0).normal(size=50)
    assert clustered_stderr(x, range(50)) == pytest.approx(x.std(ddof=1) / math.sqrt(50))
    # perfectly correlated clusters: the SE is that of the 5 cluster means, not of the 50 values
    means = np.arange(5.0)
    vals = np.repeat(means, 10)
    five = np.repeat(range(5), 10)
    assert clustered_stderr(vals, five, min_clusters=5) == pytest.approx(means.std(ddof=1) / math.sqrt(5))
    assert clustered_stderr(vals, five, min_clusters=5) > vals.std(ddof=1) / math.sqrt(50) * 2.5
    assert math.isnan(clustered_stderr([1.0, 2.0], ["a", "a"], min_clusters=1))  # one cluster: no spread between
    # below MIN_CLUSTERS (10) clusters the clustered SE is noise; the unclustered one is used instead
    assert clustered_stderr(vals, five) == pytest.approx(vals.std(ddof=1) / math.sqrt(50))
    assert clustered_stderr([1.0, 2.0], ["a", "a"]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="labels"):
        clustered_stderr([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="NaN"):
        clustered_stderr([1.0, float("nan")], ["a", "b"])


def test_clustered_stderr_matches_inspects_own():
    from inspect_ai.scorer._metrics.std import _clustered_stderr

    rng = np.random.default_rng(1)
    vals = rng.normal(size=40)
    labels = rng.integers(0, 12, size=40)  # at least MIN_CLUSTERS clusters: the clustered branch
    partition = [list(vals[labels == c]) for c in np.unique(labels)]
    assert clustered_stderr(vals, labels) == pytest.approx(_clustered_stderr(partition), rel=1e-12)


def test_grid_behaviour_rates_by_hand():
    g1 = [{"grid": "g1", "pm": 1.0, "compatible": ["pick_first", "pick_higher"], "higher_first": True},
          {"grid": "g1", "pm": 1.0, "compatible": ["pick_first", "pick_lower"], "higher_first": False}]
    g2 = [{"grid": "g2", "pm": 0.2, "compatible": ["pick_first"], "higher_first": True}]  # mean PM < 0.5: Null
    g3 = [{"grid": "g3", "pm": 0.9, "compatible": ["calibrated"], "higher_first": False},
          {"grid": "g3", "pm": 0.9, "compatible": ["pick_higher", "calibrated"], "higher_first": True}]
    rates, labels = grid_behaviour_rates([*g1, *g2, *g3, {"grid": None, "pm": 1.0, "compatible": []}])
    assert labels == {"g1": "pick_first", "g2": "null", "g3": "calibrated"}
    assert rates == {"null": 1 / 3, "calibrated": 1 / 3, "pick_higher": 0.0, "pick_lower": 0.0,
                     "pick_first": 1 / 3, "pick_second": 0.0, "undetermined": 0.0}
    assert grid_behaviour_rates([])[0] == {b: None for b in BEHAVIOURS + ("undetermined",)}


def test_unbalanced_grid_is_undetermined_not_labelled_by_tie_break():
    """A limited run keeps only the items of a grid where the higher count comes first. A pure Pick First
    model then fits Pick First and Pick Higher on every item, and the tie-break order labelled it Pick Higher."""
    items = [i for i in load_bank("calibration", categories=["colors"])
             if i.metadata.get("higher") == i.metadata.get("first")][:6]
    entries = [behaviour_entry(i, [1.0, 0.0]) for i in items]
    rates, labels = grid_behaviour_rates(entries)
    assert set(labels.values()) == {"undetermined"} and rates["undetermined"] == 1.0 and rates["pick_higher"] == 0.0
    # the same model on whole grids (both orders present) is Pick First
    grid = {e["grid"] for e in entries}
    whole = [i for i in load_bank("calibration", categories=["colors"]) if _grid_of(i) in grid]
    rates, labels = grid_behaviour_rates(behaviour_entry(i, [1.0, 0.0]) for i in whole)
    assert set(labels.values()) == {"pick_first"} and rates["undetermined"] == 0.0
    # equal counts only (no count behaviour to confuse): labelled
    equal = {"grid": "eq", "pm": 1.0, "compatible": ["pick_first"], "higher_first": None}
    assert grid_behaviour_rates([equal])[1] == {"eq": "pick_first"}
    # an entry from an older log (no higher_first) cannot show the grid is balanced
    assert grid_behaviour_rates([{"grid": "old", "pm": 1.0, "compatible": ["pick_first"]}])[1] == {
        "old": "undetermined"}


def _grid_of(item):
    return behaviour_entry(item, [1.0, 0.0])["grid"]


def test_score_row_reports_compatibility_not_one_label():
    """A model that always names the first colour, on an item whose first count is higher, is compatible with
    both Pick First and Pick Higher: each rate counts it (one label would credit only Pick Higher)."""
    item = get_problem("cal-colors-t2-tens-22-52-red-blue")  # 22 red (first) vs 52 blue: blue is higher
    first_higher = next(i for i in load_bank("calibration", categories=["colors"])
                        if i.metadata.get("higher") == i.metadata.get("first") and i.metadata.get("higher"))
    row = score_row(first_higher, [1.0, 0.0])
    assert row["behaviour_pick_first"] == 1.0 and row["behaviour_pick_higher"] == 1.0
    assert row["behaviour_pick_lower"] == 0.0 and row["behaviour_calibrated"] == 0.0
    row = score_row(item, [1.0, 0.0])
    assert row["behaviour_pick_first"] == 1.0 and row["behaviour_pick_lower"] == 1.0
    assert row["behaviour_pick_higher"] == 0.0
    assert behaviour_entry(item, [1.0, 0.0]) == {"grid": "colors|red>blue", "pm": 1.0,
                                                 "compatible": ["pick_lower", "pick_first"], "higher_first": False}
    three = next(i for i in load_bank("calibration", categories=["distributions"]) if len(i.options) > 2)
    assert behaviour_entry(three, three.probabilities) is None
    assert all(math.isnan(score_row(three, three.probabilities)[f"behaviour_{b}"]) for b in BEHAVIOURS)


# ------------------------------------------------------------------------------------------------ lm-eval

@pytest.mark.slow
def test_lmeval_oracle_ceiling_on_every_real_category(task_manager):
    from lm_eval import simple_evaluate

    res = simple_evaluate(model="ub-oracle", tasks=["ub_logit", "ub_explicit"], task_manager=task_manager,
                          limit=12, log_samples=True)
    r = res["results"]
    for cat in CAL:
        row = r[f"ub_calibration_{cat}"]
        assert row["pm,none"] == pytest.approx(1.0, abs=1e-9), cat
        assert row["wd,none"] == pytest.approx(0.0, abs=1e-9), cat
        assert row["re,none"] == pytest.approx(0.0, abs=1e-9), cat
        for key in ("pm", "wd", "re"):  # every item scores the same: zero spread, clustered or not
            se = row[f"{key}_stderr,none"]  # clustered by option pair
            assert se == "N/A" or se == pytest.approx(0.0, abs=1e-9), (cat, key, se)  # N/A: < 2 clusters
    for cat in ("colors", "wordproblems"):
        row = r[f"ub_calibration_{cat}"]
        # a limited run keeps part of some grids: those are undetermined, every other one is calibrated
        assert row["behaviour_calibrated,none"] == 1.0, cat
        assert row["grid_calibrated,none"] + row["grid_undetermined,none"] == pytest.approx(1.0), cat
        # colors' first 12 scored items are 12 ordered pairs of one item each (equal-count items left
        # out): every grid is undetermined; wordproblems' hold both orders of two pairs
        assert row["grid_calibrated,none"] > 0 or cat == "colors", cat
        assert row["grid_pick_first,none"] == 0.0 and row["grid_null,none"] == 0.0
    for cat in IMP:
        row = r[f"ub_implicit_{cat}"]
        for key in ("kl", "chebyshev", "manhattan", "missing_mass"):
            assert row[f"{key},none"] == pytest.approx(0.0, abs=1e-9), (cat, key)
        assert math.isnan(row["argmax_acc,none"]) or row["argmax_acc,none"] == 1.0
        ex = r[f"ub_explicit_{cat}"]
        assert ex["mcq_acc,none"] == 1.0 and ex["p_correct,none"] == pytest.approx(1.0), cat
    assert r["ub_calibration"]["pm,none"] == pytest.approx(1.0) and r["ub_implicit"]["kl,none"] == pytest.approx(0.0)
    json.dumps(res["results"])


def test_lmeval_collapse_behaviour_rates_exact_on_one_full_grid(task_manager):
    """ub-collapse puts all mass on the first-named colour. On 40 items of one ordered pair from the full edition
    (both orders of counts present), Pick First is compatible with every item, Pick Higher exactly with those
    whose first count is higher, and the grid is labelled Pick First (Figure 3)."""
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    grid = [i for i in load_bank("calibration", categories=["colors"], size="full")
            if tuple(i.options) == ("red", "blue") and i.metadata["template"] == "t0"
            and i.metadata["higher"] is not None][:40]  # the runs leave equal-count items out
    n_first_higher = sum(i.metadata["higher"] == "red" for i in grid)
    n_second_higher = sum(i.metadata["higher"] == "blue" for i in grid)
    assert n_first_higher and n_second_higher  # the grid is balanced enough to tell the behaviours apart
    tm = ub_task_manager({"size": "full", "ids": ",".join(i.id for i in grid)})
    res = simple_evaluate(model="ub-collapse", tasks=["ub_calibration_colors"], task_manager=tm, log_samples=True)
    row = res["results"]["ub_calibration_colors"]
    assert res["n-samples"]["ub_calibration_colors"]["effective"] == 40
    assert row["behaviour_pick_first,none"] == 1.0
    assert row["behaviour_pick_higher,none"] == pytest.approx(n_first_higher / 40)
    assert row["behaviour_pick_lower,none"] == pytest.approx(n_second_higher / 40)
    assert row["grid_pick_first,none"] == 1.0
    assert sum(row[f"grid_{b},none"] for b in BEHAVIOURS) == pytest.approx(1.0)
    # one option pair = one cluster, fewer than MIN_CLUSTERS: the unclustered standard error
    assert row["wd_stderr,none"] != "N/A" and row["wd_stderr,none"] > 0


def test_lmeval_clustered_se_follows_the_option_pairs(task_manager):
    from lm_eval import simple_evaluate

    res = simple_evaluate(model="ub-collapse", tasks=["ub_calibration_colors", "ub_implicit_coins"],
                          task_manager=task_manager, limit=60, log_samples=True)
    for task, key in (("ub_calibration_colors", "wd"), ("ub_implicit_coins", "chebyshev")):
        samples = res["samples"][task]
        vals = [s[key] for s in samples]
        clusters = [s["doc"]["cluster"] for s in samples]
        assert len(set(clusters)) >= 2 and np.std(vals) > 0, (task, set(clusters))
        assert res["results"][task][f"{key}_stderr,none"] == pytest.approx(clustered_stderr(vals, clusters))
        assert not any(k.endswith("_clustered_se,none") for k in res["results"][task])  # no separate row


@pytest.mark.slow
def test_lmeval_tiny_local_model_runs_ub_logit(tiny_llama):
    """An untrained tiny Llama built here runs every ub_logit task end to end through lm-eval's hf backend,
    with variants deduplicated by its token ids; every score is in its range."""
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    path = str(tiny_llama)
    tm = ub_task_manager({"pretrained": path})
    res = simple_evaluate(model="hf", model_args=f"pretrained={path},dtype=float32", tasks=["ub_logit"],
                          task_manager=tm, device="cpu", batch_size=32, limit=2, log_samples=True)
    r = res["results"]
    for cat in CAL:
        row = r[f"ub_calibration_{cat}"]
        assert 0.0 < row["pm,none"] <= 1.0 + 1e-6 and row["wd,none"] >= 0.0, (cat, row)
    for cat in IMP:
        row = r[f"ub_implicit_{cat}"]
        assert 0.0 <= row["chebyshev,none"] <= 1.0 and 0.0 <= row["manhattan,none"] <= 2.0, (cat, row)
        assert row["kl,none"] >= 0.0 and -1e-6 <= row["missing_mass,none"] <= 1.0, (cat, row)
        s = res["samples"][f"ub_implicit_{cat}"][0]
        assert s["doc"]["dedup"] == "token_ids" and sum(s["doc"]["ub_sample"]["predicted"]) == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------------ Inspect

def _metric(log, key, name="mean"):
    """A key's mean (``name="mean"``) or standard error (``"stderr"``): one score holds every run metric, the
    headline's standard error under ``stderr``, every other key's under ``<key>_stderr`` (ub_inspect.metrics)."""
    (score,) = log.results.scores
    metrics = score.metrics
    if name == "mean":
        return metrics[key].value
    return metrics["stderr" if next(iter(metrics)) == key else f"{key}_stderr"].value


@pytest.mark.slow
def test_inspect_oracle_ceiling_and_grid_rates_on_real_banks(tmp_path):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.calibration import calibration
    from ub_inspect.explicit import explicit
    from ub_inspect.implicit import implicit

    logs = inspect_eval([calibration(limit_per_category=4), implicit(limit_per_category=3),
                         explicit(limit_per_category=3)], model="ub/oracle", log_dir=str(tmp_path), display="none")
    by = {lg.eval.task.split("/")[-1]: lg for lg in logs}
    for lg in logs:
        assert lg.status == "success", lg.error
    cal, imp, exp = by["calibration"], by["implicit"], by["explicit"]
    assert len(cal.samples) == 12 and len(imp.samples) == 18 and len(exp.samples) == 18  # 6 categories x 3
    assert _metric(cal, "pm", "mean") == pytest.approx(1.0) and _metric(cal, "wd", "mean") == pytest.approx(0.0)
    assert _metric(cal, "pm", "stderr") == pytest.approx(0.0, abs=1e-9)
    assert _metric(cal, "behaviour_calibrated", "mean") == 1.0
    run = cal.results.scores[0].metrics  # the headline WD, then the grid rates
    assert run["wd"].value == pytest.approx(0.0, abs=1e-12)
    # a limited run keeps part of some grids: those are undetermined, every other one is calibrated
    assert run["grid_calibrated"].value + run["grid_undetermined"].value == pytest.approx(1.0)
    assert run["grid_calibrated"].value > 0 and run["grid_pick_first"].value == 0.0
    assert _metric(imp, "kl", "mean") == pytest.approx(0.0, abs=1e-9)
    assert _metric(exp, "mcq_acc", "mean") == 1.0


@pytest.mark.slow
def test_inspect_clustered_stderr_and_collapse_rates(tmp_path):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.calibration import calibration

    log = inspect_eval(calibration(categories="colors", limit_per_category=60), model="ub/collapse",
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    samples = log.samples
    wd = [s.scores["calibration_scorer"].value["wd"] for s in samples]
    clusters = [s.metadata["cluster"] for s in samples]
    assert len(set(clusters)) >= 2
    assert _metric(log, "wd", "stderr") == pytest.approx(clustered_stderr(wd, clusters))
    # the headline's (WD's) standard error is clustered the same way
    assert log.results.scores[0].metrics["stderr"].value == pytest.approx(clustered_stderr(wd, clusters))
    assert _metric(log, "behaviour_pick_first", "mean") == 1.0  # compatible with every item
    entries = [s.scores["calibration_scorer"].metadata["ub"]["behaviour_entry"] for s in samples]
    rates, _ = grid_behaviour_rates(entries)
    for b in BEHAVIOURS:
        assert log.results.scores[0].metrics[f"grid_{b}"].value == pytest.approx(rates[b])
    assert sum(rates.values()) == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------------ prefixes

def test_exclusive_probabilities_by_hand():
    from ub_core.logprob.option_logprob import exclusive_probabilities

    # " 1" = (5, 1); " 12" = (5, 1, 2); " 123" = (5, 1, 2, 3); " 2" = (5, 2); "1" without ids
    keys = [(5, 1), (5, 1, 2), (5, 1, 2, 3), (5, 2), None]
    probs = [0.5, 0.2, 0.05, 0.1, 0.3]
    # " 1" loses only its shortest extension " 12" (which already holds " 123"); " 12" loses " 123"
    assert exclusive_probabilities(keys, probs) == pytest.approx([0.3, 0.15, 0.05, 0.1, 0.3])
    assert exclusive_probabilities([(1,), (1, 2)], [0.2, 0.2 + 1e-17]) == [0.0, pytest.approx(0.2)]


def test_lmeval_counts_a_digit_prefix_once(tiny_llama):
    """With a digit-by-digit tokenizer, " 12" is " 1" then "2": lm-eval's log-likelihood of " 1" holds the mass of
    " 12" too. The docs keep the token ids and process_results removes the double count."""
    from transformers import AutoTokenizer

    from ub_lmeval.option_logprob_hooks import option_logprob_docs, process_results_option_logprob

    tok = AutoTokenizer.from_pretrained(str(tiny_llama))
    doc = option_logprob_docs("implicit", "dice", tokenizer=tok, ids="imp-dice-single-1d12")[0]
    ids = dict(zip(doc["choices"], map(tuple, doc["choice_token_ids"])))
    one, twelve = ids[" 1"], ids[" 12"]
    assert twelve[:len(one)] == one and len(twelve) > len(one)  # the tokenizer really splits the digits
    # a model, consistent by the chain rule: P(" 1" then stop) = 0.3, P(" 12") = 0.2, P(" 2") = 0.5
    p = {" 1": 0.5, " 12": 0.2, " 2": 0.5}
    results = [(math.log(p[c]) if c in p else -1e9, False) for c in doc["choices"]]
    row = process_results_option_logprob(doc, results)
    mass = dict(zip(doc["options"], doc["ub_sample"]["option_mass"]))
    assert mass["1"] == pytest.approx(0.3) and mass["12"] == pytest.approx(0.2) and mass["2"] == pytest.approx(0.5)
    assert row["missing_mass"] == pytest.approx(0.0, abs=1e-6)


def test_top_logprobs_counts_variants_it_cannot_read():
    from ub_inspect.option_logprob import multi_token_variants

    # " 1" is a first token and " 12" is asked: " 12" spans two tokens; " 3" is simply not in the list
    table = {" 1": -0.5, "1": -3.0, " 2": -1.0, "\n": -4.0}
    assert multi_token_variants([" 1", " 2", " 12", "12", " 3"], table) == 2
    assert multi_token_variants([" red", " blue"], {" red": -0.1, " blue": -2.0}) == 0


@pytest.mark.slow
def test_inspect_hf_top_logprobs_runs_with_the_providers_defaults(tiny_llama, tmp_path, fast_hf_batching):
    """Inspect's hf/ provider samples by default, and transformers refuses temperature 0 when sampling: the logit
    solvers ask at temperature 1 (the model's own distribution), so a plain `--model hf/<path>` runs."""
    from inspect_ai import eval as inspect_eval

    from ub_inspect.calibration import calibration

    path = tiny_llama
    log = inspect_eval(calibration(mode="top_logprobs", categories="colors", limit_per_category=3),
                       model=f"hf/{path}", log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success", log.error
    for s in log.samples:
        ub = s.scores["calibration_scorer"].metadata["ub"]
        assert ub["mode"] == "top_logprobs" and 0.0 <= sum(ub["option_mass"]) <= 1.0 + 1e-6
