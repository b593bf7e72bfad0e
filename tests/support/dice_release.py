"""A small synthetic "Bad Dice Players" release written in the release's layout and formats, for the
tests of ``ub reproduce dice``, ``ub report --published`` and ``ub compare --published``: two models (GPT-4o with
true draws, Qwen3 with shifted ones) per law and protocol, reference draws with their sidecar, MCQ files, the
release's processed files computed here with scipy, and beside the release the checksums of its files (the tests
name them in place of the published release's). No release data is in the repository."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
from scipy import stats

from ub_core.metrics.dice import DICE_LAWS, DICE_ORDER
from ub_core.reproduce import dice as R

__all__ = ["MODEL_IDS", "N_DRAWS", "write_release", "manifest_file", "draws", "expected_p", "letters"]

# two models per cell, written under the release's two file-name styles and model-id keys
MODEL_IDS = {"GPT-4o": ("model", "gpt-4o"), "Qwen3": ("model_name", "Qwen/Qwen3-32B")}
N_DRAWS = 150


def draws(name: str, model: str, protocol: str) -> list:
    """GPT-4o: true draws (seeded); Qwen3: true draws pushed off (rounded to one decimal, plus one)."""
    seed = (DICE_ORDER.index(name), list(MODEL_IDS).index(model), protocol == "batch")
    x = DICE_LAWS[name].dist.rvs(size=N_DRAWS, random_state=np.random.default_rng(seed))
    return [float(v) for v in (x if model == "GPT-4o" else np.round(x, 1) + 1)]


def _write(path: Path, doc) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def _pooled_chi2(obs: list, exp: list, low_first: bool) -> float:
    """The release's pooling, written out independently: merge an outer cell with expected < 5 into its
    neighbour, one end then the other, until both ends reach 5."""
    obs, exp = list(obs), list(exp)
    while len(exp) > 2 and (exp[0] < 5 or exp[-1] < 5):
        for end in ((0, -1) if low_first else (-1, 0)):
            if len(exp) > 2 and exp[end] < 5:
                if end == 0:
                    obs = [obs[0] + obs[1]] + obs[2:]
                    exp = [exp[0] + exp[1]] + exp[2:]
                else:
                    obs = obs[:-2] + [obs[-2] + obs[-1]]
                    exp = exp[:-2] + [exp[-2] + exp[-1]]
    return _pearson_p(obs, exp)


def _pearson_p(obs: list, exp: list) -> float:
    """Pearson's statistic and its chi-square tail, written out: scipy's ``chisquare`` refuses observed and
    expected sums that differ, which the release's cells allow (draws outside every cell)."""
    o, e = np.asarray(obs, float), np.asarray(exp, float)
    return float(stats.chi2.sf(np.sum((o - e) ** 2 / e), o.size - 1))


def expected_p(name: str, x: list, ref: np.ndarray) -> float:
    n = len(x)
    if name == "Bernoulli":
        return _pearson_p([x.count(0.0), x.count(1.0)], [0.3 * n, 0.7 * n])
    if name == "Binomial":
        ints = [int(v) for v in x]
        return _pooled_chi2([ints.count(k) for k in range(11)], [n * stats.binom.pmf(k, 10, 0.5) for k in range(11)],
                            True)
    if name == "Poisson":
        ints = [int(v) for v in x]
        obs = [ints.count(k) for k in range(15)] + [sum(v >= 15 for v in ints)]
        exp = [n * stats.poisson.pmf(k, 5) for k in range(15)] + [n * stats.poisson.sf(14, 5)]
        return _pooled_chi2(obs, exp, False)
    return float(stats.ks_2samp(x, ref).pvalue)


def letters(model: str) -> list[str]:
    rng = np.random.default_rng(len(model))
    return list(rng.choice(list("ABCD"), size=40, p=[0.1, 0.5, 0.3, 0.1]))


def write_release(tmp_path: Path) -> Path:
    """A complete synthetic release: 15 laws x 2 protocols x 2 models, reference draws with their sidecar,
    MCQ questions for two models (one with its tally only), the release's processed files (scipy values)."""
    refs, sums, main = {}, {}, {}
    rng = np.random.default_rng(42)
    for name in DICE_ORDER:
        for protocol in R.PROTOCOLS:
            ref = np.asarray(DICE_LAWS[name].dist.rvs(size=300, random_state=rng), dtype=np.float64)
            refs[f"{protocol}/{name}"] = ref
            sums.setdefault(protocol, {})[name] = {"sha256": hashlib.sha256(ref.tobytes()).hexdigest()}
            for model, (key, model_id) in MODEL_IDS.items():
                x = draws(name, model, protocol)
                fname = f"{model_id.replace('/', '_')}_{name.lower()}_{protocol}_20251123_000000.json"
                _write(tmp_path / R.RAW / protocol / name / fname,
                       {key: model_id, "requested_samples": 1000, "statistics": {"total_samples": len(x)},
                        "samples": x})
                main.setdefault(protocol, {}).setdefault(name, {})[model] = {
                    "pval": expected_p(name, x, ref), "w1": float(stats.wasserstein_distance(x, ref))}
    (tmp_path / "data/reference").mkdir(parents=True)
    np.savez(tmp_path / f"{R.REFERENCE}.npz", **refs)
    _write(tmp_path / f"{R.REFERENCE}.json", {"seed": 42, "references": sums})
    _write(tmp_path / R.MAIN_RESULTS, main)
    mcq = {}
    for model, folder in (("GPT-4o", "gpt4o"), ("Llama-4", "llama4")):
        keys = letters(model)
        questions = [{"id": i, "content": f"Question: q{i}?\nA. a\nB. b\nC. c\nD. d\nCorrect Answer: {c}\n",
                      "parsed_answer": c} for i, c in enumerate(keys)]
        counts = {k: keys.count(k) for k in "ABCD"}
        if model == "GPT-4o":
            _write(tmp_path / R.MCQ_DIR / folder / "all_questions.json", questions)
        _write(tmp_path / R.MCQ_DIR / folder / "answer_statistics.json", {"distribution": counts})
        mcq[model] = {"counts": counts, "p_value": float(stats.chisquare(list(counts.values())).pvalue)}
    _write(tmp_path / R.MCQ_RESULTS, {"mcq": mcq})
    files = {p.relative_to(tmp_path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    # beside the release, never in it: a release cannot vouch for itself
    manifest_file(tmp_path).write_text(json.dumps({"release": "synthetic", "files": files}))
    return tmp_path


def manifest_file(release: Path) -> Path:
    """The checksums of the synthetic release as written (what ``--manifest`` or ``$UB_DICE_RELEASE_MANIFEST``
    names in place of the published release's)."""
    return release.with_name(release.name + ".sha256.json")


