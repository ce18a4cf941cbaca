#!/usr/bin/env bash
# Benchmark: delay from a match's due time to the NOTIFY at a listener,
# with the background worker.  Usage: bench/notify_latency.sh [ROUNDS]
# Writes bench/results/notify_latency.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
rounds=${1:-200}

mm_install_deps
mm_build_install
mm_start_cluster "shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
out=bench/results/notify_latency.md
{
	echo "# NOTIFY latency with the background worker"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(psql -X -At -c 'SHOW server_version')."
	echo "Command: \`bench/notify_latency.sh $rounds\`, run $(date -u +%Y-%m-%d). Client, server and worker on one machine;"
	echo "the queues' tick interval is 1 s, so the worker's timers and wake-ups, not the interval, set these delays."
	echo
	echo "| case | matches | median (ms) | p99 (ms) | max (ms) |"
	echo "|---|---:|---:|---:|---:|"
	/usr/bin/python3 bench/notify_latency.py "$rounds"
} >"$out"
cat "$out"
