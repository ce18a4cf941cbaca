#!/usr/bin/env bash
# Benchmark: the accuracy of ticket_status.expected_wait against the waits
# that followed, on a live auto queue with the worker (bench/expected_wait.py).
# Usage: bench/expected_wait.sh [RATE [MAX_WAIT [WARMUP [MEASURE]]]]   (default: 10 20 60 180)
# Writes bench/results/expected_wait.md (about five minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
rate=${1:-10}
max_wait=${2:-20}
warmup=${3:-60}
measure=${4:-180}

mm_install_deps
mm_build_install
mm_start_cluster "shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
psql -X -q -c 'CREATE EXTENSION matchmaker'
out=bench/results/expected_wait.md
table=$(/usr/bin/python3 bench/expected_wait.py "$rate" "$max_wait" "$warmup" "$measure")
{
	echo "# Accuracy of ticket_status.expected_wait"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(psql -X -At -c 'SHOW server_version')."
	echo "Command: \`bench/expected_wait.sh $rate $max_wait $warmup $measure\`, run $(date -u +%Y-%m-%d). A 1v1 auto queue (max_wait $max_wait s)"
	echo "fed $rate players per second (ratings normal around 0.5, deviation 0.15) in real time, matched by the"
	echo "worker; after $warmup s of history, for $measure s each new ticket's ticket_status is read right after its"
	echo "enqueue and again after 3 s if it still waits, and compared with the wait that followed. The baseline is"
	echo "the queue's median wait of the last hour (queue_stats.p50_wait) less what the ticket has waited."
	echo
	printf '%s\n' "$table"
} >"$out"
cat "$out"
