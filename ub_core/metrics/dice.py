"""The "Bad Dice Players" paper (Zhao, Du, Wang, ACL 2026, arXiv 2601.05414): does a model's list of numbers come
from the law it was told to sample?

The paper asks for ``N`` draws of one of 15 laws (:data:`DICE_LAWS`, its three tiers, section 3) and scores the
numbers it reads back with a test at ``alpha = 0.01`` (the draws *pass* when ``p > alpha``) and the Wasserstein-1
distance as its primary distance (section 4). Two conventions (:data:`DICE_CONVENTIONS`):

``release`` (the paper's scoring, as its public release recomputes its main table):

- continuous laws: the two-sample KS test of the draws against 1,000 reference draws of the law
  (:func:`scipy.stats.ks_2samp`, its default method), :func:`release_pvalue`;
- discrete laws: Pearson's chi-square goodness of fit against the law's PMF (:func:`release_chi2`): Bernoulli on
  the counts of exactly 0 and 1, Binomial(10, 0.5) on the counts of ``int(x)`` in 0..10, Poisson(5) on 0..14 and a
  tail bin ``>= 15``; outer cells with an expected count under 5 are pooled into their neighbour (Binomial: low end
  first, Poisson: high end first); every expected count is ``n * pmf`` with ``n`` all the draws, values outside
  the cells included;
- W1: :func:`scipy.stats.wasserstein_distance` between the draws and the same reference draws (discrete laws too).

``default`` (ours, better defined: a test of the stated law itself, with no reference sample to add its own noise):

- continuous laws: the exact one-sample KS test against the law's CDF (:func:`scipy.stats.kstest`,
  ``method="exact"``), :func:`exact_pvalue`;
- discrete laws: the likelihood-ratio statistic ``G = 2 sum_k O_k ln(O_k / E_k)`` over every cell of the
  support, unpooled (Poisson: 0..K-2 and a tail cell ``>= K-1``, with ``K`` the first value where the tail mass is
  under 1e-6), its p-value the Monte-Carlo tail ``(1 + #{G* >= G}) / (1 + B)`` over ``B`` multinomial draws of the
  law under a fixed seed (a valid test at every ``n``: no chi-square approximation, no pooling; Monte-Carlo
  standard error at most ``0.5 / sqrt(B)``). ``G`` rather than Pearson's statistic: a draw in a cell of tiny
  expectation ``e`` adds about ``2 ln(1/e)`` to ``G`` but ``1/e`` to Pearson's, which would let one rare draw
  outweigh a collapse. A draw off the support (not an integer, out of range) cannot come from the law and makes
  ``p = 0``;
- W1 against ``DEFAULT_TRUTH_DRAWS`` seeded draws of the law (:func:`law_draws`).

The downstream MCQ task (section 6): the correct-answer letters of generated four-option questions should be
uniform over A-D; :func:`letter_uniformity` is Pearson's chi-square of the letter counts against 1/4 each
(3 degrees of freedom).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats

from ..distributions import FAMILIES

__all__ = ["law_name", "DiceLaw", "DICE_LAWS", "DICE_ORDER", "DICE_TIERS", "DICE_CONVENTIONS", "DICE_ALPHA",
           "DEFAULT_TRUTH_DRAWS", "DEFAULT_MC_DRAWS", "MCQ_LETTERS", "release_chi2", "release_pvalue",
           "exact_pvalue", "dice_w1", "law_draws", "dice_scores", "letter_uniformity", "passes", "pass_rate",
           "RELEASE_REFERENCE_DRAWS", "dice_row",
           "W1_WITHOUT_SCALE"]

DICE_CONVENTIONS = ("default", "release")
#: The paper's significance level (section 4): the draws pass when ``p > DICE_ALPHA``.
DICE_ALPHA = 0.01
DEFAULT_TRUTH_DRAWS = 100_000
DEFAULT_MC_DRAWS = 20_000
MCQ_LETTERS = ("A", "B", "C", "D")
#: Where the release's own reference draws are not at hand (a live run): the release convention's reference is
#: this many draws of the law under this seed (the release's size and seed; our generator, so not its draws).
RELEASE_REFERENCE_DRAWS = (1000, 42)


@dataclass(frozen=True)
class DiceLaw:
    """One of the paper's laws: its name as the release spells it, its tier, and the member of
    :mod:`ub_core.distributions` it is (a family and its parameters), which also gives its scipy law and support."""

    name: str
    tier: str
    family: str
    params: Mapping[str, float]

    @property
    def dist(self) -> Any:
        fam = FAMILIES[self.family]
        return fam.scipy_dist(fam.validate(self.params))

    @property
    def support(self) -> str:
        return FAMILIES[self.family].support

    @property
    def discrete(self) -> bool:
        return self.support == "discrete"


#: The 15 laws in the paper's order (Table 1), with the parameters the release's configuration states, in the
#: family's own parameter names.
DICE_LAWS: dict[str, DiceLaw] = {law.name: law for law in (
    DiceLaw("Bernoulli", "Tier I", "bernoulli", {"p": 0.7}),
    DiceLaw("Binomial", "Tier II", "binomial", {"n": 10, "p": 0.5}),
    DiceLaw("Poisson", "Tier II", "poisson", {"lam": 5}),
    DiceLaw("Uniform", "Tier I", "uniform", {"low": 0, "high": 1}),
    DiceLaw("Gaussian", "Tier I", "normal", {"loc": 0, "scale": 1}),
    DiceLaw("Beta", "Tier II", "beta", {"a": 2, "b": 2}),
    DiceLaw("Exponential", "Tier II", "exponential", {"scale": 1}),
    DiceLaw("Cauchy", "Tier III", "cauchy", {"loc": 0, "scale": 1}),
    DiceLaw("TDistribution", "Tier III", "students_t", {"df": 3, "loc": 0, "scale": 1}),
    DiceLaw("ChiSquare", "Tier III", "chi_squared", {"df": 5}),
    DiceLaw("FDistribution", "Tier III", "f", {"dfnum": 5, "dfden": 10}),
    DiceLaw("Gamma", "Tier III", "gamma", {"shape": 2, "scale": 2}),
    DiceLaw("Weibull", "Tier III", "weibull", {"a": 1.5, "scale": 1}),
    DiceLaw("Laplace", "Tier III", "laplace", {"loc": 0, "scale": 1}),
    DiceLaw("Logistic", "Tier III", "logistic", {"loc": 0, "scale": 1}),
)}
DICE_ORDER: tuple[str, ...] = tuple(DICE_LAWS)


def law_name(law: object, problem_id: str) -> str:
    """The dice law a scored sample belongs to: its payload's ``law`` where that names one, else the law whose
    problem id (``dice-<law>``) it carries, else the id itself."""
    if law in DICE_LAWS:
        return str(law)
    return next((name for name in DICE_ORDER if problem_id == f"dice-{name.lower()}"), str(problem_id))
#: The laws without a finite mean (Cauchy), whose W1 to draws has no finite scale: W1 = integral |F_n - F| dx is
#: finite in expectation only for a law with a finite first moment, so a Cauchy W1 is ruled by the few largest
#: draws (1e6 beside the others' 0.05). Summaries over laws leave them out of means (``ub report``'s
#: ``w1_finite_mean``, ``ub compare --metric w1``) and say so; per law their W1 is shown as it is.
W1_WITHOUT_SCALE: frozenset[str] = frozenset(name for name, law in DICE_LAWS.items()
                                             if not math.isfinite(float(law.dist.mean())))
DICE_TIERS: dict[str, tuple[str, ...]] = {t: tuple(n for n, law in DICE_LAWS.items() if law.tier == t)
                                          for t in ("Tier I", "Tier II", "Tier III")}


def _law_of(name: str) -> DiceLaw:
    try:
        return DICE_LAWS[name]
    except KeyError:
        raise ValueError(f"unknown dice law {name!r}; known: {', '.join(DICE_ORDER)}") from None


def _finite_array(samples: Any) -> np.ndarray:
    x = np.asarray(samples, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("no draws to score")
    if not np.all(np.isfinite(x)):
        raise ValueError("draws must be finite numbers")
    return x


def _pool_ends(observed: list[float], expected: list[float], low_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """Merge an outer cell whose expected count is under 5 into its neighbour until both ends reach 5 (or two
    cells are left), one end then the other per round, the low end first when ``low_first``."""
    obs, exp = list(observed), list(expected)

    def merge(low: bool) -> None:
        if len(exp) > 2 and exp[0 if low else -1] < 5:
            if low:
                obs[0:2], exp[0:2] = [obs[0] + obs[1]], [exp[0] + exp[1]]
            else:
                obs[-2:], exp[-2:] = [obs[-2] + obs[-1]], [exp[-2] + exp[-1]]

    while len(exp) > 2 and (exp[0] < 5 or exp[-1] < 5):
        merge(low_first)
        merge(not low_first)
    return np.asarray(obs, float), np.asarray(exp, float)


def release_chi2(name: str, samples: Any) -> tuple[float, float]:
    """``(chi2, p)`` of the release convention's goodness-of-fit test of a discrete law (section 4): Pearson's
    ``sum (O_k - E_k)^2 / E_k`` with ``E_k = n * pmf(k)`` over the cells described in the module docstring, its
    p-value from the chi-square law with ``cells - 1`` degrees of freedom (:func:`scipy.stats.chisquare`)."""
    law = _law_of(name)
    if not law.discrete:
        raise ValueError(f"{name} is a continuous law; the release scores it with a two-sample KS test")
    x = _finite_array(samples)
    n = x.size
    dist = law.dist
    if name == "Bernoulli":
        observed = [float(np.sum(x == 0)), float(np.sum(x == 1))]
        expected = [n * (1 - law.params["p"]), n * law.params["p"]]
        obs, exp = np.asarray(observed), np.asarray(expected)
    else:
        ints = np.trunc(x).astype(np.int64)
        top = int(law.params["n"]) + 1 if name == "Binomial" else 15
        observed = [float(np.sum(ints == k)) for k in range(top)]
        expected = [n * float(dist.pmf(k)) for k in range(top)]
        if name == "Poisson":
            observed.append(float(np.sum(ints >= top)))
            expected.append(n * float(dist.sf(top - 1)))
        obs, exp = _pool_ends(observed, expected, low_first=(name == "Binomial"))
    # The release's expected counts add up to n even where some draws fall in no cell; scipy refuses sums that
    # differ, so the statistic and its chi-square tail are computed here from the same formula.
    chi2 = float(np.sum((obs - exp) ** 2 / exp))
    return chi2, float(stats.chi2.sf(chi2, obs.size - 1))


def release_pvalue(name: str, samples: Any, reference: Any) -> float:
    """The release convention's p-value: :func:`release_chi2` for a discrete law, else the two-sample KS test
    (:func:`scipy.stats.ks_2samp`, default method) of the draws against the reference draws."""
    if _law_of(name).discrete:
        return release_chi2(name, samples)[1]
    return float(stats.ks_2samp(_finite_array(samples), _finite_array(reference)).pvalue)


def _discrete_cells(name: str) -> np.ndarray:
    """The support cells of a discrete law; the last Poisson cell stands for the tail ``>= K``."""
    law = _law_of(name)
    if name == "Bernoulli":
        return np.array([0, 1])
    if name == "Binomial":
        return np.arange(int(law.params["n"]) + 1)
    k = 0
    while law.dist.sf(k - 1) >= 1e-6:
        k += 1
    return np.arange(k)  # cell k-1 holds the tail >= k-1


def exact_pvalue(name: str, samples: Any, *, seed: int = 0, draws: int = DEFAULT_MC_DRAWS) -> float:
    """The default convention's p-value (see the module docstring): the exact one-sample KS test for a
    continuous law; for a discrete law the Monte-Carlo tail of the likelihood-ratio statistic over the unpooled support
    (``draws`` multinomial draws from ``numpy.random.default_rng(seed)``), 0 when a draw is off the support."""
    law = _law_of(name)
    x = _finite_array(samples)
    if not law.discrete:
        return float(stats.kstest(x, law.dist.cdf, method="exact").pvalue)
    cells = _discrete_cells(name)
    last = int(cells[-1])
    open_tail = name == "Poisson"
    if np.any(x != np.round(x)) or np.any(x < 0) or (not open_tail and np.any(x > last)):
        return 0.0
    ints = np.minimum(x.astype(np.int64), last) if open_tail else x.astype(np.int64)
    observed = np.bincount(ints, minlength=cells.size).astype(float)
    probs = law.dist.pmf(cells)
    if open_tail:
        probs[-1] = law.dist.sf(last - 1)
    probs = probs / probs.sum()
    n = x.size
    expected = n * probs

    def g_statistic(counts: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(counts > 0, counts * np.log(counts / expected), 0.0)
        return 2.0 * np.sum(terms, axis=-1)

    t = float(g_statistic(observed))
    sims = g_statistic(np.random.default_rng(seed).multinomial(n, probs, size=int(draws)).astype(float))
    return float((1 + np.sum(sims >= t - 1e-9 * max(1.0, t))) / (1 + int(draws)))


def law_draws(name: str, size: int = DEFAULT_TRUTH_DRAWS, seed: int = 0) -> np.ndarray:
    """``size`` draws of the law from ``numpy.random.default_rng(seed)`` (the default convention's W1 reference,
    and what the offline oracle answers with)."""
    return np.asarray(_law_of(name).dist.rvs(size=int(size), random_state=np.random.default_rng(seed)), float)


def dice_w1(samples: Any, reference: Any) -> float:
    """Wasserstein-1 ``integral |F_draws(x) - F_ref(x)| dx`` between the draws and a reference sample
    (:func:`scipy.stats.wasserstein_distance`), the paper's primary distance (section 4)."""
    return float(stats.wasserstein_distance(_finite_array(samples), _finite_array(reference)))


def dice_scores(name: str, samples: Any, *, convention: str = "default", reference: Any = None,
                alpha: float = DICE_ALPHA, seed: int = 0) -> dict[str, Any]:
    """``{"n", "p_value", "w1", "passed"}`` of one list of draws of law ``name`` in ``convention``.
    ``reference`` is needed in the release convention (the release's reference draws); in the default one it
    defaults to :func:`law_draws` (seed ``seed``)."""
    if convention not in DICE_CONVENTIONS:
        raise ValueError(f"convention must be one of {', '.join(DICE_CONVENTIONS)}, got {convention!r}")
    x = _finite_array(samples)
    if convention == "release":
        if reference is None:
            raise ValueError("the release convention needs the release's reference draws")
        p = release_pvalue(name, x, reference)
    else:
        p = exact_pvalue(name, x, seed=seed)
        if reference is None:
            reference = law_draws(name, seed=seed)
    return {"n": int(x.size), "p_value": p, "w1": dice_w1(x, reference), "passed": passes(p, alpha)}


def dice_row(name: str, values: Sequence[float], n_asked: int, *, convention: str = "default",
             alpha: float = DICE_ALPHA, seed: int = 0) -> dict[str, float]:
    """One law's per-problem score as the Inspect scorer and the lm-eval hook report it: ``passed`` (0/1),
    ``w1``, ``p_value``, ``n_values`` and ``count_error = |n_values - n_asked| / n_asked``. Non-finite values are
    left out; without values the law fails with ``w1`` and ``p_value`` undefined (NaN). The release convention's
    reference is :data:`RELEASE_REFERENCE_DRAWS` draws of the law."""
    kept = [float(v) for v in values if math.isfinite(float(v))]
    n_asked = max(1, int(n_asked))
    row = {"passed": 0.0, "w1": math.nan, "p_value": math.nan, "n_values": float(len(kept)),
           "count_error": abs(len(kept) - n_asked) / n_asked}
    if kept:
        ref = law_draws(name, *RELEASE_REFERENCE_DRAWS) if convention == "release" else None
        s = dice_scores(name, kept, convention=convention, reference=ref, alpha=alpha, seed=seed)
        row.update(passed=float(s["passed"]), w1=s["w1"], p_value=s["p_value"])
    return row


def passes(p_value: float, alpha: float = DICE_ALPHA) -> bool:
    """The paper's pass rule: ``p > alpha`` (a NaN p-value fails)."""
    return bool(p_value > alpha)


def pass_rate(p_values: Sequence[float], alpha: float = DICE_ALPHA) -> float:
    """The share of p-values above ``alpha`` (the paper's pass rate, Table 1's last column); NaN when empty."""
    ps = list(p_values)
    return sum(passes(p, alpha) for p in ps) / len(ps) if ps else math.nan


def letter_uniformity(counts: Mapping[str, int] | Sequence[int]) -> dict[str, Any]:
    """``{"n", "counts", "chi2", "p_value"}``: Pearson's chi-square of the A-D answer-letter counts against the
    uniform 1/4 each, 3 degrees of freedom (:func:`scipy.stats.chisquare`; section 6, downstream MCQ)."""
    if isinstance(counts, Mapping):
        obs = [int(counts.get(k, 0)) for k in MCQ_LETTERS]
    else:
        obs = [int(c) for c in counts]
    if len(obs) != len(MCQ_LETTERS) or min(obs) < 0 or sum(obs) == 0:
        raise ValueError("letter counts must be four non-negative counts (A-D) with a positive total")
    res = stats.chisquare(obs)
    return {"n": sum(obs), "counts": dict(zip(MCQ_LETTERS, obs)), "chi2": float(res.statistic),
            "p_value": float(res.pvalue)}
