"""``ub stability score`` on hostile JSONL: errors summarised, never quadratic output; every bad line is
one named error and the good questions in the same file are still scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import corpus
from ub_core.cli import main
from ub_core.stability_score import ERRORS_SHOWN

ROOT = Path(__file__).resolve().parents[2]
YN = ["Yes", "No"]


def _line(task, qid, run, reply, options=YN, gold=None, **extra) -> str:
    rec = {"task": task, "id": qid, "run": run, "reply": reply, "options": options, **extra}
    if gold is not None:
        rec["gold"] = gold
    return json.dumps(rec)


# one good task: q1 answers (A) in both runs (gold A), q2 answers "No" then "(B)" (gold B)
#   TARr: q1 1, q2 0 -> 1/2; TARa: both agree -> 1; every run right -> best = worst = median = 1; no unreadable
GOOD = [_line("good", "q1", 0, "(A)", gold="A"), _line("good", "q1", 1, "(A)", gold="A"),
        _line("good", "q2", 0, "No", gold="B"), _line("good", "q2", 1, "(B)", gold="B")]
GOOD_EXPECTED = {"runs": 2, "questions": 2, "tar_r": 0.5, "tar_a": 1.0, "best_acc": 1.0, "worst_acc": 1.0,
                 "median_acc": 1.0, "acc_spread": 0.0, "parse_failure_rate": 0.0, "excluded_questions": 0,
                 "gold_questions": 2}


def _score(tmp_path, lines: list, capsys) -> tuple[int, dict, str, str, str]:
    """Run ``ub stability score --json`` on ``lines`` (text or bytes); (exit status, JSON, stdout, stderr, path)."""
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    rc = main(["stability", "score", "--json", str(path)])
    out, err = capsys.readouterr()
    return rc, json.loads(out), out, err, str(path)


def _distinct_runs(n: int) -> list[str]:
    """``n`` lines, each its own question and its own run: every question misses n - 1 runs."""
    return [_line("t", f"q{i}", i, "(A)") for i in range(n)]


def test_errors_are_summarised_never_quadratic(tmp_path, capsys):
    """Before: 4,000 such lines printed 92 MB on stderr and 92 MB of JSON (each question listed its 3,999 missing
    runs). Now the first ERRORS_SHOWN errors are printed, each naming the first few missing runs and the count,
    then one line counting the rest by kind; the good task in the same file is scored."""
    sizes = {}
    for n in (2000, 4000):
        rc, res, out, err, path = _score(tmp_path, GOOD + _distinct_runs(n), capsys)
        assert rc == 1
        assert res["error_count"] == n and res["error_kinds"] == {"missing runs": n}
        assert len(res["errors"]) == ERRORS_SHOWN
        assert res["errors"][0] == (f"{path}: task 't' question 'q0' (line(s) 5): no reply for run(s) 1, 2, 3, 4, 5, "
                                    f"... ({n - 1:,} in all); question excluded")
        lines = err.splitlines()
        assert len(lines) == ERRORS_SHOWN + 1
        assert lines[-1] == (f"ub: error: {n - ERRORS_SHOWN:,} more error(s) not shown (by kind, all {n:,}: "
                             f"{n:,} x missing runs)")
        assert res["tasks"]["t"]["questions"] == 0 and res["tasks"]["t"]["excluded_questions"] == n
        assert res["tasks"]["good"] == pytest.approx(GOOD_EXPECTED)
        sizes[n] = (len(out), len(err))
    # the output does not grow with the input (a digit more in the counts at most)
    assert all(s < 8_000 for s in sizes[4000]), sizes
    assert abs(sizes[4000][0] - sizes[2000][0]) < 100 and abs(sizes[4000][1] - sizes[2000][1]) < 100, sizes


@pytest.mark.parametrize("bad, reason", [
    (corpus.deep_json(), "JSON nested too deeply to read"),
    ('{"task": "good", "id": "q3", "run": %s, "reply": "A", "options": ["Yes", "No"]}'
     % corpus.huge_int(corpus.OVER_INT_LIMIT_DIGITS), "unreadable JSON (Exceeds the limit (4300 digits)"),
    (b'{"task": "good", "id": "q3", "run": 0, "reply": "\xff\xfe", "options": ["Yes", "No"]}',
     "not UTF-8 text (byte 0xff at offset 49)"),
    (corpus.with_duplicate_key(json.loads(_line("good", "q1", 0, "(A)", gold="A")), "reply", "(B)"),
     "duplicate key 'reply' in a JSON object"),
    (corpus.with_duplicate_key({"task": "good", "id": "q3", "run": 0, "reply": "A", "options": YN}, "run", 1),
     "duplicate key 'run' in a JSON object"),
    (_line("good", "q3", 0, "(A)", options=["", "No"]), "options must be non-empty texts"),
    (_line("good", "q3", 0, "(A)", options=["Yes", " yes "], gold="yes"),
     "gold 'yes' is the text of options A, B: give its letter"),
    ("[1, 2]", "expected a JSON object, got list"),
    (_line("good", "q3", True, "(A)"), "field 'run' must be int, got bool"),
], ids=["depth-200000", "run-5001-digits", "not-utf8", "duplicate-reply", "duplicate-run", "options-empty",
        "gold-text-of-two-options", "not-an-object", "run-bool"])
def test_bad_line_is_one_named_error_and_the_rest_is_scored(tmp_path, capsys, bad, reason):
    """Before: the deep line raised RecursionError and the 5,001-digit run AttributeError, each losing the whole
    file; a repeated key was silently last-wins. Now each is one line naming the line."""
    rc, res, out, err, path = _score(tmp_path, GOOD[:2] + [bad] + GOOD[2:], capsys)
    assert rc == 1
    assert len(res["errors"]) == 1 and res["errors"][0].startswith(f"{path}:3: {reason}"), res["errors"]
    assert res["errors"][0].endswith("; line skipped") and len(res["errors"][0]) < 300
    assert err.count("ub: error:") == 1 and "Traceback" not in err
    assert res["tasks"] == {"good": pytest.approx(GOOD_EXPECTED)}


def test_hostile_values_are_quoted_short(tmp_path, capsys):
    """A megabyte task name and a 4,000-digit run in errors: each message stays one short line."""
    huge_name = "x" * 2**20
    lines = GOOD + [_line(huge_name, "a", 0, "(A)"), _line(huge_name, "b", int(corpus.huge_int(4000)), "(A)"),
                    _line(huge_name, "b", int(corpus.huge_int(4000)), "(A)")]
    rc, res, out, err, path = _score(tmp_path, lines, capsys)
    assert rc == 1 and res["error_kinds"] == {"repeated run": 1, "missing runs": 2}
    assert all(len(e) < 400 for e in res["errors"]), [len(e) for e in res["errors"]]
    assert len(err) < 2_000 and res["tasks"]["good"] == pytest.approx(GOOD_EXPECTED)


def test_stdin_is_read_as_bytes(tmp_path):
    """``-`` reads stdin line by line as bytes: a line that is not UTF-8 is one error, not "cannot read" (exit 2)."""
    data = b"\n".join([GOOD[0].encode(), corpus.NOT_UTF8, *(x.encode() for x in GOOD[1:])]) + b"\n"
    proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "stability", "score", "--json", "-"], input=data,
                          capture_output=True, timeout=120,
                          env={**os.environ,
                               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 1, proc.stderr[-2000:]
    res = json.loads(proc.stdout)
    assert res["errors"] == ["<stdin>:2: not UTF-8 text (byte 0xff at offset 8); line skipped"]
    assert res["tasks"] == {"good": pytest.approx(GOOD_EXPECTED)}


def test_questions_with_a_repeated_option_text_are_scored(tmp_path, capsys):
    """A real MMLU public_relations question has options proactive, reactive, manipulative,
    manipulative, and a BBH ruin_names question repeats an option. Before, each line was skipped ("options must be
    distinct"), so the question left TARr although raw agreement needs no options. Now the question is scored:
    letters read as usual, and a reply naming the shared text is ambiguous between those two options only."""
    pr = ["proactive", "reactive", "manipulative", "manipulative"]
    lines = GOOD + [_line("good", "pr", 0, "The answer is (D)", options=pr, gold="D"),
                    _line("good", "pr", 1, "manipulative", options=pr, gold="D")]
    rc, res, out, err, path = _score(tmp_path, lines, capsys)
    assert rc == 0 and res["errors"] == []
    good = res["tasks"]["good"]
    assert good["questions"] == 3 and good["excluded_questions"] == 0
    # raw replies: q1 agrees, q2 and pr do not -> TARr 1/3; parsed: q1, q2 agree, pr reads D vs ambiguous -> 2/3
    assert good["tar_r"] == pytest.approx(1 / 3) and good["tar_a"] == pytest.approx(2 / 3)
    assert good["parse_failure_rate"] == pytest.approx(1 / 6)  # "manipulative" alone: C or D cannot be told
    assert good["best_acc"] == 1.0 and good["worst_acc"] == pytest.approx(2 / 3)


def test_the_reader_keeps_letters_and_names_the_ambiguity():
    from ub_core.parsing.mcq import read_mcq

    pr = ["proactive", "reactive", "manipulative", "manipulative"]
    assert read_mcq("The answer is (D)", pr).letter == "D"
    assert read_mcq("(C) manipulative", pr).letter == "C"  # the letter decides, the text agrees with it
    assert read_mcq("reactive", pr).letter == "B"  # a distinct text still reads
    for reply in ("manipulative", "The answer is manipulative", "Answer: manipulative."):
        read = read_mcq(reply, pr)
        assert read.letter is None and read.reason == "ambiguous: options C, D have the same text", (reply, read)
    assert read_mcq("(B) manipulative", pr).letter is None  # a letter against its own text
