#!/usr/bin/env bash
# A private single-node Slurm cluster on localhost, for the real-scheduler tests.
#
#   scripts/local-slurm.sh start DIR [OWNER_PID]  start munged, slurmctld and slurmd with everything
#                                                 in DIR; with OWNER_PID, also stop them when that
#                                                 process is gone (a test killed on a timeout)
#   scripts/local-slurm.sh stop DIR    cancel our jobs, stop the three daemons by their recorded PIDs
#   scripts/local-slurm.sh status DIR  exit 0 when the cluster in DIR answers
#
# Everything lives in DIR: config, munge key and socket, state, spool, logs, PIDs. The cluster uses
# its own free TCP ports and its own munge socket, so a stock slurmctld/munged on the machine is
# neither needed nor touched; `stop` kills only the PIDs that `start` recorded. After `start`, run
# `source DIR/env` to point the Slurm client commands (sbatch, squeue, ...) at this cluster.
#
# Exit codes: 0 ok; 1 a daemon failed (its log is printed); 77 Slurm cannot run here (not root,
# packages missing): the tests skip with the printed reason.
set -euo pipefail

usage() { echo "usage: $0 start DIR [OWNER_PID] | stop DIR | status DIR" >&2; exit 2; }
[[ $# -eq 2 || ( $# -eq 3 && ( $1 == start || $1 == watch ) ) ]] || usage
action=$1
dir=$2
owner=${3:-}

cannot_run() { echo "local-slurm: cannot run Slurm here: $*" >&2; exit 77; }
log() { echo "local-slurm: $*" >&2; }

# A PID recorded by `start` that is still the daemon we started (guards against PID reuse).
live_pid() {
  local name=$1 file="$dir/run/$1.pid" pid
  [[ -f $file ]] || return 1
  pid=$(<"$file")
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$name" || return 1
  echo "$pid"
}

# Sends SIGTERM to the named daemons at once, waits up to 10 s for them to exit, then SIGKILLs
# whatever is left.
stop_daemons() {
  local name pid pids=()
  for name in "$@"; do
    if pid=$(live_pid "$name"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$name:$pid")
    fi
    rm -f "$dir/run/$name.pid"
  done
  for _ in $(seq 100); do
    local alive=0
    for name in "${pids[@]}"; do [[ -e /proc/${name#*:} ]] && alive=1; done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  for name in "${pids[@]}"; do
    pid=${name#*:}
    if [[ -e /proc/$pid ]]; then
      log "${name%%:*} (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

stop_cluster() {
  if [[ -f $dir/etc/slurm.conf ]] && live_pid slurmctld >/dev/null; then
    export SLURM_CONF=$dir/etc/slurm.conf
    # Our cluster's jobs only: SLURM_CONF points at our slurmctld.
    scancel --quiet -u "$(id -un)" 2>/dev/null || true
    for _ in $(seq 100); do
      [[ -z $(squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  stop_daemons slurmd slurmctld
  stop_daemons munged
  [[ $action == watch ]] || stop_daemons watch
}

free_ports() {  # two distinct free TCP ports on localhost
  /usr/bin/python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  log "timed out after ${seconds} s waiting for $what"
  return 1
}

fail_start() {
  log "start failed: $*"
  for f in "$dir"/log/munged.log "$dir"/log/slurmctld.log "$dir"/log/slurmd.log; do
    [[ -f $f ]] && { echo "---- $f (last 20 lines)" >&2; tail -n 20 "$f" >&2; }
  done
  stop_cluster
  exit 1
}

node_idle() { sinfo -h -N -o %t | grep -qx 'idle'; }

start_cluster() {
  [[ $(id -u) -eq 0 ]] || cannot_run "slurmd must run as root to launch jobs (running as $(id -un))"
  local tool
  for tool in munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin command -v "$tool" >/dev/null ||
      cannot_run "$tool not found; install slurm-wlm and munge (scripts/install-deps.sh --test)"
  done
  export PATH=$PATH:/usr/sbin
  if live_pid slurmctld >/dev/null; then
    log "a cluster already runs in $dir; stop it first"
    exit 1
  fi

  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  mkdir -p "$dir"/{etc,state,spool,log,run,munge,tmp}
  chmod 755 "$dir" "$dir/munge"  # munged and job steps must be able to enter the socket folder
  rm -f "$dir"/run/*.pid

  local host cpus mem ports ctld_port slurmd_port
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  [[ -n $mem ]] || mem=1000
  read -r ctld_port slurmd_port <<<"$(free_ports)"
  first_job_id=$(( (ctld_port % 1000) * 1000 + 1 ))

  # munge: own key, socket, pid, log and seed files.
  rm -f "$dir/etc/munge.key"
  mungekey -c -k "$dir/etc/munge.key" >/dev/null
  chmod 600 "$dir/etc/munge.key"
  local socket=$dir/munge/munge.socket
  setsid munged -F -f --key-file="$dir/etc/munge.key" --socket="$socket" \
    --pid-file="$dir/run/munged.daemon.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/state/munged.seed" </dev/null >>"$dir/log/munged.out" 2>&1 &
  echo $! >"$dir/run/munged.pid"
  wait_for 10 "munged's socket" test -S "$socket" || fail_start "munged did not start"

  cat >"$dir/etc/slurm.conf" <<EOF
# Written by scripts/local-slurm.sh: a private single-node cluster for tests.
ClusterName=cstest$$
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
# Job ids and the PMIx client folders (under TmpFS, named after job ids) must not collide with
# another cluster running on this machine at the same time (the tests start one per process).
FirstJobId=$first_job_id
TmpFS=$dir/tmp
SlurmdSpoolDir=$dir/spool/slurmd.%n
SlurmctldPidFile=$dir/run/slurmctld.daemon.pid
SlurmdPidFile=$dir/run/slurmd.daemon.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SwitchType=switch/none
MpiDefault=pmix
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
MailProg=/bin/true
ReturnToService=2
# Keep finished jobs visible to scontrol for 10 minutes; kill 5 s after a time-limit SIGTERM.
MinJobAge=600
KillWait=5
OverTimeLimit=0
InactiveLimit=0
SlurmctldTimeout=60
SlurmdTimeout=300
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  # Tells any version of this script (and the tests) which daemons and config are ours.
  cat >"$dir/env" <<EOF
export SLURM_CONF=$dir/etc/slurm.conf
export PATH=\$PATH:/usr/sbin
EOF
  export SLURM_CONF=$dir/etc/slurm.conf
  # Clients must not inherit a job's environment from whoever runs the tests.
  unset SLURM_JOB_ID SLURM_JOBID

  setsid slurmctld -D -i -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
  echo $! >"$dir/run/slurmctld.pid"
  wait_for 20 "slurmctld to answer" scontrol ping || fail_start "slurmctld did not come up"
  scontrol ping | grep -q UP || fail_start "slurmctld is not UP"

  setsid slurmd -D -f "$SLURM_CONF" -N "$host" </dev/null >>"$dir/log/slurmd.out" 2>&1 &
  echo $! >"$dir/run/slurmd.pid"
  wait_for 30 "node $host to become idle" node_idle || fail_start "slurmd did not register"
  if [[ -n $owner ]]; then
    setsid bash "$0" watch "$dir" "$owner" </dev/null >>"$dir/log/watch.out" 2>&1 &
    echo $! >"$dir/run/watch.pid"
  fi
  log "cluster up in $dir (slurmctld port $ctld_port, node $host, $cpus CPUs); source $dir/env"
}

# Stops the cluster once process $owner has exited, unless `stop` came first.
watch_owner() {
  while kill -0 "$owner" 2>/dev/null; do
    sleep 2
    live_pid slurmctld >/dev/null || exit 0
  done
  log "owner process $owner is gone; stopping the cluster in $dir"
  stop_cluster
}

case $action in
  start) start_cluster ;;
  watch)
    export PATH=$PATH:/usr/sbin
    watch_owner
    ;;
  stop)
    [[ -d $dir ]] || exit 0
    dir=$(cd "$dir" && pwd)
    export PATH=$PATH:/usr/sbin
    stop_cluster
    ;;
  status)
    [[ -f $dir/etc/slurm.conf ]] || exit 1
    SLURM_CONF=$dir/etc/slurm.conf scontrol ping | grep -q UP
    ;;
  *) usage ;;
esac
