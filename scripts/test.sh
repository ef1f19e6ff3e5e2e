#!/usr/bin/env bash
# test.sh BUILD BUILD_SAN — runs the whole suite: ctest in the normal and the ASan+UBSan
# builds (unit, end-to-end, browser), the ThreadSanitizer tests (ctest -L tsan in a
# -DTP_TSAN=ON build), then the fuzz targets for a fixed number of runs.
set -euo pipefail
build=$1 san=$2
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ ! -d ../shared/testdata/sophgo/bm1688_resnet50 ]; then
  echo "WARNING: ../shared/testdata/sophgo/bm1688_resnet50 is absent: real-dump tests will print SKIPPED" >&2
fi
echo "== ctest (release build)"
(cd "$build" && ctest --output-on-failure -j "$(nproc)")
echo "== ctest (ASan+UBSan build)"
(cd "$san" && ctest --output-on-failure -j "$(nproc)" -LE nosan)
# ThreadSanitizer: the tests labelled tsan exist only in a -DTP_TSAN=ON build (libtpuprof with
# several threads recording at once). TSAN_BUILD overrides the directory (default build-tsan).
tsan=${TSAN_BUILD:-build-tsan}
echo "== ctest -L tsan (ThreadSanitizer build $tsan)"
cmake -S . -B "$tsan" -G Ninja -DTP_TSAN=ON -DTP_WERROR=ON >/dev/null
ninja -C "$tsan"
(cd "$tsan" && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -L tsan)
if [ -x scripts/fuzz.sh ]; then
  echo "== fuzz (fixed iterations)"
  scripts/fuzz.sh
fi
