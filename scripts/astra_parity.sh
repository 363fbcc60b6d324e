#!/usr/bin/env bash
# Runs ASTRA-sim on traces `orrery gen` writes and compares every rank's
# finished time with `orrery run` on the same files (docs/generator.md,
# "Checking against ASTRA-sim"). ASTRA-sim is not built here: give its
# analytical congestion-unaware binary, built from its sources
# (github.com/astra-sim/astra-sim, ./build/astra_analytical/build.sh), as
# ASTRA_SIM=/path/to/AstraSim_Analytical_Congestion_Unaware.
# Usage: ASTRA_SIM=... scripts/astra_parity.sh [ORRERY_BIN]
# Prints one line per case (PASS/FAIL, the case, each rank's finished ns) and
# exits 1 when any case differs.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-${ORRERY_BIN:-$ROOT/build/apps/orrery}}"
ASTRA="${ASTRA_SIM:-}"
if [ -z "$ASTRA" ] || [ ! -x "$ASTRA" ]; then
  echo "astra_parity: set ASTRA_SIM to ASTRA-sim's AstraSim_Analytical_Congestion_Unaware binary" >&2
  exit 2
fi
WORK="$(mktemp -d /tmp/orrery-parity-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
NET="Ring(2,300GB/s,500ns)_Ring(2,100GB/s,1us)_Switch(2,50GB/s,2us)"
"$BIN" topology generate "$NET" --out=net.yml >/dev/null || exit 1
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' > mem.json
# ASTRA-sim needs every implementation list; Orrery reads the same file.
cat > sys.json <<'JSON'
{
  "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4,
  "all-reduce-implementation": ["ring", "ring", "ring"], "all-gather-implementation": ["ring", "ring", "ring"],
  "reduce-scatter-implementation": ["ring", "ring", "ring"], "all-to-all-implementation": ["ring", "ring", "ring"],
  "collective-optimization": "localBWAware", "local-mem-bw": 1600, "boost-mode": 0,
  "roofline-enabled": 1, "peak-perf": 312
}
JSON
# One communication stream (ASTRA-sim has a single communication slot per NPU).
COMMON="--comm-streams=one --allow-over-capacity"
# Every group of these lies in one network dimension, or spans the whole network.
CASES=(
  "gpt-tp-pp-dp|--model=megatron-22b --tp=2 --pp=2 --dp=2 --microbatches=4"
  "gpt-zero1-sp|--model=gpt3-175b --tp=2 --pp=2 --dp=2 --microbatches=2 --sp --zero=1 --recompute=selective"
  "llama-zero3|--model=llama3-8b --tp=2 --pp=2 --dp=2 --microbatches=2 --zero=3"
  "moe-tp-ep-pp|--model=mixtral-8x7b --tp=2 --ep=2 --pp=2 --microbatches=2"
  "dlrm|--model=dlrm-mlperf --npus=8"
)
# Known gap (issue 32): a group spanning two of the three dimensions (DP 4 over
# dims 1 and 2, EP x DP) finishes 0.01-0.2 % apart. Listed, not counted, with GAPS=1.
if [ "${GAPS:-0}" = 1 ]; then
  CASES+=("gap:llama-dp4|--model=llama3-8b --tp=2 --dp=4 --microbatches=2 --zero=1"
          "gap:moe-tp-ep-dp|--model=mixtral-8x7b --tp=2 --ep=2 --dp=2 --microbatches=2")
fi
fail=0
for c in "${CASES[@]}"; do
  name="${c%%|*}"
  flags="${c#*|}"
  gap=0; [[ "$name" == gap:* ]] && gap=1
  name="${name#gap:}"
  if ! "$BIN" gen $flags $COMMON --out="$WORK/$name" >/dev/null 2>gen.err; then
    echo "FAIL $name: orrery gen: $(cat gen.err)"; fail=1; continue
  fi
  ours=$("$BIN" run --workload-configuration="$name" --system-configuration=sys.json --network-configuration=net.yml \
         --comm-group-configuration="$name.comm_groups.json" --symmetry=off --report-format=csv 2>run.err |
         awk -F, 'NR>1{print $2}' | paste -sd, -)
  "$ASTRA" --workload-configuration="$name" --system-configuration=sys.json --network-configuration=net.yml \
    --remote-memory-configuration=mem.json --comm-group-configuration="$name.comm_groups.json" >astra.log 2>&1
  theirs=$(grep -o 'sys\[[0-9]*\] finished, [0-9]* cycles' astra.log | sed 's/sys\[\([0-9]*\)\] finished, \([0-9]*\) cycles/\1 \2/' |
           sort -n | awk '{print $2}' | paste -sd, -)
  if [ -n "$ours" ] && [ "$ours" = "$theirs" ]; then
    echo "PASS $name: $ours"
  else
    echo "FAIL $name: orrery=${ours:-$(head -c 300 run.err)} astra-sim=${theirs:-$(tail -c 300 astra.log)}"
    [ "$gap" = 1 ] && echo "  (known gap: a group over two dimensions, issue 32)"
    [ "$gap" = 1 ] || fail=1
  fi
done
exit $fail
