#!/usr/bin/env bash
# Benchmark: one periodic tick (k = 2) over N waiting tickets, against the
# same grouping written by hand as one SQL statement (number the tickets by
# rating with a window function, insert one match row per pair, update the
# tickets) on the same data.  Also difference_wait and multi_queue ticks.
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
q "CREATE FUNCTION bench_load(qname text, n int) RETURNS void LANGUAGE sql AS \$\$
     DELETE FROM matchmaker.tickets WHERE queue = qname;
     DELETE FROM matchmaker.matches WHERE queue = qname;
     DELETE FROM matchmaker.provisional_groups WHERE queue = qname;
     INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at)
     SELECT qname, 'p' || i, random(), now() - interval '1 second' * random()
     FROM generate_series(1, n) i;
   \$\$"
# Time one statement in milliseconds, inside the server (planning excluded).
ms() {
	q "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, COSTS OFF) $1" | sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
}
handwritten="WITH ranked AS (
    SELECT id, (row_number() OVER (ORDER BY rating, enqueued_at, id) - 1) / 2 AS pair
    FROM matchmaker.tickets WHERE queue = 'hand' AND state = 'waiting'),
  base AS (SELECT setval('matchmaker.matches_id_seq', nextval('matchmaker.matches_id_seq') + (SELECT count(*) FROM ranked)) - (SELECT count(*) FROM ranked) AS b),
  ids AS (SELECT pair, (SELECT b FROM base) + pair AS match_id FROM ranked GROUP BY pair),
  m AS (INSERT INTO matchmaker.matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost)
        SELECT match_id, 'hand', now(), 0, 0, 0, 0 FROM ids),
  u AS (UPDATE matchmaker.tickets t SET state = 'matched', matched_at = now(), match_id = ids.match_id
        FROM ranked JOIN ids USING (pair) WHERE t.id = ranked.id RETURNING 1)
  SELECT count(*) FROM u"
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
	echo "| N | periodic tick (ms) | hand-written SQL (ms) | ratio | multi_queue tick, r = 6 (ms) | difference_wait tick (ms) |"
	echo "|---:|---:|---:|---:|---:|---:|"
} >"$out"

q "SELECT matchmaker.create_queue('periodic', algorithm => 'periodic', max_wait => '1 hour', params => '{\"batch\": 2}')" >/dev/null
q "SELECT matchmaker.create_queue('hand', algorithm => 'periodic', max_wait => '1 hour')" >/dev/null
q "SELECT matchmaker.create_queue('mq', algorithm => 'multi_queue', max_wait => '1 hour', params => '{\"ranges\": 6}')" >/dev/null
q "SELECT matchmaker.create_queue('dw', algorithm => 'difference_wait', max_wait => '1 hour', params => '{\"wait_factor\": 0}')" >/dev/null
for n in "${sizes[@]}"; do
	q "UPDATE matchmaker.queues SET params = jsonb_build_object('batch', $n - $n % 2) WHERE name = 'periodic'"
	q "SELECT bench_load('periodic', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	t_tick=$(ms "SELECT matchmaker.tick('periodic')")
	made=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue = 'periodic'")
	q "SELECT bench_load('hand', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	t_hand=$(ms "$handwritten")
	q "SELECT bench_load('mq', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	t_mq=$(ms "SELECT matchmaker.tick('mq')")
	q "SELECT bench_load('dw', $n)" >/dev/null; q "VACUUM ANALYZE matchmaker.tickets"
	t_dw=$(ms "SELECT matchmaker.tick('dw')")
	ratio=$(awk -v a="$t_tick" -v b="$t_hand" 'BEGIN { printf "%.2f", a / b }')
	echo "| $n | $t_tick ($made matches) | $t_hand | $ratio | $t_mq | $t_dw |" >>"$out"
	echo "N=$n: periodic $t_tick ms, hand-written $t_hand ms, multi_queue $t_mq ms, difference_wait $t_dw ms"
done
echo >>"$out"
echo "ratio = periodic tick / hand-written SQL (below 1: the tick is faster)." >>"$out"
cat "$out"
