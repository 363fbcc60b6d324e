#!/usr/bin/env bash
# The search's lower bound (SymbolicCost::lower_s) against the simulation on
# search spaces larger than the test suite's: every survivor of each space
# simulated (twins too), none may finish before its bound. Builds and runs
# bench/search_bound_bench.cc; exit 1 on a violation.
# Usage: bench/search_bound.sh [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
nice cmake --build "$build" -j2 --target search_bound_bench > /dev/null
/usr/bin/time -f "wall %e s, user %U s, sys %S s, peak %M KiB" nice "$build/bench/search_bound_bench"
