"""The ub_dice lm-eval tasks end to end on the offline models: batch and independent on ub-oracle pass, ub-collapse
fails; bad metadata is one line. Kept small (a few laws, n from metadata)."""

from __future__ import annotations

import pytest

from ub_lmeval.dice_hooks import dice_docs, process_results_dice


def test_docs_and_results_without_lm_eval():
    docs = dice_docs("batch", n=5, laws="Gaussian,Poisson")
    assert [d["law"] for d in docs] == ["Gaussian", "Poisson"] and "Give 5 independent values" in docs[0]["prompt"]
    row = process_results_dice(docs[0], ["{0.1, -0.3, 1.2}"])
    assert row["n_values"] == 3 and row["count_error"] == pytest.approx(0.4) and set(row) == {
        "passed", "w1", "p_value", "n_values", "count_error"}
    ind = dice_docs("independent", n=3, laws="Poisson", replies=3)[0]
    row = process_results_dice(ind, [["{4}", "no idea", "{6}"]])
    assert row["n_values"] == 2 and row["count_error"] == pytest.approx(1 / 3)
    empty = process_results_dice(docs[1], ["I cannot"])
    assert empty["passed"] == 0.0 and empty["n_values"] == 0
    for kw, word in (({"protocol": "serial"}, "protocol"), ({"n": 0}, "n"), ({"laws": "Zipf"}, "laws"),
                     ({"convention": "paper"}, "convention")):
        with pytest.raises(ValueError, match=word):
            dice_docs(**{"protocol": "batch", **kw})
    with pytest.raises(ValueError, match="contradicts"):
        dice_docs("independent", n=10, replies=1000)


def test_lmeval_oracle_and_collapse(monkeypatch):
    pytest.importorskip("lm_eval")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    tm = ub_task_manager({"laws": "Uniform,Bernoulli,Gaussian", "n": 200})
    assert {"ub_dice", "ub_dice_batch", "ub_dice_independent"} <= set(tm.all_tasks)
    res = simple_evaluate(model="ub-oracle", tasks=["ub_dice_batch"], task_manager=tm)["results"]["ub_dice_batch"]
    # three laws, each passing with probability 0.99 under the oracle
    assert res["passed,none"] >= 2 / 3 and res["n_values,none"] == 200 and res["count_error,none"] == 0
    col = simple_evaluate(model="ub-collapse", tasks=["ub_dice_batch"], task_manager=tm)["results"]["ub_dice_batch"]
    assert col["passed,none"] == 0.0
    ind = simple_evaluate(model="ub-oracle", tasks=["ub_dice_independent"], limit=1,
                          task_manager=ub_task_manager({"laws": "Poisson"}))["results"]["ub_dice_independent"]
    assert ind["n_values,take_1000"] == 1000 and ind["passed,take_1000"] == 1.0
