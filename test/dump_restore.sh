#!/usr/bin/env bash
# pg_dump of a database with queues, waiting and ended tickets restores to a
# working queue: same rows, and new tickets continue the id sequence.  The
# restore runs after the client role that enqueued some of the tickets was
# dropped (as into a cluster without that role): every ticket comes back,
# owned by nobody, and a new role of the same name does not get them.
# Needs PGHOST/PGPORT/PGUSER of a running cluster with matchmaker installed.
set -euo pipefail

src=mm_dump_src
dst=mm_dump_dst
client=regress_mm_dump_client
dump=$(mktemp /tmp/mm_dump.XXXXXX)
trap 'rm -f "$dump"' EXIT
fail() { echo "dump_restore: $*" >&2; exit 1; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

dropdb --if-exists "$src"; dropdb --if-exists "$dst"
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP ROLE IF EXISTS $client"
createdb "$src"; createdb "$dst"

q "$src" "CREATE EXTENSION matchmaker"
q "$src" "SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '30 s',
                                         rating_min => 0, rating_max => 3000, params => '{\"on_timeout\": \"expire\"}')"
q "$src" "SELECT matchmaker.enqueue('duel', 'p' || i, i * 100, jsonb_build_object('region', 'eu')) FROM generate_series(1, 10) i" >/dev/null
q "$src" "SELECT matchmaker.cancel(id) FROM matchmaker.tickets WHERE player IN ('p3', 'p4')" >/dev/null
# Two matches (greedy pairs the four oldest waiting tickets), and a
# difference_wait queue with a provisional group.
q "$src" "UPDATE matchmaker.tickets SET enqueued_at = now() - interval '1 second' * (20 - id)" >/dev/null
q "$src" "SELECT matchmaker.tick('duel', (SELECT max(enqueued_at) FROM matchmaker.tickets))" >/dev/null
q "$src" "SELECT matchmaker.enqueue('duel', 'p' || i, i * 100) FROM generate_series(11, 12) i" >/dev/null
q "$src" "SELECT matchmaker.create_queue('pairs', algorithm => 'difference_wait', max_wait => '1 hour', params => '{\"wait_factor\": 3600}')" >/dev/null
q "$src" "SELECT matchmaker.enqueue('pairs', 'x', 0.4), matchmaker.enqueue('pairs', 'y', 0.6)" >/dev/null
q "$src" "SELECT matchmaker.tick('pairs')" >/dev/null
# Tickets of a client role, one waiting and one cancelled.
q "$src" "CREATE ROLE $client IN ROLE matchmaker_client"
q "$src" "SET ROLE $client; SELECT matchmaker.enqueue('duel', 'c' || i, 2900) FROM generate_series(1, 2) i" >/dev/null
c2=$(q "$src" "SELECT id FROM matchmaker.tickets WHERE player = 'c2'")
q "$src" "SET ROLE $client; SELECT matchmaker.cancel($c2)" >/dev/null

snapshot="SELECT string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s', id, queue, player, rating, attributes, state, match_id, team, enqueued_by, enqueued_by_name), ',' ORDER BY id) FROM matchmaker.tickets"
queues="SELECT string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s|%s', name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params), ',') FROM matchmaker.queues"
before_t=$(q "$src" "$snapshot")
before_q=$(q "$src" "$queues")
matches="SELECT string_agg(format('%s|%s|%s|%s', id, queue, bots, cost), ',' ORDER BY id) FROM matchmaker.matches"
groups="SELECT string_agg(format('%s|%s|%s', queue, tickets, finalize_at), ',') FROM matchmaker.provisional"
before_m=$(q "$src" "$matches")
before_g=$(q "$src" "$groups")
[ -n "$before_m" ] && [ -n "$before_g" ] || fail "the source database has no matches or no provisional group"

pg_dump -d "$src" >"$dump"
# The client role is gone when the dump is restored.
q "$src" "DROP ROLE $client"
psql -X -q -v ON_ERROR_STOP=1 -d "$dst" -f "$dump" >/dev/null || fail "restore without role $client failed"
rm -f "$dump"

after_t=$(q "$dst" "$snapshot")
after_q=$(q "$dst" "$queues")
[ "$before_t" = "$after_t" ] || fail "tickets differ after restore: $before_t vs $after_t"
[ "$before_q" = "$after_q" ] || fail "queues differ after restore: $before_q vs $after_q"
[ "$before_m" = "$(q "$dst" "$matches")" ] || fail "matches differ after restore"
[ "$before_g" = "$(q "$dst" "$groups")" ] || fail "provisional groups differ after restore"
[ "$(q "$dst" "SELECT count(*) FROM matchmaker.tickets WHERE enqueued_by_name = '$client'")" = 2 ] ||
	fail "the tickets of role $client were not restored"

# A new role of the dropped role's name neither reads, cancels nor takes
# over its waiting ticket; matchmaker_admin reads it.
c1=$(q "$dst" "SELECT id FROM matchmaker.tickets WHERE player = 'c1'")
q "$dst" "CREATE ROLE $client IN ROLE matchmaker_client"
for call in "matchmaker.cancel($c1)" "matchmaker.ticket_status($c1)" "matchmaker.enqueue('duel', 'c1', 2900)"; do
	if q "$dst" "SET ROLE $client; SELECT $call" >/dev/null 2>&1; then
		fail "a new role $client ran $call on the dropped role's ticket"
	fi
done
[ "$(q "$dst" "SET ROLE matchmaker_admin; SELECT state FROM matchmaker.ticket_status($c1)")" = waiting ] ||
	fail "matchmaker_admin cannot read the dropped role's ticket"
# The new role's own tickets are its own.
mine=$(q "$dst" "SET ROLE $client; SELECT matchmaker.enqueue('duel', 'c3', 2900)")
[ "$(q "$dst" "SET ROLE $client; SELECT matchmaker.cancel($mine)")" = t ] || fail "the new role $client cannot cancel its own ticket"

# The restored queue works: a retry returns the restored ticket, a new
# player gets an id after every restored one.
old=$(q "$dst" "SELECT id FROM matchmaker.tickets WHERE player = 'p11' AND state = 'waiting'")
retry=$(q "$dst" "SELECT matchmaker.enqueue('duel', 'p11', 1100)")
[ "$old" = "$retry" ] || fail "retry after restore returned $retry, expected $old"
new=$(q "$dst" "SELECT matchmaker.enqueue('duel', 'newcomer', 1500)")
max_old=$(q "$src" "SELECT max(id) FROM matchmaker.tickets")
[ "$new" -gt "$max_old" ] || fail "new ticket id $new does not follow the restored ids (max $max_old)"
[ "$(q "$dst" "SELECT matchmaker.cancel($new)")" = t ] || fail "cancel after restore failed"
# A tick of the restored queue continues the match ids.
q "$dst" "SELECT matchmaker.enqueue('duel', 'late' || i, 500) FROM generate_series(1, 2) i" >/dev/null
[ "$(q "$dst" "SELECT matchmaker.tick('duel')")" -ge 1 ] || fail "tick after restore made no match"
[ "$(q "$dst" "SELECT count(DISTINCT id) = count(*) FROM matchmaker.matches")" = t ] || fail "match ids repeat after restore"

dropdb "$src"; dropdb "$dst"
q postgres "DROP ROLE $client"
echo "dump_restore: ok (queues, tickets, matches and provisional groups restored; ids continue after $max_old)"
