"""Numbers in the docs are checked against their source, never typed by hand unchecked:

- every task count of a README's task table (``| `ub_ksn_code_explicit` | 78: ... |``) is the number of documents
  that task's own dataset hook yields, and a task README's "N problems" is the sum over its tasks;
- the main README's edition sizes are ``ub_core.problems.EDITIONS`` (which test_bank_sizes.py checks against the
  banks);
- every time a README gives for a run comes from one table, ``benchmarks/README.md``: its edition times are
  ``ORACLE_SECONDS_PER_ITEM`` x the edition's items (what ``ub bank list`` prints), those are its client-throughput
  table's measured ms per item, and no other README line that states a bank's size or runs an evaluation types a
  time of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ub_core.problems import EDITIONS, ORACLE_SECONDS_PER_ITEM, rough_duration

ROOT = Path(__file__).resolve().parents[2]
# every README and every page of docs/: the pages a user reads for counts and times
READMES = sorted(p for p in (*ROOT.rglob("README.md"), *(ROOT / "docs").rglob("*.md"))
                 if not any(part.startswith(".") for part in p.relative_to(ROOT).parts))
BENCH = ROOT / "benchmarks" / "README.md"
UNITS = r"(?:problems|items|questions|laws)"
DURATION = re.compile(r"~\s?\d[\d.,]*\s?(?:s|ms|min|h|seconds|minutes|hours)\b")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _task_rows() -> list[tuple[Path, str, int]]:
    rows = []
    for path in READMES:
        for m in re.finditer(r"^\|\s*`(ub_[a-z0-9_]+)`\s*\|\s*(\d[\d,]*)\b", path.read_text(), re.M):
            rows.append((path, m.group(1), _number(m.group(2))))
    return rows


def _documents(task: str) -> int:
    pytest.importorskip("lm_eval")
    from ub_lmeval import run_check
    from unpredictabench_lm_eval_hook import load_task_yaml

    path = run_check._index()[task][0]
    cfg = load_task_yaml(path)
    data = cfg["custom_dataset"](**(cfg.get("metadata") or {}), **(cfg.get("dataset_kwargs") or {}))
    return len(data[cfg.get("test_split") or "test"])


def test_the_task_tables_are_found():
    tasks = {t for _, t, _ in _task_rows()}
    assert {"ub_ksn_code_explicit", "ub_ksn_code_implicit", "ub_ksn_logprob_multimodal"} <= tasks, sorted(tasks)


@pytest.mark.parametrize("path, task, stated", [pytest.param(*r, id=f"{r[0].relative_to(ROOT)}:{r[1]}")
                                                for r in _task_rows()])
def test_every_task_count_in_a_readme_is_the_tasks_document_count(path, task, stated):
    assert _documents(task) == stated, f"{path.relative_to(ROOT)}: {task} says {stated}"


def test_a_task_readmes_total_is_the_sum_of_its_tasks():
    checked = 0
    for path in READMES:
        rows = [(t, n) for p, t, n in _task_rows() if p == path]
        if not rows:
            continue
        first = path.read_text().split("\n\n")[1]  # the paragraph under the title
        for m in re.finditer(r"(\d[\d,]*) (?:KS@N )?problems", first):
            assert _number(m.group(1)) == sum(_documents(t) for t, _ in rows), f"{path.relative_to(ROOT)}: {m.group(0)}"
            checked += 1
    assert checked >= 2


def test_the_main_readmes_edition_sizes_are_the_banks():
    text = (ROOT / "README.md").read_text()
    seen = set()
    for m in re.finditer(rf"^\| ({'|'.join(EDITIONS)}) \| (\d[\d,]*) {UNITS}[^|]*\|\s*(?:(\d[\d,]*) {UNITS})?", text,
                         re.M):
        bank, subset, full = m.group(1), _number(m.group(2)), m.group(3)
        sizes = list(EDITIONS[bank].values())
        assert [subset, *([_number(full)] if full else [])] == sizes, (bank, m.group(0))
        seen.add(bank)
    assert seen == set(EDITIONS), seen


def _table(text: str, header_start: str) -> list[list[str]]:
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[i:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def test_the_benchmark_table_is_the_one_source_of_run_times():
    text = BENCH.read_text()
    editions = _table(text, "| bank | edition |")
    expected = [[bank, ed or "one edition", f"{n:,}", rough_duration(n * ORACLE_SECONDS_PER_ITEM[bank])]
                for bank, sizes in EDITIONS.items() for ed, n in sizes.items()]
    assert editions[2:] == expected
    throughput = _table(text, "| family | requests |")
    col = throughput[0].index("ms/item")
    measured = {row[0]: float(row[col]) / 1000 for row in throughput[2:]}
    assert measured and all(ORACLE_SECONDS_PER_ITEM[f] == pytest.approx(s) for f, s in measured.items()), measured


def test_no_other_readme_types_a_time_for_a_run():
    offenders = []
    for path in READMES:
        if path == BENCH:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            job = re.search(rf"\d[\d,]* {UNITS}", line) or re.search(r"\b(inspect eval|lm_eval|ub-lm-eval) ", line)
            if job and DURATION.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not offenders, offenders
