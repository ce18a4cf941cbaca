#!/usr/bin/env bash
# Benchmark: equal filters.  N waiting tickets over 40 combinations of
# mode (4), region (5) and build (2): one periodic tick of one queue with
# filters {"mode", "region", "build"}, against the same tickets split into
# 40 queues without filters (the sum of their 40 ticks).  Each queue's
# batch takes all of its tickets, so every tick matches every ticket.  Also
# simulate_summary of the same N arrivals (auto, the default) with and
# without the filters, and auto's cost with filters against a queue per
# mode and the optimum on a skewed stream; the same tickets with region an
# intersect filter (two regions each), and the skewed stream with the mode
# filter relaxing after 2 s and 5 s (optional_after).
#
# Usage: bench/filters.sh [N]        (default: 100000)
# Writes bench/results/filters.md.  Needs the extension built; starts its
# own throw-away cluster (scripts/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
n=${1:-100000}

mm_install_deps
mm_build_install
mm_start_cluster "shared_buffers = '1GB'" "max_wal_size = '4GB'"
out=bench/results/filters.md
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
run() { /usr/bin/python3 bench/peak_memory.py "$1"; }

q "CREATE EXTENSION matchmaker"
# The players: combination c = i % 40; batch = each combination's size, even.
q "CREATE TABLE players AS
   SELECT i, random() AS rating, random() * 10 AS arrival,
          jsonb_build_object('mode', 'm' || (i % 4), 'region', 'r' || (i / 4 % 5), 'build', 'b' || (i / 20 % 2)) AS attrs,
          i % 40 AS c
   FROM generate_series(1, $n) i"
per=$(( n / 40 - (n / 40) % 2 ))
q "SELECT matchmaker.create_queue('f40', algorithm => 'periodic', max_wait => '1 hour',
     params => jsonb_build_object('batch', $per, 'filters', '{\"mode\": \"equal\", \"region\": \"equal\", \"build\": \"equal\"}'::jsonb))" >/dev/null
q "SELECT matchmaker.create_queue('q' || c, algorithm => 'periodic', max_wait => '1 hour',
     params => jsonb_build_object('batch', $per)) FROM generate_series(0, 39) c" >/dev/null
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, attributes, enqueued_by, enqueued_by_name)
   SELECT 'f40', 'p' || i, rating, now() - interval '10 seconds' + arrival * interval '1 second', attrs,
          current_user::text::regrole, current_user FROM players"
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, attributes, enqueued_by, enqueued_by_name)
   SELECT 'q' || c, 'p' || i, rating, now() - interval '10 seconds' + arrival * interval '1 second', attrs,
          current_user::text::regrole, current_user FROM players"
q "VACUUM ANALYZE matchmaker.tickets"

r=$(run "SELECT matchmaker.tick('f40')"); read -r t_one m_one <<<"$r"
made_one=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue = 'f40'")
t_split=0; m_split=0
for c in $(seq 0 39); do
	r=$(run "SELECT matchmaker.tick('q$c')"); read -r t m <<<"$r"
	t_split=$(awk -v a="$t_split" -v b="$t" 'BEGIN { printf "%.1f", a + b }')
	m_split=$(awk -v a="$m_split" -v b="$m" 'BEGIN { print (b > a ? b : a) }')
done
made_split=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue LIKE 'q%'")
mixed=$(q "SELECT count(*) FROM (SELECT match_id FROM matchmaker.tickets WHERE queue = 'f40' AND match_id IS NOT NULL
           GROUP BY match_id HAVING count(DISTINCT attributes) > 1 AND count(DISTINCT (attributes->>'mode', attributes->>'region', attributes->>'build')) > 1) m")

# simulate: auto (the default), 1v1, max_wait 30 s, the same players over 100 s
stream="SELECT i, rating, arrival * 10, attrs FROM players"
q "SELECT matchmaker.create_queue('fauto', max_wait => '30 s',
     params => '{\"filters\": {\"mode\": \"equal\", \"region\": \"equal\", \"build\": \"equal\"}}')" >/dev/null
q "SELECT matchmaker.create_queue('nauto', max_wait => '30 s')" >/dev/null
r=$(run "SELECT * FROM matchmaker.simulate_summary('fauto', '$stream')"); read -r s_one _ <<<"$r"
r=$(run "SELECT * FROM matchmaker.simulate_summary('nauto', '$stream')"); read -r s_none _ <<<"$r"

# quality: auto with filters against a queue per mode and the optimum, on a
# skewed stream (6,000 players at 8 per second, 70 % in mode m0, the rest
# alike in m1 .. m6), 1v1, max_wait 10 s
q "CREATE TABLE skewed AS
   SELECT i AS id, random() AS rating, sum(-ln(1 - random()) / 8) OVER (ORDER BY i) AS arrival,
          jsonb_build_object('mode', 'm' || (CASE WHEN random() < 0.7 THEN 0 ELSE 1 + floor(random() * 6)::int END)) AS attrs
   FROM (SELECT setseed(0.5)) x, generate_series(1, 6000) i"
q "SELECT matchmaker.create_queue('skew_f', max_wait => '10 s', params => '{\"filters\": {\"mode\": \"equal\"}}')" >/dev/null
q "SELECT matchmaker.create_queue('skew_n', max_wait => '10 s')" >/dev/null
k_one=$(q "SELECT round(cost::numeric, 1) FROM matchmaker.simulate_summary('skew_f', 'SELECT id, rating, arrival, attrs FROM skewed')")
k_split=$(q "SELECT round(sum(x.cost)::numeric, 1) FROM (SELECT DISTINCT attrs->>'mode' m FROM skewed) d,
             matchmaker.simulate_summary('skew_n', format('SELECT id, rating, arrival FROM skewed WHERE attrs->>%L = %L', 'mode', d.m)) x")
k_opt=$(q "SELECT round(sum(matchmaker.optimal_cost('skew_n', format('SELECT id, rating, arrival FROM skewed WHERE attrs->>%L = %L', 'mode', d.m)))::numeric, 1)
           FROM (SELECT DISTINCT attrs->>'mode' m FROM skewed) d")

# auto's per-combination rate: a tick of an auto queue with 400 waiting
# tickets, two in each of 200 modes, and 200,000 matches of history (two
# players each), against a queue without filters with the same history and
# tickets; the median of 5 ticks in one session after a first (each finds
# nothing to match: the ratings of a mode are apart, and the rate of 400
# arrivals at once makes the unfiltered queue's neighbours wait for closer
# ones).  A mode with one waiting ticket is not measured (it forms no
# match), hence two.
q "SELECT matchmaker.create_queue('rate_f', max_wait => '1 hour', params => '{\"filters\": {\"mode\": \"equal\"}}')" >/dev/null
q "SELECT matchmaker.create_queue('rate_n', max_wait => '1 hour')" >/dev/null
q "SELECT setval('matchmaker.matches_id_seq', (SELECT coalesce(max(id), 0) + 1000000 FROM matchmaker.matches))" >/dev/null
q "INSERT INTO matchmaker.matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost, filters)
   SELECT nextval('matchmaker.matches_id_seq'), q, now() - i * interval '10 ms', 0, 0, 0, 0,
          CASE WHEN q = 'rate_f' THEN jsonb_build_object('mode', 'm' || (i % 200)) END
   FROM generate_series(1, 200000) i, (VALUES ('rate_f'), ('rate_n')) v(q)"
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, state, match_id, team, matched_at,
                                  enqueued_by, enqueued_by_name, attributes)
   SELECT m.queue, 'h' || m.id || '_' || j, random(), m.created_at - interval '1 second', 'matched', m.id, j,
          m.created_at, current_user::text::regrole, current_user, coalesce(m.filters, '{}')
   FROM matchmaker.matches m, generate_series(1, 2) j WHERE m.queue IN ('rate_f', 'rate_n')"
q "VACUUM ANALYZE matchmaker.matches, matchmaker.tickets"
q "SELECT count(matchmaker.enqueue('rate_f', 'w' || i, i / 400.0, jsonb_build_object('mode', 'm' || (i % 200)))),
          count(matchmaker.enqueue('rate_n', 'w' || i, i / 400.0)) FROM generate_series(0, 399) i" >/dev/null
tick_ms() {
	# one session: the first tick prepares its plans, the median of the next 5 is kept
	for r in 1 2 3 4 5 6; do echo "SELECT matchmaker.tick('$1');"; done |
		psql -X -q -At -c '\timing on' -f - | awk '/^Time:/ {print $2}' | tail -5 | sort -n | sed -n 3p
}
r_one=$(tick_ms rate_f)
r_none=$(tick_ms rate_n)
r_left=$(q "SELECT count(*) FILTER (WHERE queue = 'rate_f') || ' and ' || count(*) FILTER (WHERE queue = 'rate_n')
            FROM matchmaker.tickets WHERE state = 'waiting' AND queue IN ('rate_f', 'rate_n')")

# intersect: the same tickets, each accepting two regions (its own and the
# next), one periodic tick with {"mode", "build": equal, "region": intersect}
q "SELECT matchmaker.create_queue('i40', algorithm => 'periodic', max_wait => '1 hour',
     params => jsonb_build_object('batch', $per, 'filters', '{\"mode\": \"equal\", \"region\": \"intersect\", \"build\": \"equal\"}'::jsonb))" >/dev/null
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, attributes, enqueued_by, enqueued_by_name)
   SELECT 'i40', 'p' || i, rating, now() - interval '10 seconds' + arrival * interval '1 second',
          attrs || jsonb_build_object('region', jsonb_build_array('r' || (i / 4 % 5), 'r' || ((i / 4 + 1) % 5))),
          current_user::text::regrole, current_user FROM players"
q "VACUUM ANALYZE matchmaker.tickets"
r=$(run "SELECT matchmaker.tick('i40')"); read -r t_int m_int <<<"$r"
made_int=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue = 'i40'")
q "SELECT matchmaker.create_queue('iauto', max_wait => '30 s',
     params => '{\"filters\": {\"mode\": \"equal\", \"region\": \"intersect\", \"build\": \"equal\"}}')" >/dev/null
istream="SELECT i, rating, arrival * 10, attrs || jsonb_build_object(''region'', jsonb_build_array(''r'' || (i / 4 % 5), ''r'' || ((i / 4 + 1) % 5))) FROM players"
r=$(run "SELECT * FROM matchmaker.simulate_summary('iauto', '$istream')"); read -r s_int _ <<<"$r"

# relaxed tickets: N/2.5 tickets in 2 modes that relax after 1 s, each with
# a build of its own (so only the mode can ever be shared), all waited
# 100 s: one greedy tick (each relaxed ticket looks up the busiest key of
# its build)
nr=$(( n * 2 / 5 ))
q "SELECT matchmaker.create_queue('relaxed', algorithm => 'greedy', max_wait => '1 hour',
     params => '{\"filters\": {\"mode\": {\"kind\": \"equal\", \"optional_after\": 1}, \"build\": \"equal\"}}')" >/dev/null
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, attributes, enqueued_by, enqueued_by_name)
   SELECT 'relaxed', 'p' || i, random(), now() - interval '100 seconds',
          jsonb_build_object('mode', 'm' || (i % 2), 'build', 'b' || i), current_user::text::regrole, current_user
   FROM generate_series(1, $nr) i"
q "VACUUM ANALYZE matchmaker.tickets"
r=$(run "SELECT matchmaker.tick('relaxed')"); read -r t_rel m_rel <<<"$r"

# block lists: the f40 tickets again in a periodic queue with an exclude
# filter besides, each player blocking the 3 players after it (who are
# of other combinations but one in 40, so few matches hold a blocked pair)
# and, in a second queue, the 3 players 40 after it (of its combination:
# every batch holds blocked pairs and is stepped again)
for b in 1 40; do
	q "SELECT matchmaker.create_queue('x$b', algorithm => 'periodic', max_wait => '1 hour',
	     params => jsonb_build_object('batch', $per, 'filters', '{\"mode\": \"equal\", \"region\": \"equal\", \"build\": \"equal\", \"blocked\": \"exclude\"}'::jsonb))" >/dev/null
	q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, attributes, enqueued_by, enqueued_by_name)
	   SELECT 'x$b', 'p' || i, rating, now() - interval '10 seconds' + arrival * interval '1 second',
	          attrs || jsonb_build_object('blocked', jsonb_build_array('p' || (i + $b), 'p' || (i + 2 * $b), 'p' || (i + 3 * $b))),
	          current_user::text::regrole, current_user FROM players"
done
q "VACUUM ANALYZE matchmaker.tickets"
r=$(run "SELECT matchmaker.tick('x1')"); read -r t_x1 m_x1 <<<"$r"
r=$(run "SELECT matchmaker.tick('x40')"); read -r t_x40 m_x40 <<<"$r"
made_x1=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue = 'x1'")
made_x40=$(q "SELECT count(*) FROM matchmaker.matches WHERE queue = 'x40'")
bad_x=$(q "SELECT count(*) FROM matchmaker.check() WHERE problem = 'exclude'")

# optional_after: the skewed stream with the mode filter relaxing after
# 2 s and 5 s, against the strict filter (auto, 1v1, max_wait 10 s)
relax_row() {
	local qn=$1 label=$2
	q "WITH s AS (SELECT s.*, k.arrival, k.attrs->>'mode' AS mode
                  FROM matchmaker.simulate('$qn', 'SELECT id, rating, arrival, attrs FROM skewed') s JOIN skewed k USING (id)),
            m AS (SELECT match_no, count(DISTINCT mode) > 1 AS mixed FROM s WHERE match_no IS NOT NULL GROUP BY match_no)
       SELECT format('| %s | %s | %s | %s | %s | %s | %s |', '$label',
                     (SELECT round(cost::numeric, 1) FROM matchmaker.simulate_summary('$qn', 'SELECT id, rating, arrival, attrs FROM skewed')),
                     (SELECT bots FROM matchmaker.simulate_summary('$qn', 'SELECT id, rating, arrival, attrs FROM skewed')),
                     round(avg(matched_at - arrival)::numeric, 2),
                     round(percentile_cont(0.95) WITHIN GROUP (ORDER BY matched_at - arrival)::numeric, 2),
                     (SELECT round(100.0 * count(*) FILTER (WHERE mixed) / count(*), 1) FROM m),
                     round(avg(matched_at - arrival) FILTER (WHERE mode <> 'm0')::numeric, 2))
       FROM s"
}
q "SELECT matchmaker.create_queue('skew_r2', max_wait => '10 s',
     params => '{\"filters\": {\"mode\": {\"kind\": \"equal\", \"optional_after\": 2}}}')" >/dev/null
q "SELECT matchmaker.create_queue('skew_r5', max_wait => '10 s',
     params => '{\"filters\": {\"mode\": {\"kind\": \"equal\", \"optional_after\": 5}}}')" >/dev/null
relax_rows="$(relax_row skew_f 'strict')
$(relax_row skew_r5 'optional after 5 s')
$(relax_row skew_r2 'optional after 2 s')
$(relax_row skew_n 'no filter')"

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
{
	echo "# Filters benchmark"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version')."
	echo "Command: \`bench/filters.sh $n\`, run $(date -u +%Y-%m-%d)."
	echo
	echo "$n waiting tickets over 40 combinations of mode (4), region (5) and build (2), periodic"
	echo "1v1, each combination's batch taking all of its tickets ($per). Server-side time of each"
	echo "statement in a fresh backend (bench/peak_memory.py), and its peak private memory growth."
	echo
	echo "| | time (ms) | peak memory (MiB) | matches |"
	echo "|---|---:|---:|---:|"
	echo "| one queue with filters, one tick | $t_one | $(mib "$m_one") | $made_one |"
	echo "| 40 queues without filters, 40 ticks (sum; largest peak) | $t_split | $(mib "$m_split") | $made_split |"
	echo "| one queue, region an intersect filter (each ticket lists 2 regions), one tick | $t_int | $(mib "$m_int") | $made_int |"
	echo "| the equal filters and a block list (each player blocks 3 of other combinations but 1 in 40), one tick | $t_x1 | $(mib "$m_x1") | $made_x1 |"
	echo "| the equal filters and a block list (each player blocks 3 of its own combination), one tick | $t_x40 | $(mib "$m_x40") | $made_x40 |"
	echo
	echo "Matches holding a blocked pair (check()): $bad_x."
	echo
	echo "$nr tickets whose mode (2 values) relaxed after 1 s, each of a build of its own (greedy, one tick,"
	echo "nothing to match): $t_rel ms, peak $(mib "$m_rel") MiB."
	echo
	echo "Matches of the filtered queue mixing combinations: $mixed."
	echo
	echo "simulate_summary of the same $n arrivals over 100 s (with their attributes), algorithm auto,"
	echo "1v1, max_wait 30 s: $s_one ms with the filters, $s_none ms in a queue without them, $s_int ms with"
	echo "region an intersect filter (each arrival listing 2 regions)."
	echo
	echo "Quality of auto with filters: 6,000 players at 8 per second, 70 % in one mode and 5 % in each of"
	echo "six others, 1v1, max_wait 10 s (simulate_summary, eq. 1 cost): one queue with the filter $k_one,"
	echo "a queue per mode $k_split (sum), the offline optimum of each mode $k_opt (sum)."
	echo
	echo "optional_after on the same stream (simulate; waits in seconds; mixed: share of matches whose"
	echo "players' modes differ, each recorded as relaxed live):"
	echo
	echo "| mode filter | cost | computer players | mean wait | p95 wait | mixed (%) | mean wait, small modes |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	echo "$relax_rows"
	echo
	echo "auto's rate per combination: a tick of an auto queue with 400 waiting tickets, two in each of 200 modes, and"
	echo "200,000 matches of history took $r_one ms (median of 5 in one session after a first, client-side \\timing), one without"
	echo "filters with the same history and tickets $r_none ms (waiting after the ticks: $r_left of 400)."
} >"$out"
cat "$out"
