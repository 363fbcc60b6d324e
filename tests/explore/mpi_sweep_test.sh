#!/usr/bin/env bash
# ctest Sweep.Mpi (registered when orrery is built with MPI): a sweep over 3
# MPI ranks (rank 0 hands out points, two workers simulate) writes the same
# bytes as --jobs=1; killed (a cut JSON Lines file) and rerun under MPI it
# resumes to the same bytes; a bad spec exits 2 with one message.
# Usage: mpi_sweep_test.sh ORRERY MPIEXEC
set -euo pipefail
ORRERY="$1"
MPIEXEC="$2"
# In a sanitizer build with MPI (scripts/sanitize.sh leaves MPI out): OpenMPI's own allocations are not Orrery's
# leaks (the gtests check the sweep's code for leaks).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf 'name: small\nlayers: 4\nhidden: 256\nheads: 8\nvocab: 1024\nseq_len: 128\n' > model.yml
echo '{"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2}' > sys.json
cat > sweep.yml <<YML
base:
  network: "Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)"
  system: sys.json
  generate: "--model=$dir/model.yml --tp=4 --dp=2 --microbatches=2"
axes:
  network.dim0.bandwidth_gbps: [10, 25, 50]
  network.dim1.bandwidth_gbps: [10, 25, 50]
  gen.tp: [4, 3]
filters: ["dim1.bandwidth_gbps >= dim0.bandwidth_gbps"]
YML
mpi() { "$MPIEXEC" --oversubscribe --allow-run-as-root -n 3 "$ORRERY" sweep "$@" --mpi --quiet; }
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ORRERY" sweep sweep.yml --jobs=1 --quiet --out=serial
mpi sweep.yml --out=mpi | tee mpi.txt
grep -q '^12 points in this run: 12 simulated, 0 already done, 6 failed' mpi.txt || fail "summary: $(cat mpi.txt)"
cmp serial/sweep.csv mpi/sweep.csv || fail "CSV differs from --jobs=1"
cmp serial/sweep.jsonl mpi/sweep.jsonl || fail "JSON Lines differ from --jobs=1"
echo "MPI output byte-identical to --jobs=1: $(wc -l < mpi/sweep.csv) CSV lines"

# Killed after 5 rows and half of the 6th: the rerun keeps 5, redoes the rest.
mkdir resumed
{ head -n 5 serial/sweep.jsonl; sed -n 6p serial/sweep.jsonl | head -c 40; } > resumed/sweep.jsonl
mpi sweep.yml --out=resumed | tee resumed.txt
grep -q '12 points in this run: 7 simulated, 5 already done' resumed.txt || fail "resume: $(cat resumed.txt)"
cmp serial/sweep.csv resumed/sweep.csv || fail "resumed CSV differs"
cmp serial/sweep.jsonl resumed/sweep.jsonl || fail "resumed JSON Lines differ"
echo "MPI resume after a kill: byte-identical"

sed 's/^filters:.*/filters: ["tpp > 1"]/' sweep.yml > bad.yml
set +e
mpi bad.yml --out=bad > bad.out 2> bad.err
code=$?
set -e
[ "$code" = 2 ] || fail "bad spec: exit $code, expected 2"
[ "$(grep -c "unknown name 'tpp'" bad.err)" = 1 ] || fail "bad spec message: $(cat bad.err)"
echo "MPI bad spec: exit 2, one message"
