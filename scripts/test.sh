#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test build
cd build && ctest --output-on-failure -j"$(nproc)"
