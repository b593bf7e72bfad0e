"""Invariants every registered distribution family must satisfy, scipy.stats-style.

The tests iterate ``ub_core.distributions.FAMILIES`` as it is at collection time, not a frozen list, so a family
registered tomorrow is checked by the same code. For each family and each of its reference parameter sets
(:func:`reference_params`) :func:`family_failures` checks

- the sampler against scipy where the family has ``scipy_dist``: one-sample Kolmogorov-Smirnov for continuous
  laws, a chi-square goodness-of-fit on the PMF (tail bins merged until every expected count is >= 5) for
  discrete and categorical ones;
- where the family has ``analytic_moments``: equal to scipy's mean and variance when scipy has the law too
  (deterministic), otherwise the sample mean and variance within ``Z`` standard errors of them;
- the declared support kind against the draws (integers for discrete and categorical, no ties for continuous,
  rows that are permutations of 0..n-1 for permutations) and the declared bounds;
- the prompts: the description and every registered template produce text, and the Random Machine's replies
  (:func:`ub_core.oracle.render_value`) parse back (:meth:`Problem.parse`) to the drawn values.

False-failure rate. Each statistical check rejects a correct sampler with probability ``ALPHA`` = 1e-5 (KS and
chi-square p-values are uniform under the null, the latter asymptotically with expected counts >= 5; the moment
checks use the two-sided normal quantile ``Z`` = 4.42 of 1e-5). With about 100 reference parameter sets and at
most two statistical checks each, a correct set of samplers fails somewhere with probability <= 2e-3 per seed
(Bonferroni); the seed is fixed, so a failure reproduces. Power: at ``N`` = 4000 draws KS detects a CDF error of
about 0.04 (the 1e-5 critical value is sqrt(-log(ALPHA/2) / (2N)) ~ 0.044), far below a wrong parameter
convention (see the teeth tests).
"""

from __future__ import annotations

import math
from typing import Iterator, Mapping

import numpy as np
import pytest
from scipy import stats

from ub_core import distributions as D
from ub_core.metrics import lehmer_z1
from ub_core.oracle import oracle_values, render_value
from ub_core.problems import odds
from ub_core.problems.base import Problem
from ub_core.problems.dice import dice_items
from ub_core.problems.ksn import bank as ksn
from ub_core.problems.ksn.regimes import REGIMES
from ub_core.problems.ksn.templates import TEMPLATE_KINDS, template_for

ALPHA = 1e-5
Z = stats.norm.isf(ALPHA / 2)  # 4.42
N = 4000
SEED = 20261126
ROUND_TRIPS = 25


# ------------------------------------------------------------------------------------------------ reference params

def reference_params(name: str) -> list[tuple[str, dict, Problem | None]]:
    """``(label, params, problem)`` for each reference setting of family ``name``, from what the package already
    holds, first source that has the family: the KS@N regimes (:data:`REGIMES`, concentrated and spread), the
    odds bank's parameterisations, else the KS@N and dice banks' problems of that family (``problem`` is then the bank's
    own problem, for the prompt round trip). Empty for a family none of them names."""
    if name in REGIMES:
        return [(regime, dict(params), None) for regime, params in REGIMES[name].items()]
    if name in odds.PARAMETERISATIONS:
        return [(f"odds-p{i}", dict(params), None) for i, params in enumerate(odds.PARAMETERISATIONS[name][:2])]
    bank = [p for p in (*ksn.ksn_problems(), *dice_items()) if p.family == name]
    # a shuffling problem keeps its items' labels in ``params`` beside the law's ``n``: the labels are the
    # problem's (its options), not a parameter of the family
    return [(p.id, {k: v for k, v in p.params.items() if k != "items"}, p) for p in bank[:2]]


def _cases() -> Iterator:
    for name in sorted(D.FAMILIES):
        for label, params, problem in reference_params(name):
            yield pytest.param(name, params, problem, id=f"{name}-{label}")


# ------------------------------------------------------------------------------------------------ the checker

def _chi_square_pvalue(draws: np.ndarray, dist) -> float:
    """Pearson chi-square p-value of integer ``draws`` against the PMF of ``dist``. Bins: the integers between the
    1e-9 and 1 - 1e-9 quantiles, the two end bins taking the whole tails, adjacent bins merged left to right until
    each expects >= 5 draws (the usual validity rule for the chi-square approximation)."""
    n = draws.size
    lo, hi = int(dist.ppf(1e-9)), int(dist.ppf(1 - 1e-9))
    ks = np.arange(lo, hi + 1)
    probs = dist.pmf(ks)
    probs[0] = dist.cdf(lo)
    probs[-1] = dist.sf(hi - 1) if hi > lo else 1.0
    idx = np.clip(draws.astype(np.int64), lo, hi) - lo
    observed = np.bincount(idx, minlength=ks.size).astype(float)
    obs_bins, exp_bins, o, e = [], [], 0.0, 0.0
    for ob, pr in zip(observed, probs * n):
        o, e = o + ob, e + pr
        if e >= 5:
            obs_bins.append(o), exp_bins.append(e)
            o = e = 0.0
    if not exp_bins:
        return 1.0
    obs_bins[-1] += o
    exp_bins[-1] += e
    if len(exp_bins) < 2:  # a point mass: every draw must be that value
        return 1.0 if np.all(draws == draws[0]) else 0.0
    expected = np.asarray(exp_bins) * n / np.sum(exp_bins)
    return float(stats.chisquare(obs_bins, expected).pvalue)


def _round_trip_problem(family: D.Family, params: Mapping, problem: Problem | None) -> Problem:
    if problem is not None:
        return problem
    prompt = ksn.text_explicit_prompt(family.name, dict(params))
    return ksn._scalar_problem(f"te-{family.name}-invariants", "text_explicit", "text_explicit", family.name,
                               dict(params), "reference", prompt)


def family_failures(name: str, params: Mapping, problem: Problem | None = None, *, n: int = N,
                    seed: int = SEED) -> list[str]:
    """Every invariant of family ``name`` at ``params`` that fails, as one line each (empty when all hold)."""
    fam = D.get_family(name)
    p = fam.validate(params)
    kind = D.support_kind(name, p)
    low, high = D.support_bounds(name, p)
    draws = np.asarray(fam.draw(np.random.default_rng(seed), p, n))
    out: list[str] = []

    # support kind and bounds
    if kind == "permutation":
        if draws.shape != (n, p["n"]) or not np.all(np.sort(draws, axis=1) == np.arange(p["n"])):
            out.append(f"{name}: draws are not permutations of 0..{p['n'] - 1}")
    else:
        if draws.shape != (n,):
            return [f"{name}: a scalar family drew shape {draws.shape}, expected ({n},)"]
        if not np.all(np.isfinite(draws)):
            out.append(f"{name}: {int(np.sum(~np.isfinite(draws)))} non-finite draws")
        if kind in ("discrete", "categorical") and not np.all(draws == np.round(draws)):
            out.append(f"{name}: declared {kind} but drew non-integers, e.g. {draws[draws != np.round(draws)][0]!r}")
        if kind == "continuous":
            # a continuous law ties with probability 0; float rounding may tie a few
            ties = n - np.unique(draws).size
            if ties > n // 100:
                out.append(f"{name}: declared continuous but {ties} of {n} draws tie")
    if np.any(draws < low) or np.any(draws > high):
        out.append(f"{name}: draws in [{np.min(draws):g}, {np.max(draws):g}] leave the declared bounds "
                   f"[{low:g}, {high:g}]")
    if out:
        return out

    # the law itself
    dist = fam.scipy_dist(p) if fam.scipy_dist is not None else None
    if dist is not None:
        if kind in ("discrete", "categorical"):
            pvalue, test = _chi_square_pvalue(draws, dist), "chi-square"
        else:
            pvalue, test = float(stats.kstest(draws, dist.cdf).pvalue), "KS"
        if pvalue < ALPHA:
            out.append(f"{name}: sampler disagrees with scipy ({test} p = {pvalue:.3g} < {ALPHA:g})")
    if fam.analytic_moments is not None:
        mean, var = fam.analytic_moments(p)
        if dist is not None:
            s_mean, s_var = (float(v) for v in dist.stats(moments="mv"))
            if not (np.isclose(mean, s_mean, rtol=1e-9, atol=1e-12) and np.isclose(var, s_var, rtol=1e-9)):
                out.append(f"{name}: analytic moments ({mean:g}, {var:g}) differ from scipy's ({s_mean:g}, {s_var:g})")
        elif math.isfinite(var):
            # standard errors from the sample: sd/sqrt(n) for the mean, sd((x - mean)^2)/sqrt(n) for the variance
            se_mean = math.sqrt(var / n)
            se_var = float(np.std((draws - draws.mean()) ** 2)) / math.sqrt(n)
            if abs(draws.mean() - mean) > Z * se_mean:
                out.append(f"{name}: sample mean {draws.mean():g} is more than {Z:.2f} standard errors "
                           f"({se_mean:.3g}) from the analytic mean {mean:g}")
            if abs(draws.var() - var) > Z * se_var + 1e-12:
                out.append(f"{name}: sample variance {draws.var():g} is more than {Z:.2f} standard errors "
                           f"({se_var:.3g}) from the analytic variance {var:g}")
    if dist is None and fam.analytic_moments is None and kind != "permutation":
        out.append(f"{name}: neither scipy_dist nor analytic_moments, so nothing can check its sampler; give it one")
    if kind == "permutation":
        # the stated law of this kind is the uniform one: each item's position is uniform on 0..n-1
        first = draws[:, 0].astype(np.int64)
        pvalue = float(stats.chisquare(np.bincount(first, minlength=p["n"])).pvalue)
        if pvalue < ALPHA:
            out.append(f"{name}: first position not uniform (chi-square p = {pvalue:.3g} < {ALPHA:g})")

    # prompts: the description, every registered template, and the oracle reply round trip
    if not fam.describe(p).strip():
        out.append(f"{name}: empty description")
    for template_kind in TEMPLATE_KINDS:
        try:
            render = template_for(template_kind, name)
        except ValueError:  # no template of this kind for the family (templates are optional per kind)
            continue
        if not render(dict(p)).strip():
            out.append(f"{name}: empty {template_kind} template text")
    prob = _round_trip_problem(fam, p, problem)
    if not prob.full_prompt.strip():
        out.append(f"{name}: empty prompt")
    for value in oracle_values(prob, ROUND_TRIPS, seed=seed):
        reply = render_value(prob, value)
        parsed = prob.parse(reply)
        want = float(lehmer_z1(value)) if prob.answer_format == "permutation" else float(value)
        if not parsed.ok or parsed.value != want:
            out.append(f"{name}: oracle reply {reply!r} of {value!r} parsed to "
                       f"{parsed.value if parsed.ok else parsed.error!r}")
            break
    return out


# ------------------------------------------------------------------------------------------------ the tests

@pytest.mark.parametrize("name", sorted(D.FAMILIES))
def test_every_registered_family_has_reference_params(name):
    assert reference_params(name), (
        f"family {name!r} has no reference parameters: add a concentrated and a spread setting to "
        "ub_core/problems/ksn/regimes.py REGIMES (or use it in a registered bank), so its sampler is tested")


@pytest.mark.parametrize("name,params,problem", list(_cases()))
def test_registered_family_invariants(name, params, problem):
    failures = family_failures(name, params, problem)
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------------------------ teeth

TOY = "toy_invariants_exponential"


def _toy(draw, support: str = "continuous", scipy: bool = True) -> D.Family:
    """An exponential with mean ``scale`` whose sampler is ``draw``."""
    return D.Family(
        name=TOY, title="Toy exponential", group="continuous_semi_infinite", support=support,
        param_doc="scale > 0 (the mean)", check=D._keep(TOY, {"scale": D.POS}), draw=draw,
        text=lambda p: f"an exponential distribution with mean {D.fmt(p['scale'])}",
        scipy_dist=(lambda p: stats.expon(scale=p["scale"])) if scipy else None,
        bounds=lambda p: (0.0, math.inf))


def test_the_checker_passes_a_correct_toy_family(registries):
    D.register_family(_toy(lambda r, p, n: r.exponential(p["scale"], n)))
    assert family_failures(TOY, {"scale": 2.0}) == []


@pytest.mark.parametrize("draw,support,scipy,message", [
    # the rate read as a scale: mean 1/2 instead of 2
    (lambda r, p, n: r.exponential(1 / p["scale"], n), "continuous", True, "sampler disagrees with scipy (KS p"),
    # a subtler error: a quarter of the draws stretched by 1.5 (mean 2.25 instead of 2)
    (lambda r, p, n: r.exponential(p["scale"], n) * np.where(r.random(n) < 0.25, 1.5, 1.0), "continuous", True,
     "sampler disagrees with scipy"),
    # declared discrete but continuous draws
    (lambda r, p, n: r.exponential(p["scale"], n), "discrete", True, "declared discrete but drew non-integers"),
    # negative draws outside the declared [0, inf)
    (lambda r, p, n: r.exponential(p["scale"], n) - 0.1, "continuous", True, "leave the declared bounds"),
    # rounded draws declared continuous
    (lambda r, p, n: np.round(r.exponential(p["scale"], n)), "continuous", True, "declared continuous but"),
    # nothing to check the sampler against
    (lambda r, p, n: r.exponential(p["scale"], n), "continuous", False, "neither scipy_dist nor analytic_moments"),
])
def test_the_checker_flags_a_wrong_toy_family(registries, draw, support, scipy, message):
    D.register_family(_toy(draw, support, scipy))
    failures = family_failures(TOY, {"scale": 2.0})
    assert any(message in f for f in failures), failures


def test_a_wrong_discrete_sampler_is_flagged(registries):
    """A Poisson sampler with lam + 1: the chi-square check rejects it."""
    name = "toy_invariants_poisson"
    D.register_family(D.Family(
        name=name, title="Toy Poisson", group="discrete_infinite", support="discrete", param_doc="lam > 0",
        check=D._keep(name, {"lam": D.POS}), draw=lambda r, p, n: r.poisson(p["lam"] + 0.3, n).astype(float),
        text=lambda p: f"a Poisson distribution with mean {D.fmt(p['lam'])}",
        scipy_dist=lambda p: stats.poisson(p["lam"]), bounds=lambda p: (0.0, math.inf)))
    failures = family_failures(name, {"lam": 4.0})
    assert any("chi-square p" in f for f in failures), failures
    assert family_failures("poisson", {"lam": 4.0}) == []


def test_wrong_analytic_moments_are_flagged(registries):
    """Without scipy, the sample moments check the analytic ones (variance off by 20%)."""
    D.register_family(D.Family(
        name=TOY, title="Toy", group="continuous_real_line", support="continuous", param_doc="scale > 0",
        check=D._keep(TOY, {"scale": D.POS}), draw=lambda r, p, n: r.normal(0.0, p["scale"], n),
        text=lambda p: f"a normal distribution with mean 0 and standard deviation {D.fmt(p['scale'])}",
        analytic_moments=lambda p: (0.0, 1.2 * p["scale"] ** 2)))
    failures = family_failures(TOY, {"scale": 3.0})
    assert any("sample variance" in f for f in failures), failures


def test_a_family_without_reference_params_fails_with_a_clear_message(registries):
    D.register_family(_toy(lambda r, p, n: r.exponential(p["scale"], n)))
    assert reference_params(TOY) == []
    with pytest.raises(AssertionError, match=f"family '{TOY}' has no reference parameters"):
        test_every_registered_family_has_reference_params(TOY)
