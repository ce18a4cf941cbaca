-- enqueue and cancel.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
SELECT matchmaker.create_queue('duel', rating_min => 0, rating_max => 3000);
SELECT matchmaker.create_queue('other');

-- A first enqueue makes a waiting ticket.
SELECT matchmaker.enqueue('duel', 'ada', 1500) AS ada \gset
SELECT queue, player, rating, attributes, state, enqueued_at <= clock_timestamp() AS enqueued_in_past,
       matched_at, ended_at, match_id, team
FROM matchmaker.tickets WHERE id = :ada;

-- A retry while it waits returns the same id and changes nothing.
SELECT matchmaker.enqueue('duel', 'ada', 1500) = :ada AS same_id;
SELECT matchmaker.enqueue('duel', 'ada', 2900, '{"region": "eu"}') = :ada AS same_id_other_rating;
SELECT count(*), min(rating), max(attributes::text) FROM matchmaker.tickets WHERE player = 'ada';

-- The same player in another queue, and other players, get their own tickets.
SELECT matchmaker.enqueue('other', 'ada', 0.5) <> :ada AS own_ticket;
SELECT matchmaker.enqueue('duel', 'bob', 0, '{"region": "us"}') AS bob \gset
SELECT matchmaker.enqueue('duel', 'cy', 3000) AS cy \gset
SELECT player, rating, attributes FROM matchmaker.tickets WHERE queue = 'duel' ORDER BY id;

-- cancel ends a waiting ticket once; afterwards it returns false.
SELECT matchmaker.cancel(:bob);
SELECT matchmaker.cancel(:bob);
SELECT state, ended_at IS NOT NULL AS has_ended_at FROM matchmaker.tickets WHERE id = :bob;

-- After a cancel, enqueue makes a new ticket.
SELECT matchmaker.enqueue('duel', 'bob', 10) <> :bob AS new_ticket;
SELECT player, state FROM matchmaker.tickets WHERE player = 'bob' ORDER BY id;

-- Refusals change nothing.
SELECT count(*) AS before FROM matchmaker.tickets \gset
SELECT matchmaker.enqueue('nosuch', 'dan', 0.5);
SELECT matchmaker.enqueue(NULL, 'dan', 0.5);
SELECT matchmaker.enqueue('duel', NULL, 0.5);
SELECT matchmaker.enqueue('duel', '', 0.5);
SELECT matchmaker.enqueue('duel', repeat('p', 257), 0.5);
SELECT matchmaker.enqueue('duel', 'dan', NULL);
SELECT matchmaker.enqueue('duel', 'dan', 'NaN');
SELECT matchmaker.enqueue('duel', 'dan', 'Infinity');
SELECT matchmaker.enqueue('duel', 'dan', '-Infinity');
SELECT matchmaker.enqueue('duel', 'dan', -0.001);
SELECT matchmaker.enqueue('duel', 'dan', 3000.5);
SELECT matchmaker.enqueue('duel', 'dan', 100, NULL);
SELECT matchmaker.enqueue('duel', 'dan', 100, '[1]');
SELECT matchmaker.enqueue('duel', 'dan', 100, '42');
SELECT count(*) = :before AS unchanged FROM matchmaker.tickets;

SELECT matchmaker.cancel(NULL);
SELECT matchmaker.cancel(-1);
SELECT matchmaker.cancel(9223372036854775807);

-- A rolled-back enqueue leaves no ticket, and a later enqueue works.
BEGIN;
SELECT matchmaker.enqueue('duel', 'eve', 700) > 0 AS enqueued;
ROLLBACK;
SELECT count(*) AS eve_tickets FROM matchmaker.tickets WHERE player = 'eve';
SELECT matchmaker.enqueue('duel', 'eve', 700) > 0 AS enqueued;
SELECT player, state FROM matchmaker.tickets WHERE queue = 'duel' AND state = 'waiting' ORDER BY player;
