"""lm-evaluation-harness adapter: task hooks, aggregations and registered models, built on ``ub_core``.

Importing this package (every task's ``utils.py`` does) fills ``<metric>_stderr`` for our aggregations
(:mod:`ub_lmeval.results_json`) and registers the models ``ub-oracle``, ``ub-collapse``, ``ub-vllm``,
``ub-openai-completions`` and ``ub-openai-chat`` (when lm-eval is installed). The task YAMLs ship inside the package
(:func:`tasks_dir`); ``ub tasks-dir`` prints the folder for ``--include_path``, and ``ub-lm-eval`` is lm_eval's CLI with
both added.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["tasks_dir"]


def tasks_dir() -> Path:
    """The folder of our lm-eval task YAMLs (``ub_ksn`` and friends), inside the installed package."""
    return Path(__file__).resolve().parent / "task_yamls"


try:
    from . import models  # noqa: F401  (registers ub-oracle, ub-collapse, ub-vllm, ub-openai-*)
    from .results_json import install_stderr_hook

    install_stderr_hook()  # <metric>_stderr for our own aggregations (ub_lmeval.results_json)
    from .metadata import print_metadata_note_once

    print_metadata_note_once()  # lm-eval's note about --metadata, once per run instead of once per task
except ModuleNotFoundError as exc:  # lm-eval not installed: the hooks and tasks_dir still work
    if exc.name is None or not exc.name.startswith("lm_eval"):
        raise
