"""`ub score --samples LOG.eval` rescores an Inspect run exactly: the task's -T options,
every failure count, and one named line for every sample the log holds no score for."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)

from ub_core import cli  # noqa: E402
from ub_core.oracle import oracle_replies  # noqa: E402
from ub_core.ksn_scoring import score_jsonl  # noqa: E402
from ub_inspect.ksn import ksn  # noqa: E402
from ub_inspect.providers import find_problem  # noqa: E402

IDS = "te-normal-conc,ti-poisson-spread,sh-integer-02,ce-gamma-spread"
FAILING = "sh-integer-02"


class _API(ModelAPI):
    """``ubclitest/halfbad``: every other choice of a request is unreadable (true draws otherwise);
    ``ubclitest/raise``: the provider raises for sh-integer-02 and answers true draws for the rest."""

    def __init__(self, model_name: str, base_url=None, api_key=None, config: GenerateConfig = GenerateConfig(),
                 **kw):
        super().__init__(model_name, base_url, api_key, [], config)
        self.calls: dict[str, int] = {}

    async def generate(self, input, tools, tool_choice, config):
        problem = find_problem(input[-1].text)
        calls = self.calls[problem.id] = self.calls.get(problem.id, 0) + 1
        n = max(1, config.num_choices or 1)
        if self.model_name == "raise" and problem.id == FAILING:
            raise RuntimeError("provider exploded")
        replies = oracle_replies(problem, n, seed=calls)
        if self.model_name == "halfbad":
            replies = ["I cannot say." if i % 2 == 0 else r for i, r in enumerate(replies)]
        return ModelOutput(model=self.model_name, choices=[
            ChatCompletionChoice(message=ChatMessageAssistant(content=r, source="generate"), stop_reason="stop")
            for r in replies], usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))


@modelapi(name="ubclitest")
def _ubclitest():
    return _API


OPTIONS = dict(ids=IDS, gt_size=2000, seed=5, method="exact", ks_ns="10,50", threshold=0.2, n_samples=50)


def _score(capsys, *argv):
    code = cli.main(["score", "--workers", "1", *map(str, argv)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture(scope="module")
def halfbad_log(tmp_path_factory):
    logs = inspect_eval(ksn(**OPTIONS), model="ubclitest/halfbad", log_dir=str(tmp_path_factory.mktemp("logs")),
                        display="none")
    assert logs[0].status == "success"
    return read_eval_log(logs[0].location)


def test_rescoring_uses_the_runs_task_options_and_failure_counts(halfbad_log, capsys):
    code, out, err = _score(capsys, "--samples", halfbad_log.location, "--json")
    assert code == 0 and err == ""
    rows = {r["id"]: r for r in json.loads(out)["problems"]}
    assert set(rows) == set(IDS.split(","))
    for sample in halfbad_log.samples:
        want, row = sample.scores["ksn_scorer"].value, rows[sample.id]
        for key in ("ks@10", "ks@50", "p@10", "p@50", "wdz", "w1_debiased", "jsd", "n_valid", "n_failed"):
            got = math.nan if row[key] is None else row[key]  # the scorer stores NaN for "short"
            assert got == want[key] or (math.isnan(got) and math.isnan(want[key])), (sample.id, key)
        assert row["n_failed"] > 0  # every other reply was unreadable
    # the options mattered: the defaults (10,000 draws, seed 0, paper dispatch) give other p-values
    lines = [json.dumps({"id": s.id, "values": s.scores["ksn_scorer"].metadata["values"]})
             for s in halfbad_log.samples]
    default = {r["id"]: r for r in score_jsonl(lines, ns=(10, 50)).rows}
    assert any(default[i]["p@10"] != rows[i]["p@10"] for i in rows)
    assert all(default[i]["n_failed"] == 0 for i in rows)


def test_explicit_options_override_the_logs(halfbad_log, capsys):
    code, out, _ = _score(capsys, "--samples", halfbad_log.location, "--json", "--ns", "20", "--threshold", "0.5")
    rows = json.loads(out)["problems"]
    assert code == 0 and all("ks@20" in r and "ks@50" not in r for r in rows)


def test_a_sample_without_a_score_is_named(halfbad_log, tmp_path, capsys):
    log = read_eval_log(halfbad_log.location)
    for s in log.samples:
        if s.id == FAILING:
            s.scores = None
    path = tmp_path / "unscored.eval"
    write_eval_log(log, str(path))
    code, out, err = _score(capsys, "--samples", path, "--json")
    assert code == 1 and len(json.loads(out)["problems"]) == 3
    assert err == f"ub: Inspect log unscored.eval: sample {FAILING} (epoch 1): not scored (no ksn_scorer score " \
                  f"with stored values)\n"
    # nothing scored at all: one line per sample, then the error, exit 2
    for s in log.samples:
        s.scores = None
    write_eval_log(log, str(path))
    code, out, err = _score(capsys, "--samples", path)
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 5
    assert lines[-1] == f"ub: error: no scorable lines in {path} (4 problem(s), see above)"


@pytest.mark.slow
def test_a_sample_that_errored_is_named(tmp_path, capsys):
    logs = inspect_eval(ksn(**OPTIONS), model="ubclitest/raise", log_dir=str(tmp_path), display="none",
                        fail_on_error=False)
    assert logs[0].status == "success"
    code, out, err = _score(capsys, "--samples", logs[0].location, "--json")
    assert code == 1 and len(json.loads(out)["problems"]) == 3
    assert err.startswith(f"ub: Inspect log {logs[0].location.split('/')[-1]}: sample {FAILING} (epoch 1): not "
                          f"scored (sample error: RuntimeError") and err.count("\n") == 1


def test_a_log_with_error_status_is_not_a_clean_exit(tmp_path, capsys):
    logs = inspect_eval(ksn(**OPTIONS), model="ubclitest/raise", log_dir=str(tmp_path), display="none")
    assert logs[0].status == "error"
    code, out, err = _score(capsys, "--samples", logs[0].location)
    first = err.splitlines()[0]
    assert first.startswith(f"ub: Inspect log {logs[0].location.split('/')[-1]} has status 'error'")
    assert code == (1 if "ALL" in out else 2)
