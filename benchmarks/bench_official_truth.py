"""Time `ub official truth` on 448 release programs in the jail, the jail's cost per program, and the parent's
peak memory on output floods.

By default the programs are 448 synthetic ones like the release's (each imports numpy, draws 10,000 values and
prints them as a list), spread over the release's task folders; ``--codes`` times a release's own programs
(``UnpredictaBench/UnpredictaBenchCode``'s ``ground_truth_codes``, not shipped here). Goal: the jailed run under
10 minutes on 2 cores.

    PYTHONPATH=$PWD python benchmarks/bench_official_truth.py [--n 448] [--workers 2]
    PYTHONPATH=$PWD python benchmarks/bench_official_truth.py --codes <release>/ground_truth_codes [--no-cgroups]

Printed:

- the jailed run (bubblewrap, whole-program limits) of all the programs;
- the jail's cost per program, paired: each program run jailed and unjailed back to back (in alternating order, on
  the same workers), the difference of the two wall times; median and worst over the programs. The machine is
  shared, so single differences are noisy (the worst mostly measures a neighbour's burst); the median is the figure;
- a resume run (everything done and verified: nothing runs);
- the peak resident memory (``VmHWM``) of a whole ``ub official truth`` process that runs one program printing a 4 MB
  and one printing a 64 MB list (the issue measured 2 GB for 4 MB before the stream was counted), beside one
  printing a normal 10,000-value list and one printing the most a valid list may hold (10,000 labels of 1,500
  characters). The goal is under 300 MB.

Measured on this project's shared 2-core machine (its load average 4 to 9 from other work), the release's 448
programs (``8a1b8134`` prints 1,000 values and fails under the default ``--n-values 10000``; 447 written):

- as root, whole-program limits by cgroup v1: jailed run 112.4 s; jail cost per program median 18 ms, worst
  666 ms, for a median program of 260 ms unjailed; resume 6.6 s;
- ``--no-cgroups`` (what an ordinary user gets: rlimits and the watchdog), at a higher load: jailed run 191.3 s;
  jail cost per program median 36 ms, worst 612 ms, for a median program of 349 ms unjailed; resume 9.9 s;
- parent peak: 106 MB on a normal program, 112 MB on the 4 MB flood, 112 MB on the 64 MB flood, 176 MB on the
  largest valid output (the runner before the jail peaked at 943 MB on the 4 MB flood).

The worst costs are single programs slowed by the machine's other work, not the jail: the median is the cost.

Measured as root with cgroup v1 limits (load average about 2 to 3), the 448 synthetic programs: jailed run 63.2 s
(141 ms per program), jail cost per program median 26 ms (worst 207 ms) for a median program of 200 ms unjailed,
resume 6.6 s, all 448 written; parent peaks 109 to 179 MB. The seccomp filter, the read-only ``/proc``, the ``--out``
lock and the fsync'd writes cost nothing measurable (bwrap loads a BPF program of 254 instructions once per program):
runs with and without them back to back (load about 4) gave a jail cost median of 29 ms with them (worst 550 ms)
and 42 ms without (worst 504 ms), resume 13.7 s and 13.8 s, parent peaks unchanged.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ub_core.release_tools.official_truth import Limits, build_truth  # noqa: E402

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

# the whole `ub` process, its peak resident memory read from its own /proc/self/status at the end (ru_maxrss would
# also count the process it was started from, which the kernel carries over at exec)
_PEAK = ("import sys\nfrom ub_core.cli import main\nrc = main(sys.argv[1:])\n"
         "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1]\n"
         "print('PEAK_KB', hwm, file=sys.stderr)\nsys.exit(rc)\n")


def write_programs(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / "ground_truth_codes" / FOLDERS[i % len(FOLDERS)]
        folder.mkdir(parents=True, exist_ok=True)
        body = DRAWS[i % len(DRAWS)].format(a=i % 7 + 1, b=i % 5 + 1)
        (folder / f"bench-{i:04d}.py").write_text("import numpy as np\n" + body + "\n")


def paired_cost(root: Path, workers: int, limits: Limits,
                cgroups: bool | None) -> tuple[list[float], dict[bool, list[float]]]:
    """Each program run jailed and unjailed back to back: the per-program differences, and the times."""
    from concurrent.futures import ThreadPoolExecutor

    from ub_core.release_tools.jail import prepare
    from ub_core.release_tools.official_truth import find_programs, run_program

    sandboxes = {True: prepare(jail=True, cgroups=cgroups), False: prepare(jail=False, cgroups=cgroups)}

    def pair(item):
        i, job = item
        took = {}
        for jail in ((True, False) if i % 2 else (False, True)):
            took[jail] = run_program(job, limits, sandbox=sandboxes[jail]).seconds
        return took

    with ThreadPoolExecutor(workers) as pool:
        pairs = list(pool.map(pair, enumerate(find_programs(root))))
    return [p[True] - p[False] for p in pairs], {j: [p[j] for p in pairs] for j in (True, False)}


def parent_peak_mb(tmp: Path, name: str, program: str) -> tuple[float, str]:
    """Peak resident memory of a `ub official truth` process running one program, and its last stdout line."""
    codes = tmp / f"peak-{name}" / "ground_truth_codes" / FOLDERS[0]
    codes.mkdir(parents=True)
    (codes / f"{name}.py").write_text(program)
    proc = subprocess.run([sys.executable, "-c", _PEAK, "official", "truth", "--codes", str(codes.parent.parent),
                           "--out", str(tmp / f"peak-{name}" / "out"), "--trust-release-code", "--no-progress"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    kb = int(proc.stderr.split("PEAK_KB")[1].split()[0])
    last = proc.stdout.strip().splitlines()[-1].strip()
    return kb / 1024, last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=448)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--codes", type=Path, help="a release's ground_truth_codes folder to time instead")
    ap.add_argument("--no-compare", action="store_true", help="skip the paired runs (no cost per program)")
    ap.add_argument("--no-cgroups", action="store_true",
                    help="whole-program limits without cgroups, as an ordinary user gets them (rlimits + watchdog)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ub-bench-truth-") as tmp:
        root = Path(tmp)
        if args.codes is not None:
            shutil.copytree(args.codes, root / "ground_truth_codes")
            args.n = sum(1 for _ in (root / "ground_truth_codes").glob("*/*.py"))
            what = f"the release's {args.n} programs ({args.codes})"
        else:
            write_programs(root, args.n)
            what = f"{args.n} synthetic release-like numpy programs"
        limits = Limits()
        cgroups = False if args.no_cgroups else None
        t0 = time.monotonic()
        s = build_truth(root, root / "out", trust_release_code=True, workers=args.workers, limits=limits,
                        progress=False, log=lambda line: None, cgroups=cgroups)
        took = time.monotonic() - t0
        print(f"jailed: {what} on {args.workers} workers in {took:.1f} s ({took / args.n * 1000:.0f} ms per "
              f"program; goal < 600 s); {s.ok} written, {len(s.failed)} failed; {s.sandbox}")
        for f in s.failed[:5]:
            print(f"    failed {f.line()}")
        if not args.no_compare:
            cost, times = paired_cost(root, args.workers, limits, cgroups)
            print(f"jail cost per program (paired: jailed minus unjailed wall time of the same program run back to "
                  f"back, {len(cost)} programs): median {statistics.median(cost) * 1000:.0f} ms, "
                  f"worst {max(cost) * 1000:.0f} ms; median program {statistics.median(times[False]) * 1000:.0f} ms "
                  f"unjailed, {statistics.median(times[True]) * 1000:.0f} ms jailed")
        t1 = time.monotonic()
        s = build_truth(root, root / "out", trust_release_code=True, workers=args.workers, limits=limits,
                        progress=False, cgroups=cgroups)
        print(f"resume run (all done and verified, nothing re-run): {time.monotonic() - t1:.1f} s, "
              f"{s.skipped} skipped, {s.ok} run")
        for name, program in [
            ("normal", "import numpy as np\nprint(np.random.default_rng(1).normal(0, 1, 10000).tolist())\n"),
            ("flood-4mb", "import sys\nsys.stdout.write('[' + '1.0, ' * 800000 + '1.0]\\n')\n"),
            ("flood-64mb", "import sys\nw = sys.stdout.write\nw('[')\nfor _ in range(256):\n"
                           "    w('1.0, ' * 52428)\nw('1.0]\\n')\n"),
            # the most a valid output may hold: 10,000 labels of 1,500 characters (15 MB)
            ("labels-15mb", "print(['%04d' % i + 'x' * 1496 for i in range(10000)])\n"),
        ]:
            mb, last = parent_peak_mb(root, name, program)
            print(f"parent peak memory, one program printing {name}: {mb:.0f} MB (goal < 300 MB) [{last}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
