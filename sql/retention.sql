-- Retention: purge() (what the workers do under matchmaker.retention)
-- removes a queue's ended rows from before a time, in batches, each kind
-- with what goes with it, so check() holds after every call.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default

SELECT matchmaker.create_queue('plain', algorithm => 'greedy', max_wait => '1 hour',
                               params => '{"on_timeout": "expire"}');
SELECT matchmaker.create_queue('ready', algorithm => 'greedy', max_wait => '1 hour',
                               params => '{"accept_timeout": 60}');
CREATE FUNCTION enq(q text, p text, r float8, ago interval) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    t bigint := matchmaker.enqueue(q, p, r);
BEGIN
    UPDATE matchmaker.tickets SET enqueued_at = now() - ago WHERE id = t;
    RETURN t;
END
$$;

-- Ten days ago: an expiry (e, alone), two matches (a-b, l-m), a cancel (c).
SELECT enq('plain', 'e', 0.9, '10 days 2 hours') > 0 AS e;
SELECT matchmaker.tick('plain', now() - interval '10 days 1 minute') AS made;
SELECT enq('plain', 'a', 0.1, '10 days 1 second') + enq('plain', 'b', 0.1, '10 days 1 second') > 0 AS ab;
SELECT matchmaker.tick('plain', now() - interval '10 days') AS made;
SELECT enq('plain', 'l', 0.5, '10 days 1 second') + enq('plain', 'm', 0.5, '10 days 1 second') > 0 AS lm;
SELECT matchmaker.tick('plain', now() - interval '9 days 23 hours') AS made;
SELECT matchmaker.cancel(enq('plain', 'c', 0.3, '10 days 5 seconds'));
UPDATE matchmaker.tickets SET ended_at = now() - interval '9 days' WHERE player = 'c';
-- l-m's game still asks for a player: while the request is open, that match is kept.
SELECT matchmaker.backfill(match_id, 1, expires => '1 day') > 0 AS open_request
FROM matchmaker.tickets WHERE player = 'l';
BEGIN;
SELECT matchmaker.purge('plain', now() - interval '7 days') AS removed;
SELECT string_agg(player, ' ' ORDER BY player) AS kept FROM matchmaker.tickets WHERE queue = 'plain';
ROLLBACK;
-- In queue ready: j-k accepted (a ready match), h-i dissolved by h's
-- decline; then aged ten days by hand (a proposal's answers are due within
-- a minute of the tick).
SELECT enq('ready', 'j', 0.2, '1 second') + enq('ready', 'k', 0.2, '1 second') > 0 AS jk;
SELECT matchmaker.tick('ready', now()) AS made;
SELECT matchmaker.accept(id) FROM matchmaker.tickets WHERE player IN ('j', 'k') ORDER BY player;
SELECT enq('ready', 'h', 0.7, '1 second') + enq('ready', 'i', 0.7, '1 second') > 0 AS hi;
SELECT matchmaker.tick('ready', now()) AS made;
SELECT matchmaker.accept(id, false) FROM matchmaker.tickets WHERE player = 'h';
UPDATE matchmaker.matches SET created_at = now() - interval '10 days' WHERE queue = 'ready';
UPDATE matchmaker.proposals SET created_at = now() - interval '10 days', ended_at = now() - interval '10 days';
UPDATE matchmaker.tickets SET ended_at = now() - interval '10 days' WHERE player = 'h';
UPDATE matchmaker.tickets SET matched_at = now() - interval '10 days' WHERE player IN ('j', 'k');
-- Now: f fills l-m's request (the tick fills requests before it forms
-- matches), g and w wait in plain; i waits again in ready.
SELECT enq('plain', 'f', 0.2, '1 second') + enq('plain', 'g', 0.2, '1 second') > 0 AS fg;
SELECT matchmaker.tick('plain', now()) AS made;
SELECT enq('plain', 'w', 0.99, '1 second') > 0 AS w;
SELECT queue, player, state FROM matchmaker.tickets ORDER BY queue, player;
SELECT * FROM matchmaker.check();

-- One row of each kind at a time: the oldest match with its two tickets
-- (a-b, not l-m), the oldest unmatched ended ticket (e, not c).
SELECT matchmaker.purge('plain', now() - interval '7 days', 1) AS removed;
SELECT string_agg(player, ' ' ORDER BY player) AS plain_left FROM matchmaker.tickets WHERE queue = 'plain';
SELECT * FROM matchmaker.check();
-- Then the rest of plain: c; l-m is kept, f having joined it now (its
-- game still runs); g and w wait.
SELECT matchmaker.purge('plain', now() - interval '7 days') AS removed;
SELECT string_agg(player, ' ' ORDER BY player) AS plain_left FROM matchmaker.tickets WHERE queue = 'plain';
SELECT count(*) AS plain_matches FROM matchmaker.matches WHERE queue = 'plain';
-- In ready: the ready match j-k with its tickets and proposal, the dissolved
-- proposal with h (declined); i waits again and stays.
SELECT matchmaker.purge('ready', now() - interval '7 days') AS removed;
SELECT string_agg(player || ':' || state, ' ' ORDER BY player) AS ready_left FROM matchmaker.tickets WHERE queue = 'ready';
SELECT count(*) AS proposals_left FROM matchmaker.proposals;
SELECT * FROM matchmaker.check();
-- Nothing older is left: a second call removes nothing.
SELECT matchmaker.purge('plain', now() - interval '7 days') + matchmaker.purge('ready', now() - interval '7 days') AS removed;

-- Bad calls change nothing.
SELECT matchmaker.purge('plain', now(), 0);
SELECT matchmaker.purge('plain', now(), 1000001);
SELECT matchmaker.purge('nope', now());
SELECT matchmaker.purge(NULL, now());
SELECT count(*) AS tickets FROM matchmaker.tickets;
DROP FUNCTION enq(text, text, float8, interval);
