"""``ub compare``'s reading: two runs from files (Inspect logs, lm-eval output, any mix), compared problem by problem
(:func:`ub_core.compare.compare_tables`). Reading belongs to the report; the comparison's statistics are pure
(:mod:`ub_core.metrics.paired`), so nothing of ub_core imports the report back (no import circle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..compare import CompareError, Comparison, compare_records, compare_tables
from .readers import load_inputs

__all__ = ["compare_runs", "compare_published"]


def _read(paths, name: str):
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    table = load_inputs(paths)
    if not table.records:
        reasons = "; ".join(str(s) for s in table.skips[:2]) or "nothing read"
        raise CompareError(f"{name}: no scored samples in {', '.join(map(str, paths))} ({reasons})")
    return table


def compare_runs(a: str | Path | Sequence[str | Path], b: str | Path | Sequence[str | Path],
                 metrics: Sequence[str] | None = None, alpha: float = 0.05,
                 power: float = 0.8) -> tuple[list[Comparison], list[str]]:
    """Read the runs at ``a`` and ``b`` (files or folders: Inspect logs, lm-eval output) and compare them
    (:func:`ub_core.compare.compare_tables`, at level ``alpha``, the MDE at ``power``). Returns the comparisons and
    the inputs each side skipped (one line each)."""
    ta, tb = _read(a, "A"), _read(b, "B")
    skipped = [f"A: {s}" for s in ta.skips] + [f"B: {s}" for s in tb.skips]
    return compare_tables(ta, tb, metrics, alpha=alpha, power=power), skipped


def compare_published(a: str | Path | Sequence[str | Path], release: str | Path, model: str,
                      metrics: Sequence[str] | None = None, alpha: float = 0.05,
                      power: float = 0.8) -> tuple[list[Comparison], list[str]]:
    """A lab's dice run (``a``) against one published model of the "Bad Dice Players" release (``release``, its
    paper name, e.g. ``GPT-4o``), law by law: the model's rows are scored from the release's raw draws in the
    run's convention, alpha and seed (:mod:`ub_core.report.dice`) and paired with the run's by law
    (:func:`ub_core.compare.compare_records`: exact McNemar for the pass/fail headline). :class:`CompareError`
    (one line) when the run holds no dice records, more than one model or setting, a setting the release does
    not share, or when the model is not in the release."""
    from .dice import PublishedRelease, placement_problem, published_records, run_setting

    try:
        pub = PublishedRelease(release)
    except ValueError as e:
        raise CompareError(str(e)) from None
    ta = _read(a, "A")
    recs = ta.of_eval_family("dice")
    if not recs:
        raise CompareError(f"A: no dice run in {a if isinstance(a, (str, Path)) else ', '.join(map(str, a))} "
                           f"(families: {', '.join(ta.eval_families()) or 'none'})")
    models = sorted({(r.model, r.framework) for r in recs})
    if len(models) > 1:
        raise CompareError(f"A holds {len(models)} dice models or configurations "
                           f"({', '.join(f'{m} [{f}]' for m, f in models)}); give one run per side")
    setting = run_setting(recs, ta)
    why = placement_problem(setting)
    if why is not None:
        raise CompareError(f"A cannot be compared with the release: {why}")
    known = pub.models(setting)
    match = next((m for m in known if m.lower() == str(model).strip().lower()), None)
    if match is None:
        raise CompareError(f"--model {model!r} is not in the release's {setting.protocol} table; known: "
                           f"{', '.join(known)}")
    rb = published_records(pub, setting, match)
    keys = list(metrics) if metrics else ["passed"]
    out = [compare_records("dice", key, recs, rb, "A", "B", alpha, power) for key in keys]
    skipped = [f"A: {s}" for s in ta.skips]
    note = pub.gap_note(setting)
    return out, skipped + ([f"B: {note}"] if note else [])
