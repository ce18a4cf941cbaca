#!/usr/bin/env bash
# Benchmark: reading matchmaker.queue_stats with a long history.  10
# queues, 10^6 history tickets (500,000 matches of two), two hours of
# 10-second buckets per queue (what the ticks keep) and 1,000 waiting
# tickets per queue; the median time of SELECT * FROM queue_stats (all
# queues, and one queue) over 20 runs in one session, after a first.
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
q "SELECT count(matchmaker.enqueue('q' || (i % 10), 'w' || i, random())) FROM generate_series(1, 10000) i" >/dev/null
q "VACUUM ANALYZE"
history=$(q "SELECT count(*) FROM matchmaker.tickets WHERE state = 'matched'")

median_ms() {
	for r in $(seq 21); do echo "$1;"; done |
		psql -X -q -At -c '\timing on' -f - | awk '/^Time:/ {print $2}' | tail -20 | sort -n | sed -n 10p
}
all=$(median_ms "SELECT * FROM matchmaker.queue_stats")
one=$(median_ms "SELECT * FROM matchmaker.queue_stats WHERE queue = 'q3'")
{
	echo "# queue_stats benchmark"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q 'SHOW server_version')."
	echo "Command: \`bench/queue_stats.sh\`, run $(date -u +%Y-%m-%d)."
	echo
	echo "10 queues, $history matched tickets of history (500,000 matches), two hours of 10-second buckets per"
	echo "queue (720 each) and 1,000 waiting tickets per queue. Median of 20 runs in one session after a first"
	echo "(client-side \\timing):"
	echo
	echo "| query | time (ms) |"
	echo "|---|---:|"
	echo "| \`SELECT * FROM matchmaker.queue_stats\` (10 queues) | $all |"
	echo "| \`SELECT * FROM matchmaker.queue_stats WHERE queue = 'q3'\` | $one |"
} >"$out"
cat "$out"
