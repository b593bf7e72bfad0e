"""Sampling-free KS metrics (``ub_core.metrics.answer_distribution``).

Statistical checks use fixed seeds; each tolerance is derived in the test's docstring.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon

from ub_core import ksn_scoring
from ub_core.metrics import (DEFAULT_NS, answer_distribution_scores, entropy_ratio, jsd_pmf, ks_at_n, ks_distance,
                             p_pass_at_n, p_pass_profile, probabilities_from_logprobs, valid_mass)
from ub_core.problems import get_problem, load_bank
from ub_core.problems.candidates import enumerable_problems

LN2 = math.log(2)
ENUMERABLE = enumerable_problems(load_bank("ksn"))


def _tilted(cs, how, t):
    """A non-trivial model: the truth blended with its shift by one candidate ("roll") or with geometric weights
    over the candidates ("geom"; shuffles' truth is uniform, so a shift would not change it)."""
    other = np.roll(cs.p, 1) if how == "roll" else 0.5 ** np.arange(cs.p.size)
    return (1 - t) * cs.p + t * other / other.sum()


def _setup(pid):
    p = get_problem(pid)
    from ub_core.problems.candidates import candidate_set

    return p, candidate_set(p), p.truth()


# ------------------------------------------------------------------------------------------ simple metrics

def test_ks_distance_by_hand():
    assert ks_distance([1, 0], [0.5, 0.5], [0, 1]) == pytest.approx(0.5)
    assert ks_distance([0.3, 0.0], [0.5, 0.5], [0, 1]) == pytest.approx(0.5)  # q renormalised
    # Q = (.2, .5, 1), F = (.5, .7, 1) at the sorted values 0, 1, 2 (given out of order)
    assert ks_distance([0.3, 0.2, 0.5], [0.2, 0.5, 0.3], [1, 0, 2]) == pytest.approx(0.3)
    # several candidates on one scalar (shuffle orders sharing a Z1): only the per-value sums matter
    assert ks_distance([0.5, 0.0, 0.5], [0.25, 0.25, 0.5], [0, 0, 1]) == pytest.approx(0.0, abs=1e-15)


def test_jsd_entropy_valid_mass_by_hand():
    q, p = np.array([0.1, 0.6, 0.3]), np.array([0.3, 0.3, 0.4])
    assert jsd_pmf(q, p) == pytest.approx(jensenshannon(q, p) ** 2, rel=1e-12)
    assert jsd_pmf(q * 0.4, p) == pytest.approx(jsd_pmf(q, p), rel=1e-12)
    assert jsd_pmf([1, 0], [0, 1]) == pytest.approx(LN2) and jsd_pmf(p, p) == pytest.approx(0, abs=1e-15)
    assert entropy_ratio(p, p) == pytest.approx(1.0)
    assert entropy_ratio([0, 1, 0], p) == 0.0
    assert entropy_ratio(q, p) == pytest.approx(stats.entropy(q) / stats.entropy(p))
    assert math.isnan(entropy_ratio([0.5, 0.5], [1.0, 0.0]))  # H(p) = 0: undefined
    assert valid_mass([0.25, 0.5]) == 0.75 and valid_mass([0.0, 0.0]) == 0.0
    assert valid_mass([0.5, 0.5 + 1e-9]) == 1.0  # rounding above 1 is clipped
    with pytest.raises(ValueError, match="sums to"):
        valid_mass([0.7, 0.7])


def test_probabilities_from_logprobs():
    q = probabilities_from_logprobs([0.0, math.log(0.25), -math.inf, 5e-7])
    assert list(q) == [1.0, pytest.approx(0.25), 0.0, 1.0]
    for bad, msg in (([math.nan, 0.0], "NaN"), ([math.inf], r"\+inf"), ([0.5], "above 0"), ([], "empty")):
        with pytest.raises(ValueError, match=msg):
            probabilities_from_logprobs(bad)


def test_hostile_inputs_give_one_line_errors_or_nan():
    p, v, truth = [0.5, 0.5], [0, 1], [0.0, 1.0] * 50
    for fn in (lambda q: ks_distance(q, p, v), lambda q: jsd_pmf(q, p), lambda q: entropy_ratio(q, p),
               lambda q: valid_mass(q), lambda q: p_pass_at_n(q, v, truth, 5)):
        for bad, msg in (([math.nan, 1], "NaN"), ([math.inf, 1], "infinite"), ([-0.1, 1], "negative"),
                         ([[0.5, 0.5]], "one-dimensional"), ("ab", "numbers")):
            with pytest.raises(ValueError, match=msg) as e:
                fn(bad)
            assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="length mismatch"):
        ks_distance([0.5, 0.5], [1.0], [0, 1])
    with pytest.raises(ValueError, match="length mismatch"):
        p_pass_at_n([0.5, 0.5, 0], v, truth, 5)
    with pytest.raises(ValueError, match="no mass"):
        ks_distance([0.5, 0.5], [0, 0], v)
    with pytest.raises(ValueError, match="truth_draws"):
        p_pass_at_n([1, 1], v, [0.0, math.nan], 5)
    for bad_kw, msg in (({"n": 0}, "n must"), ({"draws": 0}, "draws"), ({"mode": "fast"}, "mode"),
                        ({"threshold": 0}, "threshold"), ({"seed": -1}, "seed")):
        kw = {"n": 5, **bad_kw}
        with pytest.raises(ValueError, match=msg):
            p_pass_at_n([1, 1], v, truth, kw.pop("n"), **kw)
    # a model with no mass on any candidate (all log-probabilities -inf): no distribution, NaN, never a crash
    q = probabilities_from_logprobs([-math.inf, -math.inf])
    s = answer_distribution_scores(q, p, v, truth, ns=(1, 10))
    assert s["valid_mass"] == 0.0
    for key in ("ks_distance", "jsd", "entropy_ratio", "p_pass@1", "p_pass@10", "p_pass_se@10"):
        assert math.isnan(s[key]), key


# ------------------------------------------------------------------------------------------ p_pass: exactness

def test_exact_p_pass_by_hand_for_one_and_two_values():
    """K = 1: one count vector, pass or not. K = 2 at N = 1: the sample is a single value; its KS p-value against
    a truth of m zeros and m ones is P(the permuted single label lands on the same side) = (m+1)/(2m+1) >= 1e-4,
    so p_pass@1 = 1. At N = 100 with q = Bernoulli(0.7) against a fair truth, the exact sum must equal the
    multinomial sum computed here from ks_at_n directly."""
    truth = np.array([0.0, 1.0] * 500)
    r = p_pass_at_n([0.0, 1.0], [0, 1], truth, 100)
    assert r["exact"] and r["draws"] == 1 and r["p_pass"] == 0.0  # 100 ones vs a fair coin: rejected
    assert p_pass_at_n([0.3, 0.7], [0, 1], truth, 1)["p_pass"] == pytest.approx(1.0)
    got = p_pass_at_n([0.3, 0.7], [0, 1], truth, 100)
    want = sum(stats.binom.pmf(k, 100, 0.7) for k in range(101)
               if ks_at_n(np.r_[np.zeros(100 - k), np.ones(k)], truth, ns=(100,), support="discrete")[100]["pass"])
    assert got["exact"] and got["se"] == 0.0 and got["p_pass"] == pytest.approx(want, rel=1e-12)
    assert 0.05 < want < 0.95  # a non-trivial case


@pytest.mark.parametrize("pid,n,how,tilt", [("te-categorical-conc", 20, "geom", 0.8),
                                            ("rw-network-03", 50, "roll", 0.6),
                                            # te-poisson_binomial-conc at N = 50: 1.3 M vectors, 60 s
                                            ("te-poisson_binomial-conc", 30, "roll", 0.6),
                                            ("sh-integer-02", 20, "geom", 0.8), ("sh-word-02", 10, "geom", 0.8)])
@pytest.mark.slow
def test_exact_and_monte_carlo_agree_within_4_standard_errors(pid, n, how, tilt):
    """The Monte-Carlo estimate (2,000 draws) is unbiased with standard error sqrt(p(1-p)/2000): it must fall
    within 4 of them of the exact sum (a 6e-5 two-sided chance per case for a correct implementation)."""
    p, cs, truth = _setup(pid)
    q = _tilted(cs, how, tilt)
    ex = p_pass_at_n(q, cs.values, truth, n, support=p.support, mode="exact")
    mc = p_pass_at_n(q, cs.values, truth, n, support=p.support, mode="mc", seed=3)
    assert ex["exact"] and not mc["exact"] and mc["draws"] == 2000
    assert 0.02 < ex["p_pass"] < 0.98, ex  # non-trivial, so the standard error is not 0
    assert abs(mc["p_pass"] - ex["p_pass"]) <= 4 * math.sqrt(ex["p_pass"] * (1 - ex["p_pass"]) / 2000)
    assert mc["se"] == pytest.approx(math.sqrt(mc["p_pass"] * (1 - mc["p_pass"]) / 2000))


@pytest.mark.parametrize("pid,n,how,tilt", [("te-poisson-conc", 100, "roll", 0.7),
                                            ("te-binomial-conc", 50, "roll", 0.6), ("sh-word-02", 100, "geom", 0.2),
                                            ("rw-network-05", 20, "roll", 0.8),
                                            ("te-categorical-conc", 10, "geom", 0.8)])
def test_screening_gives_the_decisions_of_the_exact_p_value(pid, n, how, tilt):
    """The hypergeometric / Hoeffding screen only decides count vectors whose bounds put them on one side of the
    threshold; the estimates with and without it use the same draws, so they must be identical."""
    p, cs, truth = _setup(pid)
    q = _tilted(cs, how, tilt)
    kw = dict(support=p.support, draws=400, seed=11)
    a = p_pass_at_n(q, cs.values, truth, n, screen=True, **kw)
    b = p_pass_at_n(q, cs.values, truth, n, screen=False, **kw)
    assert a == b
    assert 0.0 < a["p_pass"] < 1.0 or a["exact"]


@pytest.mark.parametrize("pid,n,how,tilt", [("te-poisson-conc", 100, "roll", 0.6), ("sh-word-02", 100, "geom", 0.3),
                                            ("te-categorical-conc", 20, "geom", 0.8)])
def test_screen_verdicts_row_by_row(pid, n, how, tilt):
    """Each count vector the screen decides gets the verdict of its exact p-value (``ks_at_n``), and the screen
    does decide most of them (else it would save nothing)."""
    from ub_core.metrics.answer_distribution import _screen_rows

    p, cs, truth = _setup(pid)
    q = _tilted(cs, how, tilt)
    vals, inverse = np.unique(cs.values, return_inverse=True)
    probs = np.bincount(inverse, weights=q / q.sum())
    rows = np.random.default_rng(5).multinomial(n, probs, size=300)
    verdict = _screen_rows(rows, vals, np.sort(truth), 1e-4)
    exact = np.array([ks_at_n(np.repeat(vals, r), truth, ns=(n,), support=p.support)[n]["pass"] for r in rows])
    decided = verdict >= 0
    assert np.array_equal(verdict[decided] == 1, exact[decided])
    assert decided.mean() >= 0.5
    assert exact.any() and not exact.all() and (verdict == 0).any() and (verdict == 1).any()


def test_auto_mode_takes_the_exact_sum_when_it_is_no_more_work():
    p, cs, truth = _setup("sh-word-02")  # 4 items: 4 distinct Z1 values
    q = cs.p
    assert p_pass_at_n(q, cs.values, truth, 20, support=p.support)["exact"]  # C(23, 3) = 1771 <= 2000
    assert not p_pass_at_n(q, cs.values, truth, 30, support=p.support, draws=2000)["exact"]  # C(33, 3) = 5456
    assert p_pass_at_n(q, cs.values, truth, 30, support=p.support, exact_limit=20_000, draws=50)["exact"]
    prof = p_pass_profile(q, cs.values, truth, support=p.support, draws=200)
    assert tuple(prof) == DEFAULT_NS


# ------------------------------------------------------------------------------------------ the bank

@pytest.mark.slow  # a subprocess CLI run or a whole-bank sweep: the full suite runs it
def test_oracle_on_every_enumerable_problem():
    """q = p: ks_distance is 0 up to rounding (<= 0.01 required), and p_pass@100 >= 0.98. Under q = p the answers
    and the truth draws are exchangeable, so the permutation test rejects at 1e-4 with probability <= 1e-4
    (averaged over truth draws); with 2,000 draws an estimate below 0.98 needs >= 41 failures, impossible at
    that rate for any fixed truth that is not pathological."""
    assert len(ENUMERABLE) >= 120
    for p, cs in ENUMERABLE:
        assert ks_distance(cs.p, cs.p, cs.values) <= 1e-12, p.id
        r = p_pass_at_n(cs.p, cs.values, p.truth(), 100, support=p.support)
        assert r["p_pass"] >= 0.98, (p.id, r)


def test_collapsed_model_on_every_enumerable_problem():
    """All mass on the truth's mode: ks_distance = max(F(mode-), 1 - F(mode)) >= (1 - p_mode) / 2. A constant
    sample of 100 against 10,000 draws with D >= 0.3 is rejected: even the single block end at the statistic's
    maximum has hypergeometric tail ~ exp(-2 * 100 * 0.3^2) = 1.5e-8 < 1e-4; so p_pass@100 = 0 exactly (one count
    vector). Problems whose mode holds so much mass that D < 0.3 (Bernoulli 0.95, ...) are listed and skipped."""
    large = 0
    for p, cs in ENUMERABLE:
        q = np.zeros(cs.p.size)
        q[np.argmax(cs.p)] = 1.0
        d = ks_distance(q, cs.p, cs.values)
        uniq = np.unique(cs.values)
        per_value = np.array([cs.p[cs.values == u].sum() for u in uniq]) / cs.p.sum()
        assert d >= (1 - per_value.max()) / 2 - 1e-12, p.id
        if d < 0.3:
            continue
        large += 1
        r = p_pass_at_n(q, cs.values, p.truth(), 100, support=p.support)
        assert r["exact"] and r["p_pass"] == 0.0, (p.id, d, r)
        assert entropy_ratio(q, cs.p) == 0.0
    assert large >= 0.8 * len(ENUMERABLE)


def _simulated_pass_rate(problem, cs, q, truth, n, runs, seed):
    """Pass rate of the real KS@N scorer on ``runs`` samples of n answers drawn from q (seeded)."""
    rng = np.random.default_rng(seed)
    qn = q / q.sum()
    passes = 0
    for _ in range(runs):
        values = cs.values[rng.choice(cs.values.size, size=n, p=qn)]
        row = ksn_scoring.score_values(problem, values, ns=(n,), truth=truth, wdz_resamples=9)
        passes += row[f"ks@{n}"] == 1.0
    return passes


def test_predicted_p_pass_matches_the_real_scorer_exact_case():
    """Bernoulli(0.5) truth, model q = Bernoulli(0.7): p_pass@100 is exact (101 count vectors). The scorer's pass
    count over 200 seeded runs is Binomial(200, p_pass): it must lie in the central 99% interval."""
    p, cs, truth = _setup("te-bernoulli-spread")
    q = np.array([0.3, 0.7]) if list(cs.values) == [0, 1] else pytest.fail("Bernoulli candidates are 0, 1")
    pred = p_pass_at_n(q, cs.values, truth, 100, support=p.support)
    assert pred["exact"] and 0.2 < pred["p_pass"] < 0.8
    lo, hi = stats.binom.interval(0.99, 200, pred["p_pass"])
    assert lo <= _simulated_pass_rate(p, cs, q, truth, 100, 200, seed=2024) <= hi


def test_predicted_p_pass_matches_the_real_scorer_monte_carlo_case():
    """Poisson(2) truth, q a 60/40 blend of the truth and its shift by one: p_pass@100 by Monte Carlo (2,000
    draws, standard error s). The scorer's count X over 200 runs has variance 200 p (1 - p); the prediction adds
    200^2 s^2. X must be within 2.576 combined standard deviations of 200 * p_pass (a 99% interval)."""
    p, cs, truth = _setup("te-poisson-conc")
    q = 0.4 * cs.p + 0.6 * np.roll(cs.p, 1)
    pred = p_pass_at_n(q, cs.values, truth, 100, support=p.support)
    assert not pred["exact"] and 0.1 < pred["p_pass"] < 0.9, pred
    x = _simulated_pass_rate(p, cs, q, truth, 100, 200, seed=7)
    sd = math.sqrt(200 * pred["p_pass"] * (1 - pred["p_pass"]) + (200 * pred["se"]) ** 2)
    assert abs(x - 200 * pred["p_pass"]) <= 2.576 * sd


def test_answer_distribution_scores_keys():
    p, cs, truth = _setup("rw-network-03")
    s = answer_distribution_scores(0.9 * cs.p, cs.p, cs.values, truth, support=p.support, draws=200)
    assert s["valid_mass"] == pytest.approx(0.9)
    assert s["ks_distance"] == pytest.approx(0, abs=1e-12) and s["entropy_ratio"] == pytest.approx(1)
    for n in DEFAULT_NS:
        assert {f"p_pass@{n}", f"p_pass_se@{n}", f"p_pass_exact@{n}"} <= set(s)


# ------------------------------------------------------------------------------------------ properties

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_mass = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(st.lists(st.tuples(_mass, _mass, st.integers(-3, 3)), min_size=1, max_size=12))
def test_metric_ranges_and_symmetries(rows):
    """For any masses: ks_distance in [0, 1] (NaN only without q mass), jsd in [0, ln 2], entropy_ratio >= 0;
    ks_distance is invariant under rescaling q and under listing the candidates in another order."""
    q, p, v = (np.array(c, dtype=float) for c in zip(*rows))
    if p.sum() == 0:
        with pytest.raises(ValueError, match="no mass"):
            ks_distance(q, p, v)
        return
    d = ks_distance(q, p, v)
    if q.sum() == 0:
        assert math.isnan(d) and math.isnan(jsd_pmf(q, p)) and math.isnan(entropy_ratio(q, p))
        return
    assert 0.0 <= d <= 1.0 and 0.0 <= jsd_pmf(q, p) <= LN2
    order = np.argsort(-v, kind="stable")
    assert ks_distance(3.0 * q[order], p[order], v[order]) == pytest.approx(d, abs=1e-12)
    r = entropy_ratio(q, p)
    assert math.isnan(r) or r >= 0.0


@pytest.mark.parametrize("shift", [0.0, 0.65, 1.2])
def test_threshold_search_decides_as_the_test_itself_on_continuous_supports(shift):
    """On a continuous support the paper's test (scipy's exact two-sample KS) passes exactly when D is at most a
    critical value, so p_pass_at_n finds the split by bisection over the draws sorted by D. Its verdicts, pass
    rate and statistics equal those of testing every drawn vector (``screen=False``), at pass rates near 1,
    intermediate and near 0."""
    rng = np.random.default_rng(11)
    truth = rng.normal(size=3000)
    values = np.round(np.linspace(-3, 3, 121), 2)
    q = np.exp(-0.5 * (values - shift) ** 2)
    fast = p_pass_at_n(q, values, truth, 50, support="continuous", draws=2000, seed=3, mode="mc",
                       keep_statistics=True)
    slow = p_pass_at_n(q, values, truth, 50, support="continuous", draws=2000, seed=3, mode="mc", screen=False,
                       keep_statistics=True)
    assert fast["p_pass"] == slow["p_pass"]
    got = {(round(d, 9), ok, f) for d, ok, f in fast["statistics"]}
    want = {(round(d, 9), ok, f) for d, ok, f in slow["statistics"]}
    assert got == want
