"""lm-eval hook functions (``!function`` targets) for the ``ub_dice_*`` tasks ("Bad Dice Players"). The
science is :mod:`ub_core.metrics.dice` and :mod:`ub_core.problems.dice`; the Inspect task scores with the same
:func:`~ub_core.metrics.dice.dice_scores`, so both frameworks report the same keys.

- :func:`dice_dataset` is the ``custom_dataset``: one document per law, its prompt the protocol's request. The
  protocol and ``n`` are fixed by the YAML (``dataset_kwargs``: ``protocol``, and for ``independent`` the YAML's
  ``repeats``); ``--metadata`` sets ``laws``, ``convention``, ``alpha``, ``seed`` and, for ``batch``, ``n``.
  Anything else, or a value out of range, is a one-line ValueError naming the option.
- :func:`dice_mcq_dataset` / :func:`process_results_mcq` (``ub_dice_mcq``, the downstream MCQ task): one document
  per requested question (``--metadata`` ``n``, ``alpha``), the reply's answer key read with
  :func:`~ub_core.parsing.answer_key.read_answer_key`; the run's keys tested for uniformity over A-D
  (:func:`~ub_core.metrics.dice.letter_uniformity`) by the aggregations :func:`letter_p_value`,
  :func:`letter_chi2` and :func:`letters_uniform` (p > alpha), ``read`` the share of replies with a key.
- :func:`process_results_dice`: the document's generation(s) -> ``passed``, ``w1``, ``p_value``, ``n_values``,
  ``count_error``. Batch: every draw of the one reply, all its blocks and none of its prose
  (:func:`~ub_core.parsing.parse_batch_reply`; a count other than ``n`` is recorded). Independent: one number per reply
  (:func:`~ub_core.parsing.parse_number`), an unreadable reply left out.
"""

from __future__ import annotations

from typing import Any

from ub_core import options
from ub_core.metrics.dice import DICE_ALPHA, DICE_CONVENTIONS, DICE_ORDER, dice_row
from ub_core.parsing import parse_batch_reply, parse_number
from ub_core.problems.dice import DICE_PROTOCOLS, dice_item, dice_items, protocol_prompt

from .ksn_hooks import nanmean  # noqa: F401  (the YAMLs name utils.nanmean)
from .metadata import DICE_MCQ_OPTIONS, DICE_OPTIONS, checked

__all__ = ["dice_docs", "dice_dataset", "process_results_dice", "nanmean", "DICE_KEYS", "mcq_docs", "dice_mcq_dataset",
           "process_results_mcq", "letter_p_value", "letter_chi2", "letters_uniform"]

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
        parsed = parse_batch_reply(gens[0]) if gens else None
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


# ------------------------------------------------------------------------------------------------ MCQ


def mcq_docs(n: Any = 1000, alpha: Any = DICE_ALPHA) -> list[dict]:
    """One document per requested question (:mod:`ub_core.problems.dice_mcq`), the options checked."""
    from ub_core.problems.dice_mcq import MAX_QUESTIONS, mcq_items

    n = options.integer(n, "n", low=1, high=MAX_QUESTIONS)
    alpha = options.real(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    return [{"id": item.id, "index": item.index, "topic": item.topic, "alpha": alpha, "prompt": item.prompt}
            for item in mcq_items(n)]


def dice_mcq_dataset(n: Any = 1000, alpha: Any = DICE_ALPHA, **kwargs: Any):
    """``custom_dataset`` hook of ``ub_dice_mcq``."""
    from datasets import Dataset, DatasetDict

    checked("ub_dice_mcq", kwargs, DICE_MCQ_OPTIONS)
    return DatasetDict({"test": Dataset.from_list(mcq_docs(n, alpha))})


def process_results_mcq(doc: dict, results: list) -> dict:
    """One reply -> its answer key (``""`` when none) for the run-level test, with the document's alpha."""
    from ub_core.parsing.answer_key import read_answer_key

    gen = results[0] if results else ""
    letter = read_answer_key(gen[0] if isinstance(gen, (list, tuple)) and gen else gen) or ""
    keyed = [letter, float(doc["alpha"])]
    return {"letter_p_value": keyed, "letter_chi2": keyed, "letters_uniform": keyed, "read": float(bool(letter))}


def _uniformity(items: list) -> tuple[dict | None, float]:
    from ub_core.metrics.dice import MCQ_LETTERS, letter_uniformity

    letters = [str(it[0]) for it in items if it and str(it[0]) in MCQ_LETTERS]
    alpha = float(items[0][1]) if items else DICE_ALPHA
    if not letters:
        return None, alpha
    return letter_uniformity({k: letters.count(k) for k in MCQ_LETTERS}), alpha


def letter_p_value(items: list) -> float:
    """Aggregation: the p-value of the run's answer keys against uniform over A-D (NaN when none was read)."""
    res, _ = _uniformity(items)
    return res["p_value"] if res else float("nan")


def letter_chi2(items: list) -> float:
    res, _ = _uniformity(items)
    return res["chi2"] if res else float("nan")


def letters_uniform(items: list) -> float:
    """Aggregation: 1 when the keys pass the uniformity test (p > alpha), else 0."""
    res, alpha = _uniformity(items)
    return float(res is not None and res["p_value"] > alpha)
