#!/usr/bin/env bash
# Runs every case of ../shared/conformance/astra-sim/expected.tsv through
# `orrery run` and prints one line per case: PASS/FAIL, id, expected, got.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${ORRERY_BIN:-$ROOT/build/apps/orrery}"
CONF="${CONF_DIR:-$ROOT/../shared/conformance/astra-sim}"
cd "$CONF" || { echo "no conformance folder at $CONF"; exit 0; }
pass=0; fail=0
while IFS=$'\t' read -r id backend workload network system memory fin exp comm; do
  [ "$id" = "id" ] && continue
  out=$("$BIN" run --workload-configuration="$workload" --system-configuration="$system" \
        --network-configuration="$network" --remote-memory-configuration="$memory" \
        --network-backend="$backend" --report-format=csv 2>&1)
  got=$(echo "$out" | awk -F, 'NR>1{print $2}' | paste -sd, -)
  gotexp=$(echo "$out" | awk -F, 'NR>1{print $5}' | paste -sd, -)
  gotcomm=$(echo "$out" | awk -F, 'NR>1{print $4}' | paste -sd, -)
  norm() { local v="$1"; if [[ "$v" != *,* ]]; then echo "$v"; else echo "$v"; fi; }
  uniq1() { echo "$1" | tr ',' '\n' | sort -u | wc -l; }
  g="$got"; [ "$(uniq1 "$got")" = "1" ] && [[ "$fin" != *,* ]] && g=$(echo "$got" | cut -d, -f1)
  if [ "$g" = "$fin" ]; then pass=$((pass+1)); echo "PASS $id $fin"; else fail=$((fail+1)); echo "FAIL $id expected=$fin got=$got ${out:0:200}"; fi
done < expected.tsv
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
