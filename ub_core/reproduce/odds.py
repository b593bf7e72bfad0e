"""``ub reproduce odds --release DIR``: the odds paper's Tables 1 and 2 recomputed from its public release's outputs.

The release (``yahskapar/LLMs-and-Probabilistic-Reasoning``, which the user clones) ships, under
``sample_results_from_paper/``, the replies behind two rows of the paper's tables, one CSV per distribution with the
columns ``prompt``, ``answer`` (the number its pipeline read) and ``reasoning`` (the model's reply):

- Table 1, GPT-4 Turbo, zero-shot: ``idealized/{percentiles,probabilities}/Gpt4Turbo_<task>_0_shots_<family>_10_samples
  .csv`` (11 percentiles or 10 probabilities x 10 replies) and ``idealized/sampling/Gpt4Turbo_sampling_0_shots_<family>
  _1000_samples.csv`` (1,000 draws); 14 distributions (the multinomial's three outcomes apart).
- Table 2, Gemini 1.0 Ultra, zero-shot real-world percentiles: ``idealized_real_world/*_synthetic_<name>_*``,
  ``real_world/*_distnameandstats_<name>_*`` and ``real_world_Normal_approx/*_true_NA_<name>_*`` (idealized, real-world
  context, Normal approximation), four distributions per domain.

Each reply is scored against the item of our bank that asks the same question (the same distribution and target:
the target whose value, or interval, is nearest to the one in the release's prompt, as the release's tutorial
matches real-world replies to its ground truth), in both conventions (:data:`~ub_core.problems.odds.CONVENTIONS`).
Three numbers per cell, each the mean across the cell's distributions with its standard error
(:func:`~ub_core.metrics.odds.across_distributions`, the paper's ±): the release's own ``answer`` column scored in the
release convention, and our reader (:func:`~ub_core.parsing.odds.parse_percentile` and friends) on the raw replies
in each convention; beside them the parse failures of each side (a release ``answer`` that is not a number in range,
as its tutorial drops; a reply our reader cannot read).

The release's files are outside input: each is read with :func:`~ub_core.untrusted.read_text` (size cap, UTF-8), a
file that cannot be read or lacks the columns is one counted error line, a row without a readable question is a
counted failure, and a missing file leaves its distribution out of the cell (listed).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence


from ..metrics.odds import across_distributions, ks_statistic
from ..parsing.odds import parse_percentile, parse_probability
from ..problems.odds import CONVENTIONS, REAL_WORLD, odds_items
from ..untrusted import ErrorSummary, UntrustedFileError, read_text, short

__all__ = ["PAPER_TABLE1", "PAPER_TABLE2", "Cell", "read_release_csv", "reproduce_odds", "format_tables",
           "add_parser"]

SAMPLES = "sample_results_from_paper"
#: Larger than any released CSV (the sampling files are about 1 MB).
MAX_FILE_BYTES = 32 * 2**20
COLUMNS = ("prompt", "answer", "reasoning")

#: The paper's Table 1, GPT-4 Turbo row (zero-shot): MAE (%) or mean KS statistic, ± standard error.
PAPER_TABLE1: dict[str, tuple[float, float]] = {"percentile": (14.9, 2.39), "sampling": (0.59, 0.08),
                                                "probability": (21.0, 2.11)}
#: The paper's Table 2, Gemini 1.0 Ultra row: (domain, framing) -> MAE (%) ± standard error.
PAPER_TABLE2: dict[tuple[str, str], tuple[float, float]] = {
    ("health", "idealized"): (12.8, 4.43), ("health", "context"): (10.3, 2.49), ("health", "normal"): (5.89, 1.09),
    ("finance", "idealized"): (14.0, 4.47), ("finance", "context"): (10.5, 2.75), ("finance", "normal"): (7.62, 1.06),
    ("climate", "idealized"): (16.9, 3.86), ("climate", "context"): (10.5, 0.79), ("climate", "normal"): (7.43, 1.11),
}

# release file name -> (our family, parameterisation): the multinomial's outcomes 1-3 are our p0-p2
_FAMILY_FILES = {**{f: (f, "p0") for f in ("normal", "log_normal", "skew_normal", "exponential", "power_law",
                                           "uniform", "gamma", "gumbel", "poisson", "geometric", "binomial")},
                 **{f"multinomial_outcome_{i + 1}": ("multinomial", f"p{i}") for i in range(3)}}
_TABLE1_FILES = {"percentile": ("percentiles", 10), "probability": ("probabilities", 10),
                 "sampling": ("sampling", 1000)}
_RW_FILES = {"average_step_count": "step_count", "average_resting_heart_rate": "resting_heart_rate",
             "average_sleep_minutes": "sleep_minutes", "average_azm_count": "exercise_minutes",
             "annual_household_income": "household_income", "monthly_gross_rent": "monthly_rent",
             "annual_electricity_cost": "electricity_cost", "annual_water_cost": "water_cost",
             "average_temperature": "temperature", "annual_precipitation": "precipitation",
             "average_wind_speed": "wind_speed", "average_relative_humidity": "relative_humidity"}
# framing -> (folder, file infix)
_RW_FRAMINGS = {"idealized": ("idealized_real_world", "synthetic"), "context": ("real_world", "distnameandstats"),
                "normal": ("real_world_Normal_approx", "true_NA")}
_DOMAINS = ("health", "finance", "climate")

_NUMBER = r"-?\d+(?:\.\d+)?"
_INTERVAL = re.compile(rf"between\s+\$?({_NUMBER})\s+and\s+\$?({_NUMBER})")
_NUMBER_RE = re.compile(_NUMBER)


@dataclass
class Cell:
    """One table cell: the paper's value and ours, each ``(mean, se)`` across the cell's distributions."""

    table: str
    name: str
    paper: tuple[float, float]
    release: tuple[float, float] = (math.nan, math.nan)
    ours: dict[str, tuple[float, float]] = field(default_factory=dict)
    rows: int = 0
    release_failures: int = 0
    our_failures: int = 0
    unmatched: int = 0
    distributions: int = 0
    missing: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def pair(x):
            return {"mean": _json_float(x[0]), "se": _json_float(x[1])}

        return {"table": self.table, "cell": self.name, "paper": pair(self.paper),
                "release_answers": pair(self.release),
                "ours": {c: pair(v) for c, v in self.ours.items()}, "rows": self.rows,
                "release_parse_failures": self.release_failures, "our_parse_failures": self.our_failures,
                "unmatched_rows": self.unmatched, "distributions": self.distributions, "missing": self.missing}


def _json_float(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


# ------------------------------------------------------------------------------------------------ reading

def read_release_csv(path: Path) -> list[tuple[str, str, str]]:
    """The ``(prompt, answer, reply)`` rows of one release CSV, or :class:`~ub_core.untrusted.UntrustedFileError`
    with a one-line reason (unreadable, too large, not UTF-8, not CSV, no ``prompt``/``answer``/``reasoning``
    header, a row of another width)."""
    text = read_text(path, MAX_FILE_BYTES)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:
        raise UntrustedFileError(f"{path.name}: not a CSV file ({short(str(e), 80)})") from None
    if not rows or tuple(rows[0]) != COLUMNS:
        raise UntrustedFileError(f"{path.name}: expected the header {','.join(COLUMNS)}, got "
                                 f"{short(','.join(rows[0]) if rows else '', 80)}")
    bad = next((i for i, r in enumerate(rows[1:], 2) if len(r) != len(COLUMNS)), None)
    if bad is not None:
        raise UntrustedFileError(f"{path.name}: row {bad} has {len(rows[bad - 1])} fields, not {len(COLUMNS)}")
    return [(r[0], r[1], r[2]) for r in rows[1:]]


def _question(prompt: str) -> str:
    """The last question of a prompt (after its last ``Question:``), up to its question mark."""
    tail = prompt.rsplit("Question:", 1)[-1]
    return tail.split("?", 1)[0][:2000]


def _asked(task: str, prompt: str) -> tuple[float, ...] | None:
    """The value (percentile) or interval (probability) a release prompt asks about; None when it has none."""
    q = _question(prompt)
    if task == "probability":
        m = list(_INTERVAL.finditer(q))
        return (float(m[-1].group(1)), float(m[-1].group(2))) if m else None
    # the value is the question's last number ("If outcome 2 appears 266.0 times")
    matches = list(_NUMBER_RE.finditer(q))
    last = matches[-1] if matches else None
    return (float(last.group(0)),) if last else None


def _release_number(answer: str, task: str) -> float | None:
    """The release's ``answer`` column as its tutorial reads it: a number (``pd.to_numeric``), in 0-100 for a
    percentile and 0-1 for a probability; None otherwise (a failure)."""
    try:
        v = float(answer.strip())
    except (ValueError, OverflowError):
        return None
    if not math.isfinite(v):
        return None
    bounds = {"percentile": (0.0, 100.0), "probability": (0.0, 1.0)}.get(task)
    return v if bounds is None or bounds[0] <= v <= bounds[1] else None


# ------------------------------------------------------------------------------------------------ scoring

def _nearest(asked: tuple[float, ...], items: Sequence[Any], task: str):
    def where(p) -> tuple[float, ...]:
        m = p.metadata
        return (m["lo"], m["hi"]) if task == "probability" else (m["value"],)

    return min(items, key=lambda p: (sum(abs(a - b) for a, b in zip(asked, where(p))), p.metadata["target"]))


def _score_questions(task: str, rows: Sequence[tuple[str, str, str]], items: Mapping[str, Sequence[Any]]):
    """Per convention, the errors (percentage points) of our reader; the release's answers' errors in the release
    convention; failure counts."""
    parse = parse_percentile if task == "percentile" else parse_probability
    scale = 1.0 if task == "percentile" else 100.0
    ours: dict[str, list[float]] = {c: [] for c in items}
    release: list[float] = []
    rel_fail = our_fail = unmatched = 0
    for prompt, answer, reply in rows:
        asked = _asked(task, prompt)
        if asked is None:
            unmatched += 1
            continue
        truth = {c: float(_nearest(asked, its, task).metadata["answer"]) for c, its in items.items()}
        v = _release_number(answer, task)
        if v is None:
            rel_fail += 1
        else:
            release.append(scale * abs(v - truth["release"]))
        r = parse(reply)
        if not r.ok:
            our_fail += 1
            continue
        for c in items:
            ours[c].append(scale * abs(float(r.value) - truth[c]))
    return ours, release, rel_fail, our_fail, unmatched


def _score_sampling(rows: Sequence[tuple[str, str, str]], items: Mapping[str, Sequence[Any]], truth_size: int,
                    seed: int):
    """Per convention, the KS statistic of our reader's values against the item's truth; the release's answers'
    KS statistic in the release convention; failure counts."""
    release_vals, our_vals = [], []
    rel_fail = our_fail = 0
    item = {c: its[0] for c, its in items.items()}
    for _prompt, answer, reply in rows:
        v = _release_number(answer, "sampling")
        if v is None:
            rel_fail += 1
        else:
            release_vals.append(v)
        r = item["release"].parse(reply)
        if r.ok:
            our_vals.append(float(r.value))
        else:
            our_fail += 1
    truth = {c: it.truth(size=truth_size, seed=seed) for c, it in item.items()}
    ours = {c: [ks_statistic(our_vals, truth[c])] if our_vals else [] for c in item}
    release = [ks_statistic(release_vals, truth["release"])] if release_vals else []
    return ours, release, rel_fail, our_fail, 0


def _fill(cell: Cell, per_dist: list[tuple[str, tuple]]) -> Cell:
    """Cell figures from each distribution's scored rows."""
    conventions = per_dist[0][1][0].keys() if per_dist else CONVENTIONS
    for conv in conventions:
        s = across_distributions({name: res[0][conv] for name, res in per_dist})
        cell.ours[conv] = (s["mean"], s["se"])
    s = across_distributions({name: res[1] for name, res in per_dist})
    cell.release = (s["mean"], s["se"])
    cell.distributions = s["distributions"]
    cell.release_failures = sum(res[2] for _, res in per_dist)
    cell.our_failures = sum(res[3] for _, res in per_dist)
    cell.unmatched = sum(res[4] for _, res in per_dist)
    return cell


def _load(path: Path, cell: Cell, errors: ErrorSummary) -> list | None:
    if not path.exists():
        cell.missing.append(path.name)
        return None
    try:
        rows = read_release_csv(path)
    except UntrustedFileError as e:
        errors.add("unreadable file", str(e))
        cell.missing.append(path.name)
        return None
    cell.rows += len(rows)
    return rows


def _table1(root: Path, errors: ErrorSummary, truth_size: int, seed: int) -> list[Cell]:
    cells = []
    bank = {c: odds_items("full", shots=[0], contexts=["none"], convention=c) for c in CONVENTIONS}
    for task in ("percentile", "sampling", "probability"):
        folder, n = _TABLE1_FILES[task]
        cell = Cell("Table 1 (GPT-4 Turbo, zero-shot)", task, PAPER_TABLE1[task])
        per_dist = []
        for fname, (family, ptag) in _FAMILY_FILES.items():
            path = root / "idealized" / folder / f"Gpt4Turbo_{folder}_0_shots_{fname}_{n}_samples.csv"
            rows = _load(path, cell, errors)
            if rows is None:
                continue
            items = {c: [p for p in its if p.metadata["task"] == task and p.family == family
                         and p.metadata["parameterisation"] == ptag] for c, its in bank.items()}
            score: Callable = (_score_questions if task != "sampling"
                               else lambda _t, r, i: _score_sampling(r, i, truth_size, seed))
            per_dist.append((fname, score(task, rows, items)))
        cells.append(_fill(cell, per_dist))
    return cells


def _table2(root: Path, errors: ErrorSummary) -> list[Cell]:
    cells = []
    by_name = {rw.name: rw for rw in REAL_WORLD}
    bank = {c: odds_items("full", task="percentile", shots=[0], convention=c,
                          contexts=[d if f == "context" else f"{d}_{f}" for d in _DOMAINS for f in _RW_FRAMINGS])
            for c in CONVENTIONS}
    for domain in _DOMAINS:
        for framing, (folder, infix) in _RW_FRAMINGS.items():
            cell = Cell("Table 2 (Gemini 1.0 Ultra, zero-shot, real-world percentiles)", f"{domain} {framing}",
                        PAPER_TABLE2[(domain, framing)])
            per_dist = []
            for fname, name in _RW_FILES.items():
                if by_name[name].domain != domain:
                    continue
                path = root / folder / f"gemini_ultra_percentiles_zero_shot_{infix}_{fname}_10_samples.csv"
                rows = _load(path, cell, errors)
                if rows is None:
                    continue
                items = {c: [p for p in its if p.metadata.get("real_world") == name
                             and p.metadata["framing"] == framing] for c, its in bank.items()}
                per_dist.append((fname, _score_questions("percentile", rows, items)))
            cells.append(_fill(cell, per_dist))
    return cells


def reproduce_odds(release: str | Path, truth_size: int = 100_000, seed: int = 0) -> dict[str, Any]:
    """Both tables from a release checkout ``release`` (its root, or its ``sample_results_from_paper`` folder).
    Returns ``{"cells": [Cell, ...], "errors": ErrorSummary}``; a folder without the release's layout is a one-line
    ValueError."""
    root = Path(release)
    if (root / SAMPLES).is_dir():
        root = root / SAMPLES
    if not root.is_dir() or not any((root / d).is_dir() for d in ("idealized", "real_world")):
        raise ValueError(f"{short(str(release), 120)}: not a checkout of the odds release (no {SAMPLES}/idealized "
                         f"or real_world folder)")
    errors = ErrorSummary()
    return {"cells": _table1(root, errors, truth_size, seed) + _table2(root, errors), "errors": errors}


# ------------------------------------------------------------------------------------------------ output

def _fmt(x: tuple[float, float], digits: int) -> str:
    mean, se = x
    if not math.isfinite(mean):
        return "n/a"
    return f"{mean:.{digits}f} ± {se:.{digits}f}" if math.isfinite(se) else f"{mean:.{digits}f}"


def format_tables(result: Mapping[str, Any]) -> str:
    """The cells as text tables, one per paper table: paper | release answers (release convention) | ours, paper
    convention | ours, release convention | parse failures (release / ours) | rows."""
    lines: list[str] = []
    table = None
    head = (f"{'cell':<18} {'paper':>14} {'release answers':>17} {'ours (paper)':>15} {'ours (release)':>15} "
            f"{'failures rel/ours':>18} {'rows':>6}")
    for c in result["cells"]:
        if c.table != table:
            table = c.table
            lines += ["" if lines else None, table, head, "-" * len(head)]
            lines = [x for x in lines if x is not None]
        d = 3 if c.name == "sampling" else 2
        lines.append(f"{c.name:<18} {_fmt(c.paper, d):>14} {_fmt(c.release, d):>17} "
                     f"{_fmt(c.ours.get('paper', (math.nan, math.nan)), d):>15} "
                     f"{_fmt(c.ours.get('release', (math.nan, math.nan)), d):>15} "
                     f"{f'{c.release_failures} / {c.our_failures}':>18} {c.rows:>6}")
        if c.unmatched:
            lines.append(f"  {c.unmatched} row(s) without a readable question, not scored")
        if c.missing:
            lines.append(f"  {len(c.missing)} file(s) missing or unreadable: {', '.join(c.missing[:4])}"
                         + (" ..." if len(c.missing) > 4 else ""))
    errors: ErrorSummary = result["errors"]
    for e in errors:
        lines.append(f"error: {e}")
    if errors.more_line():
        lines.append(errors.more_line())
    lines.append("Means and ± across each cell's distributions (standard error, ddof 1), as the paper reports; "
                 "'release answers' scores the release's own answer column in the release convention.")
    return "\n".join(lines)


def _cmd(args: Any) -> int:
    result = reproduce_odds(args.release, truth_size=args.truth_size, seed=args.seed)
    if args.json:
        print(json.dumps({"cells": [c.to_json() for c in result["cells"]], **result["errors"].to_json()}, indent=1))
    else:
        print(format_tables(result))
    return 1 if result["errors"].total else 0


def add_parser(sub: Any) -> None:
    """Register ``odds`` on the ``ub reproduce`` subparsers."""
    p = sub.add_parser("odds", help="the odds paper's Tables 1 and 2 from its release's outputs, beside ours")
    p.add_argument("--release", required=True, help="a checkout of yahskapar/LLMs-and-Probabilistic-Reasoning")
    p.add_argument("--truth-size", type=_positive, default=100_000, help="ground-truth draws for the KS statistic "
                   "(default 100,000, the release's sample size)")
    p.add_argument("--seed", type=int, default=0, help="seed of the ground-truth draws (default 0)")
    p.add_argument("--json", action="store_true", help="JSON: {cells: [...], errors, error_count, error_kinds}")
    p.set_defaults(func=_cmd)


def _positive(text: str) -> int:
    import argparse

    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= 10_000_000:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to 10,000,000, got {text!r}")
    return v
