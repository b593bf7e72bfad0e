"""``inspect eval-retry`` and ``inspect score`` from an editable install (the README's) and from a wheel (issue 26,
finding 4), each in a fresh virtual environment with nothing but this package and its ``inspect`` extra.

Inspect recorded the editable install's task module as a loose task file (the distribution, ``unpredictabench``,
is not named like the import package, ``ub_inspect``), and ``eval-retry`` then failed with
``ModuleNotFoundError: No module named '<checkout>/ub_inspect/ksn/ksn'``. Both installs must now retry an
interrupted run to completion and re-score its log. One venv per test session holds the dependencies, installed
with a wheel of this package built once; each test installs the package its own way on top of it (``--no-deps``,
seconds): the checkout editable, or that wheel again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

# run inside the venv: cut an Inspect log back to its first 3 samples and mark it interrupted, as a crashed run
# leaves it (eval-retry then runs the missing samples and keeps the others)
_INTERRUPT = """
import sys
from inspect_ai.log import EvalError, read_eval_log, write_eval_log
log = read_eval_log(sys.argv[1])
log.samples, log.status = log.samples[:3], "error"
log.error = EvalError(message="interrupted", traceback="", traceback_ansi="")
write_eval_log(log, sys.argv[1])
"""

_SUMMARY = """
import json, sys
from inspect_ai.log import headline_metric, read_eval_log
log = read_eval_log(sys.argv[1])
head = headline_metric(log)
print(json.dumps({"status": log.status, "samples": len(log.samples), "task_file": log.eval.task_file,
                  "headline": [head.name, head.metric.value]}))
"""


def _run(venv_dir: Path, args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """A command of the venv, from a folder outside the checkout and without this process's PYTHONPATH, so it
    imports the package as installed there."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(args, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (args, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


def _source_copy(dest: Path) -> Path:
    """The package sources without tests, logs or build output (a wheel is built from this, not in the checkout)."""
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(".git", "tests", "logs", "build", "dist", "*.egg-info",
                                                              "__pycache__", ".pytest_cache", "out"))
    return dest


@pytest.fixture(scope="session")
def inspect_venv(tmp_path_factory) -> tuple[Path, Path]:
    """A fresh venv with this package's ``inspect`` extra installed, and the wheel it was installed from (built once
    from a copy of the sources; the wheel test installs this same wheel again)."""
    base = tmp_path_factory.mktemp("inspect_venv")
    venv_dir = base / "venv"
    venv.EnvBuilder(with_pip=True).create(venv_dir)
    src = _source_copy(base / "src")
    python = str(venv_dir / "bin" / "python")
    wheels = base / "wheels"
    _run(venv_dir, [python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)], base, timeout=900)
    (wheel,) = wheels.glob("unpredictabench-*.whl")
    _run(venv_dir, [python, "-m", "pip", "install", "-q", f"{wheel}[inspect]"], base, timeout=900)
    return venv_dir, wheel


def _retry_and_rescore(venv_dir: Path, work: Path, install: list[str], expect_origin: Path) -> None:
    python = str(venv_dir / "bin" / "python")
    _run(venv_dir, [python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", *install], work,
         timeout=900)
    where = _run(venv_dir, [python, "-c", "import ub_inspect; print(ub_inspect.__file__)"], work).stdout.strip()
    assert Path(where).resolve().is_relative_to(expect_origin.resolve()), where
    logs, retried = work / "logs", work / "retried"
    _run(venv_dir, ["inspect", "eval", "ub_inspect/ksn", "-T", "limit_per_category=1", "--model", "ub/oracle",
                    "--log-dir", str(logs), "--display", "none"], work)
    (log,) = logs.glob("*.eval")
    first = json.loads(_run(venv_dir, [python, "-c", _SUMMARY, str(log)], work).stdout)
    assert first["task_file"] is None and first["samples"] == 7  # a package task, not a loose file
    _run(venv_dir, [python, "-c", _INTERRUPT, str(log)], work)
    _run(venv_dir, ["inspect", "eval-retry", str(log), "--log-dir", str(retried), "--display", "none"], work)
    (again,) = retried.glob("*.eval")
    done = json.loads(_run(venv_dir, [python, "-c", _SUMMARY, str(again)], work).stdout)
    assert done == {"status": "success", "samples": 7, "task_file": None, "headline": ["ks@100", 1.0]}
    # the retried log re-scores with Inspect's own command (the scorer found by the name the log records)
    _run(venv_dir, ["inspect", "score", str(again), "--overwrite", "--action", "overwrite", "--display", "none"],
         work)
    assert json.loads(_run(venv_dir, [python, "-c", _SUMMARY, str(again)], work).stdout) == done


def test_eval_retry_from_an_editable_install(inspect_venv, tmp_path):
    """The README's install: ``pip install -e .[inspect]`` of this checkout."""
    venv_dir, _ = inspect_venv
    _retry_and_rescore(venv_dir, tmp_path, ["-e", str(ROOT)], ROOT)


def test_eval_retry_from_a_wheel_install(inspect_venv, tmp_path):
    venv_dir, wheel = inspect_venv
    site = Path(_run(venv_dir, [str(venv_dir / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp_path).stdout.strip())
    _retry_and_rescore(venv_dir, tmp_path, [str(wheel)], site)
