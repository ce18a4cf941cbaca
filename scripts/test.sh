#!/usr/bin/env bash
# Run every test of matchmaker: the core's unit tests (also under
# AddressSanitizer and UndefinedBehaviorSanitizer, and under valgrind), then the pg_regress,
# isolation and TAP suites, a dump/restore test and a fuzzing run against throw-away
# clusters run by a non-root user, the SQL blocks of the README, and a check
# that every command the documentation names is stored executable.  Installs
# what it needs.  Prints
# "N passed, N failed" (one count per suite) and exits non-zero when any
# test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

mm_install_deps
mm_build_install

passed=0
failed=0
# Run one suite; count it and keep going when it fails.
suite() {
	local name=$1
	shift
	echo "== $name"
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "== $name FAILED"
	fi
}

suite "core unit tests" make -s PG_CONFIG="$PG_CONFIG" core-check
suite "core unit tests with sanitizers" make -s -B PG_CONFIG="$PG_CONFIG" core-check \
	CORE_TEST_CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all"
suite "core unit tests under valgrind" make -s PG_CONFIG="$PG_CONFIG" core-valgrind
# The extension also builds warning-free with assertions on (in a copy, so
# that the installed, tested build stays as it is).
assert_build() {
	local d
	d=$(mktemp -d)
	cp -a . "$d/tree"
	make -s -C "$d/tree" PG_CONFIG="$PG_CONFIG" clean >/dev/null
	make -s -C "$d/tree" PG_CONFIG="$PG_CONFIG" PG_CPPFLAGS="-I./src -DUSE_ASSERT_CHECKING"
	local rc=$?
	rm -rf "$d"
	return $rc
}
suite "build with assertions" assert_build

# The server tests write their outputs next to the sources and start
# servers, which must not run as root: as root, run them as postgres in a
# copy of the tree.
work=$PWD
if [ "$(id -u)" -eq 0 ]; then
	work=$(mktemp -d /tmp/matchmaker-tests.XXXXXX)
	cp -a . "$work/tree"
	work="$work/tree"
	chown -R postgres "$(dirname "$work")"
fi
mm_start_cluster
failed_before=$failed
suite "regression, isolation and TAP tests" \
	mm_as_server_user env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
	make -s -C "$work" PG_CONFIG="$PG_CONFIG" installcheck
if [ -f "$work/regression.diffs" ]; then
	echo "== differences:"
	cat "$work/regression.diffs"
fi
if [ -f "$work/output_iso/regression.diffs" ]; then
	echo "== isolation differences:"
	cat "$work/output_iso/regression.diffs"
fi
# When those failed, for a TAP test that failed or died: the end of its log
# and of its servers' logs (the tree is removed at the end of the run).
for log in "$work"/tmp_check/log/regress_log_*; do
	[ -f "$log" ] && [ "$failed" -gt "$failed_before" ] || continue
	if grep -qE 'not ok [0-9]|Bail out|died|pg_ctl .* failed' "$log"; then
		echo "== failures in $(basename "$log"):"
		grep -E -A 12 'not ok [0-9]' "$log" | head -n 80 || true
		echo "== end of $(basename "$log"):"
		tail -n 60 "$log"
		t=${log##*/regress_log_}
		for server in "$work"/tmp_check/log/"${t}"_*.log; do
			[ -f "$server" ] || continue
			echo "== end of $(basename "$server"):"
			tail -n 40 "$server"
		done
	fi
done
suite "dump and restore" bash test/dump_restore.sh
# Thousands of random calls, valid and hostile; the seed is printed
# (MM_FUZZ_SEED=<seed> repeats a run).  Debian's interpreter has psycopg2.
suite "fuzzing" /usr/bin/python3 test/fuzz.py
suite "README Getting started" bash test/readme.sh
suite "documented commands are executable" bash test/commands.sh
suite "params keys documented" bash test/params_doc.sh
mm_stop_cluster
if [ "$work" != "$PWD" ] && [ "${MM_KEEP:-0}" != 1 ]; then
	rm -rf "$(dirname "$work")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
