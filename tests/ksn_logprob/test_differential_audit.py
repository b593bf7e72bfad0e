"""The differential self-audit of sampling-free KS@N (issue 42), a CI slice: problems and writers drawn by the
date (:func:`ub_core.logprob.audit.date_seed`), the route's bounds against the same model's own sampled runs
(:mod:`ub_core.logprob.audit`). ``benchmarks/bench_bounds_audit.py`` runs the whole bank. Set
``UB_AUDIT_SEED`` to replay a day's draw."""

from __future__ import annotations

import os

import pytest

from ub_core.logprob.audit import audit_draw, audit_problem, date_seed
from ub_core.problems import load_bank

SEED = int(os.environ.get("UB_AUDIT_SEED", date_seed()))
DRAW = audit_draw(list(load_bank("ksn")), 4, SEED)


@pytest.mark.parametrize("problem, writer", DRAW, ids=[f"{p.id}-{w}" for p, w in DRAW])
def test_bounds_contain_the_models_own_sampled_runs(problem, writer):
    r = audit_problem(problem, writer, runs=30, max_requests=800, seed=SEED)
    print(f"seed {SEED}: {r}")
    assert r["holds"], r
