"""lm-eval's ``--metadata`` is checked as Inspect's ``-T`` options are
(``ub_core.options``), for every ub lm-eval task family: ``{"n_samples": -3}`` and ``{"categories": "nonexistent"}``
were silently ignored (exit 0) where Inspect refuses them; they are one-line errors now, as are bad ``threshold`` and
``method`` values. lm-eval's note about ``--metadata`` is printed once per run (it was once per task: 7 times)."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

pytest.importorskip("lm_eval")

from ub_core.options import OptionValueError  # noqa: E402
from ub_lmeval.ksn_hooks import ksn_dataset  # noqa: E402
from ub_lmeval.ksn_logprob_hooks import ksn_logprob_dataset  # noqa: E402
from ub_lmeval.odds_hooks import odds_dataset  # noqa: E402
from ub_lmeval.option_logprob_hooks import option_logprob_dataset  # noqa: E402
from ub_lmeval.stability import stability_dataset  # noqa: E402

#: each family's custom_dataset hook with the metadata its YAML gives it
HOOKS = {
    "ub_ksn": (ksn_dataset, {"category": "text_explicit"}),
    "ub_ksn_logprob": (ksn_logprob_dataset, {"category": "text_explicit"}),
    "ub_odds": (odds_dataset, {"task": "percentile"}),
    "ub_logit": (option_logprob_dataset, {"bank": "calibration", "category": "colors"}),
    "ub_tar": (stability_dataset, {"subtask": "navigate"}),
}


@pytest.mark.parametrize("family", sorted(HOOKS))
@pytest.mark.parametrize("metadata", [{"n_samples": -3}, {"categories": "nonexistent"}])
def test_every_family_refuses_a_ub_option_it_does_not_take(family, metadata):
    hook, own = HOOKS[family]
    with pytest.raises(OptionValueError) as err:
        hook(**own, **metadata, pretrained="some/model", version=1.0)  # model_args and the YAML's keys pass
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{family}: option {next(iter(metadata))} is not an option")


@pytest.mark.parametrize("hook", [ksn_dataset, ksn_logprob_dataset])
@pytest.mark.parametrize("metadata, message", [
    ({"threshold": 2}, "option threshold: expected a number in (0, 1), got 2"),
    ({"threshold": "abc"}, "option threshold: expected a number in (0, 1), got 'abc'"),
    ({"method": "fast"}, "option method: must be one of paper, exact, got 'fast'"),
])
def test_threshold_and_method_are_checked_as_inspect_checks_them(hook, metadata, message):
    from ub_inspect.ksn import ksn
    from ub_inspect._options import OptionError

    with pytest.raises(OptionValueError, match=f"^ub_ksn(_logprob)?: {message.replace('(', '.').replace(')', '.')}$"):
        hook(category="text_explicit", **metadata)
    with pytest.raises(OptionError, match=message.replace("(", ".").replace(")", ".")):  # Inspect: the same rule
        ksn(**metadata)


def test_threshold_and_method_reach_every_document():
    docs = ksn_dataset(category="text_explicit", threshold="0.01", method="exact")["test"]
    assert set(docs["threshold"]) == {0.01} and set(docs["method"]) == {"exact"}


def test_the_metadata_note_is_printed_once_per_run(caplog):
    from lm_eval import simple_evaluate

    from support.lmeval_tasks import ub_task_manager

    from ub_lmeval.metadata import print_metadata_note_once

    caplog.set_level(logging.WARNING)
    print_metadata_note_once()  # what importing ub_lmeval does in a fresh lm_eval process
    simple_evaluate(model="ub-oracle", tasks=["ub_ksn"], task_manager=ub_task_manager({"ids": ["te-beta-conc"]}))
    notes = [r for r in caplog.records if "Custom kwargs can be passed to `--metadata`" in r.getMessage()]
    assert len(notes) == 1  # seven tasks, one note
    caplog.clear()
    simple_evaluate(model="ub-oracle", tasks=["ub_ksn"], task_manager=ub_task_manager({"ids": ["te-beta-conc"]}))
    assert not [r for r in caplog.records if "Custom kwargs" in r.getMessage()]  # a second run in the session: never


@pytest.mark.slow
def test_ub_lm_eval_prints_one_line_and_exits_2():
    run = subprocess.run([sys.executable, "-m", "ub_lmeval.cli", "--model", "ub-oracle", "--tasks", "ub_ksn",
                          "--metadata", '{"n_samples": -3}'], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stderr[-2000:]
    assert run.stderr.rstrip().splitlines()[-1] == (
        "ub-lm-eval: error: ub_ksn: option n_samples is not an option of these lm-eval tasks "
        "(lm-eval fixes it as the task YAML's repeats); "
        "they take bank, category, ids, method, threshold")


def test_every_inspect_option_name_is_known_to_the_lmeval_check():
    """A ``-T`` option of any ub Inspect task, given to lm-eval, is refused by a family that does not take it
    (``ub_core.option_registry.UB_OPTION_NAMES``), unless lm-eval could be handing over a ``--model_args`` of that
    name."""
    import inspect

    from ub_core.option_registry import UB_OPTION_NAMES
    from ub_inspect.calibration import calibration
    from ub_inspect.explicit import explicit
    from ub_inspect.implicit import implicit
    from ub_inspect.ksn import ksn
    from ub_inspect.ksn_logprob import ksn_logprob
    from ub_inspect.odds import odds
    from ub_inspect.stability import stability

    for task in (calibration, explicit, implicit, ksn, ksn_logprob, odds, stability):
        assert set(inspect.signature(task).parameters) <= UB_OPTION_NAMES, task
