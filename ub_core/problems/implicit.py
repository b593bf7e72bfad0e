"""The implicit probabilistic reasoning bank (the implicit-reasoning paper): scenarios whose prompt stops right before
an outcome.

Design notes: docs/design/implicit-bank.md.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .exact_pmf import dice_sum_distribution  # noqa: F401  (re-exported)
from .option_item import OptionItem

__all__ = ["BANK_VERSION", "CATEGORIES", "VARIANTS", "Scenario", "implicit_scenarios", "implicit_items",
           "dice_sum_distribution", "condition_distribution", "coin_count_distribution", "prevalence_marginal",
           "statistics_scenario", "subset_ids", "selected_scenarios", "SUBSET_CAP", "STAT_NAMES", "STAT_WARDS",
           "STAT_CONDITIONS", "STATISTICS_SEED"]

BANK_VERSION = "2"  # 2: the die_shown items are their own category, dice_shown

CATEGORIES = ("dice", "coins", "preference", "choice", "statistics", "dice_shown")
VARIANTS = {
    "dice": ("single", "independent", "dependent", "observed"),
    "dice_shown": ("die_shown",),
    "coins": ("single", "independent", "dependent"),
    "preference": ("single", "repeated"),
    "choice": ("single", "repeated"),
    "statistics": ("single",),
}

DICE_COUNTS = (1, 2, 3)
DICE_FACES = (4, 6, 8, 10, 12)
COIN_COUNTS = (2, 3, 4)
COIN_FOCUS = ("heads", "tails")
COIN_BIASES = (1, 3, 5)
PREFERENCE_LABELS = (("Left", "Right"), ("Heads", "Tails"))
PREFERENCE_BIASES = (1, 2, 3)
CHOICE_COUNTS = (2, 4, 6)
LETTERS = "ABCDEFGHIJKL"

# Our own lists for the statistics scenarios (the paper's table 8 has its own); drawn with STATISTICS_SEED.
STAT_NAMES = ("Alex", "Robin", "Casey", "Jordan", "Morgan", "Taylor", "Riley", "Quinn", "Avery", "Jamie",
              "Drew", "Parker")
STAT_WARDS = ("cardiology", "oncology", "emergency", "neurology", "orthopaedic", "geriatric", "radiology",
              "intensive care")
STAT_CONDITIONS = ("burnout", "anxiety", "depression", "insomnia", "migraine", "hypertension")
STATISTICS_SEED = 3003
STATISTICS_COUNT = 200
STAT_PREVALENCE = (1, 30)   # percent, inclusive (table 8)
STAT_SHARE = (5, 20)        # percent of staff in the ward, inclusive (table 8)

SUBSET_CAP = 60

# Observations about a dice total (table 4). Keys are stable id parts.
OBSERVATIONS = ("even", "odd", "below", "above", "not1", "notmid")


@dataclass(frozen=True)
class Scenario:
    """One implicit scenario before it becomes a :class:`OptionItem`; :mod:`.explicit` builds its MCQ from it.

    ``context`` is the setup, ``stub`` the words that lead into the outcome; the implicit prompt is
    ``context + " " + stub``. ``question`` has an ``{outcome}`` slot and asks the explicit question about one outcome.
    ``explicit_probabilities`` are the values the explicit twin asks about: the same as ``probabilities`` except in
    ``statistics``, where they are the unnormalised marginal prevalences. ``value_format`` is ``"fraction"`` or
    ``"percent"``.
    """

    key: str
    category: str
    variant: str
    family: str
    params: Mapping[str, Any]
    metadata: Mapping[str, Any]
    cluster: str
    context: str
    stub: str
    question: str
    options: tuple[str, ...]
    probabilities: tuple[Fraction, ...]
    explicit_probabilities: tuple[Fraction, ...]
    value_format: str = "fraction"

    @property
    def id(self) -> str:
        return f"imp-{self.key}"

    @property
    def prompt(self) -> str:
        return f"{self.context} {self.stub}"

    def item(self, in_subset: bool) -> OptionItem:
        return OptionItem(id=self.id, bank="implicit", category=self.category, family=self.family,
                         params=dict(self.params), prompt=self.prompt, options=self.options,
                         probabilities=_floats(self.probabilities), cluster=self.cluster,
                         metadata={**self.metadata, "variant": self.variant, "in_subset": bool(in_subset)})


def _floats(probs: Sequence[Fraction]) -> tuple[float, ...]:
    """Fractions to floats that sum to 1 within OptionItem's tolerance (each is correctly rounded)."""
    return tuple(float(p) for p in probs)


# ============================================================================================ exact distributions


def condition_distribution(dist: Mapping[int, Fraction], keep: Callable[[int], bool]) -> dict[int, Fraction]:
    """``dist`` conditioned on the event ``keep(outcome)``: outcomes outside it are dropped and the rest divided by
    the event's probability (Bayes). An event of probability zero is an error."""
    kept = {k: p for k, p in dist.items() if keep(k)}
    mass = sum(kept.values(), Fraction(0))
    if mass == 0:
        raise ValueError("the observations rule out every outcome")
    return {k: p / mass for k, p in kept.items()}


def coin_count_distribution(n_coins: int, p_focus: Fraction) -> dict[int, Fraction]:
    """Exact Binomial(``n_coins``, ``p_focus``) distribution of the number of coins showing the counted face."""
    p = Fraction(p_focus)
    if not 0 <= p <= 1:
        raise ValueError(f"p_focus must be in [0, 1], got {p}")
    return {k: math.comb(n_coins, k) * p ** k * (1 - p) ** (n_coins - k) for k in range(n_coins + 1)}


def prevalence_marginal(share: Fraction, p_ward: Fraction, p_rest: Fraction) -> Fraction:
    """Prevalence over all staff by the law of total probability: ``share * p_ward + (1 - share) * p_rest``."""
    share, p_ward, p_rest = Fraction(share), Fraction(p_ward), Fraction(p_rest)
    for name, v in (("share", share), ("p_ward", p_ward), ("p_rest", p_rest)):
        if not 0 <= v <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {v}")
    return share * p_ward + (1 - share) * p_rest


def _shift(dist: Mapping[int, Fraction], by: int) -> dict[int, Fraction]:
    return {k + by: p for k, p in dist.items()}


def _options(dist: Mapping[int, Fraction], support: Sequence[int] | None = None
             ) -> tuple[tuple[str, ...], tuple[Fraction, ...]]:
    """Options and probabilities in increasing outcome order. ``support`` lists the outcomes the question admits
    before any evidence (all totals of the dice); outcomes the evidence rules out stay as options with
    probability 0, so a model that still predicts them is penalised."""
    keys = sorted(dist) if support is None else sorted(support)
    extra = set(dist) - set(keys)
    if extra:
        raise ValueError(f"outcomes {sorted(extra)} fall outside the support")
    return tuple(str(k) for k in keys), tuple(dist.get(k, Fraction(0)) for k in keys)


def _all(n: int) -> str:
    return "Both" if n == 2 else f"All {n}"


# ============================================================================================ dice

def _middle(n: int, faces: int) -> int:
    # The middle value of the totals n..n*faces, rounded down (a 4-faced die: 2, as in the paper's "smaller than 2")
    return (n + n * faces) // 2


def _observation(key: str, mid: int) -> tuple[Callable[[int], bool], str]:
    return {
        "even": (lambda t: t % 2 == 0, "an even number"),
        "odd": (lambda t: t % 2 == 1, "an odd number"),
        "below": (lambda t: t < mid, f"less than {mid}"),
        "above": (lambda t: t > mid, f"greater than {mid}"),
        "not1": (lambda t: t != 1, "not 1"),
        "notmid": (lambda t: t != mid, f"not {mid}"),
    }[key]


def _observation_sets(n: int, faces: int) -> list[tuple[str, ...]]:
    """One or two observations about the total. Each must rule something out on its own (so "not 1" is absent for
    two or more dice), and a pair must be consistent (leave at least one outcome). Pairs are unordered."""
    support = set(dice_sum_distribution(n, faces))
    mid = _middle(n, faces)
    informative = [k for k in OBSERVATIONS
                   if set(filter(_observation(k, mid)[0], support)) not in (support, set())]
    sets: list[tuple[str, ...]] = [(k,) for k in informative]
    for a, b in itertools.combinations(informative, 2):
        fa, fb = _observation(a, mid)[0], _observation(b, mid)[0]
        if any(fa(t) and fb(t) for t in support):
            sets.append((a, b))
    return sets


def _dice_words(n: int, faces: int) -> str:
    if n == 1:
        return (f"There is one fair die with {faces} faces, numbered 1 to {faces}. Every face is equally likely to "
                f"land on top.")
    return (f"There are {n} fair dice, each with {faces} faces numbered 1 to {faces}. On every die each face is "
            f"equally likely to land on top.")


def _dice_scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for n in DICE_COUNTS:
        for f in DICE_FACES:
            base = dice_sum_distribution(n, f)
            setup = _dice_words(n, f)
            cfg = f"{n}d{f}"
            cluster = f"dice-{cfg}"
            one = n == 1
            grid = {"n_dice": n, "faces": f}

            def add(key, variant, dist, context, stub, question, extra=None, family="dice_sum", params=None,
                    support=None, cfg=cfg, grid=grid, cluster=cluster):
                opts, probs = _options(dist, support)
                out.append(Scenario(key=f"dice-{variant}-{cfg}{key}", variant=variant,
                                    category="dice_shown" if variant == "die_shown" else "dice",
                                    family=family, params={**grid, **(params or {})},
                                    metadata={**grid, **(extra or {})}, cluster=cluster, context=context,
                                    stub=stub, question=question, options=opts, probabilities=probs,
                                    explicit_probabilities=probs))

            # single roll
            if one:
                add("", "single", base, f"{setup} The die is rolled once.", "It lands showing",
                    "What is the probability that the die lands showing {outcome}?")
            else:
                add("", "single", base, f"{setup} {_all(n)} dice are rolled once.", "The faces add up to",
                    "What is the probability that the faces add up to {outcome}?")

            # repeated rolls: every total the first roll can show
            for prev in sorted(base):
                if one:
                    first = f"{setup} The die is rolled once and lands showing {prev}. It is then rolled a second time."
                    add(f"-p{prev}", "independent", base, first, "On this second roll it lands showing",
                        "What is the probability that the second roll lands showing {outcome}?",
                        {"previous": prev}, params={"shift": 0})
                else:
                    first = (f"{setup} {_all(n)} dice are rolled once and their faces add up to {prev}. They are then "
                             f"{'both' if n == 2 else 'all'} rolled a second time.")
                    add(f"-p{prev}", "independent", base, first, "On this second roll the faces add up to",
                        "What is the probability that the faces add up to {outcome} on the second roll?",
                        {"previous": prev}, params={"shift": 0})
                add(f"-p{prev}", "dependent", _shift(base, prev), first,
                    "Adding the results of both rolls together gives a grand total of",
                    "What is the probability that the results of both rolls add up to a grand total of {outcome}?",
                    {"previous": prev}, params={"shift": prev}, support=range(2 * n, 2 * n * f + 1))

            # observations about the total
            mid = _middle(n, f)
            what = "the number on top" if one else "the total of the faces"
            for obs in _observation_sets(n, f):
                tests = [_observation(k, mid) for k in obs]
                dist = condition_distribution(base, lambda t, tests=tests: all(fn(t) for fn, _ in tests))
                told = " and that it is ".join(words for _, words in tests)
                rolled = "The die is rolled once." if one else f"{_all(n)} dice are rolled once."
                context = f"{setup} {rolled} We cannot see the result, but we are told that {what} is {told}."
                add(f"-o{'+'.join(obs)}", "observed", dist, context,
                    "In fact the die lands showing" if one else "In fact the faces add up to",
                    ("Given this information, what is the probability that the die lands showing {outcome}?" if one
                     else "Given this information, what is the probability that the faces add up to {outcome}?"),
                    {"observations": list(obs), "middle": mid}, family="dice_conditioned",
                    params={"observations": list(obs), "middle": mid}, support=base)

            # observations of the dice themselves
            if n >= 2:
                rest = dice_sum_distribution(n - 1, f)
                for a in range(1, f + 1):
                    context = (f"{setup} {_all(n)} dice are rolled once. We can see that the first die shows {a}; "
                               f"the other {'die is' if n == 2 else 'dice are'} still hidden.")
                    add(f"-s{a}", "die_shown", _shift(rest, a), context, f"{_all(n)} faces add up to",
                        "Given this information, what is the probability that " + _all(n).lower()
                        + " faces add up to {outcome}?", {"shown": [a]}, params={"shown": [a]}, support=base)
            if n == 3:
                last = dice_sum_distribution(1, f)
                for a, b in itertools.combinations_with_replacement(range(1, f + 1), 2):
                    context = (f"{setup} All 3 dice are rolled once. We can see that the first die shows {a} and the "
                               f"second die shows {b}; the third die is still hidden.")
                    add(f"-s{a}+{b}", "die_shown", _shift(last, a + b), context, "All 3 faces add up to",
                        "Given this information, what is the probability that all 3 faces add up to {outcome}?",
                        {"shown": [a, b]}, params={"shown": [a, b]}, support=base)
    return out


# ============================================================================================ coins

def _coin_scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for bias in COIN_BIASES:
        for focus in COIN_FOCUS:
            other = "tails" if focus == "heads" else "heads"
            p = Fraction(bias, bias + 1)
            if bias == 1:
                fairness = "Every coin is fair, so heads and tails are equally likely."
            else:
                fairness = f"Every coin is weighted so that it lands on {focus} {bias} times as often as on {other}."
            for n in COIN_COUNTS:
                base = coin_count_distribution(n, p)
                setup = f"We have {n} coins. {fairness}"
                cfg = f"{n}c-{focus}-b{bias}"
                cluster = f"coins-{cfg}"
                grid = {"n_coins": n, "focus": focus, "bias": bias}

                def add(key, variant, dist, context, stub, question, extra=None, shift=0, support=None,
                        cfg=cfg, n=n, p=p, grid=grid, cluster=cluster):
                    opts, probs = _options(dist, support)
                    out.append(Scenario(key=f"coins-{variant}-{cfg}{key}", category="coins", variant=variant,
                                        family="binomial", params={"n": n, "p": float(p), "shift": shift},
                                        metadata={**grid, **(extra or {})}, cluster=cluster, context=context,
                                        stub=stub, question=question, options=opts, probabilities=probs,
                                        explicit_probabilities=probs))

                add("", "single", base, f"{setup} {_all(n)} coins are tossed once.",
                    f"The number of coins that land on {focus} is",
                    "What is the probability that the number of coins that land on " + focus + " is {outcome}?")
                for prev in range(n + 1):
                    landed = "none of them lands" if prev == 0 else (
                        f"{prev} of them land" if prev < n else f"{_all(n).lower()} of them land")
                    first = (f"{setup} {_all(n)} coins are tossed once, and {landed} on {focus}. "
                             f"Then {_all(n).lower()} coins are tossed a second time.")
                    add(f"-p{prev}", "independent", base, first,
                        f"On this second toss, the number of coins that land on {focus} is",
                        "What is the probability that on the second toss the number of coins that land on "
                        + focus + " is {outcome}?", {"previous": prev})
                    add(f"-p{prev}", "dependent", _shift(base, prev), first,
                        f"Counting both tosses together, the total number of {focus} is",
                        "What is the probability that, counting both tosses together, the total number of "
                        + focus + " is {outcome}?", {"previous": prev}, shift=prev, support=range(2 * n + 1))
    return out


# ============================================================================================ preference, choice

def _preference_scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for labels in PREFERENCE_LABELS:
        pair = "-".join(x.lower() for x in labels)
        for order in (0, 1):
            listed = labels if order == 0 else labels[::-1]
            for bias in PREFERENCE_BIASES:
                for favoured in ((None,) if bias == 1 else labels):
                    if favoured is None:
                        weights = (Fraction(1, 2), Fraction(1, 2))
                        rule = "Both options are equally likely to be picked."
                        fav_key = "fair"
                    else:
                        other = labels[1] if favoured == labels[0] else labels[0]
                        q = Fraction(bias, bias + 1)
                        weights = tuple(q if x == favoured else 1 - q for x in labels)
                        rule = f"The pick is weighted: {favoured} is {bias} times as likely to be picked as {other}."
                        fav_key = favoured.lower()
                    setup = f"Someone has to pick one of two options at random: {listed[0]} or {listed[1]}. {rule}"
                    cfg = f"{pair}-o{order}-b{bias}-{fav_key}"
                    grid = {"labels": list(labels), "order": list(listed), "bias": bias, "favoured": favoured}
                    probs = tuple(weights)
                    common = dict(category="preference", family="bernoulli",
                                  params={"weights": [float(w) for w in weights]}, cluster=f"preference-{cfg}",
                                  options=tuple(labels), probabilities=probs, explicit_probabilities=probs)
                    out.append(Scenario(key=f"pref-single-{cfg}", variant="single", metadata=grid,
                                        context=setup, stub="They pick option",
                                        question="What is the probability that they pick option {outcome}?",
                                        **common))
                    for prev in labels:
                        out.append(Scenario(
                            key=f"pref-repeated-{cfg}-p{prev.lower()}", variant="repeated",
                            metadata={**grid, "previous": prev},
                            context=(f"{setup} Their first pick is option {prev}. They then pick again, at random "
                                     f"and independently of the first pick."),
                            stub="This second time they pick option",
                            question="What is the probability that the second time they pick option {outcome}?",
                            **common))
    return out


def _letter_list(letters: Sequence[str]) -> str:
    return letters[0] + " and " + letters[1] if len(letters) == 2 else ", ".join(letters[:-1]) + " and " + letters[-1]


def _choice_scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for k in CHOICE_COUNTS:
        letters = tuple(LETTERS[:k])
        probs = tuple(Fraction(1, k) for _ in letters)
        setup = (f"Someone has to pick one of {k} options, labelled {_letter_list(letters)}. Every option is "
                 f"equally likely to be picked.")
        common = dict(category="choice", family="uniform_categorical", params={"k": k}, cluster=f"choice-{k}",
                      options=letters, probabilities=probs, explicit_probabilities=probs)
        out.append(Scenario(key=f"choice-single-{k}", variant="single", metadata={"n_options": k},
                            context=setup, stub="They pick option",
                            question="What is the probability that they pick option {outcome}?", **common))
        for prev in letters:
            out.append(Scenario(
                key=f"choice-repeated-{k}-p{prev}", variant="repeated", metadata={"n_options": k, "previous": prev},
                context=f"{setup} Their first pick is option {prev}. They then pick again, at random and "
                        f"independently of the first pick.",
                stub="This second time they pick option",
                question="What is the probability that the second time they pick option {outcome}?", **common))
    return out


# ============================================================================================ statistics

def statistics_scenario(index: int, name: str, ward: str, conditions: Sequence[str], ward_rates: Sequence[int],
                        rest_rates: Sequence[int], share: int) -> Scenario:
    """One prevalence scenario. Rates and ``share`` are whole percentages; ``conditions`` are three distinct
    names, listed in that order. The outcome distribution is the marginal prevalences, normalised."""
    conditions = tuple(conditions)
    if len(conditions) != 3 or len(set(conditions)) != 3:
        raise ValueError(f"need three distinct conditions, got {conditions!r}")
    if len(ward_rates) != 3 or len(rest_rates) != 3:
        raise ValueError("need one ward rate and one rest rate per condition")
    for r in (*ward_rates, *rest_rates, share):
        if not (isinstance(r, (int, np.integer)) and 0 < r < 100):
            raise ValueError(f"rates and share must be whole percentages in 1..99, got {r!r}")
    s = Fraction(int(share), 100)
    marginals = tuple(prevalence_marginal(s, Fraction(int(a), 100), Fraction(int(b), 100))
                      for a, b in zip(ward_rates, rest_rates))
    total = sum(marginals, Fraction(0))
    probs = tuple(m / total for m in marginals)
    lines_ward = "\n".join(f"- {c}: {r}%" for c, r in zip(conditions, ward_rates))
    lines_rest = "\n".join(f"- {c}: {r}%" for c, r in zip(conditions, rest_rates))
    context = (f"A hospital survey measured how common three conditions are among staff who work in {ward} wards:\n"
               f"{lines_ward}\nAmong staff who work anywhere else in the hospital, the rates were:\n{lines_rest}\n"
               f"Of all the hospital's staff, {share}% work in {ward} wards.\n"
               f"{name} is a member of the hospital's staff; we do not know where {name} works.\n")
    grid = {"name": name, "ward": ward, "conditions": list(conditions), "ward_rates": [int(x) for x in ward_rates],
            "rest_rates": [int(x) for x in rest_rates], "share": int(share)}
    return Scenario(key=f"stat-{index:03d}", category="statistics", variant="single", family="categorical",
                    params={"marginals": [float(m) for m in marginals]}, metadata=grid,
                    cluster=f"statistics-{index:03d}", context=context.rstrip("\n"),
                    stub=f"From these figures, the condition {name} most likely has is",
                    question="Based on these figures, what is the probability that " + name + " has {outcome}?",
                    options=conditions, probabilities=probs, explicit_probabilities=marginals,
                    value_format="percent")


def _statistics_scenarios() -> list[Scenario]:
    # One generator, fixed seed, fixed draw order: the 200 scenarios are a pure function of STATISTICS_SEED and the
    # lists above. A draw whose prompt repeats an earlier one is redrawn (never happened with this seed; kept so the
    # uniqueness guarantee does not rest on luck).
    rng = np.random.default_rng(STATISTICS_SEED)
    out: list[Scenario] = []
    seen: set[str] = set()
    lo, hi = STAT_PREVALENCE
    while len(out) < STATISTICS_COUNT:
        name = STAT_NAMES[rng.integers(len(STAT_NAMES))]
        ward = STAT_WARDS[rng.integers(len(STAT_WARDS))]
        conds = [STAT_CONDITIONS[i] for i in rng.choice(len(STAT_CONDITIONS), size=3, replace=False)]
        ward_rates = [int(x) for x in rng.integers(lo, hi + 1, size=3)]
        rest_rates = [int(x) for x in rng.integers(lo, hi + 1, size=3)]
        share = int(rng.integers(STAT_SHARE[0], STAT_SHARE[1] + 1))
        sc = statistics_scenario(len(out), name, ward, conds, ward_rates, rest_rates, share)
        if sc.prompt in seen:
            continue
        seen.add(sc.prompt)
        out.append(sc)
    return out


# ============================================================================================ bank

@lru_cache(maxsize=1)
def implicit_scenarios() -> tuple[Scenario, ...]:
    """Every scenario of the full grid, in grid order (category, then variant construction order)."""
    scenarios = (*_dice_scenarios(), *_coin_scenarios(), *_preference_scenarios(), *_choice_scenarios(),
                 *_statistics_scenarios())
    ids = [s.id for s in scenarios]
    if len(set(ids)) != len(ids):  # a construction bug, not an input error
        raise RuntimeError("duplicate implicit scenario ids")
    return scenarios


def _even_picks(n: int, cap: int) -> list[int]:
    if n <= cap:
        return list(range(n))
    return [(i * n) // cap for i in range(cap)]


@lru_cache(maxsize=1)
def subset_ids() -> frozenset[str]:
    """Ids in the ``subset`` edition: per (category, variant), everything up to SUBSET_CAP, else SUBSET_CAP evenly
    spaced items in grid order."""
    strata: dict[tuple[str, str], list[Scenario]] = {}
    for s in implicit_scenarios():
        strata.setdefault((s.category, s.variant), []).append(s)
    keep: set[str] = set()
    for members in strata.values():
        keep.update(members[i].id for i in _even_picks(len(members), SUBSET_CAP))
    return frozenset(keep)


def selected_scenarios(size: str | None = None) -> tuple[Scenario, ...]:
    """Scenarios of edition ``size`` (``"full"``, or ``"subset"`` / None)."""
    if size not in (None, "subset", "full"):
        raise ValueError(f"unknown bank size {size!r}; expected subset or full")
    if size == "full":
        return implicit_scenarios()
    keep = subset_ids()
    return tuple(s for s in implicit_scenarios() if s.id in keep)


@lru_cache(maxsize=2)
def _items(size: str) -> tuple[OptionItem, ...]:
    keep = subset_ids()
    return tuple(s.item(s.id in keep) for s in selected_scenarios(size))


def implicit_items(size: str | None = None) -> tuple[OptionItem, ...]:
    """The implicit bank as :class:`OptionItem` records (``size``: ``"subset"`` (default) or ``"full"``)."""
    if size not in (None, "subset", "full"):
        raise ValueError(f"unknown bank size {size!r}; expected subset or full")
    return _items("subset" if size is None else size)
