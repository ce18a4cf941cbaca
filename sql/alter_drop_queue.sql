-- alter_queue and drop_queue.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
SELECT matchmaker.create_queue('duel', max_wait => '1 minute', rating_min => 0, rating_max => 3000);

-- NULL leaves a setting unchanged; a change is checked like create_queue.
SELECT matchmaker.alter_queue('duel', max_wait => '2 minutes', params => '{"batch": 4}');
SELECT matchmaker.alter_queue('duel', team_size => 2);
SELECT name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params
FROM matchmaker.queues;

-- Refusals change nothing.
SELECT matchmaker.alter_queue('nosuch', max_wait => '1 minute');
SELECT matchmaker.alter_queue(NULL);
SELECT matchmaker.alter_queue('duel', algorithm => 'greedy');   -- batch does not apply to greedy
SELECT matchmaker.alter_queue('duel', params => '{"batch": 6}'); -- k is 4 now
SELECT matchmaker.alter_queue('duel', tick => '-1 second');
SELECT matchmaker.alter_queue('duel', rating_min => 5000);
SELECT matchmaker.alter_queue('duel', algorithm => 'greedy', params => '{}');
SELECT name, team_size, algorithm, params FROM matchmaker.queues;

-- A waiting ticket outside a narrower range stops the change.
SELECT matchmaker.enqueue('duel', 'ada', 2500) > 0 AS enqueued;
SELECT matchmaker.alter_queue('duel', rating_max => 2000);
SELECT matchmaker.alter_queue('duel', rating_max => 2600);
SELECT rating_max FROM matchmaker.queues WHERE name = 'duel';

-- drop_queue refuses while tickets wait, unless forced.
SELECT matchmaker.drop_queue('duel');
SELECT matchmaker.drop_queue('nosuch');
SELECT matchmaker.drop_queue(NULL);
SELECT matchmaker.drop_queue('duel', force => NULL);
SELECT count(*) AS tickets FROM matchmaker.tickets;
SELECT matchmaker.drop_queue('duel', force => true);
SELECT count(*) AS queues FROM matchmaker.queues;
SELECT count(*) AS tickets FROM matchmaker.tickets;

-- Without waiting tickets no force is needed.
SELECT matchmaker.create_queue('empty');
SELECT matchmaker.enqueue('empty', 'bob', 0.5) AS t \gset
SELECT matchmaker.cancel(:t);
SELECT matchmaker.drop_queue('empty');
SELECT count(*) AS queues, (SELECT count(*) FROM matchmaker.tickets) AS tickets FROM matchmaker.queues;
