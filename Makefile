# The README's two commands: `make run` and `make test`. Both install what is missing first.
BUILD ?= build
JOBS ?= $(shell nproc)
PRESET_RUN = release
PRESET_TEST = ci

.PHONY: run test deps deps-test build build-test bench clean

deps:
	bash scripts/install-deps.sh

deps-test:
	bash scripts/install-deps.sh --test

build: deps
	cmake --preset $(PRESET_RUN) -B $(BUILD)
	cmake --build $(BUILD) -j $(JOBS) --target clustersweep

# The main job on the built-in default: a real sweep of a shipped example, then its summary.
run: build
	bash scripts/run-default.sh $(BUILD)/bin/clustersweep

build-test: deps-test
	cmake --preset $(PRESET_TEST) -B $(BUILD)
	cmake --build $(BUILD) -j $(JOBS)

test: build-test
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bin/clustersweep bench

clean:
	rm -rf $(BUILD)
