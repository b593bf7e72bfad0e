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
