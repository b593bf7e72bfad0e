"""Assemble the report: read inputs, build tables, draw figures, render ``index.html`` (jinja2) and the summaries."""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..terminal import html_finalize
from .eval_families import EVAL_FAMILIES, section_title
from .readers import load_inputs
from .records import SampleTable
from .summary import Table, build_tables, write_summary

__all__ = ["build_report", "ReportResult", "render_html", "overview", "OVERVIEW_MAX_COLUMNS"]

_TITLES = {f.name: f.title for f in EVAL_FAMILIES}


@dataclass
class ReportResult:
    out_dir: Path
    index: Path
    table: SampleTable
    tables: dict[str, list[Table]]
    figures: list[Path] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        return len(self.table.skips)


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if not math.isfinite(v):
            return ""
        return f"{v:.3f}" if abs(v) < 1000 else f"{v:.4g}"
    return str(v)


class _Guarded:
    """Calls into :mod:`.figures`; a figure that fails on hostile data becomes a counted skip, not a crash."""

    _PER_ITEM = ("ksn_histograms", "calibration_heatmaps", "implicit_bars", "ksn_logprob_bars")

    def __init__(self, table: SampleTable):
        from . import figures

        self._figures = figures
        self._table = table

    def __getattr__(self, name):
        fn = getattr(self._figures, name)

        def skip(what: str, e: BaseException) -> None:
            first = str(e).splitlines()[0] if str(e) else ""
            self._table.add_skip(what, f"not drawn ({type(e).__name__}: {first})")

        def call(*args, **kwargs):
            if name in self._PER_ITEM:  # one bad item is one skip; the rest of the section is drawn
                kwargs.setdefault("on_error", skip)
            try:
                return fn(*args, **kwargs)
            except ImportError:  # matplotlib missing is an installation error, not a bad figure
                raise
            except Exception as e:  # noqa: BLE001 (model output is hostile input; the page must still be written)
                skip(f"figure {name}", e)
                return [] if name in self._PER_ITEM else None
        return call


def _figures(tables: dict[str, list[Table]], table: SampleTable, out: Path, max_histograms: int | None):
    F = _Guarded(table)

    by_family: dict[str, list[dict]] = {}
    gallery: list[dict] = []
    files: list[Path] = []

    def add(fam, kind, path, caption):
        if path is not None:
            files.append(path)
            by_family.setdefault(fam, []).append({"kind": kind, "file": path.relative_to(out).as_posix(),
                                                  "caption": caption})

    if "ksn" in tables:
        curve = next(t for t in tables["ksn"] if t.name == "ksn_curve")
        add("ksn", "ksn-curve", F.ksn_curve(curve.points, out / "ksn_curve.png"),
            "KS@N over N (95% Wilson band) for each model")
        gallery = F.ksn_histograms(table.of_eval_family("ksn"), out, max_problems=max_histograms)
        files += [out / g["file"] for g in gallery]
    if "ksn_logprob" in tables:
        for b in F.ksn_logprob_bars(table.of_eval_family("ksn_logprob"), out):
            add("ksn_logprob", "ksn-logprob-bars", out / b["file"],
                f"{b['id']} ({b['category']}): the model's answer distribution q vs the truth")
    if "calibration" in tables:
        for h in F.calibration_heatmaps(table.of_eval_family("calibration"), out):
            add("calibration", "calibration-heatmap", out / h["file"],
                f"{h['model']}: P(first option) by ordered option pair, gap to the ideal, dominant behaviour")
        lead = next(t for t in tables["calibration"] if t.name == "calibration_leaderboard")
        add("calibration", "behaviour-bars", F.behaviour_bars(lead.rows, out / "calibration" / "behaviours.png"),
            "Reference behaviour rates per model")
    if "implicit" in tables:
        for b in F.implicit_bars(table.of_eval_family("implicit"), out):
            add("implicit", "implicit-bars", out / b["file"],
                f"{b['id']} ({b['category']}): predicted vs true outcome probabilities")
    if "odds" in tables:
        shots = next(t for t in tables["odds"] if t.name == "odds_by_shots")
        add("odds", "odds-shots", F.odds_shots(shots.rows, out / "odds_shots.png"), "MAE over the number of shots")
    return by_family, gallery, files


def _breakable(text: Any):
    """A column name that may wrap after ``_`` and ``@`` (escaped, with ``<wbr>``): ``ks@100 code_explicit``."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"([_@])", r"\1<wbr>", str(escape(text))))


def _kv(d: Any) -> str:
    """``k=v, k=v`` for a provenance mapping (task arguments, generation settings)."""
    return ", ".join(f"{k}={v}" for k, v in d.items()) if isinstance(d, dict) else ("" if d is None else str(d))


def _provenance_line(p: dict[str, Any]) -> str:
    """One line naming a row's runs: source(s), date, limit and samples (the row's hover text)."""
    parts = []
    for key in ("source", "date", "limit", "samples", "samples_total", "task_version", "dataset"):
        v = p.get(key)
        if v not in (None, "", []):
            parts.append(f"{key}: {v}")
    return "; ".join(parts)


#: the most columns an overview table has (model, framework, up to two more keys, headline, interval, complete):
#: the first screen fits a 1400-px window whatever the inputs
OVERVIEW_MAX_COLUMNS = 7

#: a family's headline column where its tables name it otherwise than :data:`ub_core.metric_spec.HEADLINES`
#: (odds: the question items' MAE; its sampling items' mean KS statistic where a row has no MAE)
_HEADLINE_COLUMNS = {"odds": ("mae", "ks_stat")}


def _interval(row: dict[str, Any], key: str, columns: list[str], first: str | None) -> str:
    """A headline's interval as printed: ``[low, high]`` (its own or the table's ``ci_low`` / ``ci_high``), or
    ``± se``; empty where the table has none."""
    for lo, hi in ((f"{key}_ci_low", f"{key}_ci_high"), ("ci_low", "ci_high") if key == first else (None, None)):
        if lo in columns and row.get(lo) is not None and row.get(hi) is not None:
            return f"[{_fmt(row.get(lo))}, {_fmt(row.get(hi))}]"
    se = row.get(f"{key}_se")
    return f"± {_fmt(se)}" if isinstance(se, (int, float)) and math.isfinite(se) else ""


def overview(tables: dict[str, list[Table]]) -> list[dict[str, Any]]:
    """The report's first screen: per family, one compact leaderboard (model, framework, the keys that tell its rows
    apart, the headline with its interval, complete) from the family's per-model table (its first table where it
    has none), in the family table's order (complete runs first, each group ranked)."""
    from ..metric_spec import HEADLINES

    out = []
    for fam, ts in tables.items():
        ranked = [t for t in ts if "model" in t.keys and "framework" in t.keys]
        if not ranked:
            continue
        t = next((t for t in ranked if set(t.keys) == {"model", "framework"}), ranked[0])
        extra = [k for k in t.keys if k not in ("model", "framework")]
        source_rows = t.rows
        for k in list(extra):  # a key with an "all" row per model (every category pooled): that row alone
            if any(r.get(k) == "all" for r in source_rows):
                source_rows = [r for r in source_rows if r.get(k) == "all"]
                extra.remove(k)
        extra = extra[:OVERVIEW_MAX_COLUMNS - 5]
        value_cols = [c for c in t.columns if c not in t.keys and c != "complete"]
        wanted = _HEADLINE_COLUMNS.get(fam, (HEADLINES.get(fam),))
        heads = [c for c in wanted if c in t.columns] or value_cols[:1]
        if not heads:
            continue
        first_value = next((c for c in value_cols if c not in ("problems", "items", "questions")), None)
        rows = []
        for r in source_rows:
            key = next((h for h in heads if r.get(h) is not None), heads[0])
            rows.append({"cells": [r.get("model"), r.get("framework"), *(r.get(k) for k in extra)],
                         "headline": r.get(key), "interval": _interval(r, key, t.columns, first_value),
                         "complete": r.get("complete"), "published": bool(r.get("published")),
                         "provenance": r.get("provenance")})
        out.append({"family": fam, "title": _TITLES.get(fam, fam), "table": t.name,
                    "columns": ["model", "framework", *extra, " / ".join(heads), "95% interval", "complete"],
                    "rows": rows})
    return out


def render_html(context: dict[str, Any]) -> str:
    try:
        import jinja2
    except ImportError:
        raise ImportError("ub report needs jinja2 and matplotlib (pip install 'unpredictabench[report]')") from None
    env = jinja2.Environment(loader=jinja2.PackageLoader("ub_core.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined,
                             finalize=html_finalize)
    env.filters["fmt"] = _fmt
    env.filters["kv"] = _kv
    env.filters["breakable"] = _breakable
    env.filters["provenance_line"] = _provenance_line
    return env.get_template("index.html.j2").render(**context)


#: the families whose paper's published results ``build_report(published=...)`` can read
PUBLISHED_FAMILIES = ("dice",)


def _published_release(published: dict[str, str | Path] | None):
    if not published:
        return None
    unknown = sorted(set(published) - set(PUBLISHED_FAMILIES))
    if unknown:
        raise ValueError(f"--published {unknown[0]}=...: no published results for that family (known: "
                         f"{', '.join(PUBLISHED_FAMILIES)})")
    from .dice import PublishedRelease

    return PublishedRelease(published["dice"])


def build_report(paths: Iterable[str | Path], out_dir: str | Path, *, title: str = "UnpredictaBench report",
                 max_histograms: int | None = None, model_aliases: dict[str, str] | None = None,
                 published: dict[str, str | Path] | None = None) -> ReportResult:
    """Read ``paths`` (files or folders, any mix of Inspect logs and lm-eval output), write ``out_dir/index.html``
    with its PNG figures, ``summary.csv``, ``summary.json``, ``summary.md`` and ``tables/*.csv``.

    Unusable inputs are counted in ``result.table.skips`` (and listed in the page and the summaries); raises
    ValueError only when no input held any usable data. ``model_aliases`` (``{name: report name}``) folds names
    of one model (the offline models' names are folded by default: :func:`~ub_core.report.records.model_alias`).
    ``published`` (``{"dice": release folder}``): a paper's published models as reference rows beside the runs of
    their setting (:mod:`ub_core.report.dice`); an unknown family or a folder that is no release is a one-line
    ValueError.
    """
    out = Path(out_dir)
    release = _published_release(published)
    table = load_inputs(paths, exclude=out, model_aliases=model_aliases)
    if not table.records and not table.aggregates:
        reasons = "; ".join(str(s) for s in table.skips[:3]) or "no inputs"
        raise ValueError(f"no usable data in the inputs ({len(table.skips)} skipped: {reasons})")
    out.mkdir(parents=True, exist_ok=True)
    tables = build_tables(table, release)
    used = {r.source for r in table.records} | set(table.aggregate_sources.values())  # superseded runs left out
    figs, gallery, files = _figures(tables, table, out, max_histograms)
    info = {"records": len(table.records), "files": sorted(set(table.files_read)),
            "skipped": [str(s) for s in table.skips],  # after the figures: one that failed is listed too
            "notes": list(table.notes),
            "models": [f"{m} [{f}]" for m, f in table.models()],
            "generated": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "runs": [table.runs[s].to_json() for s in sorted(used) if s in table.runs]}
    write_summary(tables, out, info)
    sections = [{"name": fam, "title": _TITLES.get(fam) or section_title(fam), "tables": ts,
                 "figures": figs.get(fam, [])}
                for fam, ts in tables.items()]
    html = render_html({"title": title, "info": info, "sections": sections, "overview": overview(tables),
                        "gallery": gallery,
                        "gallery_categories": sorted({g["category"] for g in gallery}),
                        "gallery_families": sorted({g["family"] for g in gallery if g["family"]})})
    index = out / "index.html"
    index.write_text(html, encoding="utf-8")
    return ReportResult(out, index, table, tables, files)
