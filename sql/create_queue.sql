-- create_queue: valid queues, their stored settings, and every refusal.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default

SELECT matchmaker.create_queue('duel');
SELECT matchmaker.create_queue('squad', team_size => 4, teams => 2, algorithm => 'multi_queue',
                               max_wait => '90 seconds', rating_min => 0, rating_max => 3000,
                               tick => '200 ms', params => '{"ranges": 6, "on_timeout": "expire"}');
SELECT matchmaker.create_queue('ffa', team_size => 1, teams => 8, algorithm => 'greedy', params => '{}');
SELECT matchmaker.create_queue('pairs', algorithm => 'difference_wait', max_wait => '30 s',
                               params => '{"wait_factor": 12.5}');
SELECT matchmaker.create_queue('batched', algorithm => 'periodic', params => '{"batch": 8}');
SELECT matchmaker.create_queue('auto', algorithm => 'periodic', params => '{"batch": "auto"}');
SELECT matchmaker.create_queue('fives', team_size => 5, teams => 2, algorithm => 'greedy',
                               params => '{"team_policy": "patient"}');

SELECT name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params
FROM matchmaker.queues ORDER BY name;

-- Refusals: each changes nothing.
SELECT matchmaker.create_queue('duel');
SELECT matchmaker.create_queue('x', algorithm => 'fifo');
SELECT matchmaker.create_queue('x', team_size => 1, teams => 1);
SELECT matchmaker.create_queue('x', team_size => 0);
SELECT matchmaker.create_queue('x', teams => -2);
SELECT matchmaker.create_queue('x', team_size => 100, teams => 11);
SELECT matchmaker.create_queue('x', max_wait => '0 seconds');
SELECT matchmaker.create_queue('x', max_wait => '-5 minutes');
SELECT matchmaker.create_queue('x', tick => '0');
SELECT matchmaker.create_queue('x', tick => '0.0001 s');
SELECT matchmaker.create_queue('x', tick => '2 days');
SELECT matchmaker.create_queue('x', max_wait => '400 days');
SELECT matchmaker.create_queue('x', rating_min => 10, rating_max => 10);
SELECT matchmaker.create_queue('x', rating_min => 'NaN');
SELECT matchmaker.create_queue('x', rating_max => 'Infinity');
SELECT matchmaker.create_queue('');
SELECT matchmaker.create_queue(repeat('q', 64));
SELECT matchmaker.create_queue(NULL);
SELECT matchmaker.create_queue('x', algorithm => NULL);
SELECT matchmaker.create_queue('x', params => NULL);
SELECT matchmaker.create_queue('x', params => '{"colour": "red"}');
SELECT matchmaker.create_queue('x', params => '[1, 2]');
SELECT matchmaker.create_queue('x', params => '"batch"');
SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": 7}');
SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": 8.5}');
SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": "big"}');
SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": 0}');
SELECT matchmaker.create_queue('x', params => '{"ranges": 4}');
SELECT matchmaker.create_queue('x', algorithm => 'multi_queue', params => '{"ranges": 0}');
SELECT matchmaker.create_queue('x', algorithm => 'multi_queue', params => '{"ranges": true}');
SELECT matchmaker.create_queue('x', algorithm => 'difference_wait', params => '{"wait_factor": -1}');
SELECT matchmaker.create_queue('x', algorithm => 'difference_wait', params => '{"wait_factor": "10"}');
SELECT matchmaker.create_queue('x', params => '{"wait_factor": 10}');
SELECT matchmaker.create_queue('x', params => '{"on_timeout": "wait"}');
SELECT matchmaker.create_queue('x', algorithm => 'greedy', team_size => 2, params => '{"team_policy": "lazy"}');
SELECT matchmaker.create_queue('x', algorithm => 'greedy', params => '{"team_policy": "patient"}');
SELECT matchmaker.create_queue('x', team_size => 2, params => '{"team_policy": "patient"}');
SELECT matchmaker.create_queue('x', params => '{"on_timeout": null}');

SELECT count(*) AS queues FROM matchmaker.queues;
