#!/usr/bin/env bash
# Benchmark: reading matchmaker.queue_stats and ticket_status with a long
# history.  10 queues, 10^6 history tickets (500,000 matches of two), two
# hours of 10-second buckets and an hour of minute rows for each tenth of
# the rating range per queue (what the ticks keep) and 1,000 waiting
# tickets per queue; the median time of SELECT * FROM queue_stats (all
# queues, and one queue) and of one waiting ticket's ticket_status (its
# expected_wait read from the statistics, and for comparison from the
# history as before 0.3.0's tables) over 20 runs in one session, after a
# first.
#
# Usage: bench/queue_stats.sh        Writes bench/results/queue_stats.md.
# Needs the extension built; starts its own throw-away cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

mm_install_deps
mm_build_install
mm_start_cluster "shared_buffers = '512MB'" "max_wal_size = '4GB'"
out=bench/results/queue_stats.md
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }

q "CREATE EXTENSION matchmaker"
q "SELECT matchmaker.create_queue('q' || i, algorithm => 'greedy', max_wait => '1 hour') FROM generate_series(0, 9) i" >/dev/null
q "INSERT INTO matchmaker.matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost)
   SELECT i, 'q' || (i % 10), now() - i * interval '10 ms', 0, 0.1, 0.05, 0.05 FROM generate_series(1, 500000) i"
q "SELECT setval('matchmaker.matches_id_seq', 500000)" >/dev/null
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, state, match_id, team, matched_at,
                                  enqueued_by, enqueued_by_name)
   SELECT m.queue, 'h' || m.id || '_' || j, random(), m.created_at - interval '3 seconds', 'matched', m.id, j,
          m.created_at, current_user::text::regrole, current_user
   FROM matchmaker.matches m, generate_series(1, 2) j"
q "INSERT INTO matchmaker.queue_buckets
   SELECT 'q' || i, date_trunc('minute', now()) - b * interval '10 seconds', 20, 40, 1, 0, 2.0,
          array_fill(0::bigint, ARRAY[20]) || ARRAY[40::bigint]
   FROM generate_series(0, 9) i, generate_series(0, 719) b"
q "INSERT INTO matchmaker.queue_bands
   SELECT 'q' || i, band, date_trunc('minute', now()) - m * interval '1 minute',
          array_fill(0::bigint, ARRAY[12]) || ARRAY[5, 9, 14, 20, 26, 30, 26, 20, 14, 9, 5]::bigint[]
   FROM generate_series(0, 9) i, generate_series(0, 9) band, generate_series(0, 60) m"
q "SELECT count(matchmaker.enqueue('q' || (i % 10), 'w' || i, random())) FROM generate_series(1, 10000) i" >/dev/null
q "VACUUM ANALYZE"
history=$(q "SELECT count(*) FROM matchmaker.tickets WHERE state = 'matched'")

median_ms() {
	for r in $(seq 21); do echo "$1;"; done |
		psql -X -q -At -c '\timing on' -f - | awk '/^Time:/ {print $2}' | tail -20 | sort -n | sed -n 10p
}
all=$(median_ms "SELECT * FROM matchmaker.queue_stats")
one=$(median_ms "SELECT * FROM matchmaker.queue_stats WHERE queue = 'q3'")
ticket=$(q "SELECT min(id) FROM matchmaker.tickets WHERE queue = 'q3' AND state = 'waiting' AND rating BETWEEN 0.4 AND 0.5")
status=$(median_ms "SELECT * FROM matchmaker.ticket_status($ticket)")
estimate=$(q "SELECT round(extract(epoch FROM expected_wait)::numeric, 2) FROM matchmaker.ticket_status($ticket)")
# a ticket that has waited longer than anyone in the bands: its tenth, then all ten are read
old_ticket=$(q "SELECT min(id) FROM matchmaker.tickets WHERE queue = 'q3' AND state = 'waiting' AND id > $ticket")
q "UPDATE matchmaker.tickets SET enqueued_at = now() - interval '50 minutes' WHERE id = $old_ticket"
status_all=$(median_ms "SELECT * FROM matchmaker.ticket_status($old_ticket)")
# the same call reading the history, as the library does before 0.3.0's statistics tables
q "ALTER TABLE matchmaker.queue_bands RENAME TO queue_bands_hidden"
status_scan=$(median_ms "SELECT * FROM matchmaker.ticket_status($ticket)")
estimate_scan=$(q "SELECT round(extract(epoch FROM expected_wait)::numeric, 2) FROM matchmaker.ticket_status($ticket)")
q "ALTER TABLE matchmaker.queue_bands_hidden RENAME TO queue_bands"
band_rows=$(q "SELECT count(*) FROM matchmaker.queue_bands")
{
	echo "# queue_stats benchmark"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version')."
	echo "Command: \`bench/queue_stats.sh\`, run $(date -u +%Y-%m-%d)."
	echo
	echo "10 queues, $history matched tickets of history (500,000 matches), two hours of 10-second buckets per"
	echo "queue (720 each), an hour of minute rows per tenth of the rating range ($band_rows rows in all) and 1,000"
	echo "waiting tickets per queue. Median of 20 runs in one session after a first (client-side \\timing):"
	echo
	echo "| query | time (ms) |"
	echo "|---|---:|"
	echo "| \`SELECT * FROM matchmaker.queue_stats\` (10 queues) | $all |"
	echo "| \`SELECT * FROM matchmaker.queue_stats WHERE queue = 'q3'\` | $one |"
	echo "| \`SELECT * FROM matchmaker.ticket_status(id)\` of a waiting ticket, its expected_wait from \`queue_bands\` | $status |"
	echo "| the same for a ticket that waited longer than anyone recent (its tenth, then all ten read) | $status_all |"
	echo "| the same, its expected_wait from the history (as before 0.3.0's tables) | $status_scan |"
	echo
	echo "(The two expected waits read different made-up data, so they differ: $estimate s and $estimate_scan s.)"
} >"$out"
cat "$out"
