#!/usr/bin/env bash
# Unions the shards of a Slurm array sweep (scripts/slurm/sweep_array.sh) in
# DIR into DIR/sweep.csv and DIR/sweep.jsonl (`orrery sweep merge DIR`, which
# refuses a point found in two shards). Given the spec, it also checks that
# every point the spec has (after its filters) is there, and exits 1 naming
# how many are missing (rerun the array: finished shards do nothing).
#
#   scripts/slurm/merge.sh DIR [SPEC.yml]                  merge now
#   scripts/slurm/merge.sh DIR [SPEC.yml] --after=JOBID    submit the merge to run when the array is done
#
# Env: ORRERY (default: `orrery` on PATH, else build/apps/orrery beside this script).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
dir="$1"; shift
spec=""; after=""
for a in "$@"; do
  case "$a" in
    --after=*) after="${a#--after=}" ;;
    *) spec="$a" ;;
  esac
done
if [ -z "${ORRERY:-}" ]; then
  if command -v orrery >/dev/null; then ORRERY="$(command -v orrery)"; else ORRERY="$(cd "$(dirname "$0")/../.." && pwd)/build/apps/orrery"; fi
fi
export ORRERY
if [ -n "$after" ]; then
  self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
  exec sbatch --parsable --job-name=orrery-merge --dependency="afterany:$after" --output="$dir/orrery-merge-%j.out" \
    --wrap="'$self' '$dir' ${spec:+'$spec'}"
fi
"$ORRERY" sweep merge "$dir"
if [ -n "$spec" ]; then
  want="$("$ORRERY" sweep "$spec" --dry-run | head -n 1 | cut -d' ' -f1)"
  have="$(($(wc -l < "$dir/sweep.jsonl")))"
  if [ "$have" != "$want" ]; then
    echo "merge.sh: $dir has $have of the spec's $want points; $((want - have)) missing (rerun the array: finished shards do nothing)" >&2
    exit 1
  fi
  echo "merge.sh: all $want points of $spec are in $dir/sweep.csv"
fi
