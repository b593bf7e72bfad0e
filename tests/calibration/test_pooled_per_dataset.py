"""Per-dataset figures, one pooled figure computed the same way in both frameworks, and a
clustered error only where there are enough clusters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ub_core.metrics import MIN_CLUSTERS, clustered_stderr, stratified_stderr
from ub_core.problems import load_bank

lm_eval = pytest.importorskip("lm_eval")
inspect_ai = pytest.importorskip("inspect_ai")


def test_stratified_stderr_is_lmevals_group_stderr():
    from lm_eval.api.metrics import pooled_sample_stderr

    se, n = [0.02, 0.05, 0.01], [30, 12, 50]
    assert stratified_stderr(se, n) == pytest.approx(float(pooled_sample_stderr(se, n)), rel=1e-12)
    # about sqrt(sum (n_k / N)^2 se_k^2)
    assert stratified_stderr(se, n) == pytest.approx(math.sqrt(sum((k / 92) ** 2 * s * s for s, k in zip(se, n))),
                                                     rel=0.03)
    assert math.isnan(stratified_stderr([0.1], [1]))


def test_few_clusters_fall_back_to_the_unclustered_error():
    """A --limit run can leave 3 scenarios: a clustered SE from 3 cluster sums is noise (it was 0.014 against an
    unclustered 0.045 in such a run). Below MIN_CLUSTERS the error is the unclustered one."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=30)
    three = np.repeat(["a", "b", "c"], 10)
    unclustered = values.std(ddof=1) / math.sqrt(30)
    assert clustered_stderr(values, three) == pytest.approx(unclustered, rel=1e-12)
    assert clustered_stderr(values, three, min_clusters=2) != pytest.approx(unclustered, rel=1e-3)
    many = np.repeat(np.arange(MIN_CLUSTERS), 3)
    assert clustered_stderr(values, many) != pytest.approx(unclustered, rel=1e-3)


@pytest.mark.slow
def test_pooled_and_per_dataset_figures_agree_between_frameworks(tmp_path):
    from ub_core.metrics import calibration_item_set

    """The collapsed model on 12 items of each calibration dataset: lm-eval's per-task and group figures equal
    Inspect's per-dataset (``<category>_<key>``) and pooled ones, standard errors included (Inspect pooled the SE
    over all items as one clustered sample, about 2x lm-eval's group SE)."""
    from inspect_ai import eval as inspect_eval
    from lm_eval import simple_evaluate

    from support.lmeval_tasks import ub_task_manager
    from ub_inspect.calibration import calibration

    cats = ("colors", "wordproblems", "distributions")
    # the first 12 items of each category that the runs score (equal-count items are left out by default)
    ids = [i.id for c in cats for i in calibration_item_set(load_bank("calibration", categories=[c]))[0][:12]]
    res = simple_evaluate(model="ub-collapse", tasks=["ub_calibration"],
                          task_manager=ub_task_manager({"ids": ",".join(ids)}))["results"]
    (log,) = inspect_eval(calibration(ids=",".join(ids)), model="ub/collapse", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (score,) = log.results.scores
    got = {k: v.value for k, v in score.metrics.items()}
    for key in ("pm", "wd", "re"):
        for c in cats:
            row = res[f"ub_calibration_{c}"]
            # the headline (WD) is Inspect's bare per-category key, the others carry their name
            mine = got[c] if key == "wd" else got[f"{c}_{key}"]
            mine_se = got[f"{c}_stderr"] if key == "wd" else got[f"{c}_{key}_stderr"]
            assert mine == pytest.approx(row[f"{key},none"], rel=1e-12, abs=1e-15), (c, key)
            assert mine_se == pytest.approx(row[f"{key}_stderr,none"], rel=1e-9), (c, key)
        pooled = got["stderr"] if key == "wd" else got[f"{key}_stderr"]
        assert got[key] == pytest.approx(res["ub_calibration"][f"{key},none"], rel=1e-12, abs=1e-15), key
        assert pooled == pytest.approx(res["ub_calibration"][f"{key}_stderr,none"], rel=1e-9), key
