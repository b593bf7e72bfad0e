"""Every lm-eval entry point works with the package installed (the ``.pth`` hook loaded at interpreter start):
the console script ``lm_eval``, ``python -m lm_eval``, ``lm_eval validate``, ``lm_eval ls tasks``, and
``lm_eval.simple_evaluate`` / ``lm_eval.evaluator.evaluate`` from Python; and every option the run cannot honour is
refused by the command itself, in one line with status 2, before a model loads. Inspect's display counts our
samples (done / total). ``.ci/fresh_venv_routes.sh`` runs the same doors from a fresh, non-editable install.

What each door needs of us: runpy asks the loader of ``lm_eval.__main__`` (which our import hook wraps) for
``get_code``; ``python -m lm_eval`` runs that module's code as ``__main__``, so the one-line refusal must come from
``Run._execute``, which every door calls; and the refusal comes before the tasks are built and the model loaded."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")

BIN = Path(sys.executable).parent
LM_EVAL = shutil.which("lm_eval") or str(BIN / "lm_eval")
UB_LM_EVAL = shutil.which("ub-lm-eval") or str(BIN / "ub-lm-eval")
PY_M = [sys.executable, "-m", "lm_eval"]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "UB_LM_EVAL_HOOK": "1"}


def _run(cmd: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=ENV)


def _first_line(run: subprocess.CompletedProcess) -> str:
    return next((line for line in (run.stdout + run.stderr).splitlines() if line.strip()), "")


@pytest.mark.parametrize("cmd", [PY_M, [LM_EVAL]], ids=["python -m lm_eval", "lm_eval"])
def test_help_works_with_the_package_installed(cmd, tmp_path):
    run = _run([*cmd, "--help"], tmp_path)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert _first_line(run).startswith("usage: lm-eval"), _first_line(run)


@pytest.mark.parametrize("cmd, args, needle", [
    ([LM_EVAL], ["--tasks", "ub_dice", "--metadata", '{"n": 200}'],
     "lm_eval: error: ub_dice_independent: metadata n=200 contradicts this task's 1000 replies per law"),
    (PY_M, ["--tasks", "ub_dice_batch", "--metadata", '{"temperature": 0.5}'],
     "lm_eval: error: ub_dice: option temperature is not an option of these lm-eval tasks (lm-eval takes it as "
     "--gen_kwargs)"),
    ([LM_EVAL], ["--tasks", "ub_ksn_shuffling", "--model_args", "bogus=1"],
     "lm_eval: error: --model ub-oracle: unknown --model_args bogus"),
    ([UB_LM_EVAL], ["--tasks", "ub_ksn_shuffling", "--model_args", "seed=-1"],
     "ub-lm-eval: error: --model ub-oracle: --model_args option seed: expected an integer >= 0"),
], ids=["group member", "gen_kwargs", "model_args", "ub-lm-eval model_args"])
def test_an_option_the_run_cannot_honour_is_one_line_before_the_model_loads(cmd, args, needle, tmp_path):
    run = _run([*cmd, "--model", "ub-oracle", *args, "--limit", "1"], tmp_path)
    assert run.returncode == 2, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert run.stderr.rstrip().splitlines()[-1].startswith(needle), run.stderr[-1000:]
    # refused before lm-eval built a task or loaded a model
    assert "Building contexts" not in run.stderr and "Running " not in run.stderr, run.stderr[-2000:]


@pytest.mark.slow
def test_validate_through_python_m(tmp_path):
    """``python -m lm_eval validate`` finds our groups (``ls tasks`` through the console script is run by
    test_lmeval_plugin.py and the fresh venv; both doors reach the same command once lm-eval has started)."""
    ok = _run([*PY_M, "validate", "--tasks", "ub_dice,ub_tar"], tmp_path)
    assert ok.returncode == 0 and "All tasks found" in ok.stdout + ok.stderr, ok.stderr[-2000:]


@pytest.mark.slow
def test_simple_evaluate_and_evaluate_from_python():
    """A lab's script: ``lm_eval.simple_evaluate`` with lm-eval's default task manager (built-ins + ours through the
    hook) and ``lm_eval.evaluator.evaluate`` on a task dict, with our model registered by the hook."""
    import lm_eval
    from lm_eval.evaluator import evaluate
    from lm_eval.tasks import TaskManager, get_task_dict

    manager = TaskManager()  # include_defaults=True: the hook adds our folder
    res = lm_eval.simple_evaluate(model="ub-oracle", tasks=["ub_dice_batch"], limit=2, task_manager=manager)
    row = res["results"]["ub_dice_batch"]
    assert row["passed,none"] == 1.0 and row["sample_len"] == 2, row
    from lm_eval.api.registry import get_model

    lm = get_model("ub-collapse")()
    out = evaluate(lm=lm, task_dict=get_task_dict(["ub_ksn_shuffling"], manager), limit=2)
    row = out["results"]["ub_ksn_shuffling"]
    assert row["ks@100,take_100"] == 0.0 and row["sample_len"] == 2, row  # collapse fails every KS test


@pytest.mark.slow
def test_inspects_display_counts_our_samples(tmp_path):
    """Inspect's own display shows samples done / total for our tasks (its plain display's ``Samples: d/t``; its
    full-screen display has the same count and no time estimate: Inspect 0.3.285 builds its progress bar with
    ``show_eta=False``)."""
    run = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "ub_inspect/dice", "--model", "ub/oracle",
                          "--limit", "3", "--display", "plain", "--log-dir", str(tmp_path / "logs")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**ENV, "COLUMNS": "300"})
    assert run.returncode == 0, run.stderr[-2000:]
    counts = re.findall(r"Samples:\s*(\d+)/\s*(\d+)", run.stdout + run.stderr)
    assert counts and {int(t) for _, t in counts} == {3}, (run.stdout + run.stderr)[-2000:]
