"""``ub reproduce dice`` on a small synthetic release written here in the release's layout and formats (issue 47):
every main-table cell and the MCQ table against values computed here with scipy directly, the comparison with the
release's processed files, and hostile files as counted, named gaps. No release data is in the repository; the
figures from the real release are in the dice README."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ub_core import cli
from ub_core.metrics.dice import DICE_LAWS, DICE_ORDER
from ub_core.reproduce import dice as R

# two models per cell, written under the release's two file-name styles and model-id keys
MODEL_IDS = {"GPT-4o": ("model", "gpt-4o"), "Qwen3": ("model_name", "Qwen/Qwen3-32B")}
N_DRAWS = 150


def _draws(name: str, model: str, protocol: str) -> list:
    """GPT-4o: true draws (seeded); Qwen3: true draws pushed off (rounded to one decimal, plus one)."""
    seed = (DICE_ORDER.index(name), list(MODEL_IDS).index(model), protocol == "batch")
    x = DICE_LAWS[name].dist.rvs(size=N_DRAWS, random_state=np.random.default_rng(seed))
    return [float(v) for v in (x if model == "GPT-4o" else np.round(x, 1) + 1)]


def _write(path: Path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def _pooled_chi2(obs: list, exp: list, low_first: bool) -> float:
    """The release's pooling, written out independently: merge an outer cell with expected < 5 into its
    neighbour, one end then the other, until both ends reach 5."""
    obs, exp = list(obs), list(exp)
    while len(exp) > 2 and (exp[0] < 5 or exp[-1] < 5):
        for end in ((0, -1) if low_first else (-1, 0)):
            if len(exp) > 2 and exp[end] < 5:
                if end == 0:
                    obs = [obs[0] + obs[1]] + obs[2:]
                    exp = [exp[0] + exp[1]] + exp[2:]
                else:
                    obs = obs[:-2] + [obs[-2] + obs[-1]]
                    exp = exp[:-2] + [exp[-2] + exp[-1]]
    return _pearson_p(obs, exp)


def _pearson_p(obs: list, exp: list) -> float:
    """Pearson's statistic and its chi-square tail, written out: scipy's ``chisquare`` refuses observed and
    expected sums that differ, which the release's cells allow (draws outside every cell)."""
    o, e = np.asarray(obs, float), np.asarray(exp, float)
    return float(stats.chi2.sf(np.sum((o - e) ** 2 / e), o.size - 1))


def _expected_p(name: str, x: list, ref: np.ndarray) -> float:
    n = len(x)
    if name == "Bernoulli":
        return _pearson_p([x.count(0.0), x.count(1.0)], [0.3 * n, 0.7 * n])
    if name == "Binomial":
        ints = [int(v) for v in x]
        return _pooled_chi2([ints.count(k) for k in range(11)], [n * stats.binom.pmf(k, 10, 0.5) for k in range(11)],
                            True)
    if name == "Poisson":
        ints = [int(v) for v in x]
        obs = [ints.count(k) for k in range(15)] + [sum(v >= 15 for v in ints)]
        exp = [n * stats.poisson.pmf(k, 5) for k in range(15)] + [n * stats.poisson.sf(14, 5)]
        return _pooled_chi2(obs, exp, False)
    return float(stats.ks_2samp(x, ref).pvalue)


def _letters(model: str) -> list[str]:
    rng = np.random.default_rng(len(model))
    return list(rng.choice(list("ABCD"), size=40, p=[0.1, 0.5, 0.3, 0.1]))


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """A complete synthetic release: 15 laws x 2 protocols x 2 models, reference draws with their sidecar,
    MCQ questions for two models (one with its tally only), the release's processed files (scipy values)."""
    refs, sums, main = {}, {}, {}
    rng = np.random.default_rng(42)
    for name in DICE_ORDER:
        for protocol in R.PROTOCOLS:
            ref = np.asarray(DICE_LAWS[name].dist.rvs(size=300, random_state=rng), dtype=np.float64)
            refs[f"{protocol}/{name}"] = ref
            sums.setdefault(protocol, {})[name] = {"sha256": hashlib.sha256(ref.tobytes()).hexdigest()}
            for model, (key, model_id) in MODEL_IDS.items():
                x = _draws(name, model, protocol)
                fname = f"{model_id.replace('/', '_')}_{name.lower()}_{protocol}_20251123_000000.json"
                _write(tmp_path / R.RAW / protocol / name / fname,
                       {key: model_id, "requested_samples": 1000, "statistics": {"total_samples": len(x)},
                        "samples": x})
                main.setdefault(protocol, {}).setdefault(name, {})[model] = {
                    "pval": _expected_p(name, x, ref), "w1": float(stats.wasserstein_distance(x, ref))}
    (tmp_path / "data/reference").mkdir(parents=True)
    np.savez(tmp_path / f"{R.REFERENCE}.npz", **refs)
    _write(tmp_path / f"{R.REFERENCE}.json", {"seed": 42, "references": sums})
    _write(tmp_path / R.MAIN_RESULTS, main)
    mcq = {}
    for model, folder in (("GPT-4o", "gpt4o"), ("Llama-4", "llama4")):
        letters = _letters(model)
        questions = [{"id": i, "content": f"Question: q{i}?\nA. a\nB. b\nC. c\nD. d\nCorrect Answer: {c}\n",
                      "parsed_answer": c} for i, c in enumerate(letters)]
        counts = {k: letters.count(k) for k in "ABCD"}
        if model == "GPT-4o":
            _write(tmp_path / R.MCQ_DIR / folder / "all_questions.json", questions)
        _write(tmp_path / R.MCQ_DIR / folder / "answer_statistics.json", {"distribution": counts})
        mcq[model] = {"counts": counts, "p_value": float(stats.chisquare(list(counts.values())).pvalue)}
    _write(tmp_path / R.MCQ_RESULTS, {"mcq": mcq})
    return tmp_path


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
    assert result["comparison"]["mcq"] == {"models": 2, "counts_equal": 2, "max_abs_dp": 0.0}
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
    result = R.reproduce_dice(release)
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
    result = R.reproduce_dice(release)
    assert result["gaps"].counts["damaged reference"] == 2 and result["gaps"].counts["missing reference"] == 2
    assert not any(r["distribution"] in ("Gaussian", "Beta") and r["protocol"] == "batch" for r in result["rows"]
                   if r["table"] == "main")
    assert "main" not in result["comparison"]
    assert any(R.MAIN_RESULTS in g and "not valid JSON" in g for g in result["gaps"])
    (release / f"{R.REFERENCE}.npz").write_bytes(b"PK\x03\x04 not a zip")
    result = R.reproduce_dice(release)
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
