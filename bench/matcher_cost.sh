#!/usr/bin/env bash
# Benchmark: what matching costs per matched ticket under a steady durable
# feed, the background worker against the batched application loop of
# bench/baseline.sh (bench/baseline.py batched, the same rule: pairs,
# periodic with batch 8).  The feeder is pgbench, CLIENTS clients, one
# ticket per transaction (matchmaker.enqueue, or a plain INSERT into the
# loop's table of the same shape).  Per matched ticket: the CPU time of the
# matcher (/proc: the worker processes, or the loop's Python process and
# its backend), the whole machine's CPU time (/proc/stat), and for the
# worker its ticks (match rows of distinct creation instants); for both the
# WAL written and the WAL flushes (pg_stat_wal), and what the feeder's
# sessions wait for (bench/feed_waits.py, sampled over the run but its
# first and last second); and the WAL by kind of record (pg_waldump
# --stats between the run's first and last positions).  Runs alternate worker / loop, ROUNDS times, each
# on empty tables after a checkpoint; fsync and synchronous commit on.
# Usage: bench/matcher_cost.sh [CLIENTS] [SECONDS] [ROUNDS]  (default 16 8 3)
# Writes bench/results/matcher_cost-CLIENTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
clients=${1:-16}
seconds=${2:-8}
rounds=${3:-3}

mm_install_deps
mm_build_install
mm_start_cluster "fsync = on" "shared_buffers = '512MB'" "max_connections = 100" \
	"shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION matchmaker"
q "SELECT matchmaker.create_queue('bench', algorithm => 'periodic', max_wait => '1 hour', params => '{\"batch\": 8}')" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -f bench/baseline_tables.sql


ticks() { awk '{ print $14 + $15 }' "$@" 2>/dev/null | paste -sd+ | bc; }
machine() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
hz=$(getconf CLK_TCK)

# One run of SYSTEM (worker or loop): prints "matched/s matcher_us machine_us ticks wal_bytes
# matched_per_flush tps flush cpu client other heap_insert confirm update btree btree_n commit
# rest" (ticks for the worker only, "-" for the loop; flush to other the feeder's sessions in
# each state, of CLIENTS; from heap_insert on, WAL bytes per matched ticket by kind of
# record (wal_kinds), btree_n the B-tree entries per matched ticket).
run() {
	local system=$1 loop="" pids stat m0 m1 c0 c1 l0 l1 matched tps feed=bench/feed_enqueue.sql
	local prefix="SELECT matchmaker.enqueue" table=matchmaker.tickets ticks_per="-" sampler waits
	q "ALTER SYSTEM SET matchmaker.enabled = off"
	q "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	q "TRUNCATE bl_tickets, bl_matches, matchmaker.tickets, matchmaker.matches"
	if [ "$system" = worker ]; then
		q "ALTER SYSTEM RESET matchmaker.enabled"
		q "SELECT pg_reload_conf()" >/dev/null
		sleep 1
		pids=$(q "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE backend_type LIKE 'matchmaker worker%'")
	else
		feed=bench/feed_insert.sql prefix="INSERT INTO bl_tickets" table=bl_tickets
		/usr/bin/python3 bench/baseline.py batched bench 8 3600 &
		loop=$!
		sleep 1
		pids="$loop $(q "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")"
	fi
	q "CHECKPOINT"
	stat=""
	for p in $pids; do stat="$stat /proc/$p/stat"; done
	l0=$(q "SELECT pg_current_wal_insert_lsn()")
	q "SELECT pg_stat_reset_shared('wal')" >/dev/null
	m0=$(ticks $stat)
	c0=$(machine)
	(sleep 1 && /usr/bin/python3 bench/feed_waits.py $((seconds - 2)) "$prefix") >"$dir/waits" &
	sampler=$!
	tps=$(pgbench -n -c "$clients" -j 2 -T "$seconds" -f "$feed" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
	wait "$sampler"
	read -r waits <"$dir/waits"
	sleep 1
	c1=$(machine)
	m1=$(ticks $stat)
	l1=$(q "SELECT pg_current_wal_insert_lsn()")
	if [ -n "$loop" ]; then
		kill -TERM "$loop"
		wait "$loop" || true
	else
		ticks_per=$(q "SELECT round(count(*)::numeric / count(DISTINCT created_at), 1) * 2 FROM matchmaker.matches")
	fi
	matched=$(q "SELECT count(*) FROM $table WHERE state = 'matched'")
	echo "$(echo "$matched / $seconds" | bc) $(echo "($m1 - $m0) * 1000000 / $hz / $matched" | bc) $(echo "($c1 - $c0) * 1000000 / $hz / $matched" | bc) $ticks_per $(q "SELECT round(pg_wal_lsn_diff('$l1', '$l0') / $matched)") $(q "SELECT round($matched::numeric / wal_sync, 1) FROM pg_stat_wal") $(printf '%.0f' "$tps") $waits $(wal_kinds "$l0" "$l1" "$matched")"
}
dir=$(mktemp -d)
# WAL bytes (records and full-page images) per matched ticket between
# positions $1 and $2, by kind of record: "heap_insert confirm update btree
# btree_n commit rest": heap inserts (single and multi-row), the speculative
# insertions' confirmations, heap updates, B-tree records (and btree_n, the
# B-tree entries inserted per matched ticket), commits, and the rest.
wal_kinds() {
	"$PGBIN/pg_waldump" -p "$MM_CLUSTER/data/pg_wal" -s "$1" -e "$2" --stats=record 2>/dev/null |
		awk -v n="$3" '
			$1 ~ /^(Heap|Heap2|Btree|Transaction|XLOG|Standby|Storage|Sequence|CLOG|MultiXact|RelMap|SPGist|Gist|Hash|Gin|Brin|CommitTs|ReplicationOrigin|Generic|LogicalMessage)\// {
				b = $(NF - 2)
				if ($1 ~ /^(Heap\/INSERT|Heap2\/MULTI_INSERT)/) k = "ins"
				else if ($1 ~ /^Heap\/HEAP_CONFIRM/) k = "conf"
				else if ($1 ~ /^Heap\/(HOT_)?UPDATE/) k = "upd"
				else if ($1 ~ /^Btree\//) { k = "bt"; if ($1 ~ /^Btree\/INSERT_LEAF/) entries += $2 }
				else if ($1 ~ /^Transaction\/COMMIT/) k = "commit"
				else k = "rest"
				sum[k] += b
			}
			END {
				printf "%.0f %.0f %.0f %.0f %.2f %.0f %.0f", sum["ins"] / n, sum["conf"] / n, sum["upd"] / n,
					sum["bt"] / n, entries / n, sum["commit"] / n, sum["rest"] / n
			}'
}

declare -A out
for ((i = 1; i <= rounds; i++)); do
	for system in worker loop; do
		r=$(run $system)
		echo "round $i, $system: $r"
		out[$system]="${out[$system]:-}|$r"
	done
done
rm -rf "$dir"
# column $2 of each run of $1, comma-separated
col() { tr '|' '\n' <<<"${out[$1]}" | awk -v c="$2" 'NF { printf "%s%s", (n++ ? ", " : ""), $c }'; }
med() { tr '|' '\n' <<<"${out[$1]}" | awk -v c="$2" 'NF { print $c }' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
res=bench/results/matcher_cost-$clients.md
{
	echo "# What matching costs per matched ticket, $clients clients"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version'), fsync on, synchronous_commit on."
	echo "Command: \`bench/matcher_cost.sh $clients $seconds $rounds\`, run $(date -u +%Y-%m-%d): pgbench, $clients clients, $seconds s per run; pairs, periodic with batch 8;"
	echo "runs alternate, $rounds rounds, each on empty tables after a checkpoint. CPU from /proc; medians of the runs, each run in brackets."
	echo
	echo "| matcher | tickets matched per second | matcher's CPU per matched ticket (µs) | machine's CPU per matched ticket (µs) | tickets per tick | WAL bytes per matched ticket | matched tickets per WAL flush |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	echo "| background worker, \`matchmaker.enqueue\` feed | $(med worker 1) ($(col worker 1)) | $(med worker 2) ($(col worker 2)) | $(med worker 3) ($(col worker 3)) | $(med worker 4) ($(col worker 4)) | $(med worker 5) ($(col worker 5)) | $(med worker 6) ($(col worker 6)) |"
	echo "| batched application loop (\`bench/baseline.py batched\` and its backend), plain \`INSERT\` feed | $(med loop 1) ($(col loop 1)) | $(med loop 2) ($(col loop 2)) | $(med loop 3) ($(col loop 3)) | | $(med loop 5) ($(col loop 5)) | $(med loop 6) ($(col loop 6)) |"
	echo
	echo "What the $clients feeder sessions are doing, mean number of them in each state (bench/feed_waits.py, every 5 ms; medians of the runs, each run in brackets):"
	echo
	echo "| matcher | waiting for the WAL flush of a commit | on the CPU | between transactions (ClientRead) | other waits |"
	echo "|---|---:|---:|---:|---:|"
	for m in worker loop; do
		echo "| $m | $(med $m 8) ($(col $m 8)) | $(med $m 9) ($(col $m 9)) | $(med $m 10) ($(col $m 10)) | $(med $m 11) ($(col $m 11)) |"
	done
	echo
	echo "WAL bytes per matched ticket by kind of record (\`pg_waldump --stats=record\` over each run, feed and matcher together; medians of the runs):"
	echo
	echo "| matcher | heap inserts (tickets, matches) | speculative insert confirmations | heap updates (matched tickets) | B-tree records | B-tree entries per ticket | commits | the rest |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for m in worker loop; do
		echo "| $m | $(med $m 12) | $(med $m 13) | $(med $m 14) | $(med $m 15) | $(med $m 16) | $(med $m 17) | $(med $m 18) |"
	done
} >"$res"
cat "$res"
