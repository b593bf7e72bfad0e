#!/usr/bin/env bash
# The README's framework routes from a NON-editable install in a fresh venv, run from outside the checkout:
# what a user gets from `pip install unpredictabench[lmeval,inspect]`.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
python -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$repo[lmeval,inspect]"
cd "$work"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 UB_CACHE_DIR="$work/cache"
bin="$work/venv/bin"

# route 0: plain lm_eval, as a user types it: our tasks and models with no flag (unpredictabench-lm-eval.pth)
"$bin/lm_eval" validate --tasks ub_logit,ub_ksn,ub_tar | tail -1
"$bin/lm_eval" ls tasks | grep ub_logit >/dev/null  # not grep -q: an early exit breaks lm_eval's pipe
"$bin/lm_eval" --model ub-oracle --tasks ub_ksn_shuffling --limit 1 --output_path out0 >/dev/null
# every other door: python -m lm_eval (help, validate, a run), the Python API, and a refusal before any model loads
"$bin/python" -m lm_eval --help | head -1 | grep -q '^usage: lm-eval'
"$bin/python" -m lm_eval validate --tasks ub_dice | tail -1
"$bin/python" -m lm_eval --model ub-oracle --tasks ub_dice_batch --limit 1 --output_path out3 >/dev/null
if "$bin/lm_eval" --model ub-oracle --tasks ub_dice --metadata '{"n": 200}' 2>err.txt >/dev/null; then
    echo "lm_eval --tasks ub_dice --metadata n=200 ran"; exit 1; fi
tail -1 err.txt | grep -q '^lm_eval: error: ub_dice_independent: ' || { cat err.txt; exit 1; }
! grep -q Traceback err.txt
"$bin/python" - <<'PY'
import lm_eval
from lm_eval.evaluator import evaluate
from lm_eval.tasks import TaskManager, get_task_dict
from lm_eval.api.registry import get_model
tm = TaskManager()  # lm-eval's defaults: the installed hook adds our folder
r = lm_eval.simple_evaluate(model="ub-oracle", tasks=["ub_dice_batch"], limit=1, task_manager=tm)
assert r["results"]["ub_dice_batch"]["passed,none"] == 1.0, r["results"]
r = evaluate(lm=get_model("ub-oracle")(), task_dict=get_task_dict(["ub_ksn_shuffling"], tm), limit=1)
assert r["results"]["ub_ksn_shuffling"]["ks@100,take_100"] == 1.0, r["results"]
print("fresh venv: python -m lm_eval, simple_evaluate and evaluate from Python: ok")
PY
# route 1: plain lm_eval with our installed task folder (a built-in model: lm-eval's dummy)
"$bin/lm_eval" --model dummy --include_path "$("$bin/ub" tasks-dir)" --tasks ub_ksn_shuffling --limit 1 \
    --output_path out1 >/dev/null
# route 2: the ub-lm-eval wrapper, which adds our models
"$bin/ub-lm-eval" --model ub-oracle --tasks ub_ksn_shuffling,ub_ksn_real_world --limit 3 --output_path out2 \
    --log_samples >/dev/null
# Inspect from site-packages
"$bin/inspect" eval ub_inspect/ksn --model ub/oracle -T categories=shuffling --display none --log-dir logs

"$bin/python" - <<'PY'
import glob, json
r1 = json.load(open(glob.glob("out1/**/results_*.json", recursive=True)[0]))
assert "ks@100,take_100" in r1["results"]["ub_ksn_shuffling"], r1["results"]
r2 = json.load(open(glob.glob("out2/**/results_*.json", recursive=True)[0]))
for task in ("ub_ksn_shuffling", "ub_ksn_real_world"):
    assert r2["results"][task]["ks@100,take_100"] == 1.0, r2["results"][task]
    assert r2["higher_is_better"][task]["ks@100"] is True
sample = json.loads(open(glob.glob("out2/**/samples_ub_ksn_shuffling_*.jsonl", recursive=True)[0]).readline())
assert len(sample["doc"]["ub_sample"]["values"]) == 100  # per-document lists live in the sample log only
from inspect_ai.log import read_eval_log
log = read_eval_log(glob.glob("logs/*.eval")[0])
assert log.status == "success" and log.eval.task == "ub_inspect/ksn", (log.status, log.eval.task)
(score,) = log.results.scores  # one score: the headline KS@100 first, then the other metrics
ks = {name: m.value for name, m in score.metrics.items()}
assert next(iter(ks)) == "ks@100" and ks["ks@100"] == 1.0, ks
r3 = json.load(open(glob.glob("out3/**/results_*.json", recursive=True)[0]))
assert r3["results"]["ub_dice_batch"]["passed,none"] == 1.0, r3["results"]
r0 = json.load(open(glob.glob("out0/**/results_*.json", recursive=True)[0]))
assert r0["results"]["ub_ksn_shuffling"]["ks@100,take_100"] == 1.0, r0["results"]
print("fresh venv routes: plain lm_eval, lm_eval --include_path, ub-lm-eval, inspect eval: ok")
PY

# The worked plug-in (examples/failure_to_mix) installed with pip next to the wheel, as a lab installs its own
# package: its entry points and its lm-eval YAML come from its pyproject.toml. Both frameworks on the offline models:
# step-likeness S small on the oracle (within 4 standard errors of a perfect sampler's), 1 on the collapsed model.
"$bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$repo/examples/failure_to_mix"
ftm_dir="$("$bin/python" -c 'import os, ub_failure_to_mix; print(os.path.dirname(ub_failure_to_mix.__file__))')"
for m in oracle collapse; do
    "$bin/inspect" eval ub_failure_to_mix/mix --model "ub/$m" --display none --log-dir "ftm_logs_$m"
    "$bin/ub-lm-eval" --model "ub-$m" --tasks ub_mix --include_path "$ftm_dir" --output_path "ftm_out_$m" >/dev/null
done
"$bin/python" - <<'PY'
import glob, json
from inspect_ai.log import read_eval_log
for m in ("oracle", "collapse"):
    log = read_eval_log(glob.glob(f"ftm_logs_{m}/*.eval")[0])
    assert log.status == "success" and log.eval.task == "ub_failure_to_mix/mix", (log.status, log.eval.task)
    ins = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    lm = json.load(open(glob.glob(f"ftm_out_{m}/**/results_*.json", recursive=True)[0]))["results"]["ub_mix"]
    for s, se, perfect in ((ins["step_likeness"], ins["step_likeness_stderr"], ins["step_likeness_perfect"]),
                           (lm["step_likeness,take_100"], lm["step_likeness_stderr,take_100"],
                            lm["step_likeness_perfect,take_100"])):
        assert (s == 1.0) if m == "collapse" else abs(s - perfect) < 4 * se, (m, s, se, perfect)
    print(f"failure_to_mix on ub/{m}: S = {ins['step_likeness']:.3f} (Inspect), {lm['step_likeness,take_100']:.3f} (lm-eval)")
PY
"$bin/python" -m pip uninstall --quiet --yes ub-failure-to-mix

# pip uninstall leaves nothing of ours in site-packages (lm-eval's folder included), and lm_eval still runs
site="$("$bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$bin/python" -m pip uninstall --quiet --yes unpredictabench
left="$(cd "$site" && ls -d unpredictabench* ub_core ub_inspect ub_lmeval lm_eval/tasks/*ub_* 2>/dev/null || true)"
[ -z "$left" ] || { echo "left after pip uninstall: $left"; exit 1; }
"$bin/lm_eval" ls tasks >/dev/null
echo "fresh venv: pip uninstall leaves nothing of ours"
