"""Inspect `-T` options: every option of every ub_inspect task is checked in the task
function, before any generation; a bad value is one line naming the option and what it expects, printed by
Inspect's command line without a traceback; unknown names are reported by Inspect itself."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from ub_inspect._options import OptionError, integer, int_list, real  # noqa: E402
from ub_inspect.calibration import calibration  # noqa: E402
from ub_inspect.explicit import explicit  # noqa: E402
from ub_inspect.implicit import implicit  # noqa: E402
from ub_inspect.ksn import ksn  # noqa: E402
from ub_inspect.odds import odds  # noqa: E402
from ub_inspect.stability import stability  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_option_error_is_what_inspect_prints_without_a_traceback(capsys, monkeypatch):
    """The one private Inspect import: if Inspect moves or renames PrerequisiteError, this fails loudly."""
    import io

    import rich

    from inspect_ai._util.error import PrerequisiteError, exception_hook

    # Inspect's hook prints through rich's global console, which an earlier eval in this process (display "none")
    # leaves quiet: read what it prints from the console itself, unmuted
    printed = io.StringIO()
    monkeypatch.setattr(rich.get_console(), "file", printed)
    monkeypatch.setattr(rich.get_console(), "quiet", False)
    err = OptionError("option ks_ns: expected an integer >= 1, got '[red]x'")
    assert isinstance(err, PrerequisiteError) and isinstance(err, ValueError)
    assert str(err) == "option ks_ns: expected an integer >= 1, got '[red]x'"
    exception_hook()(OptionError, err, None)
    out = capsys.readouterr()
    assert printed.getvalue().strip() == "ERROR: option ks_ns: expected an integer >= 1, got '[red]x'"  # no markup
    assert "Traceback" not in printed.getvalue() + out.out + out.err


@pytest.mark.parametrize("kw, message", [
    ({"threshold": "abc"}, "option threshold: expected a number in (0, 1), got 'abc'"),
    ({"threshold": 5}, "option threshold: expected a number in (0, 1), got 5"),
    ({"threshold": 0}, "option threshold: expected a number in (0, 1), got 0"),
    ({"temperature": "abc"}, "option temperature: expected a number >= 0, got 'abc'"),
    ({"temperature": -0.5}, "option temperature: expected a number >= 0, got -0.5"),
    ({"max_tokens": "abc"}, "option max_tokens: expected an integer >= 1, got 'abc'"),
    ({"max_tokens": -5}, "option max_tokens: expected an integer >= 1, got -5"),
    ({"seed": "abc"}, "option seed: expected an integer >= 0, got 'abc'"),
    ({"seed": 1.5}, "option seed: expected an integer >= 0, got 1.5"),
    ({"n_samples": 1.5}, "option n_samples: expected an integer >= 1, got 1.5"),
    ({"n_samples": True}, "option n_samples: expected an integer >= 1, got True"),
    ({"n_samples": 0}, "option n_samples: expected an integer >= 1, got 0"),
    ({"ks_ns": 1000}, "option ks_ns: every N must be <= n_samples (100), got 1000"),
    ({"ks_ns": "1,2.5"}, "option ks_ns: expected an integer >= 1, got '2.5'"),
    ({"gt_size": "many"}, "option gt_size: expected an integer >= 1, got 'many'"),
    ({"max_attempts": 0}, "option max_attempts: expected an integer >= 1, got 0"),
    ({"list_size": 2.5}, "option list_size: expected an integer >= 1, got 2.5"),
    ({"limit_per_category": 1.5}, "option limit_per_category: expected an integer >= 1, got 1.5"),
    ({"method": "magic"}, "option method: must be one of"),
    ({"categories": "nope"}, "ksn: unknown category 'nope' for bank 'ksn'; known: code_explicit"),
    ({"ids": "nope"}, "ids: not among the selected items: nope"),
])
def test_ksn_refuses_a_bad_option_in_the_task_function(kw, message):
    """Raised by the task function itself, so before any model is asked anything (not by the
    scorer, after all the generation)."""
    with pytest.raises(OptionError) as info:
        ksn(**kw)
    assert str(info.value).startswith(message)


def test_ksn_accepts_and_coerces_good_values():
    t = ksn(categories="shuffling", n_samples=20.0, threshold="0.001", temperature="0.7", max_tokens="100",
            seed="3", ks_ns=["1", 20])
    assert len(t.dataset) == 20 and t.metadata["n_samples"] == 20
    assert integer("7", "x") == 7 and integer(7.0, "x") == 7 and real("1e-4", "x", 0, 1, low_open=True) == 1e-4
    assert int_list("[1, 10]", "x") == (1, 10)


def test_ksn_default_ns_follow_n_samples():
    """Without -T ks_ns, the default Ns above n_samples are left out instead of refused."""
    t = ksn(categories="shuffling", n_samples=10, limit_per_category=1)
    assert len(t.dataset) == 1  # built: KS@20..100 not asked of 10 samples


@pytest.mark.parametrize("task, kw, message", [
    (calibration, {"limit_per_category": 1.5}, "option limit_per_category: expected an integer >= 1, got 1.5"),
    (calibration, {"size": "huge"}, "option size: must be one of subset, full"),
    (implicit, {"categories": "nope"}, "implicit: unknown category 'nope' for bank 'implicit'"),
    (implicit, {"mode": "magic"}, "option mode: must be one of"),
    (explicit, {"ids": "nope"}, "ids: not among the selected items: nope"),
    (explicit, {"limit_per_category": "x"}, "option limit_per_category: expected an integer >= 1, got 'x'"),
    (stability, {"seed": "abc"}, "option seed: expected an integer >= 0, got 'abc'"),
    (stability, {"max_tokens": -5}, "option max_tokens: expected an integer >= 1, got -5"),
    (stability, {"epochs": 2.5}, "option epochs: expected an integer >= 1, got 2.5"),
    (odds, {"temperature": "abc"}, "option temperature: expected a number >= 0, got 'abc'"),
    (odds, {"task": "sampling", "seed": "abc"}, "option seed: expected an integer >= 0, got 'abc'"),
    (odds, {"max_tokens": -5}, "option max_tokens: expected an integer >= 1, got -5"),
    (odds, {"task": "sampling", "n_samples": 10, "ks_ns": "10,100"}, "option ks_ns: each N must be at most"),
    (odds, {"convention": "code"}, "option convention: must be one of"),
])
def test_other_tasks_refuse_a_bad_option(task, kw, message):
    with pytest.raises(OptionError) as info:
        task(**kw)
    assert str(info.value).startswith(message)


def test_unknown_task_option_is_named_by_inspect(caplog):
    """Inspect drops a -T name the task does not take, with a warning naming it (so we add none)."""
    from inspect_ai._eval.registry import task_create

    from ub_inspect._naming import registry_name

    # once an eval has run in this process, Inspect's own logging stops propagating to the root logger: listen on
    # the registry's logger itself
    registry_log = logging.getLogger("inspect_ai._eval.registry")
    registry_log.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING, logger="inspect_ai._eval.registry"):
            t = task_create(registry_name("ksn"), n_sample=5, categories="shuffling")
    finally:
        registry_log.removeHandler(caplog.handler)
    assert len(t.dataset) == 20
    assert any("param 'n_sample' not used by task" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("option, message", [
    ("threshold=abc", "ERROR: option threshold: expected a number in (0, 1), got 'abc'"),
    ("n_samples=1.5", "ERROR: option n_samples: expected an integer >= 1, got 1.5"),
])
@pytest.mark.slow
def test_inspect_cli_prints_one_line_without_traceback(option, message, tmp_path):
    """`inspect eval ub_inspect/ksn -T threshold=abc` printed a 253-line traceback before the message."""
    run = subprocess.run(["inspect", "eval", "ub_inspect/ksn", "--model", "ub/oracle", "-T", option,
                          "--log-dir", str(tmp_path), "--limit", "1"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    lines = [x for x in (run.stdout + run.stderr).splitlines() if x.strip()]
    assert run.returncode != 0
    assert lines == [message], lines


@pytest.mark.parametrize("model, message", [
    (["ub/nonexistent"], "ERROR: --model ub/nonexistent: no such model; use ub/oracle or ub/collapse"),
    (["ub/oracle", "-M", "bogus_arg=1"],
     "ERROR: --model ub/oracle: unknown model argument(s) -M bogus_arg; ub/oracle takes -M digits and "
     "-M number_token_digits"),
])
@pytest.mark.slow
def test_a_bad_model_is_one_line(model, message, tmp_path):
    """`--model ub/nonexistent` printed a 225-line exception-group traceback (the message at the
    bottom), and `-M bogus_arg=1` was silently accepted."""
    run = subprocess.run(["inspect", "eval", "ub_inspect/ksn", "--model", *model, "--log-dir", str(tmp_path),
                          "--limit", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    lines = [x for x in (run.stdout + run.stderr).splitlines() if x.strip()]
    assert run.returncode != 0
    assert lines == [message], lines
