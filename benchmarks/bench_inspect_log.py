"""Size of an Inspect KS@N log and the time to read its header, printed (not a test).

Runs ``inspect eval ub_inspect/ksn --model ub/oracle`` on every problem (448) unless ``--log`` names an existing
``.eval`` log, then prints the file size, bytes per problem, the uncompressed header and its read time
(``read_eval_log(header_only=True)``, median of 5 reads after one warm-up read).

Usage: python benchmarks/bench_inspect_log.py [--log LOG.eval] [--limit-per-category N]
Goal: at most 10 KB per problem.

Measured on the 448-problem oracle log (2 shared CPU cores, inspect-ai 0.3.285): 3.6 MB, 8.1 KB per problem,
header.json 18 KB, header read 0.023-0.026 s; ``inspect log convert --to json``: 38.5 MB. The bank is kept out of
every solver and scorer argument: Inspect writes the arguments into the header and every score event, and with the
bank in them the same log is 34.4 MB (76.7 KB per problem, header.json 8.4 MB, header read 0.7-1.4 s, 454 MB as JSON).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path


def _header_bytes(path: Path) -> int:
    with zipfile.ZipFile(path) as z:  # the listing needs no decompression
        return z.getinfo("header.json").file_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", default=None, help="measure this .eval log instead of running one")
    ap.add_argument("--limit-per-category", type=int, default=None, help="a smaller run (default: all 448)")
    args = ap.parse_args()
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    if args.log:
        path = Path(args.log)
    else:
        from ub_inspect.ksn import ksn

        log = inspect_eval(ksn(limit_per_category=args.limit_per_category), model="ub/oracle", display="none",
                           log_dir=tempfile.mkdtemp(prefix="ub-bench-log-"), seed=0)[0]
        if log.status != "success":
            raise SystemExit(f"the run failed: {log.error}")
        path = Path(log.location)
    read_eval_log(str(path), header_only=True)  # warm-up: imports, file cache
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        head = read_eval_log(str(path), header_only=True)
        times.append(time.perf_counter() - t0)
    n = head.results.total_samples if head.results else 0
    size = path.stat().st_size
    print(f"log           {path}")
    print(f"problems      {n}")
    print(f".eval size    {size / 1e6:.2f} MB ({size / max(n, 1) / 1e3:.1f} KB per problem; goal <= 10 KB)")
    print(f"header.json   {_header_bytes(path) / 1e3:.0f} KB uncompressed")
    print(f"header read   {statistics.median(times):.3f} s (median of 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
