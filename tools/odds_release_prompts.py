"""Extract the parameters that the odds release's prompts state, for ``tests/data/odds_release_prompts.json``.

Usage: ``python tools/odds_release_prompts.py RELEASE_CHECKOUT > tests/data/odds_release_prompts.json``, where the
checkout is ``yahskapar/LLMs-and-Probabilistic-Reasoning``. For every zero-shot GPT-4 Turbo idealized file (three
tasks, 14 distributions) and every Gemini Ultra real-world file (three framings, 12 distributions) it records the
name-value pairs of the distribution block of the prompts (``Mean: 8366.971``, ``Location: 43788.542 (...)``,
``Probabilities: [0.2, 0.3, 0.5]``) and, for percentile files, the distinct asked values in file order. Files are
read with the reproduction's hostile-input reader; the tool itself is not imported by the package.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from ub_core.reproduce.odds import (_FAMILY_FILES, _RW_FILES, _RW_FRAMINGS, _TABLE1_FILES, SAMPLES, _asked,
                                    read_release_csv)

_BLOCK = re.compile(r"## (?:Consider|Note that)[^\n]*\n(.*?)## (?:Here is your question|Instruction)", re.S)
_PAIR = re.compile(r"^\s*([A-Za-z][^:\n]{0,60}):\s*(\[[-\d., ]*\]|-?\d+(?:\.\d+)?)", re.M)


def stated(prompt: str) -> dict:
    m = _BLOCK.search(prompt)
    out = {}
    for name, value in _PAIR.findall(m.group(1) if m else ""):
        out[name.strip()] = json.loads(value) if value.startswith("[") else float(value)
    return out


def record(path: Path, kind: str, **keys) -> dict:
    rows = read_release_csv(path)
    blocks = {json.dumps(stated(r[0]), sort_keys=True) for r in rows}
    if len(blocks) != 1:
        raise SystemExit(f"{path.name}: {len(blocks)} different distribution blocks")
    rec = {**keys, "file": str(path.relative_to(path.parents[2])), "rows": len(rows),
           "stated": json.loads(blocks.pop())}
    if kind == "percentile":
        values = []
        for r in rows:
            v = _asked("percentile", r[0])[0]
            if v not in values:
                values.append(v)
        rec["values"] = values
    return rec


def main(release: str) -> None:
    root = Path(release) / SAMPLES
    commit = subprocess.run(["git", "-C", release, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    idealized = []
    for task, (folder, n) in _TABLE1_FILES.items():
        for fname, (family, ptag) in _FAMILY_FILES.items():
            path = root / "idealized" / folder / f"Gpt4Turbo_{folder}_0_shots_{fname}_{n}_samples.csv"
            idealized.append(record(path, task, task=task, family=family, parameterisation=ptag))
    real_world = []
    for framing, (folder, infix) in _RW_FRAMINGS.items():
        for fname, name in _RW_FILES.items():
            path = root / folder / f"gemini_ultra_percentiles_zero_shot_{infix}_{fname}_10_samples.csv"
            real_world.append(record(path, "percentile", name=name, framing=framing))
    json.dump({"source": {"repository": "yahskapar/LLMs-and-Probabilistic-Reasoning", "commit": commit,
                          "folder": SAMPLES, "tool": "tools/odds_release_prompts.py"},
               "idealized": idealized, "real_world": real_world}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
