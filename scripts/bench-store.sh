#!/usr/bin/env bash
# The store's write speed against an earlier commit, side by side (not a test): builds COMMIT
# (default 848dd7c) in a temporary git worktree with the release preset, then runs its binary and
# this tree's (build/bin/clustersweep) alternately, REPEAT times each, on the same spec, keep
# mode, ranks and MPI transport, and prints each one's best whole-process wall time, its points
# per second and the ratio (this tree / COMMIT). Alternating puts both under the same load from
# whatever else the machine runs; the best run of each is the one least disturbed.
#
# Usage: [REPEAT=3] [SPEC=examples/stress-10m.toml] [KEEP=all] [RANKS=2] [PML=ob1] [COLUMNS=]
#        [BIN=build/bin/clustersweep] [BASE_BIN=path] scripts/bench-store.sh [COMMIT]
#   BASE_BIN: an already built clustersweep to compare with instead of building COMMIT.
#   COLUMNS: the [output] columns setting ("summary", "all"); empty: the spec's own.
#   PML: Open MPI's OMPI_MCA_pml (ob1 skips the start-up probe of network transports a
#        one-machine run does not use); empty: Open MPI's default.
# The spec is this tree's, given to both binaries: a spec that an older version does not read
# fails there with that version's error. Everything goes in one temporary folder (the worktree,
# its build, the stores), removed at exit; nothing else is written.
set -euo pipefail
commit=${1:-848dd7c}
repeat=${REPEAT:-3}
keep=${KEEP:-all}
ranks=${RANKS:-2}
pml=${PML-ob1}
columns=${COLUMNS:-}
cd "$(dirname "$0")/.."
spec=$(realpath "${SPEC:-examples/stress-10m.toml}")
bin=$(realpath "${BIN:-build/bin/clustersweep}")
[ -x "$bin" ] || { echo "bench-store: no clustersweep at $bin (build this tree first)" >&2; exit 2; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-store.XXXXXX")
worktree=""
cleanup() {
  if [ -n "$worktree" ]; then git worktree remove --force "$worktree" 2> /dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${BASE_BIN:-}" ]; then
  base=$(realpath "$BASE_BIN")
  label=$BASE_BIN
else
  sha=$(git rev-parse --verify --quiet "$commit^{commit}") ||
    { echo "bench-store: '$commit' is not a commit of this repository" >&2; exit 2; }
  label=$(git rev-parse --short "$sha")
  worktree=$tmp/src
  git worktree add --detach --quiet "$worktree" "$sha"
  echo "== building $label (release preset) in $worktree"
  launcher=()
  if command -v ccache > /dev/null; then
    # Paths relative to the worktree: a build of the same commit elsewhere hits the same entries.
    export CCACHE_BASEDIR=$worktree
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  (cd "$worktree" && cmake --preset release -B "$tmp/build" "${launcher[@]}" > "$tmp/configure.log" &&
     cmake --build "$tmp/build" -j "$(nproc)" --target clustersweep > "$tmp/build.log") ||
    { tail -30 "$tmp"/*.log >&2; echo "bench-store: building $label failed" >&2; exit 1; }
  base=$tmp/build/bin/clustersweep
fi

# The spec with the keep mode (and columns) asked for.
run_spec=$tmp/spec.toml
output=("keep = \"$keep\"")
[ -n "$columns" ] && output+=("columns = \"$columns\"")
awk -v lines="$(printf '%s\n' "${output[@]}")" '
  /^\[output\]/ { print; print lines; in_output = 1; next }
  /^\[/ { in_output = 0 }
  in_output && /^(keep|columns) *=/ { next }
  { print }' "$spec" > "$run_spec"
grep -q '^\[output\]' "$run_spec" || printf '\n[output]\n%s\n' "$(printf '%s\n' "${output[@]}")" >> "$run_spec"

env_pml=()
[ -n "$pml" ] && env_pml=(OMPI_MCA_pml="$pml")
# run BINARY: one whole-process run into a fresh store (no dirty pages of the last one first);
# prints its wall seconds and the store's rows.
run() {
  local store=$tmp/store.h5 start end
  rm -f "$store"*
  sync
  start=$(date +%s.%N)
  if [ "$ranks" = 1 ]; then
    env "${env_pml[@]}" "$1" run "$run_spec" -o "$store" > "$tmp/run.log" 2>&1
  else
    env "${env_pml[@]}" mpiexec -n "$ranks" "$1" run "$run_spec" -o "$store" > "$tmp/run.log" 2>&1
  fi || { cat "$tmp/run.log" >&2; echo "bench-store: $1 failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$(echo "$end - $start" | bc) $(/usr/bin/python3 -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['rows'])" "$store")"
  rm -f "$store"*
}

echo "== machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $(basename "$spec"), keep = $keep${columns:+, columns = $columns}, $ranks ranks${pml:+, OMPI_MCA_pml=$pml}, $repeat runs each, alternated"
base_walls=() walls=() base_rows="" rows=""
for i in $(seq "$repeat"); do
  read -r w base_rows < <(run "$base")
  base_walls+=("$w")
  read -r w rows < <(run "$bin")
  walls+=("$w")
  printf 'run %d: %s %.2f s, this tree %.2f s\n' "$i" "$label" "${base_walls[-1]}" "${walls[-1]}"
done
[ "$rows" = "$base_rows" ] ||
  echo "note: the stores hold different numbers of rows ($label $base_rows, this tree $rows)"
best_base=$(printf '%s\n' "${base_walls[@]}" | sort -g | head -1)
best=$(printf '%s\n' "${walls[@]}" | sort -g | head -1)
pps_base=$(echo "scale=0; $base_rows / $best_base" | bc)
pps=$(echo "scale=0; $rows / $best" | bc)
printf '%-12s %10s %12s %14s\n' "build" "best (s)" "rows" "points/s"
printf '%-12s %10.2f %12s %14s\n' "$label" "$best_base" "$base_rows" "$pps_base"
printf '%-12s %10.2f %12s %14s\n' "this tree" "$best" "$rows" "$pps"
echo "ratio (this tree / $label, points/s): $(echo "scale=3; $pps / $pps_base" | bc)x"
