#!/usr/bin/env bash
# The same job as run_ksn.py, with the command-line tools a user types. Offline: the models are the built-in
# reference models (ub/oracle samples from the truth, ub/collapse always gives one value).
# Usage: examples/ksn_offline/run_ksn.sh [OUT_DIR]   (about 2-3 minutes on a laptop)
set -euo pipefail
OUT="${1:-ub_example_out}"
CATS="${CATS:-shuffling,real_world}"
LIMIT="${LIMIT:-3}"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1

for model in ub/oracle ub/collapse; do
  inspect eval ub_inspect/ksn --model "$model" -T categories="$CATS" -T limit_per_category="$LIMIT" \
      --display none --log-dir "$OUT/inspect_logs"
done

tasks=$(echo "$CATS" | sed 's/\([^,]*\)/ub_ksn_\1/g')
for model in ub-oracle ub-collapse; do
  ub-lm-eval --model "$model" --tasks "$tasks" --limit "$LIMIT" \
      --output_path "$OUT/lm_eval/$model" --log_samples
done

ub report "$OUT/inspect_logs" "$OUT/lm_eval" --out "$OUT/report"
echo "open $OUT/report/index.html"
