"""``lm_eval --tasks ub_logit`` as a user types it, with no ``--include_path`` and no wrapper.

Before: lm-eval 0.4.13's own CLI answered ``Tasks not found: ub_logit`` after a normal install. Now the installed
``unpredictabench-lm-eval.pth`` runs :mod:`unpredictabench_lm_eval_hook`, which adds our task folder to every
``TaskManager`` that scans lm-eval's built-in tasks and registers our models when lm-eval loads its own. The fresh,
non-editable venv of ``.ci/fresh_venv_routes.sh`` runs the same commands and checks that ``pip uninstall`` leaves
nothing behind."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import unpredictabench_lm_eval_hook as hook

ROOT = Path(__file__).resolve().parents[2]


class _FakeTaskManager:
    def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
        self.include_path, self.include_defaults = include_path, include_defaults


def _patched():
    module = types.SimpleNamespace(TaskManager=type("TaskManager", (_FakeTaskManager,), {}))
    module.TaskManager.__init__ = _FakeTaskManager.__init__
    hook._patch_task_manager(module)
    hook._patch_task_manager(module)  # twice: still one wrapper
    return module.TaskManager


def test_our_folder_is_added_where_lm_eval_scans_its_own_tasks():
    tm = _patched()
    ours = hook.tasks_dir()
    assert Path(ours) == Path(__import__("ub_lmeval").tasks_dir())
    assert tm().include_path == [ours]  # lm_eval's CLI default: built-ins + ours
    assert tm(include_path="/x").include_path == ["/x", ours]
    assert tm(include_path=["/x", ours]).include_path == ["/x", ours]  # --include_path "$(ub tasks-dir)": once
    assert tm(include_path=ours + "/").include_path == ours + "/"  # the same folder spelled differently
    # a caller that turned the built-ins off chose its paths exactly (ub-lm-eval, our tests)
    assert tm(include_path="/x", include_defaults=False).include_path == "/x"
    assert tm.__init__.__wrapped__ is _FakeTaskManager.__init__


def test_the_install_ships_the_hook_and_declares_lm_evals_plugin_groups():
    # the installed distribution (a checkout's own unpredictabench.egg-info has no RECORD)
    dist = next(d for d in md.distributions(name="unpredictabench") if d.read_text("RECORD"))
    record = dist.read_text("RECORD").splitlines()
    assert any(line.startswith("unpredictabench-lm-eval.pth,") for line in record)  # pip uninstall removes it
    eps = dist.entry_points
    assert {e.name for e in eps if e.group == "lm_eval.models"} == {
        "ub-oracle", "ub-collapse", "ub-vllm", "ub-openai-completions", "ub-openai-chat"}
    (tasks,) = [e for e in eps if e.group == "lm_eval.tasks"]
    assert Path(tasks.load()()) == Path(hook.tasks_dir())
    # the .pth ran at this interpreter's start
    assert any(type(f).__name__ == "_Finder" for f in sys.meta_path), [type(f).__name__ for f in sys.meta_path]


def test_the_hook_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("UB_LM_EVAL_HOOK", "0")
    before = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", [f for f in before if type(f).__name__ != "_Finder"])
    hook.install()
    assert not any(type(f).__name__ == "_Finder" for f in sys.meta_path)


CATEGORIES = ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal", "real_world",
              "shuffling")


@pytest.mark.slow
def test_plain_lm_eval_finds_our_tasks_and_models(tmp_path):
    """Two plain ``lm_eval`` processes (each costs tens of seconds of start-up and task indexing, so the second also
    carries the ``--metadata ids`` checks on the ``ub_ksn`` group):

    - ``lm_eval validate`` with no flag finds our groups (the hook adds our folder);
    - ``lm_eval --include_path <ours> --model ub-oracle`` (the README's route; the hook adds the folder only once and
      registers our models) with ids from two categories: those two report, the five others are skipped, and the
      group averages over the two."""
    pytest.importorskip("lm_eval")
    from ub_core.problems import load_bank

    import ub_lmeval

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    lm_eval = Path(sys.executable).with_name("lm_eval")
    cmd = [str(lm_eval)] if lm_eval.exists() else [sys.executable, "-m", "lm_eval"]
    ok = subprocess.run([*cmd, "validate", "--tasks", "ub_logit,ub_ksn,ub_tar"], capture_output=True, text=True,
                        env=env, cwd=tmp_path, timeout=600)
    assert ok.returncode == 0 and "All tasks found" in ok.stdout + ok.stderr, ok.stdout[-2000:] + ok.stderr[-2000:]
    chosen = {cat: [p.id for p in load_bank("ksn", categories=[cat])][:1] for cat in ("real_world", "multimodal")}
    run = subprocess.run([*cmd, "--include_path", str(ub_lmeval.tasks_dir()), "--model", "ub-oracle",
                          "--tasks", "ub_ksn", "--metadata",
                          json.dumps({"ids": chosen["real_world"] + chosen["multimodal"]}),
                          "--output_path", str(tmp_path / "out"), "--log_samples"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    (results,) = (tmp_path / "out").rglob("results_*.json")
    out = json.loads(results.read_text())["results"]
    for cat in CATEGORIES:
        row = out.get(f"ub_ksn_{cat}", {})
        if cat in chosen:
            assert row["ks@100,take_100"] == 1.0, (cat, row)
            (samples,) = (tmp_path / "out").rglob(f"samples_ub_ksn_{cat}_*.jsonl")
            assert [json.loads(line)["doc"]["id"] for line in samples.read_text().splitlines()] == chosen[cat]
        else:  # skipped: no metric, no sample (lm-eval writes an empty sample file)
            assert "ks@100,take_100" not in row, (cat, row)
            assert not "".join(f.read_text() for f in (tmp_path / "out").rglob(f"samples_ub_ksn_{cat}_*")).strip(), cat
    assert out["ub_ksn"]["ks@100,take_100"] == 1.0 and out["ub_ksn"]["sample_len"] == 2
