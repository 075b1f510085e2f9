#!/usr/bin/env bash
# A private Slurm cluster of three compute nodes and a controller on this one machine, for the
# multi-node tests (docs/slurm.md, "Across nodes").
#
#   scripts/multinode-slurm.sh start DIR [OWNER_PID]  munged and slurmctld here; nodes n1..n3, each
#                                                     a slurmd in its own network and UTS namespace
#   scripts/multinode-slurm.sh stop DIR         cancel our jobs, stop every daemon by its recorded
#                                               PID, delete the namespaces and the bridge
#   scripts/multinode-slurm.sh status DIR       exit 0 when the controller answers
#   scripts/multinode-slurm.sh kill-node DIR N  SIGKILL node nN's slurmd and every process in its
#                                               namespace (its job steps and ranks): a node dies
#   scripts/multinode-slurm.sh revive-node DIR N  start node nN's slurmd again: the node returns
#
# Each node has its own network namespace (a veth pair to a bridge) and its own hostname (a UTS
# namespace), so Open MPI sees three hosts and talks TCP between them: no shared memory between
# ranks of different nodes. slurmd -N (several daemons on one host) would share one network stack
# and one hostname, and Open MPI would put every rank on one node. The addresses are the
# namespaces' own, 10.234.S.0/24 with S from the controller's port (the controller is 10.234.S.1
# on the bridge); nothing else is touched. DIR is the shared folder of the cluster, as a parallel
# file system is on a real one: the nodes share the machine's mounts.
#
# Exit codes: 0 ok; 1 a daemon failed (its log is printed); 77 the cluster cannot run here (not
# root, no network namespaces, packages missing): the tests skip with the printed reason.
set -euo pipefail

usage() {
  echo "usage: $0 start DIR [OWNER_PID] | stop DIR | status DIR | kill-node DIR N | revive-node DIR N" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
action=$1
dir=$2
arg=${3:-}
readonly nodes=3

cannot_run() { echo "multinode-slurm: cannot run a multi-node cluster here: $*" >&2; exit 77; }
log() { echo "multinode-slurm: $*" >&2; }
export PATH=$PATH:/usr/sbin:/sbin

# A PID recorded by `start` that is still the process we started (guards against PID reuse).
live_pid() {
  local name=$1 pattern=${2:-$1} file="$dir/run/$1.pid" pid
  [[ -f $file ]] || return 1
  pid=$(<"$file")
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$pattern" || return 1
  echo "$pid"
}

# SIGTERM to the named processes, up to 10 s to exit, then SIGKILL.
stop_processes() {
  local name pid pids=()
  for name in "$@"; do
    if pid=$(live_pid "$name" "${name%%-*}"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
    rm -f "$dir/run/$name.pid"
  done
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do [[ -e /proc/$pid ]] && alive=1; done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}

# The names of this cluster's namespaces and bridge, recorded by `start`.
load_names() {
  [[ -f $dir/etc/names ]] || return 1
  # shellcheck source=/dev/null
  source "$dir/etc/names"
}

namespace() { echo "${prefix}n$1"; }

# SIGKILL every process in node N's network namespace.
kill_namespace() {
  local ns pids
  ns=$(namespace "$1")
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
}

stop_cluster() {
  load_names || return 0
  if [[ -f $dir/etc/slurm.conf ]] && live_pid slurmctld >/dev/null; then
    export SLURM_CONF=$dir/etc/slurm.conf
    scancel --quiet -u "$(id -un)" 2>/dev/null || true
    for _ in $(seq 50); do
      [[ -z $(squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  local n names=()
  for n in $(seq "$nodes"); do names+=("slurmd-n$n"); done
  stop_processes "${names[@]}"
  for n in $(seq "$nodes"); do kill_namespace "$n"; done
  stop_processes slurmctld
  stop_processes munged
  [[ $action == watch ]] || stop_processes watch
  for n in $(seq "$nodes"); do
    ip netns del "$(namespace "$n")" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
}

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
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
  for f in "$dir"/log/*.log; do
    [[ -f $f ]] && { echo "---- $f (last 20 lines)" >&2; tail -n 20 "$f" >&2; }
  done
  stop_cluster
  exit 1
}

nodes_idle() { [[ $(sinfo -h -N -t idle -o %N | sort -u | wc -l) -eq $nodes ]]; }

# Starts node N's slurmd in its namespaces: its own hostname, its own address.
start_slurmd() {
  local n=$1
  mkdir -p "$dir/spool/slurmd.n$n" "$dir/tmp-n$n"
  # nsenter, not `ip netns exec`: that mounts a sysfs of its own, without the cgroup file system
  # slurmd needs. A mount namespace gives the node its own TmpFS (PMIx's folders there are named
  # after the job step, the same on every node), as a node's local /tmp.
  nsenter --net="/run/netns/$(namespace "$n")" unshare --uts --mount --propagation private \
    bash -c "mount --bind '$dir/tmp-n$n' '$dir/tmp' && hostname n$n &&
             exec setsid slurmd -D -N n$n -f '$dir/etc/slurm.conf'" \
    </dev/null >>"$dir/log/slurmd-n$n.out" 2>&1 &
  echo $! >"$dir/run/slurmd-n$n.pid"
}

start_cluster() {
  [[ $(id -u) -eq 0 ]] || cannot_run "network namespaces and slurmd need root (running as $(id -un))"
  local tool
  for tool in ip unshare nsenter munged mungekey slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$tool" >/dev/null ||
      cannot_run "$tool not found; install slurm-wlm, munge and iproute2 (scripts/install-deps.sh --test)"
  done
  if live_pid slurmctld >/dev/null 2>&1; then
    log "a cluster already runs in $dir; stop it first"
    exit 1
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  mkdir -p "$dir"/{etc,state,spool,log,run,munge,tmp}
  chmod 755 "$dir" "$dir/munge"
  rm -f "$dir"/run/*.pid

  local ctld_port slurmd_port subnet
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  subnet="10.234.$((ctld_port % 250 + 1))"
  prefix="cs${ctld_port}"
  bridge="${prefix}br"
  cat >"$dir/etc/names" <<EOF
prefix=$prefix
bridge=$bridge
subnet=$subnet
EOF
  # The network: a bridge holding the controller's address, a veth pair into each node.
  ip link add "$bridge" type bridge 2>/dev/null || cannot_run "cannot create a bridge (no CAP_NET_ADMIN?)"
  ip addr add "$subnet.1/24" dev "$bridge"
  ip link set "$bridge" up
  local n ns
  for n in $(seq "$nodes"); do
    ns=$(namespace "$n")
    ip netns add "$ns" || cannot_run "cannot create network namespaces"
    ip link add "${prefix}v$n" type veth peer name "${prefix}p$n"
    ip link set "${prefix}p$n" netns "$ns"
    ip link set "${prefix}v$n" master "$bridge"
    ip link set "${prefix}v$n" up
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip addr add "$subnet.$((10 + n))/24" dev "${prefix}p$n"
    ip netns exec "$ns" ip link set "${prefix}p$n" up
  done

  rm -f "$dir/etc/munge.key"
  mungekey -c -k "$dir/etc/munge.key" >/dev/null
  chmod 600 "$dir/etc/munge.key"
  local socket=$dir/munge/munge.socket
  setsid munged -F -f --key-file="$dir/etc/munge.key" --socket="$socket" \
    --pid-file="$dir/run/munged.daemon.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/state/munged.seed" </dev/null >>"$dir/log/munged.out" 2>&1 &
  echo $! >"$dir/run/munged.pid"
  wait_for 10 "munged's socket" test -S "$socket" || fail_start "munged did not start"

  local cpus mem
  cpus=$(nproc)
  mem=$(( $(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p') / nodes ))
  cat >"$dir/etc/slurm.conf" <<EOF
# Written by scripts/multinode-slurm.sh: three nodes in their own namespaces, for tests.
ClusterName=csmulti$$
SlurmctldHost=$(hostname -s)($subnet.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
FirstJobId=$(( (ctld_port % 1000) * 1000 + 1 ))
TmpFS=$dir/tmp
SlurmdSpoolDir=$dir/spool/slurmd.%n
SlurmdPidFile=$dir/run/slurmd.%n.daemon.pid
SlurmctldPidFile=$dir/run/slurmctld.daemon.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
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
# A node that died comes back by itself when its slurmd registers again; a job on a node that
# failed is requeued (JobRequeue) and resumes from the store's checkpoint.
ReturnToService=2
JobRequeue=1
MinJobAge=600
KillWait=5
OverTimeLimit=0
InactiveLimit=0
SlurmctldTimeout=60
# A dead node is noticed within about 10 s.
SlurmdTimeout=10
SchedulerType=sched/backfill
NodeName=n1 NodeAddr=$subnet.11 CPUs=$cpus RealMemory=$mem State=UNKNOWN
NodeName=n2 NodeAddr=$subnet.12 CPUs=$cpus RealMemory=$mem State=UNKNOWN
NodeName=n3 NodeAddr=$subnet.13 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$dir/env" <<EOF
export SLURM_CONF=$dir/etc/slurm.conf
export PATH=\$PATH:/usr/sbin
# Open MPI between the nodes: TCP over the namespaces' network only.
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=$subnet.0/24
export OMPI_MCA_oob_tcp_if_include=$subnet.0/24
export PMIX_MCA_ptl_tcp_if_include=$subnet.0/24
EOF
  export SLURM_CONF=$dir/etc/slurm.conf
  unset SLURM_JOB_ID SLURM_JOBID

  setsid slurmctld -D -i -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
  echo $! >"$dir/run/slurmctld.pid"
  wait_for 20 "slurmctld to answer" scontrol ping || fail_start "slurmctld did not come up"
  for n in $(seq "$nodes"); do start_slurmd "$n"; done
  wait_for 60 "nodes n1-n$nodes to become idle" nodes_idle || fail_start "a slurmd did not register"
  if [[ -n $arg ]]; then
    setsid bash "$0" watch "$dir" "$arg" </dev/null >>"$dir/log/watch.out" 2>&1 &
    echo $! >"$dir/run/watch.pid"
  fi
  log "cluster up in $dir: controller $subnet.1:$ctld_port, nodes n1-n$nodes; source $dir/env"
}

watch_owner() {
  while kill -0 "$arg" 2>/dev/null; do
    sleep 2
    live_pid slurmctld >/dev/null || exit 0
  done
  log "owner process $arg is gone; stopping the cluster in $dir"
  stop_cluster
}

case $action in
  start) [[ $# -le 3 ]] || usage; start_cluster ;;
  watch) watch_owner ;;
  stop)
    [[ -d $dir ]] || exit 0
    dir=$(cd "$dir" && pwd)
    stop_cluster
    ;;
  status)
    [[ -f $dir/etc/slurm.conf ]] || exit 1
    SLURM_CONF=$dir/etc/slurm.conf scontrol ping | grep -q UP
    ;;
  kill-node | revive-node)
    [[ $arg =~ ^[1-9]$ && $arg -le $nodes ]] || usage
    dir=$(cd "$dir" && pwd)
    load_names || { log "no cluster in $dir"; exit 1; }
    if [[ $action == kill-node ]]; then
      kill_namespace "$arg"
      rm -f "$dir/run/slurmd-n$arg.pid"
    else
      start_slurmd "$arg"
    fi
    ;;
  *) usage ;;
esac
