"""The ``ub`` command: browse the banks, print ground truth, run the offline reference models, score answers.

Every user error (unknown id, bad option, unreadable file) ends in one line on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

__all__ = ["main"]


class CLIError(Exception):
    """A user-facing error: printed as one line."""


def _ns(text: str) -> tuple[int, ...]:
    try:
        ns = tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not ns or any(n < 1 for n in ns):
        raise argparse.ArgumentTypeError("every N must be a positive integer")
    return ns


# ------------------------------------------------------------------------------------------------ bank

def _cmd_bank_list(args) -> int:
    from .problems import load_bank

    problems = load_bank(args.bank, categories=args.category)
    if args.json:
        # LogitItems (calibration, implicit, explicit) always carry their prompt in the record
        json.dump([p.to_record(with_prompt=args.prompts) if hasattr(p, "regime") else p.to_record()
                   for p in problems], sys.stdout, indent=None)
        sys.stdout.write("\n")
        return 0
    width = max((len(p.id) for p in problems), default=2)
    print(f"{'id'.ljust(width)}  {'category':14s}  {'family':22s}  regime")
    for p in problems:
        print(f"{p.id.ljust(width)}  {p.category:14s}  {p.family:22s}  {getattr(p, 'regime', '')}")
    print(f"{len(problems)} problems")
    return 0


def text_histogram(values: np.ndarray, support: str, bins: int = 20, width: int = 50,
                   labels: Sequence[str] = ()) -> str:
    """A text histogram: one row per distinct value for small discrete supports, else ``bins`` equal bins."""
    values = np.asarray(values, dtype=float)
    distinct = np.unique(values)
    rows: list[tuple[str, int]] = []
    if support in ("discrete", "categorical", "permutation") and distinct.size <= 30:
        counts = [(v, int(np.sum(values == v))) for v in distinct]
        for v, c in counts:
            name = labels[int(v)] if labels and support == "categorical" else f"{v:g}"
            rows.append((name, c))
    else:
        lo, hi = np.quantile(values, [0.001, 0.999]) if values.size > 100 else (values.min(), values.max())
        if np.all(values == np.round(values)):
            # integer data: integer-aligned bins of equal width, so no bin covers more integers than another
            width_int = max(1, int(np.ceil((hi - lo + 1) / bins)))
            edges = np.arange(np.floor(lo), np.floor(hi) + width_int + 1, width_int) - 0.5
            counts, edges = np.histogram(np.clip(values, edges[0], edges[-1]), bins=edges)
            rows = [(f"{edges[i] + 0.5:g}" + ("" if width_int == 1 else f"..{edges[i + 1] - 0.5:g}"), int(c))
                    for i, c in enumerate(counts)]
        else:
            if hi <= lo:
                hi = lo + 1.0
            counts, edges = np.histogram(np.clip(values, lo, hi), bins=bins, range=(lo, hi))
            rows = [(f"[{edges[i]:.4g}, {edges[i + 1]:.4g})", int(c)) for i, c in enumerate(counts)]
    top = max((c for _, c in rows), default=1) or 1
    lw = max(len(n) for n, _ in rows)
    return "\n".join(f"{n.rjust(lw)} | {'#' * int(round(width * c / top)):{width}s} {c}" for n, c in rows)


def _cmd_bank_show(args) -> int:
    from .problems import Problem, get_problem

    p = get_problem(args.id)
    if not isinstance(p, Problem):
        return _show_item(p)
    rec = p.to_record(with_prompt=False)
    print(f"id:        {p.id}")
    print(f"category:  {p.category} (task type {p.task_type}{', ' + p.subcategory if p.subcategory else ''})")
    print(f"family:    {p.family}    regime: {p.regime}    modality: {p.modality}")
    print(f"support:   {p.support}    answer format: {p.answer_format}")
    print(f"params:    {json.dumps(rec['params'])}")
    print("\nprompt:\n" + "\n".join("  " + line for line in p.full_prompt.splitlines()))
    truth = p.truth(size=args.size, seed=args.seed)
    print(f"\nground truth ({truth.size} draws, seed {args.seed}): mean {truth.mean():.6g}, sd {truth.std():.6g}, "
          f"min {truth.min():.6g}, max {truth.max():.6g}")
    print(text_histogram(truth, p.support, labels=p.options))
    return 0


def _show_item(item) -> int:
    """``ub bank show`` for items that are not sampled problems: the log-probability items print their ideal
    distribution, other records print their fields."""
    from .problems import LogitItem

    rec = item.to_record()
    prompt = rec.pop("prompt", None)
    if isinstance(item, LogitItem):
        rec.pop("options"), rec.pop("probabilities")
    for key, value in rec.items():
        print(f"{key + ':':<14} {value if isinstance(value, str) else json.dumps(value)}")
    if prompt is not None:
        print("\nprompt:\n" + "\n".join("  " + line for line in str(prompt).splitlines()))
    if isinstance(item, LogitItem):
        print("\nideal next-token distribution over the options:")
        width = max(len(o) for o in item.options)
        for option, prob in zip(item.options, item.probabilities):
            print(f"  {option:<{width}}  {prob:8.4f}  {'#' * round(40 * prob)}")
    return 0


def _cmd_truth(args) -> int:
    from .problems import get_problem

    p = get_problem(args.id)
    if args.size < 1:
        raise CLIError("--size must be >= 1")
    truth = p.truth(size=args.size, seed=args.seed)
    if args.out:
        out = Path(args.out)
        if out.suffix == ".npy":
            np.save(out, truth)
        elif out.suffix == ".json":
            out.write_text(json.dumps({"id": p.id, "seed": args.seed, "values": truth.tolist()}))
        else:
            np.savetxt(out, truth, fmt="%.17g")
        print(f"wrote {truth.size} values to {out}", file=sys.stderr)
    else:
        sys.stdout.write("\n".join(f"{v:.17g}" for v in truth) + "\n")
    return 0


def _cmd_cache(args) -> int:
    from .cache import build_truth, cache_dir
    from .problems import load_bank

    problems = load_bank(args.bank)
    t0 = time.perf_counter()
    build_truth(problems, size=args.size, seed=args.seed, progress=not args.quiet)
    print(f"ground truth for {len(problems)} problems x {args.size} draws ready in {time.perf_counter() - t0:.2f} s "
          f"({cache_dir()})")
    return 0


# ------------------------------------------------------------------------------------------------ run / score

def _print_run(run, args, ns) -> None:
    from .scoring import format_table

    for err in run.errors:
        print(f"ub: {err}", file=sys.stderr)
    if args.json:
        json.dump({"aggregate": run.aggregate, "problems": run.rows, "errors": run.errors}, sys.stdout,
                  default=lambda o: None)
        sys.stdout.write("\n")
    else:
        print(format_table(run.aggregate, ns))
        if run.errors:
            print(f"{len(run.errors)} line(s) could not be scored (see above)")


def _inspect_log_lines(path: Path) -> list[str] | None:
    """JSONL lines from an Inspect log of ours (values stored by the scorer); None when it is not one."""
    try:
        from ub_inspect.logs import is_inspect_log, log_records
    except ImportError:
        raise CLIError("reading Inspect logs needs inspect-ai (pip install 'unpredictabench[inspect]')") from None
    if not is_inspect_log(path):
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    try:
        return [json.dumps({"id": r["id"], "values": r["values"]}) for r in log_records(path)]
    except Exception as e:  # inspect raises several types for damaged logs; report one line
        raise CLIError(f"cannot read Inspect log {path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None


def _cmd_score(args) -> int:
    from .metrics import KS_METHODS
    from .scoring import score_jsonl

    if args.method not in KS_METHODS:
        raise CLIError(f"--method must be one of {', '.join(KS_METHODS)}")
    path = Path(args.samples)
    if args.samples != "-" and path.suffix in (".eval", ".json") and path.is_file():
        lines = _inspect_log_lines(path)
    else:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if args.samples != "-" \
                else sys.stdin.read().splitlines()
        except OSError as e:
            raise CLIError(f"cannot read {args.samples}: {e.strerror}") from None
    problems = None
    if args.dataset or args.ground_truth:
        if not (args.dataset and args.ground_truth):
            raise CLIError("--dataset and --ground-truth go together")
        from .data import load_official

        problems = {p.id: p for p in load_official(args.dataset, args.ground_truth, split=args.split)}
    run = score_jsonl(lines, method=args.method, ns=args.ns, threshold=args.threshold, progress=not args.json,
                      problems=problems, workers=args.workers)
    _print_run(run, args, args.ns)
    return 0


def _cmd_run(args) -> int:
    """Run the offline reference models end to end: replies -> parsing -> metrics -> table."""
    from .oracle import collapse_replies, oracle_replies
    from .problems import load_bank
    from .scoring import score_jsonl

    problems = load_bank("ksn", categories=args.category)
    t0 = time.perf_counter()
    lines = []
    for p in problems:
        if args.model == "oracle":
            outs = oracle_replies(p, args.n_samples, seed=args.seed)
        else:
            outs = collapse_replies(p, args.n_samples)
        lines.append(json.dumps({"id": p.id, "outputs": outs}))
    if args.samples_out:
        Path(args.samples_out).write_text("\n".join(lines) + "\n")
    run = score_jsonl(lines, method=args.method, ns=args.ns, progress=not args.json, workers=args.workers)
    _print_run(run, args, args.ns)
    if not args.json:
        print(f"\nmodel ub/{args.model}: {len(problems)} problems x {args.n_samples} replies scored in "
              f"{time.perf_counter() - t0:.1f} s")
    return 0


def _cmd_report(args) -> int:
    """HTML + CSV/JSON/Markdown report of Inspect logs and lm-eval output (``ub_core.report``)."""
    import logging

    from .report import build_report

    class _Stderr(logging.Handler):  # each skipped input: one "ub: skipped PATH: reason" line on today's stderr
        def emit(self, record):
            print(f"ub: {record.getMessage()}", file=sys.stderr)

    report_log = logging.getLogger("ub_core.report")
    if not any(type(h).__name__ == "_Stderr" for h in report_log.handlers):
        report_log.addHandler(_Stderr(logging.WARNING))
        report_log.propagate = False
    try:
        res = build_report(args.paths, args.out, title=args.title, max_histograms=args.max_histograms)
    except ImportError as e:
        raise CLIError(f"ub report needs matplotlib and jinja2 (pip install 'unpredictabench[report]'): {e}") \
            from None
    print(f"wrote {res.index} ({len(res.table)} scored samples, {len(res.figures)} figures, "
          f"{res.skipped} inputs skipped)")
    return 0


def _cmd_tasks_dir(args) -> int:
    """Print the lm-eval task folder without importing lm-eval (it ships inside ub_lmeval)."""
    import importlib.util

    spec = importlib.util.find_spec("ub_lmeval")
    if spec is None or not spec.submodule_search_locations:
        raise CLIError("the ub_lmeval package is not installed")
    print(Path(list(spec.submodule_search_locations)[0]) / "task_yamls")
    return 0


# ------------------------------------------------------------------------------------------------ parser

def build_parser() -> argparse.ArgumentParser:
    from .scoring import DEFAULT_NS

    ap = argparse.ArgumentParser(prog="ub", description="Distributional LLM evaluation (UnpredictaBench and "
                                                        "friends): banks, ground truth, scoring.")
    sub = ap.add_subparsers(dest="command", required=True)

    bank = sub.add_parser("bank", help="browse problem banks")
    bsub = bank.add_subparsers(dest="bank_command", required=True)
    bl = bsub.add_parser("list", help="one row per problem")
    bl.add_argument("--bank", default="ksn")
    bl.add_argument("--category", action="append", help="only this category (repeatable)")
    bl.add_argument("--json", action="store_true", help="JSON records instead of a table")
    bl.add_argument("--prompts", action="store_true", help="include prompts in --json output")
    bl.set_defaults(func=_cmd_bank_list)
    bs = bsub.add_parser("show", help="prompt, parameters and a text histogram of the truth")
    bs.add_argument("id")
    bs.add_argument("--size", type=int, default=10_000)
    bs.add_argument("--seed", type=int, default=0)
    bs.set_defaults(func=_cmd_bank_show)

    tr = sub.add_parser("truth", help="print or save a problem's ground-truth draws")
    tr.add_argument("id")
    tr.add_argument("--size", type=int, default=10_000)
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--out", help="write to FILE (.npy, .json, or text) instead of stdout")
    tr.set_defaults(func=_cmd_truth)

    ca = sub.add_parser("cache", help="build the ground-truth cache for a bank")
    ca.add_argument("--bank", default="ksn")
    ca.add_argument("--size", type=int, default=10_000)
    ca.add_argument("--seed", type=int, default=0)
    ca.add_argument("--quiet", action="store_true")
    ca.set_defaults(func=_cmd_cache)

    sc = sub.add_parser("score", help="score recorded answers (JSONL of {id, values} or {id, outputs})")
    sc.add_argument("--samples", required=True, help="JSONL file, an Inspect log (.eval/.json), or - for stdin")
    sc.add_argument("--method", default="paper", help="paper (published dispatch) or exact")
    sc.add_argument("--ns", type=_ns, default=DEFAULT_NS, help="comma-separated N values for KS@N")
    sc.add_argument("--threshold", type=float, default=1e-4)
    sc.add_argument("--json", action="store_true")
    sc.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="scoring processes (default: all cores)")
    sc.add_argument("--dataset", help="score against the official release: HF id, dataset folder or file")
    sc.add_argument("--ground-truth", help="the release's ground_truth_values.json (with --dataset)")
    sc.add_argument("--split", default="train", help="dataset split (with --dataset)")
    sc.set_defaults(func=_cmd_score)

    rn = sub.add_parser("run", help="run the built-in offline models (oracle, collapse) on the KS@N bank")
    rn.add_argument("--model", choices=("oracle", "collapse"), default="oracle")
    rn.add_argument("--n-samples", type=int, default=100)
    rn.add_argument("--category", action="append")
    rn.add_argument("--seed", type=int, default=0)
    rn.add_argument("--method", default="paper")
    rn.add_argument("--ns", type=_ns, default=DEFAULT_NS)
    rn.add_argument("--samples-out", help="also write the replies as a JSONL for `ub score`")
    rn.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="scoring processes (default: all cores)")
    rn.add_argument("--json", action="store_true")
    rn.set_defaults(func=_cmd_run)

    rp = sub.add_parser("report", help="HTML report + CSV/JSON/Markdown summaries of Inspect logs / lm-eval output")
    rp.add_argument("paths", nargs="+", help="Inspect logs (.eval/.json), lm-eval output folders or files")
    rp.add_argument("--out", required=True, help="output folder (index.html, summary.*, figures)")
    rp.add_argument("--title", default="UnpredictaBench report")
    rp.add_argument("--max-histograms", type=int, default=None, help="draw at most this many per-problem plots")
    rp.set_defaults(func=_cmd_report)

    td = sub.add_parser("tasks-dir", help="print the lm-eval task folder (for lm_eval --include_path)")
    td.set_defaults(func=_cmd_tasks_dir)
    from .official_truth import add_parser as add_official_parser
    from .stability_score import add_parser as add_stability_parser

    add_stability_parser(sub)  # ub stability score
    add_official_parser(sub)  # ub official truth
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `ub truth X | head`
        return 0
    except (CLIError, ValueError, KeyError, OSError) as e:
        msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        print(f"ub: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
