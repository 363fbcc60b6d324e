#!/usr/bin/env bash
# Sweep throughput (issue 12): a 100-point sweep of a small 64-NPU generated
# workload (4-layer model, TP 8 x DP 8, 2 microbatches) on one job, and the
# README's 18-point GPT-3 sweep on one job against `orrery run` once per point.
# Usage: bench/sweep_throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ORRERY="$(pwd)/${ORRERY:-build/apps/orrery}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf 'name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n' > model.yml
echo '{"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2}' > small.json
cat > small.yml <<YML
base:
  network: "Ring(8,100GB/s,500ns)_Switch(8,25GB/s,2us)"
  system: small.json
  generate: "--model=$dir/model.yml --tp=8 --dp=8 --microbatches=2"
axes:
  network.dim0.bandwidth_gbps: [50, 100, 200, 400, 800]
  network.dim1.bandwidth_gbps: [10, 25, 50, 100, 200]
  system.all-reduce-implementation: [ring, direct]
  gen.zero: [0, 1]
YML
/usr/bin/time -f "%e %U" -o t "$ORRERY" sweep small.yml --jobs=1 --out=small --quiet > /dev/null
read -r wall user < t
echo "small 64-NPU sweep, 100 points, --jobs=1: wall ${wall} s, user ${user} s, $(echo "100 * 60 / $wall" | bc) points/min"
"$ORRERY" gen --device=a100 --efficiency=0.5 --system-out=a100.json > /dev/null
g="--model=gpt3-175b --tp=8 --pp=4 --dp=2 --microbatches=8 --sp --recompute=selective --zero=1"
cat > gpt.yml <<YML
base:
  network: "Ring(8,300GB/s,500ns)_Switch(8,50GB/s,2us)"
  system: a100.json
  generate: "$g"
axes:
  network.dim0.bandwidth_gbps: [150, 300, 600]
  network.dim1.bandwidth_gbps: [25, 50, 100]
  system.reduce-scatter-implementation: [ring, direct]
YML
/usr/bin/time -f "%e" -o t "$ORRERY" sweep gpt.yml --jobs=1 --out=gpt --quiet > /dev/null
echo "GPT-3 64-NPU sweep, 18 points, --jobs=1: wall $(cat t) s"
start=$(date +%s.%N)
for b0 in 150 300 600; do for b1 in 25 50 100; do for a in ring direct; do
  sed "s/}/, \"reduce-scatter-implementation\": [\"$a\", \"$a\"]}/" a100.json | tr -d '\n' > p.json
  "$ORRERY" run --generate="$g" --system-configuration=p.json \
    --network-configuration="Ring(8,${b0}GB/s,500ns)_Switch(8,${b1}GB/s,2us)" > /dev/null
done; done; done
echo "the same 18 points as 18 orrery run processes: wall $(echo "$(date +%s.%N) - $start" | bc) s"
