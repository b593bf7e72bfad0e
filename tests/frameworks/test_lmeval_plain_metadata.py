"""Plain ``lm_eval`` (the mission's command, no ``ub-lm-eval``) checks ``--metadata`` for our tasks before it loads
a model: a bad value and a near miss of one of our option names end the run with one line and
status 2; a key no ub task takes is named in one warning and the run goes on (it may be another task's)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LM_EVAL = shutil.which("lm_eval") or str(Path(sys.executable).with_name("lm_eval"))


def _lm_eval(tmp_path, *args, timeout=600):
    env = {**os.environ, "UB_LM_EVAL_HOOK": "1"}
    return subprocess.run([LM_EVAL, "--model", "ub-oracle", "--tasks", "ub_ksn_shuffling", "--limit", "1", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=tmp_path, env=env)


@pytest.mark.parametrize("metadata, message", [
    ('{"threshold": "abc"}', "lm_eval: error: ub_ksn: option threshold: expected a number in (0, 1), got 'abc'"),
    ('threshold=abc', "lm_eval: error: ub_ksn: option threshold: expected a number in (0, 1), got 'abc'"),
    ('{"threshhold": 0.5}',
     "lm_eval: error: ub_ksn: option threshhold is not an option of these lm-eval tasks; did you mean threshold?"),
])
def test_a_bad_value_or_a_near_miss_is_one_line_and_status_2(tmp_path, metadata, message):
    run = _lm_eval(tmp_path, "--metadata", metadata)
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr.rstrip().splitlines()[-1] == message
    assert "Traceback" not in run.stderr


def test_an_option_lm_eval_cannot_express_is_refused_with_the_reason(tmp_path):
    run = _lm_eval(tmp_path, "--metadata", '{"ks_ns": "1,10"}')
    assert run.returncode == 2, run.stderr[-2000:]
    last = run.stderr.rstrip().splitlines()[-1]
    assert last.startswith("lm_eval: error: ub_ksn: option ks_ns is not an option of these lm-eval tasks (lm-eval "
                           "reports the metrics its task YAML lists") and "-T ks_ns" in last


@pytest.mark.slow
def test_a_key_no_ub_task_takes_is_named_once_and_the_run_goes_on(tmp_path):
    run = _lm_eval(tmp_path, "--metadata", '{"bogus_key": 1}', "--output_path", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr[-3000:]
    warnings = [line for line in run.stderr.splitlines() if "bogus_key" in line]
    assert len(warnings) == 1 and "not an option of the ub tasks in this run" in warnings[0], warnings
    assert "ks@100" in run.stdout  # the run went on and reported


def test_the_precheck_needs_no_model(tmp_path):
    """The refusal comes before lm-eval loads a model: an unknown model name would fail later, not first."""
    run = subprocess.run([LM_EVAL, "--model", "no-such-model", "--tasks", "ub_ksn_shuffling", "--metadata",
                          '{"threshold": 2}'], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 2 and "option threshold" in run.stderr.rstrip().splitlines()[-1], run.stderr[-2000:]
