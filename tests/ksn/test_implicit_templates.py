"""Text-implicit scenarios and code-implicit programs of the 40 table-10 families.

Text: every family x regime gives a non-empty, distinct scenario that names no distribution, uses no answer-format
instruction and states the numbers that fix the parameters.

Code: the exactness test runs each program N = 400 times (``np.random.default_rng`` patched to hand out
generators from a fixed seed sequence, stdout captured) and compares the printed values with 20,000 draws of
``ub_core.distributions.sample``: two-sample KS for continuous targets, a chi-square test of homogeneity on binned
counts for discrete and categorical ones (bins merged until each expects >= 5 of the program's values), both for
the mixed rectified Gaussian (KS, conservative under the tie at 0, plus the share of exact zeros). A case passes
when p > 1e-4; with correct programs the chance that any of the ~100 checks fails is about 1%, and the seeds are
fixed, so the outcome is deterministic. A mutation test shows the harness rejects near-miss programs.
"""

from __future__ import annotations

import contextlib
import io
import re
import zlib

import numpy as np
import pytest
from scipy import stats

from ub_core import distributions as D
from ub_core.distributions import fmt
from ub_core.problems.ksn.code_implicit import CODE_IMPLICIT
from ub_core.problems.ksn.text_implicit import TEXT_IMPLICIT
from ub_core.problems.ksn.regimes import REGIME_NAMES, REGIMES

N_PROGRAM = 400
N_REFERENCE = 20_000
ALPHA = 1e-4

FAMILIES = D.TABLE10_FAMILIES
CASES = [(f, r, REGIMES[f][r]) for f in FAMILIES for r in REGIME_NAMES]

# Parameters that take the templates' other branches (fractional degrees of freedom / stops / shapes, a mode at
# an edge, unequal categorical weights, a component reduction, a non-zero location).
EXTRA = [
    ("gamma", "extra-2.3", {"shape": 2.3, "scale": 1.5}),
    ("gamma", "extra-0.7", {"shape": 0.7, "scale": 4}),
    ("chi_squared", "extra-2.5", {"df": 2.5}),
    ("students_t", "extra-2.5", {"df": 2.5, "loc": -1, "scale": 2}),
    ("f", "extra-2.5", {"dfnum": 2.5, "dfden": 7.5}),
    ("beta", "extra-int", {"a": 2, "b": 5}),
    ("dirichlet", "extra-real", {"alpha": [1.3, 2.2, 0.7], "component": 2}),
    ("triangular", "extra-edge", {"left": 1, "mode": 1, "right": 4}),
    ("negative_binomial", "extra-2.5", {"n": 2.5, "p": 0.3}),
    ("negative_multinomial", "extra-2.5", {"n": 2.5, "pvals": [0.4, 0.35, 0.25], "component": 1}),
    ("frechet", "extra-loc", {"c": 3, "scale": 2, "loc": 5}),
    ("multivariate_normal", "extra-comp", {"mean": [1, 2, 3], "cov": [[4, 1, 0], [1, 3, 1], [0, 1, 2]],
                                           "component": 1}),
    ("multivariate_t", "extra-sum", {"loc": [1, -1], "shape": [[2, 0.5], [0.5, 1]], "df": 5, "reduce": "sum"}),
    ("categorical", "extra-thirds", {"pvals": [1 / 3, 1 / 2, 1 / 6], "labels": ["left", "middle", "right"]}),
]
ALL_CASES = CASES + EXTRA


def _id(case) -> str:
    return f"{case[0]}-{case[1]}"


# ------------------------------------------------------------------------------------------------ text checks

# No scenario may name any distribution or use these statistics terms.
GLOBAL_FORBIDDEN = [
    "distribution", "distributed", "random variable", "pdf", "pmf", "cdf", "probability density",
    "poisson", "binomial", "multinomial", "hypergeometric", "bernoulli", "skellam", "geometric", "categorical",
    "gaussian", "normal", "normally", "log-normal", "lognormal", "dirichlet", "weibull", "gamma", "beta",
    "erlang", "pareto", "rayleigh", "frechet", "fréchet", "gumbel", "laplace", "logistic", "student's",
    "t-distribution", "chi-square", "chi-squared", "chi squared", "exponential", "exponentially", "arcsine",
    "arc-sine", "log-uniform", "loguniform", "reciprocal", "triangular", "truncated", "uniform", "uniformly",
    "wald", "inverse gaussian", "rectified", "compound", "f-distribution", "degrees of freedom", "i.i.d",
    "iid", "heavy-tailed", "memoryless",
]
# Words of a family's own title (length >= 3) that would give it away, beyond the global list.
_TITLE_STOP = {"type", "with", "squared"}


def _title_words(family: str) -> list[str]:
    title = D.get_family(family).title.lower()
    words = {title.split(" (")[0]}
    words |= {w for w in re.split(r"[\s()\-']+", title) if len(w) >= 3 and w not in _TITLE_STOP}
    return sorted(words)


def _has_word(text: str, word: str) -> bool:
    return re.search(r"(?<![a-z])" + re.escape(word) + r"(?![a-z])", text.lower()) is not None


def _upper(m) -> list:
    return [m[i][j] for i in range(len(m)) for j in range(i, len(m))]


def _text_keys(family: str, p: dict) -> list:
    """The numbers (or strings) each scenario must state for the parameters to be pinned down."""
    intish = lambda x: float(x).is_integer()  # noqa: E731
    keys = {
        "beta": lambda: [p["a"] + p["b"] - 1, p["a"]] if intish(p["a"]) and intish(p["b"]) else [p["a"], p["b"]],
        "arcsine": lambda: [p["low"], p["high"]],
        "reciprocal": lambda: [p["a"], p["b"]],
        "rayleigh_mixture": lambda: [p["sigma"]] + [v for a in p["kernel_params"].values()
                                                     for v in (a["const"], a["coef_R"]) if v not in (0, 1)],
        "triangular": lambda: [p["left"], p["mode"], p["right"]],
        "truncated_normal": lambda: [p["loc"], p["scale"], p["low"], p["high"]],
        "uniform": lambda: [p["low"], p["high"]],
        "erlang": lambda: [p["k"], p["scale"]],
        "f": lambda: [p["dfnum"], p["dfden"]],
        "frechet": lambda: [p["c"], p["scale"], p["loc"]],
        "gamma": lambda: ([p["shape"], p["scale"]] if intish(p["shape"]) else
                          [2 * p["shape"], p["scale"] / 2] if intish(2 * p["shape"]) else
                          [p["shape"] - 1, p["scale"]]),
        "pareto": lambda: [p["a"], p["scale"]],
        "rayleigh": lambda: [p["scale"]],
        "weibull": lambda: [p["a"], p["scale"]],
        "chi_squared": lambda: [p["df"]] if intish(p["df"]) else [p["df"] / 2 - 1],
        "exponential": lambda: [p["scale"]],
        "inverse_gaussian": lambda: [p["mean"], p["mean"] ** 2 / p["scale"]],
        "log_normal": lambda: [p["mean"], p["sigma"]],
        "gumbel": lambda: [abs(p["loc"]), p["scale"]] if p["loc"] else [p["scale"]],
        "laplace": lambda: [p["loc"], p["scale"]],
        "students_t": lambda: [p["df"]] + ([p["loc"]] if p["loc"] else []) + ([p["scale"]] if p["scale"] != 1
                                                                                 else []),
        "logistic": lambda: [abs(p["loc"]), p["scale"]] if p["loc"] else [p["scale"]],
        "normal": lambda: [p["loc"], p["scale"]],
        "bernoulli": lambda: [fmt(p["p"])],
        "poisson_binomial": lambda: [len(p["p"])] + [fmt(x) for x in p["p"]],
        "beta_binomial": lambda: [p["n"], p["a"], p["b"]],
        "binomial": lambda: [p["n"], fmt(p["p"])],
        "discrete_uniform": lambda: [p["low"], p["high"]],
        "hypergeometric": lambda: [p["ngood"] + p["nbad"], p["ngood"], p["nsample"]],
        "poisson": lambda: [p["lam"]],
        "skellam": lambda: [p["mu1"], p["mu2"]],
        "compound_poisson": lambda: [p["lam"], fmt(p["p"])],
        "geometric": lambda: [fmt(p["p"])],
        "negative_binomial": lambda: [p["n"], fmt(p["p"])] if intish(p["n"]) else [p["n"] - 1],
        "dirichlet": lambda: list(p["alpha"]),
        "multinomial": lambda: [p["n"]] + [fmt(x) for x in p["pvals"]],
        "multivariate_normal": lambda: list(p["mean"]) + _upper(p["cov"]),
        "multivariate_t": lambda: list(p["loc"]) + _upper(p["shape"]) + [p["df"]],
        "negative_multinomial": lambda: ([p["n"]] + [fmt(x) for x in p["pvals"]] if intish(p["n"])
                                         else [p["n"] - 1]),
        "rectified_gaussian": lambda: [p["loc"], p["scale"]],
        "categorical": lambda: list(p["labels"]) + [fmt(x) for x in p["pvals"]],
    }[family]()
    return [k if isinstance(k, str) else fmt(k) for k in keys]


def _states(text: str, key: str) -> bool:
    if not re.fullmatch(r"-?[\d.]+(/\d+)?", key):
        return key in text
    return re.search(r"(?<![\d.])" + re.escape(key) + r"(?!\d)(?!\.\d)", text) is not None


def test_both_dicts_cover_exactly_table10():
    assert set(TEXT_IMPLICIT) == set(FAMILIES)
    assert set(CODE_IMPLICIT) == set(FAMILIES)
    assert len(FAMILIES) == 40


@pytest.mark.parametrize("family", FAMILIES)
def test_text_scenarios(family):
    texts = []
    for regime in REGIME_NAMES:
        params = REGIMES[family][regime]
        text = TEXT_IMPLICIT[family](params)
        texts.append(text)
        assert isinstance(text, str) and text.strip() == text and len(text) > 80
        sentences = [s for s in re.split(r"(?<=[.?!])\s+", text) if s]
        assert 2 <= len(sentences) <= 6, sentences
        assert text.endswith("?") or "Report" in text
        assert "{" not in text and "}" not in text, "the answer format is appended elsewhere"
        for word in GLOBAL_FORBIDDEN + _title_words(family):
            assert not _has_word(text, word), f"{family}/{regime} says {word!r}: {text}"
        validated = D.validate(family, params)
        for key in _text_keys(family, validated):
            assert _states(text, key), f"{family}/{regime} does not state {key!r}: {text}"
    assert texts[0] != texts[1]


def test_text_scenarios_all_distinct_and_extra_params_work():
    seen = [TEXT_IMPLICIT[f](p) for f, _, p in CASES]
    assert len(set(seen)) == len(seen)
    for family, label, params in EXTRA:
        text = TEXT_IMPLICIT[family](params)
        for word in GLOBAL_FORBIDDEN + _title_words(family):
            assert not _has_word(text, word), f"{family}/{label} says {word!r}: {text}"
        for key in _text_keys(family, D.validate(family, params)):
            assert _states(text, key), f"{family}/{label} does not state {key!r}: {text}"


def test_templates_validate_their_params():
    with pytest.raises(D.ParameterError):
        TEXT_IMPLICIT["normal"]({"loc": 0, "scale": -1})
    with pytest.raises(D.ParameterError):
        CODE_IMPLICIT["poisson"]({"lam": -1})


# ------------------------------------------------------------------------------------------------ code checks

# The family's own samplers (numpy and scipy names) must not appear in its program.
OWN_METHODS = {
    "beta": ["rng.beta", ".beta("], "arcsine": ["arcsine"], "reciprocal": ["loguniform", "reciprocal"],
    "triangular": ["triangular"], "truncated_normal": ["truncnorm", "truncated"], "uniform": ["rng.uniform"],
    "erlang": ["erlang", "rng.gamma", "standard_gamma"], "f": ["rng.f(", ".f("],
    "frechet": ["invweibull", "frechet", "rng.weibull"],
    "gamma": ["rng.gamma", "standard_gamma", "stats.gamma"],
    "pareto": ["pareto"], "rayleigh": ["rayleigh"], "rayleigh_mixture": ["rayleigh"], "weibull": ["weibull"],
    "chi_squared": ["chisquare", "chi2"],
    "exponential": ["exponential", "expon"], "inverse_gaussian": ["wald", "invgauss"],
    "log_normal": ["lognormal", "lognorm", "rng.normal"], "gumbel": ["gumbel"], "laplace": ["laplace"],
    "students_t": ["standard_t", "stats.t"], "logistic": ["logistic"],
    "normal": ["rng.normal", "standard_normal", "norm"],
    "bernoulli": ["binomial", "bernoulli"], "poisson_binomial": ["binomial"],
    "beta_binomial": ["betabinom", "binomial("], "binomial": ["binomial"],
    "discrete_uniform": ["integers", "randint", "choice"], "hypergeometric": ["hypergeom"],
    "poisson": ["poisson"], "skellam": ["skellam", "poisson"], "compound_poisson": ["poisson", "geometric"],
    "geometric": ["geometric", "geom"], "negative_binomial": ["negative_binomial", "nbinom"],
    "dirichlet": ["dirichlet"], "multinomial": ["multinomial", "choice"],
    "multivariate_normal": ["multivariate_normal"], "multivariate_t": ["multivariate_t", "standard_t"],
    "negative_multinomial": ["multinomial", "negative_binomial", "choice"],
    "rectified_gaussian": ["rectified"], "categorical": ["choice", "integers"],
}


@pytest.mark.parametrize("case", ALL_CASES, ids=_id)
def test_program_shape(case):
    family, _, params = case
    src = CODE_IMPLICIT[family](params)
    compile(src, "<implicit>", "exec")
    lines = src.rstrip("\n").split("\n")
    assert 5 <= len(lines) <= 16, src
    assert lines[0] == "import numpy as np"
    assert "rng = np.random.default_rng()" in lines
    imports = [ln for ln in lines if re.match(r"\s*(import|from)\s", ln)]
    assert set(imports) <= {"import numpy as np", "import math"}, imports
    assert "scipy" not in src and src.count("np.random.") == 1
    assert lines[-1].startswith("print(") and src.count("print(") == 1
    for name in OWN_METHODS[family]:
        assert name not in src, f"{family} program uses {name!r}:\n{src}"


def _run_program(src: str, n: int, seed: int, monkeypatch) -> list[str]:
    code = compile(src, "<implicit>", "exec")
    children = iter(np.random.SeedSequence([seed, 2024]).spawn(n))

    def fake_default_rng(*args, **kwargs):
        assert not args and not kwargs, "the program must seed from entropy"
        return np.random.Generator(np.random.PCG64(next(children)))

    out = []
    with monkeypatch.context() as m:
        m.setattr(np.random, "default_rng", fake_default_rng)
        for _ in range(n):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(code, {"__name__": "__main__"})
            printed = buf.getvalue().strip().split("\n")
            assert len(printed) == 1, printed
            out.append(printed[0])
    return out


def _parse(family: str, params: dict, printed: list[str]) -> np.ndarray:
    support = D.support_kind(family, params)
    if support == "categorical":
        labels = list(params["labels"])
        return np.array([labels.index(s) for s in printed], dtype=float)
    if support == "discrete":
        assert all(re.fullmatch(r"-?\d+", s) for s in printed), "integer targets print ints"
        return np.array([int(s) for s in printed], dtype=float)
    return np.array([float(s) for s in printed])


def chisquare_homogeneity(a: np.ndarray, b: np.ndarray, min_expected: float = 5.0) -> float:
    """p-value of the chi-square test that two discrete samples share one distribution.

    The pooled values are sorted and adjacent values merged into bins until each bin expects at least
    ``min_expected`` values of the smaller sample under the null (pooled proportions); a bin left short at the
    top is merged into its neighbour.
    """
    values, counts = np.unique(np.concatenate([a, b]), return_counts=True)
    share = min(a.size, b.size) / (a.size + b.size)
    edges, run = [], 0.0
    for v, c in zip(values, counts):
        run += c * share
        if run >= min_expected:
            edges.append(v)
            run = 0.0
    # bin i holds the values in (edges[i-1], edges[i]]; the last bin also takes what is left above its edge
    cuts = np.asarray(edges[:-1], dtype=float)
    ia = np.searchsorted(cuts, a, side="left")
    ib = np.searchsorted(cuts, b, side="left")
    k = cuts.size + 1
    if k < 2:
        return 1.0
    table = np.vstack([np.bincount(ia, minlength=k), np.bincount(ib, minlength=k)])
    return float(stats.chi2_contingency(table, correction=False)[1])


def _pvalues(family: str, params: dict, got: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    support = D.support_kind(family, params)
    if support == "continuous":
        return {"ks": float(stats.ks_2samp(got, ref).pvalue)}
    if support == "mixed":
        return {"ks": float(stats.ks_2samp(got, ref).pvalue),
                "zeros": chisquare_homogeneity((got == 0).astype(float), (ref == 0).astype(float))}
    return {"chi2": chisquare_homogeneity(got, ref)}


def _seed(family: str, label: str) -> int:
    return zlib.crc32(f"{family}/{label}".encode())


@pytest.mark.parametrize("case", ALL_CASES, ids=_id)
def test_program_is_exact(case, monkeypatch):
    family, label, params = case
    params = D.validate(family, params)
    ref = D.sample(family, params, N_REFERENCE, _seed(family, label) + 1)  # before default_rng is patched
    printed = _run_program(CODE_IMPLICIT[family](params), N_PROGRAM, _seed(family, label), monkeypatch)
    got = _parse(family, params, printed)
    pvals = _pvalues(family, params, got, ref)
    assert min(pvals.values()) > ALPHA, f"{family}/{label}: {pvals}"


# Near misses the exactness test must reject: off-by-one starts, rate for mean, a wrong count.
MUTANTS = [
    ("geometric", "concentrated", "tries = 1", "tries = 0"),
    ("exponential", "spread", "x = 50 *", "x = 0.02 *"),
    ("poisson", "concentrated", "while t <= 2:", "while t <= 3:"),
    ("negative_binomial", "concentrated", "print(misses)", "print(misses + wins)"),
    ("students_t", "spread", "z / np.sqrt(s / 3)", "z / np.sqrt(s)"),
    ("categorical", "concentrated", "[0.9, 0.04,", "[0.8, 0.14,"),
    ("rectified_gaussian", "spread", "max(0.0, 30 * z)", "abs(30 * z)"),
]


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m[0])
def test_exactness_harness_rejects_near_misses(mutant, monkeypatch):
    family, regime, old, new = mutant
    params = D.validate(family, REGIMES[family][regime])
    src = CODE_IMPLICIT[family](params)
    assert old in src
    ref = D.sample(family, params, N_REFERENCE, _seed(family, "mutant") + 1)
    printed = _run_program(src.replace(old, new), N_PROGRAM, _seed(family, "mutant"), monkeypatch)
    pvals = _pvalues(family, params, _parse(family, params, printed), ref)
    assert min(pvals.values()) < ALPHA, f"{family}: the mutant passed {pvals}"


def test_chisquare_homogeneity_helper():
    rng = np.random.default_rng(5)
    a, b = rng.poisson(3, 400).astype(float), rng.poisson(3, 20_000).astype(float)
    assert chisquare_homogeneity(a, b) > 0.001
    assert chisquare_homogeneity(a + 1, b) < 1e-10
    assert chisquare_homogeneity(np.ones(10), np.ones(50)) == 1.0
