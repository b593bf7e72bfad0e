"""The 30 real-world scenarios against the UnpredictaBench release: one scenario per real-world uid, and each
scenario's exact law equal to the law that the static analysis of the release programs derived
(``tests/data/release_specs.json``, written by ``tools/release_specs``), with the labels of the release's answer mapping
in its order.

Tolerance 1e-9, except where the analysis itself only has a numerical integral (its notes say so, "about 4-5
correct digits"): there 5e-5. Our value for that scenario is exact (piecewise polynomial integration).
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from ub_core.problems.ksn.realworld import realworld_problems, realworld_specs

SPECS = Path(__file__).resolve().parents[1] / "data" / "release_specs.json"


def _release() -> dict:
    records = json.loads(SPECS.read_text())
    return {r["uid"]: r for r in records if r.get("category") == "real_world"}


RELEASE = _release()
SCENARIOS = {s["uid"]: s for s in realworld_specs()}


def _tolerance(record: dict) -> float:
    return 5e-5 if any("numerical integration" in n for n in record.get("notes", [])) else 1e-9


def test_one_scenario_per_release_uid():
    assert len(RELEASE) == 30
    assert len(SCENARIOS) == 30 == len(realworld_specs())
    assert set(SCENARIOS) == set(RELEASE)
    assert sorted(s["release_index"] for s in SCENARIOS.values()) == list(range(30))
    for uid, s in SCENARIOS.items():
        assert s["release_index"] == RELEASE[uid]["question_index"]


def test_problems_carry_uid_and_release_index():
    problems = realworld_problems()
    for p in problems:
        record = RELEASE[p.uid]
        assert p.metadata["release_index"] == record["question_index"]
        assert p.family == record["family"]
    # order: subcategory blocks, release index increasing inside each block
    subs = [p.subcategory for p in problems]
    for sub in set(subs):
        idx = [p.metadata["release_index"] for p in problems if p.subcategory == sub]
        assert idx == sorted(idx)


@pytest.mark.parametrize("uid", sorted(RELEASE))
def test_law_matches_release(uid):
    record, spec = RELEASE[uid], SCENARIOS[uid]
    tol = _tolerance(record)
    family, params = record["family"], record["params"]
    pmf = spec["pmf"]
    assert sum(pmf.values()) == 1
    if family == "categorical":
        assert spec["kind"] == "option"
        labels = record["realworld"]["mapping_labels"]
        assert list(pmf) == labels                      # the release mapping's labels, in its order
        expected = dict(zip(params["labels"], params["pvals"]))
        assert set(expected) == set(labels)
        for label in labels:
            assert abs(float(pmf[label]) - expected[label]) <= tol, (label, float(pmf[label]), expected[label])
    elif family == "empirical_discrete":
        assert spec["kind"] == "integer"
        expected = dict(zip(params["values"], params["pvals"]))
        assert set(pmf) == {v for v, q in expected.items() if q > 0}
        for v, q in expected.items():
            assert abs(float(pmf.get(v, 0)) - q) <= tol, (v, float(pmf.get(v, 0)), q)
    else:
        assert family == "uniform_permutation" and spec["kind"] == "permutation"
        extra = record["extra"]
        n = params["n"]
        assert list(spec["items"]) == extra["items"] and len(spec["items"]) == n
        fmt = extra.get("line_format", "{x}")
        assert spec.get("line_format", "{x}") == fmt
        lines = [fmt.format(x=x) for x in extra["items"]]
        outputs = {extra["joined_with"].join(p) for p in itertools.permutations(lines)}
        assert pmf == {o: Fraction(1, math.factorial(n)) for o in outputs}


@pytest.mark.parametrize("uid", sorted(RELEASE))
def test_prompt_names_every_answer(uid):
    spec = SCENARIOS[uid]
    prompt = spec["prompt"]
    if spec["kind"] == "option":
        for label in spec["pmf"]:
            # a single-line label appears verbatim; a multi-line printed output has every one of its lines there
            for line in label.split("\n"):
                assert line in prompt, (uid, line)
    elif spec["kind"] == "permutation":
        fmt = spec.get("line_format", "{x}")
        for x in spec["items"]:
            assert fmt.format(x=x) in prompt, (uid, x)
    assert "?" in prompt or "Write" in prompt or "Give" in prompt      # it asks for the outcome


def test_permutation_problems_are_built_like_shuffling():
    perms = [p for p in realworld_problems() if p.answer_format == "permutation"]
    assert {p.uid for p in perms} == {u for u, r in RELEASE.items() if r["family"] == "uniform_permutation"}
    for p in perms:
        n = len(p.options)
        assert (p.family, p.support, p.category, p.low, p.high) == (
            "uniform_permutation", "permutation", "real_world", 0.0, 1.0)
        assert p.params == {"n": n, "items": list(p.options)}
        assert p.metadata["exact_pmf_fraction"] == {str(Fraction(k, n - 1)): str(Fraction(1, n)) for k in range(n)}
        # a reply listing the printed lines in reverse parses to the reversed order, Z1 = 1
        assert p.parse("\n".join(reversed(p.options))).value == 1.0
    deleting = next(p for p in perms if p.metadata["line_format"] == "Deleting {x}")
    assert deleting.options == ("Deleting A", "Deleting B", "Deleting C")
