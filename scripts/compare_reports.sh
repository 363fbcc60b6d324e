#!/usr/bin/env bash
# compare_reports.sh OLD_BIN NEW_BIN [WORKDIR]
#
# Proves that two orrery binaries behave byte for byte alike (e.g. before and after a refactor):
# it runs one fixed list of commands with each binary, each binary in its own folder
# (WORKDIR/old, WORKDIR/new; WORKDIR defaults to a fresh mktemp folder), then `cmp`s every
# output: the stdout, the stderr and the exit code of every command (NAME.stdout, NAME.stderr,
# NAME.rc) and every file a command writes (timelines, CSVs, .et traces, comm groups, system
# JSON, sweep folders, plot scripts and data, ...). It prints `same NAME` or `DIFF NAME` per
# compared item (NAME: the path under WORKDIR/{old,new}/out), then `N same, M differ`; exit 0
# only when nothing differs and N > 0. Details of each difference and a per-part count go to
# stderr. A WORKDIR made by mktemp is removed when nothing differs, else kept (and named).
#
# Both binaries see identical paths: every command runs with the side's folder as working
# directory and names only relative paths (in/..., out/..., and the conformance folder's
# entries, linked into the side's folder under their own names), so no report or message can
# hold WORKDIR. Inputs that runs read (traces, system JSON, YAML) are written once into
# WORKDIR/in -- by this script, or by OLD_BIN for generated traces -- and linked as `in` into
# both sides, so a difference in a generator shows up once (in parts 5 and 6, where each
# binary generates its own copy) rather than in every run that reads its output.
#
# What it covers (folders under out/, one per part):
#   p1_conformance  every row of ../shared/conformance/astra-sim/expected.tsv (as in
#                   scripts/conformance.sh): JSON with --link-stats under --symmetry=auto and
#                   =off, text with --link-stats, CSV. Skipped, saying so, when the folder is
#                   absent (ORRERY_SHARED_DIR overrides ../shared, found relative to this script).
#   p2_algorithms   16 NPUs, Ring(4)_Switch(4): a data-parallel loop (trace gen-dp) and one
#                   ALL_REDUCE / ALL_GATHER / REDUCE_SCATTER / ALL_TO_ALL (trace gen-coll) under
#                   every built-in algorithm name of core/algorithm_kind.h (plus direct<N>,
#                   oneDirect<N>, inSwitch on one and on both dimensions, mixed per-dimension
#                   lists), both analytical backends, JSON + --link-stats, --symmetry=off; the
#                   rooted collectives and barrier; system JSON options (scheduling, themis,
#                   SmallestFirst, chunks, endpoint delay with --injection-scale, --iterations);
#                   other topologies (RingUni, Mesh, FullyConnected, Torus2D, Mesh2D, links per
#                   NPU, 3 dimensions, ASTRA-sim and Orrery network YAML) under auto and off.
#   p3_examples     every `run --example=NAME` the CLI lists: text, JSON, CSV, --symmetry=off,
#                   congestion-aware with --link-stats.
#   p4_observers    --critical-path (text, JSON, JSON with --symmetry=off), --timeline (all
#                   ranks; --timeline-ranks; with --timeline-window), --collectives/--links CSVs
#                   with --report-format=csv, on conformance cases, both examples, a generated
#                   pipeline and a straggler loop (rank classes).
#   p5_generated    orrery gen: --list-models/--list-devices, --system-out (a100, h100), and
#                   GPT-3 (1F1B, GPipe, interleaved, TP/PP/DP, SP, ZeRO 1-3, recompute),
#                   Megatron-22B and Mixtral with --offload, Llama 3 with CP, --order, --network
#                   --place and --global-batch, Mixtral with EP/CP, DLRM (table, row), model
#                   YAMLs: --summary stdout and every .et / comm_groups.json written; each run
#                   from the files (JSON) and with run --generate (text, JSON); the README's
#                   memory example (over capacity, --allow-oversubscription, offload to a pool).
#   p6_trace        trace gen-dp (plain, straggler, activations + offload, stale-rank removal),
#                   gen-coll (all ten collective types), inspect and to-json (generated,
#                   conformance and ../shared/chakra-real traces), from-json round trip.
#   p7_explore      two sweeps (a generated model over bandwidth x algorithm x gen.zero; a trace
#                   over backend x algorithm with a zip and a filter, --critical-path, --jobs=1
#                   and 2, shards + merge, resume when done and after a cut), --dry-run; plot
#                   (heatmap, lines, pareto, stacked: .gp, .dat and the image); search (two
#                   models); report compare in text, json and csv.
#   p8_bad_input    unknown flags and commands, missing files, bad network YAML / notation /
#                   system JSON / sweep spec / model, unsupported algorithm for a collective,
#                   a deadlock, memory over capacity, a report that is not one: exit code and
#                   stderr.
#   p9_misc         --version, --help of every command, topology generate/describe, plugins
#                   list, --network-backend=help, the remote backend through `orrery peer` on a
#                   Unix socket, the ns-3 backend when the build has it.
#
# Not deterministic, and how it is handled: `orrery search` prints wall-clock timings on
# stderr ("... in 0.005 s (19905870 per second ...)"); its stderr is compared after replacing
# those numbers by <t>/<rate> (the raw text stays in WORKDIR/SIDE/raw/). Nothing else needed an
# exception: sweep outputs (CSV, JSON Lines) hold no times or host names, and `--progress` (whose
# line shows events/s) is not used.
#
# Environment: ORRERY_SHARED_DIR (the shared folder), CMD_TIMEOUT (seconds per command,
# default 300), SERIAL=1 (run the two binaries one after the other instead of side by side).
set -uo pipefail
export LC_ALL=C
unset ORRERY_PLUGINS  # plugins given by the environment would change what the binaries register

usage() {
  echo "usage: $0 OLD_BIN NEW_BIN [WORKDIR]" >&2
  exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
OLD_BIN="$(readlink -f "$1")"
NEW_BIN="$(readlink -f "$2")"
for b in "$OLD_BIN" "$NEW_BIN"; do
  [ -x "$b" ] && [ -f "$b" ] || { echo "$0: not an executable: $b" >&2; exit 2; }
done
SCRIPT_DIR="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/.." && pwd)"
SHARED="${ORRERY_SHARED_DIR:-$SCRIPT_DIR/../../shared}"
SHARED="$(cd "$SHARED" 2>/dev/null && pwd || echo "$SHARED")"  # absolute: the sides link into it
CONF="$SHARED/conformance/astra-sim"
CHAKRA="$SHARED/chakra-real"
CMD_TIMEOUT="${CMD_TIMEOUT:-300}"
if [ $# -eq 3 ]; then
  WORKDIR="$3"
  mkdir -p "$WORKDIR" || exit 2
  KEEP_WORKDIR=1
else
  WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/orrery-compare.XXXXXX")" || exit 2
  KEEP_WORKDIR=0
fi
WORKDIR="$(cd "$WORKDIR" && pwd)"
# Only this script's own subfolders are removed from an existing WORKDIR.
rm -rf "$WORKDIR/in" "$WORKDIR/prep" "$WORKDIR/old" "$WORKDIR/new"
IN="$WORKDIR/in"
START_SECONDS=$SECONDS
log() { echo "compare_reports: $*" >&2; }

HAVE_CONF=0
if [ -f "$CONF/expected.tsv" ]; then
  HAVE_CONF=1
else
  log "no conformance folder at $CONF: skipping part 1 and the conformance cases of parts 4 and 6"
fi
HAVE_CHAKRA=0
[ -d "$CHAKRA" ] && HAVE_CHAKRA=1
[ $HAVE_CHAKRA = 1 ] || log "no $CHAKRA: skipping the real Chakra traces of parts 6 and 8"

# ---------------------------------------------------------------------------------------------
# Fixed settings shared by both sides.

# The built-in algorithm names (core/algorithm_kind.h, kBuiltinAlgorithms), plus the direct<N>
# spellings the system JSON reader accepts. The check below warns if the header lists more.
ALGORITHMS=(ring direct halvingDoubling doubleBinaryTree oneRing oneDirect oneHalvingDoubling inSwitch direct2 oneDirect2)
if [ -f "$REPO/core/algorithm_kind.h" ]; then
  for a in $(grep -o '{"[A-Za-z0-9]*", AlgoKind' "$REPO/core/algorithm_kind.h" | sed 's/{"\([^"]*\)".*/\1/'); do
    [[ " ${ALGORITHMS[*]} " == *" $a "* ]] || log "warning: core/algorithm_kind.h lists '$a', which this script does not cover"
  done
fi
NET16="Ring(4,100GB/s,500ns)_Switch(4,50GB/s,1us)"
# Generated-model networks, by NPU count.
GNET8="Ring(8,300GB/s,500ns)"
GNET16="Ring(4,300GB/s,500ns)_Switch(4,50GB/s,2us)"
GNET16B="Ring(8,300GB/s,500ns)_Switch(2,50GB/s,2us)"
GNET32="Ring(8,300GB/s,500ns)_Switch(4,50GB/s,2us)"
GNET64="Ring(8,300GB/s,500ns)_Switch(8,50GB/s,2us)"

# Generated workloads (part 5): name | network | memory (pool or -) | orrery gen flags (also
# given to run --generate) | flags for orrery gen only (run --generate takes the run's network).
GEN_CASES=(
  "gpt3_1f1b|$GNET16|-|--model=gpt3-175b --tp=2 --pp=4 --dp=2 --microbatches=8 --schedule=1f1b --hbm-gb=2000"
  "gpt3_gpipe|$GNET16|-|--model=gpt3-175b --tp=2 --pp=4 --dp=2 --microbatches=8 --schedule=gpipe --hbm-gb=2000"
  "gpt3_interleaved|$GNET16|-|--model=gpt3-175b --tp=2 --pp=4 --dp=2 --microbatches=8 --schedule=interleaved:2 --sp --hbm-gb=2000"
  "gpt3_tp8_pp4_zero1|$GNET64|-|--model=gpt3-175b --tp=8 --pp=4 --dp=2 --microbatches=8 --sp --recompute=selective --zero=1"
  "gpt3_full_zero2|$GNET32|-|--model=gpt3-175b --tp=8 --pp=2 --dp=2 --microbatches=4 --recompute=full --zero=2 --hbm-gb=160"
  "gpt3_full_zero3|$GNET32|-|--model=gpt3-175b --tp=4 --pp=4 --dp=2 --microbatches=4 --recompute=full --zero=3 --bucket-mb=50 --hbm-gb=160"
  "megatron22b_offload|$GNET16|pool|--model=megatron-22b --tp=4 --dp=4 --microbatches=2 --recompute=selective --offload=activations,optimizer"
  "llama8b_batch|$GNET16|-|--model=llama3-8b --tp=4 --dp=4 --global-batch=16 --microbatch-size=1 --zero=1 --recompute=full"
  "llama8b_cp_pp|$GNET16|-|--model=llama3-8b --tp=2 --cp=2 --dp=2 --pp=2 --microbatches=4 --recompute=full"
  "llama8b_order|$GNET16|-|--model=llama3-8b --tp=2 --cp=2 --dp=2 --pp=2 --microbatches=4 --order=dp-tp-cp-ep-pp --recompute=full --zero=2"
  "llama8b_interleaved_cp|$GNET16|-|--model=llama3-8b --tp=2 --cp=2 --dp=2 --pp=2 --microbatches=4 --schedule=interleaved:2 --recompute=full"
  "llama8b_place|$GNET16B|-|--model=llama3-8b --tp=8 --dp=2 --place=tp:0,dp:1 --microbatches=2 --recompute=full|--network=$GNET16B"
  "llama70b_h100|$GNET16|-|--model=llama3-70b --device=h100 --tp=8 --pp=2 --microbatches=4 --recompute=full --zero=1 --allow-over-capacity"
  "mixtral_ep_cp|$GNET32|-|--model=mixtral-8x7b --tp=2 --cp=2 --ep=4 --pp=2 --microbatches=4 --sp --recompute=selective --zero=1"
  "mixtral_offload|$GNET16|pool|--model=mixtral-8x7b --tp=2 --ep=4 --dp=2 --microbatches=2 --recompute=full --zero=3 --offload=activations"
  "dlrm_table|$GNET16|-|--model=dlrm-mlperf --npus=16 --global-batch=16384 --embedding-sharding=table"
  "dlrm_row|$GNET16|-|--model=dlrm-mlperf --npus=16 --global-batch=16384 --embedding-sharding=row"
  "yaml_moe|$GNET16|-|--model=in/models/tiny_moe.yml --tp=2 --ep=2 --dp=2 --pp=2 --microbatches=4"
  "yaml_dlrm|$GNET8|-|--model=in/models/small_dlrm.yml --npus=8 --microbatch-size=512 --embedding-sharding=row"
)

# Example names, as `orrery run --help` lists them ("... input files: default, data-parallel (...").
EXAMPLES=($("$OLD_BIN" run --help 2>/dev/null | sed -n 's/.*instead of input files: \([^(]*\)(.*/\1/p' | tr -d ','))
[ ${#EXAMPLES[@]} -gt 0 ] || EXAMPLES=(default data-parallel)
HAVE_NS3=0
"$OLD_BIN" run --network-backend=help 2>/dev/null | grep -q '^ *ns3 ' && HAVE_NS3=1
HAVE_GNUPLOT=0
command -v gnuplot >/dev/null 2>&1 && HAVE_GNUPLOT=1
PLOT_RC=$([ $HAVE_GNUPLOT = 1 ] && echo 0 || echo 1)  # without gnuplot, plot exits 1 after writing .gp/.dat

# ---------------------------------------------------------------------------------------------
# Inputs: written once into WORKDIR/in, seen as in/ by both sides.

system_json() {  # system_json FILE DIMS AR AG RS A2A [EXTRA]: each list given as JSON array text
  local f=$1 extra=${7:-}
  printf '{"preferred-dataset-splits": 4, "local-mem-bw": 1600, "in-switch-reduction-bw": 100,%s "all-reduce-implementation": %s, "all-gather-implementation": %s, "reduce-scatter-implementation": %s, "all-to-all-implementation": %s}\n' \
    "${extra:+ $extra,}" "$3" "$4" "$5" "$6" > "$f"
}

prepare_inputs() {
  mkdir -p "$IN"/{sys,net,mem,models,sweep,bad,tr,gen,jsonl} || return 1
  cd "$IN" || return 1
  # Part 2: one system JSON per algorithm, the same list for every collective (2 dimensions).
  local a l
  for a in "${ALGORITHMS[@]}"; do
    l="[\"$a\", \"$a\"]"
    [ "$a" = inSwitch ] && l='["ring", "inSwitch"]'  # in-switch needs a Switch dimension: dim1
    system_json "sys/algo_$a.json" 2 "$l" "$l" "$l" "$l"
  done
  l='["inSwitch", "inSwitch"]'; system_json sys/algo_inSwitch_both.json 2 "$l" "$l" "$l" '["ring", "ring"]'
  l='["ring", "direct"]'; system_json sys/algo_mixed_ring_direct.json 2 "$l" "$l" "$l" "$l"
  l='["halvingDoubling", "ring"]'; system_json sys/algo_mixed_hd_ring.json 2 "$l" "$l" "$l" '["direct", "ring"]'
  l='["doubleBinaryTree", "direct"]'; system_json sys/algo_mixed_dbt_direct.json 2 "$l" '["ring", "ring"]' '["ring", "ring"]' '["ring", "ring"]'
  local r1='["ring"]' r2='["ring", "ring"]' r3='["ring", "ring", "ring"]'
  system_json sys/ring1.json 1 "$r1" "$r1" "$r1" "$r1"
  system_json sys/ring2.json 2 "$r2" "$r2" "$r2" "$r2"
  system_json sys/ring3.json 3 "$r3" "$r3" "$r3" "$r3"
  system_json sys/opt_fifo.json 2 "$r2" "$r2" "$r2" "$r2" '"scheduling-policy": "FIFO"'
  system_json sys/opt_lifo.json 2 "$r2" "$r2" "$r2" "$r2" '"scheduling-policy": "LIFO"'
  system_json sys/opt_baseline.json 2 "$r2" "$r2" "$r2" "$r2" '"collective-optimization": "baseline"'
  system_json sys/opt_themis.json 2 "$r2" "$r2" "$r2" "$r2" '"inter-dimension-scheduling": "themis"'
  system_json sys/opt_smallest_first.json 2 "$r2" "$r2" "$r2" "$r2" '"intra-dimension-scheduling": "SmallestFirst"'
  system_json sys/opt_chunks.json 2 "$r2" "$r2" "$r2" "$r2" '"active-chunks-per-dimension": 2'
  system_json sys/opt_endpoint.json 2 "$r2" "$r2" "$r2" "$r2" '"endpoint-delay": 25'
  system_json sys/opt_roofline.json 2 "$r2" "$r2" "$r2" "$r2" '"roofline-enabled": 1, "peak-perf": 100'
  # What `orrery gen --device=a100 --efficiency=0.5 --system-out` writes (fixed here so that runs
  # do not depend on the generator under test).
  printf '{\n  "roofline-enabled": 1,\n  "peak-perf": 156.0,\n  "local-mem-bw": 2039.0,\n  "preferred-dataset-splits": 4\n}\n' > sys/roofline.json
  echo '{"preferred-dataset-splits": 4, "local-mem-bw": 1600, "all-reduce-implementation": ["ring"]}' > sys/mem_example.json
  echo '{"preferred-dataset-splits": 4, "all-reduce-implementation": ["ring", "ring"], "local-mem-bw": 1600}' > sys/dp64.json
  # Networks as files: ASTRA-sim YAML and Orrery YAML.
  printf 'topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ 100, 50 ]\nlatency: [ 500, 1000 ]\n' > net/astra_ring_switch.yml
  printf 'dims:\n  - {block: Torus2D, npus: 4, bandwidth_gbps: 100, latency_ns: 500}\n' > net/orrery_bad_block.yml
  printf 'dims:\n  - {block: RingUni, npus: 4, bandwidth_gbps: 100, latency_ns: 500, links_per_npu: 2}\n  - {block: Mesh, npus: 4, bandwidth_gbps: 50, latency_ns: 1000}\n' > net/orrery_ringuni_mesh.yml
  # Memory.
  printf 'backend: pool\nlatency_ns: 1000\nbandwidth_gbps: 1600\nsharing: fair\n' > mem/pool.yml
  printf 'backend: astra-sim\nlocal_capacity_bytes: 10e9\nresident_bytes: 2e9\n' > mem/hbm.yml
  printf 'backend: pool\nlatency_ns: 1000\nbandwidth_gbps: 1600\nsharing: fair\nlocal_capacity_bytes: 10e9\nresident_bytes: 2e9\n' > mem/pool_capacity.yml
  # Model YAMLs (docs/generator.md, "Model description").
  printf 'name: tiny-moe\nlayers: 4\nhidden: 1024\nheads: 16\nkv_heads: 4\nvocab: 32000\nseq_len: 2048\ngated_ffn: true\nrms_norm: true\ntied_embeddings: false\nexperts: 4\ntop_k: 2\nmoe_layer_freq: 2\nexpert_ffn: 2048\n' > models/tiny_moe.yml
  printf 'kind: dlrm\nname: small-dlrm\nembedding_dim: 64\ndense_features: 16\ntables: {count: 8, rows: 1000000}\npooling: 4\nbottom_mlp: [128, 64]\ntop_mlp: [256, 1]\ninteraction: dot\n' > models/small_dlrm.yml
  # Sweep specs (paths in a spec are relative to the spec).
  cat > sweep/gen.yml <<'EOF'
base:
  network: "Ring(8,300GB/s,500ns)_Switch(2,50GB/s,2us)"
  system: ../sys/roofline.json
  generate: "--model=llama3-8b --device=a100 --tp=8 --dp=2 --microbatches=2 --recompute=full"
axes:
  network.dim0.bandwidth_gbps: [150, 300]
  system.all-reduce-implementation: [ring, direct]
  gen.zero: [0, 1]
EOF
  cat > sweep/trace.yml <<'EOF'
base:
  network: "Ring(4,100GB/s,500ns)_Switch(4,50GB/s,1us)"
  system: ../sys/ring2.json
  workload: ../tr/dp16
  symmetry: "off"
axes:
  run.backend: [analytical, congestion-aware]
  system.all-reduce-implementation: [ring, direct, halvingDoubling, doubleBinaryTree]
zip:
  network.dim0.bandwidth_gbps: [50, 100, 200]
  network.dim1.latency_ns: [500, 1000, 2000]
filters: ["dim0.bandwidth_gbps >= 100 or all-reduce-implementation == 'ring'"]
EOF
  # Bad inputs (part 8).
  printf 'topology: [ Rnig ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n' > bad/network.yml
  printf 'topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50, 50 ]\nlatency: [ 500 ]\n' > bad/network_lengths.yml
  echo '{"preferred-dataset-splits": 1000000, "all-reduce-implementation": ["ring"]}' > bad/system_range.json
  echo '{"all-reduce-implementaton": ["ring"]}' > bad/system_key.json
  echo '{"all-reduce-implementation": ["ringg"]}' > bad/system_algo.json
  printf 'backend: pool\nlatency_ns: 1000\nbandwidth_gbps: 1.6TB/s\n' > bad/memory.yml
  printf 'base:\n  network: "Ring(8,50GB/s,500ns)"\n  system: ../sys/mem_example.json\n  workload: ../tr/mem_plain\naxes:\n  network.dim0.bandwith_gbps: [1, 2]\n' > bad/sweep_path.yml
  printf 'base:\n  network: "Ring(8,50GB/s,500ns)"\n  system: ../sys/mem_example.json\n  workload: ../tr/mem_plain\naxes:\n  network.dim0.bandwidth_gbps: [1, 2]\nfilters: ["bandwith_gbps > 1"]\n' > bad/sweep_filter_name.yml
  printf 'base:\n  network: "Ring(8,50GB/s,500ns)"\n  system: ../sys/mem_example.json\n  workload: ../tr/mem_plain\naxes:\n  network.dim0.bandwidth_gbps: [1, 2]\nfilters: ["bandwidth_gbps == \x27fast\x27"]\n' > bad/sweep_filter_type.yml
  echo '{"displayTimeUnit":"ns","traceEvents":[]}' > bad/not_a_report.json
  echo 'not json' > bad/garbage.json
  printf 'a,b\n1,2\n' > bad/plot.csv
  # A rank that waits for a message nobody sends (made into .et by trace from-json below).
  printf '%s\n' '{"version":"0.0.4"}' \
    '{"id":"5","name":"recv","type":"COMM_RECV_NODE","attr":[{"name":"is_cpu_op","bool_val":false},{"name":"comm_size","int64_val":"1024"},{"name":"comm_src","int32_val":1},{"name":"comm_tag","int32_val":9}]}' \
    > jsonl/deadlock.0.jsonl
  printf '%s\n' '{"version":"0.0.4"}' \
    '{"id":"1","name":"work","type":"COMP_NODE","duration_micros":"5","attr":[{"name":"is_cpu_op","bool_val":false}]}' \
    > jsonl/deadlock.1.jsonl
  echo '{}' > sys/empty.json

  # Traces and generated workloads, made by OLD_BIN (parts 5 and 6 compare what each binary makes).
  local B="$OLD_BIN" rc=0 c
  "$B" trace gen-dp --npus=16 --layers=4 --allreduce-bytes=1048576 --fwd-us=50 --bwd-us=100 --out=tr/dp16 || rc=1
  "$B" trace gen-dp --npus=16 --layers=4 --allreduce-bytes=4194304 --fwd-us=50 --bwd-us=100 --straggler=5 --straggler-percent=40 --out=tr/straggler16 || rc=1
  "$B" trace gen-dp --npus=64 --layers=24 --allreduce-bytes=33554432 --out=tr/dp64 || rc=1
  "$B" trace gen-dp --npus=8 --layers=8 --fwd-us=5000 --bwd-us=10000 --allreduce-bytes=67108864 --activation-bytes=1073741824 --out=tr/mem_plain || rc=1
  "$B" trace gen-dp --npus=8 --layers=8 --fwd-us=5000 --bwd-us=10000 --allreduce-bytes=67108864 --activation-bytes=1073741824 --offload --out=tr/mem_offload || rc=1
  for c in ALL_REDUCE REDUCE ALL_GATHER GATHER SCATTER BROADCAST ALL_TO_ALL REDUCE_SCATTER REDUCE_SCATTER_BLOCK BARRIER; do
    "$B" trace gen-coll --npus=16 --collective=$c --bytes=1048576 --out=tr/coll_$c || rc=1
  done
  "$B" trace from-json jsonl/deadlock.0.jsonl --out=tr/deadlock.0.et || rc=1
  "$B" trace from-json jsonl/deadlock.1.jsonl --out=tr/deadlock.1.et || rc=1
  # gen runs where in/ names this folder, as on the sides (model YAMLs are given as in/models/...).
  mkdir -p "$WORKDIR/prep" && cd "$WORKDIR/prep" && ln -sfn "$IN" in || return 1
  local entry name net mem flags genonly args
  for entry in "${GEN_CASES[@]}"; do
    IFS='|' read -r name net mem flags genonly <<< "$entry"
    read -r -a args <<< "$flags $genonly"
    mkdir -p "in/gen/$name"
    "$B" gen "${args[@]}" --out="in/gen/$name/w" > /dev/null || rc=1
  done
  return $rc
}

# ---------------------------------------------------------------------------------------------
# Running one side. Globals set by run_side: BIN (the binary), ROOT (the side's folder, also the
# working directory of every command).

# cmd NAME EXPECTED_RC [--times] -- ARGS...
#   runs "$BIN" ARGS; stdout, stderr and exit code go to out/NAME.{stdout,stderr,rc}.
#   --times: stderr holds wall-clock timings; compare it with the numbers replaced.
cmd() {
  local name=$1 expect=$2 times=0
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
      --times) times=1 ;;
      *) echo "cmd $name: unknown option $1" >> "$ROOT/unexpected.txt"; return ;;
    esac
    shift
  done
  shift  # --
  local base="out/$name"
  if [ -e "$base.rc" ]; then
    echo "$name: item name used twice" >> "$ROOT/unexpected.txt"
    return
  fi
  mkdir -p "$(dirname "$base")" "$(dirname "raw/$name")"
  local t0=$EPOCHREALTIME
  timeout --kill-after=10 "$CMD_TIMEOUT" "$BIN" "$@" > "$base.stdout" 2> "raw/$name.stderr"
  local rc=$?
  # commands.txt: seconds taken, the item, the command (not compared; for reading).
  { printf '%s %s:' "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')" "$name"
    printf ' %q' orrery "$@"; echo; } >> "$ROOT/commands.txt"
  echo "$rc" > "$base.rc"
  if [ $times = 1 ]; then
    sed -E 's/[0-9]+(\.[0-9]+)? s\b/<t> s/g; s/[0-9]+(\.[0-9]+)? per (second|minute)/<rate> per \2/g' "raw/$name.stderr" > "$base.stderr"
  else
    cp "raw/$name.stderr" "$base.stderr"
  fi
  [ "$rc" = "$expect" ] || echo "$name: exit $rc, expected $expect: $(head -c 300 "raw/$name.stderr" | tr '\n' ' ')" >> "$ROOT/unexpected.txt"
}

# The flags of a conformance row (scripts/conformance.sh), into CONF_ROW; returns 1 if absent.
conf_row() {
  [ $HAVE_CONF = 1 ] || return 1
  local line
  line=$(awk -F'\t' -v id="$1" '$1 == id' expected.tsv)
  [ -n "$line" ] || return 1
  local id backend workload network system memory
  IFS=$'\t' read -r id backend workload network system memory _ <<< "$line"
  CONF_ROW=(--workload-configuration="$workload" --system-configuration="$system"
            --network-configuration="$network" --remote-memory-configuration="$memory"
            --network-backend="$backend")
}

part1_conformance() {
  [ $HAVE_CONF = 1 ] || return 0
  local id backend workload network system memory rest
  while IFS=$'\t' read -r id backend workload network system memory rest; do
    [ "$id" = id ] && continue
    local a=(run --workload-configuration="$workload" --system-configuration="$system"
             --network-configuration="$network" --remote-memory-configuration="$memory"
             --network-backend="$backend")
    cmd "p1_conformance/$id/json_auto" 0 -- "${a[@]}" --report-format=json --link-stats --symmetry=auto
    cmd "p1_conformance/$id/json_off" 0 -- "${a[@]}" --report-format=json --link-stats --symmetry=off
    cmd "p1_conformance/$id/text" 0 -- "${a[@]}" --link-stats
    cmd "p1_conformance/$id/csv" 0 -- "${a[@]}" --report-format=csv
  done < expected.tsv
}

# Which (algorithm, collective) pairs exist (the others are refused when issued; a few of those
# are part 8's cases).
supported() {  # supported ALGO WORKLOAD
  case "$1:$2" in
    halvingDoubling:ALL_TO_ALL | oneHalvingDoubling:ALL_TO_ALL | inSwitch:ALL_TO_ALL | inSwitch_both:ALL_TO_ALL) return 1 ;;
    doubleBinaryTree:ALL_GATHER | doubleBinaryTree:REDUCE_SCATTER | doubleBinaryTree:ALL_TO_ALL) return 1 ;;
    mixed_dbt_direct:ALL_GATHER | mixed_dbt_direct:REDUCE_SCATTER | mixed_dbt_direct:ALL_TO_ALL) return 1 ;;
  esac
  return 0
}

part2_algorithms() {
  local a w b net trace
  for a in "${ALGORITHMS[@]}" inSwitch_both mixed_ring_direct mixed_hd_ring mixed_dbt_direct; do
    net="$NET16"
    [ "$a" = inSwitch_both ] && net="Switch(4,100GB/s,500ns)_Switch(4,50GB/s,1us)"
    for w in dp ALL_REDUCE ALL_GATHER REDUCE_SCATTER ALL_TO_ALL; do
      supported "$a" "$w" || continue
      trace="in/tr/coll_$w"; [ "$w" = dp ] && trace=in/tr/dp16
      for b in analytical congestion-aware; do
        cmd "p2_algorithms/$a/$w.$b" 0 -- run --workload-configuration="$trace" \
          --system-configuration="in/sys/algo_$a.json" --network-configuration="$net" \
          --network-backend=$b --symmetry=off --report-format=json --link-stats
      done
    done
  done
  # The rooted collectives and the barrier (ring system).
  for w in REDUCE GATHER SCATTER BROADCAST REDUCE_SCATTER_BLOCK BARRIER; do
    for b in analytical congestion-aware; do
      cmd "p2_algorithms/rooted/$w.$b" 0 -- run --workload-configuration="in/tr/coll_$w" \
        --system-configuration=in/sys/ring2.json --network-configuration="$NET16" \
        --network-backend=$b --symmetry=off --report-format=json --link-stats
    done
  done
  # System JSON options, with --injection-scale and --iterations.
  local o extra
  for o in fifo lifo baseline themis smallest_first chunks endpoint roofline; do
    for b in analytical congestion-aware; do
      extra=()
      [ $o = endpoint ] && extra=(--injection-scale=1.5 --iterations=2)
      cmd "p2_algorithms/options/$o.$b" 0 -- run --workload-configuration=in/tr/dp16 \
        --system-configuration="in/sys/opt_$o.json" --network-configuration="$NET16" \
        --network-backend=$b --symmetry=off --report-format=json --link-stats "${extra[@]}"
    done
  done
  # Topologies: notation blocks and network files, under --symmetry=auto and off.
  local nets=(
    "ringuni|ring1|RingUni(16,100GB/s,500ns)"
    "mesh_ring|ring2|Mesh(4,100GB/s,500ns)_Ring(4,50GB/s,1us)"
    "fc_switch|ring2|FullyConnected(4,100GB/s,500ns)_Switch(4,50GB/s,1us)"
    "torus2d|ring2|Torus2D(4x4,100GB/s,500ns)"
    "mesh2d_switch|ring3|Mesh2D(4x2,100GB/s,500ns)_Switch(2,50GB/s,1us)"
    "links2|ring2|Ring(4,100GB/s,500ns,2)_Switch(4,50GB/s,1us)"
    "three_dims|ring3|Ring(2,100GB/s,500ns)_FullyConnected(4,200GB/s,250ns)_Switch(2,25GB/s,2us)"
    "astra_yaml|ring2|in/net/astra_ring_switch.yml"
    "orrery_yaml|ring2|in/net/orrery_ringuni_mesh.yml"
  )
  local entry n s sym
  for entry in "${nets[@]}"; do
    IFS='|' read -r n s net <<< "$entry"
    for b in analytical congestion-aware; do
      for sym in auto off; do
        cmd "p2_algorithms/networks/$n.$b.$sym" 0 -- run --workload-configuration=in/tr/dp16 \
          --system-configuration="in/sys/$s.json" --network-configuration="$net" \
          --network-backend=$b --symmetry=$sym --report-format=json --link-stats
      done
    done
  done
}

part3_examples() {
  local e
  for e in "${EXAMPLES[@]}"; do
    cmd "p3_examples/$e/text" 0 -- run --example="$e"
    cmd "p3_examples/$e/json" 0 -- run --example="$e" --report-format=json
    cmd "p3_examples/$e/csv" 0 -- run --example="$e" --report-format=csv
    cmd "p3_examples/$e/json_off" 0 -- run --example="$e" --report-format=json --symmetry=off
    cmd "p3_examples/$e/aware_text" 0 -- run --example="$e" --network-backend=congestion-aware --link-stats
    cmd "p3_examples/$e/aware_json" 0 -- run --example="$e" --network-backend=congestion-aware --link-stats --report-format=json
  done
}

# observe NAME ARGS...: every observer on one run.
observe() {
  local n=$1 d="p4_observers/$1"
  shift
  mkdir -p "out/$d"
  cmd "$d/critical_path_text" 0 -- run "$@" --critical-path
  cmd "$d/critical_path_json" 0 -- run "$@" --critical-path --report-format=json
  cmd "$d/critical_path_json_off" 0 -- run "$@" --critical-path --report-format=json --symmetry=off
  cmd "$d/timeline_all" 0 -- run "$@" --timeline="out/$d/timeline_all.json"
  cmd "$d/timeline_ranks" 0 -- run "$@" --timeline="out/$d/timeline_ranks.json" --timeline-ranks=0-1,3
  cmd "$d/timeline_window" 0 -- run "$@" --timeline="out/$d/timeline_window.json" --timeline-ranks=0,2 --timeline-window=1000-60000
  cmd "$d/timeline_off" 0 -- run "$@" --timeline="out/$d/timeline_off.json" --symmetry=off
  cmd "$d/csv_files" 0 -- run "$@" --report-format=csv --link-stats \
    --collectives="out/$d/collectives.csv" --links="out/$d/links.csv"
  cmd "$d/csv_files_off" 0 -- run "$@" --report-format=csv --symmetry=off \
    --collectives="out/$d/collectives_off.csv" --links="out/$d/links_off.csv"
  cmd "$d/all_at_once" 0 -- run "$@" --report-format=json --link-stats --critical-path \
    --timeline="out/$d/all_at_once.timeline.json" --collectives="out/$d/all_at_once.collectives.csv" \
    --links="out/$d/all_at_once.links.csv"
}

part4_observers() {
  local id
  for id in kn_2d_RingSwitch_4x4_all_reduce_ring_ring_unaware mb_all_reduce_8npus_Ring_4chunks_aware \
            kn_comp_overlaps_allreduce_Ring_8npus_unaware mem_b_load4_store4_node2x4_lat500_bw50_Ring8_unaware \
            kn_p2p_ring_shift_Ring_8npus_unaware; do
    conf_row "$id" && observe "conf_$id" "${CONF_ROW[@]}"
  done
  local e
  for e in "${EXAMPLES[@]}"; do
    observe "example_$e" --example="$e"
    observe "example_${e}_aware" --example="$e" --network-backend=congestion-aware
  done
  observe pipeline --generate="--model=gpt3-175b --tp=2 --pp=4 --dp=2 --microbatches=8 --hbm-gb=2000" \
    --system-configuration=in/sys/roofline.json --network-configuration="$GNET16"
  observe straggler --workload-configuration=in/tr/straggler16 --system-configuration=in/sys/ring2.json \
    --network-configuration="$NET16"
  observe memory_offload --workload-configuration=in/tr/mem_offload --system-configuration=in/sys/mem_example.json \
    --network-configuration="Ring(8,50GB/s,500ns)" --memory-configuration=in/mem/pool_capacity.yml
}

part5_generated() {
  local d=p5_generated
  mkdir -p out/$d
  cmd $d/list_models 0 -- gen --list-models
  cmd $d/list_devices 0 -- gen --list-devices
  cmd $d/system_out_a100 0 -- gen --device=a100 --efficiency=0.5 --system-out=out/$d/system_out_a100.json
  cmd $d/system_out_h100 0 -- gen --device=h100 --efficiency=0.4 --system-out=out/$d/system_out_h100.json
  local entry name net mem flags genonly args m
  for entry in "${GEN_CASES[@]}"; do
    IFS='|' read -r name net mem flags genonly <<< "$entry"
    read -r -a args <<< "$flags $genonly"
    m=()
    [ "$mem" = pool ] && m=(--memory-configuration=in/mem/pool.yml)
    mkdir -p "out/$d/$name"
    cmd "$d/$name/gen_summary" 0 -- gen "${args[@]}" --summary --out="out/$d/$name/w"
    cmd "$d/$name/run_files_json" 0 -- run --workload-configuration="in/gen/$name/w" \
      --comm-group-configuration="in/gen/$name/w.comm_groups.json" \
      --system-configuration=in/sys/roofline.json --network-configuration="$net" "${m[@]}" --report-format=json
    cmd "$d/$name/run_generate_text" 0 -- run --generate="$flags" \
      --system-configuration=in/sys/roofline.json --network-configuration="$net" "${m[@]}"
    cmd "$d/$name/run_generate_json" 0 -- run --generate="$flags" \
      --system-configuration=in/sys/roofline.json --network-configuration="$net" "${m[@]}" --report-format=json
  done
  cmd $d/gen_without_out 0 -- gen --model=gpt3-175b --tp=8 --pp=8 --dp=16 --microbatches=32 --sp --recompute=selective --zero=1 --summary
  cmd $d/gen_dlrm_mlperf_64 0 -- gen --model=dlrm-mlperf --npus=64 --global-batch=65536 --embedding-sharding=table --summary
  cmd $d/gen_network_summary 0 -- gen --model=mixtral-8x7b --tp=2 --cp=2 --ep=4 --pp=2 --microbatches=4 --sp \
    --recompute=selective --zero=1 --network="$GNET32" --summary
  cmd $d/run_generate_symmetry_off 0 -- run --generate="--model=llama3-8b --tp=2 --cp=2 --dp=2 --pp=2 --microbatches=4 --recompute=full" \
    --system-configuration=in/sys/roofline.json --network-configuration="$GNET16" --symmetry=off --report-format=json
  cmd $d/run_generate_place 0 -- run --generate="--model=llama3-8b --tp=8 --dp=2 --place=dp:0,tp:1 --microbatches=2 --recompute=full" \
    --system-configuration=in/sys/roofline.json --network-configuration="Ring(2,300GB/s,500ns)_Switch(8,50GB/s,2us)" --report-format=json
  # The README's memory example: 8 NPUs, 1 GiB activations.
  local mx=(--system-configuration=in/sys/mem_example.json --network-configuration="Ring(8,50GB/s,500ns)")
  cmd $d/memory/over_capacity 2 -- run --workload-configuration=in/tr/mem_plain "${mx[@]}" --memory-configuration=in/mem/hbm.yml
  cmd $d/memory/oversubscribed 0 -- run --workload-configuration=in/tr/mem_plain "${mx[@]}" --memory-configuration=in/mem/hbm.yml --allow-oversubscription
  cmd $d/memory/oversubscribed_json 0 -- run --workload-configuration=in/tr/mem_plain "${mx[@]}" --memory-configuration=in/mem/hbm.yml --allow-oversubscription --report-format=json
  cmd $d/memory/offload_pool 0 -- run --workload-configuration=in/tr/mem_offload "${mx[@]}" --memory-configuration=in/mem/pool_capacity.yml
  cmd $d/memory/offload_pool_json 0 -- run --workload-configuration=in/tr/mem_offload "${mx[@]}" --memory-configuration=in/mem/pool_capacity.yml --report-format=json --symmetry=off
}

part6_trace() {
  local d=p6_trace
  mkdir -p out/$d/gen
  cmd $d/gen_dp8 0 -- trace gen-dp --npus=8 --layers=3 --allreduce-bytes=1048576 --fwd-us=50 --bwd-us=100 --out=out/$d/gen/dp8
  cmd $d/gen_dp_defaults 0 -- trace gen-dp --out=out/$d/gen/dp_defaults
  cmd $d/gen_dp_straggler 0 -- trace gen-dp --npus=8 --layers=2 --straggler=3 --straggler-percent=50 --out=out/$d/gen/straggler
  cmd $d/gen_dp_offload 0 -- trace gen-dp --npus=4 --layers=2 --activation-bytes=1048576 --offload --out=out/$d/gen/offload
  # Stale ranks: 8 then 4 ranks into one prefix; files 4..7 are removed (said on stderr).
  cmd $d/gen_dp_stale_8 0 -- trace gen-dp --npus=8 --layers=1 --out=out/$d/gen/stale
  cmd $d/gen_dp_stale_4 0 -- trace gen-dp --npus=4 --layers=1 --out=out/$d/gen/stale
  local c
  for c in ALL_REDUCE REDUCE ALL_GATHER GATHER SCATTER BROADCAST ALL_TO_ALL REDUCE_SCATTER REDUCE_SCATTER_BLOCK BARRIER; do
    cmd "$d/gen_coll_$c" 0 -- trace gen-coll --npus=4 --collective=$c --bytes=65536 --out="out/$d/gen/coll_$c"
  done
  cmd $d/gen_coll_defaults 0 -- trace gen-coll --out=out/$d/gen/coll_defaults
  # inspect and to-json: name|file|expected exit code.
  local files=(
    "dp8|out/$d/gen/dp8.0.et|0"
    "offload|out/$d/gen/offload.1.et|0"
    "coll_BARRIER|out/$d/gen/coll_BARRIER.2.et|0"
    "straggler16_5|in/tr/straggler16.5.et|0"
    "gen_mixtral|in/gen/mixtral_ep_cp/w.3.et|0"
    "gen_dlrm|in/gen/dlrm_row/w.0.et|0"
    "deadlock|in/tr/deadlock.0.et|0"
  )
  if [ $HAVE_CONF = 1 ]; then
    files+=(
      "conf_all_reduce|examples/workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce.0.et|0"
      "conf_p2p|cases/kn_p2p_ring_shift_Ring_8npus_unaware/trace.3.et|0"
      "conf_custom|examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et|0"
    )
  fi
  if [ $HAVE_CHAKRA = 1 ]; then
    # The real traces: c102 reads; the others are refused by inspect (README "Real Chakra
    # traces": missing comm_size, dangling dependencies) but still convert to JSON.
    files+=("chakra_feeder|chakra-real/feeder/chakra.0.et|2" "chakra_linear|chakra-real/linear/linear.0.et|2"
            "chakra_c102|chakra-real/c102/c102.0.et|0" "chakra_dlrm|chakra-real/dlrm-hostonly/dlrm.5.et|2")
  fi
  local entry n f rc
  mkdir -p out/$d/json out/$d/roundtrip
  for entry in "${files[@]}"; do
    IFS='|' read -r n f rc <<< "$entry"
    cmd "$d/inspect_$n" "$rc" -- trace inspect "$f"
    cmd "$d/to_json_$n" 0 -- trace to-json "$f" --out="out/$d/json/$n.jsonl"
    cmd "$d/from_json_$n" 0 -- trace from-json "out/$d/json/$n.jsonl" --out="out/$d/roundtrip/$n.et"
  done
}

part7_explore() {
  local d=p7_explore
  mkdir -p out/$d
  # Sweep of a generated model (bandwidth x algorithm x gen.zero).
  cmd $d/sweep_gen_dry_run 0 -- sweep in/sweep/gen.yml --dry-run
  cmd $d/sweep_gen 0 -- sweep in/sweep/gen.yml --jobs=2 --out=out/$d/sweep_gen
  # Sweep of a trace: product, zip and filter; the same table for --jobs=1 and 2, for shards
  # merged, and for a resume (nothing left; after the JSON Lines file was cut mid-row).
  cmd $d/sweep_trace_dry_run 0 -- sweep in/sweep/trace.yml --dry-run --critical-path
  cmd $d/sweep_trace_jobs2 0 -- sweep in/sweep/trace.yml --jobs=2 --critical-path --out=out/$d/sweep_trace_jobs2
  cmd $d/sweep_trace_jobs1 0 -- sweep in/sweep/trace.yml --jobs=1 --critical-path --out=out/$d/sweep_trace_jobs1
  cmd $d/sweep_trace_resume_done 0 -- sweep in/sweep/trace.yml --jobs=2 --critical-path --out=out/$d/sweep_trace_jobs1
  cmd $d/sweep_trace_shard1 0 -- sweep in/sweep/trace.yml --jobs=1 --critical-path --shard=1/2 --out=out/$d/sweep_trace_shards
  cmd $d/sweep_trace_shard2 0 -- sweep in/sweep/trace.yml --jobs=1 --critical-path --shard=2/2 --out=out/$d/sweep_trace_shards
  cmd $d/sweep_trace_merge 0 -- sweep merge out/$d/sweep_trace_shards
  mkdir -p out/$d/sweep_trace_cut
  if [ -f out/$d/sweep_trace_jobs2/sweep.jsonl ]; then
    head -c 1700 out/$d/sweep_trace_jobs2/sweep.jsonl > out/$d/sweep_trace_cut/sweep.jsonl
  fi
  cmd $d/sweep_trace_resume_cut 0 -- sweep in/sweep/trace.yml --jobs=2 --critical-path --out=out/$d/sweep_trace_cut
  # Plots of the generated sweep (heatmap and lines need one row per mark: gen.zero == 0 only).
  mkdir -p out/$d/plot
  if [ -f out/$d/sweep_gen/sweep.csv ]; then
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "gen.zero") z = i } NR == 1 || $z == "0"' \
      out/$d/sweep_gen/sweep.csv > out/$d/plot/zero0.csv
  fi
  cmd $d/plot_heatmap $PLOT_RC -- plot out/$d/plot/zero0.csv --kind=heatmap --x=network.dim0.bandwidth_gbps \
    --y=system.all-reduce-implementation --z=iteration_s -o out/$d/plot/heat.svg
  cmd $d/plot_lines $PLOT_RC -- plot out/$d/plot/zero0.csv --kind=lines --x=network.dim0.bandwidth_gbps --y=iteration_s \
    --series=system.all-reduce-implementation --title="lines of a sweep" -o out/$d/plot/lines.svg
  cmd $d/plot_pareto $PLOT_RC -- plot out/$d/sweep_gen/sweep.csv --kind=pareto --x=iteration_s --y=network.dim0.bandwidth_gbps \
    -o out/$d/plot/pareto.svg
  cmd $d/plot_stacked $PLOT_RC -- plot out/$d/sweep_gen/sweep.csv --kind=stacked --x=index -o out/$d/plot/stacked.png
  cmd $d/plot_stacked_trace $PLOT_RC -- plot out/$d/sweep_trace_jobs1/sweep.csv --kind=stacked --x=index \
    --stack=compute_ns,exposed_comm_ns -o out/$d/plot/stacked_trace.svg
  # Strategy search (timings on stderr: compared with the numbers masked).
  cmd $d/search_llama 0 --times -- search --model=llama3-8b --npus=16 --global-batch=32 \
    --network="Switch(8,300GB/s,1us)_Switch(2,25GB/s,2us)" --system=in/sys/roofline.json --top=4 --jobs=2 \
    --csv=out/$d/search_llama.csv
  cmd $d/search_mixtral 0 --times -- search --model=mixtral-8x7b --npus=16 --global-batch=16 \
    --network="Ring(4,300GB/s,1us)_Switch(4,25GB/s,2us)" --system=in/sys/roofline.json --top=3 --jobs=1 --hbm-gb=200
  # report compare: the README's pair (64 NPUs, dim1 at 50 and 100 GB/s, with critical paths),
  # and a symmetric against a full run.
  local base=(run --workload-configuration=in/tr/dp64 --system-configuration=in/sys/dp64.json --critical-path --report-format=json)
  mkdir -p out/$d/reports
  cmd $d/reports/a 0 -- "${base[@]}" --network-configuration="Switch(8,400GB/s,1us)_Switch(8,50GB/s,1us)"
  cmd $d/reports/b 0 -- "${base[@]}" --network-configuration="Switch(8,400GB/s,1us)_Switch(8,100GB/s,1us)"
  cmd $d/reports/c 0 -- run --workload-configuration=in/tr/straggler16 --system-configuration=in/sys/ring2.json \
    --network-configuration="$NET16" --report-format=json
  cmd $d/reports/d 0 -- run --workload-configuration=in/tr/straggler16 --system-configuration=in/sys/ring2.json \
    --network-configuration="$NET16" --report-format=json --symmetry=off --network-backend=congestion-aware
  local f
  for f in text json csv; do
    cmd $d/compare_ab_$f 0 -- report compare out/$d/reports/a.stdout out/$d/reports/b.stdout --format=$f
    cmd $d/compare_cd_$f 0 -- report compare out/$d/reports/c.stdout out/$d/reports/d.stdout --format=$f
  done
  cmd $d/compare_default_format 0 -- report compare out/$d/reports/b.stdout out/$d/reports/a.stdout
}

part8_bad_input() {
  local d=p8_bad_input
  local ok=(--workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration="$NET16")
  cmd $d/unknown_command 2 -- frobnicate
  cmd $d/unknown_flag_top 2 -- --bogus
  cmd $d/unknown_flag_run 2 -- run "${ok[@]}" --bogus-flag
  cmd $d/misspelled_flag_run 2 -- run "${ok[@]}" --link-stat
  cmd $d/other_commands_flag 2 -- run "${ok[@]}" --jobs=2
  cmd $d/stray_argument 2 -- run "${ok[@]}" stray
  cmd $d/bad_number 2 -- run "${ok[@]}" --iterations=0
  cmd $d/bad_number_word 2 -- run "${ok[@]}" --iterations=abc
  cmd $d/bad_symmetry 2 -- run "${ok[@]}" --symmetry=sometimes
  cmd $d/bad_backend 2 -- run "${ok[@]}" --network-backend=congestion-awre
  cmd $d/bad_report_format 2 -- run "${ok[@]}" --report-format=xml
  cmd $d/no_inputs 2 -- run
  cmd $d/example_with_files 2 -- run --example=default --workload-configuration=in/tr/dp16
  cmd $d/unknown_example 2 -- run --example=nope
  cmd $d/missing_trace 2 -- run --workload-configuration=in/tr/nope --system-configuration=in/sys/ring2.json --network-configuration="$NET16"
  cmd $d/too_few_traces 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring3.json --network-configuration="Ring(4,1GB/s,1ns)_Ring(4,1GB/s,1ns)_Ring(2,1GB/s,1ns)"
  cmd $d/missing_system 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/nope.json --network-configuration="$NET16"
  cmd $d/missing_network_file 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration=in/net/nope.yml
  cmd $d/bad_network_yaml 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration=in/bad/network.yml
  cmd $d/bad_network_lengths 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration=in/bad/network_lengths.yml
  cmd $d/bad_orrery_network_yaml 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration=in/net/orrery_bad_block.yml
  cmd $d/bad_notation 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration="Ring(4,100GB/s"
  cmd $d/bad_notation_overflow 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration="Ring(16,1e308TB/s,1ns)"
  cmd $d/bad_system_range 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/bad/system_range.json --network-configuration="Ring(16,1GB/s,1ns)"
  cmd $d/bad_system_key 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/bad/system_key.json --network-configuration="Ring(16,1GB/s,1ns)"
  cmd $d/bad_system_algorithm 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/bad/system_algo.json --network-configuration="Ring(16,1GB/s,1ns)"
  cmd $d/bad_system_not_json 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/bad/garbage.json --network-configuration="Ring(16,1GB/s,1ns)"
  cmd $d/system_dims_mismatch 2 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json --network-configuration="Ring(16,1GB/s,1ns)"
  cmd $d/bad_memory_yaml 2 -- run "${ok[@]}" --memory-configuration=in/bad/memory.yml
  cmd $d/mem_node_without_memory 2 -- run --workload-configuration=in/tr/mem_offload --system-configuration=in/sys/mem_example.json --network-configuration="Ring(8,50GB/s,500ns)"
  cmd $d/halving_doubling_all_to_all 2 -- run --workload-configuration=in/tr/coll_ALL_TO_ALL --system-configuration=in/sys/algo_halvingDoubling.json --network-configuration="$NET16"
  cmd $d/double_binary_tree_all_gather 2 -- run --workload-configuration=in/tr/coll_ALL_GATHER --system-configuration=in/sys/algo_doubleBinaryTree.json --network-configuration="$NET16" --network-backend=congestion-aware
  cmd $d/in_switch_all_to_all 2 -- run --workload-configuration=in/tr/coll_ALL_TO_ALL --system-configuration=in/sys/algo_inSwitch.json --network-configuration="$NET16"
  cmd $d/in_switch_on_ring 2 -- run --workload-configuration=in/tr/coll_ALL_REDUCE --system-configuration=in/sys/algo_inSwitch_both.json --network-configuration="$NET16"
  cmd $d/deadlock 2 -- run --workload-configuration=in/tr/deadlock --system-configuration=in/sys/empty.json --network-configuration="Ring(2,50GB/s,500ns)"
  cmd $d/deadlock_off 2 -- run --workload-configuration=in/tr/deadlock --system-configuration=in/sys/empty.json --network-configuration="Ring(2,50GB/s,500ns)" --symmetry=off --network-backend=congestion-aware
  if [ $HAVE_CHAKRA = 1 ]; then
    cmd $d/chakra_dlrm_no_comm_size 2 -- run --workload-configuration=chakra-real/dlrm-hostonly/dlrm --system-configuration=in/sys/ring1.json --network-configuration="Ring(8,50GB/s,500ns)"
  fi
  cmd $d/trace_inspect_missing 2 -- trace inspect in/tr/nope.0.et
  cmd $d/trace_to_json_no_out 2 -- trace to-json in/tr/dp16.0.et
  cmd $d/trace_gen_coll_bad_type 2 -- trace gen-coll --collective=ALL_REDUSE --out=out/$d/never
  cmd $d/gen_unknown_model 2 -- gen --model=gpt3-17b --summary
  cmd $d/gen_misspelled_flag 2 -- gen --model=gpt3-175b --tpp=2 --summary
  cmd $d/gen_not_dividing 2 -- gen --model=gpt3-175b --tp=5 --summary
  cmd $d/gen_over_capacity 2 -- gen --model=gpt3-175b --tp=2 --pp=2 --dp=2 --microbatches=4 --summary
  cmd $d/gen_bad_order 2 -- gen --model=llama3-8b --tp=2 --dp=2 --order=tp-dp --summary
  cmd $d/gen_npus_mismatch 2 -- gen --model=llama3-8b --tp=2 --dp=2 --npus=8 --summary
  cmd $d/run_generate_bad 2 -- run --generate="--model=llama3-8b --tp=3" --system-configuration=in/sys/roofline.json --network-configuration="$GNET16"
  cmd $d/sweep_missing_spec 2 -- sweep in/sweep/nope.yml --out=out/$d/never
  cmd $d/sweep_bad_path 2 -- sweep in/bad/sweep_path.yml --dry-run
  cmd $d/sweep_bad_filter_name 2 -- sweep in/bad/sweep_filter_name.yml --dry-run
  cmd $d/sweep_bad_filter_type 2 -- sweep in/bad/sweep_filter_type.yml --dry-run
  cmd $d/compare_not_a_report 2 -- report compare in/bad/not_a_report.json in/bad/not_a_report.json
  cmd $d/compare_not_json 2 -- report compare in/bad/garbage.json in/bad/garbage.json --format=json
  cmd $d/compare_missing 2 -- report compare in/bad/nope.json in/bad/nope.json
  cmd $d/plot_unknown_column 2 -- plot in/bad/plot.csv --kind=lines --x=a --y=c -o out/$d/never.svg
  cmd $d/plot_missing_csv 2 -- plot in/bad/nope.csv --kind=lines --x=a --y=b -o out/$d/never.svg
  cmd $d/search_bad_model 2 -- search --model=gpt-3 --npus=16 --global-batch=32 --network="$GNET16" --system=in/sys/roofline.json
  cmd $d/topology_bad 2 -- topology describe "Ring(1,100GB/s,1ns)"
}

part9_misc() {
  local d=p9_misc
  mkdir -p out/$d/topology
  cmd $d/version 0 -- --version
  cmd $d/help 0 -- --help
  local c
  for c in run gen trace "trace inspect" "trace to-json" "trace from-json" "trace gen-dp" "trace gen-coll" \
           topology "topology generate" "topology describe" plugins "plugins list" peer sweep plot search \
           report "report compare"; do
    local words
    read -r -a words <<< "$c"
    cmd "$d/help_${c// /_}" 0 -- "${words[@]}" --help
  done
  cmd $d/backends 0 -- run --network-backend=help
  cmd $d/plugins_list 0 -- plugins list
  cmd $d/topology_generate 0 -- topology generate "Ring(4,100GB/s,500ns)_Switch(4,50GB/s,1us)" --out=out/$d/topology/ring_switch.yml
  cmd $d/topology_generate_orrery_only 0 -- topology generate "Torus2D(4x4,100GB/s,500ns)_Mesh(2,25GB/s,1us,2)" --out=out/$d/topology/torus_mesh.yml
  cmd $d/topology_describe 0 -- topology describe "Ring(8,200GB/s,50ns)_FullyConnected(4,100GB/s,500ns)_Switch(16,50GB/s,2us)"
  cmd $d/topology_describe_bytes 0 -- topology describe "$NET16" --bytes=1048576
  cmd $d/topology_describe_yaml 0 -- topology describe in/net/astra_ring_switch.yml
  cmd $d/logging_notes 0 -- run --example=default --logging-folder=nowhere --num-queues-per-dim=2 --comm-scale=1 \
    --compute-scale=1 --rendezvous-protocol --logging-configuration=nothing.yml
  cmd $d/quiet_iterations 0 -- run --example=data-parallel --quiet --iterations=3 --report-format=json
  # The remote backend through the reference peer of the same binary, on a Unix socket with a
  # relative path (the endpoint is in the report's configuration).
  mkdir -p sock
  rm -f sock/peer.sock
  timeout --kill-after=10 120 "$BIN" peer --listen=unix:sock/peer.sock --connections=3 \
    > out/$d/peer.stdout 2> out/$d/peer.stderr &
  local peer=$! i
  for i in $(seq 1 200); do
    [ -S sock/peer.sock ] && break
    sleep 0.05
  done
  cmd $d/remote_default_json 0 -- run --example=default --network-backend=remote --remote-endpoint=unix:sock/peer.sock --report-format=json
  cmd $d/remote_aware_text 0 -- run --example=data-parallel --network-backend=remote --remote-endpoint=unix:sock/peer.sock \
    --remote-model=congestion-aware --link-stats
  cmd $d/remote_trace_json 0 -- run --workload-configuration=in/tr/dp16 --system-configuration=in/sys/ring2.json \
    --network-configuration="$NET16" --network-backend=remote --remote-endpoint=unix:sock/peer.sock \
    --remote-model=congestion-aware --link-stats --report-format=json --links=out/$d/remote_links.csv
  wait $peer
  echo $? > out/$d/peer.rc
  if [ $HAVE_NS3 = 1 ]; then
    cmd $d/ns3_default 0 -- run --example=default --network-backend=ns3
    cmd $d/ns3_json 0 -- run --workload-configuration=in/tr/coll_ALL_GATHER --system-configuration=in/sys/ring2.json \
      --network-configuration="Ring(4,100GB/s,500ns)_Switch(4,50GB/s,1us)" --network-backend=ns3 --report-format=json --link-stats
  fi
}

run_side() {  # run_side SIDE BIN
  local side=$1
  BIN=$2
  ROOT="$WORKDIR/$side"
  mkdir -p "$ROOT/out" "$ROOT/raw" || return 1
  cd "$ROOT" || return 1
  : > "$ROOT/unexpected.txt"
  : > "$ROOT/commands.txt"
  ln -s "$IN" in
  if [ $HAVE_CONF = 1 ]; then
    # The conformance folder's entries under their own names: its relative paths (also the one
    # inside the custom-collective system JSON) resolve from here.
    local e
    for e in "$CONF"/*; do
      case "$(basename "$e")" in
        in | out | raw | sock | chakra-real) log "conformance entry $(basename "$e") clashes with a folder of this script"; return 1 ;;
      esac
      ln -s "$e" "$(basename "$e")"
    done
  fi
  [ $HAVE_CHAKRA = 1 ] && ln -s "$CHAKRA" chakra-real
  part1_conformance
  part2_algorithms
  part3_examples
  part4_observers
  part5_generated
  part6_trace
  part7_explore
  part8_bad_input
  part9_misc
}

# ---------------------------------------------------------------------------------------------
# Main: inputs, both sides, then compare.

log "workdir $WORKDIR"
log "old: $OLD_BIN"
log "new: $NEW_BIN"
( prepare_inputs ) || log "warning: preparing the inputs with OLD_BIN failed in part (runs reading them will say so)"
log "inputs ready ($((SECONDS - START_SECONDS)) s); running both binaries"
if [ "${SERIAL:-0}" = 1 ]; then
  ( run_side old "$OLD_BIN" )
  ( run_side new "$NEW_BIN" )
else
  ( run_side old "$OLD_BIN" ) &
  pid_old=$!
  ( run_side new "$NEW_BIN" ) &
  pid_new=$!
  wait $pid_old
  wait $pid_new
fi
log "both ran ($((SECONDS - START_SECONDS)) s); comparing"

cd "$WORKDIR" || exit 2
same=0
differ=0
declare -A part_same part_differ
while IFS= read -r f; do
  part=${f%%/*}
  if [ -f "old/out/$f" ] && [ -f "new/out/$f" ] && cmp -s "old/out/$f" "new/out/$f"; then
    echo "same $f"
    same=$((same + 1))
    part_same[$part]=$(( ${part_same[$part]:-0} + 1 ))
  else
    echo "DIFF $f"
    differ=$((differ + 1))
    part_differ[$part]=$(( ${part_differ[$part]:-0} + 1 ))
    if [ ! -f "old/out/$f" ]; then
      log "  $f: only NEW_BIN wrote it"
    elif [ ! -f "new/out/$f" ]; then
      log "  $f: only OLD_BIN wrote it"
    else
      log "  $f: $(cmp "old/out/$f" "new/out/$f" 2>&1 | head -1)"
      diff "old/out/$f" "new/out/$f" 2>/dev/null | head -6 | sed 's/^/      /' >&2
    fi
  fi
done < <( { (cd old/out 2>/dev/null && find . -type f); (cd new/out 2>/dev/null && find . -type f); } | sed 's|^\./||' | sort -u)

for part in $(printf '%s\n' "${!part_same[@]}" "${!part_differ[@]}" | sort -u); do
  log "$part: ${part_same[$part]:-0} same, ${part_differ[$part]:-0} differ"
done
if [ -s old/unexpected.txt ]; then
  log "warning: with OLD_BIN these did not go as the script expects (the comparison still holds):"
  sed 's/^/  /' old/unexpected.txt >&2
fi
log "took $((SECONDS - START_SECONDS)) s"
if [ "$differ" -eq 0 ] && [ "$same" -gt 0 ] && [ $KEEP_WORKDIR = 0 ]; then
  rm -rf "$WORKDIR"
else
  log "outputs kept in $WORKDIR (each side's commands, with seconds taken: $WORKDIR/old/commands.txt)"
fi
echo "$same same, $differ differ"
[ "$differ" -eq 0 ] && [ "$same" -gt 0 ]
