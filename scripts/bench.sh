#!/usr/bin/env bash
# bench.sh BUILD — throughput and memory benchmarks behind `make bench`. Prints numbers and
# never asserts on them.
#
# 1. Generates BM1688 dumps (2 cores) of 10 k, 1 M and 10 M commands per core with
#    BUILD/tpuprof-gendump, cached under BUILD/bench-data/ and regenerated when the generator
#    binary or its arguments change (a stamp file holds their checksum). Each generation that
#    happens is timed; the generator is also always timed on a scratch 1 M dump.
# 2. Converts the real dump (../shared/testdata/sophgo/bm1688_resnet50, if present) and each
#    generated dump with `BUILD/tpuprof IN OUT <flags>` under tp-bench (wall time, peak RSS of
#    the child via wait4), and prints one table: commands, wall s, CPU s, CPU/wall, commands/s,
#    commands/s per core, ns/command, peak RSS MiB, bytes of RAM per command (RSS above the
#    group's baseline row, divided by commands) and ratios to that baseline. Baselines are
#    measured in the same run: group convert = the 10 k conversion, io = `cat` of the dump,
#    xlsx = a bare libxlsxwriter loop writing the same cells (xlsx_gen bare, census of the
#    workbook by bench/xlsx_census.py), sqlite-SIZE = a bare sqlite3 loop of as many slice and
#    arg rows into the same schema (sqlite_bench bare).
# 3. Ends with the scale targets: each limit, this run's figure and met / MISSED
#    (bench/targets.awk over the rows, $data/facts.tsv and trace_bench's 1 M/core output).
#
# Adding rows: call `bench_case NAME INPUT_DIR FLAGS...` in the "cases" section below (or in a
# file named by $BENCH_EXTRA, sourced there), e.g.
#     bench_case "gen-1M perfetto" "$data/gen-1M" --disable_web --disable_doc
# Environment: BENCH_SIZES="10k 1M 10M" (subset to run), BENCH_KEEP_OUT=1 keeps outputs,
# BENCH_ONLY=phases runs only the per-phase block (phase_bench: BENCH_PHASE_SIZE,
# BENCH_PHASE_CDM_CMDS size its dumps, BENCH_PHASE_REPEAT its runs of each side, default 5,
# BENCH_PHASE_COPIES the copies run at once for the per-phase ceiling, default 2, 0 for none,
# and BENCH_PHASE_COPY_REPEAT how many times, default 3; BENCH_SCALE_COPIES the copies of
# BENCH_ONLY=scaling's per-phase table, default its widest --jobs),
# BENCH_ONLY=traceread runs only the Chrome-trace reader case (below), BENCH_TRACE_MIB sets
# the size of its generated trace (default 512); BENCH_ONLY=json only the Chrome JSON writer
# rows (json_bench); BENCH_IDLE_S (default 5) is the idle pause before each json row and its
# dd baseline; BENCH_ONLY=capture only the capture reader rows (capture_read_bench),
# BENCH_CAPTURE=0 leaves them out, BENCH_CAPTURE_STEPS sizes their capture; BENCH_ONLY=job
# only the job block (16 dumps x 100 k commands through `tpuprof job` vs one by one).
# `bench.sh BUILD html` runs only the result.html cases (headless chromium).
set -euo pipefail

build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
[ -d "$build" ] || { echo "bench: build directory '$build' not found (run make build)" >&2; exit 1; }
build=$(cd "$build" && pwd)

gendump=$build/tpuprof-gendump
tpbench=$build/tp-bench
tpuprof=$build/tpuprof
data=$build/bench-data
rows=$data/rows.tsv
sizes=${BENCH_SIZES:-10k 1M 10M}
real=${TP_SHARED_DIR:-$here/../shared}/testdata/sophgo/bm1688_resnet50
# "reader + summary only": every heavy writer off.
reader_flags=(--disable_web --disable_doc --disable_perfetto)

for t in "$gendump" "$tpbench"; do
  [ -x "$t" ] || { echo "bench: $t not built (run make build)" >&2; exit 1; }
done
mkdir -p "$data"
: > "$rows"
# Figures the issue-10 targets table (the end of the run) needs besides the rows: KEY<TAB>VALUE.
facts=$data/facts.tsv
: > "$facts"
fact() { printf '%s\t%s\n' "$1" "$2" >> "$facts"; }

per_core() { # 10k -> 10000
  case $1 in
    *k) echo $(( ${1%k} * 1000 )) ;;
    *M) echo $(( ${1%M} * 1000000 )) ;;
    *) echo "$1" ;;
  esac
}

human_size() { du -sh "$1" 2>/dev/null | cut -f1; }

# ---- result.html in headless chromium ------------------------------------------------------
# Page size (bytes per command), time to the first timeline (drawn from the writer's level of
# detail) and to the fully decoded page, full-view render time, pan / zoom frame rates of
# result.html for the real dump and for generated dumps of 1 k, 100 k and 2 M commands
# (tpuprof-gendump --arch BM1688 --cores 2 --cmds N/2 --seed 1; tests/browser/bench.mjs).
# Targets: <= 30 bytes per command, first timeline <= 2 s at 2 M and <= 300 ms for
# the real dump, <= 8 ms full-view render, >= 50 fps pan / zoom at 2 M. Only these cases:
# `scripts/bench.sh BUILD html`.
html_bench() {
  local pages=() out=$data/html
  if ! command -v node >/dev/null || [ ! -x /usr/bin/chromium ]; then
    echo "== result.html: SKIPPED: node or /usr/bin/chromium missing (scripts/deps.sh test)"
    return 0
  fi
  if [ ! -d "$here/tests/browser/node_modules/playwright-core" ]; then
    (cd "$here/tests/browser" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  rm -rf "$out" && mkdir -p "$out"
  if [ -x "$tpuprof" ] && [ -d "$real" ]; then
    "$tpuprof" "$real" "$out/real" -q >/dev/null 2>&1 || true
    [ -f "$out/real/result.html" ] && pages+=(real "$out/real/result.html")
  fi
  [ ${#pages[@]} -gt 0 ] || echo "== result.html real: SKIPPED: tpuprof did not write $out/real/result.html"
  for c in 1k:500 100k:50000 2M:1000000; do
    local name=${c%%:*} per=${c##*:}
    if [ -x "$tpuprof" ] && [ -x "$gendump" ]; then
      "$gendump" --arch BM1688 --cores 2 --cmds "$per" --seed 1 --quiet "$out/gen-$name" &&
        "$tpuprof" "$out/gen-$name" "$out/page-$name" -q --disable_perfetto --disable_doc \
          --disable_summary >/dev/null 2>&1 || true
      rm -rf "$out/gen-$name"
      [ -f "$out/page-$name/result.html" ] && pages+=("gen-$name" "$out/page-$name/result.html")
    fi
  done
  [ ${#pages[@]} -gt 0 ] || return 0
  echo "== result.html in headless chromium (size, first timeline, ready, render, pan / zoom fps)"
  node "$here/tests/browser/bench.mjs" "${pages[@]}" || echo "   (bench.mjs exited with status $?)"
  [ "${BENCH_KEEP_OUT:-0}" = 1 ] || rm -rf "$out"
}
if [ "${2:-}" = html ]; then
  html_bench
  exit 0
fi

# dump_case DIR LABEL CMDS CORES ARGS... — makes DIR with `tpuprof-gendump ARGS DIR` (CMDS
# commands on CORES cores; row "gendump LABEL", timed) unless the cached copy was made by the
# same generator binary with the same arguments (a stamp file holds their checksum).
dump_case() {
  local dir=$1 label=$2 cmds=$3 cores=$4 want stamp
  shift 4
  want=$( { sha256sum < "$gendump"; echo "$*"; } | sha256sum | cut -d' ' -f1)
  stamp=$dir/.bench-stamp
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "== gendump $label: cached ($dir, $(human_size "$dir"))"
    return 0
  fi
  rm -rf "$dir"
  echo "== gendump $label: generating $cmds commands into $dir"
  "$tpbench" run --out "$rows" --name "gendump $label" --group gen --cmds "$cmds" \
    --cores "$cores" -- "$gendump" "$@" "$dir"
  echo "$want" > "$stamp"
  echo "   size: $(human_size "$dir")"
}

# gen_case SIZE — $data/gen-SIZE, a 2-core BM1688 dump of SIZE commands per core.
gen_case() {
  local n
  n=$(per_core "$1")
  dump_case "$data/gen-$1" "$1/core" $((2 * n)) 2 --arch BM1688 --cores 2 --cmds "$n" \
    --seed 1 --quiet
}

# cdm_case N — $data/cdm-8xN, an 8-core BM1690 cdm dump of N commands per core (--mode 1
# --cdma-ports 2).
cdm_case() {
  dump_case "$data/cdm-8x$1" "cdm 8x$1" $((8 * $1)) 8 --format cdm --arch BM1690 --cores 8 \
    --cmds "$1" --mode 1 --cdma-ports 2 --seed 1 --quiet
}

# bench_case NAME INPUT FLAGS... — one tpuprof conversion row (group "convert", or $BENCH_GROUP;
# BENCH_CASE_REPEAT=R: the best of R runs, with their median; see repeat_for).
bench_case() {
  local name=$1 input=$2
  shift 2
  if [ ! -x "$tpuprof" ]; then
    echo "== $name: SKIPPED: tpuprof binary not built ($tpuprof)"
    return 0
  fi
  if [ ! -d "$input" ]; then
    echo "== $name: SKIPPED: input $input is absent"
    return 0
  fi
  local count cmds cores out
  count=$("$tpbench" count "$input")
  cmds=${count% *}
  cores=${count#* }
  out=$data/out/$(echo "$name" | tr -c 'A-Za-z0-9._-' '_')
  rm -rf "$out"
  mkdir -p "$data/out"
  echo "== $name: tpuprof $input -> $out $*"
  "$tpbench" run --out "$rows" --name "$name" --group "${BENCH_GROUP:-convert}" --cmds "$cmds" \
    --cores "$cores" --repeat "${BENCH_CASE_REPEAT:-1}" --clean "$out" -- \
    "$tpuprof" "$input" "$out" "$@" ||
    echo "   (tpuprof exited with status $?)"
  echo "   output: $(human_size "$out")"
  [ "${BENCH_KEEP_OUT:-0}" = 1 ] || rm -rf "$out"
}

# repeat_for SIZE -> runs per case of that dump: BENCH_REPEAT (default 3) below 10M, 1 at 10M
# (minutes per run). The machine is shared and noisy (other VMs, memory the host reclaims):
# one run can be 1.5-2x slower than the next, so a throughput row is the best of R runs, and
# the table's "med s" column shows how far the others were.
repeat_for() {
  case $1 in
    10M) echo 1 ;;
    *) echo "${BENCH_REPEAT:-3}" ;;
  esac
}

row_cpu() { # NAME -> CPU ns of the last row of that name in $rows ("" if none)
  awk -F'\t' -v n="$1" '$1 == n { c = $9 } END { print c }' "$rows"
}
row_wall() { # NAME -> wall ns of the last row of that name in $rows ("" if none)
  awk -F'\t' -v n="$1" '$1 == n { c = $6 } END { print c }' "$rows"
}

# Chrome JSON (target >= 3 M events/s by wall time): "gen-N json" (default --jobs:
# events formatted on worker threads) and "gen-N json --jobs 1" (the writer's thread alone),
# both on top of reader+summary, each after a `sync` (the previous file's writeback would
# otherwise be charged to it) and an idle pause, and deleted after its checksum.
# The pause (BENCH_IDLE_S, default 5 s) puts the json rows and their dd baseline in the same
# memory state. On this kind of VM (virtio_balloon free page reporting of 2 MiB blocks, ext4 with
# large folios on Linux 6.18) a write(2) of 2 MiB or more fills the page cache with 2 MiB folios
# from memory the host has reclaimed, and the first touch of each page costs a host fault:
# 1.1 GB took 1.7-4.2 s in 4 MiB writes and 0.28-0.38 s in 1 MiB writes, each after sync and a
# 5 s pause (measured 2026-11-24). dd here writes 1 MiB blocks, and so do tpuprof's outputs
# (tp_afile_write).
json_bench() {
  local s=$1 name dir events="" bytes="" sums=() rw rc
  for name in "gen-$s json" "gen-$s json --jobs 1"; do
    dir=$data/out/$(echo "$name" | tr -c 'A-Za-z0-9._-' '_')
    sync
    sleep "${BENCH_IDLE_S:-5}"
    if [ "$name" = "gen-$s json" ]; then
      BENCH_KEEP_OUT=1 bench_case "$name" "$data/gen-$s" --disable_web --disable_doc \
        --disable_perfetto --json
    else
      BENCH_KEEP_OUT=1 bench_case "$name" "$data/gen-$s" --disable_web --disable_doc \
        --disable_perfetto --json --jobs 1
    fi
    if [ -f "$dir/trace.json" ]; then
      [ -n "$events" ] || events=$(grep -c '"ph":' "$dir/trace.json" || true)
      [ -n "$bytes" ] || bytes=$(stat -c %s "$dir/trace.json")
      sums+=("$(sha256sum < "$dir/trace.json" | cut -d' ' -f1)")
    fi
    [ "${BENCH_KEEP_OUT:-0}" = 1 ] || rm -rf "$dir"
  done
  if [ ${#sums[@]} != 2 ]; then
    echo "   (no trace.json to count)"
    return 0
  fi
  local same="identical"
  [ "${sums[0]}" = "${sums[1]}" ] || same="DIFFERENT (bug)"
  echo "   trace.json: $events events, $bytes bytes; default --jobs vs --jobs 1: $same"
  fact "json-$s events" "$events"
  # Baseline (group io): writing as many bytes with dd into the same directory after the same
  # sync and idle pause, i.e. what the file system and the VM's memory take for the file alone.
  local mib dd_name
  mib=$(( (bytes + 1048575) / 1048576 ))
  dd_name="dd ${mib} MiB like gen-$s trace.json"
  sync
  sleep "${BENCH_IDLE_S:-5}"
  "$tpbench" run --out "$rows" --name "$dd_name" --group io --cmds "$events" --cores 1 -- \
    dd if=/dev/zero of="$data/out/dd-json" bs=1M count="$mib" status=none ||
    echo "   (dd exited with status $?)"
  rm -f "$data/out/dd-json"
  local dw
  dw=$(row_wall "$dd_name")
  [ -n "$dw" ] && awk -v d="$dw" -v e="$events" 'BEGIN {
    printf "   dd of the same bytes: %.2f s wall = %.2f M events/s (the file system'"'"'s ceiling)\n",
           d / 1e9, (d > 0) ? e / (d / 1e9) / 1e6 : 0 }'
  rw=$(row_wall "gen-$s reader+summary") rc=$(row_cpu "gen-$s reader+summary")
  for name in "gen-$s json" "gen-$s json --jobs 1"; do
    local w c
    w=$(row_wall "$name") c=$(row_cpu "$name")
    [ -n "$w" ] && [ -n "$c" ] && [ -n "$rw" ] && [ -n "$rc" ] || continue
    awk -v n="$name" -v e="$events" -v w="$w" -v c="$c" -v rw="$rw" -v rc="$rc" 'BEGIN {
      dw = (w - rw) / 1e9; dc = (c - rc) / 1e9
      ew = (dw > 0) ? e / dw / 1e6 : 0; ec = (dc > 0) ? e / dc / 1e6 : 0
      printf "   %s writer: %.2f s wall, %.2f s CPU over reader+summary: ", n, dw, dc
      printf "%.2f M events/s wall, %.2f M events/s CPU (whole run %.2f M events/s wall)\n",
             ew, ec, e / (w / 1e9) / 1e6 }'
  done
}
# ---- reading a libtpuprof capture -----------------------------------------------------------
# A capture of examples/bert_mini in mode 2 (operators with tensors, attributes, weight
# sparsity), --no-compute, BENCH_CAPTURE_STEPS steps (default 10 000: 560 k operator slices,
# 8 M records of 32 bytes, 258 MB), made afresh each run (~1 s). Group "capture": `cat` of
# capture.tpp (the baseline), the reader with ops.csv only (--disable_summary: summary.json,
# op_stats per step and operator, is 110 MB here) and every default output. In these rows
# "commands" are capture records and "cores" its threads. BENCH_CAPTURE=0 skips it;
# BENCH_ONLY=capture runs only it.
bert=$build/examples/bert_mini/bert_mini
capture_read_bench() {
  [ "${BENCH_CAPTURE:-1}" = 1 ] || return 0
  if [ ! -x "$bert" ]; then
    echo "== capture reader: SKIPPED: $bert not built"
    return 0
  fi
  local steps=${BENCH_CAPTURE_STEPS:-10000} root=$data/capture dir count
  rm -rf "$root"
  mkdir -p "$root"
  echo "== capture reader: bert_mini --steps $steps --no-compute, TPUPROF=2"
  TPUPROF=2 TPUPROF_DIR=$root TPUPROF_RECORD_SIZE=100000000 \
    "$bert" --steps "$steps" --no-compute --quiet > /dev/null
  dir=$(find "$root" -mindepth 1 -maxdepth 1 -type d -name 'tpuprof_data_*' | head -1)
  if [ -z "$dir" ] || [ ! -f "$dir/capture.tpp" ]; then
    echo "== capture reader: SKIPPED: bert_mini wrote no capture.tpp under $root"
    rm -rf "$root"
    return 0
  fi
  count=$("$tpbench" count "$dir")
  echo "   $(stat -c %s "$dir/capture.tpp") bytes, ${count% *} records, ${count#* } thread(s)"
  "$tpbench" run --out "$rows" --name "capture cat (input bytes)" --group capture \
    --cmds "${count% *}" --cores "${count#* }" -- sh -c 'cat "$1" > /dev/null' sh \
    "$dir/capture.tpp"
  BENCH_GROUP=capture bench_case "capture reader + ops.csv" "$dir" "${reader_flags[@]}" \
    --disable_summary
  BENCH_GROUP=capture bench_case "capture all outputs" "$dir"
  rm -rf "$root"
}
if [ "${BENCH_ONLY:-}" = capture ]; then
  mkdir -p "$data/out"
  capture_read_bench
  "$tpbench" table "$rows"
  exit 0
fi
# ---- Chrome-trace JSON reader ------------------------------------------------------------
# A generated Kineto-like trace of BENCH_TRACE_MIB MiB (bench/gen_trace.py: X with args, B/E,
# async b/e with 64-bit ids, C, M), read in process by traceread_bench (wall and CPU-time MB/s,
# peak RSS; target >= 200 MB/s), then converted by tpuprof (reader + summary) under tp-bench.
traceread_bench() {
  local mib=${BENCH_TRACE_MIB:-512} trace=$data/trace-${BENCH_TRACE_MIB:-512}M.json
  if [ ! -x "$build/traceread_bench" ]; then
    echo "== traceread: SKIPPED: $build/traceread_bench not built"
    return 0
  fi
  if [ ! -f "$trace" ] || [ "$here/bench/gen_trace.py" -nt "$trace" ]; then
    echo "== traceread: generating a $mib MiB trace into $trace"
    /usr/bin/python3 "$here/bench/gen_trace.py" "$trace" "$mib"
  fi
  echo "== traceread: $(human_size "$trace") trace, reader alone (3 runs)"
  "$build/traceread_bench" "$trace" 3
  local out=$data/out/traceread
  rm -rf "$out"
  "$tpbench" run --out "$rows" --name "chrome trace ${mib}MiB reader+summary" --group convert \
    --cmds 0 --cores 1 -- "$tpuprof" "$trace" "$out" "${reader_flags[@]}" -q ||
    echo "   (tpuprof exited with status $?)"
  rm -rf "$out"
}
if [ "${BENCH_ONLY:-}" = traceread ]; then
  mkdir -p "$data/out"
  traceread_bench
  exit 0
fi

# ---- a whole job: 16 dumps x 100 k commands (tpuprof job) ------------------------------------
# 16 generated 8-core BM1690 cdm dumps of 100 k commands each (4 devices x 4 calls, cached under
# $data/job-16x100k like the gen-SIZE dumps), converted by one `tpuprof job` against a shell
# loop converting them one by one (default --jobs in both), under tp-bench: wall, CPU, peak RSS
# (of the largest process of the tree: tp-bench reads the child's wait4 rusage). Its own table,
# separate from the rows above, with the ratios to the one-by-one row (--baseline), then its
# targets (bench/targets.awk, only=job: wall, CPU and peak RSS against one by one, goals
# stated there); BENCH_ONLY=job runs only it. BENCH_JOB_DUMPS / BENCH_JOB_CMDS size it (per
# dump; commands spread over 8 cores).
job_bench() {
  local n=${BENCH_JOB_DUMPS:-16} cmds=${BENCH_JOB_CMDS:-100000} jrows=$data/job-rows.tsv
  local dir=$data/job-${n}x$((cmds / 1000))k want stamp k
  want=$( { sha256sum < "$gendump"; echo "$n $cmds"; } | sha256sum | cut -d' ' -f1)
  stamp=$dir/.bench-stamp
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    rm -rf "$dir"
    echo "== job: generating $n cdm dumps of $cmds commands into $dir"
    for ((k = 0; k < n; k++)); do
      "$gendump" --format cdm --arch BM1690 --cores 8 --cmds $((cmds / 8)) --mode 1 \
        --seed $((k + 1)) --quiet "$dir/cdm_profile_data_dev$((k / 4))-$((k % 4))"
    done
    echo "$want" > "$stamp"
  fi
  echo "== job: $n dumps x $cmds commands ($(human_size "$dir")): tpuprof job vs one by one"
  : > "$jrows"
  local out=$data/out/job
  rm -rf "$out" "$out-loop"
  "$tpbench" run --out "$jrows" --name "tpuprof job ($n dumps)" --group job \
    --cmds $((n * cmds)) --cores 8 -- "$tpuprof" job "$dir" "$out" -q ||
    echo "   (tpuprof job exited with status $?)"
  "$tpbench" run --out "$jrows" --name "one by one ($n x tpuprof DUMP)" --group job \
    --cmds $((n * cmds)) --cores 8 -- sh -c \
    'for d in "$1"/cdm_profile_data_dev*; do "$2" "$d" "$3/${d##*/}" -q || exit 1; done' \
    sh "$dir" "$tpuprof" "$out-loop"
  echo "   outputs: $(human_size "$out") (job), $(human_size "$out-loop") (one by one)"
  rm -rf "$out" "$out-loop"
  echo
  echo "== job results (wall time, CPU, peak RSS of the largest process; x = against one by one)"
  "$tpbench" table "$jrows" --baseline "job=one by one ($n x tpuprof DUMP)"
  echo
  awk -f "$here/bench/targets.awk" -v only=job /dev/null /dev/null /dev/null "$jrows"
}
if [ "${BENCH_ONLY:-}" = job ]; then
  mkdir -p "$data/out"
  job_bench
  exit 0
fi

# ---- per phase: serial share, --jobs 2 vs --jobs 1, bytes per thread ------------------------
# What a 2-core machine can show of the scaling (docs/perf-notes/cores.md): the generated BM1688
# dump (2 cores x BENCH_PHASE_SIZE commands, default 1M: the gen-SIZE dump) with every default
# output plus --json --sqlite, and an 8-core BM1690 cdm dump (BENCH_PHASE_CDM_CMDS per core,
# default 1000000, --mode 1 --cdma-ports 2) with the default outputs, each converted with
# `tpuprof --timings` at --jobs 1 and --jobs 2; bench/phase_table.py prints per phase the
# wall time of both and their ratio (goal >= 1.9x), the serial share of the CPU time (goal
# <= 5 % in total), threads and the memory each extra thread adds, and hands the totals to
# targets.awk. --timings writes the outputs one after another, so these runs' wall times
# are not the default run's. BENCH_ONLY=phases runs only this block.
# tp-bench spin's four lines (integer work, fresh memory, memory reads, file writes into
# $data/out), each printed and kept as a fact "phases ceiling WHAT WHEN".
ceilings() {
  local when=$1 lines line what
  lines=$("$tpbench" spin 3 "$data/out") || { echo "== phases: $when: tp-bench spin failed"; return 0; }
  while IFS= read -r line; do
    echo "== phases: $when: $line"
    what=${line%%:*}
    fact "phases ceiling ${what// /-} $when" "$(sed -n 's/.* did \([0-9.]*\)x .*/\1/p' <<< "$line")"
  done <<< "$lines"
}
# The machine's ceiling for the very work of each phase: BENCH_PHASE_COPIES (default 2)
# copies of the --jobs 1 conversion at once, as N independent processes share nothing of ours:
# N x a phase's --jobs 1 wall over the copies' mean wall is what N cores give that work at that
# moment (caches, memory, page cache, the host's scheduling), whatever the code. One group of
# copies per phase, so that the copies run that phase at the same time: the reader and the
# analysis from copies with the summaries only, each output from copies writing only it (it
# starts within a reader's drift of the others'): the default outputs, and Chrome JSON and
# SQLite where the case's $flags ask for them. phase_table.py prints it beside the --jobs 2
# ratio. Appends "PHASE+PHASE=a.json:b.json" groups to $copies.
copies_run() {
  local o k t cf pids group tag ts outs="reader html perfetto xlsx" pre=${cpfx:-phases}
  if ((ncopies < 2)); then
    ((r > 1)) || echo "== phases $name: no copies (BENCH_PHASE_COPIES / BENCH_SCALE_COPIES = $ncopies)"
    return 0
  fi
  [[ " $flags " == *" --json "* ]] && outs+=" chrome"
  [[ " $flags " == *" --sqlite "* ]] && outs+=" sqlite"
  for o in $outs; do
    tag=write/$o
    case $o in
      reader) cf="${reader_flags[*]}" tag="read+analysis" ;;
      html) cf="--disable_perfetto --disable_doc" ;;
      perfetto) cf="--disable_web --disable_doc" ;;
      xlsx) cf="--disable_web --disable_perfetto" ;;
      chrome) cf="${reader_flags[*]} --json" ;;
      sqlite) cf="${reader_flags[*]} --sqlite" ;;
    esac
    echo "== phases $name: $ncopies copies at once: tpuprof $dir OUT -q --jobs 1 --timings T $cf"
    pids="" ts=()
    for ((k = 1; k <= ncopies; k++)); do
      t=$data/$pre-$name-copy-$o-r$r-c$k.json
      rm -rf "$data/out/$pre-$name-copy$k" "$t"
      # shellcheck disable=SC2086
      "$tpuprof" "$dir" "$data/out/$pre-$name-copy$k" -q --jobs 1 --timings "$t" $cf &
      pids="$pids $!"
      ts+=("$t")
    done
    for k in $pids; do wait "$k" || echo "   (a copy exited with status $?)"; done
    for ((k = 1; k <= ncopies; k++)); do rm -rf "$data/out/$pre-$name-copy$k"; done
    # A group counts only whole: a copy that wrote no report leaves it out.
    group=""
    for t in "${ts[@]}"; do
      if [ ! -f "$t" ]; then group=""; break; fi
      group=${group:+$group:}$t
    done
    [ -z "$group" ] || copies=${copies:+$copies,}$tag=$group
  done
}
phase_bench() {
  local size=${BENCH_PHASE_SIZE:-1M} cdm_n=${BENCH_PHASE_CDM_CMDS:-1000000}
  local j out t name dir flags
  gen_case "$size"
  local cdm=$data/cdm-8x$cdm_n
  cdm_case "$cdm_n"
  # The machine's own ceilings for a --jobs 2 ratio, before and after the runs: on a shared VM
  # two threads do not always get two cores (integer work), nor twice the throughput of fresh
  # pages, of memory reads and of page-cache writes, which every phase pays for its memory and
  # outputs.
  ceilings before
  for c in "gen-$size|$data/gen-$size|--json --sqlite" "cdm-8x$cdm_n|$cdm|"; do
    IFS='|' read -r name dir flags <<< "$c"
    if [ ! -x "$tpuprof" ] || [ ! -d "$dir" ]; then
      echo "== phases $name: SKIPPED: tpuprof or $dir missing"
      continue
    fi
    # --jobs 1 and 2 alternately, BENCH_PHASE_REPEAT times (default 5): phase_table.py takes
    # each phase's best run of each, so a slow moment of a shared machine does not set a ratio.
    local r reps=${BENCH_PHASE_REPEAT:-5} ones="" twos="" copies=""
    local ncopies=${BENCH_PHASE_COPIES:-2} copy_reps=${BENCH_PHASE_COPY_REPEAT:-3}
    for ((r = 1; r <= reps; r++)); do
      for j in 1 2; do
        out=$data/out/phases-$name-j$j
        t=$data/phases-$name-j$j-r$r.json
        rm -rf "$out" "$t"
        echo "== phases $name: tpuprof $dir $out -q --jobs $j --timings $t $flags"
        # shellcheck disable=SC2086
        "$tpuprof" "$dir" "$out" -q --jobs "$j" --timings "$t" $flags ||
          echo "   (tpuprof exited with status $?)"
        rm -rf "$out"
        if [ -f "$t" ]; then
          if [ "$j" = 1 ]; then ones=${ones:+$ones,}$t; else twos=${twos:+$twos,}$t; fi
        fi
      done
      if ((r <= copy_reps)); then copies_run; fi
    done
    # Once with --jobs 16: how many threads each phase runs on where sixteen are offered,
    # which the structure decides (phase_table.py's thr16 and max16 columns).
    local wide=$data/phases-$name-j16.json
    out=$data/out/phases-$name-j16
    rm -rf "$out" "$wide"
    echo "== phases $name: tpuprof $dir $out -q --jobs 16 --timings $wide $flags"
    # shellcheck disable=SC2086
    "$tpuprof" "$dir" "$out" -q --jobs 16 --timings "$wide" $flags ||
      echo "   (tpuprof exited with status $?)"
    rm -rf "$out"
    [ -f "$wide" ] || wide=""
    if [ -n "$ones" ] && [ -n "$twos" ]; then
      /usr/bin/python3 "$here/bench/phase_table.py" "$name" "$ones" "$twos" "$facts" "$wide" \
        "$copies"
    fi
    # Memory per thread as the user meets it: the same conversion without --timings (the
    # small outputs written beside the large ones), peak RSS with --jobs 16 against --jobs 1.
    # On a 2-core machine the 16 threads still exist and hold their buffers, so the ratio
    # shows here.
    local rss1 rss16 count
    count=$("$tpbench" count "$dir")
    for j in 1 16; do
      out=$data/out/phases-$name-rss-j$j
      rm -rf "$out"
      echo "== phases $name: peak RSS of tpuprof $dir $out -q --jobs $j $flags"
      # shellcheck disable=SC2086
      "$tpbench" run --out "$rows" --name "phases $name --jobs $j" --group phases \
        --cmds "${count% *}" --cores "${count#* }" --clean "$out" -- \
        "$tpuprof" "$dir" "$out" -q --jobs "$j" $flags || echo "   (tpuprof exited with status $?)"
      rm -rf "$out"
    done
    # A failed run's row (column 8: its status) gives no figure.
    rss_of() { awk -F'\t' -v n="phases $name --jobs $1" '$1 == n && $8 == 0 { c = $7 } END { print c }' "$rows"; }
    rss1=$(rss_of 1)
    rss16=$(rss_of 16)
    if [ -n "$rss1" ] && [ -n "$rss16" ] && [ "$rss1" -gt 0 ]; then
      fact "phases $name rss j1 KiB" "$rss1"
      fact "phases $name rss j16 KiB" "$rss16"
      awk -v a="$rss1" -v b="$rss16" -v n="$name" 'BEGIN {
        printf "   peak RSS of %s: %.1f MiB with --jobs 1, %.1f MiB with --jobs 16 (%.2fx; %.2f MiB per extra thread)\n",
               n, a / 1024, b / 1024, b / a, (b - a) / 1024 / 15 }'
    fi
  done
  ceilings after
}
if [ "${BENCH_ONLY:-}" = phases ]; then
  mkdir -p "$data/out"
  phase_bench
  awk -f "$here/bench/targets.awk" "$facts" /dev/null /dev/null
  exit 0
fi

# ---- scaling: --jobs 1 to 16 on the machine's own cores -------------------------------------
# The sixteen-core table on a machine that has the cores (docs/perf-notes/cores.md): the
# generated BM1688 dump (2 cores x BENCH_PHASE_SIZE commands, default 1M) and the 8-core cdm
# dump (BENCH_PHASE_CDM_CMDS per core), `cat` of each (group io), then per dump reader +
# summary (group scale-NAME-read) and every default output (scale-NAME) at each --jobs of BENCH_SCALE_JOBS
# (default "1 2 4 8 16"), Perfetto only at the widest, and for the BM1688 dump every default
# output plus --json --sqlite at 1 and the widest, each row the best of BENCH_SCALE_REPEAT
# runs (default 2), after one untimed conversion of the dump; before them tp-bench spin's
# ceilings on the widest --jobs' threads. The default outputs
# of every --jobs are compared by checksum. Then per phase (`--timings`, bench/phase_table.py)
# --jobs 1 against the widest, and the targets: every default output of the 2 M-command dump
# <= 2 s and >= 8x faster than --jobs 1, reader + summary >= 8x and >= 5 GB/s of input,
# --json --sqlite on top <= 4 s, the cdm dump's default outputs <= 3 s, peak RSS of the widest
# <= 1.3x that of --jobs 1. Runs in the full bench on a machine of 8 cores or more, and with
# BENCH_ONLY=scaling anywhere (on fewer cores the threads share them: only the structure shows).
outputs_sum() { # DIR -> one checksum of every file under DIR, by relative path
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}
scale_bench() {
  local size=${BENCH_PHASE_SIZE:-1M} cdm_n=${BENCH_PHASE_CDM_CMDS:-1000000}
  local jobs=${BENCH_SCALE_JOBS:-1 2 4 8 16} wide=1 j name dir group count bytes out r s1 sums
  local c flags n
  gen_case "$size"
  cdm_case "$cdm_n"
  for j in $jobs; do [ "$j" -gt "$wide" ] && wide=$j; done
  echo "== scaling: $(nproc) CPUs, --jobs $jobs"
  # The machine's own ceilings for a --jobs $wide ratio (the spin lines of phase_bench, on
  # $wide threads): whether $wide busy cores keep one busy core's clock and memory throughput.
  local lines line what
  if lines=$("$tpbench" spin 3 "$data/out" "$wide"); then
    while IFS= read -r line; do
      echo "== scaling: ceiling: $line"
      what=${line%%:*}
      fact "scale ceiling ${what// /-}" "$(sed -n 's/.* did \([0-9.]*\)x .*/\1/p' <<< "$line")"
    done <<< "$lines"
  else
    echo "== scaling: tp-bench spin failed"
  fi
  for c in "gen-$size|$data/gen-$size" "cdm-8x$cdm_n|$data/cdm-8x$cdm_n"; do
    IFS='|' read -r name dir <<< "$c"
    group=scale-$name
    count=$("$tpbench" count "$dir")
    bytes=$(du -sb "$dir" | cut -f1)
    fact "scale $name bytes" "$bytes"
    "$tpbench" run --out "$rows" --name "cat $name" --group io --cmds "${count% *}" \
      --cores "${count#* }" --bytes "$bytes" --repeat "${BENCH_SCALE_REPEAT:-2}" -- \
      sh -c 'cat "$1"/* > /dev/null' sh "$dir"
    # Untimed, once: the first conversion on a fresh machine also pays for the memory the
    # hypervisor has not yet given the guest.
    rm -rf "$data/out/scale-warm"
    "$tpuprof" "$dir" "$data/out/scale-warm" -q --jobs "$wide" >/dev/null 2>&1 || true
    rm -rf "$data/out/scale-warm"
    sums="" n=0
    r=${BENCH_SCALE_REPEAT:-2}
    for j in $jobs; do
      n=$((n + 1))
      BENCH_GROUP=$group-read BENCH_CASE_REPEAT=$r bench_case "$name reader+summary --jobs $j" \
        "$dir" "${reader_flags[@]}" --jobs "$j" -q
      BENCH_KEEP_OUT=1 BENCH_GROUP=$group BENCH_CASE_REPEAT=$r bench_case \
        "$name default --jobs $j" "$dir" --jobs "$j" -q
      out=$data/out/$(echo "$name default --jobs $j" | tr -c 'A-Za-z0-9._-' '_')
      [ -d "$out" ] && sums="$sums $j:$(outputs_sum "$out")"
      [ "${BENCH_KEEP_OUT:-0}" = 1 ] || rm -rf "$out"
    done
    # shellcheck disable=SC2086
    set -- $sums
    local first=${1-} same=identical
    first=${first#*:}
    for s1 in "$@"; do [ "${s1#*:}" = "$first" ] || same="DIFFERENT (bug):$sums"; done
    # A conversion that wrote nothing leaves its --jobs out of the comparison: not a verdict.
    [ "$#" = "$n" ] || same="incomplete: outputs of --jobs${sums:- none}"
    echo "   $name default outputs across --jobs $jobs: $same"
    fact "scale $name identical" "$same"
    BENCH_GROUP=$group BENCH_CASE_REPEAT=$r bench_case \
      "$name perfetto only --jobs $wide" "$dir" --disable_web --disable_doc --jobs "$wide" -q
    if [ "$name" = "gen-$size" ]; then
      for j in 1 "$wide"; do
        BENCH_GROUP=$group BENCH_CASE_REPEAT=$r bench_case "$name json+sqlite --jobs $j" "$dir" \
          --json --sqlite --jobs "$j" -q
      done
    fi
  done
  echo
  echo "== scaling results (x = wall (ns/command) and RSS against the group's --jobs 1 row)"
  local base=()
  for name in "gen-$size" "cdm-8x$cdm_n"; do
    base+=(--baseline "scale-$name-read=$name reader+summary --jobs 1"
      --baseline "scale-$name=$name default --jobs 1")
  done
  "$tpbench" table "$rows" "${base[@]}"
  # Per phase, --jobs 1 against the widest (outputs one after another, see phase_bench), and
  # beside it the machine's own ratio for each phase's work: BENCH_SCALE_COPIES (default the
  # widest --jobs; 0 for none) copies of --jobs 1 at once, once (copies_run).
  local ncopies=${BENCH_SCALE_COPIES:-$wide} copies cpfx=scale
  for c in "gen-$size|$data/gen-$size|--json --sqlite" "cdm-8x$cdm_n|$data/cdm-8x$cdm_n|"; do
    IFS='|' read -r name dir flags <<< "$c"
    for j in 1 "$wide"; do
      out=$data/out/scale-phases-$name-j$j
      rm -rf "$out" "$data/scale-$name-j$j.json"
      # shellcheck disable=SC2086
      "$tpuprof" "$dir" "$out" -q --jobs "$j" --timings "$data/scale-$name-j$j.json" $flags ||
        echo "   (tpuprof exited with status $?)"
      rm -rf "$out"
    done
    copies="" r=1
    copies_run
    [ -f "$data/scale-$name-j1.json" ] && [ -f "$data/scale-$name-j$wide.json" ] &&
      /usr/bin/python3 "$here/bench/phase_table.py" "$name" "$data/scale-$name-j1.json" \
        "$data/scale-$name-j$wide.json" "" "$data/scale-$name-j$wide.json" "$copies"
  done
  echo
  awk -f "$here/bench/targets.awk" -v only=scale -v size="$size" -v cdm="cdm-8x$cdm_n" \
    -v wide="$wide" -v ncpu="$(nproc)" "$facts" "$rows" /dev/null
}
if [ "${BENCH_ONLY:-}" = scaling ]; then
  mkdir -p "$data/out"
  scale_bench
  exit 0
fi

echo "tpuprof benchmarks ($(nproc) CPUs; build $build; data $data)"

# ---- generator -------------------------------------------------------------------------
if [ "${BENCH_ONLY:-}" != json ]; then
  scratch=$data/gen-scratch
  rm -rf "$scratch"
  echo "== gendump 1M/core scratch run (always timed)"
  "$tpbench" run --out "$rows" --name "gendump 1M/core (scratch)" --group gen --cmds 2000000 \
    --cores 2 -- "$gendump" --arch BM1688 --cores 2 --cmds 1000000 --seed 2 --quiet "$scratch"
  echo "   size: $(human_size "$scratch")"
  rm -rf "$scratch"
fi
for s in $sizes; do
  gen_case "$s"
done
# BENCH_ONLY=json: only the Chrome JSON writer rows (reader+summary, json, json --jobs 1) of
# each size but 10M.
if [ "${BENCH_ONLY:-}" = json ]; then
  baseline=""
  for s in $sizes; do
    [ "$s" = 10M ] && continue
    [ -z "$baseline" ] && baseline="gen-$s reader+summary"
    bench_case "gen-$s reader+summary" "$data/gen-$s" "${reader_flags[@]}"
    json_bench "$s"
  done
  "$tpbench" table "$rows" --baseline "convert=$baseline"
  exit 0
fi

# ---- cases -------------------------------------------------------------------------------
# Machine baselines measured in this run (the machine may be loaded: compare ratios, not
# seconds): `cat` of each dump's files (group "io"; the floor of any reader), and
# libxlsxwriter's own ceiling (group "xlsx", below).
for s in $sizes; do
  [ -d "$data/gen-$s" ] || continue
  count=$("$tpbench" count "$data/gen-$s")
  "$tpbench" run --out "$rows" --name "cat gen-$s (input bytes)" --group io --cmds "${count% *}" \
    --cores "${count#* }" --repeat "$(repeat_for "$s")" -- \
    sh -c 'cat "$1"/* > /dev/null' sh "$data/gen-$s"
  BENCH_CASE_REPEAT=$(repeat_for "$s") BENCH_GROUP=io bench_case "gen-$s reader+summary (vs cat)" "$data/gen-$s" "${reader_flags[@]}"
  # One reader thread (the global.profile chunks tokenized by the calling thread only): the
  # gain of the parallel reader; input GB/s per core = dump bytes / CPU s of these rows.
  BENCH_CASE_REPEAT=$(repeat_for "$s") BENCH_GROUP=io bench_case "gen-$s reader+summary --jobs 1 (vs cat)" "$data/gen-$s" \
    "${reader_flags[@]}" --jobs 1
  echo "   gen-$s input: $(du -sb "$data/gen-$s" | cut -f1) bytes"
  fact "gen-$s input" "$(du -sb "$data/gen-$s" | cut -f1)"
  # The text half of the reader against bare scalar scans of the same global.profile, in
  # process from memory (bench/textscan_bench.c): how close the parser is to the machine.
  if [ -x "$build/textscan_bench" ]; then
    echo "== gen-$s global.profile: bare scans vs the reader's parser (textscan_bench)"
    "$build/textscan_bench" "$data/gen-$s/global.profile" 3
  else
    echo "== gen-$s textscan: SKIPPED: $build/textscan_bench not built"
  fi
done
# The first convert row is the baseline of the ratios and of bytes/command.
baseline=""
for s in $sizes; do
  [ -z "$baseline" ] && baseline="gen-$s reader+summary"
  BENCH_CASE_REPEAT=$(repeat_for "$s") bench_case "gen-$s reader+summary" "$data/gen-$s" "${reader_flags[@]}"
done
if [ -d "$real" ]; then
  BENCH_CASE_REPEAT=$(repeat_for real) bench_case "real resnet50 reader+summary" "$real" \
    "${reader_flags[@]}"
  BENCH_CASE_REPEAT=$(repeat_for real) bench_case "real resnet50 all outputs" "$real"
else
  echo "== real resnet50: SKIPPED: $real is absent"
fi
# Every default output (targets: <= 20 s and <= 64 B/cmd at 1M/core, <= 4 min and <= 2 GB at
# 10M/core); below 10M also with one thread, the gain of the threads.
for s in $sizes; do
  BENCH_CASE_REPEAT=$(repeat_for "$s") bench_case "gen-$s all outputs" "$data/gen-$s"
  [ "$s" = 10M ] && continue
  BENCH_CASE_REPEAT=$(repeat_for "$s") bench_case "gen-$s all outputs --jobs 1" "$data/gen-$s" \
    --jobs 1
done
# cdm_profile_data (BM1690, 8 cores, mode 1 = DYN_DATA command records) at 1 M commands per
# core: reader + summary, and every default output. BENCH_CDM=0 skips it; BENCH_CDM_CMDS
# changes the size.
if [ "${BENCH_CDM:-1}" = 1 ]; then
  cdm_n=${BENCH_CDM_CMDS:-1000000}
  cdm_dir=$data/cdm-8x$cdm_n
  cdm_case "$cdm_n"
  BENCH_CASE_REPEAT=$(repeat_for cdm) bench_case "cdm-8core-$cdm_n reader+summary" "$cdm_dir" \
    "${reader_flags[@]}"
  BENCH_CASE_REPEAT=$(repeat_for cdm) bench_case "cdm-8core-$cdm_n all outputs" "$cdm_dir"
fi
capture_read_bench
# Workbook (PerfDoc/PerfAI_output.xlsx): doc on, web and Perfetto off; its cost is a row
# minus the "gen-N reader+summary" row of the same dump (group convert). Group "xlsx":
#  - "gen-N xlsx": the default job (--xlsx_rows 50000 per engine and core; docs/xlsx.md);
#  - "gen-N xlsx --xlsx_rows all": every command a row (not at 10M: ~14 min here);
#  - "bare libxlsxwriter, census of gen-N": libxlsxwriter alone writing as many cells of the
#    same types and sizes as that workbook holds (bench/xlsx_census.py counts them; xlsx_gen
#    bare writes them), i.e. the library's own ceiling for the same cells.
# The line "xlsx writer vs bare" then prints (CPU of the all-rows row - CPU of reader+summary)
# / CPU of the bare row: tpuprof's per-cell overhead over the library's (target <= 1.5).
xlsx_gen=$build/tests/tools/xlsx_gen
for s in $sizes; do
  BENCH_GROUP=xlsx bench_case "gen-$s xlsx" "$data/gen-$s" --disable_web --disable_perfetto
  [ "$s" = 10M ] && continue
  name="gen-$s xlsx --xlsx_rows all"
  BENCH_KEEP_OUT=1 BENCH_GROUP=xlsx bench_case "$name" "$data/gen-$s" --disable_web \
    --disable_perfetto --xlsx_rows all
  out=$data/out/$(echo "$name" | tr -c 'A-Za-z0-9._-' '_')
  wb=$out/PerfDoc/PerfAI_output.xlsx
  if [ -x "$xlsx_gen" ] && [ -f "$wb" ]; then
    read -r c_rows c_cells c_spm c_slen c_fpm < <(/usr/bin/python3 "$here/bench/xlsx_census.py" "$wb")
    echo "   census: $c_rows rows x $c_cells cells, $c_spm/1000 strings of $c_slen B, $c_fpm/1000 fractional numbers"
    mkdir -p "$data/out/bare"
    "$tpbench" run --out "$rows" --name "bare libxlsxwriter, census of gen-$s" --group xlsx \
      --cmds "$c_rows" --cores 1 -- "$xlsx_gen" bare "$data/out/bare" "$c_rows" "$c_cells" \
      "$c_spm" "$c_slen" "$c_fpm" || echo "   (xlsx_gen bare exited with status $?)"
    echo "   bare workbook $(human_size "$data/out/bare/bare.xlsx") vs tpuprof's $(human_size "$wb")"
    rm -rf "$data/out/bare"
    a=$(row_cpu "$name") r=$(row_cpu "gen-$s reader+summary") b=$(row_cpu "bare libxlsxwriter, census of gen-$s")
    if [ -n "$a" ] && [ -n "$r" ] && [ -n "$b" ] && [ "$b" -gt 0 ]; then
      awk -v a="$a" -v r="$r" -v b="$b" -v s="$s" 'BEGIN {
        printf "   xlsx writer vs bare (gen-%s, every row): (%.2f - %.2f) s / %.2f s CPU = %.2fx\n",
               s, a / 1e9, r / 1e9, b / 1e9, (a - r) / b }'
    fi
  else
    echo "   (no census: $xlsx_gen or $wb missing)"
  fi
  [ "${BENCH_KEEP_OUT:-0}" = 1 ] || rm -rf "$out"
done
# One workbook past Excel's 1,048,576-row limit, in process: 1.6 M synthetic commands, of which
# 1.12 M on TIU core 0, so TIU_0 continues on "TIU_0 (2)" (tests/tools/xlsx_gen.c prints rows/s).
if [ -x "$xlsx_gen" ]; then
  rm -rf "$data/out/xlsx-spill"
  echo "== xlsx_gen 1.6M commands (TIU_0 spills past 1,048,576 rows)"
  "$tpbench" run --out "$rows" --name "xlsx_gen 1.6M profile only" --group xlsx-gen \
    --cmds 1600000 --cores 2 -- "$xlsx_gen" bench-profile "$data/out/xlsx-spill" 1600000
  XLSX_GEN_ROWS=all "$tpbench" run --out "$rows" --name "xlsx_gen 1.6M spill" --group xlsx-gen \
    --cmds 1600000 --cores 2 -- "$xlsx_gen" bench "$data/out/xlsx-spill" 1600000
  echo "   output: $(human_size "$data/out/xlsx-spill")"
  [ "${BENCH_KEEP_OUT:-0}" = 1 ] || rm -rf "$data/out/xlsx-spill"
else
  echo "== xlsx_gen: SKIPPED: $xlsx_gen not built"
fi
# Trace writers, each alone on top of reader+summary: a row minus the reader+summary
# row of the same dump is that writer's cost. Then the Perfetto file's bytes per slice (slices
# counted by `tpuprof check`), and the writers in process on a synthetic profile
# (src/writers/sink/trace_bench: bytes/slice, slices/s by wall and by CPU time).
for s in $sizes; do
  # result.html alone on top of reader+summary (the page writer's cost, as for the traces).
  r=$(repeat_for "$s")
  BENCH_CASE_REPEAT=$r bench_case "gen-$s html" "$data/gen-$s" --disable_perfetto --disable_doc
  BENCH_CASE_REPEAT=$r bench_case "gen-$s perfetto" "$data/gen-$s" --disable_web --disable_doc
  BENCH_CASE_REPEAT=$r bench_case "gen-$s perfetto compact" "$data/gen-$s" --disable_web \
    --disable_doc --trace_args compact
  [ "$s" = 10M ] && continue
  json_bench "$s"
done
# SQLite (target >= 1 M rows/s), group "sqlite-SIZE" per dump: the writer in process
# (bench/sqlite_bench dump: slices and args rows/s separately, from SQLite's insert time, load
# vs index+commit, B/row of the database, peak RSS; CPU seconds), then its baseline measured
# in this run: a bare sqlite3 loop (sqlite_bench bare) inserting as many slice and arg rows of
# the same shape into the same schema, indexes included. The ratio column of the writer's row
# is its cost relative to SQLite's own. Then the CLI end to end (reader + summary + sqlite).
sqlite_bench=$build/sqlite_bench
sqlite_baselines=()
for s in $sizes; do
  [ "$s" = 10M ] && continue
  [ -d "$data/gen-$s" ] || continue
  if [ -x "$sqlite_bench" ]; then
    count=$("$tpbench" count "$data/gen-$s")
    mkdir -p "$data/out"
    db=$data/out/sqlite-$s.db
    echo "== gen-$s sqlite: writer in process, then a bare sqlite3 loop of the same rows"
    "$tpbench" run --out "$rows" --name "gen-$s sqlite writer (in process)" \
      --group "sqlite-$s" --cmds "${count% *}" --cores "${count#* }" -- \
      "$sqlite_bench" dump "$data/gen-$s" "$db" | tee "$data/out/sqlite-$s.txt" ||
      echo "   (sqlite_bench exited with status $?)"
    fact "sqlite-$s rows/s" \
      "$(sed -n 's/.* total [0-9.]* s = \([0-9.]*\) M rows\/s.*/\1/p' "$data/out/sqlite-$s.txt")"
    nsl=$(sed -n 's/.* slices \([0-9]*\) in .*/\1/p' "$data/out/sqlite-$s.txt")
    nar=$(sed -n 's/.* args \([0-9]*\) in .*/\1/p' "$data/out/sqlite-$s.txt")
    if [ -n "$nsl" ] && [ -n "$nar" ]; then
      "$tpbench" run --out "$rows" --name "bare sqlite3 loop $nsl+$nar rows" \
        --group "sqlite-$s" --cmds "${count% *}" --cores "${count#* }" -- \
        "$sqlite_bench" bare "$db.bare" "$nsl" "$nar" || echo "   (sqlite_bench exited with status $?)"
      sqlite_baselines+=(--baseline "sqlite-$s=bare sqlite3 loop $nsl+$nar rows")
    fi
    rm -f "$db" "$db.bare" "$data/out/sqlite-$s.txt"
  else
    echo "== gen-$s sqlite in process: SKIPPED: $sqlite_bench not built"
  fi
  BENCH_GROUP="sqlite-$s" bench_case "gen-$s sqlite (CLI)" "$data/gen-$s" --disable_web \
    --disable_doc --disable_perfetto --sqlite
done
for s in $sizes; do
  [ -x "$tpuprof" ] && [ -d "$data/gen-$s" ] || continue
  pf=$data/out/pf-$s
  rm -rf "$pf"
  for args in full compact; do
    rm -rf "$pf"
    "$tpuprof" "$data/gen-$s" "$pf" --disable_web --disable_doc --disable_summary -q \
      --trace_args "$args"
    slices=$("$tpuprof" check "$pf/perfetto.pftrace" | sed -n 's/.* \([0-9]*\) slices .*/\1/p')
    bytes=$(stat -c %s "$pf/perfetto.pftrace")
    echo "== gen-$s perfetto.pftrace (--trace_args $args): $bytes bytes, $slices slices," \
      "$(awk -v b="$bytes" -v n="$slices" 'BEGIN { printf "%.2f", b / n }') bytes/slice"
  done
  rm -rf "$pf"
done
# The trace writers alone on a generated dump (read once, untimed; src/writers/sink/trace_bench),
# Each row prints slices/s (JSON: events/s) by wall and CPU, bytes/slice, the CPU
# of the encoding thread, the peak RSS added over the model, and its ratio to the baseline
# row `deflate` measured in the same run: libdeflate level 1 alone, one thread, over the
# uncompressed trace's bytes in the writer's 256 KiB chunks (the compressor's own ceiling).
# perfetto = compact args with compression workers (the CLI default threads), perfetto-1t =
# compression inline, perfetto-full = every reference arg, drive = the sink driver alone.
for s in $sizes; do
  [ "$s" = 10M ] && continue
  [ -x "$build/bench/trace_bench" ] && [ -d "$data/gen-$s" ] || continue
  echo "== gen-$s trace writers in process (trace_bench)"
  TP_BENCH_REPEAT=$(repeat_for "$s") \
    "$build/bench/trace_bench" "$data/gen-$s" "$data/out/tw-$s" perfetto-plain deflate drive \
    perfetto perfetto-1t perfetto-full json perfetto-full-plain | tee "$data/tw-$s.txt"
  # The compression level / chunk size sweep over the same raw packet streams (bench/
  # pftrace_sweep.c: B/slice and compression CPU per codec, level and chunk, one thread; the
  # writer's default is libdeflate level 1, 256 KiB chunks). igzip (ISA-L) rows are the
  # "faster codec" baseline; "unstable" counts chunks whose size changed between passes.
  if [ -x "$build/pftrace_sweep" ] && [ -f "$data/out/tw-$s/plain.pftrace" ]; then
    echo "== gen-$s perfetto compression sweep, compact args (pftrace_sweep)"
    "$build/pftrace_sweep" "$data/out/tw-$s/plain.pftrace" count 1,2,3,i1,i2,i3 128,256,512 2
    echo "== gen-$s perfetto compression sweep, full args, the CLI default (pftrace_sweep)"
    "$build/pftrace_sweep" "$data/out/tw-$s/full-plain.pftrace" count 1,2,i1,i3 256 2
  fi
  rm -rf "$data/out/tw-$s"
done
if [ -x "$build/bench/trace_bench" ]; then
  echo "== trace writers in process, synthetic profile (4 cores, TIU/GDMA/SDMA)"
  "$build/bench/trace_bench" 2000000 "$data/out/trace-bench" perfetto perfetto-plain json
  "$build/bench/trace_bench" 200000 "$data/out/trace-bench" sqlite
  rm -rf "$data/out/trace-bench"
else
  echo "== trace writers in process: SKIPPED: $build/bench/trace_bench not built"
fi
traceread_bench
phase_bench
if [ "$(nproc)" -ge 8 ]; then
  scale_bench
else
  echo "== scaling: SKIPPED: $(nproc) CPUs, fewer than 8 (BENCH_ONLY=scaling runs it anyway)"
fi
if [ -n "${BENCH_EXTRA:-}" ]; then
  # shellcheck disable=SC1090
  . "$BENCH_EXTRA"
fi

# ---- capture overhead on the bert_mini example ----------------------------------------------
# End-to-end slowdown of a real inference program (examples/bert_mini: OpenBLAS encoder,
# ~60 operators per step) with capture on, TPUPROF=1 and TPUPROF=2, against capture off:
# interleaved runs, medians (examples/bert_mini/bench_capture.sh). Target: <= 2 % in mode 1.
# BENCH_BERT_ROUNDS (default 7) sets the runs per mode.
if [ -x "$bert" ]; then
  echo "== capture overhead: bert_mini, ${BENCH_BERT_ROUNDS:-7} runs per mode"
  "$here/examples/bert_mini/bench_capture.sh" "$bert" "${BENCH_BERT_ROUNDS:-7}" ||
    echo "   (bench_capture.sh exited with status $?)"
else
  echo "== capture overhead: SKIPPED: $bert not built"
fi

# ---- result.html in headless chromium: html_bench (defined at the top) -----------------------
html_bench

# ---- capture runtime (libtpuprof): ns per op begin/end pair, off and on (modes 0/1/2) ----
if [ -x "$build/bench/capture_bench" ]; then
  echo "== libtpuprof capture overhead (crash-safe, next extent pre-faulted in the background)"
  "$build/bench/capture_bench"
  # The same with the recording thread mapping its own extents (the cost the pre-fault takes
  # off it; compare the "ns/pair min" and "thread cpu" columns) and with private memory.
  echo "== libtpuprof capture overhead, TPUPROF_PREFAULT=0 (each thread maps its extents)"
  TPUPROF_PREFAULT=0 "$build/bench/capture_bench"
  echo "== libtpuprof capture overhead, TPUPROF_CRASHSAFE=0 (private memory, not crash-safe)"
  TPUPROF_CRASHSAFE=0 "$build/bench/capture_bench"
else
  echo "== libtpuprof capture overhead: SKIPPED: $build/bench/capture_bench not built"
fi

# ---- the tpuprof Python package (python/, bench/python_bench.py) ----------------------------
# ns per begin/end pair from Python in each mode (goal <= 150 ns in modes 0-1) and
# tpuprof.torch's slowdown on ResNet-18 CPU training steps (goals <= 3 % in mode 1, <= 10 %
# in mode 2). BENCH_TORCH_ROUNDS / _STEPS / _BATCH / _IMAGE size the ResNet-18 part.
if [ -d "$build/python/tpuprof" ]; then
  PYTHONPATH="$build/python" /usr/bin/python3 "$here/bench/python_bench.py" ||
    echo "   (python_bench.py exited with status $?)"
else
  echo "== tpuprof Python package: SKIPPED: $build/python/tpuprof not built (python3-dev)"
fi

# ---- Chrome-trace JSON, gzip'd ---------------------------------------------------------------
# The traceread case's generated trace gzip'd (-6), converted by tpuprof (reader + summary; the
# reader inflates as it reads) against zcat of the same file, both under tp-bench (compare their
# CPU s: the same text, decompressed alone vs decompressed and read), then the reader alone in
# process (traceread_bench; its MB/s are of the compressed file). Separate from the rows above.
tracegz_bench() {
  local mib=${BENCH_TRACE_MIB:-512}
  local trace=$data/trace-${mib}M.json gz=$data/trace-${mib}M.json.gz out=$data/out/tracegz
  if [ ! -f "$trace" ] || [ ! -x "$build/traceread_bench" ]; then
    echo "== chrome trace .json.gz: SKIPPED: $trace or $build/traceread_bench missing"
    return 0
  fi
  [ -f "$gz" ] && [ "$gz" -nt "$trace" ] || gzip -6 -c "$trace" > "$gz"
  echo "== chrome trace .json.gz: $(human_size "$gz") gzip -6 of the $(human_size "$trace") trace"
  "$tpbench" run --out "$rows" --name "chrome trace ${mib}MiB .json.gz: zcat" --group tracegz \
    --cmds 0 --cores 1 -- sh -c 'zcat "$1" > /dev/null' sh "$gz"
  rm -rf "$out"
  "$tpbench" run --out "$rows" --name "chrome trace ${mib}MiB .json.gz reader+summary" \
    --group tracegz --cmds 0 --cores 1 -- "$tpuprof" "$gz" "$out" "${reader_flags[@]}" -q ||
    echo "   (tpuprof exited with status $?)"
  rm -rf "$out"
  "$build/traceread_bench" "$gz" 3
}
tracegz_bench

# ---- results -----------------------------------------------------------------------------
echo
echo "== results (wall time and peak RSS of each child process)"
"$tpbench" table "$rows" --baseline "convert=$baseline" ${sqlite_baselines[@]+"${sqlite_baselines[@]}"}
echo
# Issue 10's targets, each with its figure from this run and met / MISSED (bench/targets.awk).
tw1m=$data/tw-1M.txt
[ -f "$tw1m" ] || tw1m=/dev/null
awk -f "$here/bench/targets.awk" "$facts" "$rows" "$tw1m"
echo
# ---- a whole job (job_bench, defined at the top): its own block and table --------------------
job_bench
echo
echo "disk: $(human_size "$data") in $data"
