"""``ub reproduce stability --release DIR`` on a small synthetic release written here in the formats of
``breckbaldwin/llm-stability`` (run CSVs in a .tgz, ``stability_eval.csv`` written as its evaluate.py writes it);
no release data is in the repository. Hostile archives give counted errors, never a crash."""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path

import pytest

from ub_core.cli import main
from ub_core.reproduce import stability as rs
from ub_core.untrusted import ErrorSummary

COLUMNS = ["", "model", "model_config", "task", "task_config", "rubric", "rubric_id", "question", "gt", "prompt",
           "run", "response", "date"]
MMLU_Q = "What is 2+2?\n(A) 3. (B) 4. (C) 5. (D) 22. "
MODEL_CONFIG = {"temperature": 0.0, "seed": 12, "top_p_k": 1.0}
TASK_CONFIG = {"prompt_type": "v2", "shots": 0}
# 3 runs x 3 questions (gold B, B, A): question 0 agrees; question 1 has an ambiguous run; question 2 says "a"
REPLIES = {0: ["The answer is (B).", "The answer is (B).", "The answer is (B)."],
           1: ["The answer is (B).", "(A) or (B), hard to say", "The answer is (B)."],
           2: ["I pick (A).", "I pick (A).", "It is a trick; none fits."]}
GOLD = {0: "(B)", 1: "(B)", 2: "(A)"}


def _csv_bytes(rows: list[list]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(COLUMNS)
    w.writerows(rows)
    return buf.getvalue().encode()


def _run_rows(run: int, replies=REPLIES, model="m1", model_config=MODEL_CONFIG) -> list[list]:
    rows = []
    for q, texts in replies.items():
        mc = dict(model_config, rubric_counter=q)  # the release's fine-tuned runs carry it; evaluate.py drops it
        rows.append([q, model, json.dumps(mc), "college_mathematics", json.dumps(TASK_CONFIG),
                     json.dumps({"input": MMLU_Q, "target": GOLD[q]}), q, MMLU_Q, GOLD[q], "[]", run, texts[run],
                     "2025-01-01_00-00-00"])
    return rows


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _release(tmp_path: Path, stored: dict | None = None, extra=None) -> Path:
    root = tmp_path / "llm-stability"
    exp = root / "experiments" / "synthetic"
    exp.mkdir(parents=True)
    with tarfile.open(exp / "runs.tgz", "w:gz") as tar:
        for run in range(3):
            _add(tar, f"runs/m1-college_mathematics-0/m1-{run}.csv", _csv_bytes(_run_rows(run)))
        _add(tar, "runs/m2/m2-0.csv", _csv_bytes(_run_rows(0, model="m2")))  # m2: runs 0 and 2, run 1 missing
        _add(tar, "runs/m2/m2-2.csv", _csv_bytes(_run_rows(2, model="m2")))
        if extra:
            extra(tar)
    if stored is not None:
        with (exp / "stability_eval.csv").open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["", "model", "model_config", "task", "task_config", "TACr", "TARr", "TACa", "TARa",
                        "correct_count_per_run", "num_questions", "N", "best_possible_count",
                        "best_possible_accuracy", "worst_possible_count", "worst_possible_accuracy", "spread",
                        "date"])
            w.writerow([0, "m1", repr(MODEL_CONFIG), "college_mathematics", repr(TASK_CONFIG), stored["TACr"], "",
                        stored["TACa"], "", repr(stored["per_run"]), 3, 3, stored["best"], "", stored["worst"], "",
                        stored["spread"], "2025-01-01_00-00-00"])
    return root


# What the release's evaluate.py gives for REPLIES, worked out by hand from its rules:
# TACr: question 0 only (1). Reads: q0 B,B,B; q1 B, ambiguous, B; q2 A, A, and "It is a trick; none fits." -> the
# article "a" -> A. TACa: q0 and q2 (2). Correct per run: run0 q0 q1 q2 = 3, run1 q0 q2 = 2, run2 q0 q1 q2 = 3.
# best 3, worst 2 (q1 wrong in run 1), spread (3-2)/3 = 33.3%.
RELEASE_SIDE = {"TACr": 1, "TACa": 2, "per_run": [3, 2, 3], "best": 3, "worst": 2, "spread": "33.3%"}


def test_synthetic_release_reproduced_cell_by_cell(tmp_path, capsys):
    root = _release(tmp_path, RELEASE_SIDE)
    errors = ErrorSummary()
    records = rs.reproduce(root, errors)
    assert not errors.total
    full = [r for r in records if r["complete"]]
    assert len(full) == 1 and full[0]["model"] == "m1" and full[0]["stored"] is not None
    assert all(full[0]["equal"]["release"].values()), full[0]["equal"]
    ours = full[0]["ours"]
    assert ours["release"]["failures"] == {"no answer": 0, "ambiguous": 1, "missing": 0}
    # our reader: q1 run 1 ambiguous, q2 run 2 unreadable ("none fits"): TARa 1/3, worst 1 (q0)
    assert (ours["paper"]["TARa"], ours["paper"]["worst"], ours["paper"]["failures"]["unreadable"]) == (1, 1, 2)
    assert full[0]["equal"]["paper"]["TARa"] is False and full[0]["equal"]["paper"]["TARr"] is True
    # the incomplete set is listed with its missing cells, not scored
    partial = [r for r in records if not r["complete"]]
    assert [(r["model"], r["missing_cells"]) for r in partial] == [("m2", 3)]
    assert main(["reproduce", "stability", "--release", str(root)]) == 0
    out = capsys.readouterr().out
    assert "TARa" in out and "66.7 =" in out and "incomplete run set" in out and "m2" in out


def test_a_stored_figure_that_differs_is_marked_and_fails(tmp_path, capsys):
    root = _release(tmp_path, dict(RELEASE_SIDE, TACa=3))
    assert main(["reproduce", "stability", "--release", str(root), "--json"]) == 1
    rec = [r for r in json.loads(capsys.readouterr().out)["run_sets"] if r["complete"]][0]
    assert rec["equal"]["release"]["TARa"] is False and rec["equal"]["release"]["TARr"] is True


def test_options_and_gold_from_the_release_formats():
    assert rs.options_from_question("Q1\n(A) 1. (B) 2. A:(A)\nQ2\n(A) 10. (B) 20. (C) 30. (D) 40. ") == \
        ["10.", "20.", "30.", "40."]
    assert rs.options_from_question("Which?\nOptions:\n(A) circle\n(B) kite\n(C) line") == ["circle", "kite", "line"]
    assert rs.options_from_question("Do you return?\nOptions:\n- Yes\n- No", "navigate") == ["Yes", "No"]
    assert rs.options_from_question("no options here") is None


def _hostile(tar: tarfile.TarFile) -> None:
    _add(tar, "runs/bad/latin1.csv", "model,caf\xe9\n".encode("latin-1"))
    _add(tar, "runs/bad/old-format.csv", b",raw_response\n0,hello\n")
    _add(tar, "runs/bad/short-row.csv", _csv_bytes([["0", "m1"]]))
    _add(tar, "runs/bad/bad-run.csv", _csv_bytes([_run_rows(0)[0][:10] + ["-1", "x", "d"]]))
    _add(tar, "runs/bad/bad-config.csv", _csv_bytes([[0, "m1", "{not json", "t", "{}", "", 0, "", "(A)", "", 0,
                                                     "x", ""]]))
    link = tarfile.TarInfo("runs/bad/link.csv")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    tar.addfile(link)
    _add(tar, "runs/bad/huge.csv", b"x" * 10_000)


def test_hostile_members_are_counted_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rs, "MAX_MEMBER_BYTES", 8192)
    root = _release(tmp_path, RELEASE_SIDE, extra=_hostile)
    errors = ErrorSummary()
    records = rs.reproduce(root, errors)
    assert errors.counts == {"unreadable member": 2, "old-format member": 1, "bad row": 3, "member too large": 1}
    # the good members are still read and reproduced
    assert all([r for r in records if r["complete"]][0]["equal"]["release"].values())
    assert main(["reproduce", "stability", "--release", str(root)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 7 and all(line.startswith("ub: error: synthetic/runs.tgz:") for line in err)


def test_corrupt_and_missing_inputs_are_one_line(tmp_path, capsys):
    root = _release(tmp_path, RELEASE_SIDE)
    good = (root / "experiments" / "synthetic" / "runs.tgz").read_bytes()
    (root / "experiments" / "synthetic" / "runs.tgz").write_bytes(good[: len(good) // 2])  # truncated gzip
    (root / "experiments" / "synthetic" / "stability_eval.csv").write_text(
        "model,model_config,task,task_config,TACr,TACa,num_questions,N,correct_count_per_run,best_possible_count,"
        "worst_possible_count\nm1,\"{'a': [\",t,{},1,1,3,3,\"[1]\",1,1\n")
    assert main(["reproduce", "stability", "--release", str(root)]) == 1
    err = capsys.readouterr().err
    assert "synthetic/runs.tgz: unreadable after" in err and "not a Python literal" in err
    assert main(["reproduce", "stability", "--release", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no experiments/ folder" in err[0]


def test_reproduce_is_registered_beside_the_other_commands():
    from ub_core.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["reproduce", "stability"])  # --release is required
    args = build_parser().parse_args(["reproduce", "stability", "--release", "x"])
    assert args.func is rs._cmd
