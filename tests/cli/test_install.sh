#!/usr/bin/env bash
# test_install.sh BUILD CC — `cmake --install` into a temporary DESTDIR, then a small C program
# built outside the tree against the installed header and library through
# `pkg-config --cflags --libs tpuprof` (PKG_CONFIG_SYSROOT_DIR maps the installed prefix into
# DESTDIR), run with capture on, and its dump converted by the installed tpuprof. Checks the
# installed files, that the program and the CLI report the project version, and that the
# converted summary holds the program's steps and operator.
set -euo pipefail
build=$(realpath "$1") cc=$2
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
tmp=$(mktemp -d /tmp/tpuprof_install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/stage
DESTDIR=$stage cmake --install "$build" >"$tmp/install.log"
root=$stage$prefix
for f in bin/tpuprof bin/tpuprof-gendump include/tpuprof/tpuprof.h \
	include/tpuprof/tpuprof_version.h "$libdir/libtpuprof.a" "$libdir/libtpuprof.so" \
	"$libdir/pkgconfig/tpuprof.pc"; do
	[ -e "$root/$f" ] || { echo "FAIL: $f not installed under $root"; exit 1; }
done
soname=$(readelf -d "$root/$libdir/libtpuprof.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ -e "$root/$libdir/$soname" ] || { echo "FAIL: $soname (the SONAME) not installed"; exit 1; }

export PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
flags=$(pkg-config --cflags --libs tpuprof)
version=$(pkg-config --modversion tpuprof)
mkdir "$tmp/app"
cat >"$tmp/app/app.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <tpuprof/tpuprof.h>

static const struct tpuprof_op matmul = {.type = "MatMul", .name = "matmul"};

int main(void)
{
	volatile double x = 0;
	for (int step = 0; step < 3; step++) {
		tpuprof_step_begin("app", step, 0);
		tpuprof_op_begin(&matmul);
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
		tpuprof_op_end(&matmul, NULL);
		tpuprof_step_end("app", step);
	}
	printf("%s %s\n", tpuprof_version(), TPUPROF_VERSION_STRING);
	return strcmp(tpuprof_version(), TPUPROF_VERSION_STRING) != 0;
}
C
# shellcheck disable=SC2086
(cd "$tmp/app" && "$cc" -std=c11 -Wall -Werror app.c $flags -o app)
out=$(cd "$tmp/app" && LD_LIBRARY_PATH=$root/$libdir TPUPROF=2 TPUPROF_DIR=$tmp/cap ./app)
[ "$out" = "$version $version" ] || { echo "FAIL: the program says '$out', pkg-config '$version'"; exit 1; }
cli_version=$("$root/bin/tpuprof" --version)
[ "$cli_version" = "tpuprof $version" ] || { echo "FAIL: '$cli_version' != tpuprof $version"; exit 1; }
# Read whole before matching: `ldd | grep -q` under pipefail fails when grep exits first.
libs=$(LD_LIBRARY_PATH=$root/$libdir ldd "$tmp/app/app")
[[ $libs == *"$root/$libdir/$soname"* ]] ||
	{ echo "FAIL: the program does not load the installed $soname: $libs"; exit 1; }
dump=$(find "$tmp/cap" -maxdepth 1 -type d -name 'tpuprof_data_dev*' | head -n 1)
[ -n "$dump" ] || { echo "FAIL: no dump written under $tmp/cap"; exit 1; }
"$root/bin/tpuprof" -q --disable_doc --disable_web "$dump" "$tmp/out"
grep -q '"MatMul"' "$tmp/out/summary.json" ||
	{ echo "FAIL: the operator type MatMul is not in summary.json"; exit 1; }
grep -q '"counted_steps": *3' "$tmp/out/summary.json" ||
	{ echo "FAIL: summary.json does not count the program's 3 steps"; exit 1; }
echo "installed into DESTDIR under $prefix: built a program with pkg-config ($flags), captured and converted (version $version)"
