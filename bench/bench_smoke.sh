#!/usr/bin/env bash
# bench_smoke.sh BUILD — checks the benchmark driver itself (not any timing): tp-bench run
# appends one row per child with its exit status and the child's own peak RSS (--repeat,
# --clean), tp-bench count reads the COMMAND blocks of a generated dump, tp-bench table prints
# the rows, tp-bench spin prints its three ceilings, bench/phase_table.py derives thr16 and
# max16 from a --jobs 16 report, and bench/targets.awk turns figures into the targets' verdicts.
set -euo pipefail
b=$1
d=$(mktemp -d "${TMPDIR:-/tmp}/bench_smoke.XXXXXX")
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$b/tp-bench" run --out "$d/rows" --name "gen 1k" --group gen --cmds 2000 --cores 2 -- \
  "$b/tpuprof-gendump" --quiet --cmds 1000 --seed 5 "$d/dump"
[ "$("$b/tp-bench" count "$d/dump")" = "2000 2" ] || fail "count: $("$b/tp-bench" count "$d/dump")"
[ "$("$b/tp-bench" count "$d/nothing")" = "0 0" ] || fail "count of a missing dir"
# The child's status comes back, and the row records it.
if "$b/tp-bench" run --out "$d/rows" --name failing --group x -- false; then
  fail "tp-bench run returned 0 for a failing child"
fi
# Peak RSS is the child's: a child touching 64 MiB reports at least that much.
"$b/tp-bench" run --out "$d/rows" --name rss --group x -- \
  /usr/bin/python3 -c 'b = bytearray(64 << 20); b[::4096] = b"x" * len(b[::4096])'
[ "$(wc -l < "$d/rows")" = 3 ] || fail "expected 3 rows, got $(wc -l < "$d/rows")"
awk -F'\t' 'NR == 1 && ($1 != "gen 1k" || $3 != 2000 || $4 != 2 || $8 != 0) { exit 1 }
            NR == 2 && $8 != 1 { exit 1 }
            NR == 3 && ($7 < 65536 || $8 != 0) { exit 1 }
            NF != 11 || $9 < 0 || $10 != 1 || $11 != $6 { exit 1 }' "$d/rows" ||
  { cat "$d/rows"; fail "rows"; }
# CPU time is the child's: python filling 64 MiB spends some, and never more than a minute.
awk -F'\t' 'NR == 3 && ($9 < 1000000 || $9 > 60000000000) { exit 1 }' "$d/rows" ||
  { cat "$d/rows"; fail "CPU ns of the rss child"; }
# tp-bench's own RSS must not leak into the small child's row.
awk -F'\t' 'NR == 2 && $7 >= 65536 { exit 1 }' "$d/rows" || fail "RSS of 'false' looks inherited"
# --repeat R: the child runs R times (only the first run's output shows), the row is the
# fastest run with the median wall beside it; a failing run stops the repeats and is the row.
"$b/tp-bench" run --out "$d/rows" --name rep --group x --repeat 3 -- \
  sh -c 'echo run >> "$1"; echo shown; [ "$(wc -l < "$1")" = 2 ] && sleep 0.3; exit 0' sh \
  "$d/count" > "$d/rep.out"
[ "$(wc -l < "$d/count")" = 3 ] || fail "--repeat 3 ran the child $(wc -l < "$d/count") times"
[ "$(cat "$d/rep.out")" = shown ] || { cat "$d/rep.out"; fail "output of the repeats not hidden"; }
awk -F'\t' 'NR == 4 && ($10 != 3 || $6 >= 300000000 || $11 < $6 || $8 != 0) { exit 1 }' \
  "$d/rows" || { cat "$d/rows"; fail "--repeat row: runs, best wall, median"; }
rm -f "$d/count"
if "$b/tp-bench" run --out "$d/rows" --name repfail --group x --repeat 5 -- \
  sh -c 'echo run >> "$1"; [ "$(wc -l < "$1")" -lt 2 ]' sh "$d/count"; then
  fail "--repeat returned 0 although the second run failed"
fi
[ "$(wc -l < "$d/count")" = 2 ] || fail "--repeat went on after a failing run"
awk -F'\t' 'NR == 5 && ($10 != 2 || $8 != 1) { exit 1 }' "$d/rows" ||
  { cat "$d/rows"; fail "--repeat row of a failing run"; }
# --clean DIR: removed before every run (a child that refuses an existing DIR runs twice).
mkdir "$d/cl"
"$b/tp-bench" run --out "$d/rows.cl" --name clean --repeat 2 --clean "$d/cl" -- \
  sh -c '[ ! -e "$1" ] && mkdir "$1"' sh "$d/cl" 2> /dev/null ||
  fail "--clean: the output directory was still there"
if "$b/tp-bench" run --out "$d/rows.cl" --name noclean --repeat 2 -- \
  sh -c '[ ! -e "$1" ] && mkdir "$1"' sh "$d/cl" 2> /dev/null; then
  fail "the --clean check cannot fail"
fi
"$b/tp-bench" table "$d/rows" > "$d/table"
grep -q '^gen 1k  *gen  *2000 ' "$d/table" || { cat "$d/table"; fail "table row"; }
grep -q 'CPU s  *CPU/wall' "$d/table" || { cat "$d/table"; fail "table CPU columns"; }
grep -q 'wall s  *runs  *med s' "$d/table" || { cat "$d/table"; fail "table runs columns"; }
grep -Eq '^rep  +x  +0  +0\.[0-2][0-9][0-9]  +3  ' "$d/table" || { cat "$d/table"; fail "table rep row"; }
# tp-bench spin R DIR: one line per ceiling (integer work, fresh memory, memory reads, file
# writes into DIR), each with its two-thread ratio, and nothing left in DIR; a DIR it cannot
# write to fails.
mkdir "$d/spin"
"$b/tp-bench" spin 1 "$d/spin" > "$d/spin.out" || { cat "$d/spin.out"; fail "tp-bench spin"; }
for w in spin "fresh memory" "memory reads" "file writes"; do
  grep -Eq "^$w: one thread [0-9.]+ s, 2 threads [0-9.]+ s: 2 threads did [0-9]+\.[0-9]{2}x " \
    "$d/spin.out" || { cat "$d/spin.out"; fail "tp-bench spin: no '$w' line"; }
done
# N threads (the scaling bench's ceilings): the same lines with N; no N below 2 or above 64.
"$b/tp-bench" spin 1 "" 3 > "$d/spin3.out" || { cat "$d/spin3.out"; fail "tp-bench spin 1 '' 3"; }
[ "$(grep -Ec '^[a-z ]+: one thread [0-9.]+ s, 3 threads [0-9.]+ s: 3 threads did ' "$d/spin3.out")" = 3 ] ||
  { cat "$d/spin3.out"; fail "tp-bench spin with 3 threads: three lines without DIR"; }
for n in 1 65; do
  if "$b/tp-bench" spin 1 "" "$n" > /dev/null 2>&1; then fail "tp-bench spin with $n threads returned 0"; fi
done
[ -z "$(ls "$d/spin")" ] || { ls -la "$d/spin"; fail "tp-bench spin left files"; }
if "$b/tp-bench" spin 1 "$d/nothing/here" > /dev/null 2>&1; then
  fail "tp-bench spin into a missing directory returned 0"
fi
# phase_table.py with a --jobs 16 report: thr16 per phase (read/a: 4 there, 2 with --jobs 2)
# and max16, the --jobs 1 wall over the leaves' walls each divided by its threads (read:
# 4 / (2/4 + 2/16) = 6.4x; total: 10 / (0.5 + 0.125 + 6/16) = 10.0x), kept as facts; and the
# lowest --jobs 2 ratio is an output's (write/x, 1.50x), not "write", the outputs' sum.
ph() { # FILE JOBS then NAME:WALL:THREADS...
  local f=$1 jobs=$2 sep="" n w t
  shift 2
  { printf '{"version": 1, "jobs": %s, "input": "x", "phases": [' "$jobs"
    for x in "$@"; do
      IFS=: read -r n w t <<< "$x"
      printf '%s{"name": "%s", "depth": %s, "runs": 1, "wall_s": %s, "cpu_s": %s, "serial_cpu_s": 0, "threads": %s, "rss_start_bytes": 0, "rss_peak_bytes": 0}' \
        "$sep" "$n" "$([ "$n" = total ] && echo 0 || tr -cd / <<< "$n/" | wc -c)" "$w" "$w" "$t"
      sep=", "
    done
    printf ']}\n'; } > "$f"
}
ph "$d/p1.json" 1 total:10:1 read:4:1 read/a:2:1 read/b:2:1 write:6:1 write/x:6:1
ph "$d/p2.json" 2 total:6:2 read:2:2 read/a:1:2 read/b:1:2 write:4:2 write/x:4:2
ph "$d/p16.json" 16 total:2:16 read:1.5:16 read/a:1:4 read/b:0.5:16 write:0.5:16 write/x:0.5:16
: > "$d/pfacts"
/usr/bin/python3 "$(dirname "$0")/phase_table.py" t "$d/p1.json" "$d/p2.json" "$d/pfacts" \
  "$d/p16.json" > "$d/ptable" || { cat "$d/ptable"; fail "phase_table.py with a wide report"; }
grep -Eq '^ +a +2\.000 +1\.000 +2\.00x .* 4 +4\.0x$' "$d/ptable" || { cat "$d/ptable"; fail "thr16 row"; }
grep -q 'read could be at most 6.4x' "$d/ptable" || { cat "$d/ptable"; fail "read max16"; }
grep -q 'total could be at most 10.0x' "$d/ptable" || { cat "$d/ptable"; fail "total max16"; }
grep -qx 'phases t max16 read.6.40' "$d/pfacts" || { cat "$d/pfacts"; fail "max16 fact"; }
grep -q 'ratio of the reader, analysis or an output: 1.50x (write/x;' "$d/ptable" ||
  { cat "$d/ptable"; fail "lowest ratio: write/x, not write"; }
# Copies of --jobs 1 at once: per ranked phase the machine's ratio, 2 x the --jobs 1 wall over
# the least mean wall of the groups run for it (read: 2 x 4 / 5 = 1.60x, not the second
# group's 3, not run for read, nor the third's 5.5; write/x: the second group's mean of 6 and 7,
# 2 x 6 / 6.5 = 1.85x, not its max 7 nor the first group's 7) and the --jobs 2 ratio's share
# of it (read 2.00 / 1.60 = 125 %, write/x 1.50 / 1.846 = 81 %); facts: the lowest of each.
ph "$d/c1a.json" 1 total:13:1 read:5:1 write:8:1 write/x:8:1
ph "$d/c1b.json" 1 total:11:1 read:5:1 write:6:1 write/x:6:1
ph "$d/c2a.json" 1 total:11:1 read:3:1 write:6:1 write/x:6:1
ph "$d/c2b.json" 1 total:12:1 read:3:1 write:7:1 write/x:7:1
ph "$d/c3a.json" 1 total:12:1 read:5.5:1 write:6.5:1 write/x:6.5:1
ph "$d/c3b.json" 1 total:12:1 read:5.5:1 write:6.5:1 write/x:6.5:1
: > "$d/cfacts"
/usr/bin/python3 "$(dirname "$0")/phase_table.py" t "$d/p1.json" "$d/p2.json" "$d/cfacts" "" \
  "read+write/x=$d/c1a.json:$d/c1b.json,write/x=$d/c2a.json:$d/c2b.json,read=$d/c3a.json:$d/c3b.json" \
  > "$d/ctable" ||
  { cat "$d/ctable"; fail "phase_table.py with copies"; }
grep -Eq '^ +read +4\.000 +2\.000 +2\.00x .* 1\.60x +125%$' "$d/ctable" ||
  { cat "$d/ctable"; fail "copies: read row"; }
grep -Eq '^ +x +6\.000 +4\.000 +1\.50x .* 1\.85x +81%$' "$d/ctable" ||
  { cat "$d/ctable"; fail "copies: write/x row"; }
grep -Eq '^ +(total|write) .*%$' "$d/ctable" && { cat "$d/ctable"; fail "copies: unranked rows"; }
grep -qx 'phases t copies lowest.1.600' "$d/cfacts" || { cat "$d/cfacts"; fail "copies fact"; }
grep -qx 'phases t of copies.0.812' "$d/cfacts" || { cat "$d/cfacts"; fail "of copies fact"; }
grep -qx 'phases t of copies phase.write/x' "$d/cfacts" || { cat "$d/cfacts"; fail "of copies phase"; }
# The scaling bench passes the --jobs 16 report as the second: its columns name 16, and the
# lowest ratio has no --jobs 2 goal (read/a: 2 / 1 s).
/usr/bin/python3 "$(dirname "$0")/phase_table.py" t "$d/p1.json" "$d/p16.json" "" \
  "$d/p16.json" > "$d/ptable16" || { cat "$d/ptable16"; fail "phase_table.py 1 vs 16"; }
grep -Eq '^ +phase +wall 1 +wall 16 +x +CPU 1 +ser% 1 +ser% 16 ' "$d/ptable16" ||
  { cat "$d/ptable16"; fail "phase_table.py 1 vs 16: header"; }
grep -q 'lowest --jobs 16 ratio of the reader, analysis or an output: 2.67x (read)$' "$d/ptable16" ||
  { cat "$d/ptable16"; fail "phase_table.py 1 vs 16: lowest ratio"; }
# The text-scan baselines run over a real global.profile, the parser rows included.
if [ -x "$b/textscan_bench" ]; then
  "$b/textscan_bench" "$d/dump/global.profile" 1 > "$d/scan" || { cat "$d/scan"; fail "textscan"; }
  [ "$(grep -c 'GB/s per core' "$d/scan")" = 5 ] || { cat "$d/scan"; fail "textscan rows"; }
  if "$b/textscan_bench" "$d/nothing" 1 > /dev/null 2>&1; then fail "textscan of a missing file"; fi
fi
# The compression sweep over a generated dump's uncompressed traces (compact and full args):
# one row per codec and level that round-trips, 0 unstable chunks for libdeflate, the slices
# counted from the file.
if [ -x "$b/bench/trace_bench" ] && [ -x "$b/pftrace_sweep" ]; then
  TP_BENCH_REPEAT=2 "$b/bench/trace_bench" "$d/dump" "$d/tw" perfetto-plain \
    perfetto-full-plain > "$d/tw.log" || { cat "$d/tw.log"; fail "trace_bench plain traces"; }
  [ "$(grep -c 'best of 2, median wall' "$d/tw.log")" = 2 ] ||
    { cat "$d/tw.log"; fail "trace_bench TP_BENCH_REPEAT=2 rows"; }
  for f in plain full-plain; do
    "$b/pftrace_sweep" "$d/tw/$f.pftrace" count 1,i1 64 1 > "$d/sweep" 2>&1 ||
      { cat "$d/sweep"; fail "pftrace_sweep $f"; }
    awk '$1 == "libdeflate" && $2 == 1 && $3 == 64 && $4 > 0 && $NF == 0 { ok = 1 } END { exit !ok }' \
      "$d/sweep" || { cat "$d/sweep"; fail "pftrace_sweep $f: libdeflate row"; }
    grep -Eq '^igzip +1 +64 |^igzip level 1: SKIPPED' "$d/sweep" ||
      { cat "$d/sweep"; fail "pftrace_sweep $f: igzip row or SKIPPED"; }
    slices=$(awk '/^raw/ { print $4 }' "$d/sweep")
    [ "$slices" -gt 2000 ] || { cat "$d/sweep"; fail "pftrace_sweep $f: $slices slices"; }
  done
  if "$b/pftrace_sweep" "$d/dump/global.profile" count 1 64 1 > /dev/null 2>&1; then
    fail "pftrace_sweep of a file that is not a trace"
  fi
fi
# sqlite_bench bare writes its database through a tracked temporary: a finished run leaves the
# database only, a run stopped by SIGTERM leaves nothing (a multi-GB bench row cut short).
if [ -x "$b/sqlite_bench" ]; then
  mkdir "$d/sq"
  "$b/sqlite_bench" bare "$d/sq/a.db" 1000 5000 > "$d/sq.log" || { cat "$d/sq.log"; fail "sqlite_bench bare"; }
  [ "$(ls "$d/sq")" = a.db ] || { ls -la "$d/sq"; fail "sqlite_bench bare left $(ls "$d/sq")"; }
  rm "$d/sq/a.db"
  "$b/sqlite_bench" bare "$d/sq/b.db" 50000000 500000000 > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -n "$(ls "$d/sq")" ] && break; sleep 0.05; done
  [ -n "$(ls "$d/sq")" ] || fail "sqlite_bench bare made no file in 5 s"
  kill -TERM "$pid"
  if wait "$pid"; then fail "sqlite_bench bare finished 550 M rows before SIGTERM"; fi
  [ -z "$(ls "$d/sq")" ] || { ls -la "$d/sq"; fail "sqlite_bench left files after SIGTERM"; }
fi
# The targets table: each verdict follows its figure across the issue's limit (a reader at
# 1.99 GB/s/core misses, 2.01 meets; Perfetto 4.99 M slices/s misses), and a figure whose
# rows are absent says "not run".
t=$d/targets
printf 'gen-1M input\t2000000000\njson-1M events\t3000000\nsqlite-1M rows/s\t0.99\n' > "$t.facts"
row() { printf '%s\tconvert\t%s\t2\t0\t%s\t%s\t0\t%s\t3\t%s\n' "$@"; }
{
  row "gen-10k reader+summary" 20000 10000000 10000 10000000 10000000
  row "gen-1M reader+summary (vs cat)" 2000000 500000000 100000 1005025126 600000000
  row "gen-1M reader+summary --jobs 1 (vs cat)" 2000000 990000000 100000 995024875 999000000
  row "gen-1M reader+summary" 2000000 500000000 135100 900000000 500000000
  row "gen-1M json" 2000000 1500000000 140000 1900000000 1500000000
  row "gen-1M all outputs" 2000000 19900000000 135000 30000000000 20000000000
} > "$t.rows"
printf 'perfetto       slices 9  bytes 9  B/slice 16.01  wall 0.5 s  4.99 M slices/s  cpu 0.9 s (3.00 M/s)  main-thread cpu 0.5 s  peak RSS +1 MiB  best of 3, median wall 0.6 s (4.50 M/s)\n' > "$t.tw"
awk -f "$(dirname "$0")/targets.awk" "$t.facts" "$t.rows" "$t.tw" > "$t.out"
want() { grep -F -- "$1" "$t.out" | grep -Eq -- "$2\$" || { cat "$t.out"; fail "targets: $1 should be $2"; }; }
want "1M/core: <= 20 s" "met"
want "1M/core: <= 64 B/cmd peak RSS" "met"         # (135000 - 10000) KiB / 2 M = 64.0 B/cmd
want "10M/core" "-"
want "(--jobs N)" "MISSED"                          # 2 GB / 1.005 s = 1.99 GB/s
want "(--jobs 1)" "met"                             # 2 GB / 0.995 s = 2.01 GB/s
want "<= 64 B/cmd resident" "MISSED"                # 125100 KiB / 2 M = 64.05 B/cmd
want ">= 5 M slices/s" "MISSED"
want "<= 16 B/slice" "MISSED"
want "(CLI, over reader+summary)" "met"             # 3 M events in 1.0 s = 3.00 M/s
want "SQLite" "MISSED"
want "xlsx" "-"
grep -q '4.99 M/s (4.50' "$t.out" || { cat "$t.out"; fail "targets: Perfetto median"; }
grep -q 'job targets' "$t.out" && { cat "$t.out"; fail "targets: job rows without a job file"; }
# The job targets (only=job): ratios of the job row to the one-by-one row across their goals
# (wall 8 / 10 s = 0.80x meets <= 0.80; CPU 33.3 / 30 s = 1.11x misses <= 1.10; RSS
# 16000 / 12000 KiB = 1.33x meets <= 1.50), and "not run" when the loop failed.
jrow() { printf '%s\tjob\t1600000\t8\t0\t%s\t%s\t%s\t%s\t1\t%s\n' "$1" "$2" "$3" "$4" "$5" "$2"; }
{
  jrow "tpuprof job (16 dumps)" 8000000000 16000 0 33300000000
  jrow "one by one (16 x tpuprof DUMP)" 10000000000 12000 0 30000000000
} > "$t.jrows"
awk -f "$(dirname "$0")/targets.awk" -v only=job /dev/null /dev/null /dev/null "$t.jrows" > "$t.jout"
jwant() { grep -F -- "$1" "$t.jout" | grep -Eq -- "$2\$" || { cat "$t.jout"; fail "job targets: $1 should be $2"; }; }
jwant "job wall: <= 0.80x" "met"
jwant "job CPU: <= 1.10x" "MISSED"
jwant "job peak RSS (largest process): <= 1.50x" "met"
grep -q '0.80x (8.00 s / 10.00 s)' "$t.jout" || { cat "$t.jout"; fail "job targets: wall figure"; }
grep -q 'scale targets' "$t.jout" && { cat "$t.jout"; fail "job targets: only=job printed the scale targets"; }
jrow "one by one (16 x tpuprof DUMP)" 10000000000 12000 1 30000000000 > "$t.jrows"
awk -f "$(dirname "$0")/targets.awk" -v only=job /dev/null /dev/null /dev/null "$t.jrows" > "$t.jout"
jwant "tpuprof job vs one by one" "-"
# The scaling targets (only=scale): each verdict follows its figure across the issue's limit
# (default 16 s / 2.01 s = 7.96x misses >= 8x, its 2.01 s misses <= 2 s; reader 1.6 / 0.2 s =
# 8.00x meets, 1 GB / 0.2 s = 5.00 GB/s meets; cdm 3.00 s meets <= 3 s; RSS 130 / 100 MiB =
# 1.30x meets, 131 / 100 misses), the outputs' checksums, and "not run" for absent rows.
srow() { printf '%s	scale	2000000	2	0	%s	%s	0	%s	2	%s
' "$1" "$2" "$3" "$2" "$2"; }
{
  srow "gen-1M default --jobs 1" 16000000000 102400
  srow "gen-1M default --jobs 16" 2010000000 133120
  srow "gen-1M reader+summary --jobs 1" 1600000000 102400
  srow "gen-1M reader+summary --jobs 16" 200000000 134144
  srow "cdm-8x9 default --jobs 16" 3000000000 1000
} > "$t.srows"
printf 'scale gen-1M bytes	1000000000
scale gen-1M identical	identical
scale cdm-8x9 identical	DIFFERENT (bug): 1:a 16:b
scale ceiling spin	12.50
' > "$t.sfacts"
awk -f "$(dirname "$0")/targets.awk" -v only=scale -v size=1M -v cdm=cdm-8x9 -v wide=16 \
  -v ncpu=16 "$t.sfacts" "$t.srows" /dev/null > "$t.sout"
swant() { grep -F -- "$1" "$t.sout" | grep -Eq -- "$2\$" || { cat "$t.sout"; fail "scale targets: $1 should be $2"; }; }
swant "every default output, gen-1M: <= 2 s" "MISSED"
swant "every default output, gen-1M: >= 8x --jobs 1" "MISSED"
swant "reader + summary, gen-1M: >= 8x --jobs 1" "met"
swant "reader + summary, gen-1M: >= 5 GB/s of input" "met"
swant "default + --json --sqlite, gen-1M" "-"
swant "every default output, cdm-8x9: <= 3 s" "met"
swant "gen-1M default: <= 1.3x" "met"
swant "gen-1M reader+summary: <= 1.3x" "MISSED"
swant "peak RSS, cdm-8x9 default" "-"
swant "identical for every --jobs, gen-1M" "met"
swant "identical for every --jobs, cdm-8x9" "MISSED"
swant "ceiling of this machine, spin" "\(reported\)"
grep -q '7.96x (16.00 s / 2.01 s)' "$t.sout" || { cat "$t.sout"; fail "scale targets: default ratio figure"; }
grep -q 'scale targets (this run' "$t.sout" && { cat "$t.sout"; fail "scale targets: only=scale printed the others"; }
echo "bench_smoke: ok"
