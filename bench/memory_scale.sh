#!/usr/bin/env bash
# Issue-4 benchmark: the data-parallel loop with activation offload (each layer
# stores its activation to the remote pool after the forward and loads it back
# before the backward: two MEM accesses per layer per NPU) under a shared pool.
# Usage: bench/memory_scale.sh [npus] [sharing]   (default: 4096 fair)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/build/apps/orrery"
N="${1:-4096}"; SHARING="${2:-fair}"
W=$(mktemp -d /tmp/orrery-mem-XXXXXX)
trap 'rm -rf "$W"' EXIT
"$BIN" trace gen-dp --npus="$N" --layers=24 --allreduce-bytes=33554432 --activation-bytes=268435456 --offload --out="$W/dp"
printf "backend: pool\nlatency_ns: 1000\nbandwidth_gbps: 25600\nsharing: %s\nlocal_capacity_bytes: 80e9\nresident_bytes: 20e9\n" "$SHARING" > "$W/mem.yml"
printf '{"endpoint-delay": 10, "preferred-dataset-splits": 4, "local-mem-bw": 1600, "collective-optimization": "localBWAware", "all-reduce-implementation": ["halvingDoubling"]}' > "$W/sys.json"
/usr/bin/time -v -o "$W/time" "$BIN" run --workload-configuration="$W/dp" --system-configuration="$W/sys.json" \
  --network-configuration="Switch($N,50GB/s,1us)" --memory-configuration="$W/mem.yml" --report-format=json > "$W/out.json"
/usr/bin/python3 - "$W/out.json" "$W/time" "$N" "$SHARING" <<'PY'
import json, sys, re
j = json.load(open(sys.argv[1])); t = open(sys.argv[2]).read()
wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", t).group(1)
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
peak = max(n["peak_local_bytes"] for n in j["npus"])
print(f"npus={sys.argv[3]} pool sharing={sys.argv[4]} finished_ns={j['finished_ns']} memory_accesses={j['memory']['accesses']} "
      f"peak_local_bytes={peak} wall={wall} maxrss={rss:.1f}MiB")
PY
