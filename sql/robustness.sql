-- A tick is never wedged by data: a waiting ticket the queue's current
-- settings cannot use, however it got there (here rows a superuser wrote by
-- hand), is ended in state 'invalid' with its reason, and the rest of the
-- queue is matched.  And every algorithm change in alter_queue checks the
-- waiting tickets for the new algorithm.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

-- A greedy queue with a criterion; its tickets are then corrupted by hand.
SELECT matchmaker.create_queue('c', algorithm => 'greedy', max_wait => '1 hour',
                               params => '{"criteria": {"latency": {"min": 0, "max": 300}}}');
SELECT matchmaker.enqueue('c', p, r, jsonb_build_object('latency', 50)) > 0 AS enqueued
FROM (VALUES ('a', 0.1), ('b', 0.2), ('c', 0.3), ('d', 0.4), ('e', 0.5), ('f', 0.6)) AS v(p, r);
UPDATE matchmaker.tickets SET attributes = '{}' WHERE player = 'b';
UPDATE matchmaker.tickets SET attributes = '{"latency": "high"}' WHERE player = 'c';
UPDATE matchmaker.tickets SET attributes = '{"latency": 900}' WHERE player = 'd';
UPDATE matchmaker.tickets SET rating = 7 WHERE player = 'e';
UPDATE matchmaker.tickets SET rating = 'NaN' WHERE player = 'f';
SELECT matchmaker.tick('c');
-- a is alone: it waits; the others are ended with their reasons (never clamped).
SELECT player, state, end_reason FROM matchmaker.tickets WHERE queue = 'c' ORDER BY player;
SELECT matchmaker.enqueue('c', 'g', 0.15, '{"latency": 60}') > 0 AS enqueued;
SELECT matchmaker.tick('c');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'c' AND state IN ('waiting', 'matched') ORDER BY player;
SELECT count(*) AS problems FROM matchmaker.check();

-- An optimize queue: party and ping optimize cannot use.  (Its rounds come
-- at the multiples of 15 minutes of the clock: a tick 16 minutes ahead
-- always holds one.)
SELECT matchmaker.create_queue('o', algorithm => 'optimize', max_wait => '1 hour');
SELECT matchmaker.enqueue('o', p, 0.5, jsonb_build_object('ping', jsonb_build_object('eu', 20))) > 0 AS enqueued
FROM (VALUES ('a'), ('b'), ('c'), ('d'), ('e'), ('f')) AS v(p);
UPDATE matchmaker.tickets SET attributes = '{"ping": "fast"}' WHERE queue = 'o' AND player = 'c';
UPDATE matchmaker.tickets SET attributes = '{"ping": {"eu": 5e9}}' WHERE queue = 'o' AND player = 'd';
UPDATE matchmaker.tickets SET attributes = '{"ping": {"eu": "x"}}' WHERE queue = 'o' AND player = 'e';
UPDATE matchmaker.tickets SET attributes = '{"party": 42}' WHERE queue = 'o' AND player = 'f';
SELECT matchmaker.tick('o', now() + interval '16 minutes');
SELECT player, state, end_reason FROM matchmaker.tickets WHERE queue = 'o' ORDER BY player;
SELECT count(*) AS problems FROM matchmaker.check();
-- A ping below float8's least (1e-400) passes enqueue as 0 ms, and a tick
-- reads it so too: the queue matches rather than fail at every tick.
SELECT matchmaker.create_queue('o2', algorithm => 'optimize', max_wait => '1 hour');
SELECT matchmaker.enqueue('o2', 'tiny', 0.5, '{"ping": {"eu": 1e-400}}') > 0 AS tiny,
       matchmaker.enqueue('o2', 'near', 0.5, '{"ping": {"eu": 20}}') > 0 AS near;
SELECT matchmaker.tick('o2', now() + interval '16 minutes');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'o2' ORDER BY player;

-- alter_queue to optimize refuses while a waiting ticket has a party or
-- ping optimize cannot use (enqueue checked them only for greedy).
SELECT matchmaker.create_queue('g', algorithm => 'greedy', max_wait => '1 hour');
SELECT matchmaker.enqueue('g', 'fast', 0.5, '{"ping": "fast"}') AS fast \gset
SELECT matchmaker.enqueue('g', 'far', 0.5, '{"ping": {"eu": 5e9}}') AS far \gset
SELECT matchmaker.enqueue('g', 'clan', 0.5, '{"party": ""}') AS clan \gset
\set VERBOSITY default
SELECT matchmaker.alter_queue('g', algorithm => 'optimize');
SELECT matchmaker.cancel(:fast);
SELECT matchmaker.alter_queue('g', algorithm => 'optimize');
SELECT matchmaker.cancel(:far), matchmaker.cancel(:clan);
\set VERBOSITY terse
SELECT matchmaker.alter_queue('g', algorithm => 'optimize');
SELECT algorithm FROM matchmaker.queues WHERE name = 'g';
-- Back to greedy and to optimize again: usable attributes pass.
SELECT matchmaker.alter_queue('g', algorithm => 'greedy');
SELECT matchmaker.enqueue('g', 'ok', 0.5, '{"ping": {"eu": 30}, "party": "p"}') > 0 AS enqueued;
SELECT matchmaker.alter_queue('g', algorithm => 'optimize');
-- enqueue, alter_queue and drop_queue wait for locks and then check what
-- committed meanwhile: a transaction snapshot would hide it, so they refuse
-- REPEATABLE READ and SERIALIZABLE (as tick does), and change nothing.
\set VERBOSITY default
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT matchmaker.enqueue('g', 'rr', 0.5);
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT matchmaker.alter_queue('g', max_wait => '2 hours');
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT matchmaker.drop_queue('g', force => true);
ROLLBACK;
\set VERBOSITY terse
SELECT name, max_wait FROM matchmaker.queues WHERE name = 'g';
SELECT count(*) AS rr_tickets FROM matchmaker.tickets WHERE player = 'rr';

-- enqueued_at is checked too: infinite, more than 365 days (the largest
-- max_wait) after the current time or more than 36525 days before it, a
-- waiting ticket is ended as invalid (it waited forever, or was matched with
-- an arrival that overflowed); check() reports it meanwhile.  A ticket a
-- few seconds ahead (a clock ahead) waits for its time, as before.
SELECT matchmaker.create_queue('e', algorithm => 'greedy', max_wait => '1 hour');
SELECT matchmaker.enqueue('e', p, 0.5) > 0 AS enqueued
FROM (VALUES ('a'), ('b'), ('c'), ('d'), ('e'), ('f'), ('g'), ('h')) AS v(p);
UPDATE matchmaker.tickets SET enqueued_at = '-infinity' WHERE queue = 'e' AND player = 'b';
UPDATE matchmaker.tickets SET enqueued_at = 'infinity' WHERE queue = 'e' AND player = 'c';
UPDATE matchmaker.tickets SET enqueued_at = '294276-12-31 23:59:59+00' WHERE queue = 'e' AND player = 'd';
UPDATE matchmaker.tickets SET enqueued_at = '4713-01-01 00:00:00+00 BC' WHERE queue = 'e' AND player = 'e';
UPDATE matchmaker.tickets SET enqueued_at = now() + interval '5 seconds' WHERE queue = 'e' AND player = 'f';
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '30 seconds' WHERE queue = 'e' AND player = 'g';
SELECT problem, t.player FROM matchmaker.check() c JOIN matchmaker.tickets t ON t.id = c.id ORDER BY t.player;
SELECT matchmaker.tick('e');
SELECT player, state, end_reason, match_id IS NOT NULL AS matched FROM matchmaker.tickets
WHERE queue = 'e' ORDER BY player;
-- The bounds count from the current time, not from a tick's chosen now: a
-- tick far in the past ends no ticket (they were enqueued after it).
SELECT matchmaker.tick('e', '1000-01-01 00:00:00+00');
SELECT player FROM matchmaker.tickets WHERE queue = 'e' AND state = 'waiting' ORDER BY player;
-- f, 5 seconds ahead, is matched once its time has come (with h).
SELECT matchmaker.tick('e', now() + interval '10 seconds');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'e' AND state IN ('waiting', 'matched') ORDER BY player;
SELECT count(*) AS problems FROM matchmaker.check();

-- alter_queue to optimize refuses while a waiting party (one role's tickets
-- naming one party) has more players than a team: enqueue counted parties
-- only for optimize, and the tick could never place it.
SELECT matchmaker.create_queue('pg', team_size => 2, algorithm => 'greedy', max_wait => '1 hour');
SELECT count(matchmaker.enqueue('pg', p, 0.5, jsonb_build_object('party', party))) AS enqueued
FROM (VALUES ('m1', 'trio'), ('m2', 'trio'), ('m3', 'trio'), ('d1', 'duo'), ('d2', 'duo')) AS v(p, party);
\set VERBOSITY default
SELECT matchmaker.alter_queue('pg', algorithm => 'optimize');
\set VERBOSITY terse
SELECT algorithm FROM matchmaker.queues WHERE name = 'pg';
-- a team's worth passes, and the two parties are matched against each other
SELECT matchmaker.cancel(id) FROM matchmaker.tickets WHERE queue = 'pg' AND player = 'm3';
SELECT matchmaker.alter_queue('pg', algorithm => 'optimize');
SELECT algorithm FROM matchmaker.queues WHERE name = 'pg';
SELECT matchmaker.tick('pg', now() + interval '16 minutes') AS matches;
SELECT player, state, team FROM matchmaker.tickets WHERE queue = 'pg' ORDER BY player;

-- A queue row a superuser broke by hand (a null setting, a column of
-- another type) is refused with a clear error by every read of it, the
-- tick's locked one included; nothing crashes.
SELECT matchmaker.create_queue('broken_row', algorithm => 'greedy');
ALTER TABLE matchmaker.queues ALTER COLUMN max_wait DROP NOT NULL;
UPDATE matchmaker.queues SET max_wait = NULL WHERE name = 'broken_row';
SELECT matchmaker.tick('broken_row');
SELECT matchmaker.enqueue('broken_row', 'p', 0.5);
UPDATE matchmaker.queues SET max_wait = '1 minute' WHERE name = 'broken_row';
ALTER TABLE matchmaker.queues ALTER COLUMN max_wait SET NOT NULL;
ALTER TABLE matchmaker.queues ALTER COLUMN rating_max TYPE numeric;
SELECT matchmaker.tick('broken_row');
SELECT matchmaker.match_cost('broken_row', '{0.1,0.2}', '{0,0}');
ALTER TABLE matchmaker.queues ALTER COLUMN rating_max TYPE float8;
SELECT matchmaker.tick('broken_row') AS matches;
SELECT matchmaker.drop_queue('broken_row');

-- A session keeps the settings of at most 256 queues it enqueued into: the
-- 257th drops the others first, so its cache is smaller after enqueues into
-- 300 queues than after 256, and every enqueue still finds its queue.
SET client_min_messages = warning;
DO $$
BEGIN
    FOR i IN 1 .. 300 LOOP
        PERFORM matchmaker.create_queue('many' || i, algorithm => 'greedy', max_wait => '1 hour');
    END LOOP;
END $$;
RESET client_min_messages;
SELECT count(matchmaker.enqueue('many' || i, 'p', 0.5)) AS enqueued FROM generate_series(1, 256) i;
SELECT sum(total_bytes) AS rows_256 FROM pg_backend_memory_contexts WHERE name = 'matchmaker queue rows' \gset
SELECT count(matchmaker.enqueue('many' || i, 'p', 0.5)) AS enqueued FROM generate_series(257, 300) i;
SELECT sum(total_bytes) < :rows_256 AS dropped FROM pg_backend_memory_contexts WHERE name = 'matchmaker queue rows';
SELECT count(matchmaker.enqueue('many' || i, 'q', 0.5)) AS enqueued FROM generate_series(1, 300) i;
SELECT count(*) AS waiting FROM matchmaker.tickets WHERE queue LIKE 'many%' AND state = 'waiting';
SELECT count(matchmaker.drop_queue('many' || i, force => true)) AS dropped FROM generate_series(1, 300) i;
