#!/usr/bin/env bash
# Strategy search pre-filter rate (issue 12 part 6): enumeration + divisibility
# rules + closed-form memory, one thread, no simulation (--time-limit=0).
# `orrery search` prints the pass's count and wall time on stderr; this runs
# it on a few search spaces and prints the rate of each.
# Usage: bench/search_prefilter.sh   (ORRERY=path/to/orrery to override)
set -euo pipefail
cd "$(dirname "$0")/.."
ORRERY="${ORRERY:-build/apps/orrery}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$ORRERY" gen --device=a100 --efficiency=0.5 --system-out="$dir/sys.json" > /dev/null
run() {  # label, model, npus, batch, network
  "$ORRERY" search --model="$2" --npus="$3" --global-batch="$4" --network="$5" --system="$dir/sys.json" \
    --top=1 --time-limit=0 > "$dir/out" 2> "$dir/err"
  echo "$1: $(grep -o 'pre-filter: .*' "$dir/err")"
}
run "gpt3-175b, 1,024 NPUs, G 1536" gpt3-175b 1024 1536 "Switch(8,300GB/s,1us)_Switch(128,25GB/s,2us)"
run "gpt3-175b, 16,384 NPUs, G 16384" gpt3-175b 16384 16384 "Switch(8,300GB/s,1us)_Switch(2048,25GB/s,2us)"
run "llama3-70b, 4,096 NPUs, G 2048" llama3-70b 4096 2048 "Switch(8,450GB/s,1us)_Switch(512,50GB/s,2us)"
run "mixtral-8x7b (ep), 1,024 NPUs, G 1024" mixtral-8x7b 1024 1024 "Switch(8,450GB/s,1us)_Switch(128,50GB/s,2us)"
