"""``ub-lm-eval`` indexes lm-eval's built-in task files only when a requested task is not in the task folders
(ours and ``--include_path``'s): the same tasks are found either way, and a run of our tasks skips ~27,000 files."""

from __future__ import annotations

import pytest

pytest.importorskip("lm_eval")

from lm_eval.tasks import TaskManager  # noqa: E402

from ub_lmeval import tasks_dir  # noqa: E402
from ub_lmeval.cli import index_only_task_folders_when_they_hold, requested_tasks  # noqa: E402

BUILT_IN = "arc_easy"  # an lm-eval task that is not ours


@pytest.fixture(scope="module")
def full_index():
    """lm-eval's full index with our folder (built once: indexing the built-in tasks is the cost this module checks
    that ub-lm-eval avoids)."""
    return TaskManager(include_path=str(tasks_dir()))


@pytest.fixture
def restore_init(monkeypatch):
    monkeypatch.setattr(TaskManager, "__init__", TaskManager.__init__)


def test_the_requested_names_are_the_plain_names_of_tasks():
    argv = ["--model", "ub-oracle", "--tasks", "ub_ksn_shuffling, ub_tar"]
    assert requested_tasks(argv) == ["ub_ksn_shuffling", "ub_tar"]
    assert requested_tasks(["--tasks=ub_ksn"]) == ["ub_ksn"]
    assert requested_tasks(["--model", "ub-oracle"]) == []
    for odd in ("my/task.yaml", "task.yaml", "ub_*", "./folder"):
        assert requested_tasks(["--tasks", f"ub_ksn,{odd}"]) == [], odd


def test_our_tasks_alone_index_only_the_task_folders(restore_init):
    index_only_task_folders_when_they_hold(["ub_ksn_shuffling", "ub_logit"])
    tm = TaskManager(include_path=None)
    assert {"ub_ksn_shuffling", "ub_logit"} <= set(tm.all_tasks)
    assert BUILT_IN not in tm.all_tasks


def test_a_built_in_task_keeps_the_full_index(full_index, restore_init):
    index_only_task_folders_when_they_hold(["ub_ksn_shuffling", BUILT_IN])
    tm = TaskManager(include_path=str(tasks_dir()))
    assert BUILT_IN in tm.all_tasks and "ub_ksn_shuffling" in tm.all_tasks
    assert set(tm.all_tasks) == set(full_index.all_tasks)


def test_the_folder_index_finds_the_same_task_configs(full_index, restore_init):
    """What a run of our tasks loads is the same whichever index found it."""
    full = full_index
    index_only_task_folders_when_they_hold(["ub_ksn_shuffling"])
    lean = TaskManager(include_path=str(tasks_dir()))
    assert BUILT_IN in full.all_tasks and BUILT_IN not in lean.all_tasks
    a, b = full.load(["ub_ksn_shuffling"]), lean.load(["ub_ksn_shuffling"])
    assert repr(_configs(a)) == repr(_configs(b))


def _configs(loaded) -> list:
    """The task configs of a loaded task dict, in a comparable form."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            for k in sorted(x, key=str):
                walk(x[k])
        elif hasattr(x, "config"):
            cfg = x.config.to_dict() if hasattr(x.config, "to_dict") else vars(x.config)
            # functions print with their address, which differs between two loads of the same file: compare names
            out.append(sorted((k, getattr(v, "__qualname__", None) or repr(v)) for k, v in cfg.items()
                              if k != "metadata"))
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(loaded)
    assert out, loaded
    return out
