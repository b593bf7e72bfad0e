"""Write ``ub_core/problems/ksn/release_processes.json`` from ``specs.json`` (this folder): the process of every
generated release problem (text, code, multimodal), uid for uid. Facts only: uid, task folder, row, family and
parameters in our registry's terms, and a note where the release is odd. Run from the repository root:

    python scripts/release_specs/build_processes.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent.parent / "ub_core" / "problems" / "ksn" / "release_processes.json"
GENERATED = ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal")
CATEGORY_OF_FOLDER = {"textual_explicit": "text_explicit", "textual_implicit": "text_implicit",
                      "code_explicit": "code_explicit", "code_implicit": "code_implicit",
                      "textual_multimodal_explicit": "multimodal"}

# Where the process we use is not the static extraction's family, and why.
OVERRIDES = {
    # R ~ Rayleigh(3.8), X ~ Normal(0, R): a Laplace(0, 3.8) in law; we keep the program's own two-stage process.
    "351bb963-": ("rayleigh_mixture", {"sigma": 3.8, "kernel": "normal",
                                       "kernel_params": {"loc": 0.0, "scale": {"const": 0.0, "coef_R": 1.0}}},
                  "the program draws R ~ Rayleigh(3.8), then Normal(0, R), which is Laplace(0, 3.8) in law; we "
                  "state the two-stage process"),
}


def _registry_form(family, params):
    """``compound_poisson[gamma]`` (the extraction's name for a jump law) is our ``compound_poisson`` with
    ``jump``; mixtures are rewritten component by component."""
    if family.startswith("compound_poisson["):
        return "compound_poisson", params
    if family == "mixture":
        comps = []
        for c in params["components"]:
            fam, par = _registry_form(c["family"], c["params"])
            comps.append({**c, "family": fam, "params": par})
        return family, {"components": comps}
    return family, params


def _category(folder: str) -> str:
    stem = folder.rsplit("_gpt", 1)[0].replace("_concentrated", "").replace("_spread_out", "")
    return CATEGORY_OF_FOLDER[stem]


def main() -> None:
    specs = json.loads((HERE / "specs.json").read_text())
    rows = []
    for s in specs:
        if s["category"] not in GENERATED:
            continue
        family, params, notes = s["family"], s["params"], []
        for prefix, (fam, par, why) in OVERRIDES.items():
            if s["uid"].startswith(prefix):
                family, params = fam, par
                notes.append(why)
        if s.get("intended_mismatch") and not notes:
            notes.append(s["intended_mismatch"].replace("prompt asked for", "the release prompt names")
                         + " (the program is the truth)")
        if s["uid_folder"] != s["task_folder"]:
            notes.append(f"filed under {s['task_folder']} although its uid is {s['uid_folder']} row "
                         f"{s['question_index']}; counted in the folder's category")
        family, params = _registry_form(family, params)
        rows.append({
            "uid": s["uid"],
            "folder": s["task_folder"],
            "uid_folder": s["uid_folder"],
            "row": s["question_index"],
            "category": _category(s["task_folder"]),
            "regime": "spread" if s["regime"] == "spread_out" else "concentrated",
            "slot": s["intended_family"],
            "release_name": s["intended_subcategory"],
            "family": family,
            "params": params,
            "note": "; ".join(notes),
        })
    rows.sort(key=lambda r: (r["uid_folder"], r["row"]))
    # one row per line, so a change to one problem is a one-line diff
    OUT.write_text("[\n" + ",\n".join(json.dumps(r, sort_keys=False) for r in rows) + "\n]\n")
    print(f"wrote {len(rows)} processes to {OUT}")


if __name__ == "__main__":
    main()
