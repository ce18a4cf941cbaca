#!/usr/bin/env bash
# Run every test of matchmaker: the core's unit tests (also under
# AddressSanitizer and UndefinedBehaviorSanitizer), then the pg_regress
# and isolation suites against a throw-away cluster.  Installs what it needs.
# Exits non-zero when any test fails.
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

mm_start_cluster
suite "regression and isolation tests" make -s PG_CONFIG="$PG_CONFIG" installcheck
if [ "$failed" -ne 0 ] && [ -f regression.diffs ]; then
	echo "== differences:"
	cat regression.diffs
fi
suite "dump and restore" bash test/dump_restore.sh
mm_stop_cluster

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
