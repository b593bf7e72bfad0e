"""The dice family in ``ub report`` ("Bad Dice Players"), and the paper's eleven published models as
reference rows beside a lab's own run (``ub report --published dice=DIR``, ``ub compare RUN --published DIR``).

A dice run's numbers mean something only with its **setting**: the protocol (batch or independent), the N values
asked per law, the convention of the tests (``default`` or ``release``, :mod:`ub_core.metrics.dice`) and alpha
(:class:`DiceSetting`). The leaderboard shows each row's setting and groups its rows by it.

Published rows come from the release's raw draws (its ``data/raw_results``), read by
:func:`ub_core.reproduce.dice.main_table` and scored **in the lab run's convention, alpha and seed**, so that the
two sit side by side on the same test: the paper's own figures are the release convention at alpha 0.01. They are
placed only beside runs of the release's protocol settings (:data:`~ub_core.reproduce.dice.RELEASE_N` values per
law at temperature :data:`~ub_core.reproduce.dice.RELEASE_TEMPERATURE`) and the same protocol, marked
``<model> (published)`` with framework ``published``, and never enter the :class:`SampleTable`: nothing pools,
pairs or ranks them with a run's records. A run of another setting gets no published rows and one note says why.
In the release convention a live run's reference is 1,000 seeded draws of the law
(:data:`~ub_core.metrics.dice.RELEASE_REFERENCE_DRAWS`), a published row's the release's own reference draws.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..metrics import wilson_interval
from ..metrics.dice import (DICE_ALPHA, DICE_CONVENTIONS, DICE_LAWS, DICE_ORDER, DICE_TIERS, W1_WITHOUT_SCALE,
                            law_name)
from ..untrusted import short
from .records import SampleRecord, SampleTable, finite_or_none
from .tables import PROVENANCE, Table

__all__ = ["DiceSetting", "PUBLISHED_FRAMEWORK", "PublishedRelease", "dice_tables", "add_published", "run_setting",
           "published_records", "published_name", "placement_problem"]

PUBLISHED_FRAMEWORK = "published"
#: the row key (not a column) that marks a published row for the page
PUBLISHED_FLAG = "published"
_SETTING = "_dice_setting"  # the row key holding a row's DiceSetting (not a column: never written out)
_TIER_COLUMNS = tuple(f"passed {t}" for t in DICE_TIERS)


def published_name(model: str) -> str:
    return f"{model} (published)"


@dataclass(frozen=True)
class DiceSetting:
    """What a dice row's numbers depend on. ``n`` and ``temperature`` are None where the input does not say."""

    protocol: str | None
    n: int | None
    convention: str
    alpha: float
    temperature: float | None = None
    seed: int = 0

    def group(self) -> tuple:
        """What must be equal for two rows to sit in one row group (the seed is a replicate's, not a setting)."""
        return (self.protocol, self.n, self.convention, self.alpha, self.temperature)

    def label(self) -> str:
        protocol = short(self.protocol, 40).strip("'\"") if self.protocol else "protocol ?"
        return (f"{protocol}, n={self.n if self.n is not None else '?'}, {self.convention}, "
                f"alpha={self.alpha:g}" + (f", T={self.temperature:g}" if self.temperature is not None else ""))


def _number(v: Any, integer: bool = False) -> Any:
    x = finite_or_none(v) if not isinstance(v, bool) else None
    if x is None:
        return None
    return int(x) if integer and x == int(x) else (None if integer else x)


def run_setting(records: Sequence[SampleRecord], table: SampleTable | None) -> DiceSetting:
    """The setting of one model's dice records: each field from the records' payload (the Inspect sample and score
    metadata, the lm-eval document), else from their runs' task arguments and generation settings, else the task's
    default (convention ``default``, alpha 0.01) or None (unknown)."""
    runs = [table.runs.get(s) for s in dict.fromkeys(r.source for r in records)] if table is not None else []
    sources: list[Mapping[str, Any]] = [r.payload for r in records]
    for info in runs:
        if info is not None:
            sources += [info.task_args or {}, info.settings or {}, info.generation or {}]

    def first(key: str) -> Any:
        return next((s[key] for s in sources if isinstance(s, Mapping) and s.get(key) is not None), None)

    protocol = first("protocol")
    convention = first("convention")
    alpha = _number(first("alpha"))
    seed = _number(first("seed"), integer=True)
    return DiceSetting(protocol=str(protocol) if protocol is not None else None, n=_number(first("n"), integer=True),
                       convention=str(convention) if convention in DICE_CONVENTIONS else "default",
                       alpha=alpha if alpha is not None and 0 < alpha < 1 else DICE_ALPHA,
                       temperature=_number(first("temperature")), seed=seed if seed is not None and seed >= 0 else 0)


def placement_problem(setting: DiceSetting) -> str | None:
    """Why the release's published rows cannot sit beside a run of ``setting`` (one line), or None when they can:
    the same protocol, :data:`RELEASE_N` values per law, temperature :data:`RELEASE_TEMPERATURE` (or unrecorded)."""
    from ..reproduce.dice import PROTOCOLS, RELEASE_N, RELEASE_TEMPERATURE

    if setting.protocol not in PROTOCOLS:
        return f"its protocol ({setting.protocol or 'not recorded'}) is none of the release's ({', '.join(PROTOCOLS)})"
    if setting.n != RELEASE_N:
        return f"it asks n={setting.n if setting.n is not None else '?'} values per law, the release {RELEASE_N}"
    if setting.temperature is not None and setting.temperature != RELEASE_TEMPERATURE:
        return f"it samples at temperature {setting.temperature:g}, the release at {RELEASE_TEMPERATURE:g}"
    return None


class PublishedRelease:
    """A checkout of the release, its main table scored once per (protocol, convention, alpha, seed) asked."""

    def __init__(self, path: str | Path):
        from ..reproduce.dice import _checked_root

        self.path = Path(path)
        _checked_root(self.path, "release")  # a one-line ValueError now, not half way through a report
        self._rows: dict[tuple, list[dict[str, Any]]] = {}
        self.gaps: dict[tuple, list[str]] = {}

    def rows(self, setting: DiceSetting) -> list[dict[str, Any]]:
        """The release's rows of ``setting.protocol`` scored in ``setting``'s convention, alpha and seed."""
        from ..reproduce.dice import main_table

        key = (setting.protocol, setting.convention, setting.alpha, setting.seed)
        if key not in self._rows:
            rows, gaps = main_table(self.path, (setting.protocol,), setting.convention, setting.alpha, setting.seed)
            self._rows[key], self.gaps[key] = rows, gaps.lines()
        return self._rows[key]

    def models(self, setting: DiceSetting) -> list[str]:
        return list(dict.fromkeys(r["model"] for r in self.rows(setting)))

    def gap_note(self, setting: DiceSetting) -> str | None:
        gaps = self.gaps.get((setting.protocol, setting.convention, setting.alpha, setting.seed)) or []
        if not gaps:
            return None
        return (f"published dice rows ({setting.label()}): {len(gaps)} gap(s) reading the release, e.g. "
                + "; ".join(gaps[:3]))


def published_records(release: PublishedRelease, setting: DiceSetting, model: str | None = None
                      ) -> list[SampleRecord]:
    """One :class:`SampleRecord` per law of each published model (or of ``model`` only, its paper name) in
    ``setting``: the keys a dice run's records have (``passed``, ``w1``, ``p_value``, ``n_values``,
    ``count_error``), its problem id the bank's item id of the law, so it pairs with a run law by law."""
    from ..problems.dice import dice_item
    from ..reproduce.dice import RELEASE_N

    out = []
    for r in release.rows(setting):
        if model is not None and r["model"] != model:
            continue
        asked = r["requested"] if isinstance(r.get("requested"), int) and r["requested"] > 0 else RELEASE_N
        metrics = {"passed": float(r["passed"]), "w1": r["w1"], "p_value": r["p_value"], "n_values": float(r["n"]),
                   "count_error": abs(r["n"] - asked) / asked}
        payload = {"law": r["distribution"], "tier": r["tier"], "protocol": r["protocol"], "n": RELEASE_N,
                   "convention": setting.convention, "alpha": setting.alpha, "seed": setting.seed}
        out.append(SampleRecord(published_name(r["model"]), PUBLISHED_FRAMEWORK, "dice", "dice", r["tier"],
                                dice_item(r["distribution"]).id, 1, metrics, payload,
                                f"{release.path}/{r['file']}"))
    return out


# ------------------------------------------------------------------------------------------------ tables

def _law_of(r: SampleRecord) -> str:
    return law_name(r.payload.get("law"), r.problem_id)


def _rate(recs: Sequence[SampleRecord]) -> tuple[float | None, float | None, float | None, int]:
    flags = [v for v in (r.metric("passed") for r in recs) if v is not None and 0.0 <= v <= 1.0]
    if not flags:
        return None, None, None, 0
    lo, hi = wilson_interval(int(round(sum(flags))), len(flags))
    return sum(flags) / len(flags), lo, hi, len(flags)


def _mean(recs: Iterable[SampleRecord], key: str) -> float | None:
    vals = [v for v in (r.metric(key) for r in recs) if v is not None]
    return sum(vals) / len(vals) if vals else None


def _lead_row(model: str, framework: str, setting: DiceSetting, recs: Sequence[SampleRecord]) -> dict[str, Any]:
    rate, lo, hi, n = _rate(recs)
    w1s = [v for v in (r.metric("w1") for r in recs) if v is not None]
    # the run's W1 summaries: the median over every law (no one law moves it), and the mean over the laws whose W1
    # has a finite scale (W1_WITHOUT_SCALE, Cauchy, left out: its W1 alone would be the mean)
    row = {"model": model, "framework": framework, "setting": setting.label(), "laws": n, "passed": rate,
           "ci_low": lo, "ci_high": hi, "w1_median": statistics.median(w1s) if w1s else None,
           "w1_finite_mean": _mean([r for r in recs if _law_of(r) not in W1_WITHOUT_SCALE], "w1"),
           "n_values": _mean(recs, "n_values"), "count_error": _mean(recs, "count_error"), _SETTING: setting}
    for tier, column in zip(DICE_TIERS, _TIER_COLUMNS):
        row[column] = _rate([r for r in recs if _law_of(r) in DICE_TIERS[tier]])[0]
    return row


def _law_rows(model: str, framework: str, setting: DiceSetting, recs: Sequence[SampleRecord]) -> list[dict]:
    by_law: dict[str, list[SampleRecord]] = {}
    for r in recs:
        by_law.setdefault(_law_of(r), []).append(r)
    order = {name: i for i, name in enumerate(DICE_ORDER)}
    return [{"model": model, "framework": framework, "law": law,
             "tier": DICE_LAWS[law].tier if law in DICE_LAWS else None, "setting": setting.label(),
             "passed": _rate(lrecs)[0], "p_value": _mean(lrecs, "p_value"), "w1": _mean(lrecs, "w1"),
             "n_values": _mean(lrecs, "n_values"), _SETTING: setting}
            for law, lrecs in sorted(by_law.items(), key=lambda kv: order.get(kv[0], len(order)))]


def dice_tables(records: list[SampleRecord], table: SampleTable | None) -> list:
    """The dice leaderboard (per model and setting: the pass rate over the laws with its Wilson interval, per tier,
    median and mean W1, values read, count error) and the per-law table."""
    lead = Table("dice_leaderboard", "Bad Dice Players leaderboard (share of laws whose test passes, p > alpha; "
                 "95% Wilson interval), grouped by setting", "dice",
                 ["model", "framework", "setting", "laws", "passed", "ci_low", "ci_high", *_TIER_COLUMNS,
                  "w1_median", "w1_finite_mean", "n_values", "count_error"])
    by_law = Table("dice_by_law", "Bad Dice Players per law", "dice",
                   ["model", "framework", "law", "tier", "setting", "passed", "p_value", "w1", "n_values"],
                   keys=("model", "framework", "law"))
    by_model: dict[tuple[str, str], list[SampleRecord]] = {}
    for r in records:
        by_model.setdefault((r.model, r.framework), []).append(r)
    for (model, fw), recs in by_model.items():
        setting = run_setting(recs, table)
        lead.rows.append(_lead_row(model, fw, setting, recs))
        by_law.rows += _law_rows(model, fw, setting, recs)
    lead.rows.sort(key=lambda r: -(r["passed"] or 0.0))
    lead.note = ("setting: protocol, values asked per law (n), the tests' convention, alpha (and temperature where "
                 "recorded); rows of different settings measure different things. passed: share of the laws whose "
                 "test passes (p > alpha), the paper's pass rate; w1_median: median Wasserstein-1 distance to the "
                 "law over the laws, the run's W1 summary; w1_finite_mean: the mean over the laws whose W1 has a "
                 "finite scale (" + ", ".join(sorted(W1_WITHOUT_SCALE)) + " left out: no finite mean, so one "
                 "such law's W1 would be the mean); per-law W1 in dice_by_law, as the paper reports it; "
                 "n_values: values read per law; count_error: |values read - n| / n.")
    return [lead, by_law]


_COMPLETE_FIRST = {True: 0, None: 1, False: 2}


def add_published(tables: dict[str, list], table: SampleTable, release: PublishedRelease) -> None:
    """Put the release's models beside every dice row group whose setting the release shares
    (:func:`placement_problem`), scored in that group's convention, alpha and seed; without such a group (no dice
    run, or none of the release's setting), the release's rows in its own convention at alpha 0.01 for both
    protocols, in groups of their own. Notes say which groups got published rows and which did not, and why."""
    from ..reproduce.dice import PROTOCOLS, RELEASE_N, RELEASE_TEMPERATURE

    if "dice" not in tables:
        tables["dice"] = dice_tables([], table)
    lead, by_law = tables["dice"][0], tables["dice"][1]
    groups: dict[tuple, DiceSetting] = {}
    for row in lead.rows:
        setting: DiceSetting = row[_SETTING]
        why = placement_problem(setting)
        if why is not None:
            table.add_note(f"{row['model']} [{row['framework']}] dice: no published rows beside it: {why}")
            continue
        first = groups.setdefault(setting.group(), setting)
        if first.seed != setting.seed:
            table.add_note(f"dice ({setting.label()}): runs with seeds {first.seed} and {setting.seed}; the published "
                           f"rows are scored with seed {first.seed}")
    if not groups:
        for protocol in PROTOCOLS:
            s = DiceSetting(protocol, RELEASE_N, "release", DICE_ALPHA, RELEASE_TEMPERATURE)
            groups[s.group()] = s
    for setting in groups.values():
        records = published_records(release, setting)
        by_model: dict[str, list[SampleRecord]] = {}
        for r in records:
            by_model.setdefault(r.model, []).append(r)
        for model, recs in by_model.items():
            prov = {"runs": 0, "complete": True, "published": True, "source": str(release.path),
                    "settings": {"protocol": setting.protocol, "n": setting.n, "convention": setting.convention,
                                 "alpha": setting.alpha, "seed": setting.seed}}
            row = _lead_row(model, PUBLISHED_FRAMEWORK, setting, recs)
            lead.rows.append({**row, "complete": True, PROVENANCE: prov, PUBLISHED_FLAG: True})
            by_law.rows += [{**r, "complete": True, PROVENANCE: prov, PUBLISHED_FLAG: True}
                            for r in _law_rows(model, PUBLISHED_FRAMEWORK, setting, recs)]
        table.add_note(f"dice ({setting.label()}): {len(by_model)} published models of the release at "
                       f"{short(str(release.path), 120)} beside the runs of this setting, scored from its raw draws "
                       f"in the {setting.convention} convention at alpha {setting.alpha:g}; marked '(published)', "
                       f"never pooled with a run")
        note = release.gap_note(setting)
        if note:
            table.add_note(note)
    order = {g: i for i, g in enumerate(dict.fromkeys(r[_SETTING].group() for r in lead.rows))}
    lead.rows.sort(key=lambda r: (order[r[_SETTING].group()], _COMPLETE_FIRST.get(r.get("complete"), 1),
                                  -(r["passed"] if r["passed"] is not None and math.isfinite(r["passed"]) else 0.0)))
    law_order = {law: i for i, law in enumerate(DICE_ORDER)}
    by_law.rows.sort(key=lambda r: (order.get(r[_SETTING].group(), len(order)), law_order.get(r["law"], 99),
                                    bool(r.get(PUBLISHED_FLAG)), -(r["passed"] or 0.0)))
    if "complete" not in lead.columns:
        for t in (lead, by_law):
            t.columns.insert(t.columns.index("framework") + 1, "complete")
    lead.note += (" (published): a model of the paper's release, scored from its raw draws in the row group's "
                  "convention; never pooled with a run.")
