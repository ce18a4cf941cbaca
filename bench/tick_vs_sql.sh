#!/usr/bin/env bash
# Benchmark: one periodic tick (k = 2, one batch of all N waiting tickets)
# against the same grouping written by hand as one SQL statement (number
# the tickets by rating with a window function, one match row per pair,
# update the tickets; no costs, no NOTIFY), on the same table and the same
# data, each statement measured
#   fresh: in a new session (its first statement: plans, caches and the
#          library loaded cold), and
#   warm:  in a session that ran the same statement once before on 1,000
#          tickets,
# alternating tick and SQL, ROUNDS times, each on freshly loaded tickets
# after VACUUM ANALYZE and a CHECKPOINT (so both write their full-page
# images alike).  Reported: the median time (client-side \timing, one
# round trip), every run, and the WAL bytes per matched ticket.
#
# Usage: bench/tick_vs_sql.sh [N] [ROUNDS]   (default 100000 5)
# Writes bench/results/tick_vs_sql.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
n=${1:-100000}
rounds=${2:-5}

mm_install_deps
mm_build_install
mm_start_cluster "fsync = on" "shared_buffers = '1GB'" "max_wal_size = '4GB'"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION matchmaker"
psql -X -q -v ON_ERROR_STOP=1 -f bench/bench_load.sql
q "SELECT matchmaker.create_queue('tick', algorithm => 'periodic', max_wait => '1 hour', params => '{\"batch\": $((n - n % 2))}')" >/dev/null
q "SELECT matchmaker.create_queue('hand', algorithm => 'periodic', max_wait => '1 hour')" >/dev/null
q "SELECT setval('matchmaker.matches_id_seq', 1000000000)" >/dev/null
dir=$(mktemp -d)
chmod 755 "$dir"
cat >"$dir/tick.sql" <<'SQL'
SELECT matchmaker.tick('tick');
SQL
cp bench/hand_tick.sql "$dir/hand.sql"

# One measured run: KIND (tick or hand), SESSION (fresh or warm).  Prints
# "ms wal_bytes_per_matched_ticket".
run() {
	local kind=$1 session=$2 queue ms l0 l1 matched
	queue=$kind
	if [ "$session" = warm ]; then
		# one session: the statement once on 1,000 tickets, then reload and measure
		{
			echo "SELECT bench_load('$queue', 1000);"
			cat "$dir/$kind.sql"
			echo "SELECT bench_load('$queue', $n);"
			echo "VACUUM ANALYZE matchmaker.tickets;"
			echo "CHECKPOINT;"
			echo "SELECT pg_current_wal_insert_lsn() \\g $dir/l0"
			echo '\timing on'
			cat "$dir/$kind.sql"
			echo '\timing off'
			echo "SELECT pg_current_wal_insert_lsn() \\g $dir/l1"
		} >"$dir/warm.sql"
		ms=$(psql -X -q -At -v ON_ERROR_STOP=1 -f "$dir/warm.sql" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
		l0=$(cat "$dir/l0")
		l1=$(cat "$dir/l1")
	else
		q "SELECT bench_load('$queue', $n)" >/dev/null
		q "VACUUM ANALYZE matchmaker.tickets"
		q "CHECKPOINT"
		l0=$(q "SELECT pg_current_wal_insert_lsn()")
		ms=$(psql -X -q -At -v ON_ERROR_STOP=1 -c '\timing on' -f "$dir/$kind.sql" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
		l1=$(q "SELECT pg_current_wal_insert_lsn()")
	fi
	matched=$(q "SELECT count(*) FROM matchmaker.tickets WHERE queue = '$queue' AND state = 'matched'")
	echo "$ms $(q "SELECT round(pg_wal_lsn_diff('$l1', '$l0') / $matched)")"
}

declare -A res
for ((i = 1; i <= rounds; i++)); do
	for session in fresh warm; do
		for kind in tick hand; do
			r=$(run "$kind" "$session")
			echo "round $i, $session, $kind: ms wal/ticket = $r"
			res[$session,$kind]="${res[$session,$kind]:-}$r;"
		done
	done
done
rm -rf "$dir"

field() { tr ';' '\n' <<<"${res[$1,$2]}" | awk -v f="$3" 'NF { print $f }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# per round: tick / hand of the same round and session
ratios() { paste -d' ' <(field "$1" tick 1) <(field "$1" hand 1) | awk '{ printf "%.2f\n", $1 / $2 }'; }
out=bench/results/tick_vs_sql.md
{
	echo "# Tick against hand-written SQL"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version'), fsync on."
	echo "Command: \`bench/tick_vs_sql.sh $n $rounds\`, run $(date -u +%Y-%m-%d). $n waiting tickets, k = 2, uniform ratings; one periodic"
	echo "tick (one batch of all of them) against the grouping in one SQL statement (window function by rating,"
	echo "one match row per pair, ticket update; no costs, no NOTIFY), on the same table. $rounds rounds alternating"
	echo "tick and SQL; each run on freshly loaded tickets after VACUUM ANALYZE and a CHECKPOINT. Fresh: the"
	echo "statement is its session's first; warm: its session ran it once on 1,000 tickets before."
	echo
	echo "| session | statement | ms (median) | every run (ms) | tick / SQL (median of rounds) | WAL bytes per matched ticket (median) |"
	echo "|---|---|---:|---|---:|---:|"
	for session in fresh warm; do
		for kind in tick hand; do
			label="periodic tick"
			[ "$kind" = hand ] && label="hand-written SQL"
			ratio=""
			[ "$kind" = tick ] && ratio=$(ratios "$session" | median)
			echo "| $session | $label | $(field "$session" "$kind" 1 | median) | $(field "$session" "$kind" 1 | paste -sd' ') | $ratio | $(field "$session" "$kind" 2 | median) |"
		done
	done
} >"$out"
cat "$out"
