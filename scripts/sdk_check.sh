#!/usr/bin/env bash
# Installs Orrery's SDK from a build tree, builds the example plugin against
# the installed package (not the source tree), loads it and runs a simulation.
# Usage: scripts/sdk_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD="$1"; SRC="$2"
W=$(mktemp -d /tmp/orrery-sdk-XXXXXX)
trap 'rm -rf "$W"' EXIT
cmake --install "$BUILD" --prefix "$W/prefix" > "$W/install.log"
cmake -S "$SRC/examples/plugin_ideal_crossbar" -B "$W/plugin" -DCMAKE_PREFIX_PATH="$W/prefix" > "$W/configure.log"
cmake --build "$W/plugin" > "$W/build.log"
PLUGIN="$W/plugin/libideal_crossbar.so"
"$W/prefix/bin/orrery" plugins list --plugin="$PLUGIN" | tee "$W/list.txt"
grep -q "network backend ideal-crossbar" "$W/list.txt"
"$W/prefix/bin/orrery" run --example=default --plugin="$PLUGIN" --network-backend=ideal-crossbar | tee "$W/run.txt"
# One ring step: trunc(500 + 32768 / 53.687) = 1110 ns, as with the analytical backend on a ring.
grep -q "finished: 117780 ns" "$W/run.txt"
echo "SDK check passed"
