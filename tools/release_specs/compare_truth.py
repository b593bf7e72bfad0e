"""Compare the built-in bank's truth with the release programs' output, uid for uid (the bank's acceptance check).

Needs the release's values, built by ``ub official truth --codes <release>/ground_truth_codes --out DIR
--trust-release-code``. For every built-in problem with a release uid and a numeric truth, a two-sample KS test of
our 10,000 reference draws (the scorer's own, seed 0) against the program's 10,000 values; categorical truths are
compared by a chi-square test on the outcome counts (labels mapped through our options). Permutation truths are
skipped: their item lists are checked against the release by the tests.

    python -m tools.release_specs.compare_truth DIR [--alpha 1e-3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

from ub_core.release_tools.official import load_ground_truth
from ub_core.problems.ksn.bank import ksn_problems


def _release_values(root: Path) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in sorted(root.glob("*/ground_truth_values.json")):
        out.update(load_ground_truth(f))
    for f in sorted(root.glob("*/.parts/*.json")):  # a run still under way keeps finished uids here
        row = json.loads(f.read_text())
        out.setdefault(row["uid"], row["ground_truth_values"])
    return out


def _categorical_p(problem, values) -> tuple[float, str]:
    labels = list(problem.options)
    index = {str(lab): i for i, lab in enumerate(labels)}
    codes = [index.get(str(v)) for v in values]
    if any(c is None for c in codes):
        missing = sorted({str(v) for v, c in zip(values, codes) if c is None})[:3]
        return 0.0, f"release labels not among our options: {missing}"
    ours = problem.truth(10_000, 0).astype(int)
    table = np.array([np.bincount(ours, minlength=len(labels)), np.bincount(codes, minlength=len(labels))])
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0, "one outcome"
    return float(stats.chi2_contingency(table)[1]), "chi2"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("values_dir", type=Path)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    release = _release_values(a.values_dir)
    rows = []
    for p in ksn_problems():
        if p.uid is None:
            continue
        vals = release.get(p.uid)
        if vals is None:
            rows.append({"id": p.id, "uid": p.uid, "status": "no release values"})
            continue
        if p.support == "permutation":
            continue  # shuffles: the item lists are checked against the release by tests/ksn/test_release_bank.py
        if p.answer_format == "option":
            pval, how = _categorical_p(p, vals)
        else:
            x = np.asarray(vals, dtype=float)
            pval, how = float(stats.ks_2samp(p.truth(10_000, 0), x).pvalue), "ks"
        rows.append({"id": p.id, "uid": p.uid, "category": p.category, "family": p.family, "test": how,
                     "p": pval, "pass": pval >= a.alpha})
    tested = [r for r in rows if "p" in r]
    numeric = [r for r in tested if r["test"] == "ks"]
    ok = sum(r["pass"] for r in numeric)
    print(f"numeric uids: {ok}/{len(numeric)} indistinguishable (KS p >= {a.alpha:g}) = "
          f"{ok / max(1, len(numeric)):.1%}")
    cat = [r for r in tested if r["test"] != "ks"]
    print(f"categorical uids: {sum(r['pass'] for r in cat)}/{len(cat)} (chi-square p >= {a.alpha:g})")
    for r in rows:
        if not r.get("pass", False):
            print(f"  {r['id']:40s} {r['uid'][:8]} {r.get('family', ''):22s} {r.get('test', '')} "
                  f"p={r.get('p', float('nan')):.2e} {r.get('status', '')}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
