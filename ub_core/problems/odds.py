"""The "What are the odds" bank (the odds paper): percentiles, probabilities and sampling on 12 idealised families.

Design notes: docs/design/odds-bank.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from .. import distributions as D
from ..metrics.odds import nearest_shot_answer
from .base import Problem

# The bank's numbers and wording live in odds_data; every public name there is re-exported here.
from .odds_data import (  # noqa: F401 (every public name is re-exported)
    CONTEXTS, CONVENTIONS, DECIMALS, DISCRETE, EXPONENTIAL_CONVENTION, DISTRIBUTIONS, FAMILY_RANGES, NO_TOOLS,
    N_FAMILY_VARIANTS, PARAMETERISATIONS, PCT_ANSWER, PCT_ANSWER_TAGS, PCT_DISCRETE, PCT_TASK, PRB_ANSWER,
    PRB_ANSWER_TAGS, PRB_TASK, PROMPT_OPENINGS, RANGE_HIGH, RANGE_LOW, REAL_WORLD, RELEASE_FAMILY_SHOT_PERCENTILES,
    RELEASE_FAMILY_SHOT_PROBABILITIES, RELEASE_POWER_LAW_SHIFT, RELEASE_SHOT_PERCENTILES,
    RELEASE_SHOT_PROBABILITIES, RW_FRAMINGS, RealWorld, SHOT_COUNTS, SHOT_PERCENTILES, SHOT_PERCENTILE_POOL,
    SHOT_PROBABILITY_POOL, SHOT_TYPES, SMP_RELEASE, SMP_TASK, TASKS, TASK_SHORT, TEST_PERCENTILES,
    TEST_PROBABILITIES, TITLES,
)

__all__ = ["BANK", "BANK_VERSION", "TASKS", "DISTRIBUTIONS", "SHOT_COUNTS", "SHOT_TYPES", "CONTEXTS",
           "TEST_PERCENTILES",
           "SHOT_PERCENTILE_POOL", "TEST_PROBABILITIES", "SHOT_PROBABILITY_POOL", "SHOT_PERCENTILES",
           "PARAMETERISATIONS", "REAL_WORLD", "CONVENTIONS", "truth_params", "prompt_convention", "percentile_of",
           "probability_between", "odds_problems",
           "odds_items", "odds_item", "is_odds_problem", "PROMPT_OPENINGS", "find_odds_problem"]

BANK = "odds"
# Bump when any prompt, parameter or answer changes: it keys the ground-truth cache.
BANK_VERSION = "3"


# ------------------------------------------------------------------------------------------------ exact answers

def _key(family: str, params: Mapping) -> tuple:
    return (family, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())))


@lru_cache(maxsize=None)
def _frozen_by_key(key: tuple):
    family, items = key
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in items}
    return D.frozen(family, params)


def _dist(family: str, params: Mapping):
    return _frozen_by_key(_key(family, params))


def _is_discrete(family: str) -> bool:
    return family in DISCRETE


def percentile_of(family: str, params: Mapping, x: float) -> float:
    """Exact percentile (0-100) of ``x``: ``100 F(x)`` for a continuous family, the mid-rank
    ``100 (P(X < x) + P(X <= x)) / 2`` for a discrete one (the paper convention; see the module docstring). The
    release convention's answer is the target percentile itself (see :func:`_percentile_answer`)."""
    dist = _dist(family, params)
    if not _is_discrete(family):
        return float(100.0 * dist.cdf(x))
    below = float(dist.cdf(math.ceil(x) - 1))  # P(X < x) for integer support
    at_or_below = float(dist.cdf(math.floor(x)))
    return 100.0 * (below + at_or_below) / 2.0


def _restricted_range(family: str, params: Mapping, convention: str = "paper") -> tuple[float, float]:
    return _restricted_range_by_key(_key(family, params), convention)


def _mass(dist, discrete: bool, a: float, b: float) -> float:
    """``P(a <= X <= b)``."""
    if b < a:
        return 0.0
    if discrete:
        return float(dist.cdf(math.floor(b)) - dist.cdf(math.ceil(a) - 1))
    return float(dist.cdf(b) - dist.cdf(a))


@lru_cache(maxsize=None)
def _restricted_range_by_key(key: tuple, convention: str = "paper") -> tuple[float, float]:
    """The range a probability question conditions on. ``paper``: ``[Q(0.01), Q(0.99)]``. ``release``: the 1st and
    99th percentiles *of the distribution already restricted to that range* (the release restricts twice: in
    ``calculate_target_ranges`` and again in ``calculate_probability_within_range``), i.e.
    ``Qr(u) = Q(P(X < Q(0.01)) + u P(Q(0.01) <= X <= Q(0.99)))`` at u = 0.01 and 0.99 (for a continuous family
    ``Q(0.0198)`` and ``Q(0.9802)``)."""
    dist = _frozen_by_key(key)
    if convention == "paper":
        return float(dist.ppf(RANGE_LOW)), float(dist.ppf(RANGE_HIGH))
    return _restricted_quantile(key, RANGE_LOW), _restricted_quantile(key, RANGE_HIGH)


def _restricted_quantile(key: tuple, u: float) -> float:
    """``Qr(u)``, the quantile of the distribution restricted to ``[Q(0.01), Q(0.99)]``:
    ``Q(P(X < Q(0.01)) + u P(Q(0.01) <= X <= Q(0.99)))``. For a continuous family this is ``Q(0.01 + 0.98 u)``
    (computed so, exactly); for a discrete one the mass below and at ``Q(0.01)`` moves it (geometric(0.05),
    u = 0.05: 1, where ``Q(0.059)`` is 2)."""
    dist = _frozen_by_key(key)
    if not _is_discrete(key[0]):
        return float(dist.ppf(RANGE_LOW + (RANGE_HIGH - RANGE_LOW) * u))
    r_lo, r_hi = float(dist.ppf(RANGE_LOW)), float(dist.ppf(RANGE_HIGH))
    x = float(dist.ppf(float(dist.cdf(r_lo - 1)) + u * _mass(dist, True, r_lo, r_hi)))
    return min(max(x, r_lo), r_hi)  # u = 0 and 1 are the range's ends (scipy's ppf(cdf(r_lo - 1)) is r_lo - 1)


def probability_between(family: str, params: Mapping, lo: float, hi: float, convention: str = "paper") -> float:
    """Exact ``P(lo <= X <= hi | r_lo <= X <= r_hi)``, both ends inclusive (the odds paper, task 3). ``paper``:
    ``[r_lo, r_hi] = [Q(0.01), Q(0.99)]``, so a continuous central p-interval has probability p. ``release``: the
    range restricted twice (:func:`_restricted_range_by_key`), so a continuous central p-interval (p < 1) has
    probability ``0.98 p / 0.9604 = p / 0.98`` (0.102, 0.204, ..., 0.918, 1), the release's answers."""
    _check_convention(convention)
    dist = _dist(family, params)
    disc = _is_discrete(family)
    r_lo, r_hi = _restricted_range(family, params, convention)
    total = _mass(dist, disc, r_lo, r_hi)
    return float(min(1.0, _mass(dist, disc, max(lo, r_lo), min(hi, r_hi)) / total))


def _check_convention(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise ValueError(f"odds: unknown convention {convention!r}; expected one of {', '.join(CONVENTIONS)}")
    return convention


def truth_params(family: str, params: Mapping, convention: str = "paper") -> dict:
    """The parameters the ground truth uses. They are the stated ones, except for the power law under the
    ``release`` convention, which the release samples with scale ``xmin - 0.5`` while stating ``xmin``."""
    p = dict(params)
    if convention == "release" and family == "power_law":
        p["xmin"] = float(p["xmin"]) - RELEASE_POWER_LAW_SHIFT
    return p


def _show(x: float, integer: bool) -> float:
    """The value as the prompt shows it (rounded), as a float."""
    if integer:
        return float(int(round(x)))
    return float(round(float(x), DECIMALS))


def _text(x: float, integer: bool) -> str:
    if integer:
        return str(int(round(x)))
    s = f"{x:.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _quantile_value(family: str, params: Mapping, q: float) -> float:
    return _show(float(_dist(family, params).ppf(q)), _is_discrete(family))


def _interval(family: str, params: Mapping, p: float, convention: str = "paper") -> tuple[float, float]:
    """The displayed central interval holding probability ``p`` of the restricted distribution: its ends are
    ``Qr((1 - p) / 2)`` and ``Qr((1 + p) / 2)``. ``paper``: ``Qr(u) = Q(0.01 + 0.98 u)``. ``release``: the quantile
    of the restricted distribution itself (:func:`_restricted_quantile`), as the release reads it off its
    restricted sample (``calculate_target_ranges``); the two differ only for discrete families."""
    disc = _is_discrete(family)
    if convention == "release":
        key = _key(family, params)
        lo, hi = _restricted_quantile(key, (1.0 - p) / 2.0), _restricted_quantile(key, (1.0 + p) / 2.0)
    else:
        span = RANGE_HIGH - RANGE_LOW
        dist = _dist(family, params)
        lo = float(dist.ppf(RANGE_LOW + span * (1.0 - p) / 2.0))
        hi = float(dist.ppf(RANGE_LOW + span * (1.0 + p) / 2.0))
    return _show(lo, disc), _show(hi, disc)


# ------------------------------------------------------------------------------------------------ descriptions

def describe(family: str, params: Mapping, convention: str = "rate") -> str:
    """Our description block of a distribution, stating every parameter convention: the ``odds`` style of the one
    describer, :func:`ub_core.distributions.describe` (``convention``: how an exponential is stated, ``rate`` or
    ``scale``; ``none`` for the other families)."""
    return D.describe(family, params, "odds", convention=convention)


def _moments_text(family_title: str, mean: float, sd: float) -> str:
    return (f"{family_title} distribution with mean {_text(mean, False)} and standard deviation "
            f"{_text(sd, False)}.")


# ------------------------------------------------------------------------------------------------ prompts



def prompt_convention(text: str) -> str:
    """``"release"`` for a release-convention prompt (it asks for <answer> tags, or, for sampling, ends its
    description with :data:`SMP_RELEASE`), else ``"paper"``."""
    return "release" if ("between <answer> and </answer>" in text or SMP_RELEASE in text) else "paper"


def _pct_question(x_text: str) -> str:
    return f"What is the percentile of the value {x_text} in this distribution?"


def _prb_question(lo_text: str, hi_text: str) -> str:
    return (f"Within the 1st-to-99th-percentile range, what is the probability that a value lies between "
            f"{lo_text} and {hi_text}?")


def _examples_block(shots: list[dict], tags: bool = False) -> str:
    if not shots:
        return ""
    parts = ["Worked examples:"]
    for i, s in enumerate(shots, 1):
        shown = f"<answer>{s['answer_text']}</answer>" if tags else f"{{{s['answer_text']}}}"
        parts.append(f"Example {i}\nDistribution: {s['description']}\n"
                     + (f"Question: {s['question']}\n" if s.get("question") else "")
                     + f"Answer: {shown}")
    return "\n\n".join(parts) + "\n\n"


def _assemble(task_text: str, shots: list[dict], description: str, question: str | None, answer: str | None,
              context: str | None = None, tags: bool = False) -> str:
    head = task_text + (f"\n\nBackground: {context}" if context else "")
    body = _examples_block(shots, tags) + f"Distribution: {description}"
    if question:
        body += f"\nQuestion: {question}"
    tail = f"\n\n{NO_TOOLS}" + (f" {answer}" if answer else "")
    return f"{head}\n\n{body}{tail}"


# ------------------------------------------------------------------------------------------------ shots

@lru_cache(maxsize=None)
def family_variants(family: str) -> tuple[tuple[dict, str], ...]:
    """The within-family example distributions: ``N_FAMILY_VARIANTS`` parameter sets drawn once from the paper's
    ranges (a fixed seed per family; reals rounded to 3 decimals, integer ranges kept integer), each with the
    exponential convention used to state it."""
    seed = int.from_bytes(family.encode(), "little") % (2 ** 32)
    rng = np.random.default_rng([4, seed])
    out = []
    questions = [_key(family, D.validate(family, p)) for p in PARAMETERISATIONS[family]]
    while len(out) < N_FAMILY_VARIANTS:
        raw = {}
        for name, (lo, hi) in FAMILY_RANGES[family].items():
            v = rng.uniform(lo, hi)
            raw[name] = int(v) if isinstance(lo, int) and isinstance(hi, int) else round(float(v), 3)
        conv = "rate"
        if family == "exponential":  # the paper draws a rate; we keep 5 decimals of it (its range is 0.005-0.02)
            raw = {"scale": 1.0 / round(float(rng.uniform(1 / 200, 1 / 50)), 5)}
        if family == "multinomial":
            while True:  # the paper keeps every probability >= 0.1, rounded to 3 decimals
                probs = rng.dirichlet(np.ones(3))
                if np.all(probs >= 0.1):
                    break
            probs = np.round(probs, 3)
            probs[np.argmax(probs)] += 1.0 - probs.sum()
            raw["pvals"] = [round(float(q), 3) for q in probs]
            raw["component"] = int(rng.integers(3))
        params = D.validate(family, raw)
        if _key(family, params) in questions:
            continue
        out.append((params, conv))
    return tuple(out)


# A shot answer keeps at least this distance from every test answer of the question's distribution, more than
# the rounding of the shown shot answer (one decimal for percentiles, three for probabilities).
PERCENTILE_MARGIN = 0.5
PROBABILITY_MARGIN = 0.005
_MAX_NUDGES = 200


def _clear(answer: float, tests: tuple[float, ...], margin: float) -> bool:
    return all(abs(answer - t) >= margin for t in tests)


def _percentile_shot(family: str, params: Mapping, conv: str, q: int, taken: frozenset,
                     tests: tuple[float, ...]) -> dict:
    """A percentile example at shot percentile ``q``. A discrete value that a test question uses (``taken``), or
    whose answer falls within :data:`PERCENTILE_MARGIN` of a test answer, moves to the next value up; a
    continuous one moves up by 0.1 percentile."""
    disc = _is_discrete(family)
    qq = q / 100.0
    x = _quantile_value(family, params, qq)
    answer = percentile_of(family, params, x)
    for _ in range(_MAX_NUDGES):
        if x not in taken and _clear(answer, tests, PERCENTILE_MARGIN):
            break
        if disc:
            x += 1.0
        else:
            qq += 0.001
            x = _quantile_value(family, params, qq)
        answer = percentile_of(family, params, x)
    else:  # pragma: no cover - would be a bank construction bug
        raise RuntimeError(f"odds: no clear percentile shot near {q} for {family} {dict(params)}")
    return {"family": family, "params": dict(params), "description": describe(family, params, conv),
            "value": x, "question": _pct_question(_text(x, disc)), "answer": answer,
            "answer_text": f"{answer:.1f}", "target": q}


def _probability_shot(family: str, params: Mapping, conv: str, p: float, taken: frozenset,
                      tests: tuple[float, ...]) -> dict:
    """A probability example at shot probability ``p``; an interval that a test uses, or whose answer falls
    within :data:`PROBABILITY_MARGIN` of a test answer, widens at the top (one value for discrete families,
    0.1 percentile for continuous ones)."""
    disc = _is_discrete(family)
    lo, hi = _interval(family, params, p)
    answer = probability_between(family, params, lo, hi)
    r_hi = _restricted_range(family, params)[1]
    hi_q = float(_dist(family, params).cdf(hi))
    for _ in range(_MAX_NUDGES):
        if (lo, hi) not in taken and _clear(answer, tests, PROBABILITY_MARGIN):
            break
        if disc:
            hi += 1.0
        else:
            hi_q += 0.001
            hi = _show(float(_dist(family, params).ppf(hi_q)), False)
        if hi > r_hi and not disc:
            raise RuntimeError(f"odds: no clear probability shot near {p} for {family}")  # pragma: no cover
        answer = probability_between(family, params, lo, hi)
    else:  # pragma: no cover - would be a bank construction bug
        raise RuntimeError(f"odds: no clear probability shot near {p} for {family} {dict(params)}")
    text = "1" if answer >= 1 else f"{answer:.3f}"
    return {"family": family, "params": dict(params), "description": describe(family, params, conv),
            "lo": lo, "hi": hi, "question": _prb_question(_text(lo, disc), _text(hi, disc)), "answer": answer,
            "answer_text": text, "target": p}


@lru_cache(maxsize=None)
def _family_shot(task: str, family: str, index: int, q: int, tests: tuple[float, ...]) -> dict:
    """Shot ``index`` of a within-family prompt: variant ``index`` of the family at shot percentile ``q``, kept
    clear of the question distribution's test answers ``tests``."""
    params, conv = family_variants(family)[index]
    if task == "percentile":
        return _percentile_shot(family, params, conv, q, frozenset(), tests)
    return _probability_shot(family, params, conv, q / 100.0, frozenset(), tests)


def _release_percentile_shot(family: str, params: Mapping, conv: str, q: int) -> dict:
    """A release-convention percentile example: the value at percentile ``q`` of the truth (power law: scale
    xmin - 0.5), answered ``q`` itself, as the release does (no move away from test answers)."""
    disc = _is_discrete(family)
    x = _quantile_value(family, truth_params(family, params, "release"), q / 100.0)
    return {"family": family, "params": dict(params), "description": describe(family, params, conv), "value": x,
            "question": _pct_question(_text(x, disc)), "answer": float(q), "answer_text": f"{float(q):.1f}",
            "target": q}


def _release_probability_shot(family: str, params: Mapping, conv: str, p: float) -> dict:
    """A release-convention probability example: the central interval at ``p``, answered with the release's
    probability of it (restricted twice, :func:`probability_between`)."""
    disc = _is_discrete(family)
    tp = truth_params(family, params, "release")
    lo, hi = _interval(family, tp, p, "release")
    answer = probability_between(family, tp, lo, hi, "release")
    return {"family": family, "params": dict(params), "description": describe(family, params, conv), "lo": lo,
            "hi": hi, "question": _prb_question(_text(lo, disc), _text(hi, disc)), "answer": answer,
            "answer_text": "1" if answer >= 1 else f"{answer:.3f}", "target": p}


def _sampling_shot(family: str, params: Mapping, conv: str, rng: np.random.Generator,
                   truth: Mapping | None = None) -> dict:
    disc = _is_discrete(family)
    src = params if truth is None else truth
    x = _show(float(D.get_family(family).draw(rng, D.validate(family, src), 1)[0]), disc)
    return {"family": family, "params": dict(params), "description": describe(family, params, conv),
            "value": x, "answer": x, "answer_text": _text(x, disc)}


# ------------------------------------------------------------------------------------------------ building items

def _shot_spec(k: int, shot_type: str | None) -> str:
    return "s0" if k == 0 else f"s{k}{shot_type[0]}"


def _shot_settings() -> list[tuple[int, str | None]]:
    return [(0, None)] + [(k, t) for k in SHOT_COUNTS if k for t in SHOT_TYPES]


def _point_mass(value: float):
    def sampler(rng: np.random.Generator, size: int, _v=float(value)) -> np.ndarray:
        return np.full(int(size), _v)

    return sampler


def _family_sampler(family: str, params: Mapping):
    fam = D.get_family(family)
    p = D.validate(family, params)

    def sampler(rng: np.random.Generator, size: int, _fam=fam, _p=p) -> np.ndarray:
        return _fam.draw(rng, _p, size)

    return sampler


@dataclass(frozen=True)
class _Spec:
    family: str
    params: dict
    convention: str   # how an exponential is stated: "rate" or "scale" ("none" for other families)
    ptag: str
    rule: str = "paper"  # the answer convention, "paper" or "release"

    @property
    def truth(self) -> dict:
        return truth_params(self.family, self.params, self.rule)


def _suffix(rule: str) -> str:
    return "" if rule == "paper" else "-rel"


@lru_cache(maxsize=2)
def _idealized_specs(rule: str = "paper") -> tuple[_Spec, ...]:
    out = []
    for fam in DISTRIBUTIONS:
        for i, raw in enumerate(PARAMETERISATIONS[fam]):
            conv = EXPONENTIAL_CONVENTION[i] if fam == "exponential" else "none"
            out.append(_Spec(fam, D.validate(fam, raw), conv, f"p{i}", rule))
    return tuple(out)


def _base_meta(task: str, spec: _Spec, k: int, shot_type: str | None, context: str = "none") -> dict:
    # the distribution the item asks about: what the paper's standard error is taken across (Tables 1 and 2)
    distribution = f"{spec.family}-{spec.ptag}" if context == "none" else spec.ptag
    return {"task": task, "family": spec.family, "parameterisation": spec.ptag, "convention": spec.convention,
            "odds_convention": spec.rule, "shots": k, "shot_type": shot_type or "none", "context": context,
            "distribution": distribution}


def _percentile_items(spec: _Spec) -> list[Problem]:
    fam, params, disc, rule = spec.family, spec.params, _is_discrete(spec.family), spec.rule
    tp = spec.truth
    release = rule == "release"
    values = {q: _quantile_value(fam, tp, q / 100.0) for q in TEST_PERCENTILES}
    taken = set(values.values())
    items = []
    # paper: the exact (mid-rank for discrete) percentile of the shown value; release: the target itself
    answers = {q: (float(q) if release else percentile_of(fam, tp, x)) for q, x in values.items()}
    tests = tuple(answers.values())
    if not release:
        own = {q: _percentile_shot(fam, params, spec.convention, q, frozenset(taken), tests)
               for q in SHOT_PERCENTILE_POOL}
    for k, shot_type in _shot_settings():
        if k == 0:
            shots: list[dict] = []
        elif release and shot_type == "distribution":
            shots = [_release_percentile_shot(fam, params, spec.convention, q) for q in RELEASE_SHOT_PERCENTILES[k]]
        elif release:
            shots = [_release_percentile_shot(fam, *family_variants(fam)[i], q)
                     for i, q in enumerate(RELEASE_FAMILY_SHOT_PERCENTILES[k])]
        elif shot_type == "distribution":
            shots = [own[q] for q in SHOT_PERCENTILES[k]]
        else:
            shots = [_family_shot("percentile", fam, i, q, tests) for i, q in enumerate(SHOT_PERCENTILES[k])]
        for q in TEST_PERCENTILES:
            x = values[q]
            answer = answers[q]
            task_text = PCT_TASK + (PCT_DISCRETE if disc and not release else "")
            prompt = _assemble(task_text, shots, describe(fam, params, spec.convention), _pct_question(_text(x, disc)),
                               PCT_ANSWER_TAGS if release else PCT_ANSWER, tags=release)
            pid = f"odds-pct-{fam}-{spec.ptag}-q{q}-{_shot_spec(k, shot_type)}{_suffix(rule)}"
            meta = _base_meta("percentile", spec, k, shot_type)
            meta.update(target=q, value=x, answer=answer, collapse_answer=50.0,
                        shot_answers=[s["answer"] for s in shots],
                        shot_values=[s["value"] for s in shots],
                        baseline_answer=nearest_shot_answer(x, [s["value"] for s in shots],
                                                            [s["answer"] for s in shots]))
            items.append(Problem(id=pid, bank=BANK, bank_version=BANK_VERSION, category="percentile",
                                 task_type="percentile", family=fam,
                                 params=params, regime=spec.ptag, modality="text", support="continuous",
                                 answer_format="number", prompt=prompt, sampler=_point_mass(answer),
                                 subcategory="none", low=0.0, high=100.0, metadata=meta, append_instruction=False))
    return items


def _probability_items(spec: _Spec) -> list[Problem]:
    fam, params, disc, rule = spec.family, spec.params, _is_discrete(spec.family), spec.rule
    tp = spec.truth
    release = rule == "release"
    intervals = {p: _interval(fam, tp, p, rule) for p in TEST_PROBABILITIES}
    taken = set(intervals.values())
    items = []
    answers = {p: probability_between(fam, tp, *intervals[p], rule) for p in TEST_PROBABILITIES}
    tests = tuple(answers.values())
    if not release:
        own = {q: _probability_shot(fam, params, spec.convention, q / 100.0, frozenset(taken), tests)
               for q in SHOT_PERCENTILE_POOL}
    for k, shot_type in _shot_settings():
        if k == 0:
            shots: list[dict] = []
        elif release and shot_type == "distribution":
            shots = [_release_probability_shot(fam, params, spec.convention, p) for p in RELEASE_SHOT_PROBABILITIES[k]]
        elif release:
            shots = [_release_probability_shot(fam, *family_variants(fam)[i], p)
                     for i, p in enumerate(RELEASE_FAMILY_SHOT_PROBABILITIES[k])]
        elif shot_type == "distribution":
            shots = [own[q] for q in SHOT_PERCENTILES[k]]
        else:
            shots = [_family_shot("probability", fam, i, q, tests) for i, q in enumerate(SHOT_PERCENTILES[k])]
        for p in TEST_PROBABILITIES:
            lo, hi = intervals[p]
            answer = answers[p]
            prompt = _assemble(PRB_TASK, shots, describe(fam, params, spec.convention),
                               _prb_question(_text(lo, disc), _text(hi, disc)),
                               PRB_ANSWER_TAGS if release else PRB_ANSWER, tags=release)
            pid = f"odds-prb-{fam}-{spec.ptag}-p{p:g}-{_shot_spec(k, shot_type)}{_suffix(rule)}"
            meta = _base_meta("probability", spec, k, shot_type)
            meta.update(target=p, lo=lo, hi=hi, answer=answer, collapse_answer=0.5,
                        shot_answers=[s["answer"] for s in shots],
                        baseline_answer=nearest_shot_answer((lo, hi), [(s["lo"], s["hi"]) for s in shots],
                                                        [s["answer"] for s in shots]))
            items.append(Problem(id=pid, bank=BANK, bank_version=BANK_VERSION, category="probability",
                                 task_type="probability", family=fam,
                                 params=params, regime=spec.ptag, modality="text", support="continuous",
                                 answer_format="number", prompt=prompt, sampler=_point_mass(answer),
                                 subcategory="none", low=0.0, high=1.0, metadata=meta, append_instruction=False))
    return items


def _sampling_items(spec: _Spec) -> list[Problem]:
    from .base import seed_sequence

    fam, params, rule = spec.family, spec.params, spec.rule
    tp = spec.truth
    release = rule == "release"
    support = D.support_kind(fam, tp)
    low, high = D.support_bounds(fam, tp)
    variants = family_variants(fam)
    items = []
    for k, shot_type in _shot_settings():
        pid = f"odds-smp-{fam}-{spec.ptag}-{_shot_spec(k, shot_type)}{_suffix(rule)}"
        rng = np.random.default_rng(seed_sequence(pid + "/shots", 0))
        if k == 0:
            shots: list[dict] = []
        elif shot_type == "distribution":
            shots = [_sampling_shot(fam, params, spec.convention, rng, tp) for _ in range(k)]
        else:
            shots = [_sampling_shot(fam, vp, vconv, rng, truth_params(fam, vp, rule)) for vp, vconv in variants[:k]]
        prompt = _assemble(SMP_TASK, shots, describe(fam, params, spec.convention), None,
                           SMP_RELEASE if release else None)
        meta = _base_meta("sampling", spec, k, shot_type)
        meta.update(shot_values=[s["value"] for s in shots])
        items.append(Problem(id=pid, bank=BANK, bank_version=BANK_VERSION, category="sampling", task_type="sampling",
                             family=fam,
                             params=tp, regime=spec.ptag, modality="text", support=support,
                             answer_format="integer" if support == "discrete" else "number", prompt=prompt,
                             sampler=_family_sampler(fam, tp), subcategory="none", low=low, high=high,
                             metadata=meta))
    return items


def _data_quantile(rw: RealWorld, q: float) -> float:
    """The data's value at percentile ``q`` by linear interpolation between the released percentile values
    (monotone; exact at the released percentiles). Used only for the 3-shot examples, whose percentiles
    (35, 55, 75) the release does not give."""
    return float(np.interp(q, TEST_PERCENTILES, rw.data_values))


def _real_world_items(rule: str = "paper") -> list[Problem]:
    """The odds paper's real-world percentile questions (sec. 5.2, Table 2): the value is the data's value at each test
    percentile (the release's tables), and the answer is that percentile, in every framing (the paper scores all
    framings against the data). ``fitted_answer`` is the percentile of the value under the fitted distribution of
    the idealized framing (exact, scipy)."""
    release = rule == "release"
    items = []
    for rw in REAL_WORLD:
        params = D.validate(rw.family, rw.params)
        conv = "rate" if rw.family == "exponential" else "none"
        spec = _Spec(rw.family, params, conv, rw.name, rule)
        fitted_desc = describe(rw.family, params, "rate")
        # the Normal approximation of the paper's Table 2, worded as one (for a normal truth the numbers are the same,
        # and the wording keeps its prompt distinct from the moments framing's)
        descriptions = {"idealized": fitted_desc, "context": fitted_desc,
                        # worded as the data's moments: for a normal fit they are the fitted parameters, and the
                        # wording keeps the prompt distinct from the context framing's
                        "moments": (f"{TITLES[rw.family]} distribution; "
                                    f"the data have mean {_text(rw.stated_mean, False)}"
                                    f" and standard deviation {_text(rw.stated_sd, False)}."),
                        "normal": "Approximately a " + _moments_text("Normal", rw.normal_mean, rw.normal_sd)}
        values = dict(zip(TEST_PERCENTILES, (float(v) for v in rw.data_values)))
        settings = [("idealized", 0), ("context", 0), ("moments", 0), ("normal", 0), ("context", 3)]
        for framing, k in settings:
            context = rw.domain if framing == "context" else f"{rw.domain}_{framing}"
            description = descriptions[framing]
            background = None if framing == "idealized" else rw.context

            def question(x: float, framing=framing, rw=rw) -> str:
                if framing == "idealized":
                    return _pct_question(_text(x, False))
                return rw.question.format(x=_text(x, False))

            shots = []
            for q in (SHOT_PERCENTILES[k] if k else ()):
                x = round(_data_quantile(rw, q), DECIMALS)
                shots.append({"description": description, "question": question(x), "value": x, "answer": float(q),
                              "answer_text": f"{float(q):.1f}"})
            for q in TEST_PERCENTILES:
                x = values[q]
                answer = float(q)
                prompt = _assemble(PCT_TASK, shots, description, question(x),
                                   PCT_ANSWER_TAGS if release else PCT_ANSWER, context=background, tags=release)
                pid = (f"odds-pct-rw-{rw.name}-{framing}-q{q}-{_shot_spec(k, 'distribution' if k else None)}"
                       f"{_suffix(rule)}")
                meta = _base_meta("percentile", spec, k, "distribution" if k else None, context)
                meta.update(target=q, value=x, answer=answer, collapse_answer=50.0, real_world=rw.name,
                            framing=framing, fitted_answer=percentile_of(rw.family, params, x),
                            shot_answers=[s["answer"] for s in shots], shot_values=[s["value"] for s in shots],
                            baseline_answer=nearest_shot_answer(x, [s["value"] for s in shots],
                                                                [s["answer"] for s in shots]))
                items.append(Problem(id=pid, bank=BANK, bank_version=BANK_VERSION, category="percentile",
                                     task_type="percentile",
                                     family=rw.family, params=params, regime=rw.name, modality="text",
                                     support="continuous", answer_format="number", prompt=prompt,
                                     sampler=_point_mass(answer), subcategory=context, low=0.0, high=100.0,
                                     metadata=meta, append_instruction=False))
    return items


@lru_cache(maxsize=None)
def _spec_items(index: int, rule: str = "paper") -> tuple[Problem, ...]:
    spec = _idealized_specs(rule)[index]
    return tuple(_percentile_items(spec) + _probability_items(spec) + _sampling_items(spec))


@lru_cache(maxsize=2)
def _real_world(rule: str = "paper") -> tuple[Problem, ...]:
    return tuple(_real_world_items(rule))


@lru_cache(maxsize=2)
def _full(rule: str = "paper") -> tuple[Problem, ...]:
    items: list[Problem] = []
    for i in range(len(_idealized_specs(rule))):
        items.extend(_spec_items(i, rule))
    items.extend(_real_world(rule))
    ids = [p.id for p in items]
    if len(set(ids)) != len(ids):  # pragma: no cover - a construction bug, caught by the tests
        raise RuntimeError("odds bank: duplicate ids")
    return tuple(items)


@lru_cache(maxsize=2)
def _subset(rule: str = "paper") -> tuple[Problem, ...]:
    """Every family x task x shots setting once on the paper's parameterisation (p0), the target rotating with the
    setting so all targets appear; three targets of each real-world distribution and framing."""
    keep = []
    settings = _shot_settings()
    pool = [p for i, spec in enumerate(_idealized_specs(rule)) if spec.ptag == "p0" for p in _spec_items(i, rule)]
    for p in pool + list(_real_world(rule)):
        m = p.metadata
        if m["context"] != "none":
            idx = TEST_PERCENTILES.index(m["target"])
            if idx % 4 == 1:  # targets 10, 50, 90
                keep.append(p)
            continue
        if m["parameterisation"] != "p0":
            continue
        if m["task"] == "sampling":
            keep.append(p)
            continue
        s = settings.index((m["shots"], None if m["shot_type"] == "none" else m["shot_type"]))
        targets = TEST_PERCENTILES if m["task"] == "percentile" else TEST_PROBABILITIES
        f = DISTRIBUTIONS.index(p.family)
        if targets[(s + f) % len(targets)] == m["target"]:
            keep.append(p)
    return tuple(keep)


def odds_problems(size: str | None = None, convention: str = "paper") -> tuple[Problem, ...]:
    """The bank: ``size`` ``"subset"`` (default) or ``"full"``; ``convention`` ``"paper"`` (default) or
    ``"release"`` (the answers, shots and power-law truth of the odds paper's public code; ids end in ``-rel``)."""
    rule = _check_convention(str(convention))
    if size in (None, "subset"):
        return _subset(rule)
    if size == "full":
        return _full(rule)
    raise ValueError(f"odds: unknown edition {size!r}; expected subset or full")


def odds_items(size: str | None = None, *, task: str | None = None, shots: Any = None, shot_type: str | None = None,
               contexts: Any = None, families: Any = None, convention: str = "paper") -> list[Problem]:
    """Items of an edition filtered by task, shot counts, shot type (``distribution``/``family``; 0-shot items are
    kept whatever the type), contexts and families, in a convention. Unknown names raise a one-line ValueError."""
    _check_convention(str(convention))
    if task is not None and task not in TASKS:
        raise ValueError(f"odds: unknown task {task!r}; expected one of {', '.join(TASKS)}")
    if shot_type is not None and shot_type not in SHOT_TYPES:
        raise ValueError(f"odds: unknown shot_type {shot_type!r}; expected one of {', '.join(SHOT_TYPES)}")
    shot_set = None if shots is None else {int(k) for k in shots}
    if shot_set and not shot_set <= set(SHOT_COUNTS):
        raise ValueError(f"odds: shots must be among {SHOT_COUNTS}, got {sorted(shot_set)}")
    ctx = None if contexts is None else set(contexts)
    if ctx and not ctx <= set(CONTEXTS):
        raise ValueError(f"odds: unknown context {sorted(ctx - set(CONTEXTS))[0]!r}; expected {', '.join(CONTEXTS)}")
    fams = None if families is None else set(families)
    if fams and not fams <= set(DISTRIBUTIONS):
        raise ValueError(f"odds: unknown family {sorted(fams - set(DISTRIBUTIONS))[0]!r}; "
                         f"expected {', '.join(DISTRIBUTIONS)}")
    out = []
    for p in odds_problems(size, convention):
        m = p.metadata
        if task and m["task"] != task:
            continue
        if shot_set is not None and m["shots"] not in shot_set:
            continue
        if shot_type and m["shots"] and m["shot_type"] != shot_type:
            continue
        if ctx is not None and m["context"] not in ctx:
            continue
        if fams is not None and p.family not in fams:
            continue
        out.append(p)
    return out


@lru_cache(maxsize=4)
def _by_id(edition: str, rule: str = "paper") -> dict[str, Problem]:
    return {p.id: p for p in odds_problems(edition, rule)}


def odds_item(item_id: str) -> Problem:
    """The item with this id (the subset is searched first; its items are the full edition's objects). An id
    ending in ``-rel`` is a release-convention item."""
    rule = "release" if str(item_id).endswith("-rel") else "paper"
    for edition in ("subset", "full"):
        if item_id in _by_id(edition, rule):
            return _by_id(edition, rule)[item_id]
    raise KeyError(f"unknown odds item id {item_id!r}")


def is_odds_problem(problem: Any) -> bool:
    return getattr(problem, "bank", None) == BANK


# ------------------------------------------------------------------------------------------------ prompt index

_PROMPT_INDEX: dict[str, dict[str, Problem]] = {}


def find_odds_problem(text: str):
    """The bank's prompt index (``Bank.find``): the item whose prompt ``text`` is, or is followed by one appended
    instruction paragraph (sampling items); the subset first, then the full edition. Prompts share long openings
    (the task text and the worked examples), so they are indexed whole; anything else falls back to a scan."""
    text = str(text)
    if not text.startswith(PROMPT_OPENINGS):
        return None
    rule = prompt_convention(text)  # the paper's or the public release's answers (odds README, conventions)
    for edition in ("subset", "full"):
        if edition + rule not in _PROMPT_INDEX:
            _PROMPT_INDEX[edition + rule] = {p.prompt: p for p in odds_problems(edition, rule)}
        index = _PROMPT_INDEX[edition + rule]
        for cand in (text, text.rsplit("\n\n", 1)[0]):
            if cand in index:
                return index[cand]
    matches = [p for prompt, p in _PROMPT_INDEX["full" + rule].items() if text.startswith(prompt)]
    return max(matches, key=lambda p: len(p.prompt)) if matches else None
