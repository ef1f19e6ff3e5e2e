#!/usr/bin/env bash
# cmp-outputs.sh REF_BUILD NEW_BUILD [WORK_DIR] — byte-identity check for refactors.
#
# Converts the same inputs with two builds of tpuprof and compares every output file byte for
# byte: generated BM1688 / BM1684X / BM1690 dumps, every real dump and Chrome trace in
# ../shared (when present), a capture.tpp fixture, with the default outputs plus --json
# --sqlite, with --jobs 1 and 2, and `tpuprof diff` of two of the results. Exits 1 on the
# first difference and names the file. A refactor must pass this at every commit.
set -euo pipefail
ref=$(realpath "$1") new=$(realpath "$2")
work=${3:-$(mktemp -d /tmp/tpcmp.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${TP_SHARED_DIR:-$root/../shared}
mkdir -p "$work/in"

# Inputs are made once, by the reference build, so both builds read the same bytes.
gen=$ref/tpuprof-gendump
[ -d "$work/in/gen-bm1688" ] || "$gen" --arch BM1688 --cores 2 --cmds 10000 --seed 1 "$work/in/gen-bm1688" >/dev/null
[ -d "$work/in/gen-bm1684x" ] || "$gen" --arch BM1684X --cores 1 --cmds 3000 --seed 2 "$work/in/gen-bm1684x" >/dev/null
[ -d "$work/in/gen-cdm" ] || "$gen" --format cdm --arch BM1690 --cores 8 --cmds 2000 --mode 1 --seed 3 "$work/in/gen-cdm" >/dev/null
inputs=("$work/in/gen-bm1688" "$work/in/gen-bm1684x" "$work/in/gen-cdm")
if [ -d "$shared/testdata" ]; then
	for d in "$shared"/testdata/sophgo/*/; do
		[ -f "$d/global.profile" ] && inputs+=("${d%/}")
	done
	for t in "$shared"/testdata/traces/*.json; do inputs+=("$t"); done
else
	echo "cmp-outputs: WARNING: $shared/testdata is absent: real dumps and traces not compared" >&2
fi
# A capture of the example model, recorded once (its timings are the run's own).
cap=$ref/examples/bert_mini/bert_mini
if [ -x "$cap" ]; then
	if [ ! -d "$work/in/cap" ]; then
		mkdir -p "$work/in/cap"
		TPUPROF=2 TPUPROF_DIR="$work/in/cap" "$cap" >/dev/null
	fi
	inputs+=("$(find "$work/in/cap" -maxdepth 1 -type d -name 'tpuprof_data_dev*' | sort | head -n 1)")
fi

fail=0
run_both() { # name, args...
	local name=$1
	shift
	rm -rf "$work/ref-$name" "$work/new-$name"
	local rc_ref=0 rc_new=0
	"$ref/tpuprof" -q "$@" "$work/ref-$name" >"$work/ref-$name.log" 2>&1 || rc_ref=$?
	"$new/tpuprof" -q "$@" "$work/new-$name" >"$work/new-$name.log" 2>&1 || rc_new=$?
	if [ "$rc_ref" != "$rc_new" ]; then
		echo "DIFF $name: exit $rc_ref (ref) vs $rc_new (new)"
		fail=1
		return
	fi
	if ! diff -r -q -x .tpuprof.lock "$work/ref-$name" "$work/new-$name" >/dev/null 2>&1; then
		diff -r -q -x .tpuprof.lock "$work/ref-$name" "$work/new-$name" | sed "s|^|DIFF $name: |" || true
		fail=1
		return
	fi
	if ! cmp -s <(sed "s|$work/ref-$name|OUT|g" "$work/ref-$name.log") \
		<(sed "s|$work/new-$name|OUT|g" "$work/new-$name.log"); then
		echo "DIFF $name: console output differs"
		fail=1
		return
	fi
	echo "same $name ($(find "$work/ref-$name" -type f | wc -l) files)"
}

for in in "${inputs[@]}"; do
	base=$(basename "$in")
	for j in 1 2; do
		run_both "$base-j$j" "$in" --json --sqlite --jobs "$j"
	done
done
# `tpuprof diff` of the same two converted dumps (the reference's outputs) by both builds.
if [ -d "$work/ref-gen-bm1688-j1" ] && [ -d "$work/ref-gen-bm1684x-j1" ]; then
	for side in ref new; do
		b=$ref
		[ $side = new ] && b=$new
		rm -rf "$work/$side-diff"
		"$b/tpuprof" diff "$work/ref-gen-bm1688-j1" "$work/ref-gen-bm1684x-j1" "$work/$side-diff" \
			>/dev/null 2>&1 || true
	done
	if diff -r -q "$work/ref-diff" "$work/new-diff" >/dev/null; then
		echo "same diff ($(find "$work/ref-diff" -type f | wc -l) files)"
	else
		echo "DIFF tpuprof diff outputs"
		fail=1
	fi
fi
if [ $fail = 0 ]; then
	echo "cmp-outputs: all outputs byte-identical (${#inputs[@]} inputs, work dir $work)"
else
	echo "cmp-outputs: outputs differ (work dir $work)" >&2
fi
exit $fail
