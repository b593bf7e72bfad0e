"""Calibration baselines and model runs score one item set, and ``ub reproduce calibration``
carries its settings and the random baselines' spread over seeds (that test is in test_reproduce_calibration.py, which
computes the command's default rows once for all its tests).

The finding: the baselines left the equal-count items (a tenth of colors and wordproblems) out and the model runs
kept them, so a model that behaves exactly like Pick Higher (all mass on the higher count; on equal counts, all on
the first option) scored WD 0.488 over the 1,650 colors items against the baseline row's 0.461 over 1,470; and the
wordproblems Random T=0.01 cell moved with the seed (WD 0.691, 0.702, 0.671 for seeds 0, 1, 2)."""

from __future__ import annotations

import json
import math

import pytest

from ub_core.logprob.option_logprob import canonical_variant
from ub_core.metrics import calibration_baselines
from ub_core.metrics.calibration import calibration_item_set, has_equal_counts
from ub_core.problems import OptionItem, load_bank


def _pick_higher_logprobs(item: OptionItem, choices) -> list[tuple[float, bool]]:
    """All mass on the option with the higher count (on equal counts, on the first option)."""
    higher = (item.metadata or {}).get("higher")
    target = canonical_variant(higher if higher in item.options else item.options[0])
    return [(0.0 if c == target else -math.inf, False) for c in choices]


def test_a_pick_higher_model_scores_the_pick_higher_baseline():
    pytest.importorskip("lm_eval")
    from ub_lmeval.option_logprob_hooks import (
        nanmean,
        option_logprob_docs,
        process_results_option_logprob,
    )

    docs = option_logprob_docs("calibration", "colors")
    wd = [float(process_results_option_logprob(d, _pick_higher_logprobs(OptionItem.from_record(json.loads(
        d["record"])), d["choices"]))["wd"]) for d in docs]
    colors = load_bank("calibration", categories=["colors"])
    base = calibration_baselines(colors)["pick_higher"]
    assert base["n"] == 1470 and base["equal_counts"] == 180
    # before: 1,650 documents, WD 0.488 against 0.461
    assert len(docs) == base["n"], (len(docs), nanmean(wd), base["wd"]["mean"])
    assert nanmean(wd) == pytest.approx(base["wd"]["mean"], abs=1e-12)
    # the rule is one setting: keep them in both and the two agree again (Pick Higher reads a tie as uniform)
    kept = option_logprob_docs("calibration", "colors", equal_counts="keep")
    assert len(kept) == 1650 == calibration_baselines(colors, equal_counts="keep")["pick_higher"]["n"]
    with pytest.raises(ValueError, match="equal_counts"):
        option_logprob_docs("calibration", "colors", equal_counts="neither")
    tie = next(i for i in colors if has_equal_counts(i))
    with pytest.raises(ValueError, match="equal_counts=keep"):  # asked for by id: said, not silently left out
        option_logprob_docs("calibration", "colors", ids=tie.id)
    assert len(option_logprob_docs("calibration", "colors", ids=tie.id, equal_counts="keep")) == 1
    # --metadata reaches the whole ub_logit group: the implicit tasks ignore the calibration rule
    coins = load_bank("implicit", categories=["coins"])
    assert len(option_logprob_docs("implicit", "coins", equal_counts="keep")) == len(coins)


def test_inspect_task_scores_the_same_item_set_and_says_so():
    pytest.importorskip("inspect_ai")
    from ub_inspect.calibration import calibration

    task = calibration(categories="colors,wordproblems,distributions")
    items = load_bank("calibration")
    kept, left_out = calibration_item_set(items, "drop")
    assert len(task.dataset) == len(kept) == len(items) - 180 - 104 and left_out == 284
    assert task.metadata["equal_counts"] == "drop" and task.metadata["equal_counts_left_out"] == 284
    assert not any(has_equal_counts(i) for i in kept)
    assert len(calibration(categories="colors", equal_counts="keep").dataset) == 1650
    tie = next(i for i in items if has_equal_counts(i))
    with pytest.raises(ValueError, match="equal_counts=keep"):
        calibration(ids=tie.id)
