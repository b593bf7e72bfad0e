"""lm-eval hook functions (``!function`` targets) for the ``ub_dice_*`` tasks ("Bad Dice Players", issue 47). The
science is :mod:`ub_core.metrics.dice` and :mod:`ub_core.problems.dice`; the Inspect task scores with the same
:func:`~ub_core.metrics.dice.dice_scores`, so both frameworks report the same keys.

- :func:`dice_dataset` is the ``custom_dataset``: one document per law, its prompt the protocol's request. The
  protocol and ``n`` are fixed by the YAML (``dataset_kwargs``: ``protocol``, and for ``independent`` the YAML's
  ``repeats``); ``--metadata`` sets ``laws``, ``convention``, ``alpha``, ``seed`` and, for ``batch``, ``n``.
  Anything else, or a value out of range, is a one-line ValueError naming the option.
- :func:`process_results_dice`: the document's generation(s) -> ``passed``, ``w1``, ``p_value``, ``n_values``,
  ``count_error``. Batch: every number of the one reply (:func:`~ub_core.parsing.parse_number_list`; a count other
  than ``n`` is recorded). Independent: one number per reply (:func:`~ub_core.parsing.parse_number`), an unreadable
  reply left out.
"""

from __future__ import annotations

from typing import Any

from ub_core import options
from ub_core.metrics.dice import DICE_ALPHA, DICE_CONVENTIONS, DICE_ORDER, dice_row
from ub_core.parsing import parse_number, parse_number_list
from ub_core.problems.dice import DICE_PROTOCOLS, dice_item, dice_items, protocol_prompt

from .ksn_hooks import nanmean  # noqa: F401  (the YAMLs name utils.nanmean)
from .metadata import DICE_OPTIONS, checked

__all__ = ["dice_docs", "dice_dataset", "process_results_dice", "nanmean", "DICE_KEYS"]

DICE_KEYS = ("passed", "w1", "p_value", "n_values", "count_error")


def dice_docs(protocol: str, n: Any = 1000, laws: Any = None, convention: str = "default", alpha: Any = DICE_ALPHA,
              seed: Any = 0, replies: Any = None) -> list[dict]:
    """One document per law (all 15, or the comma list ``laws``), the options checked."""
    protocol = options.choice(protocol, "protocol", DICE_PROTOCOLS)
    n = options.integer(n, "n", low=1, high=100_000)
    if protocol == "independent" and replies is not None and n != options.integer(replies, "replies", low=1):
        raise ValueError(f"ub_dice: metadata n={n} contradicts this task's {replies} replies per law (its YAML's "
                         f"repeats, which --metadata cannot change)")
    convention = options.choice(convention, "convention", DICE_CONVENTIONS)
    alpha = options.real(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    seed = options.integer(seed, "seed", low=0)
    names = options.str_list(laws, "laws")
    items = dice_items() if names in (None, ("all",)) else [dice_item(options.choice(x, "laws", DICE_ORDER))
                                                             for x in names]
    return [{"id": p.id, "law": p.metadata["law"], "tier": p.metadata["tier"], "protocol": protocol, "n": n,
             "convention": convention, "alpha": alpha, "seed": seed, "prompt": protocol_prompt(p, protocol, n)}
            for p in items]


def dice_dataset(protocol: str = "batch", n: Any = 1000, laws: Any = None, convention: str = "default",
                 alpha: Any = DICE_ALPHA, seed: Any = 0, replies: Any = None, **kwargs: Any):
    """``custom_dataset`` hook (metadata, the YAML's dataset_kwargs and model_args arrive as keyword arguments)."""
    from datasets import Dataset, DatasetDict

    checked("ub_dice", kwargs, DICE_OPTIONS)
    return DatasetDict({"test": Dataset.from_list(dice_docs(protocol, n, laws, convention, alpha, seed, replies))})


def _values(doc: dict, results: list) -> list[float]:
    gens = results[0] if results and isinstance(results[0], (list, tuple)) else results
    gens = [str(g) for g in gens]
    if doc["protocol"] == "batch":
        parsed = parse_number_list(gens[0]) if gens else None
        return [float(v) for v in parsed.value] if parsed is not None and parsed.ok else []
    out = []
    for g in gens:
        r = parse_number(g)
        if r.ok:
            out.append(float(r.value))
    return out


def process_results_dice(doc: dict, results: list) -> dict:
    """One law's generation(s) -> its dice scores (the Inspect scorer's keys)."""
    return dice_row(doc["law"], _values(doc, results), int(doc["n"]), convention=doc["convention"],
                    alpha=float(doc["alpha"]), seed=int(doc["seed"]))
