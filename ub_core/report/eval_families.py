"""Per-eval-family readers: which keys of one scored sample belong to which report eval family (ksn, calibration,
..., a kind of evaluation; not a distribution family).

Both framework readers reduce one scored sample to three plain dicts and hand them to every eval family here:

- ``values``: the per-sample metric values (Inspect: the ``Score.value`` dict; lm-eval: the keys the sample line
  lists under ``"metrics"``);
- ``meta``: what the scorer kept beside them (Inspect: ``Score.metadata``; lm-eval: the sample line's own extra
  keys such as ``values``, ``predicted``, ``option_mass``);
- ``doc``: the problem (Inspect: ``Sample.metadata`` plus ``id``; lm-eval: the line's ``doc``).

Each eval family is one small :class:`EvalFamily` whose key names are module constants, so fixing a key to match an
adapter is a one-line change. A sample whose keys match several eval families yields one record per eval family.

A plug-in's run metric (:class:`ub_core.run_metrics.RunMetric`) is a report eval family of its own, read when a
report is built (:func:`plugin_eval_families`): its samples (those that carry its per-problem record) are shown in
its own section, titled as it says, with its bank's own metrics, and in no built-in section.

Outside results are hostile: :func:`value_problem` judges each extracted number against its metric's spec
(:mod:`ub_core.metric_spec` bounds), and :func:`extract_all` drops what it refuses, with the reason, so a TARr of
-5 or 1e308, a ``true`` where a rate belongs or a 400-digit integer is never shown as a number.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..metric_spec import (BEHAVIOURS as SPEC_BEHAVIOURS, ODDS_QUESTION_METRICS, ODDS_SAMPLING_METRICS,
                           fill_missing_rates, REPORT_SPEC_FAMILIES, find_metric, metric_keys, split_key)
from ..run_metrics import RUN_RECORDS, RunMetric, all_run_metrics, bank_families
from ..untrusted import short
from ..metrics.intervals import clip_roundoff

__all__ = ["EvalFamily", "EVAL_FAMILIES", "EVAL_FAMILY_NAMES", "KSN_KEYS", "CALIBRATION_KEYS", "BEHAVIOURS",
           "IMPLICIT_KEYS", "EXPLICIT_KEYS", "KSN_LOGPROB_KEYS", "ODDS_KEYS", "ODDS_META", "STABILITY_KEYS",
           "DICE_KEYS", "DICE_META",
           "extract_all", "value_problem", "clip_metric", "plugin_eval_families", "section_title", "spec_families",
           "run_metric_direction"]

# ------------------------------------------------------------------------------------------------ key names
#: ksn (UnpredictaBench): ``ks@N`` / ``p@N`` for every N, plus these (``ub_inspect.ksn.scorer``,
#: ``ub_lmeval.ksn_hooks``) (``wdz_undefined``: 1 when WDZ has no value because its null has no spread;
#: ``constant``: 1 for a constant sample. A log without these flags has them derived by the summary, see
#: ``summary._ksn_counts``.)
KSN_KEYS = tuple(k for k in metric_keys("ksn") if split_key(k)[1] is None)
#: where the parsed values live: Inspect ``Score.metadata["values"]``, lm-eval sample line ``"values"``
KSN_VALUES = "values"

#: sampling-free KS@N (``ub_inspect/ksn_logprob``, ``ub_ksn_logprob``): ``p_pass@N`` for every N plus these;
#: its payload (Inspect ``Score.metadata["ub"]``; lm-eval ``doc`` + the line's ``q``) holds the distributions
KSN_LOGPROB_KEYS = tuple(k for k in metric_keys("ksn_logprob") if split_key(k)[1] is None)
KSN_LOGPROB_META = ("q", "p", "values", "candidates")

#: calibration (the numeric-calibration paper)
CALIBRATION_KEYS = tuple(k for k in metric_keys("calibration") if not k.startswith("behaviour_"))
BEHAVIOURS = SPEC_BEHAVIOURS
BEHAVIOUR_PREFIX = "behaviour_"
GRID_PREFIX = "grid_"
#: OptionItem payload: Inspect ``Score.metadata["ub"]`` (record + these two); lm-eval ``doc`` + line keys
RECORD_META = "ub"
OPTION_LOGPROB_EXTRA = ("predicted", "option_mass")

#: implicit (the implicit-reasoning paper)
IMPLICIT_KEYS = metric_keys("implicit")
#: explicit MCQ twin (the implicit-reasoning paper)
EXPLICIT_KEYS = metric_keys("explicit")
#: odds (the odds paper); metadata from Inspect ``Sample.metadata`` or the lm-eval ``doc``
ODDS_KEYS = tuple(m.key for m in (*ODDS_QUESTION_METRICS, *ODDS_SAMPLING_METRICS) if m.kind == "score")
ODDS_META = ("family", "task", "shots", "shot_type", "context", "distribution")
#: stability (the non-determinism paper); ``run_accuracies`` is a list (per-run accuracy, or per-run correctness
#: of one question); ``parse_failure_rate`` (share of unreadable replies) sits next to ``tar_a``: unreadable
#: replies agree in TARa
STABILITY_KEYS = (*(k for k in metric_keys("stability") if k != "acc"), "run_accuracies")
#: dice (the "Bad Dice Players" paper): one record per law; its configuration (protocol, N asked, convention, and
#: the lm-eval document's alpha and seed) from Inspect ``Sample.metadata`` / ``Score.metadata`` or the lm-eval
#: ``doc``. The values themselves (up to 100,000 per law) are not kept: the scores are.
DICE_KEYS = metric_keys("dice")
DICE_META = ("law", "tier", "protocol", "n", "convention", "alpha", "seed")


Extracted = tuple[str, dict[str, Any], dict[str, Any]]  # (category, metrics, payload)


@dataclass(frozen=True)
class EvalFamily:
    name: str
    title: str
    detect: Callable[[Mapping[str, Any]], bool]
    extract: Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]], Extracted]


def _pick(values: Mapping[str, Any], keys) -> dict[str, Any]:
    return {k: values[k] for k in keys if k in values}


def _category(*sources: Mapping[str, Any], default: str = "unknown") -> str:
    for s in sources:
        if isinstance(s, Mapping) and s.get("category") not in (None, ""):
            return str(s["category"])
    return default


# ------------------------------------------------------------------------------------------------ ksn

def _is_ksn(values: Mapping[str, Any]) -> bool:
    # odds sampling items report ks@N too, beside their ks_stat: they belong to the odds section
    return "ks_stat" not in values and any(split_key(k) == ("ks", split_key(k)[1]) and split_key(k)[1]
                                           for k in values)


def _per_n_values(eval_family: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The per-N metrics of ``eval_family``'s spec in ``values``, at any N (``ks@N``, ``p@N``, ``p_pass@N``), each
    rate undefined there (a log whose problem without a valid answer has no rate) at its spec's value for a problem
    without data, a fail."""
    return fill_missing_rates(eval_family, {k: v for k, v in values.items() if split_key(k)[1] is not None
                                            and find_metric(eval_family, k) is not None})


def _ksn(values, meta, doc) -> Extracted:
    metrics = _per_n_values("ksn", values)
    # the spec's keys now, not at import: a metric registered since is shown
    metrics.update(_pick(values, (k for k in metric_keys("ksn") if split_key(k)[1] is None)))
    raw = meta.get(KSN_VALUES)
    if raw is None:
        raw = values.get(KSN_VALUES)
    payload = {"values": list(raw) if isinstance(raw, (list, tuple)) else []}
    for k in ("support", "family", "regime", "subcategory"):
        if k in doc:
            payload[k] = doc[k]
    return _category(doc), metrics, payload


def _ksn_logprob(values, meta, doc) -> Extracted:
    metrics = _per_n_values("ksn_logprob", values)
    if values.get("unresolved") == 1:  # bounds wider than the target: left out of the means, counted
        metrics = {k: None for k in metrics}
    metrics.update(_pick(values, KSN_LOGPROB_KEYS))
    record = meta.get(RECORD_META) if isinstance(meta.get(RECORD_META), Mapping) else {}
    payload = {}
    for k in KSN_LOGPROB_META:
        for src in (record, meta, doc):
            if isinstance(src.get(k), list):
                payload[k] = list(src[k])
                break
    return _category(doc), metrics, payload


# ------------------------------------------------------------------------------------------------ OptionItem families

def _option_logprob_payload(meta: Mapping[str, Any], doc: Mapping[str, Any]) -> dict[str, Any]:
    """The OptionItem record plus ``predicted`` / ``option_mass``: Inspect keeps them all in ``meta["ub"]``; lm-eval
    has the record as the doc and the two lists as line keys."""
    record = meta.get(RECORD_META) if isinstance(meta.get(RECORD_META), Mapping) else doc
    payload = dict(record)
    for k in OPTION_LOGPROB_EXTRA:
        if k not in payload and k in meta:
            payload[k] = meta[k]
    # what grid behaviour rates need (ub_core.logprob.option_logprob.behaviour_entry): Inspect keeps it in meta["ub"];
    # lm-eval lines carry it inside each grid_<b> value
    if "behaviour_entry" not in payload:
        grid = meta.get(GRID_PREFIX + BEHAVIOURS[0])
        if isinstance(grid, Mapping) and isinstance(grid.get("entry"), Mapping):
            payload["behaviour_entry"] = dict(grid["entry"])
    return payload


def _calibration(values, meta, doc) -> Extracted:
    metrics = _pick(values, CALIBRATION_KEYS)
    metrics.update({k: v for k, v in values.items() if k.startswith(BEHAVIOUR_PREFIX)})
    payload = _option_logprob_payload(meta, doc)
    return _category(payload, doc), metrics, payload


def _implicit(values, meta, doc) -> Extracted:
    payload = _option_logprob_payload(meta, doc)
    return _category(payload, doc), _pick(values, IMPLICIT_KEYS), payload


def _explicit(values, meta, doc) -> Extracted:
    payload = _option_logprob_payload(meta, doc)
    return _category(payload, doc), _pick(values, EXPLICIT_KEYS), payload


# ------------------------------------------------------------------------------------------------ odds, stability

def _odds(values, meta, doc) -> Extracted:
    record = meta.get(RECORD_META) if isinstance(meta.get(RECORD_META), Mapping) else {}
    payload = {}
    for k in ODDS_META:
        for src in (doc, meta, record, doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}):
            if isinstance(src, Mapping) and k in src:
                payload[k] = src[k]
                break
    return str(payload.get("task", _category(doc))), _pick(values, ODDS_KEYS), payload


def _stability(values, meta, doc) -> Extracted:
    metrics = _pick(values, STABILITY_KEYS)
    pfr = metrics.get("parse_failure_rate")
    if isinstance(pfr, Mapping):  # an lm-eval document's term: {"unreadable": k, "runs": n, "examples": [...]}
        runs = pfr.get("runs")
        metrics["parse_failure_rate"] = pfr.get("unreadable", 0) / runs if isinstance(runs, int) and runs else None
    for k in STABILITY_KEYS:  # the tar reducers keep tar_a / tar_r in the reduced Score's metadata
        if k not in metrics and k in meta:
            metrics[k] = meta[k]
    return _category(doc), metrics, {}


def _dice(values, meta, doc) -> Extracted:
    payload = {}
    for k in DICE_META:
        for src in (meta, doc):
            if k in src and isinstance(src[k], (str, int, float)) and not isinstance(src[k], bool):
                payload[k] = src[k]
                break
    return str(payload.get("tier", _category(doc))), _pick(values, DICE_KEYS), payload


EVAL_FAMILIES: tuple[EvalFamily, ...] = (
    EvalFamily("ksn", "UnpredictaBench (KS@N)", _is_ksn, _ksn),
    EvalFamily("ksn_logprob", "Sampling-free KS@N (log-probabilities)", lambda v: "ks_distance" in v, _ksn_logprob),
    EvalFamily("calibration", "Numeric calibration", lambda v: any(k in v for k in CALIBRATION_KEYS), _calibration),
    EvalFamily("implicit", "Implicit probabilistic reasoning", lambda v: any(k in v for k in IMPLICIT_KEYS[:3]),
           _implicit),
    EvalFamily("explicit", "Explicit MCQ", lambda v: "mcq_acc" in v, _explicit),
    EvalFamily("odds", "What are the odds", lambda v: any(k in v for k in ODDS_KEYS), _odds),
    EvalFamily("stability", "Run-to-run stability", lambda v: "tar_r" in v or "tar_a" in v, _stability),
    EvalFamily("dice", "Bad Dice Players (sampling from stated laws)", lambda v: "passed" in v and "w1" in v, _dice),
)
EVAL_FAMILY_NAMES = tuple(f.name for f in EVAL_FAMILIES)


# ------------------------------------------------------------------------------------------------ plug-ins

def _plugin_record(rm: RunMetric, values: Mapping[str, Any], meta: Mapping[str, Any]) -> Any:
    """The problem's record of ``rm``: Inspect keeps it in ``Score.metadata["ub_run"]``, lm-eval as the document's
    value of the metric itself."""
    held = meta.get(RUN_RECORDS)
    if isinstance(held, Mapping) and isinstance(held.get(rm.name), Mapping):
        return held[rm.name]
    return values.get(rm.name) if isinstance(values.get(rm.name), Mapping) else None


def _plugin_family(rm: RunMetric) -> EvalFamily:
    def extract(values, meta, doc) -> Extracted:
        bank = rm.bank or (doc.get("bank") if isinstance(doc.get("bank"), str) else None)
        scoped = metric_keys("ksn", bank=bank, families=bank_families(bank) if bank else
                             ((rm.family,) if rm.family else ()))
        metrics = {k: v for k, v in values.items() if isinstance(k, str) and find_metric("ksn", k) is not None
                   and (k in scoped or split_key(k)[1] is not None) and not isinstance(v, Mapping)}
        record = _plugin_record(rm, values, meta)
        payload = {RUN_RECORDS: {rm.name: {str(k): v for k, v in record.items()}}} if record else {}
        if bank:
            payload["bank"] = bank
        return _category(doc), fill_missing_rates("ksn", metrics), payload

    return EvalFamily(rm.name, rm.title or rm.display, lambda probe: _plugin_record(rm, probe, probe) is not None,
                      extract)


def plugin_eval_families() -> tuple[EvalFamily, ...]:
    """One report eval family per installed plug-in run metric, read now."""
    return tuple(_plugin_family(rm) for rm in all_run_metrics().values())


def section_title(eval_family: str) -> str:
    """The title of a report section: a built-in eval family's, or a plug-in run metric's."""
    for fam in (*EVAL_FAMILIES, *plugin_eval_families()):
        if fam.name == eval_family:
            return fam.title
    return eval_family


def run_metric_direction(eval_family: str, column: str) -> bool | None:
    """The direction of a plug-in section's run-metric column (its value; its stderr and extras have none)."""
    rm = all_run_metrics().get(eval_family) if eval_family not in EVAL_FAMILY_NAMES else None
    return rm.higher_is_better if rm is not None and column == rm.name else None


def spec_families(eval_family: str) -> tuple[str, ...]:
    """The metric-spec eval families whose keys a report eval family shows (a plug-in's section: ksn's)."""
    if eval_family in REPORT_SPEC_FAMILIES:
        return REPORT_SPEC_FAMILIES[eval_family]
    if eval_family not in EVAL_FAMILY_NAMES and eval_family in all_run_metrics():
        return ("ksn",)
    return (eval_family,)


def _digits(n: int) -> str:
    try:
        return f"{len(str(abs(n))):,}"
    except ValueError:  # over the int-to-text limit
        return f"about {abs(n).bit_length() * math.log10(2):,.0f}"


def _spec(eval_family: str, key: str):
    """The metric spec of ``key`` in report eval family ``eval_family`` (the spec families it covers), or None."""
    return next((m for f in spec_families(eval_family) if (m := find_metric(f, key)) is not None), None)


def value_problem(eval_family: str, key: str, value: Any) -> str | None:
    """Why ``value`` cannot be shown as metric ``key`` of report eval family ``eval_family`` (one line), or None
    when it can.

    Only numbers are judged: a bool where a number belongs (0/1 flags summed by ``total`` aside), an integer
    beyond the float range (309 digits and up), a finite number outside the metric's bounds. NaN and +/-inf mean
    "undefined" and anything that is not a number is a blank already: both are left as they are."""
    spec = _spec(eval_family, key)
    if isinstance(value, bool):
        if spec is None or spec.aggregation == "total":
            return None
        return f"{key} = {str(value).lower()}, a boolean where a number belongs"
    if not isinstance(value, numbers.Real):
        return None
    try:
        v = float(value)
    except OverflowError:
        return f"{key} = {short(value, 24)} ({_digits(int(value))} digits), beyond the float range"
    if spec is None or spec.bounds is None or not math.isfinite(v):
        return None
    lo, hi = spec.bounds
    if clip_roundoff(v, spec.bounds)[0] is not None:
        return None  # inside, or a hair outside through round-off (clip_metric clips it, counted)
    return f"{key} = {v:g}, outside [{lo:g}, {hi:g}]"


def clip_metric(eval_family: str, key: str, value: Any) -> tuple[Any, bool]:
    """``value`` of metric ``key`` clipped into the metric's bounds where it lies outside them by round-off only
    (:func:`ub_core.metrics.intervals.clip_roundoff`: a Manhattan distance of 2.0000000000000004 is 2): ``(value,
    clipped)``. Anything else is returned as it is (:func:`value_problem` judges it)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value, False
    spec = _spec(eval_family, key)
    try:
        v = float(value)
    except OverflowError:
        return value, False
    if spec is None or spec.bounds is None:
        return value, False
    w, clipped = clip_roundoff(v, spec.bounds)
    return (w, True) if clipped else (value, False)


def extract_all(values: Mapping[str, Any], meta: Mapping[str, Any], doc: Mapping[str, Any],
                refused: list[str] | None = None, clipped: list[str] | None = None) -> list[tuple[str, Extracted]]:
    """``[(eval family, (category, metrics, payload)), ...]`` for every eval family whose keys appear in ``values``
    (stability also looks in ``meta``, where the tar reducers put its keys). A metric value a hair outside its
    bounds (round-off) is clipped into them and ``"<family> <key>"`` appended to ``clipped`` (:func:`clip_metric`);
    one that :func:`value_problem` refuses is left out of ``metrics`` and its reason appended to ``refused``."""
    meta = meta if isinstance(meta, Mapping) else {}
    doc = doc if isinstance(doc, Mapping) else {}
    out = []
    plugins = tuple(f for f in plugin_eval_families() if f.detect({**meta, **values}))
    for fam in plugins or EVAL_FAMILIES:  # a plug-in's sample is shown in its own section only
        probe = {**meta, **values} if fam.name == "stability" or plugins else values
        if fam.detect(probe):
            category, metrics, payload = fam.extract(values, meta, doc)
            for key in list(metrics):
                metrics[key], was_clipped = clip_metric(fam.name, key, metrics[key])
                if was_clipped and clipped is not None:
                    clipped.append(f"{fam.name} {key}")
                why = value_problem(fam.name, key, metrics[key])
                if why is not None:
                    del metrics[key]
                    if refused is not None:
                        refused.append(f"{fam.name} {why}")
            out.append((fam.name, (category, metrics, payload)))
    return out
