#!/usr/bin/env bash
# Runs the test binaries of an ASan/UBSan build (cmake --preset asan; `make test-asan`), JOBS of
# them at a time (default: one per core; each is one process, or the ranks of its sweeps), longest
# first. Any sanitizer finding fails the run, with the log of the binary that had it.
#   usage: tests/sanitizers/run.sh [BUILD_DIR=build-asan]
#
# What runs (docs/testing.md): the tests of the engine and its store (engine_tests, and
# engine_mpi_tests on 2 ranks), the parsers (base, spaces, slurm), the estimator, jobs, the analysis
# and the calibration. The suites that run the sanitized clustersweep, MPI_Init included
# (MPI_SUITES), run in a second pass without LeakSanitizer: Open MPI leaks in MPI_Init by design,
# through components it loads and unloads, so the stacks have no names a suppression file could
# match; every other check stays on, and the first pass checks leaks in everything else. Left to the
# normal run (SKIP): the brute-force tests of pure computation that the Release run already checks
# and that the other tests of the same code run under ASan on small inputs: the exhaustive
# search-equality tests, the search bounds against every plan of their box, the space counts against
# enumeration and the refit of the shipped site prior (minutes under ASan); the Chromium render
# test, the two tests that make HDF5 1.10 read past a heap object on purpose (ASan stops them inside
# HDF5, which is what the tests show clustersweep survives), and the random-SIGKILL resume test (it
# needs its kills to land while chunks are written, a window the sanitizers' slowdown of the
# evaluation against the writes moves; the normal run proves the resume).
set -euo pipefail
set -f  # the gtest filters' '*' are patterns for gtest, not for the shell
build=$(cd "${1:-build-asan}" && pwd)
jobs=${JOBS:-$(nproc)}
mpi_suites='Agreement.*:RunTest.*:StoreFailures.*:CliTest.*:StoreErrors.*:StackSummaryTest.*:StatusCli.*:SubmitCli.*:MergeRefuses.*:*MergeKeep.*'
skip='Search.EqualsExhaustiveEnumeration*:Search.BoundsAreBelowEveryPlanOfTheirBox:Space.CountsEqualBruteForce:Site.ShippedPriorIsReproducible:RenderTest.*:StoreReader.MetadataThatBreaksHdf5IsDamageAndThisProcessSurvives:StoreErrors.DamagedMetadataOrRows:RunTest.SigkillAtRandomMomentsThenResumeGivesIdenticalRows'
asan=check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

logs=$(mktemp -d "${TMPDIR:-/tmp}/clustersweep-asan.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# One entry a job: its name, then the command (run through env, so it starts with variables).
names=()
commands=()
add() {
  names+=("$1")
  shift
  commands+=("$*")
}
# The jobs, longest first (seconds measured under ASan on 2 cores, one at a time): the engine's
# sweeps (132), the analysis' sweeps (46), engine_mpi_tests (39), the slurm CLI's sweeps (30),
# then the rest (spaces 3, 7 together).
suites() {  # BINARY mpi|rest: a test binary's suites through MPI_Init, or its others
  if [[ $2 == mpi ]]; then
    add "${1}_tests (suites through MPI_Init)" ASAN_OPTIONS=$asan:detect_leaks=0 \
      "$build/tests/$1/${1}_tests" --gtest_brief=1 "--gtest_filter=$mpi_suites-$skip"
  else
    add "${1}_tests" ASAN_OPTIONS=$asan \
      "$build/tests/$1/${1}_tests" --gtest_brief=1 "--gtest_filter=-$skip:$mpi_suites"
  fi
}
suites engine mpi
suites analysis mpi
add "engine_mpi_tests on 2 ranks" ASAN_OPTIONS=$asan:detect_leaks=0 \
  mpiexec -n 2 --oversubscribe "$build/tests/engine/engine_mpi_tests" --gtest_brief=1
suites slurm mpi
for t in engine analysis slurm spaces calibration estimator base jobs; do suites "$t" rest; done
# The other binaries have no suite through MPI_Init today; one added later runs too.
for t in spaces calibration estimator base jobs; do
  if "$build/tests/$t/${t}_tests" --gtest_list_tests "--gtest_filter=$mpi_suites" | grep -q '^ '; then
    suites "$t" mpi
  fi
done

declare -A running=()  # pid -> job index
failed=0
finish_one() {
  local pid status=0
  wait -n -p pid "${!running[@]}" || status=$?
  local i=${running[$pid]}
  unset "running[$pid]"
  if [[ $status -eq 0 ]]; then
    echo "test-asan: ${names[$i]}: passed (${SECONDS} s into the run)"
  else
    echo "test-asan: ${names[$i]}: FAILED (exit $status); its output:"
    cat "$logs/$i.log"
    failed=1
  fi
}
for i in "${!commands[@]}"; do
  while [[ ${#running[@]} -ge $jobs ]]; do finish_one; done
  # shellcheck disable=SC2086  # the command is words, with no blank inside one
  env ${commands[$i]} > "$logs/$i.log" 2>&1 &
  running[$!]=$i
done
while [[ ${#running[@]} -gt 0 ]]; do finish_one; done
exit $failed
