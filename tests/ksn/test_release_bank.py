"""The built-in KS@N bank follows the public UnpredictaBench release uid for uid.

Every generated problem carries its release uid and the process of that uid's ground-truth program, as read from
the release (``ub_core/problems/ksn/release_processes.json``; ``tools/release_specs`` holds the reading and
``tests/data/release_specs.json`` its table). These tests check, problem by problem, that the truth we draw has the
declared family, parameters and support: a one-sample KS test against scipy's distribution where scipy has the
family, the exact pmf where it is discrete and listable, and the analytic mean otherwise (a z-test). Each test is at
level 1e-4, with a Bonferroni budget of about 0.04 over the ~400 problems for a correct bank.
"""

from __future__ import annotations

import json
import math
import uuid
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ub_core import distributions as D
from ub_core.problems import get_problem, load_bank
from ub_core.problems.candidates import _family_pmf
from ub_core.problems.ksn.release_processes import RELEASE_PROCESSES

SPECS = json.loads((Path(__file__).resolve().parents[1] / "data" / "release_specs.json").read_text())
BANK = {p.uid: p for p in load_bank("ksn")}
ALPHA = 1e-4
GENERATED = [r for r in RELEASE_PROCESSES]


def test_every_release_uid_has_one_built_in_problem():
    assert set(BANK) == {s["uid"] for s in SPECS}
    assert len(BANK) == 448
    for r in RELEASE_PROCESSES:  # the uid is the release's own: uuid5 of its folder and row
        assert r["uid"] == str(uuid.uuid5(uuid.NAMESPACE_URL, f"{r['uid_folder']}/questions.json:{r['row']}"))


def test_counts_follow_the_release_folders():
    gen = [BANK[r["uid"]] for r in RELEASE_PROCESSES]
    assert Counter(p.regime for p in gen) == {"concentrated": 198, "spread": 200}
    by_folder = Counter(r["folder"] for r in RELEASE_PROCESSES)
    for folder, n in by_folder.items():
        cat = {p.category for p in gen if p.metadata["release"]["folder"] == folder}
        assert len(cat) == 1 and sum(p.metadata["release"]["folder"] == folder for p in gen) == n
    misfiled = [r for r in RELEASE_PROCESSES if r["folder"] != r["uid_folder"]]
    assert sorted(BANK[r["uid"]].id for r in misfiled) == ["ce-multivariate_normal-spread", "ce-multivariate_t-spread"]
    assert all(BANK[r["uid"]].category == "code_implicit" for r in misfiled)


@pytest.mark.parametrize("row", GENERATED, ids=lambda r: r["uid"][:8])
def test_problem_uses_its_release_process(row):
    p = BANK[row["uid"]]
    assert p.family == row["family"] and p.params == D.validate(row["family"], row["params"])
    assert p.support == D.support_kind(p.family, p.params)
    x = p.truth(10_000, 0)
    lo, hi = D.support_bounds(p.family, p.params)
    assert np.all(np.isfinite(x)) and x.min() >= lo - 1e-9 and x.max() <= hi + 1e-9
    if p.support == "discrete":
        assert np.array_equal(x, np.round(x))
    frozen = D.frozen(p.family, p.params)
    if p.support == "continuous" and frozen is not None:
        assert stats.kstest(x, frozen.cdf).pvalue >= ALPHA
        return
    if p.support == "continuous" and p.family == "mixture":
        parts = [(c["weight"], D.frozen(c["family"], c["params"])) for c in p.params["components"]]
        if all(f is not None for _, f in parts):  # the mixture's CDF is the weighted component CDFs
            assert stats.kstest(x, lambda t: sum(w * f.cdf(t) for w, f in parts)).pvalue >= ALPHA
            return
    if p.support == "discrete":
        ks = np.arange(int(x.min()), int(x.max()) + 1)
        pmf = _family_pmf(p.family, p.params, ks)
        if pmf is not None:  # chi-square over the observed range, cells pooled to expected counts >= 5
            observed = np.bincount((x - ks[0]).astype(int), minlength=ks.size).astype(float)
            expected = pmf * x.size
            obs_cells, exp_cells, o, e = [], [], 0.0, 0.0
            for oi, ei in zip(observed, expected):
                o, e = o + oi, e + ei
                if e >= 5:
                    obs_cells.append(o), exp_cells.append(e)
                    o, e = 0.0, 0.0
            if obs_cells:
                obs_cells[-1] += o
                exp_cells[-1] += e
            exp_cells = np.array(exp_cells) * (sum(obs_cells) / sum(exp_cells))
            if len(obs_cells) >= 2:
                assert stats.chisquare(obs_cells, exp_cells).pvalue >= ALPHA
            return
    mean, var = D.moments(p.family, p.params)
    assert math.isfinite(var), f"{p.id}: no CDF and no finite variance to test against"
    z = (x.mean() - mean) / math.sqrt(var / x.size)
    assert abs(z) <= stats.norm.isf(ALPHA / 2), (p.id, x.mean(), mean)


def test_uid_reaches_every_surface(capsys):
    from ub_core import cli

    p = get_problem("te-normal-conc")
    assert get_problem(p.uid) is p and get_problem(p.uid.upper()) is p
    assert cli.main(["bank", "list", "--json", "--category", "text_explicit"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert {r["id"]: r["uid"] for r in recs}[p.id] == p.uid
    from ub_inspect.ksn.ksn import record_to_sample
    from ub_lmeval.ksn_hooks import ksn_docs

    assert record_to_sample(p).metadata["uid"] == p.uid
    assert {d["id"]: d["uid"] for d in ksn_docs("text_explicit")}[p.id] == p.uid


def test_code_implicit_programs_use_the_release_construction():
    """A code-implicit row makes the release program's own construction (``transform``) where we have a builder for
    it; the rest use the family template, which the extraction found to be the same construction. The exceptions
    are the rows whose release construction reads as an earlier row's program (a direct library call identical to
    the code-explicit row, a repeated uniform): they take the family template so every prompt is distinct."""
    from ub_core.problems.ksn.code_transforms import TRANSFORMS, transform_program

    rows = [r for r in RELEASE_PROCESSES if r["category"] == "code_implicit" and r["folder"] == r["uid_folder"]]
    assert len(rows) == 80
    used, reworded = set(), []
    for r in rows:
        p = BANK[r["uid"]]
        assert p.metadata["release"]["construction"] == r["release_construction"]
        if "transform" not in r:
            continue
        used.add(r["transform"])
        want = transform_program(r["transform"], p.params, r.get("transform_params"))
        if p.metadata["program"] != want:
            reworded.append(p.id)
    assert sorted(reworded) == ["ci-bernoulli-spread", "ci-discrete_uniform-conc", "ci-negative_binomial-spread"]
    assert used == set(TRANSFORMS)  # every builder serves a release row


def test_uid_reaches_the_sampling_free_surfaces():
    from ub_inspect.ksn_logprob.ksn_logprob import record_to_sample
    from ub_lmeval.ksn_logprob_hooks import ksn_logprob_docs

    p = get_problem("te-poisson-conc")
    assert record_to_sample(p).metadata["uid"] == p.uid
    assert {d["id"]: d["uid"] for d in ksn_logprob_docs("text_explicit")}[p.id] == p.uid
