"""Write ``ub_core/problems/ksn/release_processes.json`` from ``tests/data/release_specs.json`` (the table that
``python -m tools.release_specs`` writes): the process of every generated release problem (text, code, multimodal),
uid for uid. Facts only: uid, task folder, row, family and parameters in our registry's terms, and a note where the
release is odd. Run from the repository root:

    python -m tools.release_specs.build_processes
"""

from __future__ import annotations

import json
from pathlib import Path

from ub_core.problems.ksn.release_names import release_folder_info

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "data" / "release_specs.json"
OUT = ROOT / "ub_core" / "problems" / "ksn" / "release_processes.json"
GENERATED = ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal")

# Where the process we use is not the static extraction's family, and why.
OVERRIDES = {
    # R ~ Rayleigh(3.8), X ~ Normal(0, R): a Laplace(0, 3.8) in law; we keep the program's own two-stage process.
    "351bb963-": ("rayleigh_mixture", {"sigma": 3.8, "kernel": "normal",
                                       "kernel_params": {"loc": 0.0, "scale": {"const": 0.0, "coef_R": 1.0}}},
                  "the program draws R ~ Rayleigh(3.8), then Normal(0, R), which is Laplace(0, 3.8) in law; we "
                  "state the two-stage process"),
}


# The construction of each code-implicit release program (the extraction's description) -> our builder in
# ub_core/problems/ksn/code_transforms.py; None where the family's own template already makes that construction.
TRANSFORM_OF_PATTERN = {
    "direct Generator.binomial": "binomial_direct",
    "log(-log U) (Gumbel inverse CDF)": "gumbel_loglog",
    "linear combination of multivariate normal coordinates": "mvn_combination",
    "X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b)": "beta_gamma_ratio",
    "Knuth product-of-uniforms loop": "poisson_knuth",
    "ceil(log U / log(1-p)) (inverse CDF)": "geometric_ceil",
    "log(U/(1-U)) (logistic inverse CDF)": "logistic_logit",
    "direct Generator.random": "uniform_direct",
    "exp(normal)": "lognormal_exp_normal",
    "direct random.randint": "randint_direct",
    "norm.ppf(F(a) + U (F(b) - F(a))) (truncated normal inverse CDF)": "truncnorm_ppf",
    "direct numpy.random.random then affine a*X + b": "uniform_affine",
    "direct numpy.random.standard_normal then affine a*X + b": "normal_affine",
    "difference of two Poisson draws": "skellam_difference",
    "log(U) = -Exp(1)": "exp_log_u",
    "direct Generator.choice": "choice_direct",
    "direct numpy.random.choice": "choice_direct",
    "indicator: U < p": "bernoulli_indicator",
    "searchsorted(cumsum(p), U) (inverse-CDF categorical)": "searchsorted",
    "direct Generator.gamma": "gamma_direct",
    "sign(U) * log(1 - 2|U|), U ~ U(-1/2, 1/2) (Laplace inverse CDF)": "laplace_inverse",
    "N ~ Poisson; Gamma(N*shape, scale) = sum of N Gamma(shape, scale) jumps": "compound_gamma_shape",
    "N ~ Poisson; 0 if N == 0 else sum of N jumps": "compound_sum",
    "Gamma(a+1) * U^(1/a) boost = Gamma(a)": "gamma_boost",
    "cos(uniform angle over a full period)": "arcsine_cos",
    "direct Generator.normal": "normal_direct",
    "log(prod of k uniforms) = -Gamma(k, 1)": "erlang_log_product",
    "dot(multinomial counts, values) = sum of n iid categorical values": "weighted_counts",
}
TRANSFORM_PREFIX = {"dirichlet coordinate": "dirichlet_gammas"}
# Numbers a construction needs that the law does not keep (read from the two programs).
TRANSFORM_PARAMS = {
    "202e06b7-": {"mean": [0.08, -0.04, 0.03], "cov": [[0.05, 0.01, 0.0], [0.01, 0.04, 0.005], [0.0, 0.005, 0.03]],
                  "weights": [1.0, 0.5, -0.25]},
    "aef49887-": {"mean": [12.0, -8.0, 5.0, 20.0],
                  "cov": [[9.0, 4.2, -1.5, 2.0], [4.2, 16.0, 3.6, -2.4], [-1.5, 3.6, 25.0, 5.5],
                          [2.0, -2.4, 5.5, 36.0]],
                  "weights": [1.0, -0.5, 0.25, 1.0]},
}


def _transform(s: dict) -> tuple[str | None, dict | None]:
    if not (s["task_folder"].startswith("code_implicit") and s["uid_folder"].startswith("code_implicit")):
        return None, None
    pattern = s.get("pattern") or ""
    name = TRANSFORM_OF_PATTERN.get(pattern)
    if name is None:
        name = next((v for k, v in TRANSFORM_PREFIX.items() if pattern.startswith(k)), None)
    extra = next((v for k, v in TRANSFORM_PARAMS.items() if s["uid"].startswith(k)), None)
    return name, extra


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


def main() -> None:
    specs = json.loads(SPECS.read_text())
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
            "category": release_folder_info(s["task_folder"])["category"],
            "regime": "spread" if s["regime"] == "spread_out" else "concentrated",
            "slot": s["intended_family"],
            "release_name": s["intended_subcategory"],
            "family": family,
            "params": params,
            "note": "; ".join(notes),
        })
        name, extra = _transform(s)
        if s["task_folder"].startswith("code_implicit"):
            rows[-1]["release_construction"] = s.get("pattern") or ""
        if name:
            rows[-1]["transform"] = name
        if extra:
            rows[-1]["transform_params"] = extra
    rows.sort(key=lambda r: (r["uid_folder"], r["row"]))
    # one row per line, so a change to one problem is a one-line diff
    OUT.write_text("[\n" + ",\n".join(json.dumps(r, sort_keys=False) for r in rows) + "\n]\n")
    print(f"wrote {len(rows)} processes to {OUT}")


if __name__ == "__main__":
    main()
