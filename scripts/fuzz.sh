#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, build-fuzz/) and fuzzes one
# of them for SECONDS seconds. New crash, timeout and out-of-memory inputs are
# saved into tests/fuzz/corpus/TARGET/ (check them in once fixed); the run's
# growing corpus stays in build-fuzz/work/TARGET/.
# Usage: scripts/fuzz.sh TARGET SECONDS      (scripts/fuzz.sh list: the targets)
# Env: FUZZ_MAX_LEN (default 4096), FUZZ_TIMEOUT_S (60; under load, with other fuzzers or a
#      build on the same cores, 10 s alarms fired on inputs that replay in milliseconds),
#      FUZZ_RSS_MB (2048),
#      CC/CXX (default clang-14/clang++-14), FUZZ_JOBS (build jobs, 2),
#      FUZZ_KEEP_GOING=1: do not stop at the first crash (libFuzzer -fork=1 with
#      -ignore_crashes/-ignore_timeouts/-ignore_ooms; every finding is saved).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
TARGETS="et_reader network_yaml system_json remote_memory_json memory_yaml comm_group_json notation simulation run_report remote_client remote_peer process_groups trace_sniff model_yaml sweep_spec sweep_rows search_args csv_reader heterogeneity_yaml"
if [ "${1:-}" = list ] || [ $# -ne 2 ]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS"; echo "targets: $TARGETS"
  [ "${1:-}" = list ]; exit $?
fi
TARGET="$1" SECONDS_="$2"
case " $TARGETS " in *" $TARGET "*) ;; *) echo "fuzz.sh: unknown target '$TARGET'; targets: $TARGETS" >&2; exit 2;; esac
[[ "$SECONDS_" =~ ^[0-9]+$ ]] && [ "$SECONDS_" -gt 0 ] || { echo "fuzz.sh: SECONDS must be a positive integer, got '$SECONDS_'" >&2; exit 2; }
CC="${CC:-clang-14}" CXX="${CXX:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "fuzz.sh: $CXX not found (libFuzzer needs clang)" >&2; exit 2; }
export CCACHE_DIR="${CCACHE_DIR:-/work/.ccache}" CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT/..}"
LAUNCHER=(); command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    "${LAUNCHER[@]}" -DORRERY_FUZZ=ON -DORRERY_BUILD_BENCH=OFF >&2
fi
nice -n 19 cmake --build build-fuzz -j"${FUZZ_JOBS:-2}" --target "fuzz_$TARGET" >&2
CORPUS="tests/fuzz/corpus/$TARGET"
WORK="build-fuzz/work/$TARGET"
SEEDS="build-fuzz/seeds"
mkdir -p "$CORPUS" "$WORK"
tests/fuzz/make_seeds.sh "$SEEDS"
mkdir -p "$SEEDS/$TARGET"  # libFuzzer exits on a corpus folder that is not there
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
cd "$ROOT/$CORPUS"  # crash-*, timeout-*, oom-*, slow-unit-* land here
set +e
# The outer timeout guards against a stuck run (a hang seen once in the
# timeout handler itself).
timeout -k 30 "$((SECONDS_ + 120))" nice -n 19 "$ROOT/build-fuzz/tests/fuzz/fuzz_$TARGET" "$ROOT/$WORK" "$ROOT/$CORPUS" "$ROOT/$SEEDS/$TARGET" \
  -max_total_time="$SECONDS_" -max_len="${FUZZ_MAX_LEN:-4096}" -timeout="${FUZZ_TIMEOUT_S:-60}" \
  -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -malloc_limit_mb="${FUZZ_RSS_MB:-2048}" -print_final_stats=1 \
  -report_slow_units="${FUZZ_TIMEOUT_S:-60}" ${FUZZ_KEEP_GOING:+-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1} 2>&1 | tee "$ROOT/build-fuzz/work/$TARGET.log" | grep -E "^#|ERROR|SUMMARY|stat::|artifact" | grep -v -E "^#[0-9]+\s+(NEW|REDUCE)" | tail -n 40
rc=${PIPESTATUS[0]}
set -e
# One process prints stat::number_of_executed_units; -fork=1 (FUZZ_KEEP_GOING) prints none, only
# "#N: cov: ..." lines, the last of which counts every job's executions. No match is no count, not an exit.
LOG="$ROOT/build-fuzz/work/$TARGET.log"
execs=$( (grep -E "^stat::number_of_executed_units" "$LOG" || true) | awk '{print $2}' | tail -n 1)
[ -n "$execs" ] || execs=$( (grep -E "^#[0-9]+: cov:" "$LOG" || true) | tail -n 1 | sed -E 's/^#([0-9]+):.*/\1/')
echo "fuzz.sh: $TARGET: ${execs:-?} executions in ${SECONDS_}s, exit $rc; log build-fuzz/work/$TARGET.log"
ls -1 "$ROOT/$CORPUS" | grep -E "^(crash|timeout|oom|slow-unit|leak)-" | sed 's/^/fuzz.sh: finding: /' || true
exit "$rc"
