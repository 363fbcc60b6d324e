#!/usr/bin/env bash
# A one-node Slurm on this machine, for real: installs Debian's slurm-wlm and
# munge if missing (idempotent; we run as root), starts munged (unless one
# answers already) and slurmctld + slurmd on localhost from a generated
# slurm.conf in a temporary folder, submits a small sweep as a job array
# (scripts/slurm/sweep_array.sh: 4 tasks, at most 2 at once) and the merge as
# a job that waits for it (scripts/slurm/merge.sh --after), and compares the table byte for byte
# with a single-process `orrery sweep` of the same spec. It then cuts one
# shard back as a kill mid-row leaves it and submits the same array again:
# that task redoes only its missing points, the others find their shards done,
# and the merged table is the same again.
# The daemons it started are stopped on exit.
#
# Usage: scripts/slurm/local_cluster.sh [--no-install] [--keep] [--tasks=N] [--cap=C]
#   --no-install  do not apt-get; skip (exit 77) when Slurm is not installed
#   --keep        leave the daemons running and the temporary folder in place
# Env: ORRERY (default build/apps/orrery).
# Exit: 0 all matched, 1 a mismatch or a failed task, 2 bad usage, 77 cannot run here (ctest: skipped).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ORRERY="${ORRERY:-$ROOT/build/apps/orrery}"
install=1; keep=0; tasks=4; cap=2
for a in "$@"; do
  case "$a" in
    --no-install) install=0 ;;
    --keep) keep=1 ;;
    --tasks=*) tasks="${a#--tasks=}" ;;
    --cap=*) cap="${a#--cap=}" ;;
    *) sed -n '/^# Usage/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
skip() { echo "local_cluster.sh: SKIP: $*"; exit 77; }
say() { echo "== $*"; }

[ "$(id -u)" = 0 ] || skip "needs root: it starts munged and the Slurm daemons (run it as root, or see README 'Sweeps on Slurm')"
[ -x "$ORRERY" ] || { echo "local_cluster.sh: $ORRERY: build orrery first (or set ORRERY)" >&2; exit 2; }
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  ((install)) || skip "Slurm is not installed (missing: ${missing[*]}); apt-get install slurm-wlm munge, or run without --no-install"
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

T="$(mktemp -d /tmp/orrery-slurm.XXXXXX)"
chmod 755 "$T"
pids=()
cleanup() {
  local code=$?
  if ((keep)); then
    echo "local_cluster.sh: kept: SLURM_CONF=$T/slurm.conf, daemons ${pids[*]:-none}"
  else
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    sleep 1
    rm -rf "$T"
  fi
  exit $code
}
trap cleanup EXIT

# munge: the key the package made (or a new one), and munged unless one already answers.
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
    chown -R munge:munge /etc/munge
    chmod 700 /etc/munge
    chmod 400 /etc/munge/munge.key
  fi
  mkdir -p /run/munge /var/lib/munge /var/log/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 20); do [ -s /run/munge/munged.pid ] && break; sleep 0.2; done
  pids+=("$(cat /run/munge/munged.pid)")
  say "started munged (pid ${pids[-1]})"
fi
munge -n </dev/null | unmunge >/dev/null || { echo "local_cluster.sh: munge does not work" >&2; exit 1; }

# slurm.conf: one node (this machine as slurmd -C describes it) on 127.0.0.1,
# ports of its own, no accounting, no cgroups; a 1-CPU task per CPU at once.
node="$(slurmd -C | head -n 1)"
host="$(echo "$node" | sed 's/^NodeName=\([^ ]*\).*/\1/')"
mkdir -p "$T/state" "$T/spool" "$T/out"
cat > "$T/slurm.conf" <<EOF
ClusterName=orrerylocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
KillWait=5
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$T/slurm.conf"
slurmctld -f "$SLURM_CONF"
for _ in $(seq 50); do [ -s "$T/slurmctld.pid" ] && break; sleep 0.2; done
pids+=("$(cat "$T/slurmctld.pid")")
slurmd -f "$SLURM_CONF"
for _ in $(seq 50); do [ -s "$T/slurmd.pid" ] && break; sleep 0.2; done
pids+=("$(cat "$T/slurmd.pid")")
for _ in $(seq 60); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 0.5; done
sinfo -h -o %T | grep -q idle || { echo "local_cluster.sh: the node did not come up:" >&2; tail -5 "$T/slurmd.log" "$T/slurmctld.log" >&2; exit 1; }
say "Slurm $(sinfo -V | cut -d' ' -f2) up: $(sinfo -h -o '%P %D node, %c CPUs, %T')"

# The sweep: a tiny generated model, 4 x 3 bandwidths x 2 strategies x ZeRO 0/1, filtered.
cat > "$T/model.yml" <<EOF
name: small
layers: 4
hidden: 256
heads: 8
vocab: 1024
seq_len: 128
EOF
echo '{"roofline-enabled": 1, "peak-perf": 100, "local-mem-bw": 2000, "preferred-dataset-splits": 2}' > "$T/sys.json"
cat > "$T/sweep.yml" <<EOF
base:
  network: "Ring(4,100GB/s,500ns)_Switch(2,25GB/s,2us)"
  system: sys.json
  generate: "--model=$T/model.yml --tp=4 --dp=2 --microbatches=4"
axes:
  network.dim0.bandwidth_gbps: [50, 100, 200, 400]
  network.dim1.bandwidth_gbps: [12.5, 25, 50]
  gen.zero: [0, 1]
zip:
  gen.tp: [2, 4]
  gen.dp: [4, 2]
filters: ["dim1.bandwidth_gbps * 2 <= dim0.bandwidth_gbps"]
EOF
say "$("$ORRERY" sweep "$T/sweep.yml" --dry-run | head -n 1)"

# Each task's orrery runs through a wrapper that logs when it starts and ends
# (ns), to count how many ran at once.
cat > "$T/orrery-timed" <<EOF
#!/bin/sh
echo "\$(date +%s%N) +1" >> "$T/times"
"$ORRERY" "\$@"
code=\$?
echo "\$(date +%s%N) -1" >> "$T/times"
exit \$code
EOF
chmod +x "$T/orrery-timed"
wait_job() {  # JOB: waits until the array has left the queue
  local job="$1"
  for _ in $(seq 1500); do
    squeue -h -j "$job" 2>/dev/null | grep -q . || return 0
    sleep 0.2
  done
  echo "local_cluster.sh: job $job still queued after 300 s" >&2
  exit 1
}
most_at_once() { sort -n "$T/times" | awk '{n += $2; if (n > m) m = n} END {print m + 0}'; }
states() { scontrol -o show job "$1" | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }

job="$(ORRERY="$T/orrery-timed" "$ROOT/scripts/slurm/sweep_array.sh" "$T/sweep.yml" "$T/out" --tasks="$tasks" --cap="$cap" -- \
  --output="$T/out/task-%a.out")"
say "submitted job array $job: $tasks tasks, at most $cap at once (--array=0-$((tasks - 1))%$cap)"
merge_job="$(ORRERY="$ORRERY" "$ROOT/scripts/slurm/merge.sh" "$T/out" "$T/sweep.yml" --after="$job")"
say "submitted the merge as job $merge_job, to run after job $job (scripts/slurm/merge.sh --after=$job)"
wait_job "$job"
most="$(most_at_once)"
say "job $job done:$(states "$job") at most $most tasks ran at once"
for f in "$T"/out/task-*.out; do echo "   $(basename "$f"): $(tail -n 1 "$f")"; done
if scontrol -o show job "$job" | grep -o 'JobState=[A-Z_]*' | grep -q -v COMPLETED; then
  echo "local_cluster.sh: a task did not complete: $(states "$job")" >&2
  exit 1
fi
((most <= cap)) || { echo "local_cluster.sh: $most tasks ran at once, more than the cap $cap" >&2; exit 1; }

wait_job "$merge_job"
say "merge job $merge_job:$(states "$merge_job") its output:"
sed 's/^/   /' "$T"/out/orrery-merge-"$merge_job".out
scontrol -o show job "$merge_job" | grep -q 'JobState=COMPLETED' || { echo "local_cluster.sh: the merge job failed" >&2; exit 1; }
"$ORRERY" sweep "$T/sweep.yml" --jobs=2 --quiet --out="$T/single" >/dev/null
if cmp -s "$T/out/sweep.csv" "$T/single/sweep.csv" && cmp -s "$T/out/sweep.jsonl" "$T/single/sweep.jsonl"; then
  say "merged array output == single-process sweep, byte for byte ($(($(wc -l < "$T/out/sweep.csv") - 1)) rows)"
else
  echo "local_cluster.sh: the merged table differs from the single-process sweep" >&2
  diff "$T/out/sweep.csv" "$T/single/sweep.csv" | head >&2
  exit 1
fi

# The same array again, after task 1 "died" mid-row (its shard cut to 3 rows
# and half a fourth, as a kill leaves it): task 1 redoes the rest, the others
# find their shards done, and the merged table is the same.
shard2="$T/out/sweep.shard-2-of-$tasks.jsonl"
{ head -n 3 "$shard2"; sed -n 4p "$shard2" | head -c 30; } > "$T/cut" && mv "$T/cut" "$shard2"
rm -f "$T"/out/task-*.out "$T/out/sweep.csv" "$T/out/sweep.jsonl"
job2="$(ORRERY="$ORRERY" "$ROOT/scripts/slurm/sweep_array.sh" "$T/sweep.yml" "$T/out" --tasks="$tasks" --cap="$cap" -- \
  --output="$T/out/task-%a.out")"
wait_job "$job2"
say "task 1's shard cut to 3 rows and half a row; resubmitted as job $job2:$(states "$job2")"
for f in "$T"/out/task-*.out; do echo "   $(basename "$f"): $(tail -n 1 "$f")"; done
for f in "$T"/out/task-*.out; do
  want=' 0 simulated'
  [ "$(basename "$f")" = task-1.out ] && want=' simulated, 3 already done'
  grep -q "$want" "$f" || { echo "local_cluster.sh: $(basename "$f"): expected '$want'" >&2; exit 1; }
done
ORRERY="$ORRERY" "$ROOT/scripts/slurm/merge.sh" "$T/out" "$T/sweep.yml" > /dev/null
cmp -s "$T/out/sweep.csv" "$T/single/sweep.csv" || { echo "local_cluster.sh: the resumed array's table differs" >&2; exit 1; }
say "merged again: == single-process sweep, byte for byte"
say "OK"
