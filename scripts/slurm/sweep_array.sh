#!/usr/bin/env bash
#SBATCH --job-name=orrery-sweep
#SBATCH --output=orrery-sweep-%A_%a.out
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --requeue
#SBATCH --open-mode=append
# An `orrery sweep` over a Slurm job array: array task i runs shard i+1 of N
# (`orrery sweep SPEC --shard=(i+1)/N --out=DIR`), i.e. every N-th point of
# the canonical enumeration, many points per task, on --cpus-per-task threads.
# Each shard writes its own DIR/sweep.shard-I-of-N.{jsonl,csv}, so the tasks
# share DIR (on a shared file system) without touching each other's files;
# `scripts/slurm/merge.sh DIR` unions them afterwards.
#
# Submit (from a login node; the script submits itself as an array):
#   scripts/slurm/sweep_array.sh SPEC.yml DIR --tasks=N [--cap=C] [-- SBATCH_ARGS...] [--- SWEEP_ARGS...]
# which runs   sbatch --array=0-(N-1)%C SBATCH_ARGS scripts/slurm/sweep_array.sh SPEC.yml DIR SWEEP_ARGS
# and prints the job id. --cap (default 8) is how many tasks run at once.
# Or call sbatch yourself:  sbatch --array=0-63%8 scripts/slurm/sweep_array.sh SPEC.yml DIR
#
# Resumable: a task that is killed (time limit, preemption, node failure) and
# run again — `scontrol requeue JOBID_TASK`, or the same submission again —
# keeps the rows its shard already has and runs the rest (orrery sweep resumes
# by point hash); a finished shard reruns in seconds, doing nothing.
#
# Env: ORRERY (default: `orrery` on PATH, else build/apps/orrery beside this script).
set -euo pipefail

usage() {
  sed -n '/^# Submit/,/^# Env/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  # Submitting.
  [ $# -ge 2 ] || usage
  spec="$1"; dir="$2"; shift 2
  tasks=""; cap=8; sbatch_args=(); sweep_args=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --tasks=*) tasks="${1#--tasks=}" ;;
      --cap=*) cap="${1#--cap=}" ;;
      --) shift; while [ $# -gt 0 ] && [ "$1" != "---" ]; do sbatch_args+=("$1"); shift; done; continue ;;
      ---) shift; sweep_args=("$@"); break ;;
      *) echo "sweep_array.sh: unknown argument '$1'" >&2; usage ;;
    esac
    shift
  done
  [[ "$tasks" =~ ^[1-9][0-9]*$ ]] || { echo "sweep_array.sh: --tasks=N (N >= 1) is required, got '$tasks'" >&2; exit 2; }
  [[ "$cap" =~ ^[1-9][0-9]*$ ]] || { echo "sweep_array.sh: --cap=C needs C >= 1, got '$cap'" >&2; exit 2; }
  [ -f "$spec" ] || { echo "sweep_array.sh: $spec: no such sweep spec" >&2; exit 2; }
  mkdir -p "$dir"
  # sbatch runs a spooled copy of this script, so the binary is resolved here and exported.
  if [ -z "${ORRERY:-}" ]; then
    if command -v orrery >/dev/null; then
      ORRERY="$(command -v orrery)"
    else
      ORRERY="$(cd "$(dirname "$0")/../.." && pwd)/build/apps/orrery"
    fi
  fi
  [ -x "$ORRERY" ] || { echo "sweep_array.sh: $ORRERY: not an executable orrery (set ORRERY=/path/to/orrery)" >&2; exit 2; }
  export ORRERY
  spec="$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")"
  dir="$(cd "$dir" && pwd)"
  exec sbatch --parsable --array="0-$((tasks - 1))%$cap" --chdir="$dir" "${sbatch_args[@]}" \
    "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "$spec" "$dir" "${sweep_args[@]}"
fi

# An array task.
[ $# -ge 2 ] || usage
spec="$1"; dir="$2"; shift 2
count="${SLURM_ARRAY_TASK_COUNT:-$((SLURM_ARRAY_TASK_MAX + 1))}"
shard="$((SLURM_ARRAY_TASK_ID + 1))/$count"
ORRERY="${ORRERY:-orrery}"
echo "task ${SLURM_ARRAY_TASK_ID} of ${count} on $(hostname): $ORRERY sweep $spec --shard=$shard --out=$dir" >&2
exec "$ORRERY" sweep "$spec" --shard="$shard" --out="$dir" --jobs="${SLURM_CPUS_PER_TASK:-1}" --quiet "$@"
