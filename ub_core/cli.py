"""The ``ub`` command: browse the banks, print ground truth, run the offline reference models, score answers.

Every user error (unknown id, bad option, unreadable file) ends in one line on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import argparse
from collections import Counter
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from .terminal import escape_controls, terminal_text

__all__ = ["main"]


class CLIError(Exception):
    """A user-facing error: printed as one line."""


#: Range limits of the numeric options (README, "The `ub` command"). Ground-truth draws are float64: 10^7 draws
#: are 80 MB per problem (``ub cache`` writes one such file per problem of the bank).
MAX_SIZE = 10_000_000
#: Replies per problem for ``ub run`` (the papers use 100; 10^5 x 448 problems is already ~45 million replies).
MAX_N_SAMPLES = 100_000
MAX_WORKERS = 1024
#: Seeds are mixed in as 32-bit words (``seed_sequence``): a larger or negative seed would alias another one.
MAX_SEED = 2**32 - 1
#: the largest samples file ``ub score`` reads (it is read whole): far above any run's replies
SAMPLES_MAX_BYTES = 2 * 2**30


def _check_range(value, option: str, lo, hi, open_ends: bool = False) -> None:
    """One-line CLIError unless lo <= value <= hi (lo < value < hi with ``open_ends``; NaN never passes)."""
    if value is None:
        return
    if value != value:
        raise CLIError(f"{option} must be a number (got {value})")
    if open_ends and not lo < value < hi:
        raise CLIError(f"{option} must be > {lo:g} and < {hi:g} (got {value})")
    if value < lo:
        raise CLIError(f"{option} must be >= {lo} (got {value})")
    if value > hi:
        raise CLIError(f"{option} must be <= {hi:,} (got {value:,})")


def _check_size_seed(args) -> None:
    _check_range(args.size, "--size", 1, MAX_SIZE)
    _check_range(args.seed, "--seed", 0, MAX_SEED)


def _has_truth(item) -> None:
    """One line for items without ground-truth draws (the stability bank)."""
    if not callable(getattr(item, "truth", None)):
        raise CLIError(f"{item.id} is an item of the {getattr(item, 'bank', type(item).__name__)} bank, "
                       f"which has no ground-truth draws")


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
    from .problems import edition_note, load_bank

    problems = load_bank(args.bank, categories=args.category, size=args.size)
    if getattr(args, "logprob", False):  # problems with an enumerable answer support
        from .problems.candidates import candidate_listing
        return candidate_listing(problems, as_json=args.json)
    if args.json:
        # OptionItems (calibration, implicit, explicit) always carry their prompt in the record
        json.dump([p.to_record(with_prompt=args.prompts) if hasattr(p, "regime") else p.to_record()
                   for p in problems], sys.stdout, indent=None)
        sys.stdout.write("\n")
        return 0
    width = max((len(p.id) for p in problems), default=2)
    print(f"{'id'.ljust(width)}  {'category':14s}  {'family':22s}  regime")
    for p in problems:
        print(f"{p.id.ljust(width)}  {p.category:14s}  {p.family:22s}  {getattr(p, 'regime', '')}")
    print(f"{len(problems)} problems" + (f" ({args.size} edition)" if args.size else ""))
    note = edition_note(args.bank)
    if note:
        print(note)
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

    _check_size_seed(args)
    p = get_problem(args.id)
    if not isinstance(p, Problem):
        return _show_item(p)
    rec = p.to_record(with_prompt=False)
    print(f"id:        {p.id}" + (f"    uid: {p.uid}" if p.uid else ""))
    release = p.metadata.get("release") or {}
    if release:
        print(f"release:   {release.get('folder', '')} row {release.get('row', '')}"
              + (f"  ({release['note']})" if release.get("note") else ""))
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
    from .problems import OptionItem

    rec = item.to_record()
    prompt = rec.pop("prompt", None)
    if isinstance(item, OptionItem):
        rec.pop("options"), rec.pop("probabilities")
    for key, value in rec.items():
        print(f"{key + ':':<14} {value if isinstance(value, str) else json.dumps(value)}")
    if prompt is not None:
        print("\nprompt:\n" + "\n".join("  " + line for line in str(prompt).splitlines()))
    if isinstance(item, OptionItem):
        print("\nideal next-token distribution over the options:")
        width = max(len(o) for o in item.options)
        for option, prob in zip(item.options, item.probabilities):
            print(f"  {option:<{width}}  {prob:8.4f}  {'#' * round(40 * prob)}")
    return 0


def _cmd_truth(args) -> int:
    from .problems import get_problem

    _check_size_seed(args)
    p = get_problem(args.id)
    _has_truth(p)
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

    _check_size_seed(args)
    problems = load_bank(args.bank)
    for p in problems[:1]:
        _has_truth(p)
    t0 = time.perf_counter()
    build_truth(problems, size=args.size, seed=args.seed, progress=not args.quiet)
    print(f"ground truth for {len(problems)} problems x {args.size} draws ready in {time.perf_counter() - t0:.2f} s "
          f"({cache_dir()})")
    return 0


# ------------------------------------------------------------------------------------------------ run / score

def _strict_json(x):
    """``x`` with every non-finite float (numpy's too) replaced by None, so ``json.dump(allow_nan=False)`` holds."""
    if isinstance(x, dict):
        return {k: _strict_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict_json(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


def _print_run(run, args, ns) -> None:
    from .ksn_scoring import describe_metrics, format_table

    for err in run.errors:
        print(f"ub: {err}", file=sys.stderr)
    if args.json:  # strict JSON for dashboards: NaN/inf (an undefined WDZ, a p-value of a short run) become null
        json.dump(_strict_json({"aggregate": run.aggregate, "problems": run.rows, "errors": run.errors,
                                "metrics": describe_metrics(ns, run.aggregate.get("banks") or ())}), sys.stdout,
                  default=lambda o: None, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print(format_table(run.aggregate, ns))
        reasons: Counter = Counter()
        for row in run.rows:
            reasons.update(row.get("failure_reasons") or {})
        if reasons:  # what n_failed is made of (per problem under "failure_reasons" in --json)
            print("commonest failure reasons: " + "; ".join(f"{r} (x{k})" for r, k in reasons.most_common(5)))
        if run.errors:
            print(f"{len(run.errors)} line(s) could not be scored (see above)")


def _read_inspect_log(path: Path):
    """The records, options and skipped samples of an Inspect log of ours (``ub_inspect.logs``); None when the
    file is not an Inspect log."""
    try:
        from ub_inspect.logs import is_inspect_log, read_for_scoring
    except ImportError:
        raise CLIError("reading Inspect logs needs inspect-ai (pip install 'unpredictabench[inspect]')") from None
    if not is_inspect_log(path):
        return None
    try:
        return read_for_scoring(path)
    except Exception as e:  # inspect raises several types for damaged logs; report one line
        raise CLIError(f"cannot read Inspect log {path}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None


def _score_input(args) -> tuple[list[str], dict, list[str], tuple | None]:
    """(JSONL lines, scoring options taken from an Inspect log, one line per problem with the log (an
    unfinished run, each sample without a score), the log's official-release dataset)."""
    path = Path(args.samples)
    if args.samples != "-" and path.suffix in (".eval", ".json") and path.is_file():
        log = _read_inspect_log(path)
        if log is not None:
            problems = [f"Inspect log {path.name}: {note}" for note in log.skipped]
            if log.status != "success":
                problems.insert(0, f"Inspect log {path.name} has status {log.status!r}"
                                   + (f" ({log.error})" if log.error else "")
                                   + f"; its {len(log.records)} scored sample(s) are rescored")
            lines = [json.dumps({"id": r["id"], "values": r["values"], "n_failed": r["n_failed"]})
                     for r in log.records]
            return lines, log.options, problems, log.dataset
    try:
        if args.samples == "-":
            return sys.stdin.read().splitlines(), {}, [], None
        from .untrusted import UntrustedFileError, read_bytes

        return read_bytes(path, SAMPLES_MAX_BYTES).decode("utf-8", "replace").splitlines(), {}, [], None
    except UntrustedFileError as e:
        raise CLIError(f"cannot read {args.samples}: {e.reason}") from None


def _cmd_score(args) -> int:
    """Exit status: 0 when every line was scored, 1 when some were skipped (each named on stderr), 2 when
    nothing could be scored (an empty input included) or on a usage error."""
    from .metrics import KS_METHODS
    from .ksn_scoring import score_jsonl
    from .option_registry import default_of

    if args.method is not None and args.method not in KS_METHODS:
        raise CLIError(f"--method must be one of {', '.join(KS_METHODS)}")
    _check_range(args.threshold, "--threshold", 0.0, 1.0, open_ends=True)
    _check_range(args.workers, "--workers", 1, MAX_WORKERS)
    lines, log_options, log_problems, log_dataset = _score_input(args)
    # explicit options win; else what the Inspect run used; else the defaults
    options = {k: default_of("ksn", name)
               for k, name in (("method", "method"), ("ns", "ks_ns"), ("threshold", "threshold"))}
    options.update(log_options)
    for key in ("method", "ns", "threshold"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    problems = None
    dataset, ground_truth, split = args.dataset, args.ground_truth, args.split
    if not (dataset or ground_truth) and log_dataset is not None:
        dataset, ground_truth, split = log_dataset
        if not ground_truth:
            raise CLIError(f"the Inspect run used the dataset {dataset!r} without a ground_truth; "
                           f"pass --dataset and --ground-truth")
    if dataset or ground_truth:
        if not (dataset and ground_truth):
            raise CLIError("--dataset and --ground-truth go together")
        from .release_tools.official import load_official

        problems = {p.id: p for p in load_official(dataset, ground_truth, split=split or "train")}
    for line in log_problems:
        print(f"ub: {line}", file=sys.stderr)
    run = score_jsonl(lines, progress=not args.json, problems=problems, workers=args.workers, **options)
    if not run.rows:
        for err in run.errors:
            print(f"ub: {err}", file=sys.stderr)
        what = args.samples if args.samples != "-" else "stdin"
        if run.lines == 0 and not log_problems:
            raise CLIError(f"no lines to score in {what}")
        raise CLIError(f"no scorable lines in {what} ({len(run.errors) + len(log_problems)} problem(s), see above)")
    _print_run(run, args, options["ns"])
    return 1 if run.errors or log_problems else 0


def _cmd_run(args) -> int:
    """Run the offline reference models end to end: replies -> parsing -> metrics -> table."""
    from .oracle import collapse_replies, oracle_replies
    from .problems import load_bank
    from .ksn_scoring import score_jsonl

    from .metrics import KS_METHODS

    _check_range(args.n_samples, "--n-samples", 1, MAX_N_SAMPLES)
    _check_range(args.seed, "--seed", 0, MAX_SEED)
    _check_range(args.workers, "--workers", 1, MAX_WORKERS)
    if args.method not in KS_METHODS:
        raise CLIError(f"--method must be one of {', '.join(KS_METHODS)}")
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


def _key_values(specs, flag: str, form: str) -> dict[str, str]:
    """``KEY=VALUE`` arguments of a repeatable flag as a dict; one line for a malformed one."""
    out = {}
    for spec in specs or ():
        key, sep, value = spec.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise CLIError(f"{flag}: expected {form}, got {spec!r}")
        out[key.strip()] = value.strip()
    return out


def _cmd_report(args) -> int:
    """HTML + CSV/JSON/Markdown report of Inspect logs and lm-eval output (``ub_core.report``)."""
    import logging

    from .report import build_report

    class _Stderr(logging.Handler):  # each skipped input: one "ub: skipped PATH: reason" line on today's stderr
        def emit(self, record):
            print(f"ub: {escape_controls(record.getMessage())}", file=sys.stderr)

    _check_range(args.max_histograms, "--max-histograms", 0, 10**9)
    aliases = _key_values(args.model_alias, "--model-alias", "NAME=ALIAS")
    published = _key_values(args.published, "--published", "FAMILY=DIR (e.g. dice=LLM_Bad_Dice_Player)")
    # the skips go to stderr for this command only: a process that goes on (a test, a notebook) keeps its logging
    report_log = logging.getLogger("ub_core.report")
    handler, propagate = _Stderr(logging.WARNING), report_log.propagate
    report_log.addHandler(handler)
    report_log.propagate = False
    try:
        res = build_report(args.paths, args.out, title=args.title, max_histograms=args.max_histograms,
                           model_aliases=aliases, published=published)
    except ImportError as e:
        raise CLIError(f"ub report needs matplotlib and jinja2 (pip install 'unpredictabench[report]'): {e}") \
            from None
    finally:
        report_log.removeHandler(handler)
        report_log.propagate = propagate
    print(f"wrote {escape_controls(res.index)} ({len(res.table)} scored samples, {len(res.figures)} figures, "
          f"{res.skipped} inputs skipped)")
    return 0


def _cmd_compare(args) -> int:
    """Paired comparison of two runs (``ub_core.compare``); exit 2 with one line when they cannot be compared."""
    import logging

    from .compare import format_comparisons
    from .report.compare_runs import compare_runs

    report_log = logging.getLogger("ub_core.report")
    level = report_log.level
    report_log.setLevel(logging.ERROR)  # the skips are printed below, once each
    try:
        _check_range(args.alpha, "--alpha", 0, 1, open_ends=True)
        _check_range(args.power, "--power", 0, 1, open_ends=True)
        if (args.b is None) == (args.published is None):
            raise CLIError("ub compare: give run B, or --published DIR --model NAME (a published model), not both")
        if args.published is not None:
            if not args.model:
                raise CLIError("ub compare --published needs --model NAME (one of the release's models, e.g. GPT-4o)")
            from .report.compare_runs import compare_published

            rows, skipped = compare_published(args.a, args.published, args.model, args.metric, alpha=args.alpha,
                                              power=args.power)
        else:
            rows, skipped = compare_runs(args.a, args.b, args.metric, alpha=args.alpha, power=args.power)
    finally:
        report_log.setLevel(level)  # the process may go on to build a report (tests, a notebook)
    for line in skipped:
        print(f"ub: skipped {escape_controls(line)}", file=sys.stderr)
    if args.json:
        json.dump([r.to_json() for r in rows], sys.stdout, allow_nan=False,
                  default=lambda v: None)
        sys.stdout.write("\n")
    else:
        print(terminal_text(format_comparisons(rows, alpha=args.alpha)))
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

def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Every option of ``parser`` and of its subcommands, however deep, says its default in its help (argparse's
    ``%(default)s``), unless its help already does; flags (no value) and options without a default are left as
    they are. Subcommands added by other modules (``ub official``, ``ub reproduce``, ...) get it too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                show_defaults(sub)
        elif (action.option_strings and action.help not in (None, argparse.SUPPRESS) and action.nargs != 0
              and action.default not in (None, argparse.SUPPRESS) and not action.required
              and "default" not in action.help):
            action.help += " (default: %(default)s)"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("unpredictabench")
    except PackageNotFoundError:  # a checkout on PYTHONPATH, never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    from .ksn_scoring import DEFAULT_NS
    from .metrics import KS_METHODS
    from .option_registry import default_of, format_default
    from .problems import BANK_SIZES, bank_names

    ap = argparse.ArgumentParser(prog="ub", description="Distributional LLM evaluation (UnpredictaBench and "
                                                        "friends): banks, ground truth, scoring.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = ap.add_subparsers(dest="command", required=True)

    bank = sub.add_parser("bank", help="browse problem banks")
    bsub = bank.add_subparsers(dest="bank_command", required=True)
    bl = bsub.add_parser("list", help="one row per problem")
    bl.add_argument("--bank", default="ksn", metavar="BANK", help="which bank: " + ", ".join(bank_names()))
    bl.add_argument("--category", action="append", help="only this category (repeatable)")
    bl.add_argument("--size", choices=BANK_SIZES, default=None,
                    help="the edition (default: the bank's own, subset where there are two)")
    bl.add_argument("--json", action="store_true", help="JSON records instead of a table")
    bl.add_argument("--prompts", action="store_true", help="include prompts in --json output")
    bl.add_argument("--logprob", action="store_true", help="only problems with an enumerable answer support "
                    "(sampling-free KS), with their candidate counts")
    bl.set_defaults(func=_cmd_bank_list)
    bs = bsub.add_parser("show", help="prompt, parameters and a text histogram of the truth")
    bs.add_argument("id", help="problem id (ub bank list)")
    bs.add_argument("--size", type=int, default=10_000, help="ground-truth draws for the histogram")
    bs.add_argument("--seed", type=int, default=0, help="seed of the ground-truth draws")
    bs.set_defaults(func=_cmd_bank_show)

    tr = sub.add_parser("truth", help="print or save a problem's ground-truth draws")
    tr.add_argument("id", help="problem id (ub bank list)")
    tr.add_argument("--size", type=int, default=10_000, help="number of draws")
    tr.add_argument("--seed", type=int, default=0, help="seed of the draws")
    tr.add_argument("--out", help="write to FILE (.npy, .json, or text) instead of stdout")
    tr.set_defaults(func=_cmd_truth)

    ca = sub.add_parser("cache", help="build the ground-truth cache for a bank")
    ca.add_argument("--bank", default="ksn", metavar="BANK", help="which bank: " + ", ".join(bank_names()))
    ca.add_argument("--size", type=int, default=10_000, help="draws per problem")
    ca.add_argument("--seed", type=int, default=0, help="seed of the draws")
    ca.add_argument("--quiet", action="store_true", help="no progress bar")
    ca.set_defaults(func=_cmd_cache)

    sc = sub.add_parser("score", help="score recorded answers (JSONL of {id, values} or {id, outputs})")
    sc.add_argument("--samples", required=True, help="JSONL file, an Inspect log (.eval/.json), or - for stdin")
    sc.add_argument("--method", default=None, metavar="|".join(KS_METHODS),
                    help="KS test: paper (the published dispatch) or exact (default: paper, or an Inspect log's own)")
    sc.add_argument("--ns", type=_ns, default=None, help="comma-separated N values for KS@N (default "
                    + format_default(default_of("ksn", "ks_ns")) + ")")
    sc.add_argument("--threshold", type=float, default=None, help="KS p-value threshold, 0 < t < 1 (default 1e-4)")
    sc.add_argument("--json", action="store_true", help="JSON instead of a table")
    sc.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="scoring processes (default: all cores)")
    sc.add_argument("--dataset", help="score against the official release: HF id, dataset folder or file")
    sc.add_argument("--ground-truth", help="the release's ground_truth_values.json (with --dataset)")
    sc.add_argument("--split", default="train", help="dataset split (with --dataset)")
    sc.set_defaults(func=_cmd_score)

    rn = sub.add_parser("run", help="run the built-in offline models (oracle, collapse) on the KS@N bank")
    rn.add_argument("--model", choices=("oracle", "collapse"), default="oracle", help="which offline model")
    rn.add_argument("--n-samples", type=int, default=100, help="answers per problem")
    rn.add_argument("--category", action="append", help="only this category (repeatable; default: all)")
    rn.add_argument("--seed", type=int, default=0, help="seed of the model's draws")
    rn.add_argument("--method", default="paper", metavar="|".join(KS_METHODS), help="KS test: paper or exact")
    rn.add_argument("--ns", type=_ns, default=DEFAULT_NS, help="comma-separated N values for KS@N (default "
                    + format_default(default_of("ksn", "ks_ns")) + ")")
    rn.add_argument("--samples-out", help="also write the replies as a JSONL for `ub score`")
    rn.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="scoring processes (default: all cores)")
    rn.add_argument("--json", action="store_true", help="JSON instead of a table")
    rn.set_defaults(func=_cmd_run)

    rp = sub.add_parser("report", help="HTML report + CSV/JSON/Markdown summaries of Inspect logs / lm-eval output")
    rp.add_argument("paths", nargs="+", help="Inspect logs (.eval/.json), lm-eval output folders or files")
    rp.add_argument("--out", required=True, help="output folder (index.html, summary.*, figures)")
    rp.add_argument("--title", default="UnpredictaBench report", help="the page's title")
    rp.add_argument("--max-histograms", type=int, default=None, help="draw at most this many per-problem plots "
                    "(default: one per problem of the ksn runs)")
    rp.add_argument("--model-alias", action="append", metavar="NAME=ALIAS",
                    help="show model NAME as ALIAS (repeatable); ub/oracle, ub-oracle and ub-oracle/... are folded "
                         "into ub-oracle (likewise collapse) by default")
    rp.add_argument("--published", action="append", metavar="FAMILY=DIR",
                    help="a paper's published models as reference rows beside the runs of their setting, read from "
                         "its release checkout: dice=DIR (Mininda/LLM_Bad_Dice_Player), scored in the runs' "
                         "convention; marked '(published)', never pooled with a run")
    rp.set_defaults(func=_cmd_report)

    cp = sub.add_parser("compare", help="compare two runs of one task problem by problem: paired difference, "
                                        "its interval and p-value, minimum detectable effect")
    cp.add_argument("a", help="run A: an Inspect log, an lm-eval output folder or file, or a folder of one run")
    cp.add_argument("b", nargs="?", help="run B, the same kinds (or --published)")
    cp.add_argument("--published", metavar="DIR", help="B is a published model of the dice release at DIR "
                    "(Mininda/LLM_Bad_Dice_Player), scored from its raw draws in run A's convention and paired with "
                    "A law by law; needs --model")
    cp.add_argument("--model", help="with --published: the release's model, by its paper name (e.g. GPT-4o)")
    cp.add_argument("--metric", action="append", help="compare this metric instead of each family's headline "
                    "(repeatable; e.g. wdz, jsd, ks@10)")
    cp.add_argument("--alpha", type=float, default=0.05, help="the test's level; the interval is at 1 - alpha "
                    "(default 0.05)")
    cp.add_argument("--power", type=float, default=0.8, help="the power of the minimum detectable effect (MDE) "
                    "(default 0.8)")
    cp.add_argument("--json", action="store_true", help="a JSON list, one object per metric: metric, mean_a, mean_b, "
                    "diff, se, ci_low, ci_high, p_value, n_pairs, n_unmatched, and more")
    cp.set_defaults(func=_cmd_compare)

    td = sub.add_parser("tasks-dir", help="print the lm-eval task folder (for lm_eval --include_path)")
    td.set_defaults(func=_cmd_tasks_dir)
    from .release_tools.official_truth import add_parser as add_official_parser
    from .reproduce import add_parser as add_reproduce_parser
    from .stability_score import add_parser as add_stability_parser

    add_stability_parser(sub)  # ub stability score
    add_official_parser(sub)  # ub official truth
    add_reproduce_parser(sub)  # ub reproduce stability / odds / calibration
    show_defaults(ap)
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
        print(f"ub: error: {escape_controls(msg)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
