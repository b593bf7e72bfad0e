"""Every ``ub`` subcommand documents its options. Walks the whole parser (subcommands other modules
add included): every option has help text, every option with a default shows it, ``ub --version`` works, and the
bank options list the banks."""

from __future__ import annotations

import argparse
from importlib.metadata import version

import pytest

from ub_core import cli
from ub_core.problems import bank_names


def _parsers(parser: argparse.ArgumentParser, path: str = "ub"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


PARSERS = list(_parsers(cli.build_parser()))


@pytest.mark.parametrize("path, parser", PARSERS, ids=[p for p, _ in PARSERS])
def test_every_option_has_help_and_shows_its_default(path, parser):
    text = parser.format_help()  # renders every %(default)s: a bad format string fails here
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help != argparse.SUPPRESS, f"{path} {name}: no help text"
        if action.option_strings and action.nargs != 0 and action.default not in (None, argparse.SUPPRESS):
            assert "default" in action.help, f"{path} {name}: the help does not show the default"
    assert "(default: %(default)s)" not in text


def test_every_subcommand_is_walked():
    paths = {p for p, _ in PARSERS}
    assert {"ub bank list", "ub bank show", "ub truth", "ub cache", "ub score", "ub run", "ub report",
            "ub tasks-dir"} <= paths


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"ub {version('unpredictabench')}"


def test_bank_options_list_the_banks(capsys):
    """The banks are listed in the help (not as argparse choices: a plug-in bank installed later is still found,
    and an unknown one is the one-line error that names the known ones)."""
    bank_list = dict(PARSERS)["ub bank list"]
    (bank,) = [a for a in bank_list._actions if a.dest == "bank"]
    assert bank.help.startswith("which bank: " + ", ".join(bank_names()))
    assert cli.main(["bank", "list", "--bank", "nonexistent"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown bank 'nonexistent'; known: ksn" in err[0] and "calibration" in err[0]
