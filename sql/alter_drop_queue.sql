-- alter_queue and drop_queue.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
SELECT matchmaker.create_queue('duel', algorithm => 'periodic', max_wait => '1 minute', rating_min => 0, rating_max => 3000);

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

-- The game shape cannot change once a queue has tickets or matches.
SELECT matchmaker.create_queue('shape', algorithm => 'difference_wait', max_wait => '1 hour',
                               params => '{"wait_factor": 3600}');
SELECT matchmaker.alter_queue('shape', team_size => 2);   -- no tickets yet: allowed
SELECT matchmaker.alter_queue('shape', team_size => 1);
SELECT matchmaker.enqueue('shape', 'a', 0.1) > 0 AS a, matchmaker.enqueue('shape', 'b', 0.2) > 0 AS b;
SELECT matchmaker.tick('shape');
SELECT matchmaker.alter_queue('shape', team_size => 2);
SELECT team_size FROM matchmaker.queues WHERE name = 'shape';
-- Leaving difference_wait drops the provisional groups (their tickets wait on).
SELECT count(*) AS groups FROM matchmaker.provisional WHERE queue = 'shape';
SELECT matchmaker.alter_queue('shape', algorithm => 'greedy', params => '{}');
SELECT count(*) AS groups FROM matchmaker.provisional WHERE queue = 'shape';
SELECT matchmaker.alter_queue('shape', algorithm => 'difference_wait', params => '{"wait_factor": 3600}');
SELECT matchmaker.tick('shape');
SELECT count(*) AS groups FROM matchmaker.provisional WHERE queue = 'shape';
-- drop_queue takes the groups with it.
SELECT matchmaker.drop_queue('shape', force => true);
SELECT count(*) AS groups FROM matchmaker.provisional_groups;

-- Without waiting tickets no force is needed.
SELECT matchmaker.create_queue('empty');
SELECT matchmaker.enqueue('empty', 'bob', 0.5) AS t \gset
SELECT matchmaker.cancel(:t);
SELECT matchmaker.drop_queue('empty');
SELECT count(*) AS queues, (SELECT count(*) FROM matchmaker.tickets) AS tickets FROM matchmaker.queues;
