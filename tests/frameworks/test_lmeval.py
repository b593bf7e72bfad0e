"""lm-evaluation-harness end to end, offline: the ub_ksn tasks with ub-oracle / ub-collapse, the per-category
results JSON, logged samples, parity with the Inspect scorer, the ub-vllm request grouping, the hf model."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from types import SimpleNamespace

import pytest

pytest.importorskip("lm_eval")

from lm_eval import simple_evaluate  # noqa: E402

import ub_lmeval  # noqa: E402, F401  (imported for its side effect: registers the ub-* models with lm-eval)
from ub_core.oracle import oracle_replies  # noqa: E402
from ub_core.metrics import calibration_item_set
from ub_core.problems import get_problem, load_bank  # noqa: E402
from ub_lmeval.ksn_hooks import ksn_docs, nanmean, process_results_ksn  # noqa: E402
from ub_lmeval.models import generate_grouped, group_repeats  # noqa: E402

NS = (1, 2, 5, 10, 20, 50, 100)


def _evaluate(task_manager, model, tasks, limit, **kw):
    return simple_evaluate(model=model, tasks=tasks, task_manager=task_manager, limit=limit, **kw)


def test_tasks_are_found_in_the_installed_folder(task_manager):
    names = set(task_manager.all_tasks)
    assert {"ub_ksn", "ub_ksn_text_explicit", "ub_ksn_shuffling", "ub_ksn_multimodal"} <= names
    assert (ub_lmeval.tasks_dir() / "ksn" / "ub_ksn.yaml").is_file()


def test_oracle_full_marks_with_per_category_results(task_manager):
    """Seed fixed (model_args seed=0): 7 tasks x 4 problems; any false rejection would be a 1e-4 event."""
    res = _evaluate(task_manager, "ub-oracle", ["ub_ksn"], limit=4, log_samples=True)
    results = res["results"]
    for cat in ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal", "real_world",
                "shuffling"):
        row = results[f"ub_ksn_{cat}"]
        for n in NS:
            assert row[f"ks@{n},take_100"] == 1.0
        assert res["higher_is_better"][f"ub_ksn_{cat}"]["ks@100"] is True
        assert res["higher_is_better"][f"ub_ksn_{cat}"]["wdz"] is False
    assert results["ub_ksn"]["ks@100,take_100"] == 1.0  # the group's weighted mean
    sample = res["samples"]["ub_ksn_shuffling"][0]
    assert len(sample["doc"]["ub_sample"]["values"]) == 100 and len(sample["filtered_resps"][0]) == 100
    json.dumps(res["results"])  # dashboards read it as JSON


def test_collapse_scores_zero_at_100(task_manager):
    res = _evaluate(task_manager, "ub-collapse", ["ub_ksn_code_explicit", "ub_ksn_multimodal"], limit=5)
    for task in ("ub_ksn_code_explicit", "ub_ksn_multimodal"):
        assert res["results"][task]["ks@100,take_100"] == 0.0
        assert res["results"][task]["ks@1,take_100"] == 1.0


def test_parity_with_the_inspect_scorer():
    """The same recorded replies through lm-eval's process_results + aggregation and through the Inspect
    scorer give identical KS@N, WDZ and JSD."""
    pytest.importorskip("inspect_ai")
    import asyncio

    from inspect_ai.scorer import Target
    from inspect_ai.solver import TaskState
    from inspect_ai.model import ModelName

    from ub_inspect.ksn.scorer import ksn_scorer
    from ub_inspect.ksn.solver import CollectedValues

    problems = [p for p in load_bank("ksn")][::40]
    docs = {d["id"]: d for d in ksn_docs()}
    scorer = ksn_scorer()  # finds each sample's problem in the built-in bank by its id
    lm_rows, inspect_rows = [], []
    for p in problems:
        replies = oracle_replies(p, 100, seed=11)
        lm_rows.append(process_results_ksn(docs[p.id], [replies]))
        values, failures = [], []
        for r in replies:
            res = p.parse(r)
            (values.append(res.value) if res.ok else failures.append(res.error))
        state = TaskState(model=ModelName("ub/oracle"), sample_id=p.id, epoch=1, input=p.full_prompt, messages=[])
        record = state.store_as(CollectedValues)
        record.values, record.failures, record.outputs = values, failures, replies
        record.attempts, record.slots, record.retried_slots = 100, 100, 0
        inspect_rows.append(asyncio.run(scorer(state, Target(""))).value)
    for lm, ins in zip(lm_rows, inspect_rows):
        for n in NS:
            assert lm[f"ks@{n}"] == ins[f"ks@{n}"]
        assert lm["wdz"] == ins["wdz"] and lm["jsd"] == ins["jsd"] and lm["n_valid"] == ins["n_valid"]
    for key in ("ks@100", "wdz", "jsd"):  # aggregation: mean over problems in both
        assert nanmean([r[key] for r in lm_rows]) == pytest.approx(
            sum(r[key] for r in inspect_rows) / len(inspect_rows), rel=1e-12)


def test_process_results_counts_failures_and_nan_metrics():
    doc = {"id": "te-normal-conc"}
    row = process_results_ksn(doc, [["no idea"] * 100])
    assert row["n_valid"] == 0 and row["n_failed"] == 100 and row["ks@1"] == 0.0
    assert math.isnan(row["wdz"]) and math.isnan(row["jsd"])
    assert math.isnan(nanmean([row["wdz"]])) and nanmean([float("nan"), 1.0, 3.0]) == 2.0


def test_oracle_loglikelihood_is_the_true_probability():
    lm = ub_lmeval.models.UBOracleLM()
    p = get_problem("rw-network-01")  # labels A (7/8) and B (1/8)
    reqs = [SimpleNamespace(args=(p.full_prompt, " A")), SimpleNamespace(args=(p.full_prompt, " B")),
            SimpleNamespace(args=(p.full_prompt, " purple"))]
    (lr, gr), (lb, gb), (lp, _) = lm.loglikelihood(reqs)
    assert math.exp(lr) == pytest.approx(0.875) and gr is True
    assert math.exp(lb) == pytest.approx(0.125) and gb is False
    assert lp == -math.inf


# ------------------------------------------------------------------------------------------------ ub-vllm

def test_offline_models_refuse_unknown_model_args():
    """``--model_args bogus=1`` was accepted silently by ub-oracle and ub-collapse."""
    ub_lmeval.models.UBOracleLM(seed=3, model="ub-oracle", batch_size=1, device="cpu", max_batch_size=8)
    for cls in (ub_lmeval.models.UBOracleLM, ub_lmeval.models.UBCollapseLM):
        with pytest.raises(ValueError, match=r"unknown --model_args bogus_arg; ub-(oracle|collapse) takes seed"):
            cls(bogus_arg=1, batch_size=1)


def test_group_repeats_keeps_first_seen_order():
    assert group_repeats(["a", "b", "a", "c", "b", "a"]) == [[0, 2, 5], [1, 4], [3]]


def test_generate_grouped_sends_one_request_per_distinct_prompt():
    """Without vLLM: a fake engine records the prompts and n it was asked for."""
    calls = []

    class Params:
        def __init__(self, temperature, n=1):
            self.temperature, self.n = temperature, n

        def __repr__(self):
            return f"Params(temperature={self.temperature})"

    def fake_generate(prompts, params):
        calls.append([(tuple(p), sp.n) for p, sp in zip(prompts, params)])
        return [SimpleNamespace(outputs=[f"{p[0]}-{j}" for j in range(sp.n)], prompt_token_ids=p)
                for p, sp in zip(prompts, params)]

    def with_n(sp, n):
        return Params(sp.temperature, n)

    requests = [[1, 2]] * 3 + [[7]] * 2 + [[1, 2]]
    params = [Params(1.0)] * 6
    params[5] = Params(0.5)  # same prompt, other sampling params: a separate request
    out = generate_grouped(requests, params, fake_generate, with_n)
    assert calls == [[((1, 2), 3), ((7,), 2), ((1, 2), 1)]]
    assert [o.outputs[0] for o in out] == ["1-0", "1-1", "1-2", "7-0", "7-1", "1-0"]


def test_ub_vllm_is_registered_lazily():
    from lm_eval.api.registry import get_model

    cls = get_model("ub-vllm")
    assert hasattr(cls, "create_from_arg_obj")
    if "vllm" not in sys.modules:
        with pytest.raises(ModuleNotFoundError):
            cls.create_from_arg_obj({"pretrained": "x"})


# ------------------------------------------------------------------------------------------------ CLI routes

@pytest.mark.slow
def test_ub_lm_eval_command_line(tmp_path):
    """``ub tasks-dir`` and ONE ``ub-lm-eval`` run (the CLI, in a subprocess: its start-up and lm-eval's task index cost
    tens of seconds, so one run carries every check of the wrapper's command line):

    - the wrapper adds our task folder and models (ub-oracle, ``--limit``, ``--log_samples``);
    - the offline model gets a stable name: results under ``ub-oracle/`` with ``model_name`` ub-oracle (before, a
      random id that changed every run; one run suffices, since a random id is never the model's name);
    - ``--metadata ids`` on the ``ub_ksn`` group: the ids reach all seven category tasks,
      the categories without any of them are skipped with one line, the group averages over the others; the
      ids of a logit bank select within ``ub_calibration_colors`` in the same run."""
    out = subprocess.run([sys.executable, "-m", "ub_core.cli", "tasks-dir"], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == str(ub_lmeval.tasks_dir())
    ksn_ids = {cat: [p.id for p in load_bank("ksn", categories=[cat])][:2] for cat in ("code_implicit", "shuffling")}
    # the runs leave equal-count items out by default: two items they score
    colour_ids = [it.id for it in calibration_item_set(load_bank("calibration", categories=["colors"]))[0]][:2]
    ids = ksn_ids["code_implicit"] + ksn_ids["shuffling"] + colour_ids
    run = subprocess.run([sys.executable, "-m", "ub_lmeval.cli", "--model", "ub-oracle", "--tasks",
                          "ub_calibration_colors,ub_ksn", "--metadata", json.dumps({"ids": ids}), "--limit", "2",
                          "--output_path", str(tmp_path), "--log_samples"],
                         capture_output=True, text=True, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "ub_ksn_text_explicit: none of the requested ids is in this task; it is skipped" in run.stderr
    (results,) = tmp_path.rglob("results_*.json")
    assert results.parent.name == "ub-oracle"
    res = json.loads(results.read_text())
    assert res["model_name"] == "ub-oracle"
    out = res["results"]
    assert out["ub_ksn_code_implicit"]["ks@100,take_100"] == 1.0
    assert out["ub_ksn_shuffling"]["ks@100,take_100"] == 1.0
    assert out["ub_ksn"]["ks@100,take_100"] == 1.0 and out["ub_ksn"]["sample_len"] == 4
    assert "ks@100,take_100" not in out.get("ub_ksn_text_explicit", {})
    assert out["ub_calibration_colors"]["pm,none"] == pytest.approx(1.0)
    samples = [json.loads(line) for f in tmp_path.rglob("samples_ub_calibration_colors_*.jsonl")
               for line in f.read_text().splitlines()]
    assert [s["doc"]["id"] for s in samples] == colour_ids
    assert list(tmp_path.rglob("samples_ub_ksn_shuffling_*.jsonl"))


@pytest.mark.slow
def test_tiny_local_model_through_hf(task_manager, tiny_llama, monkeypatch):
    """A real local model (untrained, from scratch) through lm-eval's hf backend, one problem, offline. Replies of
    at most 8 tokens (an untrained model never ends one: the task's 64 took ~40 s for the 100 repeats; an answer
    ``{k}`` fits in 8)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = tiny_llama
    res = _evaluate(task_manager, "hf", ["ub_ksn_real_world"], limit=1, gen_kwargs="max_gen_toks=8",
                    model_args=f"pretrained={path},dtype=float32", device="cpu", batch_size=64, log_samples=True)
    row = res["results"]["ub_ksn_real_world"]
    sample = res["samples"]["ub_ksn_real_world"][0]
    assert len(sample["filtered_resps"][0]) == 100
    assert sample["n_valid"] + sample["n_failed"] == 100
    assert row["n_failed,take_100"] > 0  # an untrained model mostly fails to answer in format
    assert 0.0 <= row["ks@1,take_100"] <= 1.0
