"""Writing a typed store record (an Inspect ``StoreModel``) in one step.

Setting a ``StoreModel``'s fields one by one validates the whole model at every assignment (its lists included),
so a solver that records eight fields validates eight times. :func:`write_record` validates once.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel

__all__ = ["write_record"]


def write_record(state: Any, model: type[StoreModel], **fields: Any) -> None:
    """Write ``fields`` of the record ``model`` into the sample's store (``state.store``): in one validated
    construction bound to the store when it holds none of the record's fields yet, else field by field (a
    construction keeps the values already stored). What is stored is what ``setattr`` one by one stores."""
    prefix = f"{model.__name__}:"
    if any(str(key).startswith(prefix) for key in state.store.keys()):
        record = state.store_as(model)
        for name, value in fields.items():
            setattr(record, name, value)
    else:
        model(store=state.store, **fields)
