#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build (cmake --preset fuzz) for SECONDS each, in parallel
# (one per core), each on a fresh copy of its seed corpus, so the checked-in corpus only changes
# by hand. Fails on any finding: a crash, a sanitizer report, an unexpected exception, a leak or
# an input slower than 10 s. The input that found it is kept under BUILD/fuzz-artifacts/.
#   usage: tests/fuzz/run.sh [BUILD_DIR=build-fuzz] [SECONDS=60] [FUZZER...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build-fuzz}" && pwd)
seconds=${2:-60}
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
    exec "$binary" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -dict="$here/$name.dict" -artifact_prefix="$build/fuzz-artifacts/$name/" corpus \
      >"$work/$name.log" 2>&1) &
  pids+=($!)
done

failed=()
for i in "${!fuzzers[@]}"; do
  name=${fuzzers[$i]}
  if wait "${pids[$i]}"; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name.log" | grep -o '[0-9]*$' ||
      true)
    echo "fuzz: $name: no finding in ${seconds}s (${runs:-?} inputs)"
  else
    failed+=("$name")
    echo "fuzz: $name: FINDING; its log:"
    cat "$work/$name.log"
    echo "fuzz: $name: the input is in $build/fuzz-artifacts/$name/; replay it with"
    echo "  $build/tests/fuzz/fuzz_$name FILE"
  fi
done
if ((${#failed[@]})); then
  echo "fuzz: findings in: ${failed[*]} (docs/testing.md says how to keep one as a regression)"
  exit 1
fi
