-- Backfill: a game server asks for replacements into a running match; a
-- tick fills the open requests from the waiting tickets (least added
-- rating spread first, the longest waiting among equals) before it forms
-- new matches; a request ends filled, expired or cancelled.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
DROP ROLE IF EXISTS regress_bf_server, regress_bf_other;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default
CREATE ROLE regress_bf_server IN ROLE matchmaker_client;
CREATE ROLE regress_bf_other IN ROLE matchmaker_client;

-- A 2v2 match of ratings .40 .45 .50 .55.
SELECT matchmaker.create_queue('sq', team_size => 2, algorithm => 'greedy', max_wait => '1 hour');
SET ROLE regress_bf_server;
SELECT count(matchmaker.enqueue('sq', 'p' || i, 0.35 + i * 0.05)) FROM generate_series(1, 4) i;
RESET ROLE;
SELECT matchmaker.tick('sq', clock_timestamp()) AS made;
SELECT id AS m FROM matchmaker.matches \gset
SELECT player, team FROM matchmaker.tickets ORDER BY player;

-- Bad requests change nothing.
SET ROLE regress_bf_server;
SELECT matchmaker.backfill(-1, 1);
SELECT matchmaker.backfill(:m, 0);
SELECT matchmaker.backfill(:m, 5);
SELECT matchmaker.backfill(:m, 1, team => 3);
SELECT matchmaker.backfill(:m, 3, team => 1);
SELECT matchmaker.backfill(:m, 1, expires => '0 s');
SELECT matchmaker.backfill(:m, 1, expires => '25 hours');
SELECT matchmaker.backfill(:m, 1, expires => make_interval(days => 2147483647, secs => -1075146360104.0));
SELECT matchmaker.backfill(:m, NULL);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT matchmaker.backfill(:m, 1);
ROLLBACK;
SET ROLE regress_bf_other;
SELECT matchmaker.backfill(:m, 1);
RESET ROLE;
SELECT count(*) AS requests FROM matchmaker.backfills;

-- Two players of team 1 left: the server asks for two of team 1, whose
-- players in the match are rated .45 and .50.  Three players wait: .47
-- adds no spread and goes first though it came last; then .30 (0.15 below)
-- before .70 (0.20 above).
SET ROLE regress_bf_server;
SELECT matchmaker.backfill(:m, 2, team => 1) AS r1 \gset
SELECT matchmaker.enqueue('sq', 'far', 0.70), matchmaker.enqueue('sq', 'low', 0.30),
       matchmaker.enqueue('sq', 'mid', 0.47) \gset
RESET ROLE;
SELECT matchmaker.tick('sq', clock_timestamp()) AS made;
SELECT player, state, team, backfill_id = :r1 AS by_r1 FROM matchmaker.tickets
WHERE player IN ('far', 'low', 'mid') ORDER BY player;
SELECT state, slots, filled, ended_at IS NOT NULL AS ended FROM matchmaker.backfills WHERE id = :r1;
SELECT * FROM matchmaker.check();

-- A request without a team fills the team with the fewest players;
-- its one slot takes far.  A later request expires unfilled.
SET ROLE regress_bf_server;
SELECT matchmaker.backfill(:m, 1) AS r2 \gset
SELECT matchmaker.backfill(:m, 1, expires => '1 minute') AS r3 \gset
RESET ROLE;
SELECT matchmaker.tick('sq', clock_timestamp()) AS made;
SELECT player, team, backfill_id = :r2 AS by_r2 FROM matchmaker.tickets WHERE player = 'far';
SELECT matchmaker.tick('sq', clock_timestamp() + interval '2 minutes') AS made;
SELECT id = :r3 AS r3, state, filled FROM matchmaker.backfills WHERE id IN (:r2, :r3) ORDER BY id;

-- Backfill goes before new matches: with a request of one slot open,
-- five waiting players give the request its nearest one and one new match.
SET ROLE regress_bf_server;
SELECT matchmaker.backfill(:m, 1, team => 2) AS r4 \gset
SELECT count(matchmaker.enqueue('sq', 'n' || i, 0.4 + i * 0.01)) FROM generate_series(1, 5) i;
RESET ROLE;
SELECT matchmaker.tick('sq', clock_timestamp()) AS made;
SELECT state, filled FROM matchmaker.backfills WHERE id = :r4;
SELECT count(*) FILTER (WHERE backfill_id = :r4) AS backfilled,
       count(*) FILTER (WHERE match_id <> :m) AS in_new_match,
       count(*) FILTER (WHERE state = 'waiting') AS waiting
FROM matchmaker.tickets WHERE player LIKE 'n%';
SELECT * FROM matchmaker.check();

-- cancel_backfill: by the role that asked, once; another role may not.
SET ROLE regress_bf_server;
SELECT matchmaker.backfill(:m, 1) AS r5 \gset
SET ROLE regress_bf_other;
SELECT matchmaker.cancel_backfill(:r5);
SET ROLE regress_bf_server;
SELECT matchmaker.cancel_backfill(:r5);
SELECT matchmaker.cancel_backfill(:r5);
SELECT matchmaker.cancel_backfill(-1);
RESET ROLE;
SELECT state FROM matchmaker.backfills WHERE id = :r5;

-- At most a match's players (a team's, for a team) may be open places at
-- once, and no more than the players still in it: more is refused.
SET ROLE regress_bf_server;
SELECT matchmaker.backfill(:m, 2, team => 1) AS r6 \gset
SELECT matchmaker.backfill(:m, 1, team => 1);
SELECT matchmaker.backfill(:m, 2) AS r7 \gset
SELECT matchmaker.backfill(:m, 1);
SELECT matchmaker.backfill(:m, 1, team => 2);
SELECT matchmaker.cancel_backfill(:r7);
SELECT matchmaker.backfill(:m, 1, team => 2) IS NOT NULL AS room_again;
RESET ROLE;
SELECT team, sum(slots - filled) AS open FROM matchmaker.backfills
WHERE match_id = :m AND state = 'open' GROUP BY team ORDER BY team;

-- A request frees the places of players who left: a 1v1 asks for both of
-- its places (team NULL: one to each team), then for none more until they
-- fill; the players still in it (matched tickets less the places freed)
-- never pass 2, however often it asks.
SELECT matchmaker.create_queue('one', algorithm => 'greedy', max_wait => '1 hour');
SELECT count(matchmaker.enqueue('one', 'o' || i, 0.5)) FROM generate_series(1, 2) i;
SELECT matchmaker.tick('one', clock_timestamp()) AS made;
SELECT id AS om FROM matchmaker.matches WHERE queue = 'one' \gset
SELECT matchmaker.backfill(:om, 2) > 0 AS asked;
SELECT matchmaker.backfill(:om, 1);
SELECT count(matchmaker.enqueue('one', 'n' || i, 0.5 + i / 100.0)) FROM generate_series(1, 3) i;
SELECT matchmaker.tick('one', clock_timestamp()) AS made;
SELECT team, count(*) AS players, count(backfill_id) AS backfilled FROM matchmaker.tickets
WHERE match_id = :om GROUP BY team ORDER BY team;
SELECT matchmaker.backfill(:om, 2) > 0 AS asked_again;
SELECT matchmaker.backfill(:om, 1);
SELECT (SELECT count(*) FROM matchmaker.tickets WHERE match_id = :om AND state = 'matched')
       - (SELECT sum(CASE WHEN state = 'open' THEN slots ELSE filled END) FROM matchmaker.backfills WHERE match_id = :om)
       AS still_in_it;
SELECT matchmaker.drop_queue('one', force => true);

-- A queue switched to optimize fills no request, but its requests expire.
SELECT matchmaker.create_queue('sw', algorithm => 'greedy', max_wait => '1 hour');
SELECT count(matchmaker.enqueue('sw', 's' || i, 0.5)) FROM generate_series(1, 2) i;
SELECT matchmaker.tick('sw', clock_timestamp()) AS made;
SELECT matchmaker.backfill((SELECT id FROM matchmaker.matches WHERE queue = 'sw'), 1, expires => '1 minute') AS sw_req \gset
SELECT matchmaker.alter_queue('sw', algorithm => 'optimize');
SELECT count(matchmaker.enqueue('sw', 't' || i, 0.5)) FROM generate_series(1, 2) i;
SELECT matchmaker.tick('sw', clock_timestamp()) IS NOT NULL AS ticked;
SELECT state, filled FROM matchmaker.backfills WHERE id = :sw_req;
SELECT matchmaker.tick('sw', clock_timestamp() + interval '2 minutes') IS NOT NULL AS ticked;
SELECT state, filled FROM matchmaker.backfills WHERE id = :sw_req;
SELECT matchmaker.drop_queue('sw', force => true);

-- optimize takes no backfill; drop_queue removes the requests.
SELECT matchmaker.create_queue('opt', algorithm => 'optimize', max_wait => '1 hour');
SELECT count(matchmaker.enqueue('opt', 'o' || i, 0.5)) FROM generate_series(1, 2) i;
SELECT matchmaker.tick('opt', clock_timestamp() + interval '2 hours') AS made;
SELECT matchmaker.backfill((SELECT id FROM matchmaker.matches WHERE queue = 'opt'), 1);
SELECT matchmaker.drop_queue('sq', force => true);
SELECT count(*) AS requests FROM matchmaker.backfills;

DROP ROLE regress_bf_server, regress_bf_other;
