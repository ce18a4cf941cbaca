-- criteria: greedy and multi_queue over the rating and further numeric
-- attributes (Schlup eq. 1 with D > 1), live, in simulate and in match_cost.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
DROP VIEW IF EXISTS groups;
RESET client_min_messages;

CREATE OR REPLACE FUNCTION arrive(q text, player text, rating float8, attrs jsonb, t float8) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    ticket bigint := matchmaker.enqueue(q, player, rating, attrs);
BEGIN
    UPDATE matchmaker.tickets SET enqueued_at = '2026-01-01 00:00:00+00'::timestamptz + t * interval '1 second'
    WHERE id = ticket;
    RETURN ticket;
END
$$;
CREATE OR REPLACE FUNCTION at(t float8) RETURNS timestamptz
LANGUAGE sql AS $$ SELECT '2026-01-01 00:00:00+00'::timestamptz + t * interval '1 second' $$;
CREATE VIEW groups AS
SELECT m.queue, string_agg(t.player, ' ' ORDER BY t.player) AS members, m.bots,
       round(m.criteria_cost::numeric, 6) AS criteria_cost, round(m.wait_cost::numeric, 6) AS wait_cost,
       m.created_at - at(0) AS at
FROM matchmaker.matches m LEFT JOIN matchmaker.tickets t ON t.match_id = m.id
GROUP BY m.id ORDER BY m.id;

-- multi_queue, 3 ranges of the rating (0..3000) and of latency (0..300 ms):
-- a queue per cell.  w has x's rating range but not its latency range, so
-- they do not match.  When x times out (10 s) it takes a companion from the
-- nearest ring of cells: z (one range away in both) before y (two rating
-- ranges away), although y is older.  Then y times out and takes w.
SELECT matchmaker.create_queue('mq', algorithm => 'multi_queue', max_wait => '10 s',
       rating_min => 0, rating_max => 3000,
       params => '{"ranges": 3, "criteria": {"latency": {"min": 0, "max": 300}}}');
SELECT arrive('mq', 'x', 300, '{"latency": 30}', 0), arrive('mq', 'y', 2700, '{"latency": 30}', 1),
       arrive('mq', 'z', 1500, '{"latency": 150}', 2), arrive('mq', 'w', 300, '{"latency": 150}', 3) \gset
SELECT matchmaker.tick('mq', at(3)), matchmaker.tick('mq', at(9.9));
SELECT matchmaker.tick('mq', at(10)), matchmaker.tick('mq', at(11));
-- criteria cost: f = k/2 = 1 per criterion; {x, z}: 0.4 + 0.4, {y, w}: 0.8 + 0.4
SELECT * FROM groups WHERE queue = 'mq';
-- The same stream in simulate gives the same matches at the same times.
SELECT match_no, id, matched_at FROM matchmaker.simulate('mq',
  $$VALUES (1, 300, 0, '{"latency": 30}'::jsonb), (2, 2700, 1, '{"latency": 30}'),
           (3, 1500, 2, '{"latency": 150}'), (4, 300, 3, '{"latency": 150}')$$) ORDER BY id;
-- On the rating alone x and w share a range and match at once.
SELECT match_no, id, matched_at FROM matchmaker.simulate('mq',
  $$VALUES (1, 300, 0, '{"latency": 30}'::jsonb), (2, 2700, 1, '{"latency": 30}'),
           (3, 1500, 2, '{"latency": 150}'), (4, 300, 3, '{"latency": 150}')$$,
  '{"criteria": {}}') ORDER BY id;
-- match_cost gives each match's cost from the players' attributes.
SELECT round(matchmaker.match_cost('mq', '{300, 1500}', '{10, 8}', 0,
             ARRAY['{"latency": 30}', '{"latency": 150}']::jsonb[])::numeric, 6) AS xz;

-- Weights: the rating counts 3, latency 1, so f = (1.5, 0.5).  A cell of
-- its own per criterion: latency in 2 ranges while the rating has 3.
SELECT matchmaker.create_queue('mw', algorithm => 'multi_queue', max_wait => '10 s',
       rating_min => 0, rating_max => 3000,
       params => '{"ranges": 3, "criteria": {"rating": {"weight": 3}, "latency": {"min": 0, "max": 300, "weight": 1, "ranges": 2}}}');
-- a and c share the cell (0, 0): with 3 latency ranges c (120 ms) would be in (0, 1)
SELECT arrive('mw', 'a', 300, '{"latency": 60}', 0), arrive('mw', 'b', 400, '{"latency": 180}', 1),
       arrive('mw', 'c', 600, '{"latency": 120}', 2) \gset
SELECT matchmaker.tick('mw', at(2));
-- criteria cost 1.5 * 0.1 + 0.5 * 0.2
SELECT * FROM groups WHERE queue = 'mw';

-- greedy ignores the criteria when it matches, but costs them.
SELECT matchmaker.create_queue('g', algorithm => 'greedy', max_wait => '10 s',
       params => '{"criteria": {"latency": {"min": 0, "max": 300}, "skill2": {"min": -1, "max": 1}}}');
SELECT arrive('g', 'p', 0.2, '{"latency": 0, "skill2": -1}', 0),
       arrive('g', 'q', 0.8, '{"latency": 150, "skill2": 1, "other": "kept"}', 1) \gset
SELECT matchmaker.tick('g', at(1));
-- f = 2/3 per criterion: 2/3 * (0.6 + 0.5 + 1)
SELECT * FROM groups WHERE queue = 'g';
-- a computer player makes every spread 1
SELECT arrive('g', 'r', 0.5, '{"latency": 10, "skill2": 0}', 2) \gset
SELECT matchmaker.tick('g', at(12));
SELECT * FROM groups WHERE queue = 'g';

-- enqueue checks the criteria: missing, not a number, outside the range.
SELECT matchmaker.enqueue('mq', 'v', 300, '{}');
SELECT matchmaker.enqueue('mq', 'v', 300, '{"latency": "low"}');
SELECT matchmaker.enqueue('mq', 'v', 300, '{"latency": 300.5}');
SELECT matchmaker.enqueue('mq', 'v', 300, '{"latency": -1}');
-- beyond float8: said so, not printed as Infinity
SELECT matchmaker.enqueue('mq', 'v', 300, '{"latency": 1e400}');
SELECT matchmaker.enqueue('mq', 'v', 300, '{"latency": -1e400}');
SELECT count(*) AS tickets_of_v FROM matchmaker.tickets WHERE player = 'v';
SELECT matchmaker.enqueue('mq', 'v', 300, '{"latency": 300}') > 0 AS enqueued;

-- alter_queue refuses criteria that a waiting ticket does not satisfy,
-- and changes nothing.
SELECT matchmaker.alter_queue('mq', params => '{"criteria": {"ping": {"min": 0, "max": 300}}}');
SELECT matchmaker.alter_queue('mq', params => '{"criteria": {"latency": {"min": 0, "max": 200}}}');
SELECT params FROM matchmaker.queues WHERE name = 'mq';
-- a wider range is fine
SELECT matchmaker.alter_queue('mq', params => '{"ranges": 3, "criteria": {"latency": {"min": 0, "max": 1000}}}');

-- simulate needs the attributes column for a queue with criteria.
SELECT * FROM matchmaker.simulate('mq', $$VALUES (1, 300, 0.0)$$);
SELECT * FROM matchmaker.simulate('mq', $$VALUES (1, 300, 0.0, '{"latency": 30}'::jsonb), (2, 300, 1, '{}')$$);
SELECT * FROM matchmaker.simulate('mq', $$VALUES (1, 300, 0.0, NULL::jsonb)$$);
SELECT * FROM matchmaker.simulate('mq', $$VALUES (1, 300, 0.0, '{"latency": 30}'::jsonb, 5)$$);
SELECT * FROM matchmaker.simulate('mq', $$VALUES (1, 300, 0.0, 30)$$);
-- a queue without criteria accepts and ignores the column
SELECT matchmaker.create_queue('plain', algorithm => 'greedy');
SELECT count(*) FROM matchmaker.simulate('plain', $$VALUES (1, 0.5, 0.0, '{}'::jsonb), (2, 0.5, 1, '{}')$$);
-- optimize reads its parties and pings from the column, checked as enqueue checks them
SELECT matchmaker.create_queue('opt', algorithm => 'optimize');
SELECT count(*) FROM matchmaker.simulate('opt', $$VALUES (1, 0.5, 0.0, '{"party": "p", "ping": {"eu": 20}}'::jsonb), (2, 0.5, 1, '{}')$$);
SELECT * FROM matchmaker.simulate('opt', $$VALUES (1, 0.5, 0.0, '{"party": "p"}'::jsonb), (7, 0.5, 1, '{"ping": {"eu": -5}}')$$);
SELECT * FROM matchmaker.simulate('opt', $$VALUES (1, 0.5, 0.0, '{"party": 12}'::jsonb)$$);
-- match_cost needs the attributes, one object per real player
SELECT matchmaker.match_cost('mq', '{300, 1500}', '{10, 8}');
SELECT matchmaker.match_cost('mq', '{300, 1500}', '{10, 8}', 0, ARRAY['{"latency": 30}']::jsonb[]);
SELECT matchmaker.match_cost('mq', '{300, 1500}', '{10, 8}', 0, ARRAY['{"latency": 30}', NULL]::jsonb[]);
SELECT matchmaker.match_cost('mq', '{300, 1500}', '{10, 8}', 0, ARRAY['{"latency": 30}', '[1]']::jsonb[]);
SELECT matchmaker.match_cost('mq', '{300, 1500}', '{10, 8}', 0, ARRAY['{"latency": 30}', '{"latency": 5000}']::jsonb[]);
-- OPT is for the rating alone
SELECT matchmaker.optimal_cost('mq', $$VALUES (1, 300, 0.0)$$);

-- Bad criteria params.
SELECT matchmaker.create_queue('bad', algorithm => 'periodic', params => '{"criteria": {"a": {"min": 0, "max": 1}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": [1]}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"a": 5}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"a": {"min": 0}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"a": {"min": 1, "max": 1}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"a": {"min": 0, "max": "9"}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"a": {"min": 0, "max": 1, "ranges": 2}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"a": {"min": 0, "max": 1, "step": 2}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"a": {"min": 0, "max": 1, "weight": -1}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"rating": {"min": 0}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"rating": {"weight": 0}, "a": {"min": 0, "max": 1, "weight": 0}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => '{"criteria": {"": {"min": 0, "max": 1}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'multi_queue', params => '{"criteria": {"a": {"min": 0, "max": 1, "ranges": 0}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'greedy', params => jsonb_build_object('criteria',
       (SELECT jsonb_object_agg('c' || i, '{"min": 0, "max": 1}'::jsonb) FROM generate_series(1, 8) i)));
SELECT matchmaker.create_queue('bad', algorithm => 'multi_queue', params => '{"ranges": 10000, "criteria": {"a": {"min": 0, "max": 1}, "b": {"min": 0, "max": 1}, "c": {"min": 0, "max": 1, "ranges": 100}}}');
SELECT count(*) AS bad_queues FROM matchmaker.queues WHERE name = 'bad';
-- seven further criteria are allowed
SELECT matchmaker.create_queue('seven', algorithm => 'greedy', params => jsonb_build_object('criteria',
       (SELECT jsonb_object_agg('c' || i, '{"min": 0, "max": 1}'::jsonb) FROM generate_series(1, 7) i)));

DROP VIEW groups;
DROP FUNCTION arrive(text, text, float8, jsonb, float8);
