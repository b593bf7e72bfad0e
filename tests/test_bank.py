"""The 448-problem KS@N bank: composition, stable ids, seeded truth, regimes, code programs, oracle round trip."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from ub_core import distributions as D
from ub_core import metrics
from ub_core.oracle import collapse_replies, oracle_replies
from ub_core.problems import get_problem, load_bank
from ub_core.problems.ksn import REMOVED


@pytest.fixture(scope="module")
def bank():
    return load_bank("ksn")


def test_published_composition(bank):
    assert len(bank) == 448
    task_types = Counter(p.task_type for p in bank)
    assert task_types == {"text_explicit": 159, "text_implicit": 79, "code_explicit": 80, "code_implicit": 80,
                          "real_world": 30, "shuffling": 20}
    assert Counter(p.category for p in bank) == {"text_explicit": 79, "text_implicit": 79, "code_explicit": 80,
                                                 "code_implicit": 80, "multimodal": 80, "real_world": 30,
                                                 "shuffling": 20}
    generated = [p for p in bank if p.category not in ("real_world", "shuffling")]
    assert len(generated) == 398
    assert Counter(p.regime for p in generated) == {"concentrated": 199, "spread": 199}
    mm = [p for p in bank if p.category == "multimodal"]
    assert Counter(p.regime for p in mm) == {"concentrated": 40, "spread": 40}
    assert all(p.modality == "multimodal" for p in mm)
    assert sum(p.modality == "unimodal" for p in generated) == 318
    rw = Counter(p.subcategory for p in bank if p.category == "real_world")
    assert rw == {"os_concurrency": 7, "garbage_collection": 5, "network": 5, "distributed_systems": 5,
                  "hashing": 4, "mcmc": 4}
    sh = [p for p in bank if p.category == "shuffling"]
    assert Counter(p.subcategory for p in sh) == {"integer": 6, "ordinal": 6, "word": 5, "decimal": 3}
    lengths = [len(p.options) for p in sh]
    assert min(lengths) >= 2 and max(lengths) <= 5 and sum(lengths) == 59  # mean 2.95 as published


def test_all_40_families_appear(bank):
    fams = {p.family for p in bank}
    assert set(D.TABLE10_FAMILIES) <= fams
    for family in D.TABLE10_FAMILIES:
        for prefix in ("te", "ti", "ce", "ci"):
            for regime in ("conc", "spread"):
                pid = f"{prefix}-{family}-{regime}"
                assert pid in REMOVED or get_problem(pid).family == family


def test_ids_unique_prompts_distinct(bank):
    ids = [p.id for p in bank]
    assert len(set(ids)) == len(ids)
    prompts = [p.full_prompt for p in bank]
    assert len(set(prompts)) == len(prompts)
    assert all(len(p.prompt) >= 40 for p in bank)


def test_support_and_format_consistent(bank):
    for p in bank:
        if p.support == "categorical":
            assert p.answer_format == "option" and len(p.options) >= 2
        elif p.support == "permutation":
            assert p.answer_format == "permutation"
        elif p.support == "discrete":
            assert p.answer_format == "integer"
        else:
            assert p.answer_format == "number"


def test_truth_is_seeded_and_within_support(bank):
    for p in bank:
        t = p.draw(2000, seed=0)
        assert t.shape == (2000,) and np.all(np.isfinite(t))
        assert t.min() >= p.low - 1e-9 and t.max() <= p.high + 1e-9, p.id
        assert np.array_equal(t, p.draw(2000, seed=0))
        assert not np.array_equal(t, p.draw(2000, seed=1)) or p.draw(2000, 1).std() == 0


@pytest.mark.slow
def test_truth_bit_identical_across_processes(tmp_path):
    code = ("import hashlib, sys; from ub_core.problems import load_bank\n"
            "h = hashlib.sha256()\n"
            "for p in load_bank('ksn'):\n"
            "    h.update(p.id.encode()); h.update(p.truth(size=10000, seed=0).tobytes())\n"
            "print(h.hexdigest())")
    digests = set()
    for i in range(2):
        env = {**__import__("os").environ, "UB_CACHE_DIR": str(tmp_path / f"cache{i}")}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_regimes_really_concentrated_or_spread(bank):
    by_key = {(p.task_type, p.family, p.regime): p for p in bank if p.category != "multimodal"}
    checked = 0
    for (ttype, family, regime), p in by_key.items():
        if regime != "spread" or (ttype, family, "concentrated") not in by_key:
            continue
        conc = by_key[(ttype, family, "concentrated")]
        assert p.draw(5000).std() >= 2 * conc.draw(5000).std(), (ttype, family)
        checked += 1
    assert checked >= 150
    for i in range(1, 41):
        conc, spread = get_problem(f"mm-{i:02d}-conc"), get_problem(f"mm-{i:02d}-spread")
        assert spread.draw(5000).std() >= 2 * conc.draw(5000).std()


def test_multimodal_problems_have_two_separated_modes():
    # The two component means differ by much more than the components' standard deviations (concentrated).
    for i in range(1, 41):
        p = get_problem(f"mm-{i:02d}-conc")
        comps = p.params["components"]
        (m1, v1), (m2, v2) = (D.moments(c["family"], c["params"]) for c in comps)
        assert abs(m2 - m1) >= 3 * (np.sqrt(v1) + np.sqrt(v2)) / 2, (p.id, m1, m2, v1, v2)


def _run_program(program: str, rng: np.random.Generator) -> str:
    real = np.random.default_rng
    buf = io.StringIO()
    np.random.default_rng = lambda *a, **k: rng
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(program, "<program>", "exec"), {"__name__": "__program__"})
    finally:
        np.random.default_rng = real
    return buf.getvalue().strip()


def test_code_explicit_programs_print_the_target(bank):
    """Running the shown program gives the problem's distribution (two-sample test vs. the truth)."""
    rng = np.random.default_rng(2024)
    for p in (q for q in bank if q.task_type == "code_explicit"):
        program = p.metadata["program"]
        outs = [_run_program(program, rng) for _ in range(300)]
        vals = []
        for o in outs:
            res = p.parse("{" + o + "}")
            assert res.ok, (p.id, o, res.error)
            vals.append(res.value)
        truth = p.draw(20_000, seed=0)
        # exact permutation KS: valid for ties (discrete targets), where chi-square cells would be too small
        _, pval = metrics.ks_2samp_exact(vals, truth)
        # 80 programs: a correct one fails p > 1e-5 with probability <= 1e-5 each (fixed seed: deterministic)
        assert pval > 1e-5, (p.id, pval)


def test_oracle_replies_parse_to_truth_distribution(bank):
    for p in bank:
        replies = oracle_replies(p, 50, seed=0)
        parsed = [p.parse(r) for r in replies]
        assert all(r.ok for r in parsed), (p.id, [r.error for r in parsed if not r.ok][:3])
        assert replies == oracle_replies(p, 50, seed=0)


def test_collapse_replies_are_constant_and_valid(bank):
    for p in bank[::7]:
        replies = collapse_replies(p, 5)
        assert len(set(replies)) == 1 and p.parse(replies[0]).ok


def test_prompts_state_the_parameters():
    p = get_problem("te-normal-conc")
    assert "mean 100" in p.prompt and "standard deviation 1.5" in p.prompt
    assert "{" in p.full_prompt  # the braces answer format
    ce = get_problem("ce-poisson-spread")
    assert "rng.poisson(60)" in ce.prompt
    cat = get_problem("te-categorical-spread")
    assert cat.options == ("apple", "banana", "cherry", "grape", "lemon", "mango")
    assert cat.parse("{cherry}").value == 2.0


def test_bank_records_are_json(bank):
    recs = [p.to_record() for p in bank]
    text = json.dumps(recs)
    assert len(json.loads(text)) == 448
