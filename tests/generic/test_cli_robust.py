"""The `ub` command: hostile JSONL lines, items of banks `ub score` does not KS-score, numeric option
ranges, exit codes, exact rescoring of Inspect logs, and the id index behind get_problem."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ub_core import cli
from ub_core import problems as ub_problems
from ub_core.oracle import oracle_values
from ub_core.problems import UnknownProblemError, get_problem, load_bank
from ub_core.ksn_scoring import score_jsonl


def _cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err and all(line.startswith("ub: ") for line in err.splitlines()), err


GOOD = json.dumps({"id": "te-normal-conc", "values": [100.0, 101.0, 99.5, 102.0]})


# ------------------------------------------------------------------------------------------------ hostile lines

def test_an_integer_beyond_the_float_range_is_one_failed_value(capsys, tmp_path):
    """A 401-digit integer cannot be a float (OverflowError before): it counts as one failed value."""
    f = tmp_path / "s.jsonl"
    f.write_text('{"id": "te-normal-conc", "values": [%s, 100.0, 101.0]}\n' % ("9" * 401))
    code, out, err = _cli(capsys, "score", "--samples", f, "--json", "--workers", 1)
    row = json.loads(out)["problems"][0]
    assert code == 0 and row["n_valid"] == 2 and row["n_failed"] == 1
    _no_traceback(err)


@pytest.mark.parametrize("bad,needle", [
    ('{"id": "te-normal-conc", "values": [%s]}' % ("1" * 5001), "line 2: unreadable JSON (Exceeds the limit"),
    ("[" * 100_000 + "]" * 100_000, "line 2: JSON nested too deeply"),
    ('{"id": "stab_navigate_000", "values": [1]}', "line 2: stab_navigate_000 is an item of the stability bank"),
    ('{"id": "cal-colors-t0-units-1-1-red-blue", "values": [0]}', "line 2: cal-colors-t0-units-1-1-red-blue is an "
                                                                 "item of the calibration bank"),
    ('{"id": "imp-dice-single-1d4", "values": [1]}', "line 2: imp-dice-single-1d4 is an item of the implicit bank"),
    ('{"id": "exp-dice-single-1d4", "values": [1]}', "line 2: exp-dice-single-1d4 is an item of the explicit bank"),
    ('{"id": "te-normal-conc", "values": [1], "n_failed": -1}', "line 2: 'n_failed' must be a non-negative"),
    # which copy counts is undefined in JSON (Python keeps the last): refused, as in `ub stability score`
    ('{"id": "te-normal-conc", "values": [1], "values": [2]}', "line 2: duplicate key 'values' in a JSON object"),
])
def test_each_bad_line_is_one_named_line_and_the_rest_is_scored(capsys, tmp_path, bad, needle):
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join([GOOD, bad, GOOD]) + "\n")
    code, out, err = _cli(capsys, "score", "--samples", f, "--json", "--workers", 1)
    rep = json.loads(out)
    assert code == 1  # some lines skipped
    assert [r["id"] for r in rep["problems"]] == ["te-normal-conc"] and rep["problems"][0]["n_valid"] == 8
    assert needle in err and err.count("\n") == 1
    _no_traceback(err)


def test_an_unscorable_job_is_named_not_raised(monkeypatch):
    """Whatever a problem's parser does with a hostile value, the run goes on (here: a RecursionError)."""
    p = get_problem("te-normal-conc")

    def boom(items):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(type(p), "check_values", lambda self, items: boom(items) if self is p else ([], []))
    run = score_jsonl([GOOD, json.dumps({"id": "te-poisson-conc", "values": [3, 4]})])
    assert [r["id"] for r in run.rows] == ["te-poisson-conc"]
    assert run.errors == ["line 1: cannot score te-normal-conc: RecursionError: maximum recursion depth exceeded"]


# ------------------------------------------------------------------------------------------------ odds ids

@pytest.mark.parametrize("pid", ["odds-pct-normal-p0-q50-s0", "odds-prb-normal-p0-p0.5-s0"])
def test_odds_questions_are_refused_with_one_line(pid):
    p = get_problem(pid)  # the id exists
    assert p.metadata["task"] in ("percentile", "probability")
    run = score_jsonl([GOOD, json.dumps({"id": pid, "values": [float(p.metadata["answer"])]})])
    assert [r["id"] for r in run.rows] == ["te-normal-conc"]
    assert len(run.errors) == 1 and run.errors[0].startswith(f"line 2: {pid} is an odds ")
    assert "absolute error" in run.errors[0]
    assert math.isfinite(run.aggregate["overall"]["wdz"]["mean"])


def test_odds_sampling_items_are_ks_scored():
    """Sampling items are KS@N problems: 1,000 oracle draws pass, with a finite WDZ (a z-score, |z| < 4)."""
    items = [p for p in load_bank("odds") if p.metadata["task"] == "sampling"][:3]
    lines = [json.dumps({"id": p.id, "values": [float(v) for v in oracle_values(p, 1000, seed=i)]})
             for i, p in enumerate(items)]
    run = score_jsonl(lines, ns=(10, 100, 1000))
    assert not run.errors and len(run.rows) == 3
    for r in run.rows:
        assert r["ks@1000"] == 1.0 and math.isfinite(r["wdz"]) and abs(r["wdz"]) < 4


# ------------------------------------------------------------------------------------------------ exit codes

def test_empty_input_is_an_error(capsys, tmp_path):
    for text in ("", "\n   \n"):
        f = tmp_path / "e.jsonl"
        f.write_text(text)
        code, out, err = _cli(capsys, "score", "--samples", f)
        assert code == 2 and out == "" and err == f"ub: error: no lines to score in {f}\n"


def test_nothing_scorable_is_an_error(capsys, tmp_path):
    f = tmp_path / "u.jsonl"
    f.write_text('{"id": "no-such-id", "values": [1]}\n{not json\n')
    code, out, err = _cli(capsys, "score", "--samples", f)
    assert code == 2 and out == ""
    assert err.splitlines() == ["ub: line 2: not valid JSON (Expecting property name enclosed in double quotes)",
                                "ub: line 1: unknown problem id 'no-such-id' (see `ub bank list`)",
                                f"ub: error: no scorable lines in {f} (2 problem(s), see above)"]


def test_everything_scored_exits_zero(capsys, tmp_path):
    f = tmp_path / "g.jsonl"
    f.write_text(GOOD + "\n")
    code, out, err = _cli(capsys, "score", "--samples", f)
    assert code == 0 and err == "" and "ALL" in out


# ------------------------------------------------------------------------------------------------ option ranges

@pytest.mark.parametrize("argv,needle", [
    (["truth", "te-normal-conc", "--size", "10000000000"], "--size must be <= 10,000,000"),
    (["truth", "te-normal-conc", "--size", "-1"], "--size must be >= 1"),
    (["truth", "te-normal-conc", "--seed", "-1"], "--seed must be >= 0"),
    (["truth", "te-normal-conc", "--seed", str(2**32)], "--seed must be <= 4,294,967,295"),
    (["bank", "show", "te-normal-conc", "--size", "10000000000"], "--size must be <= 10,000,000"),
    (["bank", "show", "te-normal-conc", "--size", "0"], "--size must be >= 1"),
    (["cache", "--size", "0"], "--size must be >= 1"),
    (["cache", "--size", "10000000000"], "--size must be <= 10,000,000"),
    (["cache", "--bank", "stability"], "stab_navigate_000 is an item of the stability bank, which has no "
                                       "ground-truth draws"),
    (["truth", "stab_navigate_000"], "stab_navigate_000 is an item of the stability bank, which has no "
                                     "ground-truth draws"),
    (["run", "--n-samples", "-3"], "--n-samples must be >= 1"),
    (["run", "--n-samples", "0"], "--n-samples must be >= 1"),
    (["run", "--n-samples", "1000000"], "--n-samples must be <= 100,000"),
    (["run", "--workers", "0"], "--workers must be >= 1"),
    (["run", "--method", "magic"], "--method must be one of"),
    (["score", "--samples", "x.jsonl", "--workers", "-2"], "--workers must be >= 1"),
    (["score", "--samples", "x.jsonl", "--threshold", "0"], "--threshold must be > 0 and < 1"),
    (["score", "--samples", "x.jsonl", "--threshold", "1.5"], "--threshold must be > 0 and < 1"),
    (["score", "--samples", "x.jsonl", "--threshold", "nan"], "--threshold must be a number"),
    (["report", "x.eval", "--out", "r", "--max-histograms", "-1"], "--max-histograms must be >= 0"),
])
def test_numeric_options_are_range_checked(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.setenv("UB_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and needle in err and err.count("\n") == 1, err
    _no_traceback(err)
    assert not list(tmp_path.rglob("*.npy"))  # nothing written


# ------------------------------------------------------------------------------------------------ id index

def test_every_id_routes_to_its_own_bank():
    """Each Bank's id_prefixes are complete and unambiguous for every edition of every bank."""
    for name in ub_problems.bank_names():
        prefixes = ub_problems.BANKS[name].id_prefixes
        for size in (None, "full"):
            for p in load_bank(name, size=size):
                assert ub_problems._candidate_banks(p.id) == [name], (name, p.id)
                assert p.id.startswith(prefixes)


def test_unknown_ids_cost_one_lookup_after_one_index_build(monkeypatch):
    """get_problem loads a bank once for its index; unknown ids after that (and ids no bank's prefix fits) load
    nothing. Before, every unknown id loaded and scanned all six banks in both editions."""
    monkeypatch.setattr(ub_problems, "_INDEX", {})
    calls = []
    real = ub_problems.load_bank
    monkeypatch.setattr(ub_problems, "load_bank", lambda name, **kw: calls.append(name) or real(name, **kw))
    for pid in ("no-such-id", "zz-1", ""):
        with pytest.raises(UnknownProblemError, match="unknown problem id"):
            get_problem(pid)
    assert calls == []
    with pytest.raises(UnknownProblemError):
        get_problem("te-unknown-0")
    assert calls == ["ksn", "ksn"]  # default and full edition, once
    for k in range(10_000):
        with pytest.raises(KeyError):
            get_problem(f"te-unknown-{k}")
    assert get_problem("te-normal-conc").id == "te-normal-conc"
    assert calls == ["ksn", "ksn"]


def test_get_problem_semantics_are_kept():
    full_only = next(p for p in load_bank("odds", size="full") if p.id not in {q.id for q in load_bank("odds")})
    assert get_problem(full_only.id) is full_only
    sub = load_bank("odds")[0]
    assert get_problem(sub.id) is sub  # the default edition's object
    assert get_problem("te-normal-conc", bank="ksn").id == "te-normal-conc"
    with pytest.raises(UnknownProblemError, match="unknown problem id 'te-normal-conc'"):
        get_problem("te-normal-conc", bank="odds")
    with pytest.raises(UnknownProblemError, match="unknown bank 'nobank'"):
        get_problem("te-normal-conc", bank="nobank")
    e = pytest.raises(KeyError, get_problem, "nope").value
    assert str(e) == "unknown problem id 'nope' (see `ub bank list`)"


def test_score_json_is_strict_even_with_non_finite_values(capsys):
    """``ub score --json`` feeds dashboards: a NaN or inf anywhere (numpy's too) is written as null, never as the
    bare ``NaN``/``Infinity`` tokens that strict JSON parsers reject."""
    import argparse
    import json as _json

    run = argparse.Namespace(aggregate={"overall": {"wdz": {"mean": float("nan")}, "jsd": np.float64("inf")}},
                             rows=[{"id": "x", "p@100": float("-inf"), "ks@100": 1.0}], errors=[])
    cli._print_run(run, argparse.Namespace(json=True), (100,))
    text = capsys.readouterr().out

    def refuse(token):
        raise AssertionError(f"non-strict JSON token {token}")

    out = _json.loads(text, parse_constant=refuse)
    assert out["aggregate"]["overall"] == {"wdz": {"mean": None}, "jsd": None}
    assert out["problems"] == [{"id": "x", "p@100": None, "ks@100": 1.0}]


def test_failure_reasons_are_reported_not_only_counted(capsys, tmp_path):
    """``n_failed`` is traceable: each problem's row carries its failure reasons with counts (``--json``), and the
    table names the commonest ones (a reply of {1e308} is out of support, not a silent 'failed')."""
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps({"id": "te-normal-conc", "outputs": ["{1e308}", "{1e308}", "hello", "{100}", "{101}"]})
                 + "\n" + json.dumps({"id": "te-normal-conc", "n_failed": 2, "values": [99.0]}) + "\n")
    code, out, err = _cli(capsys, "score", "--samples", f, "--json")
    assert code == 0, err
    row = json.loads(out)["problems"][0]
    assert row["n_failed"] == 5
    reasons = row["failure_reasons"]
    assert sum(reasons.values()) == 5
    assert reasons["failed before recording"] == 2
    assert reasons["no number found"] == 1
    assert [k for r, k in reasons.items() if "1e+308 out of support" in r] == [2]
    code, out, err = _cli(capsys, "score", "--samples", f)
    assert code == 0 and "commonest failure reasons:" in out and "1e+308 out of support" in out
