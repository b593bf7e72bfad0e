"""From log-probabilities of written-out continuations to option probabilities and scores (framework-free).

The option-logprob eval families (numeric calibration, the numeric-calibration paper; implicit probabilistic
reasoning and its explicit MCQ twin, the implicit-reasoning paper) score a :class:`~ub_core.problems.OptionItem` from
the probability a model gives to each option right after the prompt (its option mass). Not to be confused with the
sampling-free KS@N route (:mod:`ub_core.logprob.ksn_logprob`), which reads log-probabilities of whole candidate answers.
Both adapters (lm-eval ``multiple_choice`` requests, Inspect prompt / top log-probabilities) obtain one
log-probability per *surface variant* of each option and hand them here.

Option probability (the numeric-calibration paper, sec. 2, "we sum the probabilities of common tokenizations"):

    P(o) = sum over variants v of o of P(v | prompt),  variants = {o, lower(o), Cap(o), UPPER(o)} x {"", " "}

where P(v | prompt) is the product of the probabilities of v's tokens (the implicit-reasoning paper, sec. 3: a
multi-token outcome's probability is the joint probability of its token sequence), i.e. ``exp`` of the summed token
log-probabilities that lm-eval's ``loglikelihood`` and vLLM's ``prompt_logprobs`` return. Variants that are the
same string (``"7"`` has no case) or, where token ids are known, the same token sequence are counted once.

Prefixes (``convention``). With tokenizers that split numbers into single digits (Mistral, Qwen, Gemma, Llama 3's
digits), ``" 1"`` is tokenised ``[" ", "1"]`` and ``" 12"`` ``[" ", "1", "2"]``: the joint probability of ``" 1"``'s
tokens includes every reply that goes on with ``"2"``. Two readings:

- ``convention="exclusive"`` (default, ours): an option's mass is the probability that the reply *is* the option:
  a variant whose token sequence begins another listed variant's loses that variant's mass
  (:func:`exclusive_probabilities`), so ``P(" 1")`` is the probability of ``" 1"`` followed by anything that is not
  a listed continuation, and no reply is counted twice. Needs each variant's tokens (token ids in lm-eval with a
  local tokenizer, token texts from Inspect's ``prompt_logprobs`` and its ``top_logprobs`` walk). Where they are
  unknown (lm-eval without a tokenizer) the mass of a variant that is a text prefix of another is read as given and
  the item is counted as unresolved (:func:`unresolved_prefixes`).
- ``convention="paper"``: the implicit-reasoning paper's literal reading (sec. 3: the joint probability of the
  outcome's token sequence, summed over variants), with nothing subtracted; then ``" 1"`` holds ``" 12"``'s mass
  too, the masses can sum above 1 and the missing mass can be negative.

Tokenizers that keep ``"12"`` as one token give the same numbers under both: ``" 1"``'s tokens begin no other's.
"""

from __future__ import annotations

import functools

import math
from typing import Any, Mapping, Sequence

import numpy as np

from ..metric_spec import BEHAVIOURS as _SPEC_BEHAVIOURS, metric_keys
from ..problems.option_item import OptionItem

__all__ = ["BEHAVIOURS", "METRIC_KEYS", "surface_variants", "canonical_variant", "flatten_variants",
           "dedup_by_token_ids", "variant_logprobs_from_choices", "option_mass", "normalise", "item_scores",
           "score_row", "sample_payload", "behaviour_entry", "scored_sample", "exclusive_probabilities",
           "CONVENTIONS", "check_convention", "unresolved_prefixes", "COUNT_KEYS", "item_set"]

#: How a variant whose tokens begin another variant's is counted (module docstring); the first is the default.
CONVENTIONS = ("exclusive", "paper")

#: Reference behaviours of the numeric-calibration paper (sec. 3), fixed here so that the adapters' metric keys are
#: static.
BEHAVIOURS = _SPEC_BEHAVIOURS  # the reference behaviours, named once in ub_core.metric_spec

#: The flat per-item metric keys both adapters report, by bank (lm-eval metric names, Inspect score keys).
METRIC_KEYS = {bank: metric_keys(bank) for bank in ("calibration", "implicit", "explicit")}  # ub_core.metric_spec

#: Per-item 0/1 flags both adapters sum over a run (lm-eval ``utils.total``, Inspect ``totals``): ``no_mass`` (every
#: option got zero mass: missing mass 1.0, the other scores undefined), ``kl_floored`` (the KL floor set the value,
#: :func:`ub_core.metrics.kl_floor_decides`) and ``prefix_unresolved`` (:func:`unresolved_prefixes`; set by the
#: adapters, which know the tokens).
COUNT_KEYS = {"calibration": ("prefix_unresolved",), "implicit": ("no_mass", "kl_floored", "prefix_unresolved"),
              "explicit": ("no_mass", "prefix_unresolved")}

_SCORERS = {"calibration": "calibration_item_scores", "implicit": "implicit_item_scores",
            "explicit": "explicit_item_scores"}

# log P(v) below log P(w) by more than this (float round-off of summed token log-probabilities): v's tokens cannot
# begin w's (:func:`unresolved_prefixes`)
_DECIDED = 1e-9
# A log-probability this far above 0 is rounding noise (probability 1 + 1e-6); beyond it the input is broken.
_LOGPROB_SLACK = 1e-6


@functools.lru_cache(maxsize=8192)  # a pure function of a string, asked for every option of every request
def surface_variants(option: str) -> tuple[str, ...]:
    """The written forms of ``option`` whose probabilities add up to the option's probability.

    The option as written, lower-case, capitalised (first letter upper, the rest lower) and upper-case, each
    with a leading space (first; ``" " + option`` is the canonical form) and without, deduplicated as strings
    in that order. Digits and letters without case collapse: ``"7"`` -> ``(" 7", "7")``.
    """
    text = str(option)
    if not text or text != text.strip():
        raise ValueError(f"an option must be non-empty without surrounding whitespace, got {option!r}")
    lower = text.lower()
    forms = (text, lower, lower[:1].upper() + lower[1:], text.upper())
    out: list[str] = []
    for variant in [" " + f for f in forms] + list(forms):
        if variant not in out:
            out.append(variant)
    return tuple(out)


def canonical_variant(option: str) -> str:
    """The form a fluent continuation takes: the option as written after one space (``" red"``)."""
    return surface_variants(option)[0]


def flatten_variants(item: OptionItem) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """All surface variants of all options of ``item`` as one choice list, with the index of the option each
    belongs to: ``(choices, owners)``. Options in order, each option's variants in :func:`surface_variants`
    order. Two options that share a variant (``"a"`` and ``"A"``) make the item ill-posed: ValueError."""
    choices: list[str] = []
    owners: list[int] = []
    seen: dict[str, int] = {}
    for i, option in enumerate(item.options):
        for v in surface_variants(option):
            if v in seen:
                raise ValueError(f"{item.id}: options {item.options[seen[v]]!r} and {option!r} share the surface "
                                 f"variant {v!r}")
            seen[v] = i
            choices.append(v)
            owners.append(i)
    return tuple(choices), tuple(owners)


def dedup_by_token_ids(choices: Sequence[str], owners: Sequence[int],
                       token_ids: Sequence[Sequence[int]]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Keep the first of the choices whose continuation token ids coincide (a tokenizer that normalises case,
    or two strings that encode alike), so each token sequence is counted once."""
    if not (len(choices) == len(owners) == len(token_ids)):
        raise ValueError(f"{len(choices)} choices, {len(owners)} owners and {len(token_ids)} token id lists")
    kept_c: list[str] = []
    kept_o: list[int] = []
    seen: set[tuple[int, ...]] = set()
    for c, o, ids in zip(choices, owners, token_ids):
        key = tuple(int(t) for t in ids)
        if key in seen:
            continue
        seen.add(key)
        kept_c.append(c)
        kept_o.append(int(o))
    return tuple(kept_c), tuple(kept_o)


def variant_logprobs_from_choices(choices: Sequence[str], logprobs: Sequence[Any]) -> dict[str, float]:
    """Pair a choice list with its log-probabilities (``None`` = not observed = probability 0): the way back
    from a framework's per-choice results to the mapping :func:`option_mass` reads."""
    if len(choices) != len(logprobs):
        raise ValueError(f"{len(logprobs)} log-probabilities for {len(choices)} choices")
    return {str(c): (-math.inf if lp is None else lp) for c, lp in zip(choices, logprobs)}


def _checked_logprob(variant: str, value: Any) -> float:
    try:
        lp = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"log-probability of {variant!r} is not a number: {value!r}") from None
    if math.isnan(lp) or lp > _LOGPROB_SLACK:
        raise ValueError(f"log-probability of {variant!r} must be <= 0, got {lp!r}")
    return min(lp, 0.0)


def item_set(bank: str, items: Sequence[OptionItem], equal_counts: str | None = None,
             ids: Sequence[str] = ()) -> tuple[list[OptionItem], int]:
    """The items a run of ``bank`` scores, and how many the equal-count rule left out: for calibration,
    :func:`ub_core.metrics.calibration_item_set` (``equal_counts``, default ``"drop"``: the baselines' rule, so a
    model run and a baseline cover one item set); other banks take every item and refuse the option (one line).
    ``ids`` (the ids a run asks for) that the rule left out are a one-line ValueError naming them and the way to
    keep them, not a silent omission."""
    if bank != "calibration":
        if equal_counts is not None:
            raise ValueError(f"equal_counts applies to the calibration bank only, not {bank!r}")
        return list(items), 0
    from ..metrics.calibration import calibration_item_set

    items = list(items)
    kept, left_out = calibration_item_set(items, "drop" if equal_counts is None else equal_counts)
    asked = set(ids) - {i.id for i in kept}
    dropped = sorted(asked & {i.id for i in items})
    if dropped:
        raise ValueError(f"ids: {', '.join(dropped[:3])}{' ...' if len(dropped) > 3 else ''}: "
                         f"{len(dropped)} item(s) with equal counts, left out by equal_counts=drop (the baselines' "
                         f"item set); pass equal_counts=keep to score them")
    return kept, left_out


def check_convention(convention: Any) -> str:
    """``convention`` if it is one of :data:`CONVENTIONS`, else a one-line ValueError."""
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(CONVENTIONS)}, got {convention!r}")
    return str(convention)


def option_mass(item: OptionItem, variant_logprobs: Mapping[str, Any] | Sequence[Any],
                variant_token_ids: Mapping[str, Sequence[Any]] | None = None,
                convention: str = "exclusive") -> np.ndarray:
    """Probability mass the model puts on each option of ``item`` (the numeric-calibration paper's sec. 2; the
    implicit-reasoning paper's sec. 3):

        m_i = sum over variants v of option i of P(v),  P(v) = exp(logprob(v)), logprob(v) = sum of v's token log-probs

    and, under ``convention="exclusive"`` (the default), P(v) is replaced by the probability that the reply is v:
    P(v) minus the mass of the listed variants whose tokens extend v's (:func:`exclusive_probabilities`; module
    docstring). ``convention="paper"`` subtracts nothing.

    ``variant_logprobs`` maps a variant string to its log-probability, or is a sequence aligned with
    :func:`flatten_variants`'s choices. A variant that is absent, ``None`` or ``-inf`` adds nothing (not
    observed: outside a top-k list, or deduplicated away upstream). ``variant_token_ids`` maps a variant to its
    continuation tokens (ids, or token texts: only equality and prefixes are used): variants whose tokens coincide
    are counted once (the first in choice order). Returns an array aligned with ``item.options``; ``m.sum()`` is the
    probability mass PM. A log-probability that is NaN, positive or not a number, or a key that is no variant of
    any option, is a ValueError.
    """
    convention = check_convention(convention)
    choices, owners = flatten_variants(item)
    if isinstance(variant_logprobs, Mapping):
        unknown = sorted(set(map(str, variant_logprobs)) - set(choices))
        if unknown:
            raise ValueError(f"{item.id}: {unknown[0]!r} is not a surface variant of any option")
        logprobs = {str(k): v for k, v in variant_logprobs.items()}
    else:
        logprobs = variant_logprobs_from_choices(choices, list(variant_logprobs))
    mass = np.zeros(len(item.options), dtype=float)
    seen: set[tuple] = set()
    kept: list[tuple[int, tuple | None, float]] = []  # (owner, token key, probability)
    for variant, owner in zip(choices, owners):
        value = logprobs.get(variant)
        if value is None:
            continue
        lp = _checked_logprob(variant, value)
        key = None
        if variant_token_ids is not None and variant_token_ids.get(variant) is not None:
            key = tuple(variant_token_ids[variant])
            if key in seen:
                continue
            seen.add(key)
        kept.append((owner, key, math.exp(lp)))
    probs = [k[2] for k in kept]
    if convention == "exclusive":
        probs = exclusive_probabilities([k[1] for k in kept], probs)
    for (owner, _, _), p in zip(kept, probs):
        mass[owner] += p
    return mass


def unresolved_prefixes(item: OptionItem, variant_logprobs: Mapping[str, Any],
                        variant_token_ids: Mapping[str, Sequence[Any]] | None = None) -> int:
    """How many observed variants of ``item`` (log-probability not absent, ``None`` or ``-inf``) are a text prefix
    of another option's observed variant while the tokens of either are unknown: for those, the ``exclusive``
    convention cannot tell whether the shorter one's log-probability holds the longer one's mass (digit-by-digit
    tokenizers) or not (tokenizers that keep ``"12"`` whole), so :func:`option_mass` reads it as given. 0 when
    every such pair has tokens.

    The values decide a pair the tokens would: a continuation's probability is at most that of any prefix of its
    tokens (``P(v + rest) = P(v) P(rest | v)``), so ``logprob(v) < logprob(w) - 1e-9`` means v's tokens do not
    begin w's, and v's value holds none of w's mass: nothing to subtract, the pair is resolved whatever the
    framework knows of the tokens (so lm-eval, without token ids, resolves the same pairs as Inspect, which has
    them). Only a shorter variant at least as likely as the longer one stays unresolved."""
    choices, owners = flatten_variants(item)
    known = variant_token_ids or {}
    seen = [(v, o, float(variant_logprobs[v])) for v, o in zip(choices, owners)
            if variant_logprobs.get(v) is not None and float(variant_logprobs[v]) > -math.inf]
    if all(known.get(v) is not None for v, _, _ in seen):  # every pair has tokens (the usual case): no pair search
        return 0
    return sum(1 for v, ov, lv in seen
               if any(w != v and ow != ov and w.startswith(v) and lv >= lw - _DECIDED
                      and (known.get(v) is None or known.get(w) is None)
                      for w, ow, lw in seen))


def _extends(longer: tuple, shorter: tuple) -> bool:
    return len(longer) > len(shorter) and longer[:len(shorter)] == shorter


def exclusive_probabilities(token_keys: Sequence[tuple | None], probs: Sequence[float]) -> list[float]:
    """Remove from each continuation the mass of the other continuations that extend it token by token.

    With digit-by-digit tokenizers, ``P(" 1")`` (tokens ``[" ", "1"]`` or ``["▁1"]``) includes every reply that
    starts with it, ``P(" 12")`` among them, so summing both counts ``" 12"`` twice and inflates outcome 1
    (the implicit-reasoning paper's dice sums up to 36, the numeric-calibration paper's integer intervals). For
    continuation i with token sequence t_i:

        P_excl(i) = max(0, P(i) - sum_{j in E_i} P(j)),
        E_i = { j : t_j strictly extends t_i, and no other k with t_k strictly extending t_i is a prefix of t_j }

    (only the shortest extensions, since P(j) already holds the mass of j's own extensions). What is left is the
    probability of i followed by something that is not a listed continuation. ``None`` keys (token ids unknown)
    are left as they are; the max(0, .) absorbs float rounding only.
    """
    out = [float(p) for p in probs]
    known = [i for i, k in enumerate(token_keys) if k is not None]
    for i in known:
        ti = token_keys[i]
        ext = [j for j in known if j != i and _extends(token_keys[j], ti)]
        if not ext:
            continue
        minimal = [j for j in ext if not any(k != j and _extends(token_keys[j], token_keys[k]) for k in ext)]
        out[i] = max(0.0, float(probs[i]) - math.fsum(float(probs[j]) for j in minimal))
    return out


def normalise(mass: Sequence[float]) -> np.ndarray | None:
    """The model's distribution over the options, ``m / sum(m)``; ``None`` when it puts no mass on any."""
    m = np.asarray(mass, dtype=float)
    total = float(m.sum())
    return m / total if total > 0 else None


def item_scores(item: OptionItem, option_mass: Sequence[float], kl_floor: float | None = None) -> dict:
    """The bank's own per-item scores: ``ub_core.metrics.calibration_item_scores`` (pm, wd, re, behaviour),
    ``implicit_item_scores`` (chebyshev, manhattan, kl, missing_mass, argmax_correct, no_mass, kl_floored; ``kl_floor``
    is its KL floor, default ``ub_core.metrics.KL_FLOOR``) or ``explicit_item_scores`` (mcq_correct, p_correct,
    no_mass), chosen by ``item.bank``."""
    try:
        name = _SCORERS[item.bank]
    except KeyError:
        raise ValueError(f"{item.id}: bank {item.bank!r} is not an option-logprob bank "
                         f"({', '.join(_SCORERS)})") from None
    from .. import metrics

    fn = getattr(metrics, name, None)
    if fn is None:
        raise RuntimeError(f"ub_core.metrics has no {name}: the {item.bank} metrics are not installed")
    if item.bank == "implicit" and kl_floor is not None:
        return fn(item, np.asarray(option_mass, dtype=float), kl_floor=float(kl_floor))
    return fn(item, np.asarray(option_mass, dtype=float))


def _num(x: Any) -> float:
    return float("nan") if x is None else float(x)


def score_row(item: OptionItem, option_mass: Sequence[float], kl_floor: float | None = None) -> dict[str, float]:
    """The flat numbers both adapters report for one item (keys :data:`METRIC_KEYS` of its bank).

    - calibration: ``pm``, ``wd``, ``re`` (signed: two-sided, target 0), ``behaviour_<b>``, and ``abs_re`` = |re|
      (the ranked form of RE); ``behaviour_<b>`` = 1.0 when reference behaviour b is compatible with the item's
      output (nearest by WD, ties included) and 0.0 otherwise, all NaN on items with more than
      two options. Their means are compatibility rates, the quantity of the numeric-calibration paper's Figure 2; a
      single label per item would split a Pick First model between Pick Higher and Pick Lower on ties. The grid-level
      classification of Figure 3 is :func:`ub_core.metrics.grid_behaviour_rates`;
    - implicit: ``chebyshev``, ``manhattan``, ``kl``, ``kl_floor_share`` (the item's ``kl_floored`` flag, whose
      mean is the share of items whose KL the floor set), ``jsd_bits`` (Jensen-Shannon, bits, in [0, 1]),
      ``missing_mass``, ``argmax_acc`` (NaN on items without a unique mode, excluded by the NaN-skipping means);
      an item without mass on any outcome has the distances of all mass outside them
      (:func:`ub_core.metrics.no_mass_distances`);
    - explicit: ``mcq_acc`` (1.0 when the most probable letter is the correct one), ``p_correct``;
    - and the bank's :data:`COUNT_KEYS` flags the scores carry (``no_mass``, ``kl_floored``).
    """
    return _row_from_scores(item, item_scores(item, option_mass, kl_floor))


def _row_from_scores(item: OptionItem, s: Mapping[str, Any]) -> dict[str, float]:
    if item.bank == "calibration":
        row = {k: _num(s[k]) for k in ("wd", "pm", "re")}  # spec order: the headline first
        behaviour = s.get("behaviour")
        compatible = set(s.get("compatible") or ([behaviour] if behaviour is not None else []))
        unknown = compatible - set(BEHAVIOURS)
        if unknown:
            raise ValueError(f"{item.id}: unknown behaviour {sorted(unknown)!r}")
        for b in BEHAVIOURS:
            row[f"behaviour_{b}"] = float("nan") if behaviour is None else float(b in compatible)
        row["abs_re"] = abs(row["re"])  # RE's distance from its target 0 (NaN stays NaN)
        return row
    if item.bank == "implicit":
        floored = float(s["kl_floored"] or 0.0)
        # spec order (METRIC_KEYS), then the count flags; kl_floor_share's mean is the share of items whose KL the
        # floor set
        row = {k: _num(s[k]) for k in ("chebyshev", "manhattan", "kl")}
        row["kl_floor_share"] = floored
        row.update({k: _num(s[k]) for k in ("jsd_bits", "missing_mass")})
        row["argmax_acc"] = _num(s.get("argmax_correct"))
        row["no_mass"], row["kl_floored"] = float(s["no_mass"]), floored
        return row
    return {"mcq_acc": _num(s["mcq_correct"]), "p_correct": _num(s["p_correct"]), "no_mass": float(s["no_mass"])}


def sample_payload(item: OptionItem, option_mass: Sequence[float]) -> dict[str, Any]:
    """What every logged sample carries besides the scores: ``option_mass`` (list of floats aligned with
    ``item.options``) and ``predicted`` (the normalised distribution, same shape, or ``None`` when PM is 0)."""
    m = np.asarray(option_mass, dtype=float)
    p = normalise(m)
    return {"option_mass": [float(x) for x in m], "predicted": None if p is None else [float(x) for x in p]}


def behaviour_entry(item: OptionItem, option_mass: Sequence[float]) -> dict[str, Any] | None:
    """What :func:`ub_core.metrics.grid_behaviour_rates` needs of one calibration item: ``{"grid", "pm",
    "compatible", "higher_first"}``; ``None`` for items of other banks and for calibration items with more than two
    options (no reference behaviour). The adapters log it, so grid rates can be recomputed from any log."""
    if item.bank != "calibration":
        return None
    return _entry_from_scores(item_scores(item, option_mass))


def _entry_from_scores(s: Mapping[str, Any]) -> dict[str, Any] | None:
    if s.get("grid") is None:
        return None
    return {"grid": str(s["grid"]), "pm": float(s["pm"]), "compatible": list(s.get("compatible") or []),
            "higher_first": s.get("higher_first")}


def scored_sample(item: OptionItem, option_mass: Sequence[float],
                  kl_floor: float | None = None) -> tuple[dict[str, float], dict[str, Any]]:
    """``(score_row(...), payload)`` from one scoring of the item, for the adapters: the payload is
    :func:`sample_payload` plus ``behaviour_entry`` (:func:`behaviour_entry`; None outside calibration)."""
    s = item_scores(item, option_mass, kl_floor)
    payload = sample_payload(item, option_mass)
    payload["behaviour_entry"] = _entry_from_scores(s) if item.bank == "calibration" else None
    return _row_from_scores(item, s), payload
