#!/usr/bin/env bash
# Wide fan-out: one root COMP node and N independent COMP nodes (1 us each)
# that all become ready when it finishes, on every rank of a 2-NPU ring. The
# ready set holds N nodes at once; the executor issues them in id order on the
# one GPU slot, so the finished time is (N + 1) * 1000 ns.
# Usage: bench/wide_fanout.sh [N...]   (default 40000 100000); prints wall time and peak memory.
set -euo pipefail
cd "$(dirname "$0")/.."
ORRERY="${ORRERY:-build/apps/orrery}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(40000 100000)
for n1 in "${sizes[@]}"; do
  {
    echo '{"version":"0.0.4"}'
    echo '{"name":"root","type":"COMP_NODE","duration_micros":"1"}'
    for ((i = 1; i <= n1; i++)); do
      echo "{\"id\":\"$i\",\"name\":\"n$i\",\"type\":\"COMP_NODE\",\"duration_micros\":\"1\",\"data_deps\":[\"0\"]}"
    done
  } > "$dir/t.jsonl"
  "$ORRERY" trace from-json "$dir/t.jsonl" --out="$dir/t.0.et" 2>/dev/null
  cp "$dir/t.0.et" "$dir/t.1.et"
  echo '{"all-reduce-implementation": ["ring"]}' > "$dir/sys.json"
  /usr/bin/time -f "%e %M" -o "$dir/time" "$ORRERY" run --workload-configuration="$dir/t" \
    --system-configuration="$dir/sys.json" --network-configuration="Ring(2,50GB/s,500ns)" --symmetry=off \
    > "$dir/report" 2>/dev/null
  read -r wall kb < "$dir/time"
  echo "fan-out $n1: $(grep '^finished' "$dir/report"), wall ${wall} s, peak $((kb / 1024)) MiB"
done
