#!/usr/bin/env bash
# Benchmark: one periodic tick (k = 2) over N waiting tickets, against the
# same grouping written by hand as one SQL statement (number the tickets by
# rating with a window function, insert one match row per pair, update the
# tickets) on the same data.  Also difference_wait and multi_queue ticks, and
# an auto tick run 54 minutes on (0.9 of its max_wait), with every pair due.
# For each statement also the backend's peak private memory growth
# (bench/peak_memory.py samples RssAnon every millisecond in a fresh
# backend; the sampler runs for every statement alike).
#
# Usage: bench/tick.sh [N ...]        (default: 1000 10000 100000)
# Writes bench/results/tick.md.  Needs the extension built; starts its own
# throw-away cluster (scripts/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)

mm_install_deps
mm_build_install
mm_start_cluster "shared_buffers = '1GB'" "max_wal_size = '4GB'"
out=bench/results/tick.md
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }

q "CREATE EXTENSION matchmaker"
psql -X -q -v ON_ERROR_STOP=1 -f bench/bench_load.sql
# One statement in a fresh backend: "ms KiB", its server-side time
# (planning excluded) and the backend's peak private memory growth.
run() {
	/usr/bin/python3 bench/peak_memory.py "$1"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# bench/hand_tick.sql without its comment lines and final semicolon
handwritten=$(grep -v '^--' bench/hand_tick.sql | sed '$ s/;$//')
q "SELECT setval('matchmaker.matches_id_seq', 1000000000)" >/dev/null

{
	echo "# Tick benchmark"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version')."
	echo "Command: \`bench/tick.sh ${sizes[*]}\`, run $(date -u +%Y-%m-%d)."
	echo
	echo "Each figure is the server-side time of one statement on N waiting tickets (k = 2) with"
	echo "uniform ratings; \"hand-written SQL\" numbers the tickets by rating with a window function,"
	echo "inserts one match row per pair and updates the tickets, with no costs and no NOTIFY."
	echo
	echo "| N | periodic tick (ms) | hand-written SQL (ms) | ratio | multi_queue tick, r = 6 (ms) | difference_wait tick (ms) | auto tick, all due (ms) |"
	echo "|---:|---:|---:|---:|---:|---:|---:|"
} >"$out"
mem=$(mktemp)

q "SELECT matchmaker.create_queue('periodic', algorithm => 'periodic', max_wait => '1 hour', params => '{\"batch\": 2}')" >/dev/null
q "SELECT matchmaker.create_queue('hand', algorithm => 'periodic', max_wait => '1 hour')" >/dev/null
q "SELECT matchmaker.create_queue('mq', algorithm => 'multi_queue', max_wait => '1 hour', params => '{\"ranges\": 6}')" >/dev/null
q "SELECT matchmaker.create_queue('dw', algorithm => 'difference_wait', max_wait => '1 hour', params => '{\"wait_factor\": 0}')" >/dev/null
q "SELECT matchmaker.create_queue('auto', algorithm => 'auto', max_wait => '1 hour')" >/dev/null
for n in "${sizes[@]}"; do
	q "UPDATE matchmaker.queues SET params = jsonb_build_object('batch', $n - $n % 2) WHERE name = 'periodic'"
	q "SELECT bench_load('periodic', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	r=$(run "SELECT matchmaker.tick('periodic')"); read -r t_tick m_tick <<<"$r"
	made=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue = 'periodic'")
	q "SELECT bench_load('hand', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	r=$(run "$handwritten"); read -r t_hand m_hand <<<"$r"
	q "SELECT bench_load('mq', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	r=$(run "SELECT matchmaker.tick('mq')"); read -r t_mq m_mq <<<"$r"
	q "SELECT bench_load('dw', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	r=$(run "SELECT matchmaker.tick('dw')"); read -r t_dw m_dw <<<"$r"
	q "SELECT bench_load('auto', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	r=$(run "SELECT matchmaker.tick('auto', now => now() + interval '54 minutes')"); read -r t_auto m_auto <<<"$r"
	made_auto=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue = 'auto'")
	ratio=$(awk -v a="$t_tick" -v b="$t_hand" 'BEGIN { printf "%.2f", a / b }')
	echo "| $n | $t_tick ($made matches) | $t_hand | $ratio | $t_mq | $t_dw | $t_auto ($made_auto matches) |" >>"$out"
	per=$(awk -v k="$m_tick" -v n="$n" 'BEGIN { printf "%.0f", k * 1024 / n }')
	echo "| $n | $(mib "$m_tick") ($per bytes per ticket) | $(mib "$m_hand") | $(mib "$m_mq") | $(mib "$m_dw") | $(mib "$m_auto") |" >>"$mem"
	echo "N=$n: periodic $t_tick ms $m_tick KiB, hand-written $t_hand ms $m_hand KiB, multi_queue $t_mq ms $m_mq KiB, difference_wait $t_dw ms $m_dw KiB, auto $t_auto ms $m_auto KiB"
done
{
	echo
	echo "ratio = periodic tick / hand-written SQL (below 1: the tick is faster)."
	echo
	echo "Peak memory of the backend running the statement, above its level just before it (MiB):"
	echo "the growth of its private resident memory (RssAnon, sampled every millisecond in a fresh"
	echo "backend; shared buffers are not counted). work_mem is the default $(q 'SHOW work_mem')."
	echo
	echo "| N | periodic tick | hand-written SQL | multi_queue tick | difference_wait tick | auto tick |"
	echo "|---:|---:|---:|---:|---:|---:|"
	cat "$mem"
} >>"$out"
rm -f "$mem"
cat "$out"
