"""PNG figures for the report (matplotlib, Agg backend, imported lazily).

- ``ksn_curve``: KS@N over N per model with the Wilson band (UnpredictaBench, table 3 as a plot);
- ``ksn_histograms``: one PNG per problem, one panel per model: the model's values (blue) against the ground-truth
  density (red), as in UnpredictaBench, figures 8-11; the truth is ``get_problem(id).truth()``;
- ``calibration_heatmaps``: per model, P(first option) by ordered option pair, its gap to the ideal, and the
  dominant reference behaviour with its rate (the numeric-calibration paper, figure 2); ``behaviour_bars``;
- ``implicit_bars``: predicted against true outcome probabilities for a few items (the implicit-reasoning paper, figure
  7);
- ``odds_shots``: MAE over the number of shots.
"""

from __future__ import annotations

import logging
import math
import re
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..metric_keys import per_n_key
from .records import SampleRecord, finite_or_none
from .summary import KSN_HEADLINE_N

__all__ = ["ksn_curve", "ksn_histograms", "calibration_heatmaps", "behaviour_bars", "implicit_bars", "odds_shots",
           "safe_name"]

log = logging.getLogger("ub_core.report")
DPI = 80
BLUE, RED, GREEN = "#3b6fb6", "#c8352d", "#3a9a4a"


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def _label(model: str, framework: str) -> str:
    return f"{model} [{framework}]"


def _save(fig, path: Path, tight: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=DPI)  # no bbox_inches="tight": it draws the figure twice
    _plt().close(fig)
    return path


@contextmanager
def _one_item(on_error: Callable[[str, BaseException], None] | None, what: str):
    """Draw one item's figure: with ``on_error``, a failure is reported to it (and the half-drawn figure closed)
    so the caller's loop goes on with the next item; without, the error propagates."""
    try:
        yield
    except Exception as e:  # noqa: BLE001 - one hostile item must not take the whole section with it
        _plt().close("all")
        if on_error is None:
            raise
        on_error(what, e)


# ------------------------------------------------------------------------------------------------ ksn

def ksn_curve(rows: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """``rows``: the ``ksn_curve`` table's points (model, framework, N, ks, ci_low, ci_high)."""
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    series: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        series[(r["model"], r["framework"])].append(r)
    for (model, fw), rs in series.items():
        rs = sorted(rs, key=lambda r: r["N"])
        n = [r["N"] for r in rs]
        line, = ax.plot(n, [100 * r["ks"] for r in rs], marker="o" if fw == "inspect" else "s", mfc="none",
                        ls="-" if fw == "inspect" else "--", label=_label(model, fw))
        ax.fill_between(n, [100 * r["ci_low"] for r in rs], [100 * r["ci_high"] for r in rs], alpha=0.08,
                        color=line.get_color())
    ax.set_xscale("log")
    ax.set_xticks(sorted({r["N"] for r in rows}))
    ax.get_xaxis().set_major_formatter(__import__("matplotlib").ticker.ScalarFormatter())
    ax.set_xlabel("N (samples per problem)")
    ax.set_ylabel("KS@N (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("KS@N: share of problems whose first N samples pass the KS test")
    return _save(fig, path)


def _is_discrete(support: str | None, values: np.ndarray, truth: np.ndarray | None) -> bool:
    if support in ("discrete", "categorical", "permutation"):
        return True
    if support == "continuous":
        return False
    pool = values if truth is None else np.concatenate([values, truth])
    return pool.size > 0 and bool(np.all(pool == np.round(pool))) and np.unique(pool).size <= 40


def _truth_for(problem_id: str) -> tuple[np.ndarray | None, str | None, tuple[str, ...]]:
    try:
        from ..problems import get_problem

        p = get_problem(problem_id)
        return np.asarray(p.truth(), dtype=float), getattr(p, "support", None), tuple(getattr(p, "options", ()) or ())
    except Exception as e:  # unknown id (an official-release problem), a sampler failure: plot without truth
        log.info("no ground truth for %s (%s)", problem_id, str(e).splitlines()[0] if str(e) else type(e).__name__)
        return None, None, ()


def _hist_panel(ax, values: np.ndarray, truth: np.ndarray | None, discrete: bool, labels: Sequence[str]) -> None:
    if discrete:
        pool = values if truth is None else np.concatenate([values, truth])
        support = np.unique(pool)
        if values.size:
            vals, counts = np.unique(values, return_counts=True)
            gap = np.min(np.diff(support)) if support.size > 1 else 1.0
            ax.bar(vals, counts / values.size, width=0.8 * gap, color=BLUE, alpha=0.75, label="model")
        if truth is not None:
            tv, tc = np.unique(truth, return_counts=True)
            ax.plot(tv, tc / truth.size, "o-", color=RED, ms=3, lw=1.2, label="truth")
        if labels and support.size <= 8 and np.all(support == np.round(support)):
            ax.set_xticks(support)
            ax.set_xticklabels([labels[int(v)][:10].replace("\n", "/") if 0 <= int(v) < len(labels) else f"{v:g}"
                                for v in support], fontsize=6, rotation=30)
        ax.set_ylabel("probability", fontsize=7)
        return
    if truth is not None:
        lo, hi = np.quantile(truth, [0.002, 0.998])
    else:
        lo, hi = (np.min(values), np.max(values)) if values.size else (0.0, 1.0)
    if values.size:  # widen to show collapsed or out-of-range model values, within reason
        span = max(hi - lo, 1e-9)
        lo = min(lo, max(np.min(values), lo - 2 * span))
        hi = max(hi, min(np.max(values), hi + 2 * span))
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, 31)
    if values.size:
        ax.hist(np.clip(values, lo, hi), bins=edges, density=True, color=BLUE, alpha=0.75, label="model")
    if truth is not None:
        fine = np.linspace(lo, hi, 81)
        dens, e = np.histogram(truth, bins=fine, density=True)
        ax.plot(0.5 * (e[1:] + e[:-1]), dens, color=RED, lw=1.4, label="truth")
    ax.set_ylabel("density", fontsize=7)


def ksn_histograms(records: Sequence[SampleRecord], out_dir: Path, max_problems: int | None = None,
                   on_error: Callable[[str, BaseException], None] | None = None) -> list[dict]:
    """One PNG per problem (``out_dir/hist/<id>.png``); returns gallery entries (id, family, category, models,
    file, note). With ``on_error``, a problem whose figure fails is reported to it and left out (the others are
    drawn); without, the error propagates."""
    plt = _plt()
    by_problem: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_problem[r.problem_id].append(r)
    entries = []
    # grouped by category, then family (UnpredictaBench figures 8 to 11 group by family)
    ids = sorted(by_problem, key=lambda i: (by_problem[i][0].category,
                                            str(by_problem[i][0].payload.get("family", "")), i))
    if max_problems is not None:
        ids = ids[:max_problems]
    for pid in ids:
        with _one_item(on_error, f"histogram for {pid}"):
            recs = by_problem[pid]
            # one panel per (model, framework); several epochs of one model are pooled
            panels: dict[tuple[str, str], list[float]] = defaultdict(list)
            for r in recs:
                finite = (finite_or_none(x) for x in r.payload.get("values", []))
                panels[(r.model, r.framework)].extend(v for v in finite if v is not None)
            truth, support, labels = _truth_for(pid)
            support = support or recs[0].payload.get("support")
            k = len(panels)
            cols = min(k, 4)
            rows = math.ceil(k / cols)
            fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.3 * rows), squeeze=False)
            for ax in axes.flat[k:]:
                ax.axis("off")
            for ax, ((model, fw), vals) in zip(axes.flat, panels.items()):
                values = np.asarray(vals, dtype=float)
                _hist_panel(ax, values, truth, _is_discrete(support, values, truth), labels)
                ks = [r.metric(per_n_key("ks", KSN_HEADLINE_N)) for r in recs if (r.model, r.framework) == (model, fw)]
                ks_txt = "" if not ks or ks[0] is None else f"  KS@{KSN_HEADLINE_N} {'pass' if ks[0] else 'fail'}"
                ax.set_title(f"{_label(model, fw)}\n{values.size} values{ks_txt}", fontsize=7)
                ax.tick_params(labelsize=6)
            if axes.flat[0].get_legend_handles_labels()[0]:  # a panel with nothing drawn has no legend
                axes.flat[0].legend(fontsize=6)
            fam = str(recs[0].payload.get("family", ""))
            fig.suptitle(f"{pid} ({fam}, {recs[0].category})", fontsize=8)
            # fixed margins: tight_layout costs a full extra draw per figure, and there can be 448 x models panels
            fig.subplots_adjust(left=0.08 / cols * 2, right=0.98, bottom=0.2 / rows, top=1 - 0.22 / rows,
                                wspace=0.35, hspace=0.75)
            rel = Path("hist") / f"{safe_name(pid)}.png"
            _save(fig, out_dir / rel, tight=False)
            entries.append({"id": pid, "family": fam, "category": recs[0].category, "file": rel.as_posix(),
                            "models": sorted({_label(m, f) for m, f in panels}),
                            "note": "" if truth is not None else "no ground truth for this id"})
    return entries


# ------------------------------------------------------------------------------------------------ calibration

def _predicted(payload: dict) -> list[float] | None:
    """The model's normalised distribution over the options: ``predicted``, else ``option_mass`` normalised."""
    for key, normalise in (("predicted", False), ("option_mass", True)):
        v = payload.get(key)
        if isinstance(v, (list, tuple)) and v and all(finite_or_none(x) is not None for x in v):
            arr = [float(x) for x in v]
            if normalise:
                s = sum(arr)
                if s <= 0:
                    return None
                arr = [x / s for x in arr]
            return arr
    return None


def calibration_heatmaps(records: Sequence[SampleRecord], out_dir: Path, max_options: int = 14,
                         on_error: Callable[[str, BaseException], None] | None = None) -> list[dict]:
    """Per model: three heatmaps over ordered option pairs (row = first option, column = second): the model's
    mean P(first option), its gap to the ideal mean P(first), and the dominant behaviour with its rate."""
    from .eval_families import BEHAVIOURS

    plt = _plt()
    out = []
    by_model: dict[tuple[str, str], list[SampleRecord]] = defaultdict(list)
    for r in records:
        opts = r.payload.get("options")
        if isinstance(opts, (list, tuple)) and len(opts) == 2 and _predicted(r.payload) is not None:
            by_model[(r.model, r.framework)].append(r)
    for (model, fw), recs in by_model.items():
        with _one_item(on_error, f"calibration heatmap for {_label(model, fw)}"):
            count: dict[str, int] = defaultdict(int)
            for r in recs:
                for o in r.payload["options"]:
                    count[str(o)] += 1
            names = sorted(count, key=lambda o: (-count[o], o))[:max_options]
            names.sort()
            idx = {o: i for i, o in enumerate(names)}
            n = len(names)
            cells: dict[tuple[int, int], list[SampleRecord]] = defaultdict(list)
            for r in recs:
                a, b = (str(o) for o in r.payload["options"])
                if a in idx and b in idx:
                    cells[(idx[a], idx[b])].append(r)
            model_p = np.full((n, n), np.nan)
            gap = np.full((n, n), np.nan)
            dom = np.full((n, n), np.nan)
            dom_rate = np.full((n, n), np.nan)
            behaviours = [b for b in BEHAVIOURS if any(f"behaviour_{b}" in r.metrics for r in recs)]
            for (i, j), cr in cells.items():
                pm = [_predicted(r.payload)[0] for r in cr]
                ideal = [float(r.payload.get("probabilities", [math.nan])[0]) for r in cr]
                model_p[i, j] = float(np.mean(pm))
                diffs = np.asarray(pm, dtype=float) - np.asarray(ideal, dtype=float)
                # a cell whose items lack P(first) or its ideal stays blank (NaN), without numpy's empty-slice warning
                gap[i, j] = float(np.nanmean(diffs)) if np.isfinite(diffs).any() else math.nan
                if behaviours:
                    rates = [np.nanmean([finite_or_none(r.metrics.get(f"behaviour_{b}")) if
                                         finite_or_none(r.metrics.get(f"behaviour_{b}")) is not None else np.nan
                                         for r in cr]) for b in behaviours]
                    if not all(np.isnan(rates)):
                        k = int(np.nanargmax(rates))
                        dom[i, j], dom_rate[i, j] = k, rates[k]
            panels = 3 if behaviours else 2
            size = max(3.2, 0.32 * n + 1.6)
            fig, axes = plt.subplots(1, panels, figsize=(size * panels, size))
            for ax, data, title, cmap, vmin, vmax in (
                    (axes[0], model_p, "model P(first option)", "viridis", 0, 1),
                    (axes[1], gap, "model - ideal P(first option)", "RdBu_r", -1, 1)):
                im = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax)
                fig.colorbar(im, ax=ax, fraction=0.046)
                ax.set_title(title, fontsize=8)
            if behaviours:
                ax = axes[2]
                cmap = plt.get_cmap("tab10", len(behaviours))
                ax.imshow(dom, cmap=cmap, vmin=-0.5, vmax=len(behaviours) - 0.5)
                for (i, j), v in np.ndenumerate(dom_rate):
                    if not np.isnan(v):
                        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=5, color="white")
                ax.set_title("dominant behaviour (rate)", fontsize=8)
                from matplotlib.patches import Patch

                ax.legend(handles=[Patch(color=cmap(k), label=b) for k, b in enumerate(behaviours)], fontsize=6,
                          bbox_to_anchor=(1.02, 1), loc="upper left")
            for ax in axes:
                ax.set_xticks(range(n))
                ax.set_yticks(range(n))
                ax.set_xticklabels(names, rotation=90, fontsize=6)
                ax.set_yticklabels(names, fontsize=6)
                ax.set_xlabel("second option", fontsize=7)
                ax.set_ylabel("first option", fontsize=7)
            fig.suptitle(f"{_label(model, fw)}: calibration by ordered option pair ({len(recs)} items)", fontsize=9)
            rel = Path("calibration") / f"heatmap_{safe_name(model)}_{safe_name(fw)}.png"
            _save(fig, out_dir / rel)
            out.append({"model": _label(model, fw), "file": rel.as_posix()})
    return out


def behaviour_bars(rows: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """``rows``: calibration leaderboard rows; one group of bars per behaviour, one bar per model."""
    keys = sorted({k for r in rows for k in r if k.startswith("behaviour_") and r[k] is not None},
                  key=lambda k: k)
    if not keys:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(keys)), 3.2))
    width = 0.8 / max(1, len(rows))
    x = np.arange(len(keys))
    for i, r in enumerate(rows):
        ax.bar(x + i * width, [r.get(k) or 0.0 for k in keys], width, label=_label(r["model"], r["framework"]))
    ax.set_xticks(x + 0.4 - width / 2)
    ax.set_xticklabels([k[len("behaviour_"):] for k in keys], fontsize=7, rotation=20)
    ax.set_ylabel("rate")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title("Reference behaviour rates", fontsize=9)
    return _save(fig, path)


# ------------------------------------------------------------------------------------------------ implicit

def implicit_bars(records: Sequence[SampleRecord], out_dir: Path, max_items: int = 6,
                  on_error: Callable[[str, BaseException], None] | None = None) -> list[dict]:
    """Bar charts of predicted vs true outcome probabilities: per category, the item where the first model is
    furthest from the truth (largest Chebyshev distance), up to ``max_items``."""
    plt = _plt()
    usable = [r for r in records if _predicted(r.payload) is not None and isinstance(r.payload.get("options"), list)]
    if not usable:
        return []
    first = (usable[0].model, usable[0].framework)
    picks: list[str] = []
    for cat in sorted({r.category for r in usable}):
        cands = [r for r in usable if r.category == cat and (r.model, r.framework) == first]
        if cands:
            worst = max(cands, key=lambda r: (r.metric("chebyshev") or 0.0))
            picks.append(worst.problem_id)
    out = []
    for pid in picks[:max_items]:
        with _one_item(on_error, f"implicit bars for {pid}"):
            recs = [r for r in usable if r.problem_id == pid]
            opts = [str(o) for o in recs[0].payload["options"]]
            truth = [float(p) for p in recs[0].payload.get("probabilities", [])]
            k = 1 + len(recs)
            width = 0.8 / k
            x = np.arange(len(opts))
            fig, ax = plt.subplots(figsize=(max(4.0, 0.45 * len(opts) * k / 2 + 2.5), 2.8))
            if len(truth) == len(opts):
                ax.bar(x, truth, width, color=GREEN, label="truth")
            for i, r in enumerate(recs, 1):
                pred = _predicted(r.payload)
                if len(pred) == len(opts):
                    ax.bar(x + i * width, pred, width, label=_label(r.model, r.framework),
                           color=plt.get_cmap("Blues")(0.45 + 0.5 * i / k))
            ax.set_xticks(x + 0.4 - width / 2)
            ax.set_xticklabels(opts, fontsize=7)
            ax.set_ylabel("probability", fontsize=8)
            ax.legend(fontsize=6)
            prompt = str(recs[0].payload.get("prompt", ""))
            ax.set_title(f"{pid} ({recs[0].category})\n...{prompt[-90:]}", fontsize=7)
            rel = Path("implicit") / f"{safe_name(pid)}.png"
            _save(fig, out_dir / rel)
            out.append({"id": pid, "category": recs[0].category, "file": rel.as_posix()})
    return out


def ksn_logprob_bars(records: Sequence[SampleRecord], out_dir: Path, max_items: int = 7,
                     on_error: Callable[[str, BaseException], None] | None = None) -> list[dict]:
    """The model's answer distribution q against the truth p, over the scored scalar (candidates that share a
    value, e.g. the orders of a shuffle with one Lehmer Z1, pooled): per category, the problem where the first
    model is furthest from the truth (largest ``ks_distance``), up to ``max_items``."""
    plt = _plt()

    def usable(r):
        pl = r.payload
        return isinstance(pl.get("q"), list) and isinstance(pl.get("p"), list) and isinstance(pl.get("values"), list) \
            and len(pl["q"]) == len(pl["p"]) == len(pl["values"]) > 0

    recs_all = [r for r in records if usable(r)]
    if not recs_all:
        return []
    first = (recs_all[0].model, recs_all[0].framework)
    picks = []
    for cat in sorted({r.category for r in recs_all}):
        cands = [r for r in recs_all if r.category == cat and (r.model, r.framework) == first]
        if cands:
            picks.append(max(cands, key=lambda r: (r.metric("ks_distance") or 0.0)).problem_id)
    out = []
    for pid in picks[:max_items]:
        with _one_item(on_error, f"answer distribution for {pid}"):
            recs = [r for r in recs_all if r.problem_id == pid]
            vals = np.asarray(recs[0].payload["values"], dtype=float)
            xs = np.unique(vals)

            def pooled(mass, vals=vals, xs=xs):
                m = np.asarray(mass, dtype=float)
                return np.array([m[vals == x].sum() for x in xs])

            k = 1 + len(recs)
            width = 0.8 / k
            x = np.arange(xs.size)
            fig, ax = plt.subplots(figsize=(max(4.0, 0.3 * xs.size * k / 2 + 2.5), 2.8))
            ax.bar(x, pooled(recs[0].payload["p"]), width, color=GREEN, label="truth")
            for i, r in enumerate(recs, 1):
                ax.bar(x + i * width, pooled(r.payload["q"]), width, label=_label(r.model, r.framework),
                       color=plt.get_cmap("Blues")(0.45 + 0.5 * i / k))
            step = max(1, xs.size // 20)
            ax.set_xticks((x + 0.4 - width / 2)[::step])
            ax.set_xticklabels([f"{v:g}" for v in xs[::step]], fontsize=7)
            ax.set_ylabel("probability", fontsize=8)
            ax.legend(fontsize=6)
            ks = recs[0].metric("ks_distance")
            ax.set_title(f"{pid} ({recs[0].category}): KS distance {ks if ks is not None else float('nan'):.3f}",
                         fontsize=7)
            rel = Path("ksn_logprob") / f"{safe_name(pid)}.png"
            _save(fig, out_dir / rel)
            out.append({"id": pid, "category": recs[0].category, "file": rel.as_posix()})
    return out


# ------------------------------------------------------------------------------------------------ odds

def odds_shots(rows: Sequence[dict[str, Any]], path: Path) -> Path | None:
    """``rows``: the ``odds_by_shots`` table; MAE over shots, one line per (model, task)."""
    series: dict[tuple, list] = defaultdict(list)
    for r in rows:
        if isinstance(r.get("shots"), int) and r.get("mae") is not None:
            series[(r["model"], r["framework"], r["task"])].append((r["shots"], r["mae"]))
    if not series:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    for (model, fw, task), pts in series.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{_label(model, fw)} {task}")
    ax.set_xlabel("shots")
    ax.set_ylabel("MAE")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("What are the odds: MAE by number of shots", fontsize=9)
    return _save(fig, path)
