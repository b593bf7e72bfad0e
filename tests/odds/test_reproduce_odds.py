"""``ub reproduce odds`` on small synthetic releases written here in the release's formats: the
cell figures against hand values, both conventions, parse failures of each side, and hostile files. No release
data is in the repository; the figures from the real release are in the odds README."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from ub_core import cli
from ub_core.problems.odds import TEST_PERCENTILES, TEST_PROBABILITIES, odds_items
from ub_core.reproduce import odds as R

IDEAL = "sample_results_from_paper/idealized"


def _write(path: Path, rows: list[tuple[str, str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["prompt", "answer", "reasoning"])
        w.writerows(rows)


def _prob_items(family: str, convention: str) -> dict:
    return {p.metadata["target"]: p for p in odds_items("full", task="probability", shots=[0], families=[family],
                                                         convention=convention)
            if p.metadata["parameterisation"] == "p0"}


def _probability_file(root: Path, family: str, release_offset: float, our_offset: float) -> None:
    """Two replies per target; the prompt asks the release convention's interval in the release's wording."""
    rows = []
    for item in _prob_items(family, "release").values():
        m = item.metadata
        prompt = (f"\n## Here is your question:\nQuestion:\nConsidering only values including and between the 1st "
                  f"percentile and the 99th percentile, what is the probability that a value from the provided "
                  f"distribution is between {m['lo']:.1f} and {m['hi']:.1f}?\nAnswer:\n")
        for _ in range(2):
            rows.append((prompt, f"{m['answer'] - release_offset:.6f}",
                         f"<answer>{m['answer'] - our_offset:.6f}</answer>"))
    _write(root / IDEAL / "probabilities" / f"Gpt4Turbo_probabilities_0_shots_{family}_10_samples.csv", rows)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    # Table 1, probability: normal off by 1 / 3 points (release answers / our reading), geometric by 2 / 4
    _probability_file(tmp_path, "normal", 0.01, 0.03)
    _probability_file(tmp_path, "geometric", 0.02, 0.04)
    # one reply nobody can read, counted on both sides
    path = tmp_path / IDEAL / "probabilities" / "Gpt4Turbo_probabilities_0_shots_normal_10_samples.csv"
    with open(path, "a", newline="", encoding="utf-8") as f:
        csv.writer(f).writerow((open(path, encoding="utf-8").read().split('"')[1], "", "I cannot say."))
    # Table 1, sampling: every draw of the normal(100, 10) is 100
    rows = [("\n## Instruction: Sample a number.\n", "100", "<answer>100</answer>")] * 1000
    _write(tmp_path / IDEAL / "sampling" / "Gpt4Turbo_sampling_0_shots_normal_1000_samples.csv", rows)
    # Table 2, health context: step count, answers 2 points above the target, replies 5 above
    rw = next(p for p in odds_items("full", contexts=["health"], shots=[0]) if p.metadata["real_world"] == "step_count")
    values = [v for v in (p.metadata["value"] for p in odds_items("full", contexts=["health"], shots=[0])
                          if p.metadata["real_world"] == "step_count")]
    rows = []
    for q, v in zip(TEST_PERCENTILES, values):
        prompt = f"Question:\nWhat is the percentile of the average step count value {v} steps for users?\nAnswer:\n"
        rows += [(prompt, str(q + 2), f"<answer>{q + 5}</answer>")] * 3
    assert rw.metadata["framing"] == "context"
    _write(tmp_path / "sample_results_from_paper" / "real_world" /
           "gemini_ultra_percentiles_zero_shot_distnameandstats_average_step_count_10_samples.csv", rows)
    return tmp_path


def _cells(result) -> dict:
    return {c.name: c for c in result["cells"]}


def test_probability_cell_by_hand(release):
    cells = _cells(R.reproduce_odds(release, truth_size=20_000))
    c = cells["probability"]
    # per distribution MAE: release answers 1 and 2 points, our reading 3 and 4 (release convention);
    # mean 1.5 / 3.5, SE = sd([a, a + 1], ddof 1) / sqrt(2) = 0.5
    assert c.release == pytest.approx((1.5, 0.5), abs=1e-4)
    assert c.ours["release"] == pytest.approx((3.5, 0.5), abs=1e-4)
    assert (c.release_failures, c.our_failures, c.distributions) == (1, 1, 2)
    assert c.rows == 2 * 2 * len(TEST_PROBABILITIES) + 1
    # paper convention: the same replies against the paper convention's answers of the same targets
    maes = []
    for family, off in (("normal", 0.03), ("geometric", 0.04)):
        rel, pap = _prob_items(family, "release"), _prob_items(family, "paper")
        maes.append(np.mean([100 * abs(rel[p].metadata["answer"] - off - pap[p].metadata["answer"]) for p in rel]))
    assert c.ours["paper"][0] == pytest.approx(np.mean(maes), abs=1e-4)
    assert c.ours["paper"][0] != pytest.approx(c.ours["release"][0], abs=0.05)  # the conventions differ here
    assert len(c.missing) == 12  # the other distributions' files are absent, and listed


def test_sampling_and_real_world_cells(release):
    cells = _cells(R.reproduce_odds(release, truth_size=100_000))
    # a point mass at the median: KS = max(F(100-), 1 - F(100)) = 0.5 up to the truth sample's error (~0.002)
    s = cells["sampling"]
    assert s.release[0] == pytest.approx(0.5, abs=0.01) and s.ours["paper"][0] == pytest.approx(0.5, abs=0.01)
    assert math.isnan(s.release[1])  # one distribution: no standard error
    h = cells["health context"]
    assert h.release[0] == pytest.approx(2.0) and h.ours["paper"][0] == pytest.approx(5.0)
    assert h.ours["release"][0] == pytest.approx(5.0) and h.rows == 33
    assert math.isnan(cells["climate normal"].release[0]) and len(cells["climate normal"].missing) == 4


def test_cli_prints_both_tables_and_json(release, capsys):
    assert cli.main(["reproduce", "odds", "--release", str(release), "--truth-size", "20000"]) == 0
    out = capsys.readouterr().out
    assert "Table 1 (GPT-4 Turbo" in out and "Table 2 (Gemini 1.0 Ultra" in out
    assert "21.00 ± 2.11" in out and "1.50 ± 0.50" in out and "1 / 1" in out
    assert cli.main(["reproduce", "odds", "--release", str(release), "--json", "--truth-size", "20000"]) == 0
    doc = json.loads(capsys.readouterr().out)
    prob = next(c for c in doc["cells"] if c["cell"] == "probability")
    assert prob["paper"] == {"mean": 21.0, "se": 2.11}
    assert prob["release_answers"]["mean"] == pytest.approx(1.5, abs=1e-4)
    assert doc["error_count"] == 0


def test_hostile_files_are_one_counted_line_each(release, capsys, monkeypatch):
    prob = release / IDEAL / "probabilities"
    csv = prob / "Gpt4Turbo_probabilities_0_shots_gamma_10_samples.csv"
    csv.write_bytes(b"prompt,answer,reasoning\n\xff\xfe,1,2\n")
    _write(prob / "Gpt4Turbo_probabilities_0_shots_uniform_10_samples.csv", [("a", "b", "c")])
    (prob / "Gpt4Turbo_probabilities_0_shots_uniform_10_samples.csv").write_text("q,a\n1,2\n")
    (prob / "Gpt4Turbo_probabilities_0_shots_poisson_10_samples.csv").write_text(
        'prompt,answer,reasoning\n"x",1\n')
    (prob / "Gpt4Turbo_probabilities_0_shots_gumbel_10_samples.csv").mkdir()
    rows = [("Question:\nno numbers here?\n", "0.5", "0.5")]  # a row without a question: counted, not scored
    _write(prob / "Gpt4Turbo_probabilities_0_shots_binomial_10_samples.csv", rows)
    monkeypatch.setattr(R, "MAX_FILE_BYTES", 600_000)
    big = "x" * 700_000
    _write(prob / "Gpt4Turbo_probabilities_0_shots_exponential_10_samples.csv", [(big, "1", "1")])
    code = cli.main(["reproduce", "odds", "--release", str(release), "--truth-size", "5000"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(errors) == 5
    assert any("not UTF-8" in e for e in errors) and any("expected the header" in e for e in errors)
    assert any("row 2 has 2 fields" in e for e in errors) and any("not a regular file" in e for e in errors)
    assert any("larger than the 600,000-byte limit" in e for e in errors)
    assert "1 row(s) without a readable question" in out
    cell = _cells(R.reproduce_odds(release, truth_size=5000))["probability"]
    assert cell.distributions == 2 and cell.unmatched == 1  # the two good files still count


def test_a_folder_without_the_release_layout_is_one_line(tmp_path, capsys):
    assert cli.main(["reproduce", "odds", "--release", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ub: error: ") and "not a checkout of the odds release" in err and err.count("\n") == 1
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "odds", "--release", str(tmp_path), "--truth-size", "0"])
