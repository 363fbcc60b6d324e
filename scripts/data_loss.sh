#!/usr/bin/env bash
# The data-loss test of a sweep's output folder (issue 31), N rounds:
#
#   kill and resume  a sweep is SIGKILLed at random moments — while it simulates,
#                    and while a resume rewrites its log (a torn last line is put
#                    there first so the resume must rewrite) — and run again until
#                    it finishes. After every kill: no row seen finished before is
#                    gone, every whole line of sweep.jsonl is a row of the
#                    uninterrupted sweep, at most its last line is torn, and
#                    sweep.csv is absent or the uninterrupted sweep's byte for byte.
#                    At the end both tables equal that sweep's byte for byte. Then
#                    the finished folder with a torn last row is resumed and killed
#                    at a random moment of its rewrite: no row of it may be lost.
#   full disk        --collectives=/dev/full exits 1 naming the file; a sweep under
#                    a file-size limit (writes fail as on a full disk) exits 1 with
#                    its log in whole lines, and the resume finishes the same table.
#
# Usage: scripts/data_loss.sh N [ORRERY]     (ctest DataLoss.KillResumeFullDisk runs N=3)
# Prints one line per round and "data_loss: N rounds ... OK" (exit 0), or the
# first broken promise (exit 1).
set -euo pipefail
rounds="${1:?usage: scripts/data_loss.sh N [ORRERY]}"
here="$(cd "$(dirname "$0")/.." && pwd)"
orrery="${2:-${ORRERY:-$here/build/apps/orrery}}"
work="$(mktemp -d /tmp/orrery-data-loss.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "data_loss: FAILED (round $round): $*" >&2; exit 1; }
now_ms() { date +%s%3N; }

# A traces base and 1,000 cheap points.
"$orrery" trace gen-dp --out=t --npus=4 --layers=2 >/dev/null
cat > sys.json <<'EOF'
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4,
 "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
 "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware", "local-mem-bw": 50}
EOF
{
  printf 'base:\n  network: "Ring(4,50GB/s,500ns)"\n  system: sys.json\n  workload: t\naxes:\n'
  printf '  network.dim0.bandwidth_gbps: [%s]\n' "$(seq -s ', ' 10 509)"
  printf '  system.preferred-dataset-splits: [2, 4]\n'
} > spec.yml
start=$(now_ms)
"$orrery" sweep spec.yml --out=ref --jobs=2 --quiet >/dev/null
full_ms=$(($(now_ms) - start))
sort ref/sweep.jsonl > ref.sorted
# How long a resume of the finished sweep takes when it must rewrite its log (a torn last row).
cp -r ref probe && head -c 200 ref/sweep.jsonl >> probe/sweep.jsonl
start=$(now_ms)
"$orrery" sweep spec.yml --out=probe --jobs=2 --quiet >/dev/null 2>&1
rewrite_ms=$(($(now_ms) - start + 20))

# Checks the folder after a kill; $1: the rows seen finished so far (sorted), updated.
check() {
  local dir="$1" seen="$2"
  if [ -f "$dir/sweep.csv" ] && ! cmp -s "$dir/sweep.csv" ref/sweep.csv; then fail "sweep.csv is neither absent nor whole"; fi
  [ -f "$dir/sweep.jsonl" ] || { [ ! -s "$seen" ] || fail "sweep.jsonl is gone with $(wc -l < "$seen") rows"; return 0; }
  # Whole lines only (a torn last line has no newline and is not a row).
  if [ -s "$dir/sweep.jsonl" ] && [ "$(tail -c 1 "$dir/sweep.jsonl" | od -An -c | tr -d ' ')" != '\n' ]; then
    torn=$((torn + 1))
  fi
  head -n "$(wc -l < "$dir/sweep.jsonl")" "$dir/sweep.jsonl" | sort > now.sorted
  local bad; bad=$(comm -23 now.sorted ref.sorted | wc -l)
  [ "$bad" = 0 ] || fail "$bad line(s) of sweep.jsonl are not rows of the uninterrupted sweep"
  local lost; lost=$(comm -23 "$seen" now.sorted | wc -l)
  [ "$lost" = 0 ] || fail "$lost finished row(s) lost ($(wc -l < "$seen") seen before, $(wc -l < now.sorted) now)"
  sort -u now.sorted "$seen" -o "$seen"
}

kills=0; rewrite_kills=0; torn=0; resumes=0; total_start=$(now_ms)
for round in $(seq 1 "$rounds"); do
  rm -rf out; : > seen; n=0
  while :; do
    n=$((n + 1))
    [ "$n" -le 200 ] || fail "no finish after 200 runs"
    # Every third run puts a torn row at the end of the log, so the resume must rewrite it, and is
    # killed early (while it starts and rewrites); the others at a random moment of a whole sweep.
    if [ -f out/sweep.jsonl ] && [ $((n % 3)) = 0 ]; then
      head -c 200 ref/sweep.jsonl >> out/sweep.jsonl
      delay=$((RANDOM % 400))
    elif [ "$n" -le 4 ]; then
      delay=$((RANDOM % (full_ms * 3 / 4 + 1)))  # the first runs of a round: surely before the end
    else
      delay=$((RANDOM % (full_ms + 200)))
    fi
    "$orrery" sweep spec.yml --out=out --jobs=2 --quiet >/dev/null 2>run.err &
    pid=$!
    sleep "$(awk -v ms="$delay" 'BEGIN { printf "%.3f", ms / 1000 }')"
    if kill -9 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null || true
      kills=$((kills + 1))
      if compgen -G "out/.sweep.*.tmp-*" >/dev/null; then rewrite_kills=$((rewrite_kills + 1)); fi
      check out seen
      resumes=$((resumes + 1))
      continue
    fi
    if ! wait "$pid"; then fail "the sweep failed: $(cat run.err)"; fi
    break
  done
  cmp -s out/sweep.jsonl ref/sweep.jsonl || fail "the resumed sweep.jsonl differs from the uninterrupted one"
  cmp -s out/sweep.csv ref/sweep.csv || fail "the resumed sweep.csv differs from the uninterrupted one"

  # The finished sweep with a torn last row, killed while its resume rewrites the log and the tables.
  rm -rf whole && cp -r ref whole && head -c $((RANDOM % 300 + 1)) ref/sweep.jsonl >> whole/sweep.jsonl
  cp ref.sorted seen
  "$orrery" sweep spec.yml --out=whole --jobs=2 --quiet >/dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v ms="$((rewrite_ms / 3 + RANDOM % (rewrite_ms * 2 / 3)))" 'BEGIN { printf "%.3f", ms / 1000 }')"
  if kill -9 "$pid" 2>/dev/null; then
    kills=$((kills + 1))
    if compgen -G "whole/.sweep.*.tmp-*" >/dev/null; then rewrite_kills=$((rewrite_kills + 1)); fi
  fi
  wait "$pid" 2>/dev/null || true
  check whole seen
  "$orrery" sweep spec.yml --out=whole --jobs=2 --quiet >/dev/null 2>&1
  cmp -s whole/sweep.jsonl ref/sweep.jsonl && cmp -s whole/sweep.csv ref/sweep.csv || fail "a killed rewrite: the resume differs"

  # Full disk: a device that is full, and a file-size limit on a sweep.
  set +e
  "$orrery" run --example=default --collectives=/dev/full >/dev/null 2>run.err; rc=$?
  set -e
  [ "$rc" = 1 ] && grep -q 'collectives = "/dev/full": writing it failed (No space left on device)' run.err ||
    fail "--collectives=/dev/full: exit $rc: $(cat run.err)"
  rm -rf disk; : > seen
  set +e
  (ulimit -f $((RANDOM % 300 + 50)); trap '' XFSZ; exec "$orrery" sweep spec.yml --out=disk --jobs=2 --quiet) >/dev/null 2>run.err
  rc=$?
  set -e
  [ "$rc" = 1 ] && grep -q 'failed (File too large)' run.err || fail "full disk: exit $rc: $(cat run.err)"
  check disk seen
  "$orrery" sweep spec.yml --out=disk --jobs=2 --quiet >/dev/null
  cmp -s disk/sweep.jsonl ref/sweep.jsonl && cmp -s disk/sweep.csv ref/sweep.csv || fail "full disk: the resume differs"
  echo "data_loss: round $round: $((n - 1)) kill(s), whole"
done
echo "data_loss: $rounds rounds, $kills SIGKILLs ($rewrite_kills during a rewrite, $torn leaving a torn last row)," \
  "$resumes resumes, $rounds full-disk cases: no finished row lost, every output whole or absent;" \
  "$((($(now_ms) - total_start) / 1000)) s OK"
