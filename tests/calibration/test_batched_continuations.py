"""One request for all of an item's continuations: the offline models read every continuation of a
``prompt_logprobs`` request in one call (``ub_inspect.option_logprob.CONTINUATIONS``); the logs must hold what one
request per continuation gives (the route every served provider takes)."""

from __future__ import annotations

import pytest


def _rows(log, scorer: str) -> dict:
    return {s.id: (s.scores[scorer].value, s.scores[scorer].metadata["ub"]) for s in log.samples}


def _model_calls(log) -> int:
    return sum(1 for s in log.samples for e in s.events if e.event == "model")


def _both_routes(task_fn, tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.providers import UBModelAPI

    logs = {}
    for batched in (True, False):
        monkeypatch.setattr(UBModelAPI, "ub_continuations", batched)
        log = inspect_eval(task_fn(), model="ub/oracle", log_dir=str(tmp_path / str(batched)), display="none",
                           seed=0)[0]
        assert log.status == "success", log.error
        logs[batched] = log
    return logs[True], logs[False]


@pytest.mark.parametrize("bank", ["calibration", "implicit", "explicit"])
def test_option_banks_read_the_same_in_one_request_per_item(bank, tmp_path, monkeypatch):
    import importlib

    task = getattr(importlib.import_module(f"ub_inspect.{bank}"), bank)
    one, each = _both_routes(lambda: task(limit_per_category=2), tmp_path, monkeypatch)
    assert _rows(one, f"{bank}_scorer") == _rows(each, f"{bank}_scorer")
    assert _model_calls(one) == len(one.samples) < _model_calls(each)


def test_ksn_logprob_listed_route_reads_the_same_in_one_request(tmp_path, monkeypatch):
    from ub_inspect.ksn_logprob import ksn_logprob

    ids = "te-bernoulli-spread,sh-integer-01,ce-binomial-conc"
    one, each = _both_routes(lambda: ksn_logprob(ids=ids, ks_ns="10"), tmp_path, monkeypatch)
    assert _rows(one, "ksn_logprob_scorer") == _rows(each, "ksn_logprob_scorer")
    assert _model_calls(one) < _model_calls(each)
