"""Time `ub official truth` on 448 synthetic release programs (the release's size) with 2 workers.

Each program is like the release's: it imports numpy, draws 10,000 values and prints them as a list. They are
spread over task folders named as in the release. Goal: under 10 minutes on 2 cores.

    PYTHONPATH=$PWD python benchmarks/bench_official_truth.py [--n 448] [--workers 2]
    PYTHONPATH=$PWD python benchmarks/bench_official_truth.py --codes <release>/ground_truth_codes

``--codes`` times the real release programs instead (not shipped here: clone UnpredictaBench/UnpredictaBenchCode).
Measured on this project's 2-core machine, with a test run competing for the cores: the 448 release programs in
8 min 49 s (one program, ``8a1b8134``, prints 1,000 values and is reported as failed under the default
``--n-values 10000``); the synthetic set runs faster because its programs are single vectorised calls.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FOLDERS = ["textual_explicit_concentrated_gpt-5.4", "textual_explicit_spread_out_gpt-5.4",
           "textual_implicit_concentrated_gpt-5.4", "textual_implicit_spread_out_gpt-5.4",
           "code_explicit_concentrated_gpt-5.4", "code_explicit_spread_out_gpt-5.4",
           "code_implicit_concentrated_gpt-5.4", "code_implicit_spread_out_gpt-5.4",
           "textual_multimodal_explicit_concentrated_gpt-5.4", "textual_multimodal_explicit_spread_out_gpt-5.4",
           "realworld_human", "shuffling_human"]

DRAWS = [
    "print(np.random.default_rng().normal({a}, {b}, 10000).tolist())",
    "print(np.random.default_rng().poisson({b}, 10000).tolist())",
    "print(np.random.default_rng().gamma({b}, {a}, 10000).tolist())",
    "print([str(x) for x in np.random.default_rng().choice(['A', 'B', 'C'], 10000)])",
    "rng = np.random.default_rng()\nprint([rng.permutation([1, 2, 3, 4]).tolist() for _ in range(10000)])",
    "print(list(np.random.default_rng().uniform({a}, {a} + {b}, 10000)))",  # np.float64(...) reprs
]


def write_programs(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / "ground_truth_codes" / FOLDERS[i % len(FOLDERS)]
        folder.mkdir(parents=True, exist_ok=True)
        body = DRAWS[i % len(DRAWS)].format(a=i % 7 + 1, b=i % 5 + 1)
        (folder / f"bench-{i:04d}.py").write_text("import numpy as np\n" + body + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=448)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--codes", type=Path, help="a release's ground_truth_codes folder to time instead")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ub-bench-truth-") as tmp:
        root = Path(tmp)
        if args.codes is not None:
            import shutil

            shutil.copytree(args.codes, root / "ground_truth_codes")
            args.n = sum(1 for _ in (root / "ground_truth_codes").glob("*/*.py"))
        else:
            write_programs(root, args.n)
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(root),
                               "--out", str(root / "out"), "--trust-release-code", "--workers", str(args.workers),
                               "--no-progress"], capture_output=True, text=True)
        elapsed = time.monotonic() - t0
        if proc.returncode != 0 and args.codes is None:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            return 1
        n_uids = sum(len(json.loads(p.read_text())) for p in (root / "out").glob("*/ground_truth_values.json"))
        t1 = time.monotonic()
        proc2 = subprocess.run([sys.executable, "-m", "ub_core.cli", "official", "truth", "--codes", str(root),
                                "--out", str(root / "out"), "--trust-release-code", "--no-progress"],
                               capture_output=True, text=True)
        resume = time.monotonic() - t1
    print(f"ub official truth: {args.n} programs on {args.workers} workers in {elapsed:.1f} s "
          f"({elapsed / args.n * 1000:.0f} ms per program; goal < 600 s); {n_uids} uids written")
    print(f"resume run (all done, nothing re-run): {resume:.1f} s, rc={proc2.returncode}")
    return 0 if n_uids == args.n or args.codes is not None else 1


if __name__ == "__main__":
    sys.exit(main())
