"""``ub reproduce dice`` on a small synthetic release written here in the release's layout and formats:
every main-table cell and the MCQ table against values computed here with scipy directly, the comparison with the
release's processed files, and hostile files as counted, named gaps. No release data is in the repository; the
figures from the real release are in the dice README."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ub_core import cli
from ub_core.metrics.dice import DICE_ORDER
from ub_core.reproduce import dice as R

from support.dice_release import MODEL_IDS, N_DRAWS, manifest_file, write_release
from support.dice_release import draws as _draws, letters as _letters


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write_release(tmp_path)


@pytest.fixture(autouse=True)
def _checked_against_the_synthetic_release(request, monkeypatch):
    """The synthetic release's own checksums stand in for the published release's (shipped with ub)."""
    if "release" in request.fixturenames:
        monkeypatch.setenv(R.MANIFEST_ENV, str(manifest_file(request.getfixturevalue("release"))))


def _cell(result, protocol, name, model):
    return next(r for r in result["rows"] if r["table"] == "main" and r["protocol"] == protocol
                and r["distribution"] == name and r["model"] == model)


def test_every_main_cell_matches_scipy_directly(release):
    result = R.reproduce_dice(release)
    main = json.loads((release / R.MAIN_RESULTS).read_text())
    refs = np.load(release / f"{R.REFERENCE}.npz")
    assert sum(r["table"] == "main" for r in result["rows"]) == 15 * 2 * 2
    for protocol in R.PROTOCOLS:
        for name in DICE_ORDER:
            for model in MODEL_IDS:
                row = _cell(result, protocol, name, model)
                x = _draws(name, model, protocol)
                assert row["n"] == N_DRAWS and row["requested"] == 1000
                assert row["p_value"] == pytest.approx(main[protocol][name][model]["pval"], rel=1e-9, abs=1e-300)
                assert row["w1"] == pytest.approx(stats.wasserstein_distance(x, refs[f"{protocol}/{name}"]),
                                                  rel=1e-12)
                assert row["passed"] == (row["p_value"] > 0.01)
    # true draws of GPT-4o pass far more often than the shifted ones of Qwen3
    summary = result["summary"]["batch"]["models"]
    assert summary["GPT-4o"]["passed"] >= 12 and summary["Qwen3"]["passed"] == 0
    cmp_ = result["comparison"]
    assert cmp_["main"]["cells"] == 60 and cmp_["main"]["max_abs_dp"] < 1e-12 and cmp_["main"]["max_abs_dw1"] < 1e-12
    # on an otherwise clean release: the nine absent models of each cell, and the MCQ files of the absent models
    assert dict(result["gaps"].counts) == {"missing cell": 15 * 2 * 9, "missing file": 4 * 2 + 1}


def test_mcq_table_against_scipy_and_the_release_tally(release):
    result = R.reproduce_dice(release)
    mcq = {r["model"]: r for r in result["rows"] if r["table"] == "mcq"}
    assert set(mcq) == {"GPT-4o", "Llama-4"}
    for model, row in mcq.items():
        letters = _letters(model)
        counts = [letters.count(k) for k in "ABCD"]
        expected = stats.chisquare(counts)
        assert row["counts"] == dict(zip("ABCD", counts)) and row["n"] == 40
        assert row["chi2"] == pytest.approx(expected.statistic, rel=1e-12)
        assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-12)
    assert mcq["GPT-4o"]["source"] == "all_questions" and mcq["Llama-4"]["source"] == "answer_statistics"
    assert result["comparison"]["mcq"] == {"models": 2, "counts_equal": 2, "not_finite": 0, "max_abs_dp": 0.0}
    gaps = list(result["gaps"])
    assert any("llama4/all_questions.json" in g and "missing" in g for g in gaps)
    for model in ("Llama-3.3", "DeepSeek-V3.2", "Qwen3", "GPT-OSS"):  # neither file: named, no row
        assert any(f"{R.MCQ_MODELS[model]}/answer_statistics.json" in g for g in gaps)


def test_hostile_files_are_counted_named_gaps(release):
    folder = release / R.RAW / "batch"
    gpt = "gpt-4o_{}_batch_20251123_000000.json"
    (folder / "Gaussian" / gpt.format("gaussian")).unlink()                      # missing file -> missing cell
    (folder / "Uniform" / gpt.format("uniform")).write_text('{"model": "gpt-4o", "samples": [0.1,')  # damaged
    path = folder / "Beta" / gpt.format("beta")                                  # non-finite and non-numbers
    doc = json.loads(path.read_text())
    doc["samples"] = doc["samples"][:100]
    del doc["statistics"]
    path.write_text(json.dumps(doc)[:-2] + ', NaN, Infinity, -Infinity, "0.5", true, null, 1e999]}')
    path = folder / "Gamma" / gpt.format("gamma")                                # wrong stated count
    doc = json.loads(path.read_text())
    doc["statistics"]["total_samples"] = 1000
    path.write_text(json.dumps(doc))
    path = folder / "Cauchy" / gpt.format("cauchy")                              # too few draws
    path.write_text(json.dumps({"model": "gpt-4o", "samples": [1.0] * 5}))
    (folder / "Logistic" / gpt.format("logistic")).write_bytes(b"x" * (R.MAX_FILE_BYTES + 1))  # over the cap
    (folder / "Weibull" / gpt.format("weibull")).write_bytes(b"\xff\xfe{}")      # not UTF-8
    (folder / "Laplace").rename(folder / "Laplace_gone")                         # missing folder
    result = R.reproduce_dice(release, manifest=None)
    gaps, text = result["gaps"], "\n".join(result["gaps"])
    assert gaps.counts["damaged file"] == 3 and gaps.counts["rejected values"] == 1
    assert gaps.counts["count mismatch"] == 1 and gaps.counts["too few draws"] == 1
    assert gaps.counts["missing folder"] == 1
    assert "Uniform/gpt-4o_uniform" in text and "not valid JSON" in text and "byte limit" in text
    assert "7 of 107 draws not finite numbers" in text and "states 1,000 draws, holds 150" in text
    assert "Cauchy/gpt-4o_cauchy_batch_20251123_000000.json: 5 usable draws" in text
    assert "batch/Laplace: missing" in text
    beta = _cell(result, "batch", "Beta", "GPT-4o")
    assert beta["n"] == 100  # the finite numbers are scored
    cells = {(r["distribution"], r["model"]) for r in result["rows"] if r.get("protocol") == "batch"}
    for name in ("Gaussian", "Uniform", "Cauchy", "Logistic", "Weibull"):
        assert (name, "GPT-4o") not in cells and any(f"batch/{name}/GPT-4o: no file" in g for g in gaps)
    assert ("Gamma", "GPT-4o") in cells and not any(k[0] == "Laplace" for k in cells)


def test_damaged_reference_and_processed_files(release):
    refs = dict(np.load(release / f"{R.REFERENCE}.npz"))
    refs["batch/Gaussian"] = refs["batch/Gaussian"] + 1e-9  # disagrees with the sidecar's SHA-256
    refs["batch/Beta"] = np.array([[1.0, 2.0]])            # not 1-D
    np.savez(release / f"{R.REFERENCE}.npz", **refs)
    (release / R.MAIN_RESULTS).write_text("[1, 2")
    result = R.reproduce_dice(release, manifest=None)
    assert result["gaps"].counts["damaged reference"] == 2 and result["gaps"].counts["missing reference"] == 2
    assert not any(r["distribution"] in ("Gaussian", "Beta") and r["protocol"] == "batch" for r in result["rows"]
                   if r["table"] == "main")
    assert "main" not in result["comparison"]
    assert any(R.MAIN_RESULTS in g and "not valid JSON" in g for g in result["gaps"])
    (release / f"{R.REFERENCE}.npz").write_bytes(b"PK\x03\x04 not a zip")
    result = R.reproduce_dice(release, manifest=None)
    assert any("not a readable .npz" in g for g in result["gaps"])
    assert not any(r["table"] == "main" for r in result["rows"])


def test_cli_json_rows_and_exit_status(release, capsys):
    assert cli.main(["reproduce", "dice", "--release", str(release), "--json"]) == 1  # missing cells are gaps
    doc = json.loads(capsys.readouterr().out)
    main = [r for r in doc["rows"] if r["table"] == "main"]
    mcq = [r for r in doc["rows"] if r["table"] == "mcq"]
    assert len(main) == 60 and len(mcq) == 2
    assert {"table", "protocol", "distribution", "model", "n", "p_value", "w1"} <= set(main[0])
    assert {"table", "model", "n", "counts", "chi2", "p_value"} <= set(mcq[0])
    assert {r["distribution"] for r in main} == set(DICE_ORDER) and {r["model"] for r in main} == set(MODEL_IDS)
    assert doc["gap_count"] == 279 and doc["gap_kinds"] == {"missing cell": 270, "missing file": 9}
    assert len(doc["gaps"]) == 279  # every gap named
    assert cli.main(["reproduce", "dice", "--release", str(release)]) == 1
    out = capsys.readouterr().out
    assert "pass % (paper)" in out and "headline (ours | paper)" in out and "max |dp|" in out


def test_default_convention_scores_against_the_law(release, capsys):
    from ub_core.metrics.dice import exact_pvalue

    result = R.reproduce_dice(release, convention="default")
    row = _cell(result, "independent", "Gaussian", "GPT-4o")
    x = _draws("Gaussian", "GPT-4o", "independent")
    assert row["p_value"] == pytest.approx(stats.kstest(x, stats.norm.cdf, method="exact").pvalue, rel=1e-12)
    assert _cell(result, "batch", "Poisson", "GPT-4o")["p_value"] == exact_pvalue("Poisson", _draws(
        "Poisson", "GPT-4o", "batch"))
    # shifted draws: off the Bernoulli support, so p = 0 exactly
    assert _cell(result, "batch", "Bernoulli", "Qwen3")["p_value"] == 0.0
    assert cli.main(["reproduce", "dice", "--release", str(release), "--convention", "default", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["convention"] == "default"


def test_a_folder_without_the_release_layout_is_one_line(tmp_path, capsys):
    assert cli.main(["reproduce", "dice", "--release", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not a checkout of the dice release" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "dice", "--release", str(tmp_path), "--alpha", "2"])


def test_release_model_ids_map_to_the_paper_names():
    ids = {"gpt-4o": "GPT-4o", "gpt_5.2": "GPT-5.2", "gpt-5.2": "GPT-5.2", "gemini_3_pro_preview": "Gemini-3",
           "deepseek-ai/DeepSeek-V3.2-Exp": "DeepSeek-V3.2", "Qwen_Qwen3-32B": "Qwen3",
           "google/gemma-3-27b-it": "Gemma-3", "mistralai_Mistral-Small-3.2-24B-Instruct-2506": "Mistral-3.2",
           "moonshotai/Kimi-K2-Instruct-0905": "Kimi-K2", "meta-llama/Llama-3.3-70B-Instruct-Turbo": "Llama-3.3",
           "meta-llama_Llama-4-Scout-17B-16E-Instruct": "Llama-4", "openai/gpt-oss-120b": "GPT-OSS",
           "some/other-model": "some/other-model"}
    assert {k: R.display_name(k) for k in ids} == ids
    assert {R.display_name(k) for k in ids if k != "some/other-model"} == set(R.MODELS)
