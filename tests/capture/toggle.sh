#!/bin/sh
# toggle.sh PROBE DIR — runs `tpuprof_probe toggle` (tests/tools/capture_toggle.c) twice:
# crash-safe with 1 024-record buffers (most events dropped, so the drop accounting is
# tested), then TPUPROF_CRASHSAFE=0 with buffers that span several extents. Each run must
# exit 0 (every session accounts for what the threads attempted) and print nothing on stderr:
# a "cannot create a per-thread file" warning means a thread lost crash safety.
set -u
probe=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
run() { # label, env..., then the probe arguments after --
	label=$1
	shift
	env "$@" TPUPROF_DIR="$dir" "$probe" toggle $args 2>"$dir/stderr"
	rc=$?
	if [ $rc != 0 ] || [ -s "$dir/stderr" ]; then
		echo "FAIL: $label: exit $rc"
		cat "$dir/stderr"
		exit 1
	fi
}
args="16 50 20 1024"
run "crash-safe, 1024 records" TPUPROF_CRASHSAFE=1
args="16 20 20 100000"
run "TPUPROF_CRASHSAFE=0, 100000 records" TPUPROF_CRASHSAFE=0
rm -rf "$dir"
