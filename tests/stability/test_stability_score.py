"""``ub stability score``: the non-determinism paper's stability metrics for replies collected anywhere (a JSONL, one
reply a line).

Expected numbers are worked out by hand in the comments, not by calling the scoring code."""

from __future__ import annotations

import json
import logging

import pytest

from ub_core.cli import main

YN = ["Yes", "No"]
VALS = ["12", "35", "40", "7"]


def _line(task, qid, run, reply, options, gold=None) -> str:
    rec = {"task": task, "id": qid, "run": run, "reply": reply, "options": options}
    if gold is not None:
        rec["gold"] = gold
    return json.dumps(rec)


COT_YES = "A: Let's think step by step. We take 2 steps and turn around twice. So the answer is Yes."

# navigate-like task, 3 runs x 4 questions
#   q1 gold "B": "So the answer is No." / "- No" / {"Answer": "No"} -> B B B; raw differ: TARr 0, TARa 1; right x3
#   q2 gold "Yes" (a text: letter A): the same chain of thought x3 (its "A:" turn prefix is no choice) -> A A A;
#      TARr 1, TARa 1; right x3
#   q3 gold "A": the same refusal x3 -> unreadable x3: TARr 1, TARa 1 (all unreadable agree); never right
#   q4 gold "B": "(B)" / "The answer is A or B." (a tie: unreadable) / "(A)" -> B, -, A: TARr 0, TARa 0;
#      right in run 0 only
# TARr = 2/4, TARa = 3/4; unreadable 4 of 12 replies -> 1/3
# run accuracies: run 0 = q1 q2 q4 = 3/4, run 1 = q1 q2 = 2/4, run 2 = 2/4 -> median 1/2
# BestAcc = q1 q2 q4 = 3/4, WorstAcc = q1 q2 = 2/4
NAV = [
    ("q1", ["So the answer is No.", "- No", '{"Answer": "No"}'], "B"),
    ("q2", [COT_YES] * 3, "Yes"),
    ("q3", ["I'm sorry, I can't answer that."] * 3, "A"),
    ("q4", ["(B)", "The answer is A or B.", "(A)"], "B"),
]
NAV_EXPECTED = {"runs": 3, "questions": 4, "tar_r": 2 / 4, "tar_a": 3 / 4, "best_acc": 3 / 4, "worst_acc": 2 / 4,
                "median_acc": 1 / 2, "parse_failure_rate": 4 / 12}

# value options, 2 runs x 3 questions
#   m1 gold "35": \boxed{35} / "Final Answer: The final answer is 35." -> B B; TARr 0, TARa 1; right x2
#   m2 gold "C": "35.0" x2 -> B B; TARr 1, TARa 1; wrong x2
#   m3 gold "D": "**D**" / "I think it is seven" (unreadable) -> D, -; TARr 0, TARa 0; right in run 0
# TARr 1/3, TARa 2/3, unreadable 1 of 6; run accuracies 2/3 and 1/3 -> median 1/2; Best 2/3, Worst 1/3
MATH = [
    ("m1", ["\\boxed{35}", "Final Answer: The final answer is 35."], "35"),
    ("m2", ["35.0", "35.0"], "C"),
    ("m3", ["**D**", "I think it is seven"], "D"),
]
MATH_EXPECTED = {"runs": 2, "questions": 3, "tar_r": 1 / 3, "tar_a": 2 / 3, "best_acc": 2 / 3, "worst_acc": 1 / 3,
                 "median_acc": 1 / 2, "parse_failure_rate": 1 / 6}


def _synthetic() -> list[str]:
    lines = []
    for qid, replies, gold in NAV:
        lines += [_line("navigate", qid, r, reply, YN, gold) for r, reply in enumerate(replies)]
    for qid, replies, gold in MATH:
        lines += [_line("college_mathematics", qid, r + 1, reply, VALS, gold) for r, reply in enumerate(replies)]
    # no gold: accuracies are null. 2 runs x 2 questions: "(A)"/"(A)" and "B"/"No" -> TARr 1/2, TARa 1, 0 unreadable
    lines += [_line("nogold", "x", 0, "(A)", YN), _line("nogold", "x", 1, "(A)", YN),
              _line("nogold", "y", 0, "B", YN), _line("nogold", "y", 1, "No", YN)]
    return lines


def _run(tmp_path, lines, *extra, capsys):
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc = main(["stability", "score", str(path), *extra])
    out, err = capsys.readouterr()
    return rc, out, err, str(path)


def _check(got: dict, expected: dict):
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key


def test_score_json_matches_hand_computed_values(tmp_path, capsys):
    rc, out, err, _ = _run(tmp_path, _synthetic(), "--json", capsys=capsys)
    assert rc == 0, err
    res = json.loads(out)
    assert res["errors"] == []
    tasks = res["tasks"]
    assert set(tasks) == {"navigate", "college_mathematics", "nogold"}
    _check(tasks["navigate"], NAV_EXPECTED)
    _check(tasks["college_mathematics"], MATH_EXPECTED)
    _check(tasks["nogold"], {"runs": 2, "questions": 2, "tar_r": 1 / 2, "tar_a": 1.0, "parse_failure_rate": 0.0})
    assert tasks["nogold"]["best_acc"] is None and tasks["nogold"]["median_acc"] is None
    for t in tasks.values():
        assert {"tar_r", "tar_a", "best_acc", "worst_acc", "median_acc", "parse_failure_rate", "runs",
                "questions"} <= set(t)
        assert t["excluded_questions"] == 0


def test_score_table_shows_parse_failures_next_to_tara(tmp_path, capsys):
    rc, out, err, _ = _run(tmp_path, _synthetic(), capsys=capsys)
    assert rc == 0
    head, *rows = out.splitlines()
    assert head.split()[3:6] == ["TARr@N", "TARa@N", "unread%"]
    nav = next(r for r in rows if r.startswith("navigate")).split()
    assert nav[1:6] == ["3", "4", "50.0", "75.0", "33.3"] and nav[6:9] == ["75.0", "50.0", "50.0"]


def test_unreadable_replies_are_logged_with_examples(tmp_path, capsys, caplog):
    with caplog.at_level(logging.WARNING):
        _run(tmp_path, _synthetic(), "--json", capsys=capsys)
    msgs = [r.getMessage() for r in caplog.records if "unreadable" in r.getMessage()]
    nav = next(m for m in msgs if "navigate" in m)
    assert "4 of 12 replies unreadable" in nav and "can't answer" in nav and "ambiguous" in nav


def test_bad_input_is_reported_and_the_rest_scored(tmp_path, capsys):
    good = _synthetic()
    lines = list(good)
    lines.insert(2, "this is not json")                                           # line 3
    lines.insert(5, json.dumps({"task": "navigate", "id": "q9", "run": "1", "reply": "B", "options": YN}))  # 6
    lines.insert(6, json.dumps({"task": "navigate", "id": "q9", "reply": "B", "options": YN}))  # 7: no run
    lines.insert(7, _line("navigate", "q8", 0, "B", YN, gold="Maybe"))              # 8: gold not an option
    # a duplicate of college_mathematics m2 run 1 (first written as line 13 + 4 inserted = line 17)
    lines.append(_line("college_mathematics", "m2", 1, "35.0", VALS, "C"))          # last line
    # a question missing a run: m4 has run 1 but not run 2
    lines.append(_line("college_mathematics", "m4", 1, "(A)", VALS, "A"))
    rc, out, err, path = _run(tmp_path, lines, "--json", capsys=capsys)
    assert rc == 1
    errs = json.loads(out)["errors"]
    n = len(lines)
    dup_first = 4 + next(i for i, ln in enumerate(good, 1) if '"m2"' in ln and '"run": 1' in ln)
    assert any(e.startswith(f"{path}:3: not valid JSON") for e in errs)
    assert any(e.startswith(f"{path}:6: field 'run' must be int") for e in errs)
    assert any(e.startswith(f"{path}:7: missing field 'run'") for e in errs)
    assert any(e.startswith(f"{path}:8: gold 'Maybe'") for e in errs)
    assert any(e.startswith(f"{path}:{n - 1}:") and f"also on line {dup_first}" in e for e in errs)
    assert any("'m4'" in e and f"line(s) {n}" in e and "no reply for run(s) 2" in e for e in errs)
    assert len(errs) == 6
    assert err.count("ub: error:") == 6
    tasks = json.loads(out)["tasks"]
    _check(tasks["navigate"], NAV_EXPECTED)  # the bad lines are skipped, the rest scored as before
    # m2 (duplicated) and m4 (missing a run) are excluded, never filled in: left are m1 and m3
    #   TARr: m1 0, m3 0 -> 0; TARa: m1 1, m3 0 -> 1/2; unreadable 1 of 4; run accuracies 1 and 1/2
    _check(tasks["college_mathematics"], {"runs": 2, "questions": 2, "tar_r": 0.0, "tar_a": 1 / 2,
                                          "parse_failure_rate": 1 / 4, "best_acc": 1.0, "worst_acc": 1 / 2,
                                          "median_acc": 3 / 4, "excluded_questions": 2})


def test_options_or_gold_that_differ_between_runs_exclude_the_question(tmp_path, capsys):
    lines = [_line("t", "q", 0, "B", YN, "B"), _line("t", "q", 1, "B", ["Yes", "No", "Maybe"], "B"),
             _line("t", "p", 0, "A", YN, "A"), _line("t", "p", 1, "A", YN, "B")]
    rc, out, err, path = _run(tmp_path, lines, "--json", capsys=capsys)
    assert rc == 1
    errs = json.loads(out)["errors"]
    assert errs == [f"{path}:2: task 't' question 'q': options differ from line 1; question excluded",
                    f"{path}:4: task 't' question 'p': gold differs from line 3; question excluded"]
    t = json.loads(out)["tasks"]["t"]
    assert t["questions"] == 0 and t["excluded_questions"] == 2 and t["tar_a"] is None


def test_unreadable_file_is_exit_2(tmp_path, capsys):
    assert main(["stability", "score", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "empty.jsonl").write_text("\n")
    assert main(["stability", "score", str(tmp_path / "empty.jsonl")]) == 1
