"""Scoring recorded answers against the ground truth: per problem, then per category and overall.

This is the one place where parsed values meet the metrics; the Inspect scorer, the lm-eval hooks and
``ub score`` all call :func:`score_values` / :func:`score_outputs` and :func:`aggregate`.

Per-problem result (a flat dict, ready to be an Inspect dict ``Score`` value or an lm-eval doc result): one key per
``score`` entry of the KS@N metric spec (:data:`ub_core.metric_spec.KSN_METRICS`, per-N ones at the run's Ns), plus
``short@N``. The built-in ones, computed here:

- ``ks@N``: 1.0 when the first N valid values are not rejected (p >= threshold), else 0.0 (also when short);
- ``p@N``: the p-value (``None`` when short); ``short@N``: fewer than N valid values;
- ``wdz``, ``w1_debiased``: Wasserstein z-score and debiased W1 of all valid values vs. the truth (UnpredictaBench,
  C.2); ``wdz`` is None when the permutation null has no spread (:func:`ub_core.metrics.wdz` gives NaN there, never
  +/-inf; None keeps ``ub score --json`` strict JSON), as it is with no valid value;
- ``wdz_undefined``: True in the first case (there are valid values but no z-score);
- ``jsd``: Jensen-Shannon divergence (C.3), finite also for a constant sample (a point mass on the grid);
- ``constant``: the valid values used for WDZ/JSD are all equal (a collapsed sample; one value counts). The
  released notebooks get NaN for the JSD of such a sample and drop it from their means; we keep the finite value
  (dropping collapsed problems flatters collapsing models) and count them, so either convention can be computed;
- ``n_valid``, ``n_failed``: parsed values kept, replies that failed to parse or were out of support.

A plug-in's metrics (scoped to its bank or distribution family, :mod:`ub_core.metric_spec`) are computed for the
problems of their scope only; its run metrics (:mod:`ub_core.run_metrics`) get one record per problem
(:func:`run_records`), and ``ub score`` reports them over the run's problems of their scope.
"""

from __future__ import annotations

import sys
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import metrics
from . import untrusted
from .metric_spec import MetricSpec, direction, per_n_key, run_specs
from .problems import Problem, UnknownProblemError, get_problem
from .run_metrics import RUN_RECORDS, bank_families, run_metrics_for

__all__ = ["DEFAULT_NS", "score_values", "score_outputs", "parse_outputs", "aggregate", "format_table",
           "ScoreRun", "score_jsonl"]

DEFAULT_NS = metrics.DEFAULT_NS  # one definition: ub_core.metrics.inputs


def parse_outputs(problem: Problem, outputs: Iterable[Any]) -> tuple[list[float], list[str]]:
    """Parse raw replies; returns (valid scored values in order, failure reasons)."""
    values, failures = [], []
    seen: dict[str, Any] = {}  # collapsed models repeat themselves: parse each distinct reply once
    for text in outputs:
        if isinstance(text, str):
            res = seen.get(text)
            if res is None:
                res = seen[text] = problem.parse(text)
        else:
            res = problem.parse(text)
        if res.ok:
            values.append(float(res.value))
        else:
            failures.append(res.error or "unparseable")
    return values, failures


def score_values(problem: Problem, values: Sequence[float], *, ns: Sequence[int] = DEFAULT_NS,
                 threshold: float = 1e-4, method: str = "paper", truth: np.ndarray | None = None,
                 truth_size: int = 10_000, truth_seed: int = 0, wdz_resamples: int = 999, seed: int = 0,
                 n_failed: int = 0) -> dict:
    """Score already-validated scalar values of one problem (see the module docstring for the keys): every
    ``score`` entry of the KS@N metric spec (:func:`ub_core.metric_spec.run_specs`), those with a ``compute``
    function by calling it on the values used and the truth draws. A spec key left without a value is a
    RuntimeError naming it (an adapter would otherwise drop it silently)."""
    ns = tuple(sorted({int(n) for n in ns}))
    if truth is None:
        truth = problem.truth(size=truth_size, seed=truth_seed)
    vals = np.asarray(values, dtype=float)
    truth_sorted = np.sort(truth)  # once: KS at every N and WDZ take it as it is (JSD and a spec's compute get truth)
    ks = metrics.ks_at_n(vals, truth_sorted, ns=ns, threshold=threshold, method=method, support=problem.support)
    out: dict[str, Any] = {}
    for n in ns:
        r = ks[n]
        out[per_n_key("ks", n)] = 1.0 if r["pass"] else 0.0
        out[per_n_key("p", n)] = r["pvalue"]
        out[per_n_key("short", n)] = bool(r["short"])
    # every metric that is not per N reads all valid values: the Ns asked for (-T ks_ns) choose the KS@N tests only
    used = vals
    if used.size >= 1:
        w = metrics.wdz(used, truth_sorted, resamples=wdz_resamples, seed=seed)
        z = float(w["z"])
        out["wdz"] = None if math.isnan(z) else z
        out["w1_debiased"] = float(w["w1_debiased"])
        out["jsd"] = float(metrics.jsd(used, truth))
        out["wdz_undefined"] = bool(math.isnan(z))
        out["constant"] = bool(np.all(used == used[0]))
    else:
        out["wdz"] = out["w1_debiased"] = out["jsd"] = None
        out["wdz_undefined"] = out["constant"] = False
    out["n_valid"] = int(vals.size)
    out["n_failed"] = int(n_failed)
    bank = getattr(problem, "bank", None)
    for key, spec in run_specs("ksn", ns, source="score", bank=bank, families=bank_families(bank)):
        if spec.family is not None and spec.family != problem.family:
            out[key] = spec.missing_value  # a family's metric, on a problem of another family of the same bank
        elif spec.compute is not None:
            out[key] = _computed(spec, vals, used, truth, threshold, method, problem)
        elif key not in out:
            raise RuntimeError(f"KS@N metric {key!r} is in the spec but has no value: give its MetricSpec a "
                               f"compute function")
    return out


def _computed(spec: MetricSpec, vals: np.ndarray, used: np.ndarray, truth: np.ndarray, threshold: float,
              method: str, problem: Problem | None = None) -> float | None:
    """A spec entry's value from its ``compute``: a per-N one on the first N valid values, with N, the threshold and
    the method, another on the values used; the spec's ``missing_value`` (a rate's fail) where the values it needs
    are not there (fewer than N; none) or it returns None, NaN or +/-inf."""
    extra = {"problem": problem} if spec.takes_problem() else {}
    if spec.per_n:
        value = spec.compute(vals[: spec.n], truth, n=spec.n, threshold=threshold, method=method, **extra) \
            if vals.size >= spec.n else None
    else:
        value = spec.compute(used, truth, **extra) if used.size else None
    value = None if value is None or not math.isfinite(float(value)) else float(value)
    if value is None:
        return spec.missing_value
    lo, hi = spec.bounds or (-math.inf, math.inf)
    if not lo <= value <= hi:
        raise ValueError(f"{spec.key}: its compute gave {value!r}, outside its bounds [{lo}, {hi}]")
    return value


def run_records(problem: Problem, row: Mapping) -> dict[str, dict[str, float]]:
    """``{run metric name: this problem's record}`` for every run metric of the problem's bank (and family)
    (:mod:`ub_core.run_metrics`); empty for a built-in bank."""
    bank = getattr(problem, "bank", None)
    return {rm.name: rm.record_of(problem, row) for rm in run_metrics_for(bank)
            if rm.family is None or rm.family == problem.family}


def score_outputs(problem: Problem, outputs: Iterable[Any], **kw) -> dict:
    """Parse raw replies and score them; failure reasons are returned under ``failures``."""
    values, failures = parse_outputs(problem, outputs)
    out = score_values(problem, values, n_failed=len(failures), **kw)
    out["failures"] = failures
    return out


# ------------------------------------------------------------------------------------------------ aggregation

def _finite_or_none(v: Any) -> float | None:
    """A finite float, or None (missing, NaN, +/-inf, not a number): what a mean may take."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _flag(row: Mapping, key: str) -> bool:
    """The row's 0/1 flag ``key``; for rows without ``wdz_undefined`` (older logs), a WDZ that is NaN or +/-inf."""
    flag = row.get(key)
    if flag is None and key == "wdz_undefined":
        v = row.get("wdz")
        return v is not None and _finite_or_none(v) is None
    return bool(flag)


#: ``ub score``'s names of the counted flags where they differ from the spec key (public since its first release)
_COUNT_NAMES = {"constant": "n_constant"}


def summary_name(spec_key: str) -> str:
    """The aggregate's name of a spec key (``constant`` is counted as ``n_constant``)."""
    return _COUNT_NAMES.get(spec_key, spec_key)


def _summary_of(spec: MetricSpec, key: str, rows: list[dict]) -> Any:
    """One metric over a group's rows, by its kind: a rate's mean over every problem (an undefined value is its
    ``missing_value``) with a Wilson interval where the values are 0/1 verdicts; a flag's count of problems; a
    count's sum; a score's (or a diagnostic's) mean over the problems where it is finite, with a bootstrap
    interval, ``dropped`` counting the others."""
    if spec.kind == "flag":
        return int(sum(_flag(r, key) for r in rows))
    if spec.kind == "count":
        return int(sum(int(r.get(key) or 0) for r in rows))
    values = [r.get(key) for r in rows]
    if spec.kind == "rate" and spec.missing_value is not None:
        values = [spec.missing_value if _finite_or_none(v) is None else v for v in values]
    if spec.kind == "rate" and all(_finite_or_none(v) in (None, 0.0, 1.0) for v in values):
        return metrics.summarize_rate(values)
    return metrics.summarize_values(values)  # never takes a NaN or +/-inf: those rows are ``dropped``


def _group_summary(rows: list[dict], ns: Sequence[int]) -> dict:
    """One group's summary, one entry per metric ``ub score`` reports (the spec's ``ub`` adapter), in spec order
    (:func:`_summary_of`); ``short@N``, the problems with fewer than N valid values (a fail of every per-N rate);
    then the share of failed replies."""
    summary: dict[str, Any] = {"n_problems": len(rows)}
    for key, spec in _ub_specs(ns, _banks(rows)):
        summary[summary_name(key)] = _summary_of(spec, key, rows)
    for bank in _banks(rows):
        for rm in run_metrics_for(bank):
            records = [r[RUN_RECORDS][rm.name] for r in rows if rm.name in (r.get(RUN_RECORDS) or {})]
            if records:
                summary.update(rm.evaluate(records))
    for n in sorted({int(n) for n in ns}):
        summary[per_n_key("short", n)] = int(sum(bool(r.get(per_n_key("short", n))) for r in rows))
    valid, failed = summary.get("n_valid", 0), summary.get("n_failed", 0)
    summary["parse_failure_rate"] = failed / (valid + failed) if valid + failed else 0.0
    return summary


def _banks(rows: Sequence[Mapping]) -> tuple[str, ...]:
    return tuple(sorted({str(r["bank"]) for r in rows if isinstance(r.get("bank"), str)}))


def _ub_specs(ns: Sequence[int], banks: Sequence[str] = ()) -> list[tuple[str, MetricSpec]]:
    """The metrics ``ub score`` reports for rows of ``banks``: every unscoped one, and each bank's own."""
    out = dict(run_specs("ksn", ns, adapter="ub", source="score"))
    for bank in banks:
        for key, spec in run_specs("ksn", ns, adapter="ub", source="score", bank=bank, families=bank_families(bank)):
            out.setdefault(key, spec)
    return list(out.items())


def describe_metrics(ns: Sequence[int] = DEFAULT_NS, banks: Sequence[str] = ()) -> dict[str, dict]:
    """What each aggregate entry is, for dashboards (``ub score --json``'s ``metrics``): its display name, the
    aggregation, and the direction (``higher_is_better``: true, false, or null for a two-sided metric); with
    ``banks``, their own metrics and run metrics too."""
    out = {summary_name(key): {"display": spec.display,
                               "kind": spec.kind,
                               "aggregation": "sum" if spec.kind == "count" else spec.aggregation,
                               "higher_is_better": direction(spec)}
           for key, spec in _ub_specs(ns, banks)}
    for bank in banks:
        for rm in run_metrics_for(bank):
            out[rm.name] = {"display": rm.display, "kind": "run", "aggregation": "run",
                            "higher_is_better": rm.higher_is_better}
    return out


def aggregate(rows: Sequence[Mapping], ns: Sequence[int] = DEFAULT_NS) -> dict:
    """Overall and per-category summaries (:func:`_group_summary`): KS@N rates with Wilson intervals, WDZ/JSD
    means with bootstrap intervals, counts. Each row needs ``category`` plus the keys of :func:`score_values`.

    WDZ/JSD means are over the problems where the value is finite; ``wdz_undefined`` counts the problems with
    valid values but no z-score (zero null spread; an infinite WDZ of an older log counts too), and
    ``n_constant`` the problems whose sample is constant (a collapsed model; their finite JSD is in the mean; the
    released notebooks' convention drops them)."""
    rows = list(rows)
    by_cat: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_cat[r.get("category", "all")].append(r)
    return {"overall": _group_summary(rows, ns),
            "by_category": {c: _group_summary(v, ns) for c, v in sorted(by_cat.items())}, "banks": list(_banks(rows))}


def _cell(spec: MetricSpec, key: str, entry: Any) -> str:
    if isinstance(entry, Mapping):  # a rate (percent) or a mean
        m = entry.get("mean")
        if m is None or not math.isfinite(m):
            return "-"
        return f"{100 * m:.1f}" if spec.kind == "rate" else f"{m:.3f}"
    return str(entry)


def format_table(agg: Mapping, ns: Sequence[int] = DEFAULT_NS) -> str:
    """A plain-text table: one row per category and one for all problems, one column per metric of the spec that
    ``ub score`` reports (its ``column`` heading): KS@N in percent, means to three places, counts. ``WDZ?`` is the
    number of problems whose WDZ is undefined (left out of the WDZ mean), ``const`` the number with a constant
    sample."""
    columns = [(summary_name(key), spec, key) for key, spec in _ub_specs(ns, agg.get("banks") or ())]
    head = ["category", "n"] + [spec.heading for _, spec, _ in columns]
    lines = [[name, str(s["n_problems"])] + [_cell(spec, key, s.get(name, "-")) for name, spec, key in columns]
             for name, s in (*agg["by_category"].items(), ("ALL", agg["overall"]))]
    widths = [max(len(head[i]), *(len(line[i]) for line in lines)) for i in range(len(head))]

    def fmt_line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    runs = [", ".join(f"{k} {_run_cell(agg['overall'].get(k))}" for k in rm.keys())
            for bank in agg.get("banks") or () for rm in run_metrics_for(bank)]
    return "\n".join([fmt_line(head), fmt_line(["-" * w for w in widths]), *map(fmt_line, lines), *runs])


def _run_cell(v: Any) -> str:
    return "-" if _finite_or_none(v) is None else f"{v:.3f}"


# ------------------------------------------------------------------------------------------------ JSONL runs

def _score_job(problem: Problem, slot: Mapping, options: Mapping) -> tuple[dict | None, str | None]:
    """(row, None), or (None, one-line reason) when the problem cannot be scored: no input may end a run."""
    try:
        values, failures = parse_outputs(problem, slot["outputs"])
        checked, rejected = problem.check_values(slot["values"])
        values += checked
        earlier, too_large = int(slot.get("n_failed", 0)), int(slot.get("too_large", 0))
        n_failed = len(failures) + len(rejected) + earlier + too_large
        row = score_values(problem, values, n_failed=n_failed, **options)
        row["failure_reasons"] = failure_reasons(failures + rejected + ["failed before recording"] * earlier
                                                 + ["number too large (beyond the float range)"] * too_large)
    except Exception as e:  # hostile values (RecursionError, OverflowError, ...) skip one problem, named
        msg = str(e).splitlines()[0] if str(e) else ""
        return None, f"line {slot['first_line']}: cannot score {problem.id}: {type(e).__name__}" + \
            (f": {msg[:200]}" if msg else "")
    row.update(id=problem.id, category=problem.category, bank=problem.bank)
    records = run_records(problem, row)
    if records:
        row[RUN_RECORDS] = records
    return row, None


def failure_reasons(reasons: Sequence[str], most: int = 5, width: int = 160) -> dict[str, int]:
    """The ``most`` commonest failure reasons of one problem with their counts (each cut to ``width`` characters),
    so a table's ``n_failed`` can be traced to what the replies got wrong."""
    return dict(Counter(str(r)[:width] for r in reasons).most_common(most))


_FORK_JOBS: list = []  # read by forked workers: Problem objects hold closures, which do not pickle


def _score_forked(index: int, options: Mapping) -> tuple[dict | None, str | None]:
    problem, slot = _FORK_JOBS[index]
    return _score_job(problem, slot, options)


def _score_jobs(jobs: list, options: Mapping, workers: int, progress: bool) -> list[tuple[dict | None, str | None]]:
    import multiprocessing as mp

    bar = None
    try:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), desc="scoring", unit="problem", delay=1.0,
                   disable=not progress or not sys.stderr.isatty(), leave=False)
    except ImportError:  # pragma: no cover
        pass
    use_fork = workers > 1 and len(jobs) > 1 and "fork" in mp.get_all_start_methods()
    try:
        if not use_fork:
            results = []
            for problem, slot in jobs:
                results.append(_score_job(problem, slot, options))
                if bar is not None:
                    bar.update()
            return results
        from concurrent.futures import ProcessPoolExecutor

        _FORK_JOBS[:] = jobs
        try:
            with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=mp.get_context("fork")) as ex:
                futures = [ex.submit(_score_forked, i, options) for i in range(len(jobs))]
                results = []
                for fut in futures:
                    results.append(fut.result())
                    if bar is not None:
                        bar.update()
                return results
        finally:
            _FORK_JOBS.clear()
    finally:
        if bar is not None:
            bar.close()


@dataclass
class ScoreRun:
    """Rows (one per scored problem), one-line ``errors`` for everything skipped, the aggregate, and ``lines``:
    the non-blank input lines read (0 means the input was empty)."""

    rows: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    aggregate: dict = field(default_factory=dict)
    lines: int = 0


_TOO_LARGE = object()


def _as_float_or_failure(v: Any) -> Any:
    """JSON integers beyond the float range (a 401-digit integer) cannot be values: ``_TOO_LARGE`` marks them."""
    if isinstance(v, int) and not isinstance(v, bool):
        try:
            float(v)
        except OverflowError:
            return _TOO_LARGE
    return v


def _read_jsonl(lines: Iterable[str], errors: list[str], counter: list[int] | None = None) -> dict[str, dict]:
    """Collect per-id values/outputs; repeated ids are merged in file order (answers collected in batches).

    Every line that cannot be read adds one ``"line N: reason"`` to ``errors``: invalid JSON, JSON nested too
    deep to decode, integers over Python's digit limit, a key given twice (:func:`ub_core.untrusted.loads`). An integer
    too large for a float counts as one failed value. An optional non-negative integer ``n_failed`` adds replies that
    failed before the values were recorded (an Inspect log's failure count). ``counter[0]`` receives the number of
    non-blank lines."""
    merged: dict[str, dict] = {}
    n_lines = 0
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        n_lines += 1
        try:
            rec = untrusted.loads(line, unique_keys=True)
        except untrusted.UntrustedJSONError as e:
            errors.append(f"line {lineno}: {e}")
            continue
        if not isinstance(rec, dict):
            errors.append(f"line {lineno}: expected a JSON object, got {type(rec).__name__}")
            continue
        pid = rec.get("id")
        if not isinstance(pid, str) or not pid:
            errors.append(f"line {lineno}: missing string field 'id'")
            continue
        has_v, has_o = "values" in rec, "outputs" in rec
        if has_v == has_o:
            errors.append(f"line {lineno}: needs exactly one of 'values' or 'outputs'")
            continue
        key = "values" if has_v else "outputs"
        items = rec[key]
        if not isinstance(items, list):
            errors.append(f"line {lineno}: '{key}' must be a list")
            continue
        n_failed = rec.get("n_failed", 0)
        if isinstance(n_failed, bool) or not isinstance(n_failed, int) or n_failed < 0:
            errors.append(f"line {lineno}: 'n_failed' must be a non-negative integer")
            continue
        slot = merged.setdefault(pid, {"values": [], "outputs": [], "n_failed": 0, "too_large": 0,
                                       "first_line": lineno})
        if key == "values":
            items = [_as_float_or_failure(v) for v in items]
            slot["too_large"] += sum(v is _TOO_LARGE for v in items)
            items = [v for v in items if v is not _TOO_LARGE]
        slot[key].extend(items)
        slot["n_failed"] += n_failed
    if counter is not None:
        counter[:] = [n_lines]
    return merged


def not_scorable(problem: Any) -> str | None:
    """Why ``ub score`` cannot KS-score this item (None when it can): the option-logprob banks (calibration,
    implicit, explicit) and the stability bank have no sampled answers to test, and the odds bank's percentile and
    probability questions have one exact answer, scored by absolute error (``ub_core.metrics.odds``)."""
    if not isinstance(problem, Problem):
        bank = getattr(problem, "bank", None) or type(problem).__name__
        return (f"{problem.id} is an item of the {bank} bank, which is not scored from sampled values; "
                f"`ub score` scores KS@N problems (the ksn bank, odds sampling items)")
    task = (problem.metadata or {}).get("task") if problem.bank == "odds" else None
    if task in ("percentile", "probability"):
        return (f"{problem.id} is an odds {task} question, scored by absolute error against its exact answer "
                f"(ub_core.metrics.odds.odds_item_scores, the ub_inspect/odds task), not by KS")
    return None


def score_jsonl(lines: Iterable[str], *, method: str = "paper", ns: Sequence[int] = DEFAULT_NS,
                threshold: float = 1e-4, truth_seed: int = 0, truth_size: int = 10_000, wdz_resamples: int = 999,
                progress: bool = False, problems: Mapping[str, Problem] | None = None,
                workers: int = 1) -> ScoreRun:
    """Score a JSONL of ``{"id", "values": [...]}`` or ``{"id", "outputs": [...]}`` lines.

    Malformed lines, unknown ids and items that are not KS@N problems (:func:`not_scorable`) are reported in
    ``errors`` (one line each, naming the line) and skipped; everything else is scored. A line may carry
    ``"n_failed": k``, replies that failed before its values were recorded (an Inspect log's count); they add
    to the problem's failures. ``truth_size``, ``truth_seed`` and ``wdz_resamples`` are the scorer's options
    (an Inspect run's ``-T gt_size``/``seed``), so a rescoring reproduces the run. ``values`` are validated against the
    problem's support like parsed replies, and a rejected value counts as a failure. ``problems`` (id -> Problem)
    replaces the built-in banks, e.g. with the official release from
    :func:`ub_core.release_tools.official.load_official`. ``workers > 1`` scores problems in that many forked processes
    (results are identical and in the same order; serial where fork is unavailable).
    """
    run = ScoreRun()
    counter = [0]
    merged = _read_jsonl(lines, run.errors, counter)
    run.lines = counter[0]
    jobs = []
    for pid, slot in merged.items():
        try:
            problem = problems[pid] if problems is not None else get_problem(pid)
        except KeyError as e:
            msg = e if isinstance(e, UnknownProblemError) else f"unknown problem id {pid!r} in the given dataset"
            run.errors.append(f"line {slot['first_line']}: {msg}")
            continue
        why = not_scorable(problem)
        if why:
            run.errors.append(f"line {slot['first_line']}: {why}")
            continue
        jobs.append((problem, slot))
    options = dict(ns=ns, threshold=threshold, method=method, truth_seed=truth_seed, truth_size=truth_size,
                   wdz_resamples=wdz_resamples)
    for row, err in _score_jobs(jobs, options, workers, progress):
        if err is None:
            run.rows.append(row)
        else:
            run.errors.append(err)
    run.aggregate = aggregate(run.rows, ns)
    return run
