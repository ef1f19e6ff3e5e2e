#!/usr/bin/env bash
# check-style.sh — the style checks .ci/run runs before the tests:
#  1. every tracked C/C++ file is formatted by the committed .clang-format;
#  2. no comment names a source file (*.c, *.h, *.py, ...) that is not in the tree;
#  3. no source file over 1 000 lines, no C function over 120 (check_sizes.py, with the
#     exceptions in check_sizes.allow).
# Exit 1 with the offending files listed; 0 when clean.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
command -v clang-format >/dev/null || { echo "check-style: clang-format is not installed" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp')
bad=()
for f in "${files[@]}"; do
	[ -f "$f" ] || continue
	if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
	echo "check-style: not formatted by .clang-format (run clang-format -i on them):"
	printf '  %s\n' "${bad[@]}"
	fail=1
fi
/usr/bin/python3 scripts/check_comment_names.py || fail=1
/usr/bin/python3 scripts/check_sizes.py || fail=1
[ $fail = 0 ] && echo "check-style: ${#files[@]} files formatted; comments name only files that exist"
exit $fail
