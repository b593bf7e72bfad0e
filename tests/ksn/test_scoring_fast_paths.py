"""KS@N scoring's fast paths give the values of the plain computations bit for bit.

``ks_at_n`` (paper method, continuous support) computes scipy's exact two-sample KS statistic from the sorted
truth at the a-values only and calls scipy's exact p-value step itself; ``wdz`` takes an already sorted truth as it
is and reuses the splits' index arrays; ``score_values`` sorts the truth once for KS at every N and WDZ. Each is
compared here with the computation it replaces: scipy's public ``ks_2samp``, WDZ on an unsorted truth, and a
``score_values`` rebuilt from the public metric functions on the truth as drawn.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from ub_core import metrics
from ub_core.ksn_scoring import score_values
from ub_core.metric_spec import per_n_key
from ub_core.metrics import sampling
from ub_core.problems import load_bank


def _scipy(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ks_2samp(a, b, method="exact")
    return float(res.statistic), float(res.pvalue)


def _cases():
    rng = np.random.default_rng(46)
    truth = rng.normal(size=10_000)
    grid = np.round(rng.normal(size=10_000), 1)  # many ties inside the truth
    yield "normal", rng.normal(size=100), truth
    yield "shifted", rng.normal(0.4, 1.3, size=100), truth
    yield "ties with the truth", rng.choice(truth, 100), truth
    yield "repeated values", np.repeat(rng.normal(size=10), 10), truth
    yield "constant", np.full(50, truth[17]), truth
    yield "outside the truth's range", rng.uniform(5, 9, size=20), truth
    yield "below the truth's range", -rng.uniform(5, 9, size=20), truth
    yield "one value", truth[:1].copy(), truth
    yield "rounded data, rounded truth", np.round(rng.normal(size=100), 1), grid
    yield "integers", rng.integers(0, 5, size=100), rng.integers(0, 6, size=10_000)
    yield "equal sizes", rng.normal(size=300), rng.normal(size=300)
    yield "small truth", rng.normal(size=7), rng.normal(size=11)


@pytest.mark.parametrize("name,a,b", list(_cases()), ids=[c[0] for c in _cases()])
def test_ks_statistic_and_p_value_are_scipys(name, a, b):
    b_sorted = np.sort(b)
    for n in (1, 2, 5, 10, 20, 50, 100, 300):
        if n > a.size:
            break
        got = sampling._ks_scipy_exact(a[:n], b_sorted)
        assert got == _scipy(a[:n], b), (name, n)


def test_ks_at_n_is_scipy_at_every_n_for_every_continuous_problem_sample():
    """Values drawn from a problem, and a sample from elsewhere (low p-values), at the default Ns."""
    problems = [p for p in load_bank("ksn") if p.support == "continuous"][:12]
    assert problems
    for i, p in enumerate(problems):
        truth = p.truth()
        for vals in (p.draw(100, 3 + i), p.draw(100, 3 + i) * 1.5 + 0.2):
            got = metrics.ks_at_n(vals, truth, method="paper", support="continuous")
            for n, r in got.items():
                assert (r["statistic"], r["pvalue"]) == _scipy(vals[:n], truth), (p.id, n)
                assert r["pass"] == (r["pvalue"] >= 1e-4)


def test_wdz_with_sorted_truth_is_wdz_with_truth_as_drawn():
    rng = np.random.default_rng(7)
    truth = rng.gamma(2.0, size=10_000)
    for a in (rng.gamma(2.0, size=100), rng.gamma(2.5, size=60), np.full(100, 1.0), truth[:1]):
        assert sampling.wdz(a, np.sort(truth)) == sampling.wdz(a, truth)


def test_split_w1_with_cached_index_arrays_is_the_plain_one():
    rng = np.random.default_rng(3)
    gaps = np.diff(np.sort(rng.normal(size=1_010)))
    marked = sampling._seeded_subsets(1_010, 10, 99, 0)
    plain = sampling._split_w1(gaps, marked, 10)
    cached = sampling._split_w1_at(gaps, *sampling._split_layout(1_010, 10, 99, 0), 10)
    assert np.array_equal(plain, cached)


def _reference_row(problem, values, method):
    """``score_values``'s KS@N, WDZ and JSD keys from the public functions on the truth as drawn (no sort shared,
    scipy's own ks_2samp for the paper method on continuous problems)."""
    truth = problem.truth()
    vals = np.asarray(values, dtype=float)
    out = {}
    for n in (1, 2, 5, 10, 20, 50, 100):
        if vals.size < n:
            out[per_n_key("p", n)] = None
            continue
        if method == "paper" and problem.support == "continuous":
            _, p = _scipy(vals[:n], truth)
        else:
            _, p = metrics.ks_2samp_exact(vals[:n], truth)
        out[per_n_key("p", n)] = p
        out[per_n_key("ks", n)] = 1.0 if p >= 1e-4 else 0.0
    used = vals[:100]
    w = metrics.wdz(used, truth)
    out["wdz"] = None if math.isnan(w["z"]) else float(w["z"])
    out["w1_debiased"] = float(w["w1_debiased"])
    out["jsd"] = float(metrics.jsd(used, truth))
    return out


@pytest.mark.parametrize("method", ["paper", "exact"])
def test_score_values_matches_the_plain_computation(method):
    bank = list(load_bank("ksn"))
    # a few problems of every support kind, each scored on its own draws and on a sample with ties to the truth
    picked = {}
    for p in bank:
        picked.setdefault(p.support, [])
        if len(picked[p.support]) < 2:
            picked[p.support].append(p)
    rng = np.random.default_rng(11)
    for p in (q for ps in picked.values() for q in ps):
        truth = p.truth()
        samples = [p.draw(100, 5), np.concatenate([rng.choice(truth, 40), p.draw(40, 6)])]
        if method == "exact" and p.support == "continuous":
            samples = samples[1:]  # the exact lattice on 100 distinct values vs 10,000 is slow; ties keep it quick
        for vals in samples:
            row = score_values(p, list(map(float, vals)), method=method)
            ref = _reference_row(p, vals, method)
            for key, want in ref.items():
                assert row[key] == want, (p.id, method, key, row[key], want)
