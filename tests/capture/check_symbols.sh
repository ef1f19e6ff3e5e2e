#!/bin/sh
# check_symbols.sh HEADER SHARED_LIB STATIC_LIB — libtpuprof's exported names.
# libtpuprof.so must export exactly the TPUPROF_API names of tpuprof.h (everything else is
# hidden), and every global name libtpuprof.a defines must be a public tpuprof_* name or an
# internal tp_cap_* one, so a program linking the archive cannot collide with a short name.
set -eu
hdr=$1 so=$2 ar=$3
want=$(sed -n 's/^TPUPROF_API[^(;]*[ *]\(tpuprof_[a-z_0-9]*\)[(;].*/\1/p' "$hdr" | sort -u)
# Sanitizer builds add their own instrumentation symbols (__odr_asan.*, __asan_*, ...).
have=$(nm -D --defined-only "$so" | awk 'NF == 3 { print $3 }' | grep -v '^__\(odr_asan\|asan\|ubsan\|tsan\)' | sort -u)
if [ "$want" != "$have" ]; then
	echo "FAIL: libtpuprof.so exports differ from tpuprof.h's TPUPROF_API names:"
	printf '%s\n' "$want" >/tmp/check_symbols.want.$$
	printf '%s\n' "$have" | diff /tmp/check_symbols.want.$$ - || true
	rm -f /tmp/check_symbols.want.$$
	exit 1
fi
n=$(printf '%s\n' "$want" | wc -l)
[ "$n" -ge 20 ] || { echo "FAIL: only $n TPUPROF_API names found in $hdr"; exit 1; }
bad=$(nm -g --defined-only "$ar" | awk 'NF == 3 { print $3 }' | grep -v '^tpuprof_' | grep -v '^tp_cap_' |
	grep -v '^__\(odr_asan\|asan\|ubsan\|tsan\)' || true)
if [ -n "$bad" ]; then
	echo "FAIL: libtpuprof.a defines global names outside tpuprof_* / tp_cap_*:"
	echo "$bad"
	exit 1
fi
echo "libtpuprof.so exports the $n TPUPROF_API names; libtpuprof.a defines only tpuprof_* and tp_cap_* names"
