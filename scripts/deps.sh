#!/usr/bin/env bash
# deps.sh build|test — make sure the Debian packages tpuprof needs are installed.
# As root, missing packages are installed with apt-get; otherwise the script names them and
# fails, so a user knows exactly what to install.
set -euo pipefail
build_pkgs="cmake ninja-build pkg-config gcc make libsqlite3-dev libxlsxwriter-dev libcmocka-dev libopenblas-dev libcjson-dev zlib1g-dev libdeflate-dev libisal-dev"
test_pkgs="clang clang-format libclang-rt-dev protobuf-compiler sqlite3 python3 python3-openpyxl python3-pil chromium firefox-esr libreoffice-calc-nogui"
# tpuprof job through a real scheduler (tests/job): a single-node Slurm with munge, GNU parallel.
test_pkgs="$test_pkgs slurm-wlm munge parallel"
# The tpuprof Python package (python/): headers to build it, pytest, numpy and PyTorch to test
# it (without python3-dev the package is not built and its ctest entry says SKIPPED).
test_pkgs="$test_pkgs python3-dev python3-pytest python3-numpy python3-torch python3-torchvision"
want="$build_pkgs"
[ "${1:-build}" = test ] && want="$build_pkgs $test_pkgs"
missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# Node.js may come from a non-Debian package (it bundles npm, which then conflicts with
# Debian's npm): ask for Debian's nodejs + npm only when the commands are absent.
if [ "${1:-build}" = test ]; then
  command -v node >/dev/null 2>&1 || missing="$missing nodejs"
  command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "deps: missing Debian packages:$missing" >&2
  echo "deps: run: sudo apt-get install$missing" >&2
  exit 1
fi
