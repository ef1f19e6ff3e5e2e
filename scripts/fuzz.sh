#!/usr/bin/env bash
# fuzz.sh — builds every libFuzzer target (fuzz/fuzz_*.c) in build-fuzz with clang
# (-DTP_FUZZ=ON: ASan + UBSan + coverage) and runs each over a seed corpus made of every
# fixture under tests/fixtures (commented *.hex fixtures are converted to bytes) plus the real
# dumps under ../shared/testdata when present, plus seeds a target generates itself
# (LLVMFuzzerInitialize writes them into $TP_FUZZ_SEED_DIR: fuzz_perfetto_check's traces).
# fuzz_bmprofile_read reads an arch-selector byte before the iter0.profile bytes, so its
# iter*.profile seeds are given that byte (one copy per selector value).
# Fails on the first crash, leak or sanitizer report; the crashing input is kept under
# build-fuzz/artifacts/.
#
# Two modes:
#   smoke (default; `make test`): a fixed number of inputs per target (-runs=$FUZZ_RUNS,
#     default 20000, -seed=1, so runs are repeatable) of at most $FUZZ_MAX_LEN bytes (default
#     16384) over a fresh corpus in build-fuzz/smoke/.
#   campaign (FUZZ_MODE=campaign; `make fuzz`): $FUZZ_SECONDS per target (default 300), inputs
#     of at most $FUZZ_MAX_LEN bytes (default 65536), over a corpus kept between runs in
#     build-fuzz/corpus/<target>/ (new seeds are merged in); prints executions, corpus size and
#     coverage per target.
# Seeds longer than the limit are cut to it (libFuzzer reads only the first max_len bytes):
# without a limit libFuzzer takes the largest seed's size (~900 KB of ../shared) and runs at
# tens of inputs per second. The vendor tool's outputs (../shared/testdata/sophgo/reference)
# are no parser's input and are not seeds.
# Environment: FUZZ_MODE, FUZZ_RUNS, FUZZ_SECONDS, FUZZ_MAX_LEN, FUZZ_TARGETS (subset).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
runs=${FUZZ_RUNS:-20000}
mode=${FUZZ_MODE:-smoke}
seconds=${FUZZ_SECONDS:-300}
if [ "$mode" = campaign ]; then maxlen=${FUZZ_MAX_LEN:-65536}; else maxlen=${FUZZ_MAX_LEN:-16384}; fi
cc=$(command -v clang || command -v clang-14 || true)
if [ -z "$cc" ]; then
  echo "SKIPPED: fuzz: clang not found (apt-get install clang libclang-rt-dev)"
  exit 0
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DTP_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=()
for src in "$root"/fuzz/fuzz_*.c; do
  [ -e "$src" ] || continue
  name=$(basename "$src" .c)
  if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $name "* ]]; then
    continue
  fi
  targets+=("$name")
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no targets"
  exit 0
fi
ninja -C "$build" "${targets[@]}"

# Seed corpus: fixtures (hex converted) and, if present, the real dumps.
seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
/usr/bin/python3 - "$root/tests/fixtures" "$seeds" "$root/../shared/testdata" <<'PY'
import os, re, sys
src, dst, shared = sys.argv[1], sys.argv[2], sys.argv[3]
def hexbytes(text):
    out = bytearray()
    for line in text.splitlines():
        line = line.split('#', 1)[0]
        for tok in line.replace('|', ' ').split():
            if ':' in tok:
                kind, val = tok.split(':', 1)
                width = {'u8': 1, 'u16': 2, 'u32': 4, 'u64': 8}[kind]
                out += int(val, 0).to_bytes(width, 'little')
            elif '*' in tok:
                b, n = tok.split('*')
                out += bytes([int(b, 16)]) * int(n)
            else:
                out += bytes.fromhex(tok)
    return bytes(out)
def add(path, rel):
    name = re.sub(r'[^A-Za-z0-9_.-]', '_', rel)
    with open(path, 'rb') as f:
        data = f.read()
    if path.endswith('.hex'):
        try:
            data = hexbytes(data.decode())
        except Exception:
            pass
        name = name[:-4]
    if len(data) <= 1 << 20:
        with open(os.path.join(dst, name), 'wb') as f:
            f.write(data)
for base, tag in ((src, 'fix'), (shared, 'shared')):
    if not os.path.isdir(base):
        continue
    for d, _, files in os.walk(base):
        if os.sep + 'reference' in d:
            continue
        for fn in files:
            p = os.path.join(d, fn)
            add(p, tag + '_' + os.path.relpath(p, base))
PY
echo "fuzz: $(ls "$seeds" | wc -l) seed files"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/artifacts"
status=0
for t in "${targets[@]}"; do
  exe=$(find "$build" -name "$t" -type f -perm -u+x | head -1)
  if [ -z "$exe" ]; then
    echo "fuzz: $t: executable not found" >&2
    status=1
    continue
  fi
  if [ "$mode" = campaign ]; then
    corpus="$build/corpus/$t"
  else
    corpus="$build/smoke/$t"
    rm -rf "$corpus"
  fi
  mkdir -p "$corpus"
  if [ "$t" = fuzz_bmprofile_read ]; then
    # The target's first byte picks the arch (data[0] % 3); the rest is iter0.profile.
    /usr/bin/python3 - "$seeds" "$corpus" <<'PY'
import os, sys
src, dst = sys.argv[1], sys.argv[2]
for fn in sorted(os.listdir(src)):
    with open(os.path.join(src, fn), 'rb') as f:
        data = f.read()
    if 'iter' in fn and 'profile' in fn:
        for sel in range(3):
            with open(os.path.join(dst, 'sel%d_%s' % (sel, fn)), 'wb') as f:
                f.write(bytes([sel]) + data)
    else:
        with open(os.path.join(dst, fn), 'wb') as f:
            f.write(data)
PY
  else
    cp "$seeds"/* "$corpus"/ 2>/dev/null || true
  fi
  if [ "$mode" = campaign ]; then
    echo "== $t (campaign: ${seconds}s, corpus $corpus: $(ls "$corpus" | wc -l) files)"
    args=(-max_total_time="$seconds" -max_len="$maxlen" -print_final_stats=1)
  else
    # fuzz_jobdir builds a folder tree per input (files, links, chmod): about 100 inputs/s,
    # so its smoke run takes a tenth of the others' inputs, and its inputs stop mattering
    # past 64 four-byte operations.
    t_runs=$runs t_maxlen=$maxlen
    if [ "$t" = fuzz_jobdir ]; then
      t_runs=$(( runs / 10 > 0 ? runs / 10 : 1 )) t_maxlen=4096
    fi
    echo "== $t ($t_runs runs)"
    args=(-runs="$t_runs" -seed=1 -max_len="$t_maxlen")
  fi
  if ! TP_FUZZ_SEED_DIR="$corpus" "$exe" "${args[@]}" -artifact_prefix="$build/artifacts/$t-" \
      "$corpus" >"$build/$t.log" 2>&1; then
    echo "fuzz: $t FAILED; log: $build/$t.log" >&2
    tail -40 "$build/$t.log" >&2
    status=1
  elif [ "$mode" = campaign ]; then
    execs=$(grep -E "stat::number_of_executed_units" "$build/$t.log" | tail -1 | awk '{print $2}')
    cov=$(grep -oE "cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*" "$build/$t.log" | tail -1)
    echo "fuzz: $t: ${execs:-?} executions in ${seconds}s; $cov; corpus now $(ls "$corpus" | wc -l) files"
  else
    grep -E "^Done|stat::number_of_executed_units" "$build/$t.log" | tail -1 || true
  fi
done
exit $status
