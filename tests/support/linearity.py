"""Is a reader linear in its input? A complexity check for the hostile-input tests, robust to a shared machine.

Wall time on a loaded machine is noisy: one burst during the long run made a linear reader look 250x slower on 20x
the input (a flaky CI). So the two sizes are timed interleaved (small, big, small, big, ...), each keeps its best
time (load slows both alike), and the verdict is on the ratio: a linear reader takes about ``r`` times as long on
``r`` times the input, a quadratic one ``r**2``; the bound is their geometric middle ``r**1.5``. A long run under
``floor_s`` passes whatever the ratio: the quadratic readers these tests caught took minutes on 200,000
characters, while a linear one's ratio still swings past the bound when a burst of load hits one size. Both sizes should
be large (a quarter and the whole of a long input): a short input stays in the CPU caches and runs several times
faster per character, which reads as superlinear growth (10,000 vs 200,000 characters gave 100x for linear
readers). No speed goal here: speed goals live in benchmarks/.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable


def _took(run: Callable[[Any], Any], arg: Any) -> float:
    t0 = time.perf_counter()
    run(arg)
    return time.perf_counter() - t0


def best_times(run: Callable[[Any], Any], small: Any, big: Any, repeats: int = 3) -> tuple[float, float]:
    """The best of ``repeats`` interleaved timings of ``run(small)`` and ``run(big)``."""
    best_small = best_big = math.inf
    for _ in range(repeats):
        best_small = min(best_small, _took(run, small))
        best_big = min(best_big, _took(run, big))
    return best_small, best_big


def assert_linear(run: Callable[[Any], Any], small: Any, big: Any, size_ratio: float, what: str = "",
                  repeats: int = 3, floor_s: float = 1.0) -> None:
    """``run`` grows about linearly from ``small`` to ``big`` (``size_ratio`` times larger): see the module."""
    t_small, t_big = best_times(run, small, big, repeats)
    bound = size_ratio ** 1.5
    ratio = t_big / max(t_small, 1e-6)
    assert t_big < floor_s or ratio < bound, (
        f"{what}: {t_big:.3f} s vs {t_small:.4f} s on {size_ratio:g}x the input ({ratio:.0f}x; linear ~"
        f"{size_ratio:g}x, quadratic ~{size_ratio ** 2:g}x)")
