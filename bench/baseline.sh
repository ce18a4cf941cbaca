#!/usr/bin/env bash
# Benchmark: end-to-end tickets matched per second with the background
# worker, against a matchmaker written as an application loop without the
# extension (bench/baseline.py, Python and psycopg2), on the same workload.
#
# Same feeder: pgbench, CLIENTS clients, one ticket per transaction with a
# random player and a uniform rating; matchmaker.enqueue for the extension,
# a plain INSERT into a table of the same shape for the baseline.  Same
# queue shape and rule: pairs (k = 2), periodic with batch 8, max_wait
# 1 minute (never reached).  Same measurement: a client LISTENing on channel
# matchmaker counts the tickets in the NOTIFY payloads it receives from the
# 2nd second to the end of the feed (bench/match_rate.py), and the delay
# from each ticket's enqueued_at to that receipt.  Three loads: pgbench as
# fast as it goes (closed loop); the same with the feeder's commits
# asynchronous (synchronous_commit = off for the feeder's sessions only, so
# that the enqueues' WAL flushes no longer bound the feed and the matchers'
# own, still synchronous, commits do); and a fixed RATE arrivals per second
# (pgbench --rate).  Runs alternate extension / baseline per-match /
# baseline batched, ROUNDS times, each on empty tables after a checkpoint.
# Otherwise default durability (fsync and synchronous commit on).
#
# Usage: bench/baseline.sh [SECONDS] [CLIENTS] [RATE] [ROUNDS]  (default 15 4 1000 2)
# Writes bench/results/baseline.md (OUT=file elsewhere; LOADS=max runs the
# first load only).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
seconds=${1:-15}
clients=${2:-4}
rate=${3:-1000}
rounds=${4:-2}
batch=8
warmup=2

mm_install_deps
mm_build_install
mm_start_cluster "fsync = on" "shared_buffers = '512MB'" "max_connections = 100" \
	"shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION matchmaker"
q "SELECT matchmaker.create_queue('bench', algorithm => 'periodic', max_wait => '1 minute', params => '{\"batch\": $batch}')" >/dev/null
# The baseline's tables: the same shape as matchmaker.tickets and matches.
psql -X -q -v ON_ERROR_STOP=1 -f bench/baseline_tables.sql

dir=$(mktemp -d)
chmod 755 "$dir"

# One run: SYSTEM (extension, per-match or batched), LOAD (max, async or a rate).
# Prints "matched/s median_ms p99_ms feed_tps backlog".
run() {
	local system=$1 load=$2 feeder table matcher="" result tps backlog
	# the worker paused while the tables are emptied (a TRUNCATE behind a tick could deadlock with it)
	q "ALTER SYSTEM SET matchmaker.enabled = off"
	q "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	q "TRUNCATE bl_tickets, bl_matches, matchmaker.tickets, matchmaker.matches"
	q "ALTER SYSTEM RESET matchmaker.enabled"
	q "SELECT pg_reload_conf()" >/dev/null
	q "CHECKPOINT"
	if [ "$system" = extension ]; then
		feeder=bench/feed_enqueue.sql table=matchmaker.tickets
	else
		feeder=bench/feed_insert.sql table=bl_tickets
		/usr/bin/python3 bench/baseline.py "$system" bench "$batch" 60 &
		matcher=$!
	fi
	rm -f "$dir/ready"
	/usr/bin/python3 bench/match_rate.py "$seconds" "$warmup" "$table" "$dir/ready" >"$dir/rate" &
	local listener=$!
	while [ ! -e "$dir/ready" ]; do sleep 0.05; done
	if [ "$load" = max ]; then
		tps=$(pgbench -n -c "$clients" -j 2 -T "$seconds" -f "$feeder" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
	elif [ "$load" = async ]; then
		tps=$(PGOPTIONS="-c synchronous_commit=off" pgbench -n -c "$clients" -j 2 -T "$seconds" -f "$feeder" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
	else
		tps=$(pgbench -n -c "$clients" -j 2 -T "$seconds" -R "$load" -f "$feeder" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
	fi
	wait "$listener"
	backlog=$(q "SELECT count(*) FROM $table WHERE state = 'waiting'")
	if [ -n "$matcher" ]; then
		kill -TERM "$matcher"
		wait "$matcher" || true
	fi
	read -r result <"$dir/rate"
	echo "$result $(printf '%.0f' "$tps") $backlog"
}

declare -A res
loads=(${LOADS:-max async "$rate"})
for load in "${loads[@]}"; do
	for ((i = 1; i <= rounds; i++)); do
		for system in extension per-match batched; do
			r=$(run "$system" "$load")
			echo "load $load, round $i, $system: matched/s median_ms p99_ms feed_tps backlog = $r"
			res[$load,$system]="${res[$load,$system]:-}$r;"
		done
	done
done
rm -rf "$dir"

# Mean of field F over the rounds of a cell.
mean() { tr ';' '\n' <<<"${res[$1,$2]}" | awk -v f="$3" 'NF { s += $f; n++ } END { printf "%.0f", s / n }'; }
meanf() { tr ';' '\n' <<<"${res[$1,$2]}" | awk -v f="$3" 'NF { s += $f; n++ } END { printf "%.1f", s / n }'; }
runs() { tr ';' '\n' <<<"${res[$1,$2]}" | awk -v f="$3" 'NF { printf "%s%s", (n++ ? ", " : ""), $f }'; }
label() {
	case $1 in
	extension) echo "extension: background worker, \`matchmaker.enqueue\`" ;;
	per-match) echo "baseline, per-match writes (\`bench/baseline.py per-match\`)" ;;
	batched) echo "baseline, batched writes (\`bench/baseline.py batched\`)" ;;
	esac
}
out=${OUT:-bench/results/baseline.md}
{
	echo "# Extension against an application-loop matchmaker"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version'), $(/usr/bin/python3 -c 'import platform, psycopg2; print("Python", platform.python_version() + ", psycopg2", psycopg2.__version__.split()[0])'), fsync on, synchronous_commit on."
	echo "Command: \`bench/baseline.sh $seconds $clients $rate $rounds\`, run $(date -u +%Y-%m-%d). Feeder: pgbench, $clients clients, 2 threads, $seconds s per run;"
	echo "pairs, periodic rule with batch $batch; tickets counted at a LISTENing client from second $warmup to the end of the feed."
	echo "Client, feeder, server, worker and baseline loop share the machine's $(nproc) cores. Means of $rounds alternating runs (each run's figure in brackets)."
	for load in "${loads[@]}"; do
		echo
		if [ "$load" = max ]; then
			echo "## Feeder as fast as it goes"
		elif [ "$load" = async ]; then
			echo "## Feeder as fast as it goes, its commits asynchronous (the matchers' commits synchronous)"
		else
			echo "## $load arrivals per second"
		fi
		echo
		echo "| matchmaker | tickets matched per second | extension / this | enqueue->NOTIFY median (ms) | p99 (ms) | feeder tickets per second | still waiting at the end |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		ext=$(mean "$load" extension 1)
		for system in extension per-match batched; do
			m=$(mean "$load" "$system" 1)
			echo "| $(label $system) | $m ($(runs "$load" "$system" 1)) | $(awk -v a="$ext" -v b="$m" 'BEGIN { printf "%.2f", a / b }') | $(meanf "$load" "$system" 2) | $(meanf "$load" "$system" 3) | $(mean "$load" "$system" 4) | $(mean "$load" "$system" 5) |"
		done
	done
} >"$out"
cat "$out"
