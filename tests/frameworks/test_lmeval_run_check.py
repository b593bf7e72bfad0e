"""An ``lm_eval run`` of ours is checked before any model loads, per member of a group (in-process: the hook's
``precheck`` is what lm-eval's ``Run._execute`` calls first; ``test_lmeval_entry_points.py`` runs the commands).

- a member that contradicts ``--metadata`` refuses the run in one line naming the member, for every member of every
  group of ours: an option its YAML fixes, another member's identity, a hook's own refusal (a check of the group
  alone lets ``--tasks ub_dice --metadata '{"n": 200}'`` through, since ``ub_dice_batch`` takes ``n``, and
  ``ub_dice_independent``'s 1,000 replies a law contradict it only after the model has loaded);
- ``temperature`` / ``max_tokens`` are refused with ``--gen_kwargs`` named, not run at the YAML's value;
- ``--model_args`` of our models are checked as Inspect's ``-M``, in one line, not a traceback from the model;
- every offline example of a README passes the same check."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("lm_eval")

import unpredictabench_lm_eval_hook as hook  # noqa: E402
from ub_core import option_registry as registry  # noqa: E402
from ub_core.options import OptionValueError  # noqa: E402
from ub_lmeval import run_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _precheck(tasks: str, metadata=None, model: str = "ub-oracle", model_args=None) -> None:
    hook.precheck(argparse.Namespace(tasks=tasks, metadata=metadata, model=model, model_args=model_args))


def _refusal(**kw) -> str:
    with pytest.raises(OptionValueError) as err:
        _precheck(**kw)
    msg = str(err.value)
    assert "\n" not in msg and msg.strip() == msg
    return msg


def _groups() -> dict[str, list[str]]:
    index = run_check._index()
    return {name: run_check.member_tasks([name]) for name, (_, cfg) in index.items() if "group" in cfg}


def test_the_dice_readme_example_is_refused_naming_the_member_and_the_member_alone_runs():
    msg = _refusal(tasks="ub_dice", metadata={"n": 200})
    assert msg.startswith("ub_dice_independent: ") and "n=200" in msg and "1000 replies" in msg, msg
    _precheck("ub_dice_batch", {"n": 200})
    _precheck("ub_dice", {"n": 1000})  # the value the independent member's YAML fixes


def test_every_group_is_expanded_to_its_members():
    groups = _groups()
    assert {"ub_dice", "ub_ksn", "ub_tar", "ub_odds", "ub_logit", "ub_ksn_logprob"} <= set(groups), sorted(groups)
    for members in groups.values():
        assert members and all(m in run_check._index() and "group" not in run_check._index()[m][1] for m in members)
    assert run_check.member_tasks(["ub_dice", "ub_dice_batch", "not_ours"]) == ["ub_dice_batch", "ub_dice_independent"]


@pytest.mark.parametrize("group", sorted(_groups()))
def test_each_member_that_contradicts_an_option_refuses_the_run_by_name(group):
    """For every member of every group: another member's identity (``subtask``, ``category``, ``yaml_task``) and
    a key its YAML fixes in ``dataset_kwargs`` are refused, naming a member of this group; and the group with no
    contradiction passes."""
    members = _groups()[group]
    seen = 0
    for member in members:
        cfg = run_check._index()[member][1]
        own = cfg.get("metadata") or {}
        for key in sorted(registry.SET_BY_TASK_YAML & set(own)):
            if any((run_check._index()[m][1].get("metadata") or {}).get(key) != own[key] for m in members):
                msg = _refusal(tasks=group, metadata={key: own[key]})
                assert msg.split(":")[0] in members and key in msg, msg
                seen += 1
        full = hook.load_task_yaml(run_check._index()[member][0], resolve=False)
        for key, value in (full.get("dataset_kwargs") or {}).items():
            msg = _refusal(tasks=group, metadata={key: value})
            assert msg.split(":")[0] in members and f"option {key}" in msg, msg
            seen += 1
    if len(members) > 1:
        assert seen, f"{group}: no member fixes anything: this test checks nothing there"


@pytest.mark.parametrize("label", sorted(registry.LMEVAL_FAMILIES))
@pytest.mark.parametrize("key, value", [("temperature", 0.5), ("max_tokens", 10)])
def test_generation_settings_are_refused_with_gen_kwargs_named(label, key, value):
    task = run_check.member_tasks([label])[0] if run_check.member_tasks([label]) else label
    msg = _refusal(tasks=task, metadata={key: value})
    assert f"option {key}" in msg and "--gen_kwargs" in msg, msg


@pytest.mark.parametrize("model", ["ub-oracle", "ub-collapse"])
@pytest.mark.parametrize("model_args, needle", [
    ({"bogus": 1}, "unknown --model_args bogus"), ({"sed": 1}, "did you mean seed?"),
    ({"seed": -1}, "seed: expected an integer >= 0"), ({"seed": "abc"}, "seed: expected an integer >= 0"),
    ("seed=1,bogus=2", "unknown --model_args bogus"),
])
def test_bad_model_args_of_our_offline_models_are_one_line(model, model_args, needle):
    msg = _refusal(tasks="ub_ksn_shuffling", model=model, model_args=model_args)
    assert msg.startswith(f"--model {model}: ") and needle in msg, msg


def test_model_args_of_the_served_models_are_their_constructors_parameters():
    for model in ("ub-openai-completions", "ub-openai-chat"):
        msg = _refusal(tasks="ub_ksn_shuffling", model=model,
                       model_args={"base_url": "http://h/v1", "num_concurent": 2})
        assert "did you mean num_concurrent?" in msg, msg
        _precheck("ub_ksn_shuffling", model=model, model_args={"base_url": "http://h/v1", "num_concurrent": 2,
                                                               "max_n": 4, "request_seeds": "false"})
    _precheck("ub_ksn_shuffling", model="ub-oracle", model_args={"seed": 3, "model": "ub-oracle", "batch_size": 1})
    _precheck("ub_ksn_shuffling", model="hf", model_args={"anything": 1})  # not ours: lm-eval's to judge


def test_the_model_refuses_what_the_precheck_refuses():
    from ub_lmeval.models import UBOracleLM

    with pytest.raises(OptionValueError, match="seed: expected an integer >= 0"):
        UBOracleLM(seed=-2)
    with pytest.raises(OptionValueError, match="unknown --model_args bogus"):
        UBOracleLM(bogus=1)


def _readme_examples():
    """Every ``lm_eval`` / ``ub-lm-eval`` command of a README with an offline model, ``--tasks`` and ``--metadata``."""
    out = []
    for path in sorted(ROOT.rglob("README.md")):
        if any(p.startswith(".") for p in path.relative_to(ROOT).parts):
            continue
        text = re.sub(r"\\\n\s*", " ", path.read_text())
        for line in text.splitlines():
            m = re.search(r"\b(?:lm_eval|ub-lm-eval)\s+(.*?)(?:\s+#.*)?$", line.strip().strip("`"))
            if not m or "--metadata" not in line or "--tasks" not in line:
                continue
            try:
                argv = shlex.split(m.group(1).replace('"$(ub tasks-dir)"', "DIR"))
            except ValueError:
                continue
            opts = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("--")}
            if opts.get("--model") in ("ub-oracle", "ub-collapse"):
                out.append(pytest.param(opts, id=f"{path.relative_to(ROOT)}:{opts['--tasks']}"))
    return out


@pytest.mark.parametrize("opts", _readme_examples())
def test_every_offline_readme_example_passes_the_check(opts):
    _precheck(opts["--tasks"], json.loads(opts["--metadata"]), opts["--model"], opts.get("--model_args"))


def test_the_readme_examples_are_found():
    assert len(_readme_examples()) >= 3



@settings(max_examples=20, deadline=None)
@given(n=st.integers(min_value=1, max_value=100_000))
def test_any_n_the_independent_member_cannot_take_is_refused_by_name(n):
    if n == 1000:
        _precheck("ub_dice", {"n": n})
    else:
        assert _refusal(tasks="ub_dice", metadata={"n": n}).startswith(f"ub_dice_independent: metadata n={n} ")
    _precheck("ub_dice_batch", {"n": n})  # the batch member takes any n in range


@settings(max_examples=20, deadline=None)
@given(n=st.one_of(st.integers(max_value=0), st.integers(min_value=100_001), st.text(max_size=5)))
def test_an_n_out_of_range_is_refused_before_any_member_runs(n):
    msg = _refusal(tasks="ub_dice_batch", metadata={"n": n})
    assert "option n" in msg or "n=" in msg, msg
