# The README's two commands: `make run` and `make test`. Both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
PRESET_RUN = release
PRESET_TEST = ci
# The unit-test binaries that also run under ASan/UBSan (the asan preset, build-asan/). Left to the
# normal run: the suites that sweep end to end through `clustersweep run` (Open MPI's MPI_Init
# leaks by design, which LeakSanitizer reports), the browser render test, and the two-minute search
# property test (its smaller twin runs). docs/testing.md.
ASAN_TESTS = base estimator spaces analysis
ASAN_GTEST_FILTER = -CliTest.*:StoreErrors.*:StackSummaryTest.*:RenderTest.*:Search.EqualsExhaustiveEnumerationOnThousandsOfRandomDesigns
ASAN_ENV = ASAN_OPTIONS=check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1
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

# Each fuzzer for FUZZ_SECONDS on a copy of its seed corpus (tests/fuzz/run.sh); fails on a finding.
fuzz: deps-test
	cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)
	bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	$(BUILD)/bin/clustersweep bench

clean:
	rm -rf $(BUILD) build-asan build-fuzz
