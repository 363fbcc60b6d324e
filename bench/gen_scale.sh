#!/usr/bin/env bash
# Generator scale (issue 10): GPT-3 175B, SP, selective recomputation, ZeRO-1.
#  - classes in memory (--summary builds every stage's graph, writes nothing):
#    1,024 NPUs (tp 8, pp 8, dp 16, m 32) and 16,384 NPUs (tp 8, pp 16, dp 128, m 64);
#  - per-rank Chakra files on disk for 1,024 NPUs;
#  - the 1,024-NPU iteration simulated end to end with run --generate (rank classes, issue 13),
#    and with --symmetry=off (the full engine) unless --no-full;
#  - the 16,384-NPU iteration simulated with run --generate on a 2-D and a 3-D network.
# Prints wall seconds and peak RSS per step. Usage: bench/gen_scale.sh [--no-sim | --no-full]
set -euo pipefail
cd "$(dirname "$0")/.."
ORRERY="${ORRERY:-build/apps/orrery}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common="--model=gpt3-175b --sp --recompute=selective --zero=1"
g1k="$common --tp=8 --pp=8 --dp=16 --microbatches=32"
g16k="$common --tp=8 --pp=16 --dp=128 --microbatches=64"
measure() {  # label, command...
  local label="$1"; shift
  /usr/bin/time -f "%e %M" -o "$dir/time" "$@" > "$dir/out" 2> "$dir/err" || { cat "$dir/err"; exit 1; }
  read -r wall kb < "$dir/time"
  echo "$label: wall ${wall} s, peak $((kb / 1024)) MiB"
}
measure "gen 1,024 NPUs, classes in memory (--summary)" "$ORRERY" gen $g1k --summary
grep -E "^class 0|^FLOP" "$dir/out" | sed 's/^/  /'
measure "gen 16,384 NPUs, classes in memory (--summary)" "$ORRERY" gen $g16k --summary
grep -E "^class 0|^FLOP" "$dir/out" | sed 's/^/  /'
measure "gen 1,024 NPUs, per-rank files (--out)" "$ORRERY" gen $g1k --out="$dir/gpt3"
echo "  files: $(ls "$dir"/gpt3.*.et | wc -l) traces, $(du -sh "$dir" | cut -f1) on disk"
rm -f "$dir"/gpt3.*
[ "${1:-}" = --no-sim ] && exit 0
echo '{"roofline-enabled": 1, "peak-perf": 156, "local-mem-bw": 2039, "preferred-dataset-splits": 4}' > "$dir/sys.json"
measure "run --generate 1,024 NPUs (Ring(8) x Switch(128))" "$ORRERY" run --generate="$g1k" \
  --system-configuration="$dir/sys.json" --network-configuration="Ring(8,300GB/s,500ns)_Switch(128,50GB/s,2us)"
grep -E "^rank classes|^finished|^bottleneck|^events" "$dir/out" | sed 's/^/  /'
if [ "${1:-}" != --no-full ]; then
  measure "run --generate 1,024 NPUs, --symmetry=off (full engine)" "$ORRERY" run --generate="$g1k" --symmetry=off \
    --system-configuration="$dir/sys.json" --network-configuration="Ring(8,300GB/s,500ns)_Switch(128,50GB/s,2us)"
  grep -E "^finished|^events" "$dir/out" | sed 's/^/  /'
fi
measure "run --generate 16,384 NPUs (Ring(8) x Switch(2048))" "$ORRERY" run --generate="$g16k" \
  --system-configuration="$dir/sys.json" --network-configuration="Ring(8,300GB/s,500ns)_Switch(2048,50GB/s,2us)"
grep -E "^rank classes|^finished|^events" "$dir/out" | sed 's/^/  /'
measure "run --generate 16,384 NPUs (Ring(8) x Switch(128) x Switch(16))" "$ORRERY" run --generate="$g16k" \
  --system-configuration="$dir/sys.json" \
  --network-configuration="Ring(8,300GB/s,500ns)_Switch(128,50GB/s,2us)_Switch(16,25GB/s,5us)"
grep -E "^rank classes|^finished|^events" "$dir/out" | sed 's/^/  /'
