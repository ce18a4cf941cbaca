#!/usr/bin/env bash
# Benchmark: the machine's CPU per call of matchmaker.enqueue against a
# plain single-row INSERT into a table of the same shape (as in
# bench/enqueue.sh), one pgbench client, its commits asynchronous so that
# the CPU and not the disk bounds the rate, the background worker running
# and idle (the queue has nothing to match).  The throughput figures of
# enqueue.sh vary by a tenth between rounds with the disk's flushes; the
# CPU per call does not.  Runs alternate, ROUNDS times, each on empty
# tables after a checkpoint.  CPU from /proc/stat (user, nice, system, irq,
# softirq: pgbench, the backend, the server's own processes), so run it on
# a quiet machine.
# Usage: bench/enqueue_cpu.sh [SECONDS] [ROUNDS]  (default 10 5)
# Writes bench/results/enqueue_cpu.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
seconds=${1:-10}
rounds=${2:-5}

mm_install_deps
mm_build_install
mm_start_cluster "fsync = on" "shared_buffers = '512MB'" \
	"shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION matchmaker"
q "SELECT matchmaker.create_queue('idle', algorithm => 'periodic', max_wait => '1 hour', tick => '1 hour', params => '{\"batch\": 1000000}')" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -f bench/baseline_tables.sql
q "CREATE TABLE plain (LIKE bl_tickets INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)"

dir=$(mktemp -d)
chmod 755 "$dir"
cat >"$dir/enqueue.sql" <<'SQL'
\set p random(1, 1000000000000000)
\set r random(0, 1000000)
SELECT matchmaker.enqueue('idle', 'p' || :p, :r / 1000000.0);
SQL
cat >"$dir/insert.sql" <<'SQL'
\set p random(1, 1000000000000000)
\set r random(0, 1000000)
INSERT INTO plain (queue, player, rating, attributes, enqueued_at, enqueued_by, enqueued_by_name) VALUES ('idle', 'p' || :p, :r / 1000000.0, '{}', clock_timestamp(), current_user::text::regrole, current_user);
SQL
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
# One run on empty tables after a checkpoint; prints "calls µs_per_call wal_bytes_per_call".
run() {
	local c0 c1 l0 l1 n
	q "TRUNCATE plain, matchmaker.tickets"
	q "CHECKPOINT"
	l0=$(q "SELECT pg_current_wal_insert_lsn()")
	c0=$(busy)
	n=$(PGOPTIONS="-c synchronous_commit=off" pgbench -n -c 1 -j 1 -T "$seconds" -f "$1" 2>/dev/null |
		sed -n 's/.*actually processed: \([0-9]*\).*/\1/p')
	c1=$(busy)
	l1=$(q "SELECT pg_current_wal_insert_lsn()")
	echo "$n $(( (c1 - c0) * 1000000 / $(getconf CLK_TCK) / n )) $(q "SELECT round(pg_wal_lsn_diff('$l1', '$l0') / $n)")"
}
declare -A us wal
for ((i = 1; i <= rounds; i++)); do
	for kind in insert enqueue; do
		read -r n u w < <(run "$dir/$kind.sql")
		echo "round $i, $kind: $n calls, $u µs per call, $w WAL bytes per call"
		us[$kind]="${us[$kind]:-} $u"
		wal[$kind]="${wal[$kind]:-} $w"
	done
done
rm -rf "$dir"
median() { tr ' ' '\n' <<<"$1" | awk NF | sort -n | awk '{ a[n++] = $1 } END { print (n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2) }'; }
list() { tr ' ' '\n' <<<"$1" | awk 'NF { printf "%s%s", (n++ ? ", " : ""), $1 }'; }
out=bench/results/enqueue_cpu.md
{
	echo "# CPU per enqueue against a plain INSERT"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version'), fsync on."
	echo "Command: \`bench/enqueue_cpu.sh $seconds $rounds\`, run $(date -u +%Y-%m-%d) on build $(git rev-parse --short HEAD 2>/dev/null || echo unknown): pgbench, one client, $seconds s per run,"
	echo "synchronous_commit off for its session, random players and ratings; the background worker runs, idle."
	echo "Runs alternate, $rounds rounds, each on empty tables after a checkpoint. The machine's CPU from /proc/stat."
	echo
	echo "| statement | machine's CPU per call (µs, median; each run) | WAL bytes per call (median) |"
	echo "|---|---:|---:|"
	echo "| plain \`INSERT\` into a table of the same shape | $(median "${us[insert]}") ($(list "${us[insert]}")) | $(median "${wal[insert]}") |"
	echo "| \`matchmaker.enqueue\` | $(median "${us[enqueue]}") ($(list "${us[enqueue]}")) | $(median "${wal[enqueue]}") |"
} >"$out"
cat "$out"
