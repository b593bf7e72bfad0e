"""The interval hunter: every interval, standard error, MDE and p-value the package prints, simulated with fixed seeds
on the same grid of cells, and a scan that fails when ub_core grows one this suite does not know.

Cells: n in {1, 3, 20, 100, 448} problems; spreads exactly 0, round-off (values equal in exact arithmetic, not in
floats), small (an SD of 0.03 on [0, 1], usual for KS distance or JSD) and large; bounded ([0, 1]) and open ranges.
Every cell asserts, where the procedure gives an interval: it lies inside the range, has positive width, contains
the estimate, and agrees with its p-value (p < 0.05 exactly when it excludes 0); the MDE is finite and > 0. Where
the data vary, coverage of the true value lies within 4 binomial standard errors of 0.95 (sqrt(0.95 * 0.05 / R) for
R replications: a false alarm about once in 16,000 checks; the seeds are fixed, so a run is reproducible); where
they do not, the interval is the floor's and covers the truth every time. Discrete procedures (Tango, Wilson,
Clopper-Pearson) are exact by enumeration where the outcome space is small, and bounded below only at small n, where
discreteness makes them conservative.

``python -m pytest tests/generic/test_interval_hunter.py -s`` prints coverage and power per cell."""

from __future__ import annotations

import ast
import math
import re
import zlib
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ub_core.logprob.number_cells import clopper_pearson
from ub_core.metrics.intervals import (
    clustered_interval,
    floored_interval,
    stratified_stderr,
    summarize_rate,
    summarize_values,
    wilson_interval,
)
from ub_core.metrics.paired import (
    mcnemar_exact,
    mcnemar_score,
    minimum_detectable_effect,
    paired_difference,
    sampling_noise_removed,
    tango_interval,
)

NS = (1, 3, 20, 100, 448)
UNIT = (0.0, 1.0)
Z_MC = 4.0  # binomial standard errors allowed around a simulated rate


def _seed(*key) -> int:
    """A fixed seed per cell (Python's str hash is salted per process)."""
    return zlib.crc32(repr(key).encode())


def _band(rate: float, reps: int) -> float:
    return Z_MC * math.sqrt(rate * (1 - rate) / reps)


def _reps(n: int) -> int:
    # the cells that matter most for CI time are the large ones; 2000 replications give a band of +/- 0.0195
    return 2000 if n <= 100 else 1500


ROWS: list[str] = []  # the per-cell table printed at the end (pytest -s)


def _row(proc: str, cell: str, cov: float | None, power: float | None, reps: int, extra: str = "") -> None:
    c = "  -  " if cov is None else f"{cov:.3f}"
    p = "  -  " if power is None else f"{power:.3f}"
    ROWS.append(f"{proc:22s} {cell:34s} coverage {c}  reject {p}  R={reps:<5d} {extra}")


# =============================================================================================== data per cell

def _paired_cell(spread: str, bounded: bool, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(a, b, true mean difference) for one replication of a paired cell."""
    if spread == "zero":
        b = rng.uniform(0.1, 0.6, n) if bounded else rng.normal(0, 3, n)
        return b.copy(), b, 0.0
    if spread == "roundoff":  # a_i - b_i is 0.3 in exact arithmetic, 0.3 +/- a few ulps in floats
        b = rng.uniform(0.05, 0.6, n) if bounded else rng.normal(0, 3, n) * 10.0 ** rng.integers(-3, 4)
        return b + 0.3, b, 0.3
    if spread == "small":  # SD of the differences 0.03 (the reported case at n = 448)
        b = rng.uniform(0.3, 0.7, n)
        return b + rng.normal(0.004, 0.03, n), b, 0.004
    if bounded:  # large, skewed, on [0, 1]
        return rng.beta(2, 3, n), rng.beta(2, 2, n), 0.4 - 0.5
    mu = rng.normal(0, 1, n)
    return mu + rng.normal(0.2, 1, n), mu + rng.normal(0, 1, n), 0.2


def _check_interval(res: dict, lo_end: float, hi_end: float) -> None:
    lo, hi, p = res["ci_low"], res["ci_high"], res["p_value"]
    assert lo_end <= lo <= res["diff"] <= hi <= hi_end, res
    assert hi > lo, res
    assert 0 < p <= 1, res
    assert res["mde"] is not None and math.isfinite(res["mde"]) and res["mde"] > 0, res
    if min(abs(lo), abs(hi)) > 1e-9 and abs(p - 0.05) > 1e-9:
        assert (p < 0.05) == (lo > 0 or hi < 0), res


PAIRED_CELLS = [(s, bd, n) for s in ("zero", "roundoff", "small", "large") for bd in (True, False) for n in NS]


@pytest.mark.parametrize("spread, bounded, n", PAIRED_CELLS,
                         ids=[f"{s}-{'bounded' if b else 'open'}-n{n}" for s, b, n in PAIRED_CELLS])
def test_paired_t(spread, bounded, n):
    reps = _reps(n) if spread in ("small", "large") and n >= 3 else 200
    rng = np.random.default_rng(_seed("paired", spread, bounded, n))
    covered = rejected = floored = said_nothing = 0
    for rep in range(reps):
        a, b, truth = _paired_cell(spread, bounded, n, rng)
        res = paired_difference(a, b, bounds=UNIT if bounded else None)
        if n == 1:  # one non-binary pair: no spread to measure, and it says so
            assert res["test"].startswith("none") and res["ci_low"] is None and res["p_value"] is None
            said_nothing += 1
            continue
        _check_interval(res, -1.0 if bounded else -math.inf, 1.0 if bounded else math.inf)
        covered += res["ci_low"] <= truth <= res["ci_high"]
        rejected += res["p_value"] < 0.05
        floored += res["se_basis"] == "floor"
        if res["se_basis"] == "observed" and rep < 25:  # the printed p is the paired t's (scipy's, independently)
            assert res["p_value"] == pytest.approx(max(stats.ttest_rel(a, b).pvalue, 2.2e-308), rel=1e-6, abs=1e-300)
    if n == 1:
        _row("paired t", f"{spread} {'[0,1]' if bounded else 'open'} n={n}", None, None, reps, "none (one pair)")
        return
    cov, power = covered / reps, rejected / reps
    if spread in ("zero", "roundoff"):
        assert floored == reps and cov == 1.0, (floored, cov)  # the floor stands in, and only here
    else:
        assert floored == 0
        assert abs(cov - 0.95) <= _band(0.95, reps), cov
    extra = "floor" if floored else "observed SE"
    if spread == "small":
        sd, eff = 0.03, 0.004
        df, nc = n - 1, eff / (sd / math.sqrt(n))
        crit = stats.t.ppf(0.975, df)
        expect = float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))
        assert abs(power - expect) <= _band(max(expect, 0.05), reps) + 1e-3, (power, expect)
        extra += f", paired-t power {expect:.3f}"
    _row("paired t", f"{spread} {'[0,1]' if bounded else 'open'} n={n}", cov, power, reps, extra)


# =============================================================================================== clustered

@pytest.mark.parametrize("n, k", [(20, 10), (100, 10), (448, 10), (448, 40)])
def test_clustered_paired_t(n, k):
    """Differences correlated within clusters (ICC 0.5): the cluster-robust SE with t on C - 1 df."""
    reps = _reps(n)
    rng = np.random.default_rng(n * 100 + k)
    clusters = np.arange(n) % k
    covered = rejected = 0
    for _ in range(reps):
        d = rng.normal(0, 0.3, k)[clusters] + rng.normal(0.1, 0.3, n)
        res = paired_difference(d, np.zeros(n), clusters)
        assert res["clustered"] and res["se_basis"] == "clustered"
        _check_interval(res, -math.inf, math.inf)
        covered += res["ci_low"] <= 0.1 <= res["ci_high"]
        rejected += res["p_value"] < 0.05
    cov = covered / reps
    assert abs(cov - 0.95) <= _band(0.95, reps), cov
    _row("clustered paired t", f"ICC 0.5, {k} clusters n={n}", cov, rejected / reps, reps)


# =============================================================================================== pass/fail

def _tango_coverage(n: int, p10: float, p01: float) -> tuple[float, float]:
    """Exact coverage of Tango's interval and rejection rate of the McNemar score test, by enumerating the
    multinomial (n10, n01, rest)."""
    delta = p10 - p01
    cov = rej = 0.0
    pm = stats.multinomial(n, [p10, p01, 1 - p10 - p01])
    for n10 in range(n + 1):
        for n01 in range(n - n10 + 1):
            w = pm.pmf([n10, n01, n - n10 - n01])
            if w < 1e-15:
                continue
            lo, hi = _tango(n10, n01, n)
            cov += w * (lo <= delta <= hi)
            rej += w * (lo > 0 or hi < 0)
    return cov, rej


@cache
def _tango(n10: int, n01: int, n: int) -> tuple[float, float]:
    return tango_interval(n10, n01, n)


@pytest.mark.parametrize("n", NS)
def test_tango_mcnemar(n):
    rng = np.random.default_rng(n)
    # zero spread: every pair concordant, or every pair discordant one way
    for a, b in (([1.0] * n, [1.0] * n), ([0.0] * n, [0.0] * n), ([1.0] * n, [0.0] * n)):
        res = paired_difference(a, b, bounds=UNIT)
        assert res["test"] == "McNemar score (Tango interval)"
        _check_interval(res, -1.0, 1.0)
        assert res["se_basis"] == "floor"
    # varying: random tables agree with their p-value, and the p is the score test's
    for _ in range(200):
        u = rng.random(n)
        a, b = (u < 0.15).astype(float), ((u >= 0.15) & (u < 0.2)).astype(float)
        res = paired_difference(a, b, bounds=UNIT)
        _check_interval(res, -1.0, 1.0)
        assert res["p_value"] == mcnemar_score(a, b)
    if n > 100:  # exact enumeration is O(n^2) tables: simulate the largest cell
        reps, covered, rejected = 1500, 0, 0
        for _ in range(reps):
            u = rng.random(n)
            res = paired_difference((u < 0.15).astype(float), ((u >= 0.15) & (u < 0.2)).astype(float), bounds=UNIT)
            covered += res["ci_low"] <= 0.1 <= res["ci_high"]
            rejected += res["p_value"] < 0.05
        cov, power = covered / reps, rejected / reps
        assert abs(cov - 0.95) <= _band(0.95, reps), cov
    else:
        reps = 0
        cov, power = _tango_coverage(n, 0.15, 0.05)
        # discrete: conservative at small n, never below nominal by more than the score interval's known dips
        assert cov >= 0.93, cov
        if n >= 100:
            assert cov <= 0.97, cov
        null_cov, null_rej = _tango_coverage(n, 0.1, 0.1)
        assert null_rej <= 0.05 + 0.01, null_rej  # the level of the McNemar score test
        _row("Tango/McNemar", f"p10=p01=0.1 (null) n={n}", null_cov, null_rej, 0, "exact")
    _row("Tango/McNemar", f"p10=.15 p01=.05 n={n}", cov, power, reps, "exact" if not reps else "")


def test_mcnemar_exact_holds_its_level():
    """The exact conditional test: P(p <= 0.05 | m discordant pairs, H0) <= 0.05 for every m, by enumeration."""
    worst = 0.0
    for m in range(1, 80):
        level = sum(stats.binom.pmf(k, m, 0.5) for k in range(m + 1)
                    if mcnemar_exact([1.0] * k + [0.0] * (m - k), [0.0] * k + [1.0] * (m - k)) <= 0.05)
        assert level <= 0.05 + 1e-12, (m, level)
        worst = max(worst, level)
    _row("McNemar exact", "null, m = 1..79 discordant", None, worst, 0, "exact, worst level")


# =============================================================================================== MDE

@pytest.mark.parametrize("n", (20, 100, 448))
def test_power_at_the_printed_mde(n):
    """A true difference equal to the MDE of the population's SE (2.80 sigma / sqrt(n)) is detected with the power
    the paired t has there (0.80 as n grows; a little less at n = 20, t against z)."""
    reps, sd = _reps(n), 0.2
    eff = minimum_detectable_effect(sd / math.sqrt(n))
    rng = np.random.default_rng(n + 7)
    rejected = 0
    for _ in range(reps):
        b = rng.normal(0, 1, n)
        rejected += paired_difference(b + rng.normal(eff, sd, n), b)["p_value"] < 0.05
    df, nc = n - 1, math.sqrt(n) * eff / sd
    crit = stats.t.ppf(0.975, df)
    expect = float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))
    assert abs(rejected / reps - expect) <= _band(expect, reps), (rejected / reps, expect)
    _row("MDE", f"effect = MDE, SD 0.2 n={n}", None, rejected / reps, reps, f"paired-t power {expect:.3f}")


# =============================================================================================== one run's mean

def _single_cell(spread: str, bounded: bool, n: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    if spread == "zero":
        return np.full(n, 0.3 if bounded else 12.5), 0.3 if bounded else 12.5
    if spread == "roundoff":  # 0.3 in exact arithmetic
        b = rng.uniform(0.05, 0.6, n) * (1 if bounded else 1000)
        return (b + 0.3) - b, 0.3
    if spread == "small":
        return rng.normal(0.5, 0.03, n), 0.5
    if bounded:
        return rng.beta(2, 3, n), 0.4
    return rng.normal(3, 2, n), 3.0


SINGLE_CELLS = [(s, bd, n) for s in ("zero", "roundoff", "small", "large") for bd in (True, False) for n in NS]


@pytest.mark.parametrize("spread, bounded, n", SINGLE_CELLS,
                         ids=[f"{s}-{'bounded' if b else 'open'}-n{n}" for s, b, n in SINGLE_CELLS])
def test_mean_interval(spread, bounded, n):
    """``summarize_values`` (the ``ub score`` means, wdz/jsd) and ``clustered_interval`` (calibration PM/WD/RE,
    implicit, the report's clustered means) with every value its own cluster, and with 10 clusters."""
    varying = spread in ("small", "large") and n >= 3
    reps = _reps(n) if varying else 100
    rng = np.random.default_rng(_seed("single", spread, bounded, n))
    bounds = UNIT if bounded else None
    covered = said_nothing = 0
    for _ in range(reps):
        x, truth = _single_cell(spread, bounded, n, rng)
        s = summarize_values(x, bounds=bounds)
        lo, hi = s["low"], s["high"]
        ci = clustered_interval(x, np.arange(n) % 10, bounds=bounds) if n >= 10 else clustered_interval(
            x, np.arange(n), bounds=bounds)
        if not varying and not bounded:  # no spread on an open range: nothing can be said, and it says so
            assert (lo, hi) == (None, None) and ci == (None, None), (lo, hi, ci)
            said_nothing += 1
            continue
        for low, high in ((lo, hi), ci):
            assert low < high, (low, high)
            assert low - 1e-12 <= s["mean"] <= high + 1e-12
            if bounded:
                assert 0.0 <= low and high <= 1.0
        covered += lo <= truth <= hi
    if said_nothing:
        _row("mean interval", f"{spread} {'[0,1]' if bounded else 'open'} n={n}", None, None, reps, "none (no spread)")
        return
    cov = covered / reps
    if varying:
        assert abs(cov - 0.95) <= _band(0.95, reps), cov
    else:
        assert cov == 1.0, cov  # the floor's interval around values without spread
    _row("mean interval", f"{spread} {'[0,1]' if bounded else 'open'} n={n}", cov, None, reps,
         "t interval" if varying else "floor")


@pytest.mark.parametrize("n", (20, 100, 448))
def test_clustered_mean_interval_covers(n):
    reps, k = _reps(n), 10
    rng = np.random.default_rng(n + 11)
    clusters = np.arange(n) % k
    covered = 0
    for _ in range(reps):
        x = rng.normal(0, 0.3, k)[clusters] + rng.normal(0.5, 0.3, n)
        lo, hi = clustered_interval(x, clusters)
        covered += lo <= 0.5 <= hi
    cov = covered / reps
    assert abs(cov - 0.95) <= _band(0.95, reps), cov
    _row("clustered mean", f"ICC 0.5, 10 clusters n={n}", cov, None, reps)


def test_floored_interval_is_in_range_and_never_zero_width():
    for n in NS:
        for m in (0.0, 0.3, 1.0):
            lo, hi = floored_interval(m, m, m, n, UNIT)
            assert 0.0 <= lo <= m <= hi <= 1.0 and hi > lo


@pytest.mark.parametrize("n", (20, 100, 448))
def test_stratified_stderr(n):
    """A mean pooled over 3 fixed strata of unequal sizes and spreads (Inspect's pooled stderr, lm-eval's group
    stderr): the mean of SE^2 over replications matches the variance of the pooled mean within its Monte-Carlo
    error; mean +/- 1.96 SE covers at 0.95 once the strata are large (at n = 20 the strata of 4 and 6 values leave
    the SE few degrees of freedom, so a z interval on it under-covers: reported, not asserted)."""
    sizes = [n // 2, n // 3, n - n // 2 - n // 3]
    mus, sds = (0.2, 0.5, 0.8), (0.05, 0.2, 0.1)
    truth = sum(s * m for s, m in zip(sizes, mus)) / n
    true_var = sum(s * sd * sd for s, sd in zip(sizes, sds)) / n ** 2
    reps, covered = _reps(n), 0
    rng = np.random.default_rng(n + 13)
    se2 = []
    for _ in range(reps):
        groups = [rng.normal(m, sd, s) for m, sd, s in zip(mus, sds, sizes)]
        se = stratified_stderr([g.std(ddof=1) / math.sqrt(g.size) for g in groups], sizes)
        assert se > 0
        se2.append(se * se)
        covered += abs(float(np.concatenate(groups).mean()) - truth) <= stats.norm.ppf(0.975) * se
    cov = covered / reps
    # E[SE^2] = sum_k (n_k - 1) sigma_k^2 / (N - K) / N: the pooled within-stratum variance, equal to the true
    # variance sum_k n_k sigma_k^2 / N^2 when the strata share one; here they do not, so compare with that formula
    pooled = sum((s - 1) * sd * sd for s, sd in zip(sizes, sds)) / (n - 3) / n
    assert abs(np.mean(se2) - pooled) <= Z_MC * np.std(se2) / math.sqrt(reps), (np.mean(se2), pooled)
    if n >= 100:
        assert abs(cov - 0.95) <= _band(0.95, reps), cov
    _row("stratified SE", f"3 strata n={n}", cov, None, reps,
         f"E[SE^2]/Var(mean) {np.mean(se2) / true_var:.3f}")


# =============================================================================================== sampling-free

@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("spread", ("zero", "large"))
def test_sampling_free_variance(n, spread):
    """sampling_noise_removed: se_free is the SE of the mean pass probability, se_sampled that of the mean of one
    sampled verdict per problem; both cover E[p] at 0.95 where the p vary, and the MDE is > 0 where they do not."""
    if n == 1:
        with pytest.raises(ValueError, match="two problems"):
            sampling_noise_removed([0.5])
        _row("sampling-free SE", f"{spread} n=1", None, None, 0, "refused: one problem")
        return
    reps = _reps(n) if spread == "large" and n >= 3 else 50
    rng = np.random.default_rng(n + (17 if spread == "zero" else 19))
    cov_free = cov_sampled = 0
    truth = 2 / 7
    for _ in range(reps):
        p = rng.beta(2, 5, n) if spread == "large" else np.full(n, truth)
        v = (rng.random(n) < p).astype(float)
        s = sampling_noise_removed(p)
        assert s["se_free"] > 0 and s["mde_free"] > 0 and s["mde_sampled"] > 0, s
        assert s["se_sampled"] >= s["se_free"]
        t = stats.t.ppf(0.975, n - 1)
        cov_free += abs(p.mean() - truth) <= t * s["se_free"]
        cov_sampled += abs(v.mean() - truth) <= t * s["se_sampled"]
        q = rng.beta(2, 5, n) if spread == "large" else p
        paired = sampling_noise_removed(p, q)
        assert paired["se_free"] > 0 and paired["mde_free"] > 0
    cf, cs = cov_free / reps, cov_sampled / reps
    if spread == "large" and n >= 20:
        assert abs(cf - 0.95) <= _band(0.95, reps), cf
        assert abs(cs - 0.95) <= _band(0.95, reps), cs
    elif spread == "zero":
        assert cf == 1.0
    _row("sampling-free SE", f"{spread} n={n}", cf, None, reps, f"sampled-verdict coverage {cs:.3f}")


# =============================================================================================== rates

def _exact_rate_coverage(interval, n: int, ps) -> list[float]:
    """Exact coverage at each p of ``ps``: sum over k of Binomial(n, p)(k) [p in interval(k, n)] (each of the n + 1
    intervals computed once)."""
    k = np.arange(n + 1)
    ends = np.array([interval(int(i), n) for i in k])
    return [float(np.sum(stats.binom.pmf(k, n, p) * ((ends[:, 0] <= p) & (p <= ends[:, 1])))) for p in ps]


@pytest.mark.parametrize("n", NS)
def test_wilson_pass_rates(n):
    """Pass rates (ub score's KS@N, the dice pass rate over laws, the report's rates): every interval in [0, 1] with
    positive width; exact coverage 1 at p = 0 and 1 (no spread); mean coverage over p in (0, 1) near 0.95."""
    for k in range(n + 1):
        lo, hi = wilson_interval(k, n)
        assert 0.0 <= lo <= k / n <= hi <= 1.0 and hi > lo
    s = summarize_rate([1.0] * n)
    assert s["high"] > s["low"]
    assert _exact_rate_coverage(wilson_interval, n, [0.0, 1.0]) == [1.0, 1.0]
    covs = _exact_rate_coverage(wilson_interval, n, np.linspace(0.01, 0.99, 99))
    mean_cov, min_cov = float(np.mean(covs)), float(np.min(covs))
    if n >= 20:  # Brown, Cai & DasGupta (2001): Wilson's mean coverage is close to nominal, with dips near 0 and 1
        assert abs(mean_cov - 0.95) <= 0.01, mean_cov
    else:
        assert mean_cov >= 0.93, mean_cov
    _row("Wilson pass rate", f"mean over p n={n}", mean_cov, None, 0, f"exact; min {min_cov:.3f}")


@pytest.mark.parametrize("n", NS)
def test_clopper_pearson(n):
    """The logprob audit's and bounds' Clopper-Pearson intervals: exact coverage >= 0.95 at every p (by
    construction), in [0, 1], positive width."""
    for k in range(n + 1):
        lo, hi = clopper_pearson(k, n, 0.95)
        assert 0.0 <= lo <= k / n <= hi <= 1.0 and hi > lo
    covs = _exact_rate_coverage(lambda k, m: clopper_pearson(k, m, 0.95), n, np.linspace(0.0, 1.0, 101))
    assert min(covs) >= 0.95 - 1e-9, min(covs)
    _row("Clopper-Pearson", f"min over p n={n}", float(min(covs)), None, 0, "exact")


@pytest.mark.parametrize("n", NS)
def test_grammar_escape_bound(n):
    """The reply tree's grammar probe: the one-sided 95% upper bound on the escape rate from x escapes of n probe
    replies (:func:`ub_core.logprob.reply_tree.grammar_escape`, capped by the cells' mass 1 here). Exact coverage
    >= 0.95 at every rate, at least x / n, positive above it; no probe: the whole cell mass."""
    from ub_core.logprob.reply_tree import ReplyTree, grammar_escape
    from ub_core.problems import get_problem

    p = get_problem("te-chi_squared-conc")

    def upper(k: int, m: int) -> tuple[float, float]:
        tree = ReplyTree(cells={"{4.": 1.0}, missing_mass=0.0, probe=["{4.5E-01}"] * k + ["{4.5}"] * (m - k))
        return 0.0, grammar_escape(p, tree, 0.95)["escape_bound"]

    for k in range(n + 1):
        assert k / n <= upper(k, n)[1] <= 1.0 and (k == n or upper(k, n)[1] > k / n)
    covs = _exact_rate_coverage(upper, n, np.linspace(0.0, 1.0, 101))
    assert min(covs) >= 0.95 - 1e-9, min(covs)
    assert grammar_escape(p, ReplyTree(cells={"{4.": 0.3}, missing_mass=0.7))["escape_bound"] == 0.3
    _row("grammar escape bound", f"min over rate n={n}", float(min(covs)), None, 0, "exact")


# =============================================================================================== the registry

#: every function of ub_core that computes an interval, a standard error, an MDE or a p-value, and where it is
#: checked: a test of this module, or another test file (procedures checked against independent implementations
#: there)
REGISTRY = {
    "ub_core.metrics.paired:paired_difference": "test_paired_t, test_clustered_paired_t, test_tango_mcnemar",
    "ub_core.metrics.paired:tango_interval": "test_tango_mcnemar",
    "ub_core.metrics.paired:_tango_z": "test_tango_mcnemar (through tango_interval)",
    "ub_core.metrics.paired:mcnemar_score": "test_tango_mcnemar",
    "ub_core.metrics.paired:mcnemar_exact": "test_mcnemar_exact_holds_its_level",
    "ub_core.metrics.paired:minimum_detectable_effect": "test_power_at_the_printed_mde",
    "ub_core.metrics.paired:se_floor": "test_paired_t (zero and round-off cells)",
    "ub_core.metrics.paired:floor_if_no_spread": "test_paired_t, test_sampling_free_variance",
    "ub_core.metrics.paired:sampling_noise_removed": "test_sampling_free_variance",
    "ub_core.metrics.paired:_z": "a normal quantile (scipy), used by every procedure above",
    "ub_core.metrics.intervals:shows_spread": "test_paired_t, test_mean_interval (round-off cells)",
    "ub_core.metrics.intervals:wilson_interval": "test_wilson_pass_rates",
    "ub_core.metrics.intervals:summarize_rate": "test_wilson_pass_rates",
    "ub_core.metrics.intervals:floored_interval": "test_floored_interval_is_in_range_and_never_zero_width, "
                                                  "test_mean_interval",
    "ub_core.metrics.intervals:mean_interval": "test_mean_interval",
    "ub_core.metrics.intervals:summarize_values": "test_mean_interval",
    "ub_core.metrics.intervals:clustered_interval": "test_mean_interval, test_clustered_mean_interval_covers",
    "ub_core.metrics.intervals:clustered_stderr": "test_clustered_paired_t, test_clustered_mean_interval_covers",
    "ub_core.metrics.intervals:stratified_stderr": "test_stratified_stderr",
    "ub_core.metrics.intervals:bootstrap_interval": "printed by no command (the means use mean_interval: the "
                                                    "percentile bootstrap covered 0.72 at n = 3); "
                                                    "tests/generic/test_metrics.py::test_bootstrap_interval",
    "ub_core.metrics.intervals:run": "bootstrap_interval's inner call",
    "ub_core.logprob.number_cells:clopper_pearson": "test_clopper_pearson",
    "ub_core.metrics.dice:release_pvalue": "tests/dice (the release convention reproduces all 330 cells to 1e-15)",
    "ub_core.metrics.dice:release_chi2": "tests/dice (the release convention reproduces all 330 cells to 1e-15)",
    "ub_core.metrics.dice:exact_pvalue": "tests/dice (exact KS and Monte-Carlo likelihood-ratio p-values, +1 "
                                         "correction, ties)",
    "ub_core.metrics.sampling:_exact_pvalue": "tests/generic/test_metrics.py (sampled KS@N equals scipy's exact "
                                              "test)",
    "ub_core.metrics.answer_distribution:p_enough_valid": "tests/ksn (a binomial tail, checked by simulation)",
    "ub_core.metrics.odds:ks_statistic": "a statistic, not an interval (scipy's ks_2samp; its p-value unused)",
    "ub_core.report.dice:_rate": "test_wilson_pass_rates (the dice pass rate over laws: wilson_interval)",
    "ub_core.report.summary:_rate": "test_wilson_pass_rates (the report's pass rates: wilson_interval)",
    "ub_core.logprob.audit:audit_problem": "test_clopper_pearson (its intervals are clopper_pearson's); "
                                           "tests/ksn_logprob (the audit)",
    "ub_core.logprob.bounds:missing_mass_bounds": "test_clopper_pearson (bounds widened by clopper_pearson); "
                                                  "tests/ksn_logprob",
    "ub_core.logprob.bounds:_shift_bounds": "test_clopper_pearson (through missing_mass_bounds)",
    "ub_core.logprob.number_cells:cell_p_pass": "test_clopper_pearson (bounds widened by clopper_pearson); "
                                                "tests/ksn_logprob",
    "ub_core.logprob.number_cells:cell_p_pass_permutation": "test_clopper_pearson (as cell_p_pass)",
    "ub_core.logprob.reply_tree:grammar_escape": "test_grammar_escape_bound",
    # the printers: each prints the intervals of the procedures above, checked there
    "ub_core.compare:compare_records": "paired_difference, sampling_noise_removed (ub compare)",
    "ub_core.ksn_scoring:_summary_of": "summarize_rate, summarize_values (ub score)",
    "ub_core.metrics.calibration:summarize_calibration": "clustered_interval (PM, WD, RE, behaviour rates)",
    "ub_core.metrics.implicit:summarize_implicit": "clustered_interval (implicit and explicit scores)",
    "ub_core.metrics.odds:summarize_odds": "summarize_values (MAE per group)",
    "ub_core.metrics.odds:summary": "summarize_values (summarize_odds' groups)",
    "ub_core.report.summary:_clustered": "clustered_interval (ub report's calibration and implicit means)",
    "ub_core.report.summary:_add_run_mde": "test_power_at_the_printed_mde (minimum_detectable_effect of "
                                           "clustered_stderr, floor_if_no_spread)",
}

#: functions whose names or calls look like an interval's but are none, and why
NOT_AN_INTERVAL = {
    "ub_core.distributions.continuous:_check_interval": "a distribution parameter's admissible interval",
    "ub_core.logprob.number_cells:interval_statistics": "bounds of a KS statistic over cells of values",
    "ub_core.logprob.reply_tree:interval": "the value interval of a reply-tree cell",
    "ub_core.problems.odds:_interval": "a probability interval of a law (an odds question)",
    "ub_core.problems.calibration:_intervals": "the numeric intervals of a calibration template",
    "ub_core.problems.candidates:_cut_interval": "the support cut of a candidate law",
    "ub_core.metrics.intervals:clip_values": "clips values into their range (the name holds 'p_value')",
    "ub_core.metrics.stability:accuracy_spread": "the non-determinism paper's max - min accuracy, a statistic",
    "ub_core.reproduce.calibration:_spread": "mean, SD, min and max of replicate means, descriptive",
    "ub_core.metrics.calibration:_interval_summary": "clustered_interval of PM/WD/RE (registered above)",
    "ub_core.report.html:_interval": "prints the interval or SE a report table already holds",
}

_NAME = re.compile(r"interval|stderr|std_err|p_?value|confint|detectable|mde|se_floor|noise_removed|mcnemar|tango|"
                   r"wilson|clopper|spread", re.IGNORECASE)
#: calls that make a function an interval's or a p-value's whatever its name
_CALLS = {"ndtri", "ndtr", "stdtr", "stdtrit", "binomtest", "bootstrap", "proportion_ci", "ks_2samp", "kstest",
          "ttest_rel", "ttest_1samp", "ttest_ind", "clopper_pearson", "wilson_interval", "clustered_stderr",
          "tango_interval", "mean_interval", "clustered_interval", "floored_interval", "summarize_values",
          "summarize_rate", "paired_difference", "minimum_detectable_effect", "sampling_noise_removed", "se_floor",
          "floor_if_no_spread", "stratified_stderr"}
# stats.<law>.ppf / .sf / .isf: a test's critical value or p-value
_QUANTILE_OF = {"norm", "t", "beta", "chi2", "binom"}


def _interval_like(fn: ast.AST) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _CALLS:
                return True
            if isinstance(f, ast.Attribute) and f.attr in ("ppf", "sf", "isf") and isinstance(f.value, ast.Attribute) \
                    and f.value.attr in _QUANTILE_OF and isinstance(f.value.value, ast.Name) \
                    and f.value.value.id == "stats":
                return True
    return False


def test_scan_every_interval_of_ub_core_is_registered():
    root = Path(__file__).resolve().parents[2] / "ub_core"
    found = set()
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    _NAME.search(node.name) or _interval_like(node)):
                found.add(f"{module}:{node.name}")
    unknown = sorted(found - set(REGISTRY) - set(NOT_AN_INTERVAL))
    assert not unknown, ("functions computing an interval, SE, MDE or p-value that the hunter does not know: "
                         f"{unknown}; add them to REGISTRY with the check that covers them")
    stale = sorted((set(REGISTRY) | set(NOT_AN_INTERVAL)) - found)
    assert not stale, f"registered but no longer in ub_core (or no longer interval-like): {stale}"


def test_zz_print_the_cells():
    """Prints the table of cells (pytest -s); runs last in this module."""
    print("\n" + "\n".join(ROWS))
