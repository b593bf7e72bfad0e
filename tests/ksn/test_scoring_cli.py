"""End-to-end scoring (oracle and collapsed runs) and the `ub` command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ub_core import cli
from ub_core.oracle import collapse_replies, oracle_replies
from ub_core.problems import get_problem, load_bank
from ub_core.ksn_scoring import DEFAULT_NS, score_jsonl


@pytest.fixture(scope="module")
def oracle_run():
    lines = [json.dumps({"id": p.id, "outputs": oracle_replies(p, 100, seed=0)}) for p in load_bank("ksn")]
    return score_jsonl(lines, method="paper")


@pytest.fixture(scope="module")
def collapse_run():
    lines = [json.dumps({"id": p.id, "outputs": collapse_replies(p, 100)}) for p in load_bank("ksn")]
    return score_jsonl(lines, method="paper")


@pytest.mark.slow
def test_oracle_scores_full_marks(oracle_run):
    """The Random Machine passes everywhere, up to false rejections at the 1e-4 level.

    Under the null each test rejects with probability <= 1e-4 (exactly 1e-4 for continuous targets, less for
    discrete ones, whose exact p-values are conservative). Over 448 problems the number of rejections at one N is
    at most Binomial(448, 1e-4): mean 0.045, P(>= 3) ~= 0.045^3 / 6 = 1.5e-5. So we allow at most 2 per N.
    """
    assert not oracle_run.errors
    agg = oracle_run.aggregate["overall"]
    assert agg["n_problems"] == 448 and agg["n_failed"] == 0 and agg["n_valid"] == 44_800
    for n in DEFAULT_NS:
        rejected = sum(1 for r in oracle_run.rows if r[f"ks@{n}"] == 0.0)
        assert rejected <= 2, (n, [r["id"] for r in oracle_run.rows if r[f"ks@{n}"] == 0.0])
    # WDZ of a true sample is a z-score under the null: mean near 0 (each ~N(0,1)-like; 448 of them)
    assert abs(agg["wdz"]["mean"]) < 0.5


@pytest.mark.slow
def test_collapsed_model_scores_near_zero_at_100(collapse_run):
    """A constant answer at the mode survives only where the mode holds most of the mass.

    With mode mass q and k non-mode values among the 100 permuted labels (k ~ Binomial(100, 1 - q)), the
    observed D = 1 - q is matched when k = 0 or k >= 2 * 100 * (1 - q), so p = q^100 + P(k >= 200 (1 - q)).
    For q = 0.9 that is 2.7e-5 + 1e-3 > 1e-4 (a pass); for q <= 0.8 it is below 1e-5 (a fail). So only the
    problems whose truth puts at least ~0.85 on one value may pass (14 of the release's 448: concentrated
    Bernoulli, Poisson-binomial, categorical and a few real-world selections).
    """
    agg = collapse_run.aggregate["overall"]
    passing = [r["id"] for r in collapse_run.rows if r["ks@100"] == 1.0]
    for pid in passing:
        p = get_problem(pid)
        _, counts = np.unique(p.truth(), return_counts=True)
        assert counts.max() / counts.sum() >= 0.85, pid
    peaked = 0
    for p in load_bank("ksn"):
        if p.support != "continuous":
            _, counts = np.unique(p.truth(), return_counts=True)
            peaked += counts.max() / counts.sum() >= 0.85
    assert len(passing) <= peaked <= 0.05 * 448
    assert agg["ks@100"]["mean"] == pytest.approx(len(passing) / 448)
    # one value is plausible almost everywhere (UnpredictaBench: "all models achieve perfect KS@1")
    assert agg["ks@1"]["mean"] >= 0.95
    assert agg["wdz"]["mean"] > 5 and agg["jsd"]["mean"] > 0.2


def test_values_and_outputs_lines_score_alike():
    p = get_problem("ti-poisson-spread")
    replies = oracle_replies(p, 100, seed=3)
    values = [p.parse(r).value for r in replies]
    a = score_jsonl([json.dumps({"id": p.id, "outputs": replies})])
    b = score_jsonl([json.dumps({"id": p.id, "values": values})])
    ra, rb = a.rows[0], b.rows[0]
    for key in ("ks@100", "p@100", "wdz", "jsd", "n_valid"):
        assert ra[key] == rb[key]


def test_malformed_lines_are_reported_and_the_rest_scored():
    good = json.dumps({"id": "te-normal-conc", "values": [100.0, 101.0, 99.5]})
    lines = [good, "{not json", json.dumps([1, 2]), json.dumps({"values": [1]}),
             json.dumps({"id": "te-normal-conc", "values": 3}), json.dumps({"id": "nope", "values": [1]}),
             json.dumps({"id": "te-normal-conc", "values": [1], "outputs": ["{1}"]}),
             json.dumps({"id": "te-normal-conc", "values": ["x", float("inf"), None]})]
    run = score_jsonl(lines)
    assert len(run.errors) == 6
    assert [e.split(":")[0] for e in run.errors] == ["line 2", "line 3", "line 4", "line 5", "line 7", "line 6"]
    assert all("\n" not in e for e in run.errors)
    row = run.rows[0]
    assert row["id"] == "te-normal-conc" and row["n_valid"] == 3 and row["n_failed"] == 3


def test_out_of_support_values_count_as_failures():
    run = score_jsonl([json.dumps({"id": "te-bernoulli-spread", "values": [0, 1, 2, 0.5, -1, 1]})])
    assert run.rows[0]["n_valid"] == 3 and run.rows[0]["n_failed"] == 3


def test_short_runs_fail_large_n():
    p = get_problem("te-uniform-spread")
    run = score_jsonl([json.dumps({"id": p.id, "outputs": oracle_replies(p, 30)})])
    r = run.rows[0]
    assert r["ks@20"] == 1.0 and r["short@20"] is False
    assert r["ks@50"] == 0.0 and r["short@50"] is True and r["p@50"] is None
    assert run.aggregate["overall"]["short@100"] == 1


# ------------------------------------------------------------------------------------------------ CLI

def _run(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_bank_list_json(capsys):
    code, out, _ = _run(capsys, "bank", "list", "--json")
    recs = json.loads(out)
    assert code == 0 and len(recs) == 448
    assert {"id", "category", "family", "regime"} <= set(recs[0])
    code, out, _ = _run(capsys, "bank", "list", "--category", "shuffling")
    assert code == 0 and "20 problems" in out


def test_cli_bank_show_prints_a_logit_items_ideal_distribution(capsys):
    code, out, _ = _run(capsys, "bank", "show", "imp-dice-independent-1d4-p4")
    assert code == 0 and "rolled a second time" in out
    rows = [line.split() for line in out.split("ideal next-token distribution")[1].splitlines()[1:]]
    assert [(r[0], float(r[1])) for r in rows] == [(str(k), 0.25) for k in range(1, 5)]


def test_cli_bank_show_and_truth(capsys, tmp_path):
    code, out, _ = _run(capsys, "bank", "show", "te-categorical-spread")
    assert code == 0 and "probability 0.17" in out and "#" in out and "ground truth" in out
    uid = get_problem("te-categorical-spread").uid  # the release uid works as well as our id
    code, by_uid, _ = _run(capsys, "bank", "show", uid)
    assert code == 0 and by_uid == out and uid in out
    code, _, err = _run(capsys, "bank", "show", "00000000-0000-5000-8000-000000000000")
    assert code != 0 and "release uid" in err
    code, out, _ = _run(capsys, "truth", "te-poisson-conc", "--size", "5", "--seed", "3")
    vals = [float(x) for x in out.split()]
    assert code == 0 and vals == get_problem("te-poisson-conc").truth(size=5, seed=3).tolist()
    code, _, _ = _run(capsys, "truth", "te-poisson-conc", "--size", "50", "--out", str(tmp_path / "t.npy"))
    assert code == 0 and np.load(tmp_path / "t.npy").shape == (50,)


@pytest.mark.parametrize("argv,needle", [
    (["bank", "show", "no-such-id"], "unknown problem id 'no-such-id'"),
    (["truth", "nope"], "unknown problem id"),
    (["bank", "list", "--category", "poetry"], "unknown category 'poetry'"),
    (["bank", "list", "--bank", "nobank"], "unknown bank 'nobank'"),
    (["score", "--samples", "/does/not/exist.jsonl"], "cannot read"),
    (["score", "--samples", "x", "--method", "magic"], "--method must be one of"),
    (["truth", "te-normal-conc", "--size", "0"], "--size must be >= 1"),
])
def test_cli_errors_are_one_line(capsys, argv, needle):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_score_and_run(capsys, tmp_path):
    samples = tmp_path / "s.jsonl"
    code, out, _ = _run(capsys, "run", "--model", "collapse", "--category", "shuffling", "--samples-out",
                        str(samples))
    assert code == 0 and "shuffling" in out and "KS@100" in out
    code, out, _ = _run(capsys, "score", "--samples", str(samples), "--json", "--method", "exact")
    rep = json.loads(out)
    assert code == 0 and rep["aggregate"]["overall"]["n_problems"] == 20
    assert rep["aggregate"]["overall"]["ks@100"]["mean"] == 0.0


def test_cache_build_is_reused(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("UB_CACHE_DIR", str(tmp_path))
    code, out, _ = _run(capsys, "cache", "--quiet", "--size", "1000")
    assert code == 0 and "448 problems" in out
    files = list((tmp_path / "truth").rglob("*.npz"))
    assert len(files) == 448
    p = get_problem("ce-gamma-spread")
    assert np.array_equal(p.truth(size=1000), p.draw(1000))


def test_parallel_scoring_gives_identical_rows():
    lines = [json.dumps({"id": p.id, "outputs": oracle_replies(p, 100, seed=5)}) for p in load_bank("ksn")[::20]]
    serial = score_jsonl(lines, workers=1)
    forked = score_jsonl(lines, workers=2)
    assert serial.rows == forked.rows and serial.aggregate == forked.aggregate
