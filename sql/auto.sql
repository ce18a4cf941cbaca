-- The auto algorithm: the default of create_queue.  Each waiting ticket's
-- value S * (0.7 + 0.6 x + 0.5 x^2), x = wait / max_wait, S = (arrivals per
-- max_wait)^(-1/2) measured over the last 50 arrivals; a pair plays at the
-- first instant 2 |rating gap| is at most the sum of its two values.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

SELECT matchmaker.create_queue('a', max_wait => '10 s');
SELECT algorithm, params FROM matchmaker.queues WHERE name = 'a';

-- Close ratings play at once: one arrival per second, S = 10^(-1/2); at 1 s
-- the values sum to 0.46, above the cost 2 * 0.02.
SELECT * FROM matchmaker.simulate('a', $$VALUES (1, .50, 0), (2, .52, 1)$$) ORDER BY id;

-- A gap of 0.4 (cost 0.8) waits until the values cover it: at
-- 1 + 10 x with 1.465 + 1.3 x + x^2 = 0.8 / S, x = 0.5696, so at 6.696 s.
SELECT match_no, id, team, round(matched_at::numeric, 3) AS matched_at
FROM matchmaker.simulate('a', $$VALUES (1, .3, 0), (2, .7, 1)$$) ORDER BY id;

-- A gap of 0.8 would wait past the first player's timeout (14.5 s): at 10 s
-- the timed-out player takes the closest waiting one.
SELECT * FROM matchmaker.simulate('a', $$VALUES (1, .1, 0), (2, .9, 1)$$) ORDER BY id;

-- The cheapest eligible pair first: 1 and 2 arrive together (the rate of
-- two simultaneous arrivals is the largest, so they wait); at 1 s the rate
-- is 2 per second and 3 could play with either (costs 0.21 and 0.19 against
-- values of 0.33): it plays with 2, and 1 gets a computer player at 10 s.
SELECT * FROM matchmaker.simulate('a', $$VALUES (1, .40, 0), (2, .60, 0), (3, .505, 1)$$)
ORDER BY id;

-- Alone at max_wait: a computer player, or expiry.
SELECT * FROM matchmaker.simulate('a', 'SELECT 7, 0.5, 100.0');
SELECT * FROM matchmaker.simulate('a', 'SELECT 7, 0.5, 100.0', '{"on_timeout": "expire"}');

-- 2v2: four close players play at the fourth arrival, split into balanced teams.
SELECT matchmaker.create_queue('duo', team_size => 2, max_wait => '10 s');
SELECT * FROM matchmaker.simulate('duo', $$VALUES (1, .50, 0), (2, .51, 1), (3, .52, 2), (4, .53, 3)$$)
ORDER BY id;

-- Several criteria: the cost is the weighted spread over all of them.
SELECT matchmaker.create_queue('lat', max_wait => '10 s',
                               params => '{"criteria": {"latency": {"min": 0, "max": 200}}}');
SELECT matchmaker.enqueue('lat', 'p1', 0.5, '{"latency": 40}') > 0 AS p1,
       matchmaker.enqueue('lat', 'p2', 0.5, '{"latency": 40}') > 0 AS p2;
SELECT matchmaker.tick('lat');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'lat' ORDER BY player;

-- Live: equal ratings cost nothing and play at the first tick; a gap of 1
-- within one transaction (the measured rate is then the largest) waits for
-- the timeout, where the two play together.
SELECT matchmaker.create_queue('live', max_wait => '1 minute');
SELECT matchmaker.enqueue('live', 'a', 0.5) > 0 AS a, matchmaker.enqueue('live', 'b', 0.5) > 0 AS b;
SELECT matchmaker.tick('live');
SELECT matchmaker.enqueue('live', 'c', 0) > 0 AS c, matchmaker.enqueue('live', 'd', 1) > 0 AS d;
SELECT matchmaker.tick('live');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'live' ORDER BY player;
SELECT matchmaker.tick('live', clock_timestamp() + interval '1 minute');
SELECT player, state, match_id IS NOT NULL AS matched FROM matchmaker.tickets WHERE queue = 'live' ORDER BY player;
SELECT count(DISTINCT match_id) AS matches FROM matchmaker.tickets WHERE queue = 'live';

-- auto takes no parameters of its own.
SELECT matchmaker.create_queue('x', params => '{"batch": 8}');
SELECT matchmaker.check();
