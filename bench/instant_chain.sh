#!/usr/bin/env bash
# A chain of N METADATA nodes (each completes at once and releases the next)
# ending in one 1 us COMP node, on both ranks of a 2-NPU ring. Before issue 9
# the executor recursed once per instant node and overflowed the stack near
# 100k nodes; now it loops. Usage: bench/instant_chain.sh [N]  (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
ORRERY="${ORRERY:-build/apps/orrery}"
n="${1:-1000000}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk -v n="$n" 'BEGIN {
  print "{\"version\":\"0.0.4\"}"
  print "{\"name\":\"m0\",\"type\":\"METADATA_NODE\"}"
  for (i = 1; i < n; i++) printf "{\"id\":\"%d\",\"name\":\"m%d\",\"type\":\"METADATA_NODE\",\"data_deps\":[\"%d\"]}\n", i, i, i - 1
  printf "{\"id\":\"%d\",\"name\":\"c\",\"type\":\"COMP_NODE\",\"duration_micros\":\"1\",\"data_deps\":[\"%d\"]}\n", n, n - 1
}' > "$dir/t.jsonl"
"$ORRERY" trace from-json "$dir/t.jsonl" --out="$dir/t.0.et" 2>/dev/null
cp "$dir/t.0.et" "$dir/t.1.et"
echo '{"all-reduce-implementation": ["ring"]}' > "$dir/sys.json"
/usr/bin/time -f "%e %M" -o "$dir/time" "$ORRERY" run --workload-configuration="$dir/t" \
  --system-configuration="$dir/sys.json" --network-configuration="Ring(2,50GB/s,500ns)" --symmetry=off > "$dir/report" 2>/dev/null
read -r wall kb < "$dir/time"
echo "instant chain $n: $(grep '^finished' "$dir/report"), wall ${wall} s, peak $((kb / 1024)) MiB"
