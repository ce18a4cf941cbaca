#!/usr/bin/env bash
# pg_dump of a database with queues, waiting and ended tickets restores to a
# working queue: same rows, and new tickets continue the id sequence.
# Needs PGHOST/PGPORT/PGUSER of a running cluster with matchmaker installed.
set -euo pipefail

src=mm_dump_src
dst=mm_dump_dst
fail() { echo "dump_restore: $*" >&2; exit 1; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

dropdb --if-exists "$src"; dropdb --if-exists "$dst"
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

snapshot="SELECT string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s', id, queue, player, rating, attributes, state, match_id, team), ',' ORDER BY id) FROM matchmaker.tickets"
queues="SELECT string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s|%s', name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params), ',') FROM matchmaker.queues"
before_t=$(q "$src" "$snapshot")
before_q=$(q "$src" "$queues")
matches="SELECT string_agg(format('%s|%s|%s|%s', id, queue, bots, cost), ',' ORDER BY id) FROM matchmaker.matches"
groups="SELECT string_agg(format('%s|%s|%s', queue, tickets, finalize_at), ',') FROM matchmaker.provisional"
before_m=$(q "$src" "$matches")
before_g=$(q "$src" "$groups")
[ -n "$before_m" ] && [ -n "$before_g" ] || fail "the source database has no matches or no provisional group"

pg_dump -d "$src" | psql -X -q -v ON_ERROR_STOP=1 -d "$dst" >/dev/null

after_t=$(q "$dst" "$snapshot")
after_q=$(q "$dst" "$queues")
[ "$before_t" = "$after_t" ] || fail "tickets differ after restore: $before_t vs $after_t"
[ "$before_q" = "$after_q" ] || fail "queues differ after restore: $before_q vs $after_q"
[ "$before_m" = "$(q "$dst" "$matches")" ] || fail "matches differ after restore"
[ "$before_g" = "$(q "$dst" "$groups")" ] || fail "provisional groups differ after restore"

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
echo "dump_restore: ok (queues, tickets, matches and provisional groups restored; ids continue after $max_old)"
