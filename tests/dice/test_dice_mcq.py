"""The dice paper's downstream MCQ task as a live Inspect task: n requests for a four-option question
with its answer key; the keys are read back and tested for uniformity over A-D. ub/oracle marks uniformly drawn
letters, ub/collapse always A; the numbers are checked against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ub_core.parsing.answer_key import read_answer_key
from ub_core.problems import find_item
from ub_core.problems.base import seed_sequence
from ub_core.problems.dice_mcq import MCQ_TOPICS, find_mcq_item, mcq_item, mcq_items, mcq_reply

inspect_ai = pytest.importorskip("inspect_ai")


def _run(tmp_path, model, **kw):
    from support.inspect_run import run_task
    from ub_inspect.dice_mcq import dice_mcq

    return run_task(dice_mcq(**kw), model, tmp_path)


def test_requests_are_found_by_the_offline_models_and_keyed():
    items = mcq_items(45)
    assert len({i.prompt for i in items}) == 45 and {i.topic for i in items} == set(MCQ_TOPICS)
    for item in items:
        assert find_item(item.prompt + "\n\nAnswer below.") == ("dice", item)
        assert read_answer_key(mcq_reply(item, "collapse")) == "A"
    assert find_mcq_item(items[3].prompt.replace("quiz", "test")) is None
    assert find_mcq_item("Write one new multiple-choice question (question 0 of a quiz) about x. ") is None
    with pytest.raises(ValueError, match="MCQ request index"):
        mcq_item(-1)


def test_oracle_letters_are_uniform_and_collapse_always_a(tmp_path):
    n = 200
    scores, log = _run(tmp_path, "ub/oracle", n=n)
    # the oracle's key for request i: one uniform draw of its own seeded stream
    expected = ["ABCD"[int(np.random.default_rng(seed_sequence(f"dice-mcq-{i}", 0)).integers(4))] for i in range(n)]
    assert [s.scores["dice_mcq_scorer"].answer for s in log.samples] == expected
    counts = [expected.count(k) for k in "ABCD"]
    ref = stats.chisquare(counts)
    assert scores["chi2"] == pytest.approx(ref.statistic, rel=1e-12)
    assert scores["p_value"] == pytest.approx(ref.pvalue, rel=1e-12) and scores["p_value"] > 0.01
    assert scores["uniform"] == 1 and scores["read"] == 1 and scores["n"] == n
    assert [scores[f"share_{k}"] for k in "ABCD"] == pytest.approx([c / n for c in counts])
    scores, _ = _run(tmp_path, "ub/collapse", n=n)
    # every key A: chi2 = (n - n/4)^2 / (n/4) + 3 (n/4) = 3n
    assert scores["chi2"] == pytest.approx(3 * n) and scores["share_A"] == 1 and scores["uniform"] == 0
    assert scores["p_value"] == pytest.approx(stats.chi2.sf(3 * n, 3), rel=1e-9)


def test_replies_without_a_key_are_counted_and_left_out():
    from inspect_ai.scorer import SampleScore, Score

    from ub_inspect.dice_mcq import letter_uniformity_metric

    def ss(letter):
        value = {k: float(k == letter) for k in "ABCD"}
        value["read"] = float(letter is not None)
        return SampleScore(score=Score(value=value), sample_id=str(letter))

    out = letter_uniformity_metric()([ss("A"), ss("B"), ss(None), ss("C"), ss("D"), ss("D")])
    assert out["read"] == pytest.approx(5 / 6) and out["n"] == 5
    assert out["p_value"] == pytest.approx(stats.chisquare([1, 1, 1, 2]).pvalue)
    none = letter_uniformity_metric()([ss(None)])
    assert math.isnan(none["p_value"]) and none["uniform"] == 0 and none["read"] == 0


@pytest.mark.parametrize("kw,message",
                         [({"n": 0}, "n"), ({"alpha": 1.5}, "alpha"), ({"temperature": -1}, "temperature")])
def test_bad_options_are_one_line(kw, message):
    from ub_inspect._options import OptionError
    from ub_inspect.dice_mcq import dice_mcq

    with pytest.raises(OptionError) as e:
        dice_mcq(**kw)
    assert f"option {message}" in str(e.value) and "\n" not in str(e.value)


def test_lmeval_hooks_and_the_offline_models(monkeypatch):
    from ub_lmeval.dice_hooks import letter_chi2, letter_p_value, letters_uniform, mcq_docs, process_results_mcq

    docs = mcq_docs(n=4, alpha=0.05)
    assert [d["id"] for d in docs] == [mcq_item(i).id for i in range(4)]
    rows = [process_results_mcq(d, [r]) for d, r in zip(docs, ["Correct Answer: B", "no key", "Correct answer is C",
                                                               "Correct Answer: B"])]
    assert [r["read"] for r in rows] == [1, 0, 1, 1]
    items = [r["letter_p_value"] for r in rows]
    assert letter_p_value(items) == pytest.approx(stats.chisquare([0, 2, 1, 0]).pvalue)
    assert letter_chi2(items) == pytest.approx(stats.chisquare([0, 2, 1, 0]).statistic)
    assert letters_uniform(items) == float(stats.chisquare([0, 2, 1, 0]).pvalue > 0.05)
    assert math.isnan(letter_p_value([["", 0.01]])) and letters_uniform([["", 0.01]]) == 0
    for kw, word in (({"n": 0}, "n"), ({"alpha": 0}, "alpha")):
        with pytest.raises(ValueError, match=word):
            mcq_docs(**kw)
    pytest.importorskip("lm_eval")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    tm = ub_task_manager({"n": 120})
    res = simple_evaluate(model="ub-oracle", tasks=["ub_dice_mcq"], task_manager=tm)["results"]["ub_dice_mcq"]
    from ub_core.problems.dice_mcq import oracle_letter

    letters = [oracle_letter(i) for i in range(120)]
    expected = stats.chisquare([letters.count(k) for k in "ABCD"])
    assert res["letter_p_value,none"] == pytest.approx(expected.pvalue) and res["read,none"] == 1
    col = simple_evaluate(model="ub-collapse", tasks=["ub_dice_mcq"], task_manager=tm)["results"]["ub_dice_mcq"]
    assert col["letter_chi2,none"] == pytest.approx(360) and col["letters_uniform,none"] == 0
