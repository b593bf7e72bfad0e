"""Writing and reading a typed store record (an Inspect ``StoreModel``) in one step.

Setting a ``StoreModel``'s fields one by one validates the whole model at every assignment (its lists included),
so a solver that records eight fields validates eight times. :func:`write_record` validates once.

Reading is dearer still: ``state.store_as(Model)`` coerces every stored field, and each later read of a list field
coerces it again, building a pydantic ``TypeAdapter`` for its annotation every time (~1.5 ms of the ksn
scorer's time per sample went to 17 such reads). :func:`read_record` validates the stored fields once.
"""

from __future__ import annotations

import functools
from typing import Any

from inspect_ai.util import StoreModel
from pydantic import BaseModel, ValidationError, create_model

__all__ = ["read_record", "write_record"]


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


@functools.cache
def _read_model(model: type[StoreModel]) -> type[BaseModel]:
    """A plain pydantic model with the record's fields (annotations and defaults), not bound to any store."""
    fields = {name: (info.annotation, info) for name, info in model.model_fields.items()
              if name not in ("store", "instance")}
    return create_model(f"{model.__name__}Read", **fields)


def read_record(state: Any, model: type[StoreModel]) -> Any:
    """A read-only snapshot of the record ``model`` in the sample's store (default instance): an object whose
    attributes are the record's fields as ``state.store_as(model)`` reads them (each stored value validated
    against the field's annotation, a default where the store has none), validated once. Where a stored value does
    not validate (``store_as`` then returns it raw), the ``store_as`` record itself is returned."""
    prefix = f"{model.__name__}:"
    store = state.store
    reader = _read_model(model)
    data = {name: store.get(prefix + name) for name in reader.model_fields if prefix + name in store}
    try:
        return reader.model_validate(data)
    except ValidationError:
        return state.store_as(model)
