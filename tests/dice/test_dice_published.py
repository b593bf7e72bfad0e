"""The "Bad Dice Players" release's models as published reference rows: ``ub report --published
dice=DIR`` puts them beside a lab's run of the same setting, marked as published, scored from the release's raw
draws in the run's convention and never pooled with a run; a run of another setting gets none beside it;
``ub compare RUN --published DIR --model M`` pairs the run with one published model law by law. The release is the
small synthetic one of tests/support/dice_release.py; the expected numbers are computed here with scipy."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ub_core import cli
from ub_core.metrics.dice import DICE_LAWS, DICE_ORDER, exact_pvalue
from ub_core.problems.dice import dice_item
from ub_core.report.dice import DiceSetting, PublishedRelease, published_records
from ub_core.report.records import RunInfo, SampleRecord, SampleTable
from ub_core.report.summary import build_tables
from ub_core.reproduce import dice as R

from support.dice_release import MODEL_IDS, draws, manifest_file, write_release

inspect_ai = pytest.importorskip("inspect_ai")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_release(tmp_path_factory.mktemp("dice_release"))


@pytest.fixture(autouse=True)
def _checked_against_the_synthetic_release(request, monkeypatch):
    """The synthetic release's own checksums stand in for the published release's (shipped with ub)."""
    if "release" in request.fixturenames:
        monkeypatch.setenv(R.MANIFEST_ENV, str(manifest_file(request.getfixturevalue("release"))))


def _oracle_log(folder: Path, **kw) -> Path:
    from support.inspect_run import run_task
    from ub_inspect.dice import dice

    return Path(run_task(dice(**kw), "ub/oracle", folder)[1].location)


@pytest.fixture(scope="module")
def oracle_release_convention(tmp_path_factory) -> Path:
    """ub/oracle, batch, 1,000 values per law (the release's setting), scored in the release convention."""
    return _oracle_log(tmp_path_factory.mktemp("oracle_release"), protocol="batch", n=1000, convention="release")


@pytest.fixture(scope="module")
def oracle_default_convention(tmp_path_factory) -> Path:
    return _oracle_log(tmp_path_factory.mktemp("oracle_default"), protocol="batch", n=1000)


def _default_p(name: str, x: list) -> float:
    """The default convention's p-value, written out: scipy's exact one-sample KS test for a continuous law; the
    Monte-Carlo G test (seed 0) for a discrete one, 0 for draws off the support."""
    if not DICE_LAWS[name].discrete:
        return float(stats.kstest(x, DICE_LAWS[name].dist.cdf, method="exact").pvalue)
    return exact_pvalue(name, x, seed=0)


def test_report_shows_published_rows_beside_a_run_of_their_setting(release, oracle_release_convention, tmp_path,
                                                                    capsys):
    out = tmp_path / "report"
    assert cli.main(["report", str(oracle_release_convention), "--out", str(out), "--published",
                     f"dice={release}"]) == 0
    doc = json.loads((out / "summary.json").read_text())
    lead = doc["tables"]["dice_leaderboard"]
    rows = {r["model"]: r for r in lead["rows"]}
    assert set(rows) == {"ub-oracle", "GPT-4o (published)", "Qwen3 (published)"}
    setting = rows["ub-oracle"]["setting"]
    assert setting.startswith("batch, n=1000, release, alpha=0.01")
    main = json.loads((release / R.MAIN_RESULTS).read_text())["batch"]  # the release's figures, scipy-computed
    for model in MODEL_IDS:
        row = rows[f"{model} (published)"]
        assert row["framework"] == "published" and row["setting"] == setting and row["laws"] == 15
        assert row["provenance"]["published"] is True and row["provenance"]["runs"] == 0
        passed = [main[name][model]["pval"] > 0.01 for name in DICE_ORDER]
        assert row["passed"] == pytest.approx(sum(passed) / 15, abs=1e-12)
        lo, hi = stats.binomtest(sum(passed), 15).proportion_ci(0.95, method="wilson")
        assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo, abs=1e-9), pytest.approx(hi, abs=1e-9))
        w1 = [main[name][model]["w1"] for name in DICE_ORDER]
        assert row["w1_median"] == pytest.approx(float(np.median(w1)), rel=1e-12)
        assert row["count_error"] == pytest.approx(abs(150 - 1000) / 1000)  # 150 draws of the 1,000 asked
    assert rows["GPT-4o (published)"]["passed"] > 0.7 and rows["Qwen3 (published)"]["passed"] == 0
    assert rows["ub-oracle"]["passed"] >= 12 / 15 and rows["ub-oracle"]["complete"] is True
    # the per-law table holds the published laws too, each law's p-value the release's figure
    law_rows = [r for r in doc["tables"]["dice_by_law"]["rows"] if r["model"] == "Qwen3 (published)"]
    assert [r["law"] for r in law_rows] == list(DICE_ORDER)
    assert all(r["p_value"] == pytest.approx(main[r["law"]]["Qwen3"]["pval"], rel=1e-9, abs=1e-300)
               for r in law_rows)
    # never pooled or paired: the published models are no run
    assert "dice_pairwise" not in doc["tables"] and doc["inputs"]["records"] == 15
    assert any("2 published models" in n and "never pooled" in n for n in doc["inputs"]["notes"])
    page = (out / "index.html").read_text()
    # the first screen's compact leaderboard, the family's leaderboard and the per-law rows
    assert page.count('class="published"') == 2 + 2 + 2 * 15
    assert "GPT-4o (published)" in page and "| GPT-4o (published) | published | published |" in (
        out / "summary.md").read_text()


def _record(model: str, law: str, passed: float, source: str, protocol: str, n: int) -> SampleRecord:
    return SampleRecord(model, "inspect", "dice", "dice", DICE_LAWS[law].tier, dice_item(law).id, 1,
                        {"passed": passed, "w1": 0.1, "p_value": 0.5 if passed else 0.001, "n_values": float(n),
                         "count_error": 0.0},
                        {"law": law, "tier": DICE_LAWS[law].tier, "protocol": protocol, "n": n,
                         "convention": "release"}, source)


def test_a_run_of_another_setting_never_sits_beside_published_rows(release):
    """Three runs: independent with 1,000 values (the release's setting: published rows in its group), batch with
    100 values and batch at temperature 0.7 (none beside them, one note each)."""
    table = SampleTable()
    for model, protocol, n, temp in (("lab-ind", "independent", 1000, 1.0), ("lab-b100", "batch", 100, 1.0),
                                     ("lab-cold", "batch", 1000, 0.7)):
        src = f"{model}.eval"
        table.records += [_record(model, law, float(i % 2), src, protocol, n) for i, law in enumerate(DICE_ORDER)]
        table.runs[src] = RunInfo(src, complete=True, task_args={"protocol": protocol, "n": n,
                                                                 "convention": "release", "temperature": temp},
                                  settings={"protocol": protocol, "n": n, "temperature": temp})
    before = len(table.records)
    tables = build_tables(table, PublishedRelease(release))
    lead = tables["dice"][0]
    groups = [(r["setting"], r["model"]) for r in lead.rows]
    published = [(s, m) for s, m in groups if m.endswith("(published)")]
    ind = next(s for s, m in groups if m == "lab-ind")
    assert sorted(m for _, m in published) == ["GPT-4o (published)", "Qwen3 (published)"]
    assert all(s == ind and s.startswith("independent, n=1000, release") for s, _ in published)
    # the rows of one setting are together: the independent group's three rows are adjacent
    settings = [s for s, _ in groups]
    assert settings == sorted(settings, key=settings.index)
    assert len(table.records) == before and not any(r.framework == "published" for r in table.records)
    notes = " ".join(table.notes)
    assert ("lab-b100 [inspect] dice: no published rows beside it: it asks n=100 values per law, the release 1000"
            in notes)
    assert "lab-cold [inspect] dice: no published rows beside it: it samples at temperature 0.7" in notes
    # published independent rows are the release's independent figures
    main = json.loads((release / R.MAIN_RESULTS).read_text())["independent"]
    row = next(r for r in lead.rows if r["model"] == "GPT-4o (published)")
    assert row["passed"] == pytest.approx(sum(main[name]["GPT-4o"]["pval"] > 0.01 for name in DICE_ORDER) / 15)


def test_without_a_run_of_their_setting_published_rows_form_their_own_groups(release):
    table = SampleTable()
    table.records += [_record("lab-b100", law, 1.0, "a.eval", "batch", 100) for law in DICE_ORDER]
    table.runs["a.eval"] = RunInfo("a.eval", complete=True, settings={"protocol": "batch", "n": 100})
    lead = build_tables(table, PublishedRelease(release))["dice"][0]
    by_setting: dict[str, set] = {}
    for r in lead.rows:
        by_setting.setdefault(r["setting"], set()).add(r["model"])
    lab = next(s for s, ms in by_setting.items() if "lab-b100" in ms)
    assert by_setting[lab] == {"lab-b100"} and len(by_setting) == 3
    assert {s.split(",")[0] for s in by_setting if s != lab} == {"batch", "independent"}


def test_compare_pairs_a_run_with_a_published_model_law_by_law(release, oracle_default_convention, capsys):
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(oracle_default_convention))
    ours = {s.metadata["law"]: s.scores["dice_scorer"].value["passed"] for s in log.samples}
    for model in MODEL_IDS:
        theirs = {name: float(_default_p(name, draws(name, model, "batch")) > 0.01) for name in DICE_ORDER}
        a = np.array([ours[name] for name in DICE_ORDER])
        b = np.array([theirs[name] for name in DICE_ORDER])
        n10, n01 = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
        expected_p = 1.0 if n10 + n01 == 0 else 2 * stats.norm.sf(abs(n10 - n01) / math.sqrt(n10 + n01))
        assert cli.main(["compare", str(oracle_default_convention), "--published", str(release), "--model",
                         model.lower(), "--json"]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert row["family"] == "dice" and row["metric"] == "passed" and row["n_pairs"] == 15
        assert row["model_b"] == f"{model} (published)" and row["n_unmatched"] == 0
        assert row["mean_a"] == pytest.approx(a.mean()) and row["mean_b"] == pytest.approx(b.mean())
        assert row["diff"] == pytest.approx(a.mean() - b.mean())
        assert row["p_value"] == pytest.approx(expected_p, rel=1e-9)
        assert row["ci_low"] <= row["diff"] <= row["ci_high"]
    assert b.sum() == 0  # Qwen3's shifted draws fail every law
    # W1 law by law: a paired t on the per-law distances of the laws whose W1 has a finite scale (Cauchy left out
    # and counted)
    assert cli.main(["compare", str(oracle_default_convention), "--published", str(release), "--model", "GPT-4o",
                     "--metric", "w1", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    ref = {s.metadata["law"]: s.scores["dice_scorer"].value["w1"] for s in log.samples}
    from ub_core.metrics.dice import law_draws

    laws = [n for n in DICE_ORDER if n != "Cauchy"]
    theirs = [stats.wasserstein_distance(draws(n, "GPT-4o", "batch"), law_draws(n, seed=0)) for n in laws]
    d = np.array([ref[n] for n in laws]) - np.array(theirs)
    assert row["diff"] == pytest.approx(d.mean(), rel=1e-9) and row["test"].startswith("paired t")
    assert row["n_pairs"] == 14 and row["unmatched"] == {"W1 without a finite scale (Cauchy: no mean)": 1}
    assert row["p_value"] == pytest.approx(stats.ttest_1samp(d, 0).pvalue, rel=1e-6)


@pytest.mark.parametrize("argv,message", [
    (["--model", "Claude"], "--model 'Claude' is not in the release's batch table; known: GPT-4o, Qwen3"),
    ([], "ub compare --published needs --model NAME"),
])
def test_compare_published_bad_input_is_one_line(release, oracle_default_convention, capsys, argv, message):
    assert cli.main(["compare", str(oracle_default_convention), "--published", str(release), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_compare_published_refuses_a_run_of_another_setting_and_a_bad_folder(release, tmp_path, capsys):
    log = _oracle_log(tmp_path / "small", protocol="batch", n=50, laws="Gaussian,Bernoulli")
    assert cli.main(["compare", str(log), "--published", str(release), "--model", "GPT-4o"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot be compared with the release: it asks n=50 values per law, the release 1000" in err
    assert cli.main(["compare", str(log), "--published", str(tmp_path), "--model", "GPT-4o"]) == 2
    assert "not a checkout of the dice release" in capsys.readouterr().err
    assert cli.main(["report", str(log), "--out", str(tmp_path / "r"), "--published", f"odds={release}"]) == 2
    assert "no published results for that family" in capsys.readouterr().err


def test_published_records_pair_with_the_bank_items(release):
    setting = DiceSetting("batch", 1000, "release", 0.01)
    recs = published_records(PublishedRelease(release), setting, "GPT-4o")
    assert [r.problem_id for r in recs] == [dice_item(n).id for n in DICE_ORDER]
    assert all(r.framework == "published" and r.model == "GPT-4o (published)" for r in recs)
