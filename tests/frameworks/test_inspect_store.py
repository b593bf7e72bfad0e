"""ub_inspect._store.write_record stores what setting the fields one by one stores (one validation)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


def _state():
    from inspect_ai.util import Store

    store = Store()
    return SimpleNamespace(store=store, store_as=lambda model: model(store=store))


@pytest.mark.parametrize("model_path", ["ub_inspect.ksn.solver:CollectedValues",
                                        "ub_inspect.option_logprob:OptionLogprobs"])
def test_write_record_stores_what_setattr_stores(model_path):
    import importlib

    module, _, name = model_path.partition(":")
    model = getattr(importlib.import_module(module), name)
    fields = ({"values": [1.0, 2.5], "outputs": ["{1}", "{2.5}", "x"], "failures": ["unparseable"], "attempts": 3,
               "requests": 1, "slots": 2, "retried_slots": 1, "skipped_slots": 0}
              if name == "CollectedValues" else
              {"mode": "prompt_logprobs", "choices": [" a", "a"], "logprobs": [-0.5, None], "boundary_merged": 1,
               "multi_token_variants": 0, "token_texts": [[" a"], None]})
    from ub_inspect._store import write_record

    one, each = _state(), _state()
    write_record(one, model, **fields)
    record = each.store_as(model)
    for key, value in fields.items():
        setattr(record, key, value)
    assert dict(one.store.items()) == dict(each.store.items())
    assert one.store_as(model).model_dump() == each.store_as(model).model_dump()
    # a record already in the store: written field by field over it, as setattr would
    write_record(one, model, **{k: v for k, v in list(fields.items())[:1]})
    assert dict(one.store.items()) == dict(each.store.items())


@pytest.mark.parametrize("model_path", ["ub_inspect.ksn.solver:CollectedValues",
                                        "ub_inspect.option_logprob:OptionLogprobs"])
def test_read_record_reads_what_store_as_reads(model_path):
    """read_record's snapshot (one validation) has every field of the record as store_as reads it: an empty store
    (defaults), a written record, and stored values that validation converts (an int where a float is declared)."""
    import importlib

    from ub_inspect._store import read_record, write_record

    module, _, name = model_path.partition(":")
    model = getattr(importlib.import_module(module), name)
    fields = [n for n in model.model_fields if n not in ("store", "instance")]

    def same(state):
        snap, record = read_record(state, model), state.store_as(model)
        for f in fields:
            assert getattr(snap, f) == getattr(record, f), f
            assert type(getattr(snap, f)) is type(getattr(record, f)), f
        return snap

    same(_state())
    state = _state()
    written = ({"values": [1.0, 2.5], "outputs": ["{1}", "x"], "failures": ["unparseable"], "attempts": 3,
                "requests": 1, "slots": 2, "retried_slots": 1, "skipped_slots": 0}
               if name == "CollectedValues" else
               {"mode": "prompt_logprobs", "choices": [" a", "a"], "logprobs": [-0.5, None], "boundary_merged": 1,
                "multi_token_variants": 0, "token_texts": [[" a"], None]})
    write_record(state, model, **written)
    snap = same(state)
    assert {f: getattr(snap, f) for f in written} == written
    if name == "OptionLogprobs":  # as a log restored from JSON may hold it
        state.store.set("OptionLogprobs:logprobs", [0, -1])
        assert same(state).logprobs == [0.0, -1.0]
