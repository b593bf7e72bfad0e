"""Inspect AI end to end, offline: the ksn task with the ub/ providers, retries and top-ups, log rescoring,
and the tar reducers on our task and on an MCQ task written in the inspect_evals style."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Epochs, Task, eval as inspect_eval, task  # noqa: E402
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.scorer import choice  # noqa: E402
from inspect_ai.solver import generate, multiple_choice  # noqa: E402

from ub_inspect.ksn.solver import CollectedValues  # noqa: E402

from ub_core import cli  # noqa: E402
from ub_core.oracle import oracle_replies  # noqa: E402
from ub_inspect.ksn import ksn  # noqa: E402
from ub_inspect.providers import find_problem  # noqa: E402


# ------------------------------------------------------------------------------------------------ test providers

class _ScriptedAPI(ModelAPI):
    """Test provider: ``ubtest/onechoice`` answers one oracle draw per request whatever num_choices says (like
    ``hf/``), every second reply garbage; ``ubtest/garbage`` never answers validly; ``ubtest/mcq`` answers an
    MCQ with a letter, ``ubtest/mcq-random`` with a random letter."""

    def __init__(self, model_name: str, base_url=None, api_key=None, config: GenerateConfig = GenerateConfig(),
                 **kw):
        super().__init__(model_name, base_url, api_key, [], config)
        self.calls: dict[str, int] = {}  # per prompt: samples run concurrently
        self.rng = random.Random(0)

    async def generate(self, input, tools, tool_choice, config):
        text = input[-1].text
        calls = self.calls[text] = self.calls.get(text, 0) + 1
        n = 1 if self.model_name in ("onechoice", "mcq", "mcq-random") else max(1, config.num_choices or 1)
        if self.model_name == "onechoice":
            problem = find_problem(text)
            replies = ["I am not sure." if calls % 2 == 0 else oracle_replies(problem, 1, seed=calls)[0]]
        elif self.model_name == "garbage":
            replies = ["{banana split}"] * n
        elif self.model_name == "mcq":
            replies = ["ANSWER: B"]
        else:
            replies = [f"ANSWER: {self.rng.choice('ABCD')}"]
        return ModelOutput(model=self.model_name, choices=[
            ChatCompletionChoice(message=ChatMessageAssistant(content=r, source="generate"), stop_reason="stop")
            for r in replies], usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))


@modelapi(name="ubtest")
def _ubtest():
    return _ScriptedAPI


def _run(tasks, model, tmp_path, **kw):
    logs = inspect_eval(tasks, model=model, log_dir=str(tmp_path), display="none", **kw)
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def _metric(log, name):
    """A run metric: our scorers report all of them in one score (ub_inspect.metrics)."""
    (score,) = log.results.scores
    return score.metrics[name].value


# ------------------------------------------------------------------------------------------------ ksn

@pytest.mark.slow
def test_oracle_full_marks_on_42_problems(tmp_path):
    """KS@N = 100% for the Random Machine: with 42 problems x 7 N, the chance of any false rejection at
    p < 1e-4 is at most 294e-4 ~ 3%; the seed is fixed, so the run is deterministic."""
    log = _run(ksn(limit_per_category=6), "ub/oracle", tmp_path, seed=7)
    assert len(log.samples) == 42
    for n in (1, 2, 5, 10, 20, 50, 100):
        assert _metric(log, f"ks@{n}") == 1.0
    first = log.results.scores[0].metrics  # the headline, per category too
    per_cat = {k: v.value for k, v in first.items() if k in {s.metadata["category"] for s in log.samples}}
    assert len(per_cat) == 7 and set(per_cat.values()) == {1.0} and first["ks@100"].value == 1.0
    assert _metric(log, "retry_rate") == 0.0
    assert _metric(log, "attempts_per_valid") == 1.0
    # one request per problem: num_choices carried all 100 samples
    sample = log.samples[0]
    assert sample.scores["ksn_scorer"].metadata["requests"] == 1
    assert len(sample.scores["ksn_scorer"].metadata["values"]) == 100


@pytest.mark.slow
def test_log_reads_back_and_rescoring_reproduces_the_scorer(tmp_path, capsys):
    log = _run(ksn(categories="shuffling,real_world", ks_ns="10,100"), "ub/oracle", tmp_path, seed=3)
    back = read_eval_log(log.location)
    assert back.results is not None and set(back.results.scores[0].metrics) >= {"ks@10", "ks@100", "wdz"}
    assert cli.main(["score", "--samples", log.location, "--json", "--ns", "10,100", "--workers", "1"]) == 0
    rep = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in rep["problems"]}
    assert len(rows) == 50
    for sample in back.samples:
        value = sample.scores["ksn_scorer"].value
        row = rows[sample.id]
        assert row["ks@100"] == value["ks@100"] and row["ks@10"] == value["ks@10"]
        assert row["p@100"] == pytest.approx(value["p@100"], rel=1e-12)
        assert row["wdz"] == pytest.approx(value["wdz"], rel=1e-12)
        assert row["jsd"] == pytest.approx(value["jsd"], rel=1e-12)


def test_collapse_scores_zero_at_100(tmp_path):
    log = _run(ksn(categories=["code_explicit", "multimodal"], limit_per_category=6), "ub/collapse", tmp_path)
    assert _metric(log, "ks@100") == 0.0
    assert _metric(log, "ks@1") == 1.0


def test_top_ups_and_retries_are_counted(tmp_path):
    """A provider that returns one choice per request (like hf/) and fails every second reply: calls 1, 3, ...,
    39 are valid, so 20 values take 39 requests with 19 failures; slot 1 succeeds first time, slots 2-20 each
    succeed on their second attempt (retry rate 19/20, 39/20 attempts per valid value)."""
    log = _run(ksn(categories="text_explicit", limit_per_category=2, n_samples=20, ks_ns="5,20"),
               "ubtest/onechoice", tmp_path)
    for sample in log.samples:
        value = sample.scores["ksn_scorer"].value
        meta = sample.scores["ksn_scorer"].metadata
        assert value["n_valid"] == 20 and value["n_failed"] == 19 and value["attempts"] == 39
        assert meta["requests"] == 39 and len(meta["failures"]) == 19
    assert _metric(log, "attempts_per_valid") == pytest.approx(39 / 20)
    assert _metric(log, "retry_rate") == pytest.approx(19 / 20)


def test_unparseable_slots_are_skipped_after_five_attempts(tmp_path):
    log = _run(ksn(categories="text_explicit", limit_per_category=1, n_samples=10, max_attempts=5),
               "ubtest/garbage", tmp_path)
    value = log.samples[0].scores["ksn_scorer"].value
    meta = log.samples[0].scores["ksn_scorer"].metadata
    assert value["n_valid"] == 0 and value["attempts"] == 50 and meta["skipped_slots"] == 10
    assert value["ks@1"] == 0.0  # short counts as a fail
    assert meta["requests"] == 5  # each round asked for all open slots at once


def test_list_prompting_merges_replies(tmp_path):
    log = _run(ksn(categories="code_explicit", limit_per_category=2, list_size=10, ks_ns="10,100"),
               "ub/oracle", tmp_path, seed=1)
    for sample in log.samples:
        meta = sample.scores["ksn_scorer"].metadata
        assert "Give 10 independent values" in sample.input
        assert len(meta["values"]) == 100 and meta["requests"] == 1
        assert len(sample.store_as(CollectedValues).outputs) == 10
    assert _metric(log, "ks@100") == 1.0


def test_task_options_coerce_and_validate():
    t = ksn(categories="shuffling", ks_ns="1,10,50", n_samples="50")
    assert len(t.dataset) == 20
    with pytest.raises(ValueError, match="option method"):
        ksn(method="magic")
    with pytest.raises(ValueError, match="option ks_ns"):
        ksn(ks_ns="1,ten")
    with pytest.raises(ValueError, match="needs -T ground_truth|ground_truth"):
        ksn(dataset="some/hf-id")


def test_oracle_logprobs_are_the_true_outcome_probabilities(tmp_path):
    from ub_core.problems import get_problem

    p = get_problem("rw-os_concurrency-01")  # four colour labels, 1/4 each
    log = _run(Task(dataset=MemoryDataset([Sample(input=p.full_prompt)]), solver=generate()),
               "ub/oracle", tmp_path, logprobs=True, top_logprobs=4, seed=2)
    out = log.samples[0].output.choices[0]
    top = {t.token: t.logprob for t in out.logprobs.content[0].top_logprobs}
    import math

    assert set(top) == {"Red", "Blue", "Green", "Yellow"}
    assert math.exp(top["Red"]) == pytest.approx(0.25)


# ------------------------------------------------------------------------------------------------ tar reducer

@task
def _mcq_arithmetic():
    """An MCQ task in the inspect_evals style (record_to_sample, multiple_choice solver, choice scorer)."""

    def record_to_sample(record):
        return Sample(input=record["question"], choices=record["choices"], target=record["answer"],
                      id=record["id"])

    records = [{"id": f"q{i}", "question": f"What is {i} + {i}?",
                "choices": [str(2 * i - 1), str(2 * i), str(2 * i + 1), str(2 * i + 2)], "answer": "B"}
               for i in range(1, 9)]
    return Task(dataset=MemoryDataset([record_to_sample(r) for r in records]), solver=multiple_choice(),
                scorer=choice())


def test_tar_on_mcq_task(tmp_path):
    reducers = ["mean", "ub_inspect/tar_a", "ub_inspect/tar_r"]
    stable = _run(_mcq_arithmetic(), "ubtest/mcq", tmp_path, epochs=Epochs(4, reducers))
    by_reducer = {(s.name, s.reducer): s for s in stable.results.scores}
    assert by_reducer[("choice", "mean")].metrics["accuracy"].value == 1.0
    assert by_reducer[("choice", "ub_inspect/tar_a")].metrics["accuracy"].value == 1.0  # TARa@4
    assert by_reducer[("choice", "ub_inspect/tar_r")].metrics["accuracy"].value == 1.0  # TARr@4
    unstable = _run(_mcq_arithmetic(), "ubtest/mcq-random", tmp_path, epochs=Epochs(4, reducers[1:]))
    by_reducer = {(s.name, s.reducer): s for s in unstable.results.scores}
    # four uniform random letters agree with probability 4 * (1/4)^4 = 1/64: with 8 questions TARa is small
    assert by_reducer[("choice", "ub_inspect/tar_a")].metrics["accuracy"].value <= 0.25
    assert by_reducer[("choice", "ub_inspect/tar_r")].metrics["accuracy"].value <= 0.25


def test_tar_on_our_task(tmp_path):
    log = _run(ksn(categories="shuffling", limit_per_category=3, n_samples=10, ks_ns="10"), "ub/collapse",
               tmp_path, epochs=Epochs(3, ["mean", "ub_inspect/tar"]))
    # the earlier reducer name still works (tar = tar_a)
    (tar,) = [s for s in log.results.scores if s.reducer == "ub_inspect/tar"]
    assert tar.metrics["ks@10"].value == 1.0  # a collapsed model answers identically every epoch
    oracle = _run(ksn(categories="shuffling", limit_per_category=3, n_samples=10, ks_ns="10"), "ub/oracle",
                  tmp_path, epochs=Epochs(3, ["ub_inspect/tar_a"]), seed=5)
    (tar,) = [s for s in oracle.results.scores if s.reducer == "ub_inspect/tar_a"]
    assert tar.metrics["ks@10"].value == 0.0  # fresh random draws never repeat the same 10 values


# ------------------------------------------------------------------------------------------------ hf/ provider

@pytest.mark.slow
def test_tiny_local_model_through_hf_provider(tiny_llama, tmp_path, monkeypatch, fast_hf_batching):
    """A real (untrained) local model through Inspect's hf/ provider: one choice per request, so every answer
    slot is its own request; its replies are mostly unparseable, so the retry path runs for real."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    task = ksn(categories="text_explicit,code_explicit,multimodal,real_world,shuffling", limit_per_category=1,
               n_samples=3, max_attempts=2, ks_ns="1,2,3")
    log = _run(task, f"hf/{tiny_llama}", tmp_path, model_args={"device": "cpu"})
    assert len(log.samples) == 5
    total_failed = 0
    for sample in log.samples:
        value = sample.scores["ksn_scorer"].value
        meta = sample.scores["ksn_scorer"].metadata
        # hf/: one per request
        assert value["attempts"] == meta["requests"] == len(sample.store_as(CollectedValues).outputs)
        assert value["attempts"] == value["n_valid"] + value["n_failed"]
        assert 3 <= value["attempts"] <= 6 and value["n_valid"] <= 3
        total_failed += value["n_failed"]
    assert total_failed > 0
