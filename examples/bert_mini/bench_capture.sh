#!/usr/bin/env bash
# bench_capture.sh BERT_MINI [ROUNDS] — capture overhead on the bert_mini example: runs the same
# inference with capture off, TPUPROF=1 and TPUPROF=2, interleaved, ROUNDS times each (default
# 7), for two shapes: the default model (4 layers, seq 64, batch 2: ~60 operators of tens to
# thousands of microseconds per step) and a tiny one (seq 8, batch 1: operators of a few
# microseconds, the worst case for per-event cost). Reports, per mode, the median over rounds
# of the program's own mean non-warm-up step latency (wall clock), of its mean step CPU time
# (the inference thread's CPU time: far less disturbed by other load on the machine, so the
# better overhead figure on a shared host; its minimum over the runs is printed too), and of
# the whole process wall time (including writing the dump at exit), each with its slowdown
# against capture off.
# A paired A/B run inside one process (--ab) and a calls-only run (--no-compute) then measure
# the instrumentation's cost directly, which the noise of a shared machine cannot hide the way
# it hides a small difference between two whole runs.
# Target: <= 2 % slowdown in mode 1 on the default model.
set -euo pipefail
bert=${1:?usage: bench_capture.sh BERT_MINI [ROUNDS]}
rounds=${2:-7}
tmp=$(mktemp -d /tmp/bert_mini_bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

run_case() { # name, args...
  local name=$1; shift
  local mode
  for mode in off 1 2; do
    : > "$tmp/$name.$mode.lat"; : > "$tmp/$name.$mode.cpu"; : > "$tmp/$name.$mode.wall"
  done
  for ((r = 0; r < rounds; r++)); do
    for mode in off 1 2; do
      rm -rf "$tmp/cap"; mkdir "$tmp/cap"
      local t0 t1 out
      t0=$(date +%s%N)
      if [ $mode = off ]; then
        out=$(env -u TPUPROF "$bert" "$@" --quiet)
      else
        out=$(TPUPROF=$mode TPUPROF_DIR="$tmp/cap" "$bert" "$@" --quiet)
      fi
      t1=$(date +%s%N)
      sed -n 's/^mean latency: \([0-9.]*\) ms.*/\1/p' <<< "$out" >> "$tmp/$name.$mode.lat"
      sed -n 's/.*thread cpu \([0-9.]*\) ms.*/\1/p' <<< "$out" >> "$tmp/$name.$mode.cpu"
      echo "scale=3; ($t1 - $t0) / 1000000" | bc >> "$tmp/$name.$mode.wall"
      if [ $mode != off ] && [ -z "$(ls "$tmp/cap")" ]; then
        echo "bench: TPUPROF=$mode wrote no dump" >&2; exit 1
      fi
    done
  done
  local lat0 cpu0 best0 wall0
  lat0=$(median < "$tmp/$name.off.lat")
  cpu0=$(median < "$tmp/$name.off.cpu")
  best0=$(sort -g "$tmp/$name.off.cpu" | head -1)
  wall0=$(median < "$tmp/$name.off.wall")
  printf '%-8s %-4s %12s %8s %12s %8s %12s %8s %11s %8s\n' case mode "step wall" slower \
    "step cpu" slower "best cpu" slower "process" slower
  for mode in off 1 2; do
    local lat cpu best wall
    lat=$(median < "$tmp/$name.$mode.lat")
    cpu=$(median < "$tmp/$name.$mode.cpu")
    best=$(sort -g "$tmp/$name.$mode.cpu" | head -1)
    wall=$(median < "$tmp/$name.$mode.wall")
    printf '%-8s %-4s %9.3f ms %7.2f%% %9.3f ms %7.2f%% %9.3f ms %7.2f%% %8.1f ms %7.2f%%\n' \
      "$name" "$mode" \
      "$lat" "$(echo "scale=6; ($lat / $lat0 - 1) * 100" | bc)" \
      "$cpu" "$(echo "scale=6; ($cpu / $cpu0 - 1) * 100" | bc)" \
      "$best" "$(echo "scale=6; ($best / $best0 - 1) * 100" | bc)" \
      "$wall" "$(echo "scale=6; ($wall / $wall0 - 1) * 100" | bc)"
  done
}

echo "bert_mini capture overhead: median of $rounds interleaved runs per mode"
run_case default --layers 4 --seq 64 --batch 2 --steps 40 --warmup 5
run_case tiny --layers 4 --seq 8 --batch 1 --steps 200 --warmup 10
# The instrumentation alone: the same capture calls per step with the kernels left out
# (--no-compute), so the cost per step is measured directly instead of as a small difference
# between two noisy full runs; it is then put in proportion to the full steps above.
run_case calls --layers 4 --seq 64 --batch 2 --steps 1000 --warmup 10 --no-compute
# Paired A/B inside one process (--ab): even steps make their capture calls, odd steps do
# not, so every pair of neighbouring steps sees the same machine load; the per-run figure is
# the median over pairs of (cpu of step 2k) - (cpu of step 2k+1). With capture off the calls
# are no-ops and the figure shows the method's own bias and noise.
echo
echo "paired A/B in one process (--ab, default model, 150 steps): median over $rounds runs of"
echo "the median paired step-cpu difference, steps with capture calls minus steps without:"
for mode in off 1 2; do : > "$tmp/ab.$mode"; done
for ((r = 0; r < rounds; r++)); do
  for mode in off 1 2; do
    rm -rf "$tmp/cap"; mkdir "$tmp/cap"
    if [ $mode = off ]; then
      out=$(env -u TPUPROF "$bert" --ab --steps 150 --warmup 4 --quiet)
    else
      out=$(TPUPROF=$mode TPUPROF_DIR="$tmp/cap" "$bert" --ab --steps 150 --warmup 4 --quiet)
    fi
    sed -n 's/.*paired difference \([-0-9.]*\) us (\([-0-9.]*\)%).*/\1 \2/p' <<< "$out" >> "$tmp/ab.$mode"
  done
done
for mode in off 1 2; do
  us=$(cut -d' ' -f1 "$tmp/ab.$mode" | median)
  pct=$(cut -d' ' -f2 "$tmp/ab.$mode" | median)
  lo=$(cut -d' ' -f2 "$tmp/ab.$mode" | sort -g | head -1)
  hi=$(cut -d' ' -f2 "$tmp/ab.$mode" | sort -g | tail -1)
  printf '  TPUPROF=%-3s %9.3f us per step = %7.3f%%   (runs: %s%% .. %s%%)\n' "$mode" "$us" "$pct" "$lo" "$hi"
done

echo
echo "capture cost per step (median thread cpu, calls-only minus off) relative to a full step:"
for mode in 1 2; do
  for full in default tiny; do
    cost=$(echo "scale=6; ($(median < "$tmp/calls.$mode.cpu") - $(median < "$tmp/calls.off.cpu")) * 1000" | bc)
    step=$(median < "$tmp/$full.off.cpu")
    printf '  TPUPROF=%s: %8.3f us per step = %6.3f%% of a %s step (%.3f ms cpu)\n' "$mode" \
      "$cost" "$(echo "scale=6; $cost / ($step * 1000) * 100" | bc)" "$full" "$step"
  done
done
