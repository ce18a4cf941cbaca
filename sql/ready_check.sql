-- Ready checks (params.accept_timeout): a match forms as a proposal, its
-- players answer with accept(); all accept: the match is ready; a decline,
-- a cancel or the timeout dissolves it, and the players who accepted (or
-- had not yet answered before a decline) wait again with their original
-- enqueue time.  Times are chosen through tick(queue, now).
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
DROP ROLE IF EXISTS regress_rc_client, regress_rc_other;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default
CREATE ROLE regress_rc_client IN ROLE matchmaker_client;
CREATE ROLE regress_rc_other IN ROLE matchmaker_client;

-- The settings: accept_timeout in seconds (0 is off), channel a name NOTIFY takes.
SELECT matchmaker.create_queue('x', params => '{"accept_timeout": -1}');
SELECT matchmaker.create_queue('x', params => '{"accept_timeout": 3601}');
SELECT matchmaker.create_queue('x', params => '{"accept_timeout": "soon"}');
SELECT matchmaker.create_queue('x', params => '{"channel": ""}');
SELECT matchmaker.create_queue('x', params => jsonb_build_object('channel', repeat('c', 64)));
SELECT matchmaker.create_queue('x', params => '{"channel": 5}');
SELECT count(*) AS queues FROM matchmaker.queues;

SELECT matchmaker.create_queue('rc', algorithm => 'greedy', max_wait => '1 hour',
                               params => '{"accept_timeout": 10, "channel": "rc_events"}');
SET ROLE regress_rc_client;
SELECT matchmaker.enqueue('rc', 'ann', 0.50) AS ann \gset
SELECT matchmaker.enqueue('rc', 'bob', 0.52) AS bob \gset
SELECT matchmaker.enqueue('rc', 'cat', 0.90) AS cat \gset
RESET ROLE;
SELECT enqueued_at AS ann_enqueued FROM matchmaker.tickets WHERE id = :ann \gset

-- A tick proposes ann against bob (the closest pair); cat waits.
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
SELECT player, state, match_id IS NOT NULL AS in_match, team, accepted
FROM matchmaker.tickets WHERE queue = 'rc' ORDER BY player;
SELECT state, bots, accept_by - created_at AS timeout FROM matchmaker.proposals;
SELECT count(*) AS matches FROM matchmaker.matches;
SELECT match_id AS m1 FROM matchmaker.tickets WHERE id = :ann \gset

SET ROLE regress_rc_client;
-- ticket_status shows the pending state; enqueue again returns the same ticket.
SELECT state, match_id = :m1 AS same_match, expected_wait FROM matchmaker.ticket_status(:ann);
SELECT matchmaker.enqueue('rc', 'ann', 0.5) = :ann AS same_ticket;
-- ann accepts (twice: the second changes nothing), bob declines.
SELECT matchmaker.accept(:ann);
SELECT matchmaker.accept(:ann);
SELECT matchmaker.accept(:bob, false);
-- An answer for a ticket no longer proposed leaves it as it is.
SELECT matchmaker.accept(:bob, true);
SELECT matchmaker.accept(:cat);
RESET ROLE;
SELECT player, state, match_id IS NOT NULL AS in_match, accepted,
       enqueued_at = :'ann_enqueued' AS ann_time_kept
FROM matchmaker.tickets WHERE queue = 'rc' ORDER BY player;
SELECT state, reason, ended_at IS NOT NULL AS ended FROM matchmaker.proposals WHERE id = :m1;
SELECT * FROM matchmaker.check();

-- The next tick groups ann (at the front: her original enqueue time) with cat.
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
SELECT match_id AS m2 FROM matchmaker.tickets WHERE id = :ann \gset
SELECT player, state, match_id = :m2 AS in_m2 FROM matchmaker.tickets WHERE queue = 'rc' ORDER BY player;
SET ROLE regress_rc_client;
SELECT matchmaker.accept(:cat);
SELECT matchmaker.accept(:ann);
SELECT matchmaker.accept(:ann, false);
RESET ROLE;
SELECT player, state, match_id = :m2 AS in_m2, accepted FROM matchmaker.tickets WHERE queue = 'rc' ORDER BY player;
SELECT id = :m2 AS same_id, bots FROM matchmaker.matches;
SELECT state, reason FROM matchmaker.proposals WHERE id = :m2;
SELECT * FROM matchmaker.check();

-- The timeout: dan accepts, eve does not answer; a tick after accept_by
-- dissolves the proposal: eve is declined, dan waits again.
SET ROLE regress_rc_client;
SELECT matchmaker.enqueue('rc', 'dan', 0.3) AS dan \gset
SELECT matchmaker.enqueue('rc', 'eve', 0.3) AS eve \gset
RESET ROLE;
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
SELECT match_id AS m3 FROM matchmaker.tickets WHERE id = :dan \gset
SET ROLE regress_rc_client;
SELECT matchmaker.accept(:dan);
RESET ROLE;
SELECT matchmaker.tick('rc', clock_timestamp() + interval '5 seconds') AS made_before_timeout;
SELECT state FROM matchmaker.proposals WHERE id = :m3;
SELECT matchmaker.tick('rc', clock_timestamp() + interval '11 seconds') AS made_after_timeout;
SELECT player, state, match_id = :m3 AS in_m3, accepted FROM matchmaker.tickets
WHERE queue = 'rc' AND player IN ('dan', 'eve') ORDER BY player;
SELECT state, reason FROM matchmaker.proposals WHERE id = :m3;
SELECT * FROM matchmaker.check();

-- An answer that comes after accept_by, before any tick: the proposal
-- dissolves for its timeout there and then, and the late answer does not count.
SET ROLE regress_rc_client;
SELECT matchmaker.cancel(:dan);
RESET ROLE;
SELECT matchmaker.alter_queue('rc', params => '{"accept_timeout": 0.001}');
SET ROLE regress_rc_client;
SELECT matchmaker.enqueue('rc', 'fay', 0.31) AS fay \gset
SELECT matchmaker.enqueue('rc', 'fig', 0.32) AS fig \gset
RESET ROLE;
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
SELECT match_id AS m4 FROM matchmaker.tickets WHERE id = :fay \gset
SELECT pg_sleep(0.01);
SET ROLE regress_rc_client;
SELECT matchmaker.accept(:fay);
RESET ROLE;
SELECT player, state, match_id = :m4 AS in_m4 FROM matchmaker.tickets
WHERE id IN (:fay, :fig) ORDER BY player;
SELECT state, reason FROM matchmaker.proposals WHERE id = :m4;
SELECT matchmaker.alter_queue('rc', params => '{"accept_timeout": 10}');

-- Cancelling a proposed ticket dissolves its proposal; the other player waits again.
SET ROLE regress_rc_client;
SELECT matchmaker.enqueue('rc', 'gus', 0.3) AS gus \gset
SELECT matchmaker.enqueue('rc', 'gil', 0.3) AS gil \gset
RESET ROLE;
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
SELECT match_id AS m5 FROM matchmaker.tickets WHERE id = :gus \gset
SET ROLE regress_rc_client;
SELECT matchmaker.cancel(:gus);
SELECT matchmaker.cancel(:gus);
SELECT state FROM matchmaker.ticket_status(:gil);
RESET ROLE;
SELECT player, state, match_id = :m5 AS in_m5 FROM matchmaker.tickets WHERE id IN (:gus, :gil) ORDER BY player;
SELECT state, reason FROM matchmaker.proposals WHERE id = :m5;
SELECT * FROM matchmaker.check();

-- Only the ticket's role answers for it; bad calls change nothing.
SET ROLE regress_rc_client;
SELECT matchmaker.enqueue('rc', 'hal', 0.3) AS hal \gset
RESET ROLE;
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
SET ROLE regress_rc_other;
SELECT matchmaker.accept(:hal);
SELECT matchmaker.accept(:hal, NULL);
SELECT matchmaker.accept(NULL);
SELECT matchmaker.accept(-1);
RESET ROLE;
SET ROLE regress_rc_client;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT matchmaker.accept(:hal);
ROLLBACK;
RESET ROLE;
SELECT player, state, accepted FROM matchmaker.tickets WHERE id IN (:gil, :hal) ORDER BY player;

-- Turning ready checks off leaves the pending proposal to be answered;
-- new matches form at once.
SELECT matchmaker.alter_queue('rc', params => '{}');
SET ROLE regress_rc_client;
SELECT matchmaker.accept(:gil);
SELECT matchmaker.accept(:hal);
SELECT matchmaker.enqueue('rc', 'ivy', 0.7) AS ivy \gset
SELECT matchmaker.enqueue('rc', 'jon', 0.7) AS jon \gset
RESET ROLE;
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
SELECT player, state FROM matchmaker.tickets WHERE id IN (:gil, :hal, :ivy, :jon) ORDER BY player;
SELECT * FROM matchmaker.check();

-- drop_queue counts proposed tickets as waiting; force removes the proposals too.
SELECT matchmaker.alter_queue('rc', params => '{"accept_timeout": 10}');
SET ROLE regress_rc_client;
SELECT matchmaker.enqueue('rc', 'kim', 0.2) AS kim \gset
SELECT matchmaker.enqueue('rc', 'lea', 0.2) AS lea \gset
RESET ROLE;
SELECT matchmaker.tick('rc', clock_timestamp()) AS made;
-- A proposed ticket may wait again: settings it would not fit are refused.
SELECT matchmaker.alter_queue('rc', rating_min => 0.5);
SELECT matchmaker.alter_queue('rc', params => '{"accept_timeout": 10, "criteria": {"lat": {"min": 0, "max": 100}}}');
SELECT matchmaker.drop_queue('rc');
SELECT matchmaker.drop_queue('rc', force => true);
SELECT (SELECT count(*) FROM matchmaker.proposals) AS proposals,
       (SELECT count(*) FROM matchmaker.tickets) AS tickets;

DROP ROLE regress_rc_client, regress_rc_other;
