#!/usr/bin/env bash
# Strategy search end to end (issue 12 part 6): GPT-3 175B on 1,024 NPUs
# (Switch(8, 300 GB/s) x Switch(128, 25 GB/s), A100 at half of peak), the
# symbolic top-K simulated on J threads within a time limit. Prints the table
# and the timing lines (pre-filter rate, simulations per minute).
# Usage: bench/search_gpt3.sh [TOP=10] [JOBS=2] [TIME_LIMIT_S=240]
set -euo pipefail
cd "$(dirname "$0")/.."
ORRERY="${ORRERY:-build/apps/orrery}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ORRERY" gen --device=a100 --efficiency=0.5 --system-out="$dir/sys.json" > /dev/null
/usr/bin/time -f "wall %e s, peak %M KiB" "$ORRERY" search --model=gpt3-175b --npus=1024 --global-batch=1536 \
  --network="Switch(8,300GB/s,1us)_Switch(128,25GB/s,2us)" --system="$dir/sys.json" \
  --top="${1:-10}" --jobs="${2:-2}" --time-limit="${3:-240}" --simulate="${4:-stable}"
