-- Self-tuning: params.tune makes a tick replay the queue's recent players
-- with candidate algorithms and parameters, adopt the cheapest when it
-- beats the queue's own by 2 %, and record the decision.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

-- A 1v1 queue that pairs players as they come (periodic batches of 2).
SELECT matchmaker.create_queue('tq', algorithm => 'periodic', max_wait => '5 s',
                               params => '{"batch": 2, "on_timeout": "bots", "tune": {"every": 60, "over": 3600},
                                           "accept_timeout": 30, "channel": "tq_events", "min_players": 2,
                                           "filters": {"mode": "equal"}}');

-- Its history: 200 players, one every 0.5 s over the last 200 seconds, with
-- spread-out ratings, matched in arrival pairs.
INSERT INTO matchmaker.matches (id, queue, created_at, cost, criteria_cost, wait_cost)
SELECT j, 'tq', now() - interval '200 s' + (2 * j + 1) * interval '0.5 s', 0, 0, 0
FROM generate_series(0, 99) j;
INSERT INTO matchmaker.tickets (queue, player, rating, state, enqueued_at, matched_at, ended_at,
                                match_id, team, enqueued_by, enqueued_by_name)
SELECT 'tq', 'p' || i, (i * 0.6180339887) - floor(i * 0.6180339887), 'matched',
       now() - interval '200 s' + i * interval '0.5 s',
       now() - interval '200 s' + (i | 1) * interval '0.5 s',
       now() - interval '200 s' + (i | 1) * interval '0.5 s',
       i / 2, 1 + i % 2, (SELECT oid FROM pg_roles WHERE rolname = current_user), current_user
FROM generate_series(0, 199) i;

-- Matches made from now on take ids after those written by hand here.
SELECT setval('matchmaker.matches_id_seq', 5000);

-- The first tick tunes: every candidate is replayed over the 200 players.
SELECT matchmaker.tick('tq');
SELECT players, current->>'algorithm' AS was, current->'params' AS was_params,
       jsonb_array_length(tried) AS tried,
       adopted->>'algorithm' AS adopted, note
FROM matchmaker.tunings WHERE queue = 'tq';
-- What each would have cost over those 200 players (eq. 1 per player).
SELECT c->>'algorithm' AS algorithm, c->'params' AS params,
       round((c->>'cost_per_player')::numeric, 4) AS per_player, c->>'bots' AS bots
FROM matchmaker.tunings, jsonb_array_elements(tried) c WHERE queue = 'tq'
ORDER BY (c->>'cost')::float8, c->>'algorithm', c->>'params';
SELECT round((current->>'cost_per_player')::numeric, 4) AS own_per_player FROM matchmaker.tunings WHERE queue = 'tq';
-- The adopted one is the cheapest tried, and cheaper than the queue's own by 2 % or more.
SELECT (adopted->>'cost')::float8 = (SELECT min((c->>'cost')::float8) FROM jsonb_array_elements(tried) c) AS cheapest,
       (adopted->>'cost')::float8 < 0.98 * (current->>'cost')::float8 AS cheaper
FROM matchmaker.tunings WHERE queue = 'tq';
-- The queue now runs it; the keys every algorithm shares are kept.
SELECT q.algorithm = t.adopted->>'algorithm' AS runs_it,
       q.params - '{tune,on_timeout,accept_timeout,channel,min_players,filters}'::text[] = t.adopted->'params' AS its_params,
       q.params->'tune' AS tune, q.params->>'on_timeout' AS on_timeout,
       q.params->'accept_timeout' AS accept_timeout, q.params->>'channel' AS channel,
       q.params->'min_players' AS min_players, q.params->'filters' AS filters
FROM matchmaker.queues q JOIN matchmaker.tunings t ON t.queue = q.name WHERE q.name = 'tq';

-- Not again before "every" has passed; then again, with nothing better to adopt.
SELECT matchmaker.tick('tq');
SELECT count(*) FROM matchmaker.tunings WHERE queue = 'tq';
SELECT matchmaker.tick('tq', clock_timestamp() + interval '61 s');
SELECT count(*) AS tunings, count(adopted) AS adopted,
       (array_agg(note ORDER BY tuned_at))[2] AS second_note
FROM matchmaker.tunings WHERE queue = 'tq';

-- A queue with too little history tunes, records, and adopts nothing.
SELECT matchmaker.create_queue('quiet', params => '{"tune": {"every": 60, "algorithms": ["periodic"]}}');
SELECT matchmaker.tick('quiet');
SELECT players, current->>'algorithm' AS own, jsonb_array_length(tried) AS tried, adopted, note
FROM matchmaker.tunings WHERE queue = 'quiet';

-- A history the queue's settings can no longer read (criteria narrowed after
-- those matches) fails the tuning, not the tick: the tick matches, the
-- failure is logged and recorded, and the next tick does not retry at once.
SELECT matchmaker.create_queue('lat', algorithm => 'greedy', max_wait => '5 s',
                               params => '{"criteria": {"lat": {"min": 0, "max": 300}}}');
INSERT INTO matchmaker.matches (id, queue, created_at, cost, criteria_cost, wait_cost)
SELECT 1000 + j, 'lat', now() - interval '100 s' + j * interval '1 s', 0, 0, 0
FROM generate_series(0, 59) j;
INSERT INTO matchmaker.tickets (queue, player, rating, attributes, state, enqueued_at, matched_at, ended_at,
                                match_id, team, enqueued_by, enqueued_by_name)
SELECT 'lat', 'h' || i, 0.5, '{"lat": 250}', 'matched',
       now() - interval '100 s' + (i / 2) * interval '1 s', now() - interval '100 s' + (i / 2) * interval '1 s',
       now() - interval '100 s' + (i / 2) * interval '1 s',
       1000 + i / 2, 1 + i % 2, (SELECT oid FROM pg_roles WHERE rolname = current_user), current_user
FROM generate_series(0, 119) i;
SELECT matchmaker.alter_queue('lat', params => '{"criteria": {"lat": {"min": 0, "max": 100}}, "tune": {}}');
SELECT matchmaker.enqueue('lat', 'a', 0.5, '{"lat": 50}') > 0 AS a, matchmaker.enqueue('lat', 'b', 0.5, '{"lat": 60}') > 0 AS b;
SELECT matchmaker.tick('lat');
SELECT player, state FROM matchmaker.tickets WHERE queue = 'lat' AND state <> 'matched' OR player IN ('a', 'b') ORDER BY player;
SELECT players, adopted, left(note, 60) AS note FROM matchmaker.tunings WHERE queue = 'lat';
SELECT matchmaker.tick('lat');
SELECT count(*) FROM matchmaker.tunings WHERE queue = 'lat';

-- drop_queue removes the queue's tunings.
SELECT matchmaker.drop_queue('quiet');
SELECT count(*) FROM matchmaker.tunings WHERE queue = 'quiet';

-- Refusals.
SELECT matchmaker.create_queue('x', params => '{"tune": true}');
SELECT matchmaker.create_queue('x', params => '{"tune": {"every": 0}}');
SELECT matchmaker.create_queue('x', params => '{"tune": {"over": "1 hour"}}');
SELECT matchmaker.create_queue('x', params => '{"tune": {"over": 1e-400}}');
SELECT matchmaker.create_queue('x', params => '{"tune": {"algorithms": []}}');
SELECT matchmaker.create_queue('x', params => '{"tune": {"algorithms": ["optimize"]}}');
SELECT matchmaker.create_queue('x', params => '{"tune": {"when": 1}}');
SELECT matchmaker.create_queue('x', algorithm => 'optimize', params => '{"tune": {}}');
SELECT matchmaker.check();
