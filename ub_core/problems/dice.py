"""The ``dice`` bank: the "Bad Dice Players" paper's 15 laws as sampling items.

One item per law (:data:`~ub_core.metrics.dice.DICE_ORDER`, the paper's three tiers), its prompt our own wording of
the law with its parameters, its ground truth the law's sampler from
:mod:`ub_core.distributions`. The protocol is chosen by the task, not the item:

- ``independent``: ``N`` stateless requests for one value each (the item's prompt and our answer-format
  instruction);
- ``batch``: one request for ``N`` values (the item's prompt and our list-prompting instruction,
  :meth:`~ub_core.problems.base.Problem.list_prompt`); the number of values read back may differ from ``N`` and is
  recorded, as the paper does.

The offline models (``ub/oracle``, ``ub-oracle``, ``ub/collapse``) find the items through :func:`find_dice_item`
(the bank's prompt index), so the oracle answers with true draws and the collapse model with one value repeated.
"""

from __future__ import annotations

from functools import lru_cache

from ..metrics.dice import DICE_LAWS, DICE_ORDER
from .base import Problem
from .builder import prompt_index, scalar_problem

__all__ = ["BANK_VERSION", "DICE_FAMILIES", "DICE_TEXT", "DICE_PROTOCOLS", "dice_items", "find_dice_item", "dice_item",
           "protocol_prompt"]

BANK_VERSION = "1"
DICE_PROTOCOLS = ("batch", "independent")

#: how our prompt states each law (:data:`~ub_core.metrics.dice.DICE_LAWS` holds its family and parameters)
DICE_TEXT: dict[str, str] = {
    "Bernoulli": ("a Bernoulli distribution with success probability p = 0.7 (each value is 1 with probability 0.7 "
                  "and 0 otherwise)"),
    "Binomial": ("a binomial distribution with n = 10 trials and success probability p = 0.5 (each value is a whole "
                 "number from 0 to 10)"),
    "Poisson": 'a Poisson distribution with mean lambda = 5 (each value is a whole number 0, 1, 2, ...)',
    "Uniform": 'the continuous uniform distribution on the interval [0, 1]',
    "Gaussian": 'the standard normal (Gaussian) distribution, mean 0 and standard deviation 1',
    "Beta": 'a Beta distribution with shape parameters alpha = 2 and beta = 2',
    "Exponential": 'an exponential distribution with rate lambda = 1 (mean 1)',
    "Cauchy": 'the standard Cauchy distribution, location 0 and scale 1',
    "TDistribution": "a Student's t distribution with 3 degrees of freedom",
    "ChiSquare": 'a chi-square distribution with 5 degrees of freedom',
    "FDistribution": 'an F distribution with 5 and 10 degrees of freedom (numerator 5, denominator 10)',
    "Gamma": 'a Gamma distribution with shape 2 and scale 2 (mean 4)',
    "Weibull": 'a Weibull distribution with shape 1.5 and scale 1',
    "Laplace": 'a Laplace distribution with location 0 and scale 1',
    "Logistic": 'a logistic distribution with location 0 and scale 1',
}
#: law -> (family of :mod:`ub_core.distributions`, its parameters, how our prompt states the law)
DICE_FAMILIES: dict[str, tuple[str, dict, str]] = {name: (law.family, dict(law.params), DICE_TEXT[name])
                                                   for name, law in DICE_LAWS.items()}
assert tuple(DICE_FAMILIES) == DICE_ORDER


def _item(name: str) -> Problem:
    family, params, text = DICE_FAMILIES[name]
    law = DICE_LAWS[name]
    prompt = f"You are a random number generator. Draw a value at random from {text}."
    return scalar_problem(f"dice-{name.lower()}", family, params, prompt, bank="dice", bank_version=BANK_VERSION,
                          category=law.tier, task_type="sampling", regime=name,
                          metadata={"law": name, "tier": law.tier, "law_support": law.support})


@lru_cache(maxsize=1)
def _items() -> tuple[Problem, ...]:
    return tuple(_item(name) for name in DICE_ORDER)


def dice_items(size: str | None = None) -> list[Problem]:
    """The 15 items, in the paper's order (one edition: ``size`` is accepted and ignored)."""
    return list(_items())


def dice_item(law: str) -> Problem:
    """The item of one law (its release name, e.g. ``"TDistribution"``); a one-line ValueError otherwise."""
    if law not in DICE_FAMILIES:
        raise ValueError(f"unknown dice law {law!r}; known: {', '.join(DICE_ORDER)}")
    return _items()[DICE_ORDER.index(law)]


def protocol_prompt(item: Problem, protocol: str, n: int) -> str:
    """The text one request sends: the list prompt for ``n`` values (batch) or the one-value prompt."""
    return item.list_prompt(int(n)) if protocol == "batch" else item.full_prompt


_find_law_item = prompt_index(dice_items)


def find_dice_item(text: str):
    """The dice bank's prompt index: a law's item (:func:`dice_items`), else a request of the MCQ task
    (:func:`ub_core.problems.dice_mcq.find_mcq_item`), else None."""
    from .dice_mcq import find_mcq_item

    return _find_law_item(text) or find_mcq_item(text)
