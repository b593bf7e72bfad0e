"""The same recorded replies, scored with a non-default KS threshold and method in Inspect
(``-T threshold`` / ``-T method``), lm-eval (``--metadata '{"threshold": ..., "method": ...}'``) and ``ub score``
(``--threshold`` / ``--method``), give identical numbers. Before the fix lm-eval's ``ub_ksn`` always used 1e-4.

The replies: ``ub/oracle`` in Inspect with seed S draws a problem's 100 answers with the stream S x 1,000,003 (its
first request), which is lm-eval's ``ub-oracle`` with ``seed=S x 1000003``; the test checks that the two runs wrote
the same replies, then feeds Inspect's recorded replies to ``ub score``."""

from __future__ import annotations

import json
import math

import pytest

from ub_core import cli
from ub_core.metric_spec import run_specs

IDS = ("te-beta-conc", "ce-binomial-conc", "sh-integer-01")
SEED = 7
THRESHOLD, METHOD = 0.3, "exact"  # UnpredictaBench: 1e-4, paper
NS = (1, 2, 5, 10, 20, 50, 100)


def _same(a, b) -> bool:
    return (a is None or (isinstance(a, float) and math.isnan(a))) and \
        (b is None or (isinstance(b, float) and math.isnan(b))) or a == b


@pytest.mark.slow
def test_inspect_lmeval_and_ub_score_agree_at_a_non_default_threshold(tmp_path, capsys):
    from inspect_ai import eval as inspect_eval
    from lm_eval import simple_evaluate

    from support.lmeval_tasks import ub_task_manager
    from ub_inspect.ksn import ksn
    from ub_inspect.ksn.solver import CollectedValues

    from inspect_ai.model import get_model

    # a fresh provider: Inspect memoizes models, and ub/oracle's draws depend on how often a problem was asked
    # before in this process (another test in the same worker would shift them)
    oracle = get_model("ub/oracle", memoize=False)
    log = inspect_eval(ksn(ids=list(IDS), threshold=THRESHOLD, method=METHOD), model=oracle, seed=SEED,
                       log_dir=str(tmp_path / "inspect"), display="none")[0]
    assert log.status == "success", log.error
    inspect_values = {s.id: s.scores["ksn_scorer"].value for s in log.samples}
    replies = {s.id: list(s.store_as(CollectedValues).outputs) for s in log.samples}

    out = simple_evaluate(model="ub-oracle", model_args=f"seed={SEED * 1_000_003}", tasks=["ub_ksn"], log_samples=True,
                          task_manager=ub_task_manager({"ids": list(IDS), "threshold": THRESHOLD, "method": METHOD}))
    lmeval_docs = {s["doc"]["id"]: s for task in out["samples"].values() for s in task}
    for pid in IDS:  # the same recorded replies
        assert list(lmeval_docs[pid]["filtered_resps"][0]) == replies[pid], pid

    lines = [json.dumps({"id": pid, "outputs": replies[pid]}) for pid in IDS]
    (tmp_path / "replies.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert cli.main(["score", "--samples", str(tmp_path / "replies.jsonl"), "--json", "--threshold", str(THRESHOLD),
                     "--method", METHOD, "--workers", "1"]) == 0
    ub_rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["problems"]}

    keys = [k for k, _ in run_specs("ksn", NS, adapter="lmeval")]
    for pid in IDS:
        for key in keys:
            assert _same(inspect_values[pid][key], lmeval_docs[pid][key]), (pid, key)
            if key in ub_rows[pid]:
                assert _same(inspect_values[pid][key], ub_rows[pid][key]), (pid, key)
    # the options were used: at UnpredictaBench's threshold the same replies pass more KS tests
    default = simple_evaluate(model="ub-oracle", model_args=f"seed={SEED * 1_000_003}", tasks=["ub_ksn"],
                              log_samples=True, task_manager=ub_task_manager({"ids": list(IDS)}))
    default_docs = {s["doc"]["id"]: s for task in default["samples"].values() for s in task}
    at = lambda docs: [docs[pid][f"ks@{n}"] for pid in IDS for n in NS]  # noqa: E731
    assert sum(at(default_docs)) > sum(at(lmeval_docs))
