#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build (cmake --preset fuzz) in parallel (one per core),
# each on a fresh copy of its seed corpus, so the checked-in corpus only changes by hand. Each runs
# for as long as it still finds new coverage: it stops once QUIET seconds pass without its edge
# coverage growing (an input that reached code no earlier input did), and after SECONDS at most.
# Fails on any finding: a crash, a sanitizer report, an unexpected exception, a leak or an input
# slower than 10 s. The input that found it is kept under BUILD/fuzz-artifacts/.
#   usage: tests/fuzz/run.sh [BUILD_DIR=build-fuzz] [SECONDS=60] [FUZZER...]
#   QUIET=20 (environment): the seconds without new coverage after which a target stops
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build-fuzz}" && pwd)
seconds=${2:-60}
quiet=${QUIET:-20}
shift $(($# > 2 ? 2 : $#))
fuzzers=("$@")
[[ ${#fuzzers[@]} -eq 0 ]] && fuzzers=(spec expression)

work=$(mktemp -d "${TMPDIR:-/tmp}/clustersweep-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
pids=()
for name in "${fuzzers[@]}"; do
  binary="$build/tests/fuzz/fuzz_$name"
  [[ -x "$binary" ]] || { echo "fuzz: $binary is not built (cmake --build --preset fuzz)"; exit 1; }
  mkdir -p "$work/$name" "$build/fuzz-artifacts/$name"
  cp -r "$here/corpus/$name" "$work/$name/corpus"
  # The target's working folder is its own: a spec's relative calibration path resolves there.
  (cd "$work/$name" &&
    exec "$binary" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 -interrupt_exitcode=72 \
      -dict="$here/$name.dict" -artifact_prefix="$build/fuzz-artifacts/$name/" corpus \
      >"$work/$name.log" 2>&1) &
  pids+=($!)
done

# Stops a target (SIGINT: libFuzzer prints its final stats and exits with -interrupt_exitcode)
# once its edge coverage (`cov:` on its NEW lines) has not grown for $quiet seconds after the seed
# corpus was read (INITED). Not the feature count (`ft:`, which NEW lines also report): that counts
# hit-count buckets too and keeps growing for minutes on code already covered.
declare -A last_new=() coverage=() stopped=()
start=$SECONDS
while :; do
  running=0
  for i in "${!fuzzers[@]}"; do
    name=${fuzzers[$i]}
    kill -0 "${pids[$i]}" 2>/dev/null || continue
    running=1
    grep -q 'INITED' "$work/$name.log" 2>/dev/null || continue
    n=$(grep -o 'cov: [0-9]*' "$work/$name.log" | tail -n 1 || true)
    if [[ ${coverage[$name]:-} != "$n" ]]; then
      coverage[$name]=$n
      last_new[$name]=$SECONDS
    elif ((SECONDS - last_new[$name] >= quiet)) && [[ -z ${stopped[$name]:-} ]]; then
      stopped[$name]=$((SECONDS - start))
      kill -INT "${pids[$i]}" 2>/dev/null || true
    fi
  done
  ((running)) || break
  sleep 1
done

failed=()
for i in "${!fuzzers[@]}"; do
  name=${fuzzers[$i]}
  code=0
  wait "${pids[$i]}" || code=$?
  # 0: ran to SECONDS; 72 (-interrupt_exitcode): stopped here for lack of new coverage.
  if [[ $code -eq 0 || ( $code -eq 72 && -n ${stopped[$name]:-} ) ]]; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name.log" | grep -o '[0-9]*$' ||
      true)
    cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$work/$name.log" | tail -n 1 || true)
    if [[ -n ${stopped[$name]:-} ]]; then
      echo "fuzz: $name: no finding in ${stopped[$name]}s, no new coverage in its last ${quiet}s (${runs:-?} inputs, ${cov:-?})"
    else
      echo "fuzz: $name: no finding in ${seconds}s, still finding new coverage (${runs:-?} inputs, ${cov:-?})"
    fi
  else
    failed+=("$name")
    echo "fuzz: $name: FINDING (exit $code); its log:"
    cat "$work/$name.log"
    echo "fuzz: $name: the input is in $build/fuzz-artifacts/$name/; replay it with"
    echo "  $build/tests/fuzz/fuzz_$name FILE"
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in: ${failed[*]} (docs/testing.md says how to keep one as a regression)"
  exit 1
fi
