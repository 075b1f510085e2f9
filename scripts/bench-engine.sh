#!/usr/bin/env bash
# Engine benchmarks (not tests): reproduces the numbers of docs/engine.md on this machine.
#   1. stress-10m (keep = all) on 2 ranks: points/s vs the estimator's single-core rate
#      (clustersweep bench), and store MB/s vs dd to the same disk.
#   2. huge-100m (>= 100M points, keep = best-per-design) on 2 ranks: wall time.
#   3. a compute-bound sweep (stress-10m as best-per-design) on 1 vs 2 ranks: speedup.
# Usage: scripts/bench-engine.sh [path/to/clustersweep] [scratch dir]
set -euo pipefail
bin=$(realpath "${1:-build/bin/clustersweep}")
scratch=${2:-${TMPDIR:-/tmp}/clustersweep-bench}
cd "$(dirname "$0")/.."
mkdir -p "$scratch"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
ranks=2

# The "N points/s" figure of a run's report line.
rate() { sed -n 's/.*(\([0-9]*\) points\/s).*/\1/p' | tail -1; }
# The "in S s" evaluation time of a run's report line.
eval_time() { sed -n 's/.* evaluated in \([0-9.]*\) s .*/\1/p' | tail -1; }

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
bench=$("$bin" bench --seconds 3 | sed -n 's/evaluations_per_second: //p')
echo "estimator, one core (clustersweep bench): $bench evaluations/s"

echo "== 1. stress-10m, keep = all, $ranks ranks"
rm -f "$scratch"/stress.h5*
start=$(date +%s.%N)
out=$(mpiexec -n $ranks "$bin" run examples/stress-10m.toml -o "$scratch/stress.h5" --no-summary --progress none)
wall=$(echo "$(date +%s.%N) - $start" | bc)
echo "$out"
bytes=$(stat -c %s "$scratch/stress.h5")
points_per_s=$(echo "$out" | rate)
seconds=$(echo "$out" | eval_time)
echo "wall (incl. MPI start-up, creation, summary-free finish): ${wall} s"
echo "engine: $points_per_s points/s = $(echo "scale=2; $points_per_s / ($bench * $ranks)" | bc) x (bench rate x $ranks ranks); the target is >= 0.5"
echo "store: $((bytes / 1000000)) MB written in $seconds s = $(echo "scale=0; $bytes / $seconds / 1000000" | bc) MB/s"
rm -f "$scratch/stress.h5"
sync
mb=$((bytes / 1048576))
dd_buffered=$(dd if=/dev/zero of="$scratch/dd.bin" bs=1M count=$mb 2>&1 | sed -n 's/.*, \([0-9.]* [MG]B\/s\)/\1/p')
rm -f "$scratch/dd.bin"; sync
dd_synced=$(dd if=/dev/zero of="$scratch/dd.bin" bs=1M count=$mb conv=fdatasync 2>&1 | sed -n 's/.*, \([0-9.]* [MG]B\/s\)/\1/p')
rm -f "$scratch/dd.bin"
echo "dd of the same size to the same disk: $dd_buffered (page cache, like the run), $dd_synced (with fdatasync)"

echo "== 2. huge-100m, keep = best-per-design, $ranks ranks"
rm -f "$scratch"/huge.h5*
start=$(date +%s.%N)
mpiexec -n $ranks "$bin" run examples/huge-100m.toml -o "$scratch/huge.h5" --no-summary --progress none
echo "wall: $(echo "$(date +%s.%N) - $start" | bc) s"
rm -f "$scratch"/huge.h5*

echo "== 3. compute-bound sweep (stress-10m as best-per-design): 1 vs $ranks ranks"
sed 's/^keep = "all"/keep = "best-per-design"/' examples/stress-10m.toml > "$scratch/compute.toml"
rm -f "$scratch"/c1.h5* "$scratch"/c2.h5*
one=$("$bin" run "$scratch/compute.toml" -o "$scratch/c1.h5" --no-summary --progress none)
two=$(mpiexec -n $ranks "$bin" run "$scratch/compute.toml" -o "$scratch/c2.h5" --no-summary --progress none)
echo "$one"
echo "$two"
t1=$(echo "$one" | eval_time)
t2=$(echo "$two" | eval_time)
echo "speedup -n $ranks vs -n 1: $(echo "scale=2; $t1 / $t2" | bc)x (target >= 1.8x on an otherwise idle machine)"
rm -f "$scratch"/c1.h5* "$scratch"/c2.h5* "$scratch/compute.toml"
