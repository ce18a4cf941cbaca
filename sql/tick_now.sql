-- A tick at time now sees the tickets enqueued up to now: one enqueued
-- later (committed before the tick read the queue) waits for the next
-- tick, so no match is made before one of its players arrived.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

SELECT matchmaker.create_queue('n', algorithm => 'greedy', max_wait => '1 hour');
SELECT clock_timestamp() AS before \gset
SELECT matchmaker.enqueue('n', 'a', 0.5) > 0 AS a, matchmaker.enqueue('n', 'b', 0.5) > 0 AS b;
SELECT matchmaker.tick('n', :'before');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'n' ORDER BY player;
SELECT matchmaker.tick('n');
SELECT player, state, matched_at >= enqueued_at AS after_arrival
FROM matchmaker.tickets WHERE queue = 'n' ORDER BY player;
SELECT matchmaker.drop_queue('n', force => true);

-- A tick in a transaction that may not write is refused as its lock of the
-- queue's row would be by a query, before it locks or writes anything.
SELECT matchmaker.create_queue('ro', algorithm => 'greedy', max_wait => '1 hour');
BEGIN READ ONLY;
SELECT matchmaker.tick('ro');
ROLLBACK;
SELECT xmax = '0' AS row_not_locked FROM matchmaker.queues WHERE name = 'ro';
SELECT matchmaker.drop_queue('ro');
