"""Every edition's size, and a rough cost, stated where a user looks (``ub bank list``, README).
``-T size=full`` for calibration is 203,040 samples; nothing said so."""

from __future__ import annotations

import pytest

from ub_core import cli
from ub_core.problems import EDITIONS, ORACLE_SECONDS_PER_ITEM, bank_names, edition_note, load_bank, rough_duration


@pytest.mark.slow
@pytest.mark.parametrize("bank", sorted(EDITIONS))
def test_the_stated_sizes_are_what_the_banks_load(bank):
    for edition, n in EDITIONS[bank].items():
        assert len(load_bank(bank, size=edition)) == n, (bank, edition)
    assert bank in ORACLE_SECONDS_PER_ITEM


def test_every_built_in_bank_is_stated():
    assert set(EDITIONS) == set(bank_names()) >= {"ksn", "calibration", "implicit", "explicit", "odds", "stability"}


def test_bank_list_states_the_editions(capsys):
    assert cli.main(["bank", "list", "--bank", "stability", "--size", "full"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "1210 problems (full edition)"
    assert out[-1] == ("stability editions: subset 328 items (~33 s on ub/oracle); full 1,210 items (~2 min on "
                       "ub/oracle); subset is the default (Inspect -T size=full, lm-eval --metadata '{\"size\": "
                       "\"full\"}')")
    assert "203,040 items (~2 h on ub/oracle)" in edition_note("calibration")
    assert "-T edition=full" in edition_note("odds")
    assert edition_note("not-a-bank") is None


def test_rough_durations():
    assert [rough_duration(s) for s in (0.2, 42.4, 90, 316, 5400, 18274)] == ["~1 s", "~42 s", "~2 min", "~5 min",
                                                                               "~2 h", "~5 h"]
