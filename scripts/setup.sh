#!/usr/bin/env bash
# Installs the Debian packages Orrery needs (only those missing) and builds it.
# Usage: scripts/setup.sh [build-dir]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
PKGS=(g++ cmake make protobuf-compiler libprotobuf-dev libyaml-cpp-dev nlohmann-json3-dev
      libgoogle-glog-dev libcli11-dev libboost-dev libgtest-dev libgmock-dev libbenchmark-dev libns3-dev libgsl-dev ns3 time
      gnuplot-nox libvalijson-dev libopenmpi-dev openmpi-bin)
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
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >&2
cmake --build "$BUILD_DIR" -j"$(nproc)" >&2
