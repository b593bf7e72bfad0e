"""``ub_inspect.analysis.per_category`` groups by what was run.

Before: a folder holding an oracle and a collapse log gave one real_world KS@100 (their average, 0.533 on the
reported folder), and stability came back as an empty frame."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("pyarrow")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.analysis import SampleSummary, samples_df  # noqa: E402

import ub_inspect.providers  # noqa: E402,F401  (registers ub/oracle and ub/collapse)
from ub_inspect import analysis  # noqa: E402
from ub_inspect.ksn import ksn  # noqa: E402
from ub_inspect.stability import stability  # noqa: E402

IDS = ["sh-integer-01", "sh-integer-02"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("analysis")
    for model in ("ub/oracle", "ub/collapse"):
        assert inspect_eval(ksn(ids=IDS), model=model, log_dir=str(out / "ksn"), display="none")[0].status == "success"
    # a second oracle run of the same task: kept apart by its run id
    assert inspect_eval(ksn(ids=IDS[:1]), model="ub/oracle", log_dir=str(out / "ksn"),
                        display="none")[0].status == "success"
    log = inspect_eval(stability(epochs=2, limit=2, subtasks="navigate,college_mathematics"), model="ub/oracle",
                       log_dir=str(out / "stability"), display="none")[0]
    assert log.status == "success"
    return out


@pytest.mark.slow
def test_models_and_runs_are_never_averaged_together(folder):
    df = samples_df(str(folder / "ksn"), columns=SampleSummary + analysis.columns("ksn"), quiet=True)
    table = analysis.per_category(df, "ksn")
    assert table.index.names == ["model", "task_name", "eval_id", "metadata_category"]
    by_model = table["ksn_ks@100"].groupby(level="model").agg(list).to_dict()
    # the oracle passes, the collapse fails: two models, never one mean of 0.5
    assert by_model == {"ub/oracle": [1.0, 1.0], "ub/collapse": [0.0]}
    assert len(table) == 3  # two oracle runs, one collapse run
    # with one run per model and task, the run id is not in the index
    one = analysis.per_category(df[df["eval_id"] != table.loc["ub/oracle"].index[0][1]], "ksn")
    assert one.index.names == ["model", "task_name", "metadata_category"] and len(one) == 2


@pytest.mark.slow
def test_stability_per_category_is_the_accuracy(folder):
    df = samples_df(str(folder / "stability"), columns=SampleSummary + analysis.columns("stability"), quiet=True)
    table = analysis.per_category(df, "stability")
    assert len(table) > 0 and list(table.columns) == ["stability_correct"]  # before: an empty frame
    assert (table["stability_correct"] == 1.0).all()  # the oracle answers every question right
    assert set(table.index.get_level_values("model")) == {"ub/oracle"}
