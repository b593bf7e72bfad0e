"""Run the ksn task on the offline reference models in both frameworks, then build the report.

    python examples/ksn_offline/run_ksn.py --out /tmp/ub_example            # shuffling + real_world, 3 each
    python examples/ksn_offline/run_ksn.py --out /tmp/ub_example --categories text_explicit --limit 5

Writes OUT/inspect_logs/*.eval (Inspect, ``ub/oracle`` and ``ub/collapse``), OUT/lm_eval/<model>/results_*.json
+ samples_*.jsonl (lm-eval, ``ub-oracle`` and ``ub-collapse``, the same files ``lm_eval --output_path
--log_samples`` writes) and OUT/report/index.html with summary.csv/json/md. Everything runs in this process and
offline; ``run_ksn.sh`` beside this file is the same job with the command-line tools.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

INSPECT_MODELS = ("ub/oracle", "ub/collapse")
LMEVAL_MODELS = ("ub-oracle", "ub-collapse")


def run_inspect(categories: list[str], limit: int, log_dir: Path, seed: int = 0) -> list[Path]:
    """``inspect eval ub_inspect/ksn --model M -T categories=... -T limit_per_category=...`` for each model."""
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401  (registers ub/oracle and ub/collapse)
    from ub_inspect.ksn import ksn

    paths = []
    for model in INSPECT_MODELS:
        log = inspect_eval(ksn(categories=categories, limit_per_category=limit), model=model, log_dir=str(log_dir),
                           display="none", seed=seed)[0]
        if log.status != "success":
            raise RuntimeError(f"inspect eval with {model} failed: {log.error}")
        paths.append(Path(log.location))
    return paths


def run_lmeval(categories: list[str], limit: int, output_path: Path) -> list[Path]:
    """``ub-lm-eval --model M --tasks ub_ksn_<category>,... --limit N --output_path OUT --log_samples``."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    import ub_lmeval
    import ub_lmeval.models  # noqa: F401  (registers ub-oracle and ub-collapse)

    manager = TaskManager(include_path=str(ub_lmeval.tasks_dir()), include_defaults=False)
    written = []
    for model in LMEVAL_MODELS:
        tracker = EvaluationTracker(output_path=str(output_path / model))
        results = simple_evaluate(model=model, tasks=[f"ub_ksn_{c}" for c in categories], limit=limit,
                                  task_manager=manager, log_samples=True, evaluation_tracker=tracker)
        samples = results.pop("samples")
        tracker.save_results_aggregated(results=results, samples=samples)
        for task_name in results["configs"]:
            tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
        written.append(output_path / model)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--categories", default="shuffling,real_world", help="comma-separated ksn categories")
    ap.add_argument("--limit", type=int, default=3, help="problems per category")
    ap.add_argument("--max-histograms", type=int, default=None)
    args = ap.parse_args(argv)
    categories = [c for c in args.categories.split(",") if c]
    run_inspect(categories, args.limit, args.out / "inspect_logs")
    run_lmeval(categories, args.limit, args.out / "lm_eval")

    from ub_core.report import build_report

    res = build_report([args.out / "inspect_logs", args.out / "lm_eval"], args.out / "report",
                       max_histograms=args.max_histograms)
    print(f"report: {res.index} ({len(res.table)} scored samples, {res.skipped} inputs skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
