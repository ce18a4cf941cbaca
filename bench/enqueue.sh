#!/usr/bin/env bash
# Benchmark: matchmaker.enqueue throughput with pgbench clients, against a
# plain single-row INSERT into a table of the same shape (same columns and
# indexes), in the same run.  Default durability (fsync and synchronous
# commit on).  Usage: bench/enqueue.sh [CLIENTS] [SECONDS]
# Writes bench/results/enqueue.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
clients=${1:-8}
seconds=${2:-20}

mm_install_deps
mm_build_install
mm_start_cluster "fsync = on" "shared_buffers = '512MB'" "max_connections = 100"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION matchmaker"
q "SELECT matchmaker.create_queue('bench', algorithm => 'periodic', max_wait => '1 hour')" >/dev/null
# The same shape as matchmaker.tickets: columns, defaults and indexes.
q "CREATE TABLE plain (LIKE matchmaker.tickets INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
q "ALTER TABLE plain ADD PRIMARY KEY (id)"
q "CREATE UNIQUE INDEX ON plain (queue, player) WHERE state = 'waiting'"
q "CREATE INDEX ON plain (match_id) WHERE match_id IS NOT NULL"

dir=$(mktemp -d)
chmod 755 "$dir"
cat >"$dir/enqueue.sql" <<'SQL'
\set p random(1, 1000000000000000)
SELECT matchmaker.enqueue('bench', 'p' || :p, 0.5);
SQL
cat >"$dir/insert.sql" <<'SQL'
\set p random(1, 1000000000000000)
INSERT INTO plain (queue, player, rating, attributes, enqueued_at, enqueued_by, enqueued_by_name) VALUES ('bench', 'p' || :p, 0.5, '{}', clock_timestamp(), current_user::text::regrole, current_user);
SQL
# One pgbench run on empty tables after a checkpoint; prints its tps.
tps() {
	q "TRUNCATE plain, matchmaker.tickets"
	q "CHECKPOINT"
	pgbench -n -c "$clients" -j 2 -T "$seconds" -f "$1" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}
t_insert=$(tps "$dir/insert.sql")
t_enqueue=$(tps "$dir/enqueue.sql")
t_insert2=$(tps "$dir/insert.sql")
t_enqueue2=$(tps "$dir/enqueue.sql")
rm -rf "$dir"
out=bench/results/enqueue.md
{
	echo "# enqueue benchmark"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version'), fsync on, synchronous_commit on."
	echo "Command: \`bench/enqueue.sh $clients $seconds\`, run $(date -u +%Y-%m-%d): pgbench, $clients clients, 2 threads, $seconds s per run, random players."
	echo
	echo "| statement | transactions per second (two runs) |"
	echo "|---|---:|"
	echo "| plain \`INSERT\` into a table of the same shape | $t_insert, $t_insert2 |"
	echo "| \`matchmaker.enqueue\` | $t_enqueue, $t_enqueue2 |"
	echo
	awk -v e="$t_enqueue" -v f="$t_enqueue2" -v a="$t_insert" -v b="$t_insert2" 'BEGIN { printf "Runs alternate, each on empty tables after a checkpoint. enqueue / plain INSERT (means): %.2f\n", (e + f) / (a + b) }'
} >"$out"
cat "$out"
