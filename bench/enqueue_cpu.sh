#!/usr/bin/env bash
# Benchmark: the machine's CPU per call of matchmaker.enqueue against a
# plain single-row INSERT into a table of the same shape (the feeds of
# bench/baseline.sh), one pgbench client, its commits asynchronous so that
# the CPU and not the disk bounds the rate, the background worker running
# and idle (the queue has nothing to match).  The throughput figures of
# enqueue.sh vary by a tenth between rounds with the disk's flushes; the
# CPU per call does not.  Runs alternate, ROUNDS times, each on empty
# tables after a checkpoint.  CPU from /proc/stat (user, nice, system, irq,
# softirq: pgbench, the backend, the server's own processes), so run it on
# a quiet machine; and the instructions per call under callgrind, which
# do not vary with the machine.
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
# the feeds of bench/baseline.sh: enqueue into queue bench, which the
# worker never runs (its batch never fills, its timers are an hour away),
# and the plain INSERT into the application loop's table of the same shape
q "SELECT matchmaker.create_queue('bench', algorithm => 'periodic', max_wait => '1 hour', tick => '1 hour', params => '{\"batch\": 1000000}')" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -f bench/baseline_tables.sql
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
# One run on empty tables after a checkpoint; prints "calls µs_per_call wal_bytes_per_call".
run() {
	local c0 c1 l0 l1 n
	q "TRUNCATE bl_tickets, matchmaker.tickets"
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
		read -r n u w < <(run "bench/feed_$kind.sql")
		echo "round $i, $kind: $n calls, $u µs per call, $w WAL bytes per call"
		us[$kind]="${us[$kind]:-} $u"
		wal[$kind]="${wal[$kind]:-} $w"
	done
done
# Instructions per call, which do not drift with the machine: with the
# server stopped, a single-user backend under callgrind runs N statements
# of a kind, each its own transaction, counted in its start, parse,
# analysis, plan, execution and commit; the count of 3,000 less that of
# 1,000, over 2,000, is one call's.
dir=$(mktemp -d)
chmod 777 "$dir"
mm_as_server_user "$PGBIN/pg_ctl" -D "$MM_CLUSTER/data" -w stop >/dev/null
instructions() {
	awk -v kind="$1" -v n="$2" 'BEGIN {
		print "TRUNCATE bl_tickets, matchmaker.tickets;"
		for (k = 1; k <= n; k++)
			if (kind == "enqueue")
				printf "SELECT matchmaker.enqueue(%s, %s, 0.5);\n", "\047bench\047", "\047c" k "\047"
			else
				printf "INSERT INTO bl_tickets (queue, player, rating, attributes, enqueued_at, enqueued_by, enqueued_by_name) VALUES (%s, %s, 0.5, %s, clock_timestamp(), current_user::text::regrole, current_user);\n", "\047bench\047", "\047c" k "\047", "\047{}\047"
	}' >"$dir/in.sql"
	mm_as_server_user valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
		--toggle-collect=StartTransactionCommand --toggle-collect=pg_parse_query \
		--toggle-collect=pg_analyze_and_rewrite_fixedparams --toggle-collect=pg_plan_queries \
		--toggle-collect=PortalStart --toggle-collect=PortalRun --toggle-collect=CommitTransactionCommand \
		"$PGBIN/postgres" --single -D "$MM_CLUSTER/data" postgres <"$dir/in.sql" >"$dir/log" 2>&1
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$dir/log"
}
declare -A per_call
for kind in insert enqueue; do
	a=$(instructions "$kind" 1000)
	b=$(instructions "$kind" 3000)
	per_call[$kind]=$(( (b - a) / 2000 ))
	echo "$kind: $(( per_call[$kind] )) instructions per call"
done
rm -rf "$dir"
mm_as_server_user "$PGBIN/pg_ctl" -D "$MM_CLUSTER/data" -l "$MM_CLUSTER/server.log" -w start >/dev/null

median() { tr ' ' '\n' <<<"$1" | awk NF | sort -n | awk '{ a[n++] = $1 } END { print (n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2) }'; }
list() { tr ' ' '\n' <<<"$1" | awk 'NF { printf "%s%s", (n++ ? ", " : ""), $1 }'; }
# each round's enqueue / INSERT (the machine's speed drifts between rounds)
ratios=$(paste -d' ' <(tr ' ' '\n' <<<"${us[enqueue]}" | awk NF) <(tr ' ' '\n' <<<"${us[insert]}" | awk NF) |
	awk '{ printf "%s%.2f", (n++ ? " " : ""), $1 / $2 }')
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
	echo
	echo "enqueue / INSERT, each round: $(list "$ratios"); median $(median "$ratios")."
	echo
	echo "Instructions per call (callgrind, a single-user backend, each statement its own transaction: its start,"
	echo "parse, analysis, plan, execution and commit; 3,000 calls less 1,000): plain INSERT ${per_call[insert]}, \`enqueue\` ${per_call[enqueue]},"
	echo "enqueue / INSERT $(awk -v a="${per_call[enqueue]}" -v b="${per_call[insert]}" 'BEGIN { printf "%.2f", a / b }')."
} >"$out"
cat "$out"
