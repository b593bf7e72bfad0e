#!/usr/bin/env bash
# Score replies collected by another pipeline (an API batch job, a notebook, ...) against the ground truth.
# Usage: examples/score_jsonl/run.sh            (a few seconds; offline)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# the table: KS@N per category and overall, WDZ, JSD, counts of valid and failed replies
ub score --samples "$HERE/answers.jsonl" --workers 1
# the same as JSON for a dashboard: {"aggregate": ..., "problems": [one row per id], "errors": [...]}
ub score --samples "$HERE/answers.jsonl" --workers 1 --json > "${OUT:-$HERE}/scores.json"
echo "wrote ${OUT:-$HERE}/scores.json"
