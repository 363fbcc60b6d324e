#!/usr/bin/env bash
# Builds the seed folders libFuzzer starts from: OUT/<target>/ gets small
# inputs from ../shared/conformance (read where they are, never copied into the
# repository). Without ../shared it makes empty folders and says so; the
# checked-in corpus (tests/fuzz/corpus/<target>/) is always used as well.
# Usage: tests/fuzz/make_seeds.sh OUT [SHARED_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:?usage: make_seeds.sh OUT [SHARED_DIR]}"
SHARED="${2:-$ROOT/../shared}"
CONF="$SHARED/conformance/astra-sim"
targets=(et_reader network_yaml system_json remote_memory_json memory_yaml comm_group_json notation simulation run_report
  remote_client remote_peer process_groups trace_sniff model_yaml sweep_spec sweep_rows search_args csv_reader
  heterogeneity_yaml)
for t in "${targets[@]}"; do mkdir -p "$OUT/$t"; done
if [ ! -d "$CONF" ]; then
  echo "make_seeds: no $CONF; only the checked-in corpus will seed the fuzzers" >&2
  exit 0
fi
# Copies files matching NAME under CONF (at most 8 KiB each, at most MAX files) to OUT/TARGET.
take() {
  local target="$1" name="$2" max="$3" n=0
  while IFS= read -r f; do
    cp "$f" "$OUT/$target/shared_$(echo "${f#"$CONF"/}" | tr '/' '_')"
    n=$((n + 1))
    [ "$n" -ge "$max" ] && break
  done < <(find "$CONF" -type f -name "$name" -size -8k | sort)
  echo "make_seeds: $target: $n file(s) from $CONF" >&2
}
take et_reader '*.et' 40
take simulation '*.0.et' 20
take network_yaml '*.yml' 30
take system_json 'system*.json' 30
take remote_memory_json 'memory*.json' 15
take remote_memory_json '*remote*.json' 15
take comm_group_json '*comm*group*.json' 10
