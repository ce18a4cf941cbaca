#!/usr/bin/env bash
# Benchmark: live equals simulated.  An auto queue fed in real time through
# enqueue, matched by the background worker, against simulate on the same
# arrivals; one row per stream.
# Usage: bench/live_vs_sim.sh   Writes bench/results/live_vs_sim.md (about 9 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

mm_install_deps
mm_build_install
mm_start_cluster "shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
psql -X -q -c 'CREATE EXTENSION matchmaker'
out=bench/results/live_vs_sim.md
{
	echo "# Live equals simulated (algorithm auto)"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(psql -X -At -c 'SHOW server_version')."
	echo "Command: \`bench/live_vs_sim.sh\`, run $(date -u +%Y-%m-%d). Client, server and workers on one machine;"
	echo "one client enqueues each player at its arrival time (autocommit), the worker matches; the live cost is"
	echo "the sum of the matches' costs, the simulated one \`simulate_summary\` over the recorded arrivals."
	echo "With several modes the queue filters on the mode (60 % in m0, the rest alike in the others)."
	echo
	first=1
	# players, arrivals per second, max_wait, seed, game modes (params.filters when above 1)
	for spec in "3000 20 5 1 1" "600 3 5 2 1" "1000 10 2 3 1" "2000 15 5 4 5"; do
		set -- $spec
		row=$(/usr/bin/python3 bench/live_vs_sim.py "$1" "$2" "$3" "$4" "$5")
		if [ $first = 1 ]; then
			printf '%s\n' "$row" | grep '^|'
			first=0
		else
			printf '%s\n' "$row" | grep '^|' | tail -1
		fi
	done
} >"$out"
cat "$out"
