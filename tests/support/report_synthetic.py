"""Synthetic inputs for the report families whose tasks live on other branches (calibration, implicit, explicit,
odds, stability), built in the documented shapes:

- lm-eval: ``results_<date>.json`` + ``samples_<task>_<date>.jsonl`` written as lm-eval writes them (the doc is
  the problem record; the per-sample metric keys sit on the line and are listed under ``"metrics"``);
- Inspect: real ``inspect_ai.eval`` runs of small tasks whose scorers return the documented Score value keys and
  ``Score.metadata["ub"]``.

Every number is chosen so the expected report values can be written down by hand (see the tests).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ub_core.problems import OptionItem

STAMP = "2026-01-02T03-04-05.000001"
COLOURS = ("red", "blue", "green", "white")


def calibration_items() -> list[OptionItem]:
    """Ordered colour pairs x 2 number pairs: P(first) ideal = n1 / (n1 + n2), clustered by the unordered pair."""
    items = []
    for a in COLOURS:
        for b in COLOURS:
            if a == b:
                continue
            for n1, n2 in ((30, 10), (10, 30)):
                items.append(OptionItem(
                    id=f"cal-{a}-{b}-{n1}-{n2}", bank="calibration", category="colors", family="categorical",
                    params={"counts": [n1, n2]},
                    prompt=f"A bag holds {n1} {a} balls and {n2} {b} balls. I draw one. It is",
                    options=(a, b), probabilities=(n1 / (n1 + n2), n2 / (n1 + n2)),
                    cluster="-".join(sorted((a, b))), metadata={"order": "ab"}))
    return items


def pick_first_scores(item: OptionItem) -> tuple[dict[str, Any], list[float], list[float]]:
    """A model that puts 0.9 of the normalised mass on the first option and 0.8 of all mass on the two options:
    pm = 0.8, wd = |0.9 - p_first| (two options on a unit grid), re = H(0.9) - H(p) bits; pick_first always."""
    import math

    p = item.probabilities[0]
    h = lambda q: -sum(x * math.log2(x) for x in (q, 1 - q) if x > 0)  # noqa: E731
    values = {"pm": 0.8, "wd": abs(0.9 - p), "re": h(0.9) - h(p)}
    higher_first = p > 0.5
    for b in ("null", "calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second"):
        values[f"behaviour_{b}"] = float(b == "pick_first" or (b == "pick_higher" and higher_first)
                                         or (b == "pick_lower" and not higher_first))
    return values, [0.9, 0.1], [0.72, 0.08]


def implicit_items() -> list[OptionItem]:
    fair = OptionItem(id="imp-die6", bank="implicit", category="dice", family="uniform_integer", params={"faces": 6},
                     prompt="A fair die is cast. It lands on face number", options=tuple("123456"),
                     probabilities=(1 / 6,) * 6, cluster="die6")
    coin = OptionItem(id="imp-coin", bank="implicit", category="coins", family="categorical", params={"p": 0.5},
                     prompt="A fair coin is tossed. It lands on", options=("heads", "tails"),
                     probabilities=(0.5, 0.5), cluster="coin")
    return [fair, coin]


def implicit_prediction(item: OptionItem) -> tuple[dict[str, Any], list[float]]:
    """Die: the model favours face 6 (0.5) and spreads 0.1 on the others -> Chebyshev 1/3, Manhattan 2/3;
    coin: exact -> 0 and 0. argmax_acc is undefined (no unique mode) for both: NaN."""
    if len(item.options) == 6:
        pred = [0.1] * 5 + [0.5]
    else:
        pred = [0.5, 0.5]
    true = item.probabilities
    cheb = max(abs(a - b) for a, b in zip(pred, true))
    manh = sum(abs(a - b) for a, b in zip(pred, true))
    return {"chebyshev": cheb, "manhattan": manh, "kl": 0.0 if pred == list(true) else 0.25, "missing_mass": 0.05,
            "argmax_acc": float("nan")}, pred


# ------------------------------------------------------------------------------------------------ lm-eval files

def _write_lm(out: Path, model: str, task_lines: dict[str, list[dict]], results: dict[str, dict]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"results_{STAMP}.json").write_text(json.dumps({
        "results": results, "config": {"model": model, "model_args": {"pretrained": "synthetic/model-1b"}},
        "configs": {t: {} for t in task_lines}}))
    for task, lines in task_lines.items():
        with (out / f"samples_{task}_{STAMP}.jsonl").open("w") as fh:
            for i, line in enumerate(lines):
                row = {"doc_id": i, "doc": line.pop("doc"), "target": "", "arguments": {}, "resps": [],
                       "filtered_resps": [], "filter": "none", "doc_hash": "x", "prompt_hash": "x", "target_hash": "x"}
                row["metrics"] = [k for k in line if k not in ("predicted", "option_mass")]
                row.update(line)
                fh.write(json.dumps(row) + "\n")
    return out


def write_lmeval_families(root: Path) -> Path:
    """One lm-eval run (model ``hf/synthetic/model-1b``) with ub_logit (calibration), ub_implicit, ub_explicit,
    ub_odds and ub_tar samples."""
    tasks: dict[str, list[dict]] = {}
    tasks["ub_logit_colors"] = []
    for item in calibration_items():
        values, pred, mass = pick_first_scores(item)
        tasks["ub_logit_colors"].append({"doc": item.to_record(), **values, "predicted": pred, "option_mass": mass})
    tasks["ub_implicit"] = []
    for item in implicit_items():
        values, pred = implicit_prediction(item)
        tasks["ub_implicit"].append({"doc": item.to_record(), **values, "predicted": pred,
                                     "option_mass": [0.95 * x for x in pred]})
    # explicit: 4 dice questions, 3 right (mcq_acc 0.75), p_correct 0.6 each
    tasks["ub_explicit"] = [{"doc": {"id": f"exp-{i}", "category": "dice", "options": list("ABCDE")},
                             "mcq_acc": float(i != 3), "p_correct": 0.6} for i in range(4)]
    # odds: percentile task, normal and gamma, 0 and 3 shots; abs_error = 10 / (1 + shots) (+5 for gamma)
    tasks["ub_odds_percentile"] = []
    for fam, extra in (("normal", 0.0), ("gamma", 5.0)):
        for shots in (0, 3):
            for q in range(2):
                tasks["ub_odds_percentile"].append({
                    "doc": {"id": f"odds-{fam}-{shots}-{q}", "family": fam, "task": "percentile", "shots": shots,
                            "shot_type": "within_distribution", "context": "none", "distribution": f"{fam}-p0"},
                    "abs_error": 10.0 / (1 + shots) + extra, "baseline_abs_error": 20.0})
    tasks["ub_odds_sampling"] = [{"doc": {"id": "odds-normal-sampling", "family": "normal", "task": "sampling",
                                          "shots": 0, "shot_type": "none", "context": "none"}, "ks_stat": 0.3}]
    # stability: 4 questions x 3 runs; correctness by run [[1,1,1],[1,0,1],[0,0,0],[1,1,0]]
    # -> per-run accuracy [0.75, 0.5, 0.5]: median 0.5, spread 0.25; best 3/4, worst 1/4
    runs = [[1, 1, 1], [1, 0, 1], [0, 0, 0], [1, 1, 0]]
    tasks["ub_tar"] = [{"doc": {"id": f"tar-{i}", "category": "arithmetic"}, "tar_r": float(i == 0),
                        "tar_a": float(len(set(r)) == 1), "best_acc": float(max(r)), "worst_acc": float(min(r)),
                        "run_accuracies": r} for i, r in enumerate(runs)]
    results = {t: {"alias": t} for t in tasks}
    results["ub_tar"].update({"tar_r,none": 0.25, "tar_a,none": 0.5})
    return _write_lm(root / "hf__synthetic__model-1b", "hf", tasks, results)


def write_stability_results_only(root: Path) -> Path:
    """A results file with run-level stability values and no samples (aggregate-only input)."""
    out = root / "agg"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"results_{STAMP}.json").write_text(json.dumps({
        "results": {"ub_tar": {"tar_r,none": 0.4, "tar_a,none": 0.6, "best_acc,none": 0.9, "worst_acc,none": 0.5,
                               "median_acc,none": 0.7, "acc_spread,none": 0.2}},
        "config": {"model": "vllm", "model_args": "pretrained=org/agg-model,seed=1"}}))
    return out


# ------------------------------------------------------------------------------------------------ Inspect logs

def run_inspect_families(log_dir: Path) -> list[Path]:
    """Two real Inspect runs on the offline ``ub/collapse`` provider (never asked to generate):

    - ``synthetic_logit``: calibration + implicit items; the scorer returns the documented Score values and
      ``metadata["ub"]`` = record + ``predicted`` + ``option_mass``;
    - ``synthetic_stability``: 3 epochs with the ``ub_inspect/tar`` and ``tar_raw`` reducers; question q's answer
      changes between epochs only for q = 1, so TARa = TARr = 1/2 over two questions.
    """
    from inspect_ai import Epochs, Task, eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import Metric, Score, Target, mean, metric, scorer
    from inspect_ai.solver import Generate, TaskState, solver

    import ub_inspect.providers  # noqa: F401
    import ub_inspect.reducers  # noqa: F401

    @solver
    def no_model():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            return state
        return solve

    items = {it.id: it for it in calibration_items()[:6] + implicit_items()}

    @metric
    def scored() -> Metric:  # calibration and implicit values have different keys: no per-key metric here
        return lambda scores: float(len(scores))

    @scorer(metrics=[scored()])
    def logit_scorer():
        async def score(state: TaskState, target: Target) -> Score:
            item = items[str(state.sample_id)]
            if item.bank == "calibration":
                values, pred, mass = pick_first_scores(item)
            else:
                values, pred = implicit_prediction(item)
                mass = [0.95 * x for x in pred]
            return Score(value=values, metadata={"ub": {**item.to_record(), "predicted": pred, "option_mass": mass}})
        return score

    logit = Task(dataset=MemoryDataset([Sample(id=i, input=it.prompt, metadata=it.to_record()) for i, it in
                                        items.items()]), solver=no_model(), scorer=logit_scorer(),
                 name="synthetic_logit")

    @scorer(metrics=[mean()])
    def answer_scorer():
        async def score(state: TaskState, target: Target) -> Score:
            q = int(str(state.sample_id)[-1])
            answer = str(state.epoch) if q == 1 else "42"
            return Score(value=1.0 if answer == "42" else 0.0, answer=answer, explanation=f"The answer is {answer}")
        return score

    stab = Task(dataset=MemoryDataset([Sample(id=f"q{q}", input=f"question {q}", metadata={"category": "toy"})
                                       for q in range(2)]), solver=no_model(), scorer=answer_scorer(),
                epochs=Epochs(3, ["mean", "ub_inspect/tar", "ub_inspect/tar_raw"]), name="synthetic_stability")
    logs = inspect_eval([logit, stab], model="ub/collapse", log_dir=str(log_dir), display="none")
    for log in logs:
        assert log.status == "success", log.error
    return [Path(log.location) for log in logs]
