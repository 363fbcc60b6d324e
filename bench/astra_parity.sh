#!/usr/bin/env bash
# Orrery against ASTRA-sim itself on generated workloads whose communicator
# groups straddle network dimensions (issue 32; docs/parity.md, "Communicator
# groups"). ASTRA-sim is an oracle here, never a dependency: build its
# analytical backend from its sources yourself and name the congestion-unaware
# binary. Not part of CI.
#
#   bench/astra_parity.sh ASTRA_BIN [WORKLOAD...]
#   ORRERY=path/to/orrery bench/astra_parity.sh ...     (default build/apps/orrery)
#   KEEP=dir bench/astra_parity.sh ...                   (keep the files in dir)
#
# Each workload is written by `orrery gen --comm-streams=one` (ASTRA-sim runs
# one collective at a time per NPU) on a 2-D Ring x Switch network with the
# system JSON of `orrery gen --device=a100 --network=NET --system-out`; both
# simulators read the same files; the *_3d rows run on 8 NPUs in three
# dimensions with a hand-written system JSON (GPT, MoE, DLRM, ZeRO, and groups
# over two of the three dimensions). ASTRA_BIN: build ASTRA-sim's analytical
# backend from its sources (git clone --recursive
# https://github.com/astra-sim/astra-sim; ./build/astra_analytical/build.sh) and
# name build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware. One row per workload: ASTRA-sim's slowest
# rank, the largest |difference| over ranks under group-collective-model
# astra-sim (the file as written; 0 is parity) and under hierarchical (the
# same file with the other model: how far Orrery's own model is from ASTRA-sim).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
astra="${1:?usage: bench/astra_parity.sh ASTRA_BIN [WORKLOAD...]}"
shift
orrery="${ORRERY:-$root/build/apps/orrery}"
[[ -x "$astra" ]] || { echo "astra_parity: $astra is not an executable" >&2; exit 2; }
[[ -x "$orrery" ]] || { echo "astra_parity: $orrery not built (cmake --build build)" >&2; exit 2; }
if [[ -n "${KEEP:-}" ]]; then
  tmp="$KEEP"
  mkdir -p "$tmp"
else
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
fi
cd "$tmp"

# Dim 0 a fast ring inside a node, dim 1 a slower switch across nodes.
cat > net64.yml <<'EOF'
topology: [ Ring, Switch ]
npus_count: [ 8, 8 ]
bandwidth: [ 200.0, 25.0 ]
latency: [ 500.0, 2000.0 ]
EOF
sed 's/\[ 8, 8 \]/[ 8, 16 ]/' net64.yml > net128.yml
# Three dimensions of two NPUs each (every multi-dimension group shape on 8 NPUs), with a
# hand-written ASTRA-sim system JSON: LIFO, an endpoint delay, localBWAware, the roofline.
"$orrery" topology generate "Ring(2,300GB/s,500ns)_Ring(2,100GB/s,1us)_Switch(2,50GB/s,2us)" --out=net8.yml > /dev/null 2>&1
cat > sys8.json <<'EOF'
{
  "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4,
  "all-reduce-implementation": ["ring", "ring", "ring"], "all-gather-implementation": ["ring", "ring", "ring"],
  "reduce-scatter-implementation": ["ring", "ring", "ring"], "all-to-all-implementation": ["ring", "ring", "ring"],
  "collective-optimization": "localBWAware", "local-mem-bw": 1600, "boost-mode": 0,
  "roofline-enabled": 1, "peak-perf": 312
}
EOF
cat > dense.yml <<'EOF'
name: dense-small
layers: 4
hidden: 1024
heads: 16
vocab: 32000
seq_len: 1024
EOF
cat > moe.yml <<'EOF'
name: moe-small
layers: 4
hidden: 1024
heads: 16
vocab: 32000
seq_len: 1024
experts: 8
top_k: 2
expert_ffn: 2048
EOF
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' > none.json
echo '{"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 500, "remote-mem-bw": 50}' > per_npu.json
for n in 64 128; do
  "$orrery" gen --device=a100 --network=net$n.yml --system-out=sys$n.json > /dev/null
  # The same with direct all-to-all on both dimensions.
  # ASTRA-sim's GPUs give NCCL no SMs: drop Orrery's collective-sm-fraction, so both model the same.
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j.pop("collective-sm-fraction", None)
json.dump(j, open(sys.argv[1], "w"), indent=2)' sys$n.json
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["all-to-all-implementation"] = ["direct"] * 2
json.dump(j, open(sys.argv[2], "w"), indent=2)' sys$n.json sys${n}_direct.json
done

# name | NPUs | system JSON | remote memory | orrery gen flags (the model and strategy)
workloads() {
  cat <<'EOF'
dp|64|sys64|none|--model=dense.yml --tp=2 --dp=32 --microbatches=2 --microbatch-size=1
tp_sp|64|sys64|none|--model=dense.yml --tp=8 --dp=8 --sp --microbatches=2 --microbatch-size=1
tp_sp_placed|64|sys64|none|--model=dense.yml --tp=8 --dp=8 --sp --microbatches=2 --microbatch-size=1 --place=tp:0,dp:1
pp_1f1b|64|sys64|none|--model=dense.yml --tp=2 --pp=4 --dp=8 --microbatches=4 --microbatch-size=1 --schedule=1f1b
pp_gpipe|64|sys64|none|--model=dense.yml --tp=2 --pp=4 --dp=8 --microbatches=4 --microbatch-size=1 --schedule=gpipe
pp_1f1b_placed|64|sys64|none|--model=dense.yml --tp=2 --pp=4 --dp=8 --microbatches=4 --microbatch-size=1 --schedule=1f1b --place=tp:0,pp:0,dp:1
pp_gpipe_placed|64|sys64|none|--model=dense.yml --tp=2 --pp=4 --dp=8 --microbatches=4 --microbatch-size=1 --schedule=gpipe --place=tp:0,pp:0,dp:1
ep_ring|64|sys64|none|--model=moe.yml --tp=2 --ep=4 --dp=8 --microbatches=2 --microbatch-size=1
ep_direct|64|sys64_direct|none|--model=moe.yml --tp=2 --ep=4 --dp=8 --microbatches=2 --microbatch-size=1
zero3|64|sys64|none|--model=dense.yml --tp=2 --dp=32 --zero=3 --microbatches=2 --microbatch-size=1
cp_interleaved|64|sys64|none|--model=dense.yml --tp=2 --cp=2 --pp=2 --dp=8 --microbatches=4 --microbatch-size=1 --schedule=interleaved:2
cp_interleaved_placed|64|sys64|none|--model=dense.yml --tp=2 --cp=2 --pp=2 --dp=8 --microbatches=4 --microbatch-size=1 --schedule=interleaved:2 --place=tp:0,cp:0,pp:0,dp:1
offload|64|sys64|per_npu|--model=dense.yml --tp=2 --pp=2 --dp=16 --microbatches=2 --microbatch-size=1 --offload=activations
recompute_zero1|64|sys64|none|--model=dense.yml --tp=4 --dp=16 --zero=1 --recompute=full --microbatches=2 --microbatch-size=1
dlrm|64|sys64|none|--model=dlrm-mlperf --npus=64 --microbatch-size=64
hybrid128|128|sys128|none|--model=megatron-22b --tp=2 --pp=4 --dp=16 --sp --microbatches=4 --microbatch-size=1 --schedule=1f1b --zero=1
gpt_3d|8|sys8|none|--model=megatron-22b --tp=2 --pp=2 --dp=2 --microbatches=4
gpt_zero1_sp_3d|8|sys8|none|--model=gpt3-175b --tp=2 --pp=2 --dp=2 --microbatches=2 --sp --zero=1 --recompute=selective
llama_zero3_3d|8|sys8|none|--model=llama3-8b --tp=2 --pp=2 --dp=2 --microbatches=2 --zero=3
moe_tp_ep_pp_3d|8|sys8|none|--model=mixtral-8x7b --tp=2 --ep=2 --pp=2 --microbatches=2
dlrm_3d|8|sys8|none|--model=dlrm-mlperf --npus=8
llama_dp4_3d|8|sys8|none|--model=llama3-8b --tp=2 --dp=4 --microbatches=2 --zero=1
moe_tp_ep_dp_3d|8|sys8|none|--model=mixtral-8x7b --tp=2 --ep=2 --dp=2 --microbatches=2
EOF
}

# Per rank "rank finished_ns" from ASTRA-sim's log and from Orrery's CSV report.
astra_finished() { grep -o 'sys\[[0-9]*\] finished, [0-9]* cycles' "$1" | sed 's/sys\[\([0-9]*\)\] finished, \([0-9]*\) cycles/\1 \2/' | sort -k1,1; }
orrery_finished() { awk -F, 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1, $2 }' "$1" | sort -k1,1; }
# The largest |a - o| over ranks; "n/a" when a rank is missing on either side.
max_diff() {
  join -a1 -a2 -e x -o 0,1.2,2.2 "$1" "$2" |
    awk '$2 == "x" || $3 == "x" { bad = 1 } { d = $2 - $3; if (d < 0) d = -d; if (d > m) m = d }
         END { if (bad || NR == 0) print "n/a"; else printf "%.0f\n", m }'
}

printf '%-22s %5s %14s %14s %14s\n' workload npus astra_max_ns "diff(astra-sim)" "diff(hier.)"
workloads | while IFS='|' read -r name npus sys mem flags; do
  [[ $# -eq 0 || " $* " == *" $name "* ]] || continue
  mkdir -p "$name"
  # shellcheck disable=SC2086
  if ! "$orrery" gen $flags --network=net$npus.yml --comm-streams=one --allow-over-capacity --out="$name/t" \
    > "$name/gen.log" 2>&1; then
    printf '%-22s %5s %s\n' "$name" "$npus" "gen failed: $(tail -1 "$name/gen.log")"
    continue
  fi
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); j["group-collective-model"] = "hierarchical"
json.dump(j, open(sys.argv[2], "w"), indent=2)' "$sys.json" "$name/hier.json"
  timeout 1800 "$astra" --workload-configuration="$name/t" --comm-group-configuration="$name/t.comm_groups.json" \
    --system-configuration="$sys.json" --network-configuration="net$npus.yml" \
    --remote-memory-configuration="$mem.json" > "$name/astra.log" 2>&1 || true
  astra_finished "$name/astra.log" > "$name/astra.txt"
  for model in astra_model hier; do
    s="$sys.json"
    [[ $model == hier ]] && s="$name/hier.json"
    "$orrery" run --workload-configuration="$name/t" --comm-group-configuration="$name/t.comm_groups.json" \
      --system-configuration="$s" --network-configuration="net$npus.yml" --remote-memory-configuration="$mem.json" \
      --report-format=csv > "$name/$model.csv" 2> "$name/$model.err" || true
    orrery_finished "$name/$model.csv" > "$name/$model.txt"
  done
  amax=$(awk '$2 > m { m = $2 } END { printf "%.0f\n", m }' "$name/astra.txt")
  printf '%-22s %5s %14s %14s %14s\n' "$name" "$npus" "$amax" "$(max_diff "$name/astra.txt" "$name/astra_model.txt")" \
    "$(max_diff "$name/astra.txt" "$name/hier.txt")"
done
