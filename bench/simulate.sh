#!/usr/bin/env bash
# Benchmark: matchmaker.simulate_summary and matchmaker.simulate over N
# arrivals (k = 2, rate 10/s, max_wait 5 s, periodic batch 8, multi_queue
# r = 6, auto (create_queue's default), and periodic and multi_queue with
# their default sizes "auto"), against reading and sorting the same arrivals in SQL,
# ROUNDS rounds alternating the statements, medians reported; counting the
# N rows of generate_series, what any set-returning function's rows in a
# FROM clause cost PostgreSQL (its tuple store) whatever the function does;
# and optimal_cost on 2,000 and 10,000 of them.
# Usage: bench/simulate.sh [N] [ROUNDS]    (default 1000000 5)
# Writes bench/results/simulate.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
n=${1:-1000000}
rounds=${2:-5}

mm_install_deps
mm_build_install
mm_start_cluster "shared_buffers = '1GB'" "work_mem = '256MB'"
out=bench/results/simulate.md
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
ms() {
	q "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, COSTS OFF) $1" | sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
}
q "CREATE EXTENSION matchmaker"
q "CREATE TABLE arrivals AS SELECT i AS id, random() AS rating,
     sum(-ln(1 - random()) / 10) OVER (ORDER BY i) AS arrival FROM generate_series(1, $n) i"
q "VACUUM ANALYZE arrivals"
q "SELECT matchmaker.create_queue('p', algorithm => 'periodic', max_wait => '5 s', params => '{\"batch\": 8}')" >/dev/null
q "SELECT matchmaker.create_queue('m', algorithm => 'multi_queue', max_wait => '5 s', params => '{\"ranges\": 6}')" >/dev/null
q "SELECT matchmaker.create_queue('a', algorithm => 'auto', max_wait => '5 s')" >/dev/null
q "SELECT matchmaker.create_queue('pd', algorithm => 'periodic', max_wait => '5 s')" >/dev/null
q "SELECT matchmaker.create_queue('md', algorithm => 'multi_queue', max_wait => '5 s')" >/dev/null
q "SELECT * FROM arrivals ORDER BY arrival, id" >/dev/null   # warm the cache

sorts=() ps=() mqs=() rows=() autos=() pds=() mds=() gss=()
for ((i = 0; i < rounds; i++)); do
	sorts+=("$(ms "SELECT * FROM arrivals ORDER BY arrival, id")")
	ps+=("$(ms "SELECT * FROM matchmaker.simulate_summary('p', 'SELECT id, rating, arrival FROM arrivals')")")
	mqs+=("$(ms "SELECT * FROM matchmaker.simulate_summary('m', 'SELECT id, rating, arrival FROM arrivals')")")
	rows+=("$(ms "SELECT count(*) FROM matchmaker.simulate('p', 'SELECT id, rating, arrival FROM arrivals')")")
	autos+=("$(ms "SELECT * FROM matchmaker.simulate_summary('a', 'SELECT id, rating, arrival FROM arrivals')")")
	pds+=("$(ms "SELECT * FROM matchmaker.simulate_summary('pd', 'SELECT id, rating, arrival FROM arrivals')")")
	mds+=("$(ms "SELECT * FROM matchmaker.simulate_summary('md', 'SELECT id, rating, arrival FROM arrivals')")")
	gss+=("$(ms "SELECT count(*) FROM generate_series(1, $n)")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# The median over the rounds of a statement's time divided by the read and
# sort of the same round.
ratio() {
	local -n times=$1
	local r=()
	for ((i = 0; i < rounds; i++)); do r+=("$(awk -v a="${times[i]}" -v b="${sorts[i]}" 'BEGIN { print a / b }')"); done
	median "${r[@]}" | awk '{ printf "%.2f", $1 }'
}
sort_ms=$(median "${sorts[@]}")
p_ms=$(median "${ps[@]}")
m_ms=$(median "${mqs[@]}")
rows_ms=$(median "${rows[@]}")
auto_ms=$(median "${autos[@]}")
pd_ms=$(median "${pds[@]}")
md_ms=$(median "${mds[@]}")
gs_ms=$(median "${gss[@]}")
o2_ms=$(ms "SELECT matchmaker.optimal_cost('p', 'SELECT id, rating, arrival FROM arrivals WHERE id <= 2000')")
o10_ms=$(ms "SELECT matchmaker.optimal_cost('p', 'SELECT id, rating, arrival FROM arrivals WHERE id <= 10000')")
per_game=$(q "SELECT round(cost_per_game::numeric, 4) FROM matchmaker.simulate_summary('p', 'SELECT id, rating, arrival FROM arrivals')")
auto_game=$(q "SELECT round(cost_per_game::numeric, 4) FROM matchmaker.simulate_summary('a', 'SELECT id, rating, arrival FROM arrivals')")
{
	echo "# simulate benchmark"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version')."
	echo "Command: \`bench/simulate.sh $n $rounds\`, run $(date -u +%Y-%m-%d). Server-side times of one statement,"
	echo "medians of $rounds rounds that alternate the first eight statements (all runs in ms below the table);"
	echo "the ratio is the median over the rounds of the statement's time / the same round's read and sort."
	echo
	echo "| statement | ms (median) | / reading and sorting the arrivals (median of rounds) |"
	echo "|---|---:|---:|"
	echo "| \`SELECT * FROM arrivals ORDER BY arrival, id\` ($n rows) | $sort_ms | 1.00 |"
	echo "| \`simulate_summary\`, periodic batch 8 (cost per game $per_game) | $p_ms | $(ratio ps) |"
	echo "| \`simulate_summary\`, multi_queue r = 6 | $m_ms | $(ratio mqs) |"
	echo "| \`simulate\`, periodic batch 8, one row per player | $rows_ms | $(ratio rows) |"
	echo "| \`simulate_summary\`, auto (cost per game $auto_game) | $auto_ms | $(ratio autos) |"
	echo "| \`simulate_summary\`, periodic with its default batch (\"auto\") | $pd_ms | $(ratio pds) |"
	echo "| \`simulate_summary\`, multi_queue with its default ranges (\"auto\") | $md_ms | $(ratio mds) |"
	echo "| \`SELECT count(*) FROM generate_series(1, $n)\`: a set-returning function's rows alone | $gs_ms | $(ratio gss) |"
	echo "| \`optimal_cost\`, the first 2,000 arrivals | $o2_ms | |"
	echo "| \`optimal_cost\`, the first 10,000 arrivals | $o10_ms | |"
	echo
	echo "Runs: read and sort ${sorts[*]}; periodic summary ${ps[*]}; multi_queue summary ${mqs[*]}; rows ${rows[*]}; auto summary ${autos[*]}; periodic, default batch ${pds[*]}; multi_queue, default ranges ${mds[*]}; generate_series ${gss[*]}."
} >"$out"
cat "$out"
