#!/usr/bin/env bash
# Builds the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer
# (Debug -O1, build-asan/) and runs ctest; the first report stops the test that
# made it (halt_on_error), so any finding fails the run.
# Usage: scripts/sanitize.sh [ctest args...]
# Env: CXX (default: c++, i.e. gcc; clang++-14 works too), JOBS (default 2).
# Exits 0 with a note when the compiler cannot build with both sanitizers.
# MPI is left out (-DORRERY_MPI=OFF): OpenMPI's own allocations and memory
# hooks are not Orrery's to check; the normal build runs the MPI sweep
# (ctest Sweep.Mpi), this one the --mpi-without-MPI path.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
CXX="${CXX:-c++}"
JOBS="${JOBS:-2}"
# -g1: line tables, enough for the reports' stack traces (file:line). The build is 2.0 GB;
# with -g it was 4.3 GB (19 fuzz replay binaries, most of 100-160 MB), more than a small CI disk holds.
FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1"
if ! echo 'int main(){return 0;}' | "$CXX" $FLAGS -x c++ - -o /tmp/orrery-sanitize-probe.$$ 2>/dev/null; then
  echo "sanitize.sh: $CXX cannot build with -fsanitize=address,undefined; skipping the sanitizer build" >&2
  exit 0
fi
rm -f /tmp/orrery-sanitize-probe.$$
export CCACHE_DIR="${CCACHE_DIR:-/work/.ccache}" CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT/..}"
LAUNCHER=(); command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$CXX" "${LAUNCHER[@]}" \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 $FLAGS" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DORRERY_BUILD_BENCH=OFF -DORRERY_MPI=OFF >&2
cmake --build build-asan -j"$JOBS" >&2
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
cd build-asan
ctest --output-on-failure -j"$JOBS" "$@"
