#!/usr/bin/env bash
# Issue 11: what --timeline and --critical-path cost on a 1024-NPU run.
# The scale benchmark's 24-layer data-parallel loop (bench/scale.sh) on
# Switch(8, 400 GB/s)_Switch(128, 50 GB/s), every rank simulated (--symmetry=off)
# and with the representative rank (--symmetry=auto), each without a timeline,
# with a timeline of all 1024 ranks, with one of 8 ranks, and with --critical-path.
# Usage: bench/timeline_overhead.sh [REPEATS]   (default 1; the table shows the run with the
# least CPU time, user + system, which a machine shared with other jobs disturbs less than wall time)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/build/apps/orrery"
REPEATS="${1:-1}"
W=$(mktemp -d /tmp/orrery-timeline-XXXXXX)
trap 'rm -rf "$W"' EXIT
cat > "$W/sys.json" <<J
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
 "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring", "ring"],
 "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
 "all-to-all-implementation": ["ring", "ring"], "collective-optimization": "localBWAware", "local-mem-bw": 1600}
J
printf "topology: [ Switch, Switch ]\nnpus_count: [ 8, 128 ]\nbandwidth: [ 400, 50 ]\nlatency: [ 936.25, 1000 ]\n" > "$W/net.yml"
"$BIN" trace gen-dp --npus=1024 --layers=24 --allreduce-bytes=33554432 --out="$W/dp" 2>/dev/null
printf "%-9s %-15s %8s %8s %11s %9s %8s\n" symmetry output cpu_s wall_s maxrss_MiB file_MiB events
for sym in off auto; do
  for variant in none timeline-all timeline-8 critical-path; do
    extra=()
    case $variant in
      timeline-all) extra=(--timeline="$W/t.json") ;;
      timeline-8) extra=(--timeline="$W/t.json" --timeline-ranks=0-7) ;;
      critical-path) extra=(--critical-path) ;;
    esac
    best=""
    for ((i = 0; i < REPEATS; i++)); do
      rm -f "$W/t.json"
      /usr/bin/time -f "%e %M %U %S" -o "$W/time" "$BIN" run --workload-configuration="$W/dp" \
        --system-configuration="$W/sys.json" --network-configuration="$W/net.yml" --symmetry="$sym" \
        "${extra[@]}" > /dev/null
      read -r wall rss user sys < "$W/time"
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u + s}')
      if [ -z "$best" ] || awk -v a="$cpu" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$cpu; best_wall=$wall; best_rss=$rss; fi
    done
    size=-; events=-
    if [ -f "$W/t.json" ]; then
      size=$(awk -v b="$(stat -c %s "$W/t.json")" 'BEGIN{printf "%.1f", b/1048576}')
      events=$(grep -c '"ph":' "$W/t.json")
    fi
    printf "%-9s %-15s %8s %8s %11.1f %9s %8s\n" "$sym" "$variant" "$best" "$best_wall" "$(echo "$best_rss/1024" | bc -l)" "$size" "$events"
  done
done
