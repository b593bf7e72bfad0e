"""One escaper for every text sink (:mod:`ub_core.terminal`): ESC sequences, bidi controls, newlines and a leading
``=`` in a model id and a file name go through ``ub report`` to the terminal, summary.md, summary.csv,
tables/*.csv and index.html made inert, and stay exact in summary.json."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

from support.truth_runner import ROOT

from ub_core.terminal import csv_cell, markdown_text, terminal_text

HOSTILE = "=cmd|' /C calc'!A0\x1b]0;pwned\x07\x1b[2J\u202egnp.exe\n\r-x"
STAMP = "2025-01-01T00-00-00.000000"
RAW = ("\x1b", "\x07", "\u202e", "\r")


def _clean(text: str) -> bool:
    return not any(c in text for c in RAW)


def test_report_sinks_are_inert(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / f"results_{STAMP}.json").write_text(json.dumps(
        {"results": {"t": {"tar_r,none": 0.9, "tar_a,none": 0.95}}, "config": {"model": HOSTILE}}))
    (run / f"evil\x1b[31m\u202e_{STAMP}.json").write_text("{}")  # a skipped input whose name drives the terminal
    proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "report", str(run), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _clean(proc.stdout) and _clean(proc.stderr), (proc.stdout, proc.stderr)
    assert "\\x1b" in proc.stderr  # the file name is shown, escaped
    out = tmp_path / "out"
    md = (out / "summary.md").read_text()
    assert _clean(md) and "\\x1b" in md
    assert all(ln.startswith(("|", "#", "_", "-", "")) for ln in md.splitlines())
    page = (out / "index.html").read_text()
    assert _clean(page) and "\\x1b" in page
    for path in [out / "summary.csv", *(out / "tables").glob("*.csv")]:
        with path.open(newline="") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    assert _clean(cell) and not cell.startswith(("=", "+", "@", "\t")), (path.name, cell)
                    assert not cell.startswith("-") or _number(cell), (path.name, cell)
    assert HOSTILE[:4] in (out / "summary.csv").read_text()  # shown, as text
    doc = json.loads((out / "summary.json").read_text())
    assert HOSTILE in json.dumps(doc, ensure_ascii=False) or json.dumps(HOSTILE)[1:-1] in json.dumps(doc)


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_each_sink_on_each_hostile_text():
    for text in [HOSTILE, "=1+1", "+cmd", "-cmd", "@SUM(A1)", "\tx", "\rx", "a\u2066b\u2069", "\x9b31m"]:
        for out in (terminal_text(text.replace("\n", " ")), markdown_text(text), csv_cell(text)):
            assert _clean(out) and "\x9b" not in out and "\u2066" not in out, (text, out)
        assert not str(csv_cell(text)).startswith(("=", "+", "-", "@", "\t", "\r")), text
        assert "\n" not in markdown_text(text)
    assert csv_cell(-0.5) == -0.5 and csv_cell("-0.5") == "-0.5" and csv_cell(3) == 3


def test_compare_lines_are_inert(tmp_path):
    """``ub compare`` names its inputs on the terminal (skips, errors): their ESC and bidi controls are escaped."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "evil\x1b]0;pwned\x07\u202e.json").write_text("{}")
    (b / "=cmd\x1b[2J.json").write_text("{}")
    proc = subprocess.run([sys.executable, "-m", "ub_core.cli", "compare", str(a), str(b)], capture_output=True,
                          text=True, timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert _clean(proc.stdout) and _clean(proc.stderr) and "\\x1b]0;pwned\\x07" in proc.stderr, proc.stderr
