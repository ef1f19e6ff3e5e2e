#!/usr/bin/env bash
# run.sh BUILD [IN] [OUT] — the main job behind `make run`.
# With IN: convert that profile directory into OUT.
# Without IN: the embedded default — run the instrumented example model (examples/bert_mini)
# with capture on, then convert its dump. If the example is not built (no OpenBLAS), fall back
# to a small generated BM1688 dump.
set -euo pipefail
build=$1 in=${2:-} out=${3:-profile_out}
tpuprof="$build/tpuprof"
[ -x "$tpuprof" ] || { echo "run: $tpuprof is not built" >&2; exit 1; }

if [ -z "$in" ]; then
  example="$build/examples/bert_mini/bert_mini"
  if [ -x "$example" ]; then
    capdir="$build/run-capture"
    rm -rf "$capdir" && mkdir -p "$capdir"
    echo "run: capturing the example model (TPUPROF=2, TPUPROF_DIR=$capdir)"
    TPUPROF=2 TPUPROF_DIR="$capdir" "$example"
    in=$(find "$capdir" -type d -name 'tpuprof_data_dev*' | sort | tail -n 1)
    [ -n "$in" ] || { echo "run: the example wrote no dump under $capdir" >&2; exit 2; }
  else
    gen="$build/tpuprof-gendump"
    [ -x "$gen" ] || { echo "run: neither the example nor the dump generator is built" >&2; exit 1; }
    in="$build/sample/bmprofile_data-1"
    rm -rf "$in"
    "$gen" --arch BM1688 --cores 2 --cmds 2000 --seed 1 --net sample_net "$in"
    echo "run: generated a BM1688 sample dump in $in"
  fi
fi

echo "run: converting $in -> $out"
"$tpuprof" "$in" "$out"
echo
echo "run: outputs:"
for f in result.html perfetto.pftrace trace.json profile.db summary.txt summary.json summary.md ops.csv PerfDoc/PerfAI_output.xlsx; do
  [ -e "$out/$f" ] && printf '  %-28s %s\n' "$f" "$(cd "$out" && realpath "$f")"
done
exit 0
