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

snapshot="SELECT string_agg(format('%s|%s|%s|%s|%s|%s', id, queue, player, rating, attributes, state), ',' ORDER BY id) FROM matchmaker.tickets"
queues="SELECT string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s|%s', name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params), ',') FROM matchmaker.queues"
before_t=$(q "$src" "$snapshot")
before_q=$(q "$src" "$queues")

pg_dump -d "$src" | psql -X -q -v ON_ERROR_STOP=1 -d "$dst" >/dev/null

after_t=$(q "$dst" "$snapshot")
after_q=$(q "$dst" "$queues")
[ "$before_t" = "$after_t" ] || fail "tickets differ after restore: $before_t vs $after_t"
[ "$before_q" = "$after_q" ] || fail "queues differ after restore: $before_q vs $after_q"

# The restored queue works: a retry returns the restored ticket, a new
# player gets an id after every restored one.
old=$(q "$dst" "SELECT id FROM matchmaker.tickets WHERE player = 'p1'")
retry=$(q "$dst" "SELECT matchmaker.enqueue('duel', 'p1', 100)")
[ "$old" = "$retry" ] || fail "retry after restore returned $retry, expected $old"
new=$(q "$dst" "SELECT matchmaker.enqueue('duel', 'newcomer', 1500)")
max_old=$(q "$src" "SELECT max(id) FROM matchmaker.tickets")
[ "$new" -gt "$max_old" ] || fail "new ticket id $new does not follow the restored ids (max $max_old)"
[ "$(q "$dst" "SELECT matchmaker.cancel($new)")" = t ] || fail "cancel after restore failed"

dropdb "$src"; dropdb "$dst"
echo "dump_restore: ok (10 tickets, 1 queue restored; ids continue after $max_old)"
