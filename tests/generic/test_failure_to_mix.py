"""The worked plug-in ``examples/failure_to_mix`` (package ``ub-failure-to-mix``), installed as ``pip install -e``
leaves it (:mod:`support.plugin_install`, as ``examples/custom_bank`` is tested): its Inspect task
``ub_failure_to_mix/mix`` and its lm-eval task ``ub_mix`` run on the offline models, with step-likeness S small on
``ub/oracle`` (within the spread of a perfect sampler) and 1 on ``ub/collapse`` (always the likelier answer: a step
function); ``ub report`` shows those runs in the plug-in's own section, labelled with their bank; and the project's
generic metric-spec tests pass with the plug-in installed. The four framework runs are made once per module."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from support.plugin_install import installed

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "failure_to_mix"
PACKAGE = EXAMPLE / "ub_failure_to_mix"
MODELS = ("oracle", "collapse")


@pytest.fixture(scope="module")
def ftm(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    with installed(EXAMPLE, tmp_path_factory.mktemp("site"), mp, ("ub_failure_to_mix",)):
        yield tmp_path_factory.mktemp("runs")
    mp.undo()


@pytest.fixture(scope="module")
def inspect_logs(ftm):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval

    from ub_failure_to_mix.task import mix

    return {m: inspect_eval(mix(), model=f"ub/{m}", log_dir=str(ftm / "inspect"), display="none")[0] for m in MODELS}


@pytest.fixture(scope="module")
def lmeval_results(ftm):
    """The oracle through ``ub-lm-eval --include_path`` as a user runs it (a process of its own, samples logged for
    the report), the collapsed model in this process (``simple_evaluate``: one lm-eval start less)."""
    pytest.importorskip("lm_eval")
    import json

    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    import ub_lmeval  # noqa: F401  (registers ub-collapse)

    run = subprocess.run([sys.executable, "-m", "ub_lmeval.cli", "--model", "ub-oracle", "--tasks", "ub_mix",
                          "--include_path", str(PACKAGE), "--output_path", str(ftm / "lmeval"), "--log_samples"],
                         capture_output=True, text=True, timeout=300, cwd=ftm)
    assert run.returncode == 0, run.stderr[-2000:]
    (results,) = (ftm / "lmeval").glob("**/results_*.json")
    manager = TaskManager(include_path=str(PACKAGE), include_defaults=False)
    return {"oracle": json.loads(results.read_text()),
            "collapse": simple_evaluate(model="ub-collapse", tasks=["ub_mix"], task_manager=manager)}


def _inspect_metrics(log) -> dict[str, float]:
    return {k: v.value for k, v in log.results.scores[0].metrics.items()}


def test_inspect_task_reports_step_likeness_first(inspect_logs):
    for log in inspect_logs.values():
        assert log.status == "success" and log.eval.task == "ub_failure_to_mix/mix", (log.status, log.error)
        metrics = _inspect_metrics(log)
        assert next(iter(metrics)) == "step_likeness"  # the run's headline
        assert {"step_likeness_stderr", "step_likeness_perfect", "flip_rate", "flip_gap@100", "ks@100"} <= set(metrics)
        assert len(log.samples) == 21 and log.eval.task_args["answer_instruction"] is True
    oracle, collapse = (_inspect_metrics(inspect_logs[m]) for m in MODELS)
    assert collapse["step_likeness"] == 1.0 and collapse["step_likeness_stderr"] == 0.0
    # a perfect sampler: S near its exact expectation at n = 100 (0.1233), within 4 of its standard errors
    assert math.isclose(oracle["step_likeness_perfect"], 0.12329650949526716, rel_tol=1e-9)
    assert abs(oracle["step_likeness"] - oracle["step_likeness_perfect"]) < 4 * oracle["step_likeness_stderr"]


def test_lmeval_task_reports_step_likeness(lmeval_results):
    rows = {m: lmeval_results[m]["results"]["ub_mix"] for m in MODELS}
    assert rows["collapse"]["step_likeness,take_100"] == 1.0
    oracle = rows["oracle"]
    assert math.isclose(oracle["step_likeness_perfect,take_100"], 0.12329650949526716, rel_tol=1e-9)
    assert abs(oracle["step_likeness,take_100"] - 0.1233) < 4 * oracle["step_likeness_stderr,take_100"]
    assert {"flip_rate,take_100", "flip_gap@100,take_100", "ks@100,take_100"} <= set(oracle)
    assert lmeval_results["oracle"]["higher_is_better"]["ub_mix"]["step_likeness"] is False


def test_report_shows_the_plugin_runs_in_their_own_section(ftm, inspect_logs, lmeval_results, tmp_path):
    """Beside a built-in KS@N run of the same model, the plug-in's runs are rows of their own section, labelled with
    their bank, and the built-in run is not relabelled by a setting it never had (``bank=default``)."""
    from inspect_ai import eval as inspect_eval

    from ub_core.report import build_report
    from ub_inspect.ksn import ksn

    inspect_eval(ksn(categories="shuffling", n_samples=20), model="ub/oracle", log_dir=str(ftm / "inspect"),
                 display="none")
    result = build_report([ftm / "inspect", ftm / "lmeval"], tmp_path / "report")
    md = (tmp_path / "report" / "summary.md").read_text()
    assert "## Failure to Mix (step-likeness S" in md and "bank=" not in md
    section = md.split("## Failure to Mix", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ub-")]
    assert sorted(r.split(" | ")[0] + r.split(" | ")[1] for r in rows) == [
        "| ub-collapseinspect", "| ub-oracleinspect", "| ub-oraclelm-eval"]
    assert all(" | ftm | 21 | " in r for r in rows)
    lead = md.split("## UnpredictaBench leaderboard", 1)[1].split("\n## ", 1)[0]
    assert "ub-oracle" in lead and " 21 " not in lead  # the shuffling run only, not the plug-in's 21 problems
    import json

    table = json.loads((tmp_path / "report" / "summary.json").read_text())["tables"]["step_likeness_leaderboard"]
    assert table["higher_is_better"]["step_likeness"] is False and table["higher_is_better"]["ks@100"] is True
    assert result is not None


def test_the_prompt_without_our_answer_instruction(ftm):
    from inspect_ai import eval as inspect_eval

    from ub_core.problems.base import instruction_for
    from ub_failure_to_mix.task import mix
    from ub_lmeval.ksn_hooks import ksn_dataset

    log = inspect_eval(mix(answer_instruction=False, n_samples=5), model="ub/oracle", log_dir=str(ftm / "bare"),
                       display="none")[0]
    assert log.status == "success" and log.samples[3].input == (
        'Simulate one toss of a weighted coin that comes up "1" 15% of the time and "0" 85% of the time. Answer with '
        'one token: the outcome of your toss.')
    assert all(s.scores for s in log.samples)
    docs = ksn_dataset(bank="ftm", answer_instruction=False)["test"]
    assert docs[3]["prompt"] == log.samples[3].input
    with_instruction = ksn_dataset(bank="ftm")["test"][3]["prompt"]
    assert with_instruction.endswith(instruction_for("integer")) and with_instruction.startswith(docs[3]["prompt"])
    with pytest.raises(ValueError, match="option answer_instruction: true or false"):
        ksn_dataset(bank="ftm", answer_instruction="maybe")


@pytest.mark.slow
def test_the_generic_metric_spec_tests_pass_with_the_plugin_installed(ftm):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          str(ROOT / "tests/generic/test_metric_spec.py")], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:]
    probe = subprocess.run([sys.executable, "-c", "from ub_core.metric_spec import metric_keys; "
                            "print('flip_rate' in metric_keys('ksn', bank='ftm'))"], capture_output=True, text=True)
    assert probe.stdout.strip() == "True", probe.stderr  # the subprocess saw the plug-in


def test_the_example_stays_small():
    files = [p for p in PACKAGE.iterdir() if p.suffix in (".py", ".yaml")]
    assert sum(len(p.read_text().splitlines()) for p in files) <= 200
