#!/usr/bin/env bash
# The rooms and the one way their includes go (docs/architecture.md): a file in
# a room includes only its own room and the rooms listed for it. Direct
# includes are read from the sources ("room/file.h" includes, rooted at the
# repository); a room may use everything its allowed rooms may use only by
# naming that room too, so the table is the whole truth.
# Usage: scripts/layers_check.sh SOURCE_DIR
set -euo pipefail
SRC="${1:-$(dirname "$0")/..}"
declare -A allowed=(
  [core]=""
  [network]="core"
  [extern]="core network"
  [memory]="core extern"
  [system]="core network memory"
  [workload]="core extern network memory system"
  [report]="core extern network memory system workload"
  [gen]="core extern network workload"
  [run]="core extern network memory system workload report gen"
  [explore]="core extern network memory system workload report gen run"
  [plugins]="core network memory system"
  [apps]="core extern network memory system workload report gen run explore plugins"
)
fail=0
for room in "${!allowed[@]}"; do
  [ -d "$SRC/$room" ] || continue
  while IFS= read -r line; do
    file=${line%%:*}
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    target=${inc%%/*}
    [ "$target" = "$inc" ] && continue              # a generated header beside the build (chakra.pb.h)
    [ -d "$SRC/$target" ] || continue               # not one of our rooms
    [ "$target" = "$room" ] && continue
    if ! grep -qw -- "$target" <<<"${allowed[$room]}"; then
      echo "$file includes $inc: $room/ may include only ${allowed[$room]:-nothing of ours}"; fail=1
    fi
  done < <(cd "$SRC" && grep -rn --include='*.h' --include='*.cc' '^#include "' "$room" | sed -E 's/^([^:]+):[0-9]+:/\1:/')
done
[ "$fail" = 0 ] && echo "rooms: every include goes one way (docs/architecture.md)"
exit "$fail"
