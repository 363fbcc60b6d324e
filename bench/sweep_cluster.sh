#!/usr/bin/env bash
# Sweep filters and the MPI mode (issue 12): the filter rate (a 1,000,000-point
# product, two filters keeping 10 points, --dry-run), and a 100-point sweep of
# a small 64-NPU generated workload on --jobs=1, --jobs=2 and over MPI
# (mpirun -n 3: rank 0 hands out, two workers simulate), byte-compared.
# Usage: bench/sweep_cluster.sh        (MPI part skipped without mpirun or an MPI build)
set -euo pipefail
cd "$(dirname "$0")/.."
ORRERY="$(pwd)/${ORRERY:-build/apps/orrery}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf 'name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n' > model.yml
echo '{"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2}' > small.json
cat > filter.yml <<YML
base:
  network: "Ring(8,100GB/s,500ns)_Switch(8,25GB/s,2us)"
  system: small.json
  generate: "--model=$dir/model.yml --tp=8 --dp=8 --microbatches=2"
axes:
  network.dim0.bandwidth_gbps: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  network.dim1.bandwidth_gbps: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  network.dim0.latency_ns: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  network.dim1.latency_ns: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  run.iterations: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  system.all-reduce-implementation: [ring, direct, halvingDoubling, doubleBinaryTree, oneRing, oneDirect, oneHalvingDoubling, direct2, direct4, direct8]
filters: ["dim0.bandwidth_gbps * dim1.bandwidth_gbps >= 100 and dim0.latency_ns == 1", "dim1.latency_ns + iterations <= 2 and all-reduce-implementation != 'direct8'"]
YML
/usr/bin/time -f "%e" -o t "$ORRERY" sweep filter.yml --dry-run > dry.txt
echo "filters: $(head -n 1 dry.txt) in $(cat t) s wall (enumeration + 2 filters over 1,000,000 points + preparing the 9 kept)"
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
for j in 1 2; do
  /usr/bin/time -f "%e" -o t "$ORRERY" sweep small.yml --jobs=$j --out=j$j --quiet > /dev/null
  echo "small 64-NPU sweep, 100 points, --jobs=$j: wall $(cat t) s"
done
cmp j1/sweep.csv j2/sweep.csv
if command -v mpirun >/dev/null && "$ORRERY" sweep --help | grep -q -- --mpi && \
   ! "$ORRERY" sweep small.yml --mpi --dry-run 2>&1 | grep -q 'built without MPI'; then
  /usr/bin/time -f "%e" -o t mpirun --oversubscribe --allow-run-as-root -n 3 "$ORRERY" sweep small.yml --mpi --out=mpi --quiet > /dev/null
  echo "small 64-NPU sweep, 100 points, mpirun -n 3 --mpi: wall $(cat t) s"
  cmp j1/sweep.csv mpi/sweep.csv && cmp j1/sweep.jsonl mpi/sweep.jsonl && echo "MPI output == --jobs=1 output, byte for byte"
else
  echo "MPI: skipped (no mpirun or orrery built without MPI)"
fi
