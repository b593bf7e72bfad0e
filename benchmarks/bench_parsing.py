"""Worst-case speed of the reply parsers on hostile text, printed as a table (not a test).

Every public parse function of ``ub_core.parsing`` is timed on adversarial reply shapes (the ones that make a
backtracking regular expression quadratic, plus other hostile shapes) at 10,000 and
200,000 characters (200,000 = ``MAX_CHARS``, the longest reply a parser looks at).  Each timing is the best of
``--repeats`` runs in a child process that is killed after ``--cap`` seconds (shown as ``>cap``), so a
quadratic parser cannot hang the benchmark.  The last column is time(200k) / time(10k): about 20 for a linear
parser, about 400 for a quadratic one.

Usage: python benchmarks/bench_parsing.py [--sizes 10000 200000] [--cap 10] [--repeats 3] [--shape NAME ...]
Goals (2-core machine): every parse <= 50 ms at 10,000 characters and <= 1 s at 200,000 characters.
To time another copy of the code (e.g. another parser), put its root first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from typing import Callable

GOALS = {10_000: 0.05, 200_000: 1.0}  # seconds per parse


def _fill(head: str, tail: str, n: int, pad: str = " ") -> str:
    """``head + pad * k + tail`` with k chosen so the text is ``n`` characters long."""
    k = max(0, (n - len(head) - len(tail)) // len(pad))
    return head + pad * k + tail


def _repeat(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


#: name -> builder(n) giving a text of about n characters: the five backtracking shapes first, then variants
#: ("{<digits>" was found by the adversarial search in tests/generic/test_parsing.py) and other hostile replies.
SHAPES: dict[str, Callable[[int], str]] = {
    "1 x 10^<sp>x": lambda n: _fill("1 x 10^", "x", n),
    "10^<sp>": lambda n: _fill("10^", "", n),
    "no.<sp>x": lambda n: _fill("no.", "x", n),
    "#<sp>": lambda n: _fill("#", "", n),
    "#<sp>x": lambda n: _fill("#", "x", n),
    "{1}<sp>x{2}": lambda n: _fill("{1}", "x{2}", n),
    "2 ** <sp>x": lambda n: _fill("2 ** ", "x", n),
    "1 \\times 10^{<tab>x": lambda n: _fill("1 \\times 10^{", "x", n, "\t"),
    "Sample<sp>#<sp>1<sp>x": lambda n: "Sample" + " " * (n // 3) + "#" + " " * (n // 3) + "1" + " " * (n // 3) + "x",
    "{<digits>": lambda n: _fill("{", "", n, "1"),
    "{<digits> }x": lambda n: _fill("{", " }x", n, "1"),
    "1/<sp>x": lambda n: _fill("1/", "x", n),
    "answer<sp>is<sp>": lambda n: "The answer" + " " * (n // 2) + "is" + " " * (n // 2),
    "<answer<sp>x": lambda n: _fill("<", "answer x", n),
    "digits": lambda n: "1" * n,
    "1,234,... 5": lambda n: _fill("1", "5", n, ",234"),
    "1 234 ... 5 (thin sp)": lambda n: _fill("1", "5", n, "\u2009234"),
    "{1} repeated": lambda n: _repeat("{1} ", n),
    "{ repeated": lambda n: "{" * n,
    "[[..]] nested": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "lines of 1": lambda n: _repeat("1\n", n),
    "1. x lines": lambda n: _repeat("1. x\n", n),
    "<answer> repeated": lambda n: _repeat("<answer>", n),
    '{"answer": repeated': lambda n: _repeat('{"answer": ', n),
    "``` repeated": lambda n: _repeat("```", n),
    "\\frac{1}{ repeated": lambda n: _repeat("\\frac{1}{", n),
    "nan repeated": lambda n: _repeat("nan ", n),
    "heads repeated": lambda n: _repeat("heads ", n),
    "mixed pieces": lambda n: _repeat("{1} x 10^ no. # , - e ' \" \n", n),
}

OPTIONS = ["heads", "tails up", "A"]
ITEMS = ["1", "2", "apple"]


def _functions() -> dict[str, Callable[[str], object]]:
    from ub_core import parsing as P

    return {
        "find_numbers": P.find_numbers,
        "extract_answer": P.extract_answer,
        "parse_number": P.parse_number,
        "parse_number_list": P.parse_number_list,
        "parse_option": lambda s: P.parse_option(s, OPTIONS),
        "parse_permutation": lambda s: P.parse_permutation(s, ITEMS),
    }


def _child(conn, shape: str, fname: str, n: int, repeats: int) -> None:
    fn = _functions()[fname]
    text = SHAPES[shape](n)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
        if best > 1.0:  # slow enough that one run says it all
            break
    conn.send(best)


def _timed(shape: str, fname: str, n: int, repeats: int, cap: float) -> float | None:
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, shape, fname, n, repeats))
    proc.start()
    proc.join(cap)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None
    return recv.recv() if recv.poll() else None


def _fmt(t: float | None, cap: float) -> str:
    if t is None:
        return f">{cap:g} s"
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 200_000])
    ap.add_argument("--cap", type=float, default=10.0, help="seconds before a run is killed")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--shape", nargs="*", default=None, help="only these shapes (names as printed)")
    args = ap.parse_args()

    import ub_core.parsing

    print(f"ub_core.parsing from {ub_core.parsing.__file__}")
    shapes = [s for s in SHAPES if not args.shape or s in args.shape]
    fnames = list(_functions())
    head = f"{'shape':24s} {'function':18s}" + "".join(f"{n:>12,d}" for n in args.sizes)
    if len(args.sizes) == 2:
        head += f"{'ratio':>8s}"
    print(head)
    print("-" * len(head))
    worst: dict[int, tuple[float, str]] = {n: (0.0, "") for n in args.sizes}
    for shape in shapes:
        for fname in fnames:
            row = []
            for n in args.sizes:
                t = _timed(shape, fname, n, args.repeats, args.cap)
                row.append(t)
                key = float("inf") if t is None else t
                if key >= worst[n][0]:
                    worst[n] = (key, f"{shape} / {fname}")
            line = f"{shape:24s} {fname:18s}" + "".join(f"{_fmt(t, args.cap):>12s}" for t in row)
            if len(row) == 2:
                a, b = row
                line += f"{(b / a if a and b else float('nan')):>8.1f}" if a and b else f"{'-':>8s}"
            print(line, flush=True)
    print()
    status = 0
    for n in args.sizes:
        t, where = worst[n]
        goal = GOALS.get(n)
        verdict = "" if goal is None else ("  ok" if t <= goal else f"  ABOVE GOAL ({goal * 1e3:g} ms)")
        shown = _fmt(None if t == float("inf") else t, args.cap)
        print(f"worst at {n:,d} characters: {shown} ({where}){verdict}")
        if goal is not None and t > goal:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
