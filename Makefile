# tpuprof — the two README commands and their friends.
#   make run [IN=<bmprofile dir>] [OUT=<dir>]   set up, build what it runs, convert (default:
#                                               the example model's capture, else a sample)
#   make install [PREFIX=/usr/local] [DESTDIR=] the tpuprof command, tpuprof-gendump,
#                                               libtpuprof (.so, .a), its header, tpuprof.pc
#                                               and the Python package (with python3-dev)
#   make test                                   build normal + ASan/UBSan and run every test
#   make bench                                  throughput / memory benchmarks
#   make fuzz                                   libFuzzer campaign: FUZZ_SECONDS (300) per target,
#                                               corpus kept in build-fuzz/corpus/ (make test
#                                               runs the fixed-run smoke instead)
SHELL := /bin/bash
BUILD ?= build
BUILD_SAN ?= build-san
OUT ?= profile_out
PREFIX ?= /usr/local
DESTDIR ?=
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: run test build build-san build-run install deps deps-test bench fuzz clean

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

# Only what `make run` runs: the CLI, the dump generator and the example model (when OpenBLAS
# let it be configured), not the tests, fuzz targets and benches `make build` adds.
build-run: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS) tpuprof tpuprof-gendump \
		$$(ninja -C $(BUILD) -t targets all | grep -q '^bert_mini: phony' && echo bert_mini)

run: build-run
	@scripts/run.sh "$(BUILD)" "$(IN)" "$(OUT)"

# The prefix is set at configure time too, so the installed tpuprof.pc names it.
install: deps $(BUILD)/build.ninja
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX="$(PREFIX)" >/dev/null
	ninja -C $(BUILD) -j $(JOBS) tpuprof tpuprof-gendump tpuprof_shared tpuprof_static \
		$$(ninja -C $(BUILD) -t targets all | grep -q '^tpuprof_python: phony' && echo tpuprof_python)
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

test: deps-test build build-san
	@scripts/test.sh "$(BUILD)" "$(BUILD_SAN)"

bench: build
	@scripts/bench.sh "$(BUILD)"

fuzz: deps-test
	@FUZZ_MODE=campaign scripts/fuzz.sh

clean:
	rm -rf $(BUILD) $(BUILD_SAN) build-fuzz build-tsan
