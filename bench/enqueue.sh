#!/usr/bin/env bash
# Benchmark: matchmaker.enqueue throughput with pgbench clients, against a
# plain single-row INSERT into a table of the same shape (same columns and
# indexes), in the same run, with the background worker running: enqueues
# into a queue the worker has nothing to do for (a periodic batch larger
# than the run, timers an hour away: the worker idle), and into a queue it
# matches as they come (periodic, batch 8: the worker matching the same
# queue).  For the matching case, the reference an application has: a plain
# INSERT into the table that the batched application loop of
# bench/baseline.sh (bench/baseline.py, the same rule) matches meanwhile.
# Default durability (fsync and synchronous commit on).  Runs alternate,
# ROUNDS times, each on empty tables after a checkpoint.
# Usage: bench/enqueue.sh [CLIENTS] [SECONDS] [ROUNDS]  (default 8 20 2)
# Writes bench/results/enqueue-CLIENTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
clients=${1:-8}
seconds=${2:-20}
rounds=${3:-2}

mm_install_deps
mm_build_install
mm_start_cluster "fsync = on" "shared_buffers = '512MB'" "max_connections = 100" \
	"shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION matchmaker"
# idle: its batch never fills and its timers (tick, max_wait) are an hour away,
# so the worker never runs it (with the default tick of a second it would
# read the whole growing pool every second)
q "SELECT matchmaker.create_queue('idle', algorithm => 'periodic', max_wait => '1 hour', tick => '1 hour', params => '{\"batch\": 1000000}')" >/dev/null
q "SELECT matchmaker.create_queue('bench', algorithm => 'periodic', max_wait => '1 hour', params => '{\"batch\": 8}')" >/dev/null
# The application loop's tables, and plain: the same shape as
# matchmaker.tickets (columns, defaults and indexes).
psql -X -q -v ON_ERROR_STOP=1 -f bench/baseline_tables.sql
q "CREATE TABLE plain (LIKE bl_tickets INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)"

dir=$(mktemp -d)
chmod 755 "$dir"
cat >"$dir/idle.sql" <<'SQL'
\set p random(1, 1000000000000000)
\set r random(0, 1000000)
SELECT matchmaker.enqueue('idle', 'p' || :p, :r / 1000000.0);
SQL
cat >"$dir/matched.sql" <<'SQL'
\set p random(1, 1000000000000000)
\set r random(0, 1000000)
SELECT matchmaker.enqueue('bench', 'p' || :p, :r / 1000000.0);
SQL
cat >"$dir/insert.sql" <<'SQL'
\set p random(1, 1000000000000000)
\set r random(0, 1000000)
INSERT INTO plain (queue, player, rating, attributes, enqueued_at, enqueued_by, enqueued_by_name) VALUES ('bench', 'p' || :p, :r / 1000000.0, '{}', clock_timestamp(), current_user::text::regrole, current_user);
SQL
sed 's/INSERT INTO plain /INSERT INTO bl_tickets /' "$dir/insert.sql" >"$dir/loop.sql"
# One pgbench run on empty tables after a checkpoint; prints its tps.
# For loop.sql, the application loop matches bl_tickets meanwhile.
# The worker is paused while the tables are emptied (a TRUNCATE waiting
# behind a tick could deadlock with it).
tps() {
	q "ALTER SYSTEM SET matchmaker.enabled = off"
	q "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	q "TRUNCATE plain, bl_tickets, bl_matches, matchmaker.tickets, matchmaker.matches"
	q "ALTER SYSTEM RESET matchmaker.enabled"
	q "SELECT pg_reload_conf()" >/dev/null
	q "CHECKPOINT"
	local loop=""
	if [ "$(basename "$1")" = loop.sql ]; then
		/usr/bin/python3 bench/baseline.py batched bench 8 3600 &
		loop=$!
	fi
	pgbench -n -c "$clients" -j 2 -T "$seconds" -f "$1" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
	if [ -n "$loop" ]; then
		kill -TERM "$loop"
		wait "$loop" || true
	fi
}
declare -A runs
for ((i = 1; i <= rounds; i++)); do
	for kind in insert idle matched loop; do
		t=$(tps "$dir/$kind.sql")
		echo "round $i, $kind: $t tps"
		runs[$kind]="${runs[$kind]:-} $t"
	done
done
rm -rf "$dir"
out=bench/results/enqueue-$clients.md
mean() { tr ' ' '\n' <<<"${runs[$1]}" | awk 'NF { s += $1; n++ } END { printf "%.0f", s / n }'; }
# each round's ratio of kind $1 to kind $2 (default: the plain INSERT)
ratios() { paste -d' ' <(tr ' ' '\n' <<<"${runs[$1]}" | awk NF) <(tr ' ' '\n' <<<"${runs[${2:-insert}]}" | awk NF) | awk '{ printf "%s%.2f", (n++ ? ", " : ""), $1 / $2 }'; }
{
	echo "# enqueue benchmark, $clients clients"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version'), fsync on, synchronous_commit on."
	echo "Command: \`bench/enqueue.sh $clients $seconds $rounds\`, run $(date -u +%Y-%m-%d): pgbench, $clients clients, 2 threads, $seconds s per run, random players and ratings;"
	echo "the background worker runs (two per database). Runs alternate, $rounds rounds, each on empty tables after a checkpoint."
	echo
	echo "| statement | transactions per second (mean; each run) | / plain INSERT (each round) |"
	echo "|---|---:|---:|"
	echo "| plain \`INSERT\` into a table of the same shape | $(mean insert) ($(tr ' ' '\n' <<<"${runs[insert]}" | awk 'NF { printf "%s%.0f", (n++ ? ", " : ""), $1 }')) | |"
	echo "| \`matchmaker.enqueue\`, the worker idle (a queue with nothing to match) | $(mean idle) ($(tr ' ' '\n' <<<"${runs[idle]}" | awk 'NF { printf "%s%.0f", (n++ ? ", " : ""), $1 }')) | $(ratios idle) |"
	echo "| \`matchmaker.enqueue\`, the worker matching the same queue (periodic, batch 8) | $(mean matched) ($(tr ' ' '\n' <<<"${runs[matched]}" | awk 'NF { printf "%s%.0f", (n++ ? ", " : ""), $1 }')) | $(ratios matched) |"
	echo "| plain \`INSERT\` while the batched application loop (\`bench/baseline.py batched\`, the same rule) matches that table | $(mean loop) ($(tr ' ' '\n' <<<"${runs[loop]}" | awk 'NF { printf "%s%.0f", (n++ ? ", " : ""), $1 }')) | $(ratios loop) |"
	echo
	echo "The worker matching against the application loop matching, each round: $(ratios matched loop)."
} >"$out"
cat "$out"
