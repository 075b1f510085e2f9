# The README's two commands: `make run` and `make test`. Both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
PRESET_RUN = release
PRESET_TEST = ci
FUZZ_SECONDS ?= 40

.PHONY: run test deps deps-test build build-test install-python build-asan build-fuzz test-asan fuzz bench clean

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

# The normal tests, then the unit tests under sanitizers, then the fuzzers. The sanitizer and fuzz
# builds compile at the lowest priority while CTest runs: they take the CPU its tests leave idle
# (the real-Slurm tests spend minutes waiting on the scheduler), and the tests lose none of theirs.
# They stay in this session: Linux shares the CPU between sessions before it looks at priorities
# (autogroups), so in a session of their own they would take half of it. A failing CTest stops
# them (make stops starting compilations; those under way finish). CTest runs twice as many tests
# as there are cores: a test waiting on Slurm holds a slot without using a core, and with one per
# core the suite took 40% longer (docs/testing.md).
test: build-test
	@set -e; \
	nice -n 19 $(MAKE) --no-print-directory build-asan build-fuzz > $(BUILD)/sanitizer-builds.log 2>&1 & \
	builds=$$!; \
	if ! (cd $(BUILD) && ctest --output-on-failure -j $$(($(JOBS) * 2))); then \
	  kill $$builds 2> /dev/null || true; wait $$builds || true; exit 1; \
	fi; \
	echo "test: waiting for the sanitizer and fuzz builds ($(BUILD)/sanitizer-builds.log)"; \
	wait $$builds || { tail -50 $(BUILD)/sanitizer-builds.log; exit 1; }
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory fuzz

build-asan: deps-test
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)

build-fuzz: deps-test
	cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)

# The unit tests, the store's and the analysis' end-to-end tests under ASan/UBSan, JOBS binaries at
# a time (tests/sanitizers/run.sh says which and why).
test-asan: build-asan
	JOBS=$(JOBS) bash tests/sanitizers/run.sh build-asan

# Each fuzzer for FUZZ_SECONDS on a copy of its seed corpus (tests/fuzz/run.sh); fails on a finding.
fuzz: build-fuzz
	bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	$(BUILD)/bin/clustersweep bench

clean:
	rm -rf $(BUILD) build-asan build-fuzz
