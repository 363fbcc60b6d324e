#!/usr/bin/env bash
# Issue-3 benchmark: the data-parallel loop (24 layers, 32 MiB all-reduce per
# layer) on a 2-D and a 3-D topology at several sizes, with the analytical
# backend (symmetric and full) and the congestion-aware backend (full).
# Usage: bench/topology_scale.sh [sizes...]   (default: 1024 4096 16384)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/build/apps/orrery"
SIZES=("$@")
[ $# -eq 0 ] && SIZES=(1024 4096 16384)
W=$(mktemp -d /tmp/orrery-topo-XXXXXX)
trap 'rm -rf "$W"' EXIT
sys() {  # $1: algorithms per dimension as a JSON list
  cat <<J
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
 "preferred-dataset-splits": 4, "collective-optimization": "localBWAware", "local-mem-bw": 1600,
 "all-reduce-implementation": $1, "all-gather-implementation": $1,
 "reduce-scatter-implementation": $1, "all-to-all-implementation": $1}
J
}
sys '["halvingDoubling", "halvingDoubling"]' > "$W/sys2.json"
sys '["ring", "halvingDoubling", "halvingDoubling"]' > "$W/sys3.json"
printf "%-4s %-6s %-17s %-9s %14s %10s %10s\n" topo npus backend mode finished_ns wall_s maxrss_MiB
for n in "${SIZES[@]}"; do
  "$BIN" trace gen-dp --npus="$n" --layers=24 --allreduce-bytes=33554432 --out="$W/dp$n"
  net2="Switch(16,400GB/s,936.25ns)_Switch($((n / 16)),50GB/s,1000ns)"
  net3="Ring(4,400GB/s,500ns)_Switch(16,200GB/s,936.25ns)_Switch($((n / 64)),50GB/s,1000ns)"
  for topo in 2d 3d; do
    net=$net2; sysf=$W/sys2.json
    [ $topo = 3d ] && net=$net3 && sysf=$W/sys3.json
    for run in "analytical auto" "analytical off" "congestion-aware off"; do
      set -- $run
      /usr/bin/time -v -o "$W/time" "$BIN" run --workload-configuration="$W/dp$n" --system-configuration="$sysf" \
        --network-configuration="$net" --network-backend="$1" --symmetry="$2" --report-format=json > "$W/out.json"
      fin=$(grep -m1 '"finished_ns"' "$W/out.json" | tr -dc 0-9)
      mode=$(grep -q '"symmetric": true' "$W/out.json" && echo symmetric || echo full)
      wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$W/time")
      rss=$(awk -F': ' '/Maximum resident/{printf "%.1f", $2/1024}' "$W/time")
      printf "%-4s %-6s %-17s %-9s %14s %10s %10s\n" "$topo" "$n" "$1" "$mode" "$fin" "$wall" "$rss"
    done
  done
done
