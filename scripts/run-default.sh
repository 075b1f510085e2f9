#!/usr/bin/env bash
# The main job on the built-in default (make run): a real sweep of examples/quick.toml on every
# core into results/quick.h5, then the summary of the best designs and the Pareto front of time
# to train against cost.
set -euo pipefail
bin=${1:-build/bin/clustersweep}
cd "$(dirname "$0")/.."
mkdir -p results

ranks=$(nproc 2>/dev/null || echo 1)
launch=()
if [ "$ranks" -gt 1 ] && command -v mpiexec >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  launch=(mpiexec -n "$ranks")
fi

"${launch[@]}" "$bin" run examples/quick.toml -o results/quick.h5 --force --no-summary
echo
"$bin" summary results/quick.h5
echo
"$bin" pareto results/quick.h5 --objectives time_to_train_s,cost_usd
