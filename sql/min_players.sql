-- Match size ranges (params.min_players): a player at max_wait plays a
-- smaller match of real players, teams differing by at most one, instead
-- of computer players or an expiry, when enough players are at hand.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default

-- 2 to k, a whole number; not for optimize.
SELECT matchmaker.create_queue('x', team_size => 2, params => '{"min_players": 1}');
SELECT matchmaker.create_queue('x', team_size => 2, params => '{"min_players": 5}');
SELECT matchmaker.create_queue('x', team_size => 2, params => '{"min_players": 2.5}');
SELECT matchmaker.create_queue('x', team_size => 2, algorithm => 'optimize', params => '{"min_players": 3}');
SELECT count(*) AS queues FROM matchmaker.queues;

-- 3v3 with at least 4 players: five players wait; at max_wait they play 3 against 2.
SELECT matchmaker.create_queue('squad', team_size => 3, algorithm => 'greedy', max_wait => '1 minute',
                               params => '{"min_players": 4}');
SELECT count(matchmaker.enqueue('squad', 'p' || i, i / 10.0)) FROM generate_series(1, 5) i;
SELECT matchmaker.tick('squad', clock_timestamp() + interval '30 seconds') AS before_max_wait;
SELECT matchmaker.tick('squad', clock_timestamp() + interval '61 seconds') AS at_max_wait;
SELECT m.bots, count(t.id) AS players, string_agg(t.team::text, ',' ORDER BY t.team) AS teams
FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
WHERE m.queue = 'squad' GROUP BY m.id, m.bots;
-- its cost is eq. 1 for a game of five: spread 0.4 with f = 5, waits of 61 s over 60 s each
SELECT round(criteria_cost::numeric, 6) AS criteria, round(wait_cost::numeric, 2) AS wait
FROM matchmaker.matches WHERE queue = 'squad';
SELECT * FROM matchmaker.check();

-- Three players only: fewer than 4, computer players complete the game as before.
SELECT count(matchmaker.enqueue('squad', 'q' || i, 0.5)) FROM generate_series(1, 3) i;
SELECT matchmaker.tick('squad', clock_timestamp() + interval '61 seconds') AS at_max_wait;
SELECT bots FROM matchmaker.matches WHERE queue = 'squad' ORDER BY id DESC LIMIT 1;

-- simulate models it: 25 players of a 5v5 queue, one every 10 s, max_wait 60 s.
SELECT matchmaker.create_queue('five', team_size => 5, algorithm => 'greedy', max_wait => '60 s');
SELECT games, bots, players FROM matchmaker.simulate_summary('five',
    'SELECT i, 0.5, i * 10.0 FROM generate_series(1, 25) i');
SELECT games, bots, players FROM matchmaker.simulate_summary('five',
    'SELECT i, 0.5, i * 10.0 FROM generate_series(1, 25) i', '{"min_players": 6}');
SELECT * FROM matchmaker.check();
