#!/usr/bin/env bash
# CTest's fixture for the real-Slurm tests (tests/slurm/cluster/CMakeLists.txt): one cluster per
# ctest run, shared by every test that needs it, instead of one per test process.
#
#   fixture.sh start SCRIPT DIR   start the cluster of SCRIPT (scripts/local-slurm.sh or
#                                 scripts/multinode-slurm.sh) in DIR, watched by ctest's PID (a
#                                 ctest that is killed takes the cluster with it)
#   fixture.sh stop SCRIPT DIR    stop it and delete DIR
#
# Where Slurm cannot run (SCRIPT exits 77), `start` succeeds and leaves the reason in DIR/skip:
# the tests then skip, each with that reason, as they do when they start a cluster themselves.
set -euo pipefail
[[ $# -eq 3 && ( $1 == start || $1 == stop ) ]] || { echo "usage: $0 start|stop SCRIPT DIR" >&2; exit 2; }
action=$1 script=$2 dir=$3

if [[ $action == stop ]]; then
  code=0
  bash "$script" stop "$dir" || code=$?
  [[ -n ${CLUSTERSWEEP_KEEP_SLURM_DIR:-} ]] || rm -rf "$dir"
  exit "$code"
fi

# A cluster left over from a run that was killed before its cleanup: stop it first.
[[ -d $dir ]] && { bash "$script" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
mkdir -p "$dir"
code=0
err=$(bash "$script" start "$dir" "$PPID" 2>&1) || code=$?
echo "$err"
if [[ $code -eq 77 ]]; then
  echo "$err" >"$dir/skip"
  exit 0
fi
exit "$code"
