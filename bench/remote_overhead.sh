#!/usr/bin/env bash
# Issue-5 benchmark: the cost of moving the network model out of process. The
# 1024-NPU data-parallel loop (24 layers, 32 MiB all-reduce, halving-doubling on
# a 1-D Switch), simulated in full with the analytical model in process, and
# with the same model served by `orrery peer` over loopback TCP and a Unix socket.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/build/apps/orrery"
N="${1:-1024}"
W=$(mktemp -d /tmp/orrery-remote-XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
"$BIN" trace gen-dp --npus="$N" --layers=24 --allreduce-bytes=33554432 --out="$W/dp"
printf "topology: [ Switch ]\nnpus_count: [ %d ]\nbandwidth: [ 50 ]\nlatency: [ 1000 ]\n" "$N" > "$W/net.yml"
cat > "$W/sys.json" <<J
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4,
 "all-reduce-implementation": ["halvingDoubling"], "collective-optimization": "localBWAware", "local-mem-bw": 1600}
J
run() {  # $1 label, rest: extra flags
  local label=$1; shift
  local t0=$(date +%s.%N)
  "$BIN" run --workload-configuration="$W/dp" --system-configuration="$W/sys.json" --network-configuration="$W/net.yml" \
    --symmetry=off --report-format=json "$@" > "$W/out.json"
  local t1=$(date +%s.%N)
  local msgs=$(grep -m1 '"messages"' "$W/out.json" | tr -dc 0-9)
  local fin=$(grep -m1 '"finished_ns"' "$W/out.json" | tr -dc 0-9)
  awk -v l="$label" -v a="$t0" -v b="$t1" -v m="$msgs" -v f="$fin" \
    'BEGIN { printf "%-22s finished_ns=%s messages=%s wall=%.2fs  %.0f messages/s\n", l, f, m, b-a, m/(b-a) }'
}
run in-process
"$BIN" peer --listen=127.0.0.1:0 --connections=1 2> "$W/peer_tcp.log" &
sleep 0.3
PORT=$(grep -o '[0-9]*$' "$W/peer_tcp.log")
run "remote (loopback TCP)" --network-backend=remote --remote-endpoint=127.0.0.1:$PORT
"$BIN" peer --listen=unix:$W/peer.sock --connections=1 2> "$W/peer_unix.log" &
sleep 0.3
run "remote (Unix socket)" --network-backend=remote --remote-endpoint=unix:$W/peer.sock
