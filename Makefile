# tpuprof — the two README commands and their friends.
#   make run [IN=<bmprofile dir>] [OUT=<dir>]   set up, build, convert (default: embedded sample)
#   make test                                   build normal + ASan/UBSan and run every test
#   make bench                                  throughput / memory benchmarks
#   make fuzz                                   libFuzzer campaign: FUZZ_SECONDS (300) per target,
#                                               corpus kept in build-fuzz/corpus/ (make test
#                                               runs the fixed-run smoke instead)
SHELL := /bin/bash
BUILD ?= build
BUILD_SAN ?= build-san
OUT ?= profile_out
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: run test build build-san deps deps-test bench fuzz clean

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTP_WERROR=ON $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS)

$(BUILD_SAN)/build.ninja:
	cmake -S . -B $(BUILD_SAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTP_WERROR=ON -DTP_SANITIZE=ON $(CMAKE_FLAGS)

build-san: deps $(BUILD_SAN)/build.ninja
	ninja -C $(BUILD_SAN) -j $(JOBS)

run: build
	@scripts/run.sh "$(BUILD)" "$(IN)" "$(OUT)"

test: deps-test build build-san
	@scripts/test.sh "$(BUILD)" "$(BUILD_SAN)"

bench: build
	@scripts/bench.sh "$(BUILD)"

fuzz: deps-test
	@FUZZ_MODE=campaign scripts/fuzz.sh

clean:
	rm -rf $(BUILD) $(BUILD_SAN) build-fuzz build-tsan
