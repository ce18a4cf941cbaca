#!/usr/bin/env bash
# Benchmark: enqueue-to-NOTIFY delay of one queue while a worker is stuck
# in a tick of another queue (held before its commit by the test-only
# matchmaker.test_hold_tick), with the default two workers per database.
# Usage: bench/slow_queue.sh [ROUNDS]   Writes bench/results/slow_queue.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
rounds=${1:-200}

mm_install_deps
mm_build_install
mm_start_cluster "shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
out=bench/results/slow_queue.md
{
	echo "# One slow queue: another queue's NOTIFY latency"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(psql -X -At -c 'SHOW server_version')."
	echo "Command: \`bench/slow_queue.sh $rounds\`, run $(date -u +%Y-%m-%d). Client, server and workers on one machine;"
	echo "matchmaker.workers_per_database = $(psql -X -At -c 'SHOW matchmaker.workers_per_database'); one worker sits in a tick of queue slow for the whole run."
	echo
	echo "| case | matches | median (ms) | p99 (ms) | max (ms) |"
	echo "|---|---:|---:|---:|---:|"
	/usr/bin/python3 bench/slow_queue_latency.py "$rounds" | grep '^|'
} >"$out"
cat "$out"
