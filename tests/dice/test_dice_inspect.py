"""The dice family end to end in Inspect on the offline models: ``ub/oracle`` answers with true draws and passes,
``ub/collapse`` repeats one value and fails every law; batch replies with a count other than N are recorded; bad
options are one line. The bank answers its own prompts through find_item."""

from __future__ import annotations

import pytest

from ub_core.metrics.dice import DICE_LAWS, DICE_ORDER
from ub_core.problems import find_item, load_bank
from ub_core.problems.dice import DICE_FAMILIES, protocol_prompt

inspect_ai = pytest.importorskip("inspect_ai")


def _run(tmp_path, model, **kw):
    from support.inspect_run import run_task
    from ub_inspect.dice import dice

    return run_task(dice(**kw), model, tmp_path)


def test_the_bank_states_the_papers_laws_and_finds_its_prompts():
    import numpy as np
    from scipy import stats

    from ub_core import distributions as D

    items = load_bank("dice")
    assert [p.metadata["law"] for p in items] == list(DICE_ORDER)
    for p in items:
        family, params, _ = DICE_FAMILIES[p.metadata["law"]]
        law = DICE_LAWS[p.metadata["law"]].dist
        ours = D.get_family(family).scipy_dist(D.validate(family, params))
        qs = np.linspace(0.05, 0.95, 7)
        assert np.allclose(ours.ppf(qs), law.ppf(qs)), p.id  # one law, two descriptions
        for protocol in ("batch", "independent"):
            assert find_item(protocol_prompt(p, protocol, 1000)) == ("dice", p)
    # the oracle's draws are the law's: a KS test of 5,000 draws of every continuous law (all 12 pass at 1e-3
    # with probability 0.988)
    for p in items:
        if not DICE_LAWS[p.metadata["law"]].discrete:
            assert stats.kstest(p.draw(5000, seed=0), DICE_LAWS[p.metadata["law"]].dist.cdf).pvalue > 1e-3, p.id


def test_oracle_passes_and_collapse_fails_in_both_protocols(tmp_path):
    scores, log = _run(tmp_path, "ub/oracle", protocol="batch", n=100)
    assert len(log.samples) == 15 and next(iter(scores)) == "passed"
    # each law passes with probability 0.99 under the oracle: 4 or more failures of 15 has probability 1.3e-5
    assert scores["passed"] >= 12 / 15 and scores["n_values"] == 100 and scores["count_error"] == 0
    assert {"Tier I", "Tier II", "Tier III", "w1"} <= set(scores)
    scores, log = _run(tmp_path, "ub/collapse", protocol="independent", n=30, laws="Bernoulli,Gaussian,Cauchy")
    assert scores["passed"] == 0 and scores["n_values"] == 30 and scores["p_value"] < 1e-3
    meta = log.samples[0].scores["dice_scorer"].metadata
    assert meta["protocol"] == "independent" and len(set(meta["values"])) == 1


def test_release_convention_and_a_count_other_than_n_is_recorded(tmp_path):
    """The oracle writes the 20 values its prompt asks for; the sample says 25 were asked: 5 short, recorded."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset

    from ub_core.problems.dice import dice_item
    from ub_inspect.dice import dice_scorer, record_to_sample
    from ub_inspect.dice.dice import batch_values

    sample = record_to_sample(dice_item("Uniform"), "batch", 20)
    sample.metadata["n"] = 25
    task = Task(dataset=MemoryDataset([sample]), solver=batch_values(), scorer=dice_scorer(convention="release"))
    log = inspect_eval(task, model="ub/oracle", log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    s = log.samples[0].scores["dice_scorer"]
    assert s.value["n_values"] == 20 and s.value["count_error"] == pytest.approx(0.2)
    assert s.metadata["convention"] == "release" and s.value["p_value"] > 0.01


@pytest.mark.parametrize("kw,message", [
    ({"protocol": "serial"}, "protocol"), ({"n": 0}, "n"), ({"convention": "paper"}, "convention"),
    ({"laws": "Zipf"}, "laws"), ({"alpha": 1.5}, "alpha"),
])
def test_bad_options_are_one_line(kw, message):
    from ub_inspect._options import OptionError
    from ub_inspect.dice import dice

    with pytest.raises(OptionError) as e:
        dice(**kw)
    assert f"option {message}" in str(e.value) and "\n" not in str(e.value)
