#!/usr/bin/env bash
# fuzz.sh — builds every libFuzzer target (fuzz/fuzz_*.c) in build-fuzz with clang
# (-DTP_FUZZ=ON: ASan + UBSan + coverage) and runs each for a fixed number of inputs
# (-runs=20000 -seed=1, so runs are repeatable) over a seed corpus made of every fixture under
# tests/fixtures (commented *.hex fixtures are converted to bytes) plus the real dumps under
# ../shared/testdata when present. Fails on the first crash, leak or sanitizer report; the
# crashing input is kept under build-fuzz/artifacts/.
# Environment: FUZZ_RUNS (default 20000), FUZZ_TARGETS (space-separated subset of names).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
runs=${FUZZ_RUNS:-20000}
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
  corpus="$build/corpus/$t"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp "$seeds"/* "$corpus"/ 2>/dev/null || true
  echo "== $t ($runs runs)"
  if ! "$exe" -runs="$runs" -seed=1 -artifact_prefix="$build/artifacts/$t-" "$corpus" \
      >"$build/$t.log" 2>&1; then
    echo "fuzz: $t FAILED; log: $build/$t.log" >&2
    tail -40 "$build/$t.log" >&2
    status=1
  else
    grep -E "^Done|stat::number_of_executed_units" "$build/$t.log" | tail -1 || true
  fi
done
exit $status
