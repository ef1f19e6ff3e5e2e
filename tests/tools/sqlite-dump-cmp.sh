#!/usr/bin/env bash
# sqlite-dump-cmp.sh WORK_DIR — after `scripts/cmp-outputs.sh REF NEW WORK_DIR` with a
# reference build whose SQLite writer inserted every row through SQLite: checks that the only
# byte differences are the databases' page layouts. For every pair of output folders
# WORK_DIR/ref-NAME and WORK_DIR/new-NAME: every file but profile.db byte-identical, the
# console output identical, and the two profile.db equal table by table (`sqlite3 .dump`:
# schema and every row, in table order, compared as text) with the new one passing
# `PRAGMA integrity_check`. Prints one line per pair; exits 1 on the first difference found
# in any pair.
set -euo pipefail
work=$(realpath "$1")
command -v sqlite3 >/dev/null || { echo "sqlite-dump-cmp: SKIPPED: no sqlite3 shell" >&2; exit 1; }
fail=0 pairs=0
for ref in "$work"/ref-*/; do
	ref=${ref%/}
	name=${ref#"$work"/ref-}
	new=$work/new-$name
	[ -d "$new" ] || continue
	pairs=$((pairs + 1))
	if ! diff -r -q -x .tpuprof.lock -x profile.db "$ref" "$new" >/dev/null 2>&1; then
		diff -r -q -x .tpuprof.lock -x profile.db "$ref" "$new" | sed "s|^|DIFF $name: |" || true
		fail=1
		continue
	fi
	if [ -f "$work/ref-$name.log" ] &&
		! cmp -s <(sed "s|$work/ref-$name|OUT|g" "$work/ref-$name.log") \
			<(sed "s|$work/new-$name|OUT|g" "$work/new-$name.log"); then
		echo "DIFF $name: console output differs"
		fail=1
		continue
	fi
	if [ -f "$ref/profile.db" ] || [ -f "$new/profile.db" ]; then
		if ! cmp -s <(sqlite3 "$ref/profile.db" .dump) <(sqlite3 "$new/profile.db" .dump); then
			echo "DIFF $name: profile.db content (sqlite3 .dump) differs"
			fail=1
			continue
		fi
		ok=$(sqlite3 "$new/profile.db" "PRAGMA integrity_check")
		if [ "$ok" != ok ]; then
			echo "DIFF $name: profile.db integrity_check: $ok"
			fail=1
			continue
		fi
		echo "same $name (profile.db: same .dump, integrity ok)"
	else
		echo "same $name (no profile.db)"
	fi
done
if [ "$pairs" = 0 ]; then
	echo "sqlite-dump-cmp: no ref-*/new-* folders in $work" >&2
	exit 1
fi
[ $fail = 0 ] && echo "sqlite-dump-cmp: $pairs pairs: every table identical, every other file byte-identical"
exit $fail
