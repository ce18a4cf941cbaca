-- cancel dissolves the difference_wait provisional group of the ticket it
-- ends, so a group never holds a ticket that no longer waits.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

SELECT matchmaker.create_queue('dw', algorithm => 'difference_wait', max_wait => '1 hour',
                               params => '{"wait_factor": 1000}');
SELECT matchmaker.enqueue('dw', 'a', 0.2) AS a, matchmaker.enqueue('dw', 'b', 0.3) AS b,
       matchmaker.enqueue('dw', 'c', 0.9) AS c \gset
SELECT matchmaker.tick('dw');
CREATE VIEW members AS
SELECT (SELECT string_agg(t.player, ' ' ORDER BY t.player) FROM matchmaker.tickets t
        WHERE t.id = ANY (p.tickets)) AS members
FROM matchmaker.provisional p ORDER BY 1;
SELECT * FROM members;

-- In the cancel's own transaction, before any tick: the group is gone.
BEGIN;
SELECT matchmaker.cancel(:a);
SELECT * FROM members;
SELECT problem, detail FROM matchmaker.check();
COMMIT;

-- The next tick groups the tickets that still wait.
SELECT matchmaker.tick('dw');
SELECT * FROM members;

-- A cancel that finds its ticket ended leaves the groups alone.
SELECT matchmaker.cancel(:a);
SELECT * FROM members;
SELECT problem, detail FROM matchmaker.check();
SELECT matchmaker.drop_queue('dw', force => true);
