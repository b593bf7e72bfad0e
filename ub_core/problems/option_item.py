"""The :class:`OptionItem` record of the option-logprob eval families (scored from the probability mass on each
option): numeric calibration (the numeric-calibration paper), implicit probabilistic reasoning (the
implicit-reasoning paper) and its explicit multiple-choice twin.

These items are scored from next-token probabilities, not from sampled text. The prompt stops just before the
outcome. Each option's probability is the summed probability of its surface variants, which
:func:`ub_core.logprob.option_logprob.surface_variants` lists. The options are then normalised and compared with
``probabilities``, the ideal distribution. That distribution is exact: it is derived from the numbers in the
prompt, never simulated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .base import seed_sequence

__all__ = ["OptionItem", "OPTION_LOGPROB_BANKS"]

#: The banks made of OptionItems (the option-logprob eval families).
OPTION_LOGPROB_BANKS = ("calibration", "implicit", "explicit")


@dataclass(frozen=True, eq=False)
class OptionItem:
    """One prompt whose next-token distribution over ``options`` is compared with ``probabilities``.

    - ``id``: stable across versions and frameworks (derived from the generating parameters, not a counter).
    - ``bank``: ``calibration``, ``implicit`` or ``explicit``.
    - ``category``:
      - calibration: ``colors``, ``wordproblems`` or ``distributions``;
      - implicit and explicit: ``dice``, ``coins``, ``preference``, ``choice`` or ``statistics``.
    - ``family``: the shape of the ideal distribution (``categorical``, ``uniform_integer``, ``dice_sum``, ...).
    - ``params``: the numbers that define the ideal distribution.
    - ``prompt``: the context. The outcome token follows it directly, so it ends without a trailing space.
    - ``options``: the canonical outcome strings, for example ``("red", "blue")``, ``("2", ..., "12")`` or
      ``("A", ..., "E")``.
    - ``probabilities``: the ideal distribution over ``options``. It sums to 1.
    - ``cluster``: the unit for clustered 95% intervals: the option pair (the numeric-calibration paper) or the scenario
      (the implicit-reasoning paper).
    - ``answer_index``: the index of the correct letter in an explicit MCQ twin. ``None`` elsewhere.
    - ``metadata``: template id, option order, scale, subset membership, and similar. JSON-serialisable.
    """

    id: str
    bank: str
    category: str
    family: str
    params: Mapping[str, Any]
    prompt: str
    options: tuple[str, ...]
    probabilities: tuple[float, ...]
    cluster: str
    answer_index: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if len(self.options) < 2 or len(set(self.options)) != len(self.options):
            raise ValueError(f"{self.id}: need at least two distinct options, got {self.options!r}")
        if len(self.probabilities) != len(self.options):
            raise ValueError(f"{self.id}: {len(self.probabilities)} probabilities for {len(self.options)} options")
        if any(not (p >= 0) for p in self.probabilities) or not math.isclose(sum(self.probabilities), 1.0,
                                                                               abs_tol=1e-9):
            raise ValueError(f"{self.id}: probabilities must be >= 0 and sum to 1, got {self.probabilities!r}")
        if self.answer_index is not None and not 0 <= self.answer_index < len(self.options):
            raise ValueError(f"{self.id}: answer_index {self.answer_index} out of range")

    @property
    def support(self) -> str:
        return "categorical"

    def truth(self, size: int = 10_000, seed: int = 0) -> np.ndarray:
        """``size`` draws of option indices from the ideal distribution. This is a pure function of
        (id, seed, size), so these items honour the same contract as the sampling banks."""
        rng = np.random.default_rng(seed_sequence(self.id, seed))
        return rng.choice(len(self.options), size=int(size), p=np.asarray(self.probabilities, dtype=float))

    def to_record(self) -> dict[str, Any]:
        """A JSON-serialisable record (an lm-eval document, the metadata of an Inspect sample)."""
        return {"id": self.id, "bank": self.bank, "category": self.category, "family": self.family,
                "params": dict(self.params), "prompt": self.prompt, "options": list(self.options),
                "probabilities": [float(p) for p in self.probabilities], "cluster": self.cluster,
                "answer_index": self.answer_index, "metadata": dict(self.metadata)}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "OptionItem":
        """Rebuild an item from :meth:`to_record` output. An lm-eval document or an Inspect sample's metadata can
        be scored without the bank."""
        try:
            return cls(id=str(record["id"]), bank=str(record["bank"]), category=str(record["category"]),
                       family=str(record["family"]), params=dict(record.get("params") or {}),
                       prompt=str(record["prompt"]), options=tuple(str(o) for o in record["options"]),
                       probabilities=tuple(float(p) for p in record["probabilities"]),
                       cluster=str(record["cluster"]),
                       answer_index=None if record.get("answer_index") is None else int(record["answer_index"]),
                       metadata=dict(record.get("metadata") or {}))
        except KeyError as exc:
            raise ValueError(f"not a OptionItem record: missing field {exc.args[0]!r}") from None
