"""The documentation a newcomer reads: every relative link in a Markdown file leads to a file of the repository, and
the README stays a front page."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the README is the front page; everything longer lives in docs/ or beside the code it describes
README_MAX_LINES = 250

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _tracked_markdown() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode == 0 and out.stdout.strip():
        return [ROOT / line for line in out.stdout.splitlines() if not line.startswith("tests/data/")]
    return [p for p in ROOT.rglob("*.md") if "tests/data" not in p.as_posix() and ".git" not in p.parts]


def test_every_relative_link_in_the_docs_resolves():
    broken = []
    for page in _tracked_markdown():
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            if not path or re.match(r"^[a-z]+:", path):
                continue
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, len(lines)
    # the two set-up commands come first
    block = "\n".join(lines[:6])
    assert "pip install -e '.[inspect]'" in block and "bash scripts/test.sh" in block


#: an issue reference: "issue 44", "Issue-7", "(issue ..." -- history, which belongs in the tracker and git log
_ISSUE_REFERENCE = re.compile(r"\bissue[ -]?\d+|\(issue\b", re.IGNORECASE)
#: what ships (the packages and the lm-eval hook) and what a newcomer reads (READMEs, docs/)
_SHIPPED = ("ub_core/", "ub_inspect/", "ub_lmeval/", "unpredictabench_lm_eval_hook.py", "docs/")


def _shipped_and_read_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode == 0 and out.stdout.strip():
        names = out.stdout.splitlines()
    else:
        names = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [ROOT / n for n in names
            if n.startswith(_SHIPPED) or (Path(n).name == "README.md" and not n.startswith("tests/data/"))]


def test_shipped_code_and_docs_name_no_issue_numbers():
    """Comments, docstrings, READMEs and docs/ say what the code is and why, not which issue changed it."""
    assert _ISSUE_REFERENCE.search("the floored SE (issue 44)") and _ISSUE_REFERENCE.search("see Issue-7")
    assert not _ISSUE_REFERENCE.search("known issues: none; tissue 3")
    found = []
    for path in _shipped_and_read_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (model weights, archives) carry no prose
        for number, line in enumerate(text.splitlines(), 1):
            if _ISSUE_REFERENCE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not found, "issue references in shipped code or docs:\n" + "\n".join(found)


def test_ci_and_scripts_name_only_files_that_exist():
    """``.ci/`` and ``scripts/`` describe and run files of the repository by path; a renamed or deleted file must not
    leave them naming it."""
    top = r"(?:tests|ub_core|ub_inspect|ub_lmeval|docs|benchmarks|examples|scripts|tools|\.ci)"
    named = re.compile(rf"(?<![\w$/.-])({top}/[\w./*-]*\w)")
    missing = []
    for script in sorted([*(ROOT / ".ci").iterdir(), *(ROOT / "scripts").iterdir()]):
        if not script.is_file():
            continue
        for n, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
            for path in named.findall(line):
                if not (any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()):
                    missing.append(f"{script.relative_to(ROOT)}:{n}: {path}")
    assert not missing, missing
