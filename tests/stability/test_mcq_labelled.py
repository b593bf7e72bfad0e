"""read_mcq against replies from the llm-stability release, each labelled by a person reading it.

The set (tests/data/stability_labelled_replies.jsonl, drawn and labelled as tests/data/README.md says) is the
reader's acceptance test: it must agree with the labels on at least 97% of these hard replies."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from ub_core.parsing.mcq import LETTERS, read_mcq

DATA = Path(__file__).resolve().parents[1] / "data" / "stability_labelled_replies.jsonl"
MIN_AGREEMENT = 0.97
PROVENANCE = ("archive", "file", "run", "question_index", "model", "task")


@pytest.fixture(scope="module")
def labelled():
    with DATA.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_labelled_set_is_large_spread_and_traceable(labelled):
    assert len(labelled) >= 250
    tasks = Counter(r["task"] for r in labelled)
    models = Counter(r["model"] for r in labelled)
    assert len(tasks) >= 7 and len(models) >= 10
    for r in labelled:
        assert all(r.get(k) not in (None, "") for k in PROVENANCE), r
        assert isinstance(r["reply"], str) and len(r["options"]) >= 2
        assert r["label"] is None or r["label"] in LETTERS[: len(r["options"])], r
    # weighted to the hard cases: unanswered replies, long reasoning, boxed values, cut-off <think> blocks
    assert sum(r["label"] is None for r in labelled) >= 20
    assert sum(len(r["reply"]) > 1500 for r in labelled) >= 50
    assert sum("\\boxed" in r["reply"] for r in labelled) >= 20
    assert sum("<think>" in r["reply"] and "</think>" not in r["reply"] for r in labelled) >= 5


def test_reader_agrees_with_the_labels(labelled):
    per_task: dict[str, list[int]] = {}
    misses = []
    for i, r in enumerate(labelled):
        got = read_mcq(r["reply"], r["options"])
        ok = got.letter == r["label"]
        tally = per_task.setdefault(r["task"], [0, 0])
        tally[0] += ok
        tally[1] += 1
        if not ok:
            misses.append(f"line {i + 1} ({r['model']}, {r['task']}): label {r['label']}, read {got.letter} "
                          f"({got.reason})")
    agree = sum(a for a, _ in per_task.values())
    rate = agree / len(labelled)
    report = (f"read_mcq agrees with {agree}/{len(labelled)} labels ({rate:.1%}); by task: "
              + ", ".join(f"{t} {a}/{n}" for t, (a, n) in sorted(per_task.items())))
    print(report)
    print("\n".join(misses))
    assert rate >= MIN_AGREEMENT, report + "\n" + "\n".join(misses)
