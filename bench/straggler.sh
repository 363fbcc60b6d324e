#!/usr/bin/env bash
# Issue 13's straggler benchmark: bench/scale.sh's 24-layer data-parallel loop
# (32 MiB all-reduce per layer) with one rank computing 20 % longer
# (`trace gen-dp --straggler`). Every rank's finished time then depends on its
# distance from the straggler, so the run cannot be symmetric; the report says
# whether rank classes or the full engine simulated it. At COMPARE NPUs it also
# runs --symmetry=off and compares the per-rank CSV byte for byte.
# Usage: bench/straggler.sh [sizes...]   (default: 4096 16384)
# Env: TOPOS="1d 2d" (1d: Switch(N) halving-doubling; 2d: Switch(8) x Switch(N/8),
# halving-doubling on both), COMPARE=4096, RANK=straggler rank (default N/2 + 3).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:-$ROOT/build/apps/orrery}"     # BIN=path: the binary that simulates
GEN_BIN="${GEN_BIN:-$BIN}"               # GEN_BIN=path: the one that writes the traces (has --straggler)
SIZES=("$@")
[ $# -eq 0 ] && SIZES=(4096 16384)
TOPOS=(${TOPOS:-1d 2d})
COMPARE="${COMPARE:-4096}"
W=$(mktemp -d /tmp/orrery-straggler-XXXXXX)
trap 'rm -rf "$W"' EXIT
hd='"halvingDoubling"'
cat > "$W/sys_1d.json" <<J
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
 "preferred-dataset-splits": 4, "all-reduce-implementation": [$hd],
 "all-gather-implementation": [$hd], "reduce-scatter-implementation": [$hd],
 "all-to-all-implementation": ["direct"], "collective-optimization": "localBWAware", "local-mem-bw": 1600}
J
cat > "$W/sys_2d.json" <<J
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
 "preferred-dataset-splits": 4, "all-reduce-implementation": [$hd, $hd],
 "all-gather-implementation": [$hd, $hd], "reduce-scatter-implementation": [$hd, $hd],
 "all-to-all-implementation": ["direct", "direct"], "collective-optimization": "localBWAware", "local-mem-bw": 1600}
J
printf "%-5s %-6s %-6s %-34s %14s %14s %8s %9s %12s\n" topo npus rank engine finished_ns messages cpu_s wall_s maxrss_MiB
for n in "${SIZES[@]}"; do
  rank="${RANK:-$((n / 2 + 3))}"
  "$GEN_BIN" trace gen-dp --npus="$n" --layers=24 --allreduce-bytes=33554432 --straggler="$rank" --out="$W/dp$n"
  printf "topology: [ Switch ]\nnpus_count: [ %d ]\nbandwidth: [ 50 ]\nlatency: [ 1000 ]\n" "$n" > "$W/net1d_$n.yml"
  printf "topology: [ Switch, Switch ]\nnpus_count: [ 8, %d ]\nbandwidth: [ 400, 50 ]\nlatency: [ 936.25, 1000 ]\n" \
    "$((n / 8))" > "$W/net2d_$n.yml"
  for topo in "${TOPOS[@]}"; do
    args=(--workload-configuration="$W/dp$n" --system-configuration="$W/sys_$topo.json"
          --network-configuration="$W/net${topo}_$n.yml")
    /usr/bin/time -v -o "$W/time" "$BIN" run "${args[@]}" > "$W/out.txt"
    "$BIN" run "${args[@]}" --report-format=csv > "$W/auto.csv"
    engine=$(grep -q "^rank classes:" "$W/out.txt" && grep -m1 "^rank classes:" "$W/out.txt" | cut -c1-34 || echo "full engine (every rank)")
    fin=$(grep -m1 "^finished:" "$W/out.txt" | awk '{print $2}')
    msgs=$(awk '$1 ~ /^dim[0-9]/ {s += $3} END {print s}' "$W/out.txt")
    cpu=$(awk -F': ' '/User time|System time/{s+=$2} END{printf "%.2f", s}' "$W/time")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$W/time")
    rss=$(awk -F': ' '/Maximum resident/{printf "%.1f", $2/1024}' "$W/time")
    printf "%-5s %-6s %-6s %-34s %14s %14s %8s %9s %12s\n" "$topo" "$n" "$rank" "$engine" "$fin" "$msgs" "$cpu" "$wall" "$rss"
    if [ "$n" = "$COMPARE" ]; then
      "$BIN" run "${args[@]}" --symmetry=off --report-format=csv > "$W/off.csv"
      if cmp -s "$W/auto.csv" "$W/off.csv"; then
        echo "  $topo $n: per-rank CSV identical to --symmetry=off ($(($(wc -l < "$W/off.csv") - 1)) ranks)"
      else
        echo "  $topo $n: per-rank CSV DIFFERS from --symmetry=off"; exit 1
      fi
    fi
  done
done
