#!/usr/bin/env bash
# Benchmark: the instructions the statements of bench/simulate.sh run,
# which do not vary with the machine as their times do: each statement,
# under EXPLAIN (ANALYZE, TIMING OFF) as simulate.sh times it, in a
# single-user backend under callgrind, counted in its execution
# (PortalRun), over N arrivals (k = 2, rate 10/s, max_wait 5 s, uniform
# ratings, integer ids; the same seed every run); and each one's count
# over the read and sort's.  The last statement counts the N rows of
# generate_series: what PostgreSQL's tuple store takes for any
# set-returning function's rows in a FROM clause.
# Usage: bench/simulate_cpu.sh [N]    (default 200000)
# Writes bench/results/simulate_cpu.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
n=${1:-200000}

mm_install_deps
mm_build_install
mm_start_cluster "shared_buffers = '1GB'" "work_mem = '256MB'"
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION matchmaker"
psql -X -q -v ON_ERROR_STOP=1 <<EOF >/dev/null
SELECT setseed(0.25);
CREATE TABLE arrivals AS SELECT i AS id, random() AS rating,
    sum(-ln(1 - random()) / 10) OVER (ORDER BY i) AS arrival FROM generate_series(1, $n) i;
VACUUM ANALYZE arrivals;
SELECT matchmaker.create_queue('p', algorithm => 'periodic', max_wait => '5 s', params => '{"batch": 8}');
SELECT matchmaker.create_queue('m', algorithm => 'multi_queue', max_wait => '5 s', params => '{"ranges": 6}');
SELECT matchmaker.create_queue('a', algorithm => 'auto', max_wait => '5 s');
SELECT matchmaker.create_queue('pd', algorithm => 'periodic', max_wait => '5 s');
SELECT matchmaker.create_queue('md', algorithm => 'multi_queue', max_wait => '5 s');
EOF
version=$(q "SHOW server_version")
mm_as_server_user "$PGBIN/pg_ctl" -D "$MM_CLUSTER/data" -w stop >/dev/null
dir=$(mktemp -d)
chmod 777 "$dir"
arrivals="'SELECT id, rating, arrival FROM arrivals'"
statements=(
	"SELECT * FROM arrivals ORDER BY arrival, id"
	"SELECT * FROM matchmaker.simulate_summary('p', $arrivals)"
	"SELECT * FROM matchmaker.simulate_summary('m', $arrivals)"
	"SELECT count(*) FROM matchmaker.simulate('p', $arrivals)"
	"SELECT * FROM matchmaker.simulate_summary('a', $arrivals)"
	"SELECT * FROM matchmaker.simulate_summary('pd', $arrivals)"
	"SELECT * FROM matchmaker.simulate_summary('md', $arrivals)"
	"SELECT count(*) FROM generate_series(1, $n)"
)
labels=(
	"\`SELECT * FROM arrivals ORDER BY arrival, id\`"
	"\`simulate_summary\`, periodic batch 8"
	"\`simulate_summary\`, multi_queue r = 6"
	"\`simulate\`, periodic batch 8, one row per player"
	"\`simulate_summary\`, auto"
	"\`simulate_summary\`, periodic with its default batch (\"auto\")"
	"\`simulate_summary\`, multi_queue with its default ranges (\"auto\")"
	"\`SELECT count(*) FROM generate_series(1, $n)\`: a set-returning function's rows alone"
)
counts=()
for s in "${statements[@]}"; do
	# the statement once to warm the caches, then once counted
	printf 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF, COSTS OFF) %s;\n' "$s" >"$dir/warm.sql"
	mm_as_server_user "$PGBIN/postgres" --single -D "$MM_CLUSTER/data" postgres <"$dir/warm.sql" >/dev/null 2>&1
	mm_as_server_user valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
		--collect-atstart=no --toggle-collect=PortalRun \
		"$PGBIN/postgres" --single -D "$MM_CLUSTER/data" postgres <"$dir/warm.sql" >"$dir/log" 2>&1
	counts+=("$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$dir/log")")
	echo "$s: ${counts[-1]} instructions"
done
rm -rf "$dir"
mm_as_server_user "$PGBIN/pg_ctl" -D "$MM_CLUSTER/data" -l "$MM_CLUSTER/server.log" -w start >/dev/null

out=bench/results/simulate_cpu.md
{
	echo "# simulate: instructions"
	echo
	echo "Machine: $(nproc) cores, $(uname -sr), PostgreSQL $version, valgrind $(valgrind --version | sed 's/valgrind-//')."
	echo "Command: \`bench/simulate_cpu.sh $n\`, run $(date -u +%Y-%m-%d) on build $(git rev-parse --short HEAD 2>/dev/null || echo unknown). Each statement under"
	echo "\`EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF, COSTS OFF)\`, run once to warm the caches and once counted, in a"
	echo "single-user backend under callgrind: the instructions of its execution (\`PortalRun\`). $n arrivals at"
	echo "10 per second, uniform ratings, integer ids, max_wait 5 s, k = 2."
	echo
	echo "| statement | instructions | per arrival | / reading and sorting the arrivals |"
	echo "|---|---:|---:|---:|"
	for i in "${!statements[@]}"; do
		awk -v l="${labels[i]}" -v c="${counts[i]}" -v b="${counts[0]}" -v n="$n" \
			'BEGIN { printf "| %s | %.0f | %.0f | %.2f |\n", l, c, c / n, c / b }'
	done
} >"$out"
cat "$out"
