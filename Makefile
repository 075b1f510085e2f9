# The README's two commands: `make run` and `make test`. Both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
PRESET_RUN = release
PRESET_TEST = ci
# The test binaries that also run under ASan/UBSan (the asan preset, build-asan/): the engine and
# its store (engine_tests, and engine_mpi_tests on 2 ranks), the parsers (base, spaces, slurm), the
# estimator, jobs and the analysis. Their end-to-end suites run the sanitized binary, MPI_Init
# included: Open MPI leaks there by design, so LeakSanitizer skips allocations with Open MPI on
# their stack (tests/sanitizers/lsan-openmpi.supp) and reports every other leak. Left to the
# normal run: the exhaustive search-equality tests (Search.EqualsExhaustiveEnumeration*, minutes
# under ASan, pure computation the Release run already checks) and the Chromium render test.
# docs/testing.md.
ASAN_TESTS = base estimator spaces jobs engine analysis slurm
ASAN_GTEST_FILTER = -Search.EqualsExhaustiveEnumeration*:RenderTest.*
ASAN_ENV = ASAN_OPTIONS=check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan-openmpi.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
FUZZ_SECONDS ?= 60

.PHONY: run test deps deps-test build build-test install-python test-asan fuzz bench clean

deps:
	bash scripts/install-deps.sh

deps-test:
	bash scripts/install-deps.sh --test

build: deps
	cmake --preset $(PRESET_RUN) -B $(BUILD)
	cmake --build $(BUILD) -j $(JOBS) --target clustersweep clustersweep_python

# The Python module into Debian's Python (docs/python.md): `import clustersweep` in /usr/bin/python3.
install-python: build
	bash scripts/install-python.sh $(BUILD)

# The main job on the built-in default: a real sweep of a shipped example, then its summary.
run: install-python
	bash scripts/run-default.sh $(BUILD)/bin/clustersweep

build-test: deps-test
	cmake --preset $(PRESET_TEST) -B $(BUILD)
	cmake --build $(BUILD) -j $(JOBS)

# The normal tests, then the unit tests under sanitizers, then the fuzzers.
test: build-test
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory fuzz

test-asan: deps-test
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	set -e; for t in $(ASAN_TESTS); do \
	  echo "test-asan: $${t}_tests"; \
	  $(ASAN_ENV) build-asan/tests/$$t/$${t}_tests --gtest_brief=1 --gtest_filter='$(ASAN_GTEST_FILTER)'; \
	done
	@echo "test-asan: engine_mpi_tests on 2 ranks"
	$(ASAN_ENV) mpiexec -n 2 --oversubscribe build-asan/tests/engine/engine_mpi_tests --gtest_brief=1

# Each fuzzer for FUZZ_SECONDS on a copy of its seed corpus (tests/fuzz/run.sh); fails on a finding.
fuzz: deps-test
	cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)
	bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	$(BUILD)/bin/clustersweep bench

clean:
	rm -rf $(BUILD) build-asan build-fuzz
