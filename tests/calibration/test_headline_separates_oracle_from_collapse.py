"""The calibration headline tells the oracle from a collapsed model, in both frameworks.

PM (the mass on the options) is 1.000 for the oracle and for ub/collapse alike: it is the numeric-calibration
paper's precondition ("calibration ... is well-founded only if there is sufficient probability mass"), not its
measure. The paper measures calibration with WD ("To measure calibration, we use WD", sec. 3.2): 0 for the oracle,
about 0.7 for a model that puts all its mass on one option. WD is the headline; PM stays a column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from support.lmeval_tasks import load_task_yaml

from ub_core.compare import HEADLINE_KEYS
from ub_core.metric_spec import HEADLINES, direction, headline
from ub_core.metrics import calibration_item_scores
from ub_core.problems import load_bank

ROOT = Path(__file__).resolve().parents[2]


def _means(items, mass_of):
    rows = [calibration_item_scores(i, mass_of(i)) for i in items]
    return {k: float(np.mean([r[k] for r in rows])) for k in ("pm", "wd")}


def test_the_headline_separates_oracle_from_collapse():
    items = list(load_bank("calibration"))[:400]
    oracle = _means(items, lambda i: np.asarray(i.probabilities, dtype=float))
    collapse = _means(items, lambda i: np.eye(len(i.options))[0])
    key = HEADLINES["calibration"]
    assert oracle["pm"] == collapse["pm"] == 1.0  # why PM cannot be the headline
    gap = collapse[key] - oracle[key]
    assert abs(gap) > 0.3, (oracle, collapse)
    better_is_higher = direction(headline("calibration"))
    assert (oracle[key] > collapse[key]) == better_is_higher


def test_both_frameworks_lead_with_the_headline():
    key = HEADLINES["calibration"]
    assert HEADLINE_KEYS["calibration"] == key  # ub compare and ub report's pairwise tables
    folder = ROOT / "ub_lmeval/task_yamls/option_logprob"
    assert load_task_yaml(folder / "_ub_calibration_template_yaml")["metric_list"][0]["metric"] == key
    assert load_task_yaml(folder / "ub_calibration.yaml")["aggregate_metric_list"][0]["metric"] == key
