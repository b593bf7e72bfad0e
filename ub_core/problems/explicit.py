"""The explicit twin of the implicit bank (the implicit-reasoning paper, sections 3.1 and 3.4, appendix A): a
five-option MCQ per scenario.

Every implicit scenario gets exactly one MCQ, so the two banks pair item for item (``exp-<key>`` twins
``imp-<key>``, same category, cluster and grid metadata). The MCQ gives the same context and asks for the probability
of one outcome:

- Asked outcome. The ideal distribution's mode when it is unique. The implicit-reasoning paper's section 4.1 compares
  the two settings on the most likely outcome. When the mode is tied (a fair die, a fair coin), one of the tied outcomes
  is picked with a generator seeded from the id.
- Correct value. The exact probability of that outcome. In ``statistics`` it is the marginal prevalence
  ``s * p_ward + (1 - s) * p_rest``, not the normalised share.
- Distractors. Four values, distinct, in (0, 1], different from the truth, and written the same way. They are drawn
  with the id-seeded generator from a pool of plausible mistakes:
  - fractions: the truth scaled by 1/4, 1/3, 1/2, 2/3, 3/4, 4/3, 3/2, 5/3, 2 or 3 (the paper's own distractors
    are the truth times 1/3, 2/3, 4/3 and 5/3), one minus the truth, and the uniform 1/#options.
  - percentages: the ward rate, the rest rate, their plain average, the ward term alone, the rest term alone, the
    other conditions' marginals, and the truth scaled by the multipliers above (rounded to two decimals).
- Rank. How many distractors lie below the truth is drawn uniformly from what the pool allows (0 to 4 unless the
  truth is near 1), so the truth's rank among the five values carries no signal.
- Order. The five values are shuffled by the same generator. ``answer_index`` is the truth's letter, and
  ``probabilities`` is one-hot on it.

Values are written as reduced fractions (``5/36``; ``1`` for certainty) or as percentages with two decimals
(``10.54%``). Every statistics marginal has at most two decimals in percent, so the written value is exact.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np

from .base import seed_sequence
from .implicit import Scenario, selected_scenarios, subset_ids
from .option_item import OptionItem

__all__ = ["BANK_VERSION", "LETTERS", "explicit_item", "explicit_items", "asked_outcome", "format_value",
           "distractor_pool", "pair_ids"]

BANK_VERSION = "2"  # 2: the die_shown items are their own category, dice_shown
LETTERS = ("A", "B", "C", "D", "E")
MULTIPLIERS = tuple(Fraction(x) for x in ("1/4", "1/3", "1/2", "2/3", "3/4", "4/3", "3/2", "5/3", "2", "3"))
_PERCENT_STEP = Fraction(1, 10_000)  # two decimals of a percentage


def _rng(scenario: Scenario) -> np.random.Generator:
    return np.random.default_rng(seed_sequence(f"exp-{scenario.key}", 0))


def asked_outcome(scenario: Scenario, rng: np.random.Generator | None = None) -> int:
    """Index of the outcome the MCQ asks about: the unique mode, else an id-seeded pick among the tied modes."""
    probs = scenario.probabilities
    top = max(probs)
    modes = [i for i, p in enumerate(probs) if p == top]
    if len(modes) == 1:
        return modes[0]
    rng = rng if rng is not None else _rng(scenario)
    return modes[int(rng.integers(len(modes)))]


def format_value(value: Fraction, value_format: str) -> str:
    """``"fraction"``: reduced ``a/b`` (``0`` and ``1`` bare); ``"percent"``: ``12.34%``. Percentages must be
    exact at two decimals."""
    value = Fraction(value)
    if value_format == "fraction":
        return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    if value_format == "percent":
        hundredths = value * 10_000
        if hundredths.denominator != 1:
            raise ValueError(f"{value} is not exact at two decimals of a percent")
        n = hundredths.numerator
        return f"{n // 100}.{n % 100:02d}%"
    raise ValueError(f"unknown value format {value_format!r}; expected fraction or percent")


def _round_percent(v: Fraction) -> Fraction:
    return Fraction(round(v / _PERCENT_STEP)) * _PERCENT_STEP


def distractor_pool(scenario: Scenario, index: int) -> list[Fraction]:
    """Candidate wrong values for outcome ``index``, in a fixed order, filtered to (0, 1], distinct in their written
    form, and different from the truth."""
    truth = scenario.explicit_probabilities[index]
    fmt = scenario.value_format
    if fmt == "fraction":
        raw = [truth * m for m in MULTIPLIERS] + [1 - truth, Fraction(1, len(scenario.options))]
    else:  # statistics: the usual slips in a total-probability computation
        md = scenario.metadata
        s = Fraction(md["share"], 100)
        a, b = Fraction(md["ward_rates"][index], 100), Fraction(md["rest_rates"][index], 100)
        others = [m for j, m in enumerate(scenario.explicit_probabilities) if j != index]
        raw = [a, b, (a + b) / 2, s * a, (1 - s) * b, *others]
        raw += [_round_percent(truth * m) for m in MULTIPLIERS]  # fallbacks if the slips collide
    seen = {format_value(truth, fmt)}
    pool: list[Fraction] = []
    for v in raw:
        if not 0 < v <= 1:
            continue
        text = format_value(v, fmt)
        if text not in seen:
            seen.add(text)
            pool.append(v)
    return pool


def explicit_item(scenario: Scenario, in_subset: bool = False) -> OptionItem:
    """The five-option MCQ twin of one implicit scenario (see the module docstring for the rules)."""
    rng = _rng(scenario)
    index = asked_outcome(scenario, rng)
    truth = scenario.explicit_probabilities[index]
    pool = distractor_pool(scenario, index)
    below = [v for v in pool if v < truth]
    above = [v for v in pool if v > truth]
    # The truth's rank among the five is drawn uniformly from the ranks the pool allows, so that "pick the middle
    # value" or "pick the smallest" is no strategy. The multipliers below 1 always give five values below the truth.
    low_rank, high_rank = max(0, 4 - len(above)), min(4, len(below))
    if low_rank > high_rank:  # cannot happen (see above); a construction bug, not an input error
        raise RuntimeError(f"{scenario.id}: only {len(pool)} distractors")
    rank = int(rng.integers(low_rank, high_rank + 1))
    picked = [below[int(i)] for i in rng.choice(len(below), size=rank, replace=False)] + \
        [above[int(i)] for i in rng.choice(len(above), size=4 - rank, replace=False)]
    values = [truth, *picked]
    order = rng.permutation(5)
    values = [values[int(i)] for i in order]
    answer = int(np.flatnonzero(order == 0)[0])
    texts = [format_value(v, scenario.value_format) for v in values]
    outcome = scenario.options[index]
    lines = "\n".join(f"{letter}) {text}" for letter, text in zip(LETTERS, texts))
    prompt = (f"{scenario.context}\n\nQuestion: {scenario.question.format(outcome=outcome)}\n{lines}\n"
              f"Reply with the letter of the correct option.\nAnswer:")
    return OptionItem(
        id=f"exp-{scenario.key}", bank="explicit", category=scenario.category, family="mcq",
        params={"outcome": outcome, "truth": float(truth), "values": [float(v) for v in values]},
        prompt=prompt, options=LETTERS, probabilities=tuple(1.0 if i == answer else 0.0 for i in range(5)),
        cluster=scenario.cluster, answer_index=answer,
        metadata={**scenario.metadata, "variant": scenario.variant, "source_id": scenario.id,
                  "value_texts": texts, "value_format": scenario.value_format, "in_subset": bool(in_subset)})


@lru_cache(maxsize=2)
def _items(size: str) -> tuple[OptionItem, ...]:
    keep = subset_ids()
    return tuple(explicit_item(s, s.id in keep) for s in selected_scenarios(size))


def explicit_items(size: str | None = None) -> tuple[OptionItem, ...]:
    """The explicit bank: one MCQ per implicit scenario of edition ``size`` (``"subset"`` (default) or
    ``"full"``), in the implicit bank's order."""
    if size not in (None, "subset", "full"):
        raise ValueError(f"unknown bank size {size!r}; expected subset or full")
    return _items("subset" if size is None else size)


def pair_ids(items: Sequence[OptionItem]) -> dict[str, str]:
    """Map each explicit item's id to its implicit twin's id."""
    return {it.id: str(it.metadata["source_id"]) for it in items}
