"""``inspect eval-retry`` and ``inspect score`` from an editable install (the README's) and from a wheel, each
installed into a virtual environment of its own.

Inspect records where a task came from; it must record our tasks as package tasks (``task_file`` None), or
``eval-retry`` looks for a loose file such as ``<checkout>/ub_inspect/ksn/ksn`` and fails. Both installs must retry an
interrupted run to completion and re-score its log. The venv sees the system's packages (this package's
dependencies: a fresh resolution of them is what ``.ci/fresh_venv_routes.sh`` checks) and installs this package in
its own site-packages, which come first: from a wheel built once, or the checkout in editable mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]



def _interrupt(path: Path) -> None:
    """Cut an Inspect log back to its first 3 samples and mark it interrupted, as a crashed run leaves it
    (eval-retry then runs the missing samples and keeps the others)."""
    from inspect_ai.log import EvalError, read_eval_log, write_eval_log

    log = read_eval_log(str(path))
    log.samples, log.status = log.samples[:3], "error"
    log.error = EvalError(message="interrupted", traceback="", traceback_ansi="")
    write_eval_log(log, str(path))


def _summary(path: Path) -> dict:
    from inspect_ai.log import headline_metric, read_eval_log

    log = read_eval_log(str(path))
    head = headline_metric(log)
    return {"status": log.status, "samples": len(log.samples), "task_file": log.eval.task_file,
            "headline": [head.name, head.metric.value]}


def _run(venv_dir: Path, args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """A command of the venv (its interpreter: the venv has no scripts of its own for the system's packages), from a
    folder outside the checkout and without this process's PYTHONPATH, so it imports the package as installed there."""
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
    """A venv over the system's packages, and a wheel of this package built once from a copy of the sources."""
    base = tmp_path_factory.mktemp("inspect_venv")
    venv_dir = base / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=True).create(venv_dir)
    src = _source_copy(base / "src")
    wheels = base / "wheels"
    _run(venv_dir, [str(venv_dir / "bin" / "python"), "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(wheels), str(src)], base, timeout=900)
    (wheel,) = wheels.glob("unpredictabench-*.whl")
    return venv_dir, wheel


def _retry_and_rescore(venv_dir: Path, work: Path, install: list[str], expect_origin: Path,
                       rescore: bool = True) -> None:
    python = str(venv_dir / "bin" / "python")
    _run(venv_dir, [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--force-reinstall",
                    *install], work, timeout=900)
    where = _run(venv_dir, [python, "-c", "import ub_inspect; print(ub_inspect.__file__)"], work).stdout.strip()
    assert Path(where).resolve().is_relative_to(expect_origin.resolve()), where
    logs, retried = work / "logs", work / "retried"
    inspect = [python, "-m", "inspect_ai"]
    _run(venv_dir, [*inspect, "eval", "ub_inspect/ksn", "-T", "limit_per_category=1", "--model", "ub/oracle",
                    "--log-dir", str(logs), "--display", "none"], work)
    (log,) = logs.glob("*.eval")
    first = _summary(log)
    assert first["task_file"] is None and first["samples"] == 7  # a package task, not a loose file
    _interrupt(log)
    _run(venv_dir, [*inspect, "eval-retry", str(log), "--log-dir", str(retried), "--display", "none"], work)
    (again,) = retried.glob("*.eval")
    done = _summary(again)
    assert done == {"status": "success", "samples": 7, "task_file": None, "headline": ["ks@100", 1.0]}
    if rescore:  # the retried log re-scores with Inspect's own command (the scorer found by the name the log records)
        _run(venv_dir, [*inspect, "score", str(again), "--overwrite", "--action", "overwrite", "--display", "none"],
             work)
        assert _summary(again) == done


def test_eval_retry_from_an_editable_install(inspect_venv, tmp_path):
    """The README's install: ``pip install -e .[inspect]`` of this checkout."""
    venv_dir, _ = inspect_venv
    _retry_and_rescore(venv_dir, tmp_path, ["-e", str(ROOT)], ROOT)


def test_eval_retry_from_a_wheel_install(inspect_venv, tmp_path):
    venv_dir, wheel = inspect_venv
    site = Path(_run(venv_dir, [str(venv_dir / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp_path).stdout.strip())
    # re-scoring reads the log, not the install: the editable test covers it
    _retry_and_rescore(venv_dir, tmp_path, [str(wheel)], site, rescore=False)
