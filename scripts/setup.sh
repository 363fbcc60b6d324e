#!/usr/bin/env bash
# Installs the Debian packages Orrery needs (only those missing) and builds it.
# Usage: scripts/setup.sh run|test [build-dir]     (default build dir: build)
#   run:  what `orrery` itself needs, and builds the orrery binary only
#         (README command 1, scripts/run_default.sh: a fresh machine runs the
#         default simulation without building the test suite);
#   test: also what the suite, the benchmarks and the optional parts need
#         (ns-3 plugin, MPI sweeps, gnuplot, the report schema's validator),
#         and builds everything (README command 2, scripts/test.sh).
# Why each package: docs/architecture.md, "Dependencies (Debian packages)".
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-}"
BUILD_DIR="${2:-build}"
RUN_PKGS=(g++ cmake make protobuf-compiler libprotobuf-dev libyaml-cpp-dev nlohmann-json3-dev
          libgoogle-glog-dev libcli11-dev libboost-dev)
TEST_PKGS=(libgtest-dev libgmock-dev libbenchmark-dev libns3-dev libgsl-dev ns3 time
           gnuplot-nox libvalijson-dev libopenmpi-dev openmpi-bin)
case "$MODE" in
  run) PKGS=("${RUN_PKGS[@]}") ;;
  test) PKGS=("${RUN_PKGS[@]}" "${TEST_PKGS[@]}") ;;
  *) echo "usage: scripts/setup.sh run|test [build-dir]" >&2; exit 2 ;;
esac
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing missing Debian packages: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
if [ "$MODE" = run ]; then
  # A build folder the test mode already configured keeps its settings; a new one
  # leaves out the suite and the benchmarks (their packages may be missing).
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DORRERY_BUILD_TESTS=OFF -DORRERY_BUILD_BENCH=OFF >&2
  fi
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target orrery >&2
else
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DORRERY_BUILD_TESTS=ON -DORRERY_BUILD_BENCH=ON >&2
  cmake --build "$BUILD_DIR" -j"$(nproc)" >&2
fi
