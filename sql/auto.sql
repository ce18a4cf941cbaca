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

-- The rate is measured over the last 50 arrivals, and is unknown below 10
-- (counted as one arrival per max_wait).  Ten players at 0, 0.1, ... 0.9 s
-- in equal pairs come first; they play at once at cost 0.
\set filler '(1, .05, 0), (2, .05, .1), (3, .15, .2), (4, .15, .3), (5, .25, .4), (6, .25, .5), (7, .35, .6), (8, .35, .7), (9, .45, .8), (10, .45, .9)'
SELECT count(*) AS fillers, count(DISTINCT match_no) AS matches, max(matched_at) AS last
FROM matchmaker.simulate('a', 'VALUES ' || :'filler');

-- Close ratings play at once: at 2 s, 12 arrivals over 2 s make 5.5 per
-- second, S = 55^(-1/2) = 0.1348; the values sum to 0.198, above the cost
-- 2 * 0.02.
SELECT id, match_no, matched_at
FROM matchmaker.simulate('a', 'VALUES ' || :'filler' || ', (11, .90, 1), (12, .92, 2)') WHERE id > 10 ORDER BY id;

-- A gap of 0.2 (cost 0.4) waits until the values cover it: at 2 + 10 x
-- with 1.465 + 1.3 x + x^2 = 0.4 / S, x = 0.737, so at 9.371 s.
SELECT id, match_no, round(matched_at::numeric, 3) AS matched_at
FROM matchmaker.simulate('a', 'VALUES ' || :'filler' || ', (11, .7, 1), (12, .9, 2)') WHERE id > 10 ORDER BY id;

-- A gap of 0.8 would wait past the first player's timeout: at 11 s the
-- timed-out player takes the closest waiting one.
SELECT id, match_no, matched_at
FROM matchmaker.simulate('a', 'VALUES ' || :'filler' || ', (11, .1, 1), (12, .9, 2)') WHERE id > 10 ORDER BY id;

-- The cheapest eligible pair first: 11 and 12 arrive together at 1 s (12
-- arrivals in 1 s: S = 0.095, values 0.13 below their cost 0.24); at 2 s
-- (S = 0.129) 13 could play with either (costs 0.13 and 0.11, values
-- 0.19): it plays with 12, and 11 gets a computer player at 11 s.
SELECT id, match_no, team, matched_at
FROM matchmaker.simulate('a', 'VALUES ' || :'filler' || ', (11, .64, 1), (12, .76, 1), (13, .705, 2)')
WHERE id > 10 ORDER BY id;

-- Alone at max_wait: a computer player, or expiry.
SELECT * FROM matchmaker.simulate('a', 'SELECT 7, 0.5, 100.0');
SELECT * FROM matchmaker.simulate('a', 'SELECT 7, 0.5, 100.0', '{"on_timeout": "expire"}');

-- 2v2: four close players play at the fourth arrival (cost 4 * 0.03, values
-- above 3 with S = 1), split into balanced teams.
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

-- Live: equal ratings cost nothing and play at the first tick.  A gap of 1
-- (cost 2) with fewer than 10 arrivals known (S = 1, values 1.4 at
-- arrival) waits until 1.4 + 1.2 x + x^2 = 2: x = 0.38, 23 s of the minute.
SELECT matchmaker.create_queue('live', max_wait => '1 minute');
SELECT matchmaker.enqueue('live', 'a', 0.5) > 0 AS a, matchmaker.enqueue('live', 'b', 0.5) > 0 AS b;
SELECT matchmaker.tick('live');
SELECT matchmaker.enqueue('live', 'c', 0) > 0 AS c, matchmaker.enqueue('live', 'd', 1) > 0 AS d;
SELECT matchmaker.tick('live');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'live' ORDER BY player;
SELECT matchmaker.tick('live', clock_timestamp() + interval '20 seconds');
SELECT matchmaker.tick('live', clock_timestamp() + interval '25 seconds');
SELECT player, state, match_id IS NOT NULL AS matched FROM matchmaker.tickets WHERE queue = 'live' ORDER BY player;
SELECT count(DISTINCT match_id) AS matches FROM matchmaker.tickets WHERE queue = 'live';

-- auto takes no parameters of its own.
SELECT matchmaker.create_queue('x', params => '{"batch": 8}');
SELECT matchmaker.check();
