"""Family registration, explicit bank membership, template registration and the one describer.

- KS@N membership is the explicit list ``TABLE10_FAMILIES``: registering a family, wherever in the module, adds it
  to no bank.
- Templates are registered with ``@template(kind, family)``; ``family_table(kind)`` reads that registry.
- ``distributions.describe`` serves both the KS@N prompts (style ``prompt``) and the odds bank (style ``odds``).
- A new family is usable for a problem and its prompts with its definition plus two registrations
  (``register_family`` and one ``@template``), touching no other file.
"""

from __future__ import annotations

import ast
import inspect
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ub_core import distributions as D
from ub_core.problems import odds
from ub_core.problems.ksn import bank as ksn
from ub_core.problems.ksn import template_registry
from ub_core.problems.ksn.code_implicit import CODE_IMPLICIT
from ub_core.problems.ksn.text_implicit import TEXT_IMPLICIT
from ub_core.problems.ksn.regimes import REGIMES
from ub_core.problems.ksn.templates import TEMPLATE_KINDS, family_table, template, template_for

TOY = "toy_shifted_exponential"


def _toy_family() -> D.Family:
    """A family defined entirely here: X = shift + an exponential with mean ``scale``."""
    check = D._keep(TOY, {"shift": D.REAL, "scale": D.POS})
    return D.Family(
        name=TOY, title="Shifted exponential", group="continuous_semi_infinite", support="continuous",
        param_doc="shift (lowest value), scale > 0 (mean of the excess over shift)", check=check,
        draw=lambda r, p, n: p["shift"] + r.exponential(p["scale"], n),
        text=lambda p: f"an exponential distribution with mean {D.fmt(p['scale'])}, shifted to start at "
                       f"{D.fmt(p['shift'])}",
        styles={"odds": lambda p, convention: f"Shifted exponential distribution: {D.fmt(p['shift'])} plus an "
                                              f"exponential with scale {D.fmt(p['scale'])}."},
        scipy_dist=lambda p: stats.expon(loc=p["shift"], scale=p["scale"]),
        bounds=lambda p: (p["shift"], math.inf))


# ------------------------------------------------------------------------------------------------ membership

def test_table10_is_an_explicit_list_of_registered_families():
    assert len(D.TABLE10_FAMILIES) == 40 == len(set(D.TABLE10_FAMILIES))
    assert all(f in D.FAMILIES for f in D.TABLE10_FAMILIES)
    assert all(f in D.FAMILIES for f in D.ODDS_EXTRA_FAMILIES)
    assert not set(D.TABLE10_FAMILIES) & set(D.ODDS_EXTRA_FAMILIES)
    # the table's order, group by group (table 10 of UnpredictaBench)
    groups = [D.FAMILIES[f].group for f in D.TABLE10_FAMILIES]
    assert groups == sorted(groups, key=groups.index)
    assert D.TABLE10_FAMILIES[:3] == ("beta", "arcsine", "reciprocal") and D.TABLE10_FAMILIES[-1] == "categorical"
    # families registered in the module but outside table 10 stay out
    assert {"empirical_discrete", "skew_normal", "power_law", "mixture", "uniform_permutation"} <= set(D.FAMILIES)
    assert not {"empirical_discrete", "mixture", "uniform_permutation"} & set(D.TABLE10_FAMILIES)


def test_the_bank_family_lists_are_literals_not_registration_order():
    """The banks' family lists are written out name by name, so no family registered anywhere (among the table-10
    families, or by a plug-in) can join them; a list derived from the registry's order would let one in."""
    for module, name in ((D.outcomes, "TABLE10_FAMILIES"), (D.mixtures, "ODDS_EXTRA_FAMILIES")):
        tree = ast.parse(inspect.getsource(module))
        (value,) = [node.value for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                    and getattr(node.target, "id", None) == name]
        assert isinstance(value, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                    for e in value.elts), name
        assert tuple(e.value for e in value.elts) == getattr(D, name)


def test_registering_a_family_changes_no_bank(registries):
    before_ksn = [(p.id, p.prompt) for p in ksn.generated_problems()]
    before_tables = (tuple(family_table("code_implicit")), tuple(family_table("text_implicit")))
    D.register_family(_toy_family())
    template("text_implicit", TOY)(lambda p: "A toy story.")
    template("code_implicit", TOY)(lambda p: "print(0)")
    assert [(p.id, p.prompt) for p in ksn.generated_problems()] == before_ksn
    assert (tuple(family_table("code_implicit")), tuple(family_table("text_implicit"))) == before_tables
    assert tuple(CODE_IMPLICIT) == tuple(TEXT_IMPLICIT) == D.TABLE10_FAMILIES
    assert all(spec.family in odds.DISTRIBUTIONS for spec in odds._idealized_specs("paper"))


def test_register_family_rejects_duplicates_and_non_families(registries):
    with pytest.raises(D.ParameterError, match="'normal' is already registered"):
        D.register_family(D.FAMILIES["normal"])
    with pytest.raises(TypeError, match="needs a Family"):
        D.register_family({"name": "x"})


# ------------------------------------------------------------------------------------------------ a new family

def test_a_toy_family_serves_a_problem_and_its_prompts(registries):
    """Definition + ``register_family`` + one ``@template``: sampling, both description styles, the text-explicit
    and text-implicit prompts, and a scored KS@N problem, with no other file touched."""
    D.register_family(_toy_family())                                    # registration 1

    @template("text_implicit", TOY)                                     # registration 2
    def _toy_story(p):
        return (f"A shop opens at minute {D.fmt(p['shift'])}; after that, customers arrive at random, one every "
                f"{D.fmt(p['scale'])} minutes on average. At what minute does the first customer arrive?")

    params = {"shift": 5, "scale": 2}
    assert D.describe(TOY, params) == "an exponential distribution with mean 2, shifted to start at 5"
    assert D.describe(TOY, params, "odds") == "Shifted exponential distribution: 5 plus an exponential with scale 2."
    assert D.moments(TOY, params) == pytest.approx((7.0, 4.0))
    assert D.support_bounds(TOY, params) == (5.0, math.inf)

    story = template_for("text_implicit", TOY)(params)
    assert "minute 5" in story and "every 2 minutes" in story
    with pytest.raises(D.ParameterError, match="scale"):
        template_for("text_implicit", TOY)({"shift": 5, "scale": -1})  # params are validated first

    prompts = {"text_explicit": ksn.text_explicit_prompt(TOY, params),
               "text_implicit": ksn.text_implicit_prompt(story)}
    assert "an exponential distribution with mean 2, shifted to start at 5" in prompts["text_explicit"]
    for kind, prompt in prompts.items():
        problem = ksn._scalar_problem(f"te-{TOY}-x", kind, kind, TOY, params, "concentrated", prompt)
        assert problem.support == "continuous" and problem.answer_format == "number" and problem.low == 5.0
        draws = problem.draw(4000, seed=0)
        np.testing.assert_array_equal(draws, problem.draw(4000, seed=0))
        assert draws.min() >= 5.0
        # a correct sampler's KS p-value is uniform on (0, 1); with this fixed seed it is far above 1e-3
        assert stats.kstest(draws, stats.expon(loc=5, scale=2).cdf).pvalue > 1e-3
    # the toy family also works as a mixture component
    mix = {"components": [{"family": TOY, "params": params, "weight": 0.5},
                          {"family": "normal", "params": {"loc": 0, "scale": 1}, "weight": 0.5}]}
    assert "with probability 0.5, an exponential distribution with mean 2" in D.describe("mixture", mix)


# ------------------------------------------------------------------------------------------------ templates

def test_template_registry_matches_the_tables():
    for kind, table in (("code_implicit", CODE_IMPLICIT), ("text_implicit", TEXT_IMPLICIT)):
        # the table-10 families, plus the laws some release programs sample instead of their row's family
        extra = {"code_implicit": {"rayleigh", "empirical_discrete", "multinomial_weighted_sum"},
                 "text_implicit": {"rayleigh", "empirical_discrete"}}[kind]
        assert set(template_registry._TEMPLATES[kind]) == set(D.TABLE10_FAMILIES) | extra
        for family in ("beta", "multinomial", "categorical"):
            params = REGIMES[family]["spread"]
            assert table[family](params) == template_for(kind, family)(params)
            assert table[family].__name__ == f"{kind}_{family}"


def test_template_errors_are_one_line(registries):
    with pytest.raises(ValueError, match="unknown template kind 'text_explicit'"):
        template("text_explicit", "beta")  # every family describes itself: nothing to register
    with pytest.raises(ValueError, match="unknown template kind 'code'"):
        template_for("code", "beta")
    with pytest.raises(ValueError, match="'beta' already has a template"):
        template("code_explicit", "beta")(lambda p: "print(1)")
    with pytest.raises(ValueError, match="code_explicit: no template for family 'skew_normal'"):
        template_for("code_explicit", "skew_normal")  # was a bare KeyError from a private dict
    with pytest.raises(D.ParameterError, match="unknown distribution family 'betta'"):
        template("code_implicit", "betta")
    with pytest.raises(ValueError, match="'beta' already has a template"):
        template("code_implicit", "beta")(lambda p: "print(1)")
    with pytest.raises(ValueError, match="no template for family 'skew_normal'"):
        template_for("code_implicit", "skew_normal")
    with pytest.raises(RuntimeError, match="no template for skew_normal"):
        family_table("code_implicit", ["beta", "skew_normal"])
    assert tuple(family_table("code_implicit", ["beta", "normal"])) == ("beta", "normal")


def test_every_kind_is_loaded_in_a_fresh_process():
    """In a fresh process ``template_for("text_implicit", "beta")`` failed until ``text_implicit``
    happened to be imported. Importing the templates module loads all four kinds."""
    import subprocess
    import sys

    code = ("from ub_core.problems.ksn.templates import TEMPLATE_KINDS, template_for\n"
            "for kind in TEMPLATE_KINDS:\n"
            "    print(kind, len(template_for(kind, 'beta')({'a': 2, 'b': 3})) > 20)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [w for kind in TEMPLATE_KINDS for w in (kind, "True")]
    assert set(TEMPLATE_KINDS) == {"text_explicit", "text_implicit", "code_explicit", "code_implicit"}


# ------------------------------------------------------------------------------------------------ one describer

ODDS_TEXTS = {
    ("normal", "none"): ({"loc": 100.0, "scale": 10.0},
                         "Normal distribution with mean 100 and standard deviation 10."),
    ("exponential", "rate"): ({"scale": 100.0},
                              "Exponential distribution with rate lambda = 0.01 events per unit of time (a rate, not "
                              "a scale: the mean value is 1/lambda); values are >= 0."),
    # fmt's 6 digits are not exact here, so the odds style states 12
    ("exponential", "scale"): ({"scale": 1.0 / 0.0123},
                               "Exponential distribution with scale 81.3008130081 (a scale, not a rate: the scale is "
                               "the mean value, and the rate is 1/scale); values are >= 0."),
    ("multinomial", "none"): ({"n": 1000, "pvals": [0.2, 0.3, 0.5], "component": 1},
                              "Multinomial distribution: 1000 independent trials, each giving outcome 1 with "
                              "probability 0.2, outcome 2 with probability 0.3, outcome 3 with probability 0.5. The "
                              "value is the number of trials that give outcome 2."),
}


@pytest.mark.parametrize("family,convention", sorted(ODDS_TEXTS))
def test_odds_style_texts(family, convention):
    params, text = ODDS_TEXTS[(family, convention)]
    assert D.describe(family, params, "odds", convention=convention) == text
    assert odds.describe(family, params, convention) == text  # the odds module's name delegates


def test_every_odds_family_has_an_odds_style_and_the_prompt_style_is_unchanged():
    for family in odds.DISTRIBUTIONS:
        params = odds.PARAMETERISATIONS[family][0]
        assert D.describe(family, params, "odds").endswith((".", "..."))
    for family in D.TABLE10_FAMILIES:
        params = REGIMES[family]["concentrated"]
        text = D.describe(family, params)
        assert text == D.describe(family, params, "prompt") == D.get_family(family).describe(params)
        assert text == D.FAMILIES[family].text(D.validate(family, params))


def test_describer_errors_are_one_line():
    with pytest.raises(D.ParameterError, match="^beta: no odds-style description$"):
        D.describe("beta", {"a": 1, "b": 2}, "odds")
    with pytest.raises(D.ParameterError, match="unknown description style 'fancy'"):
        D.describe("normal", {"loc": 0, "scale": 1}, "fancy")
    with pytest.raises(D.ParameterError, match="unknown convention 'per_hour'"):
        D.describe("exponential", {"scale": 1}, "odds", convention="per_hour")
    with pytest.raises(D.ParameterError, match="scale"):
        D.describe("normal", {"loc": 0, "scale": -1}, "odds")


# ------------------------------------------------------------------------------------------------ odds split

def test_odds_machinery_and_data_are_separate_modules_under_900_lines():
    from ub_core.problems import odds_data

    for module in (odds, odds_data):
        assert len(Path(module.__file__).read_text().splitlines()) < 900
    public = [n for n in vars(odds_data) if not n.startswith("_") and n.isupper() or n == "RealWorld"]
    assert {"REAL_WORLD", "PARAMETERISATIONS", "PROMPT_OPENINGS", "FAMILY_RANGES"} <= set(public)
    for name in public:  # callers keep importing the data from ub_core.problems.odds
        assert getattr(odds, name) is getattr(odds_data, name), name
    assert not hasattr(odds_data, "odds_problems")  # no machinery in the data module
