"""Candidate answer sets of KS@N problems (``ub_core.problems.candidates``)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from ub_core import cli
from ub_core.metrics import ks_distance, lehmer_z1
from ub_core.problems import get_problem, load_bank
from ub_core.problems.candidates import (MAX_CANDIDATES, TAIL_MASS, candidate_set, enumerable_problems,
                                         why_not_enumerable)

BANK = load_bank("ksn")
ENUMERABLE = enumerable_problems(BANK)


@pytest.mark.slow
def test_which_problems_are_enumerable():
    by_support = Counter(p.support for p, _ in ENUMERABLE)
    assert set(by_support) <= {"discrete", "categorical", "permutation"}
    for p in BANK:
        cs = candidate_set(p)
        why = why_not_enumerable(p)
        assert (cs is None) == (why is not None), p.id
        if p.support in ("continuous", "mixed"):
            assert cs is None and p.support in why
        elif p.category in ("real_world", "shuffling") or p.support in ("categorical", "permutation"):
            assert cs is not None, (p.id, why)  # every label, real-world and (<= 5 item) shuffle problem
        elif cs is None:  # a discrete family left out: only for being too wide
            assert f"> {MAX_CANDIDATES}" in why, (p.id, why)
    # all 30 real-world and 20 shuffling problems, and every categorical family problem
    cats = Counter(p.category for p, _ in ENUMERABLE)
    assert cats["real_world"] == 30 and cats["shuffling"] == 20
    assert len(ENUMERABLE) >= 120


def test_every_candidate_text_parses_back_to_its_scalar_with_the_problems_parser():
    for p, cs in ENUMERABLE:
        assert 1 <= len(cs) <= MAX_CANDIDATES
        assert len(set(cs.texts)) == len(cs.texts), p.id
        for text, value in zip(cs.texts, cs.values):
            assert text.startswith("{") and text.endswith("}")
            res = p.parse(text)
            assert res.ok and res.value == value, (p.id, text, res)


def test_candidates_keep_at_least_1_minus_tail_mass_of_the_truth():
    for p, cs in ENUMERABLE:
        assert np.all(cs.p >= 0)
        assert 1 - TAIL_MASS <= cs.covered_mass <= 1 + 1e-12, (p.id, cs.covered_mass)
        if not cs.cut:
            assert cs.covered_mass == pytest.approx(1.0, abs=1e-12), p.id


def test_true_probabilities_match_each_problems_own_sampler():
    """p is computed independently of the sampler (scipy pmfs, series, exact fractions): the 10,000 truth draws
    must agree with it. DKW: sup |F_n - F| <= sqrt(ln(2/a) / (2n)) with probability 1 - a; a = 1e-6 and n = 10,000
    give 0.0269 per problem, plus at most 1e-6 of cut mass."""
    bound = math.sqrt(math.log(2 / 1e-6) / (2 * 10_000)) + TAIL_MASS
    for p, cs in ENUMERABLE:
        truth = p.truth()
        uniq, counts = np.unique(truth, return_counts=True)
        inside = np.isin(uniq, cs.values)
        assert counts[~inside].sum() <= 5, (p.id, uniq[~inside])  # outside a cut support: < 1e-6 each draw
        freq = np.array([counts[uniq == v].sum() for v in cs.values], dtype=float)
        # split each value's draws evenly over the candidates sharing it (shuffles: the orders of one Z1)
        share = np.array([np.sum(cs.values == v) for v in cs.values], dtype=float)
        assert ks_distance(freq / share, cs.p, cs.values) <= bound, p.id


def test_text_formats_follow_the_prompt_instruction():
    cs = candidate_set(get_problem("te-poisson-conc"))
    assert cs.texts[:3] == ("{0}", "{1}", "{2}") and list(cs.values[:3]) == [0, 1, 2]
    sk = candidate_set(get_problem("te-skellam-conc"))
    assert sk.texts[0].startswith("{-") and sk.values[0] < 0
    cat = next(p for p, _ in ENUMERABLE if p.family == "categorical" and p.answer_format == "option")
    cs = candidate_set(cat)
    assert cs.texts == tuple("{" + o + "}" for o in cat.options)
    assert list(cs.values) == list(range(len(cat.options)))
    assert np.allclose(cs.p, cat.params["pvals"])
    multi = [p for p, c in ENUMERABLE if p.answer_format == "option" and any("\n" in o for o in p.options)]
    assert multi, "a real-world problem with multi-line printed outputs"
    for p in multi:
        cs = candidate_set(p)
        assert cs.texts == tuple("{" + o + "}" for o in p.options) and any("\n" in t for t in cs.texts)
        assert np.allclose(cs.p, [p.metadata["exact_pmf"][o] for o in p.options])


def test_shuffle_candidates_are_all_orders_with_their_lehmer_z1():
    p = next(p for p in BANK if p.category == "shuffling" and len(p.options) == 4)
    cs = candidate_set(p)
    assert len(cs) == 24 and np.allclose(cs.p, 1 / 24)
    for text, value, order in zip(cs.texts, cs.values, itertools.permutations(range(4))):
        assert text == "{" + ", ".join(p.options[i] for i in order) + "}"
        assert value == lehmer_z1(order)
    z, counts = np.unique(cs.values, return_counts=True)
    assert np.allclose(z, [0, 1 / 3, 2 / 3, 1]) and list(counts) == [6] * 4  # Z1 uniform, as the sampler draws


def test_compound_poisson_pmf_matches_panjer_recursion():
    """Independent checks: Panjer's recursion g_k = (lam/k) Σ_j j f_j g_{k-j} with geometric jumps
    f_j = p (1-p)^(j-1) against the negative-binomial series, and a direct sum over the number of events
    (convolution powers of f) against the recursion for the release's jumps on {1, 2}."""
    from ub_core.problems.candidates import _family_pmf

    for lam, pp in ((1.0, 0.9), (8.0, 0.2)):
        ks = np.arange(0, 80)
        g = [math.exp(-lam)]
        for k in range(1, ks[-1] + 1):
            g.append(lam / k * sum(j * pp * (1 - pp) ** (j - 1) * g[k - j] for j in range(1, k + 1)))
        got = _family_pmf("compound_poisson", {"lam": lam, "p": pp}, ks)
        assert np.allclose(got, g, rtol=1e-9, atol=1e-15)
    prob = get_problem("te-compound_poisson-conc")  # the release: lam 1.2, jumps 1 or 2 with chances 0.8, 0.2
    cs = candidate_set(prob)
    lam, f = prob.params["lam"], np.array([0.0, 0.8, 0.2])
    want, conv = np.zeros(200), np.array([1.0])
    for n in range(60):
        want[:conv.size] += stats.poisson.pmf(n, lam) * conv[:200]
        conv = np.convolve(conv, f)[:200]
    assert np.allclose(cs.p, want[cs.values.astype(int)], rtol=1e-9, atol=1e-15)


def test_discrete_mixture_pmf_is_the_weighted_component_pmfs():
    p = next(p for p, _ in ENUMERABLE if p.family == "mixture")
    cs = candidate_set(p)
    ks = cs.values
    want = np.zeros(ks.size)
    for c in p.params["components"]:
        fam, par = c["family"], c["params"]
        dist = {"discrete_uniform": lambda q: stats.randint(q["low"], q["high"] + 1),
                "bernoulli": lambda q: stats.bernoulli(q["p"]),
                "negative_binomial": lambda q: stats.nbinom(q["n"], q["p"]),
                "poisson": lambda q: stats.poisson(q["lam"]),
                "binomial": lambda q: stats.binom(q["n"], q["p"])}[fam](par)
        want += c["weight"] * dist.pmf(ks)
    assert np.allclose(cs.p, want, rtol=1e-12, atol=1e-300)


def test_tail_cut_is_where_each_tail_keeps_less_than_half_the_budget():
    p = get_problem("te-poisson-spread")
    cs = candidate_set(p)
    assert cs.cut
    dist = stats.poisson(p.params["lam"])
    lo, hi = int(cs.values[0]), int(cs.values[-1])
    assert dist.cdf(lo - 1) < TAIL_MASS / 2 <= dist.cdf(lo)  # the smallest such interval on each side
    assert dist.sf(hi) <= TAIL_MASS / 2 < dist.sf(hi - 1)


@pytest.mark.parametrize("pid", [p.id for p in load_bank() if p.family == "mixture" and not math.isfinite(p.low)
                                 and all(c["family"] == "skellam" for c in p.params["components"])])
def test_whole_line_mixture_cut_is_the_smallest_interval_by_an_independent_sum(pid):
    """A discrete mixture on the whole line is scanned from its components' low quantiles, with the exact mass
    below the start added: the cut must be the one a plain sum of scipy's component pmfs over a window far wider
    than the bulk gives (the integers below lo hold < TAIL_MASS / 2, those below lo + 1 do not; the same above hi)."""
    p = get_problem(pid)
    cs = candidate_set(p)
    ks = np.arange(-5000, 5001)
    pmf = sum(c["weight"] * stats.skellam(c["params"]["mu1"], c["params"]["mu2"]).pmf(ks)
              for c in p.params["components"])
    cdf = np.cumsum(pmf)
    sf = 1.0 - cdf
    lo, hi = int(cs.values[0]), int(cs.values[-1])
    i, j = lo - ks[0], hi - ks[0]
    assert cdf[i - 1] < TAIL_MASS / 2 <= cdf[i], (lo, cdf[i - 1], cdf[i])
    assert sf[j] <= TAIL_MASS / 2 < sf[j - 1], (hi, sf[j], sf[j - 1])


def test_limits_and_non_enumerable_cases():
    p = get_problem("te-poisson-conc")
    n = len(candidate_set(p))
    assert n == 10  # Poisson(1): 0..9 hold all but about 1e-7 of the mass
    assert candidate_set(p, max_candidates=n - 1) is None
    assert f"> {n - 1}" in why_not_enumerable(p, max_candidates=n - 1)
    assert candidate_set(get_problem("te-normal-conc")) is None
    assert "continuous" in why_not_enumerable(get_problem("te-normal-conc"))
    verbatim = dataclasses.replace(p, append_instruction=False)  # a published prompt with its own instruction
    assert candidate_set(verbatim) is None and "own answer instruction" in why_not_enumerable(verbatim)
    with pytest.raises(ValueError, match="max_candidates"):
        candidate_set(p, max_candidates=0)


def test_cli_bank_list_logprob(capsys):
    assert cli.main(["bank", "list", "--logprob"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"{len(ENUMERABLE)} of {len(BANK)} problems have an enumerable answer support"
    row = next(line for line in out if line.startswith("sh-integer-02 "))  # a shuffle of 4 items
    assert row.split()[-3:] == ["24", "4", "1.0000000"]
    assert cli.main(["bank", "list", "--logprob", "--json", "--category", "real_world"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert len(recs) == 30 and all(r["n_candidates"] >= 2 and r["covered_mass"] == pytest.approx(1) for r in recs)
