-- Equal filters: params.filters names string attributes (a game mode, a
-- build); players meet only players with the same value of each, in every
-- algorithm, in simulate, in the offline optimum and in backfill.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default

-- Bad filters are refused, changing nothing.
SELECT matchmaker.create_queue('bad', params => '{"filters": ["mode"]}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"mode": "same"}}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"mode": {"kind": "equal", "after": 30}}}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"mode": {"optional_after": 30}}}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"mode": {"kind": "equal", "optional_after": 0}}}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"mode": {"kind": "equal", "optional_after": "30 s"}}}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"maps": "intersects"}}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"": "equal"}}');
SELECT matchmaker.create_queue('bad', params => jsonb_build_object('filters',
    (SELECT jsonb_object_agg('f' || i, 'equal') FROM generate_series(1, 9) i)));
SELECT count(*) AS queues FROM matchmaker.queues;

-- A 1v1 greedy queue filtered on mode and build.
SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour',
                               params => '{"filters": {"mode": "equal", "build": "equal"}}');
-- Tickets without a string value of each filter are refused.
SELECT matchmaker.enqueue('duel', 'x', 0.5);
SELECT matchmaker.enqueue('duel', 'x', 0.5, '{"mode": "ranked"}');
SELECT matchmaker.enqueue('duel', 'x', 0.5, '{"mode": "ranked", "build": 7}');
SELECT matchmaker.enqueue('duel', 'x', 0.5, jsonb_build_object('mode', repeat('m', 257), 'build', '1.2'));
SELECT count(*) AS tickets FROM matchmaker.tickets;
-- Four players: the nearest ratings are in different modes, so the two
-- ranked players play each other, and the two casual ones; b (build 1.3)
-- waits alone although c and d are closer in rating.
SELECT matchmaker.enqueue('duel', 'r1', 0.10, '{"mode": "ranked", "build": "1.2"}') AS r1 \gset
SELECT matchmaker.enqueue('duel', 'c1', 0.11, '{"mode": "casual", "build": "1.2"}') AS c1 \gset
SELECT matchmaker.enqueue('duel', 'r2', 0.90, '{"mode": "ranked", "build": "1.2"}') AS r2 \gset
SELECT matchmaker.enqueue('duel', 'c2', 0.89, '{"mode": "casual", "build": "1.2"}') AS c2 \gset
SELECT matchmaker.enqueue('duel', 'b', 0.50, '{"mode": "casual", "build": "1.3"}') AS b \gset
SELECT matchmaker.tick('duel', clock_timestamp()) AS made;
SELECT m.id = min(m.id) OVER () AS first_match, string_agg(t.player, ' ' ORDER BY t.player) AS players,
       count(DISTINCT t.attributes->>'mode') AS modes
FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
WHERE m.queue = 'duel' GROUP BY m.id ORDER BY players;
SELECT player, state FROM matchmaker.tickets WHERE queue = 'duel' AND state <> 'matched';
SELECT * FROM matchmaker.check();
-- Each match records the values its players share (its event carries them: see the events spec).
SELECT string_agg(t.player, ' ' ORDER BY t.player) AS players, m.filters
FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
WHERE m.queue = 'duel' GROUP BY m.id, m.filters ORDER BY players;
SELECT matchmaker.enqueue('duel', 'e1', 0.3, '{"build": "9", "mode": "a \"quoted\" mode"}') AS e1 \gset
SELECT matchmaker.enqueue('duel', 'e2', 0.3, '{"mode": "a \"quoted\" mode", "build": "9"}') AS e2 \gset
SELECT matchmaker.tick('duel', clock_timestamp()) AS made;
SELECT filters FROM matchmaker.matches WHERE id = (SELECT match_id FROM matchmaker.tickets WHERE id = :e1);
-- check() finds a matched ticket whose values differ from its match's.
UPDATE matchmaker.tickets SET attributes = '{"mode": "casual", "build": "9"}' WHERE id = :e2;
SELECT problem, id = :e2 AS is_e2, detail FROM matchmaker.check();
UPDATE matchmaker.tickets SET attributes = '{"mode": "a \"quoted\" mode", "build": "9"}' WHERE id = :e2;
SELECT * FROM matchmaker.check();

-- alter_queue refuses filters that a waiting ticket has no value of.
SELECT matchmaker.alter_queue('duel', params => '{"filters": {"mode": "equal", "region": "equal"}}');
SELECT params->'filters' AS filters FROM matchmaker.queues WHERE name = 'duel';

-- Backfill takes only players with the match's filter values: the ranked
-- match's request is filled neither by b nor by a newcomer of b's mode
-- and build (they play each other); a ranked one fills it.
SELECT matchmaker.backfill((SELECT match_id FROM matchmaker.tickets WHERE id = :r1), 1) AS req \gset
SELECT matchmaker.enqueue('duel', 'c3', 0.12, '{"mode": "casual", "build": "1.3"}') AS c3 \gset
SELECT matchmaker.tick('duel', clock_timestamp()) AS made;
SELECT state, filled FROM matchmaker.backfills WHERE id = :req;
SELECT player, state FROM matchmaker.tickets WHERE id IN (:b, :c3) ORDER BY player;
SELECT matchmaker.enqueue('duel', 'r3', 0.70, '{"mode": "ranked", "build": "1.2"}') AS r3 \gset
SELECT matchmaker.tick('duel', clock_timestamp()) AS made;
SELECT state, filled FROM matchmaker.backfills WHERE id = :req;
SELECT match_id = (SELECT match_id FROM matchmaker.tickets WHERE id = :r1) AS r3_joined_r1
FROM matchmaker.tickets WHERE id = :r3;
SELECT * FROM matchmaker.check();

-- simulate honours the filters (the stream's attributes are required),
-- and the offline optimum is the sum of each key's own.
SELECT * FROM matchmaker.simulate('duel', $$VALUES (1, 0.5, 0.0)$$);
SELECT * FROM matchmaker.simulate('duel', $$VALUES (1, 0.5, 0.0, '{"mode": "ranked"}'::jsonb)$$);
SELECT id, match_no, matched_at FROM matchmaker.simulate('duel', $$
    VALUES (1, 0.10, 0.0, '{"mode": "a", "build": "1"}'::jsonb), (2, 0.11, 1.0, '{"mode": "b", "build": "1"}'),
           (3, 0.90, 2.0, '{"mode": "a", "build": "1"}'), (4, 0.89, 3.0, '{"mode": "b", "build": "1"}')$$)
ORDER BY id;
SELECT matchmaker.create_queue('pair5', algorithm => 'greedy', max_wait => '5 s',
                               params => '{"filters": {"mode": "equal"}}');
-- (1, 3) and (2, 4) pair within their modes: 2 * 0.8 + 2/5 each; unfiltered, (1, 2) and (3, 4).
SELECT round(matchmaker.optimal_cost('pair5', $$
    VALUES (1, 0.10, 0.0, '{"mode": "a"}'::jsonb), (2, 0.11, 1.0, '{"mode": "b"}'),
           (3, 0.90, 2.0, '{"mode": "a"}'), (4, 0.89, 3.0, '{"mode": "b"}')$$)::numeric, 6) AS filtered,
       round(matchmaker.optimal_cost('pair5', $$
    VALUES (1, 0.10, 0.0, '{"mode": "a"}'::jsonb), (2, 0.11, 1.0, '{"mode": "a"}'),
           (3, 0.90, 2.0, '{"mode": "a"}'), (4, 0.89, 3.0, '{"mode": "a"}')$$)::numeric, 6) AS one_mode;

-- Live equals simulated with filters: a stream over three modes replayed
-- through live queues of several algorithms (tick at every arrival and
-- timer), compared ticket by ticket.
CREATE TABLE fstream AS
SELECT i AS id, round(random()::numeric, 4)::float8 AS rating,
       round((sum(-ln(1 - random()) / 6) OVER (ORDER BY i))::numeric, 3)::float8 AS arrival,
       jsonb_build_object('mode', (ARRAY['solo', 'ranked', 'casual'])[1 + floor(random() * 3)::int]) AS attrs
FROM (SELECT setseed(0.23)) s, generate_series(1, 240) i;
CREATE FUNCTION f_next_due(qname text, last float8) RETURNS float8 LANGUAGE sql AS $$
    SELECT least(
        -- the next instant a waiting ticket's filter relaxes (optional_after)
        (SELECT min(extract(epoch FROM t.enqueued_at - '2026-01-01 00:00:00+00') + (f.value->>'optional_after')::float8)
         FROM matchmaker.tickets t JOIN matchmaker.queues q ON q.name = t.queue,
              jsonb_each(q.params->'filters') f
         WHERE t.queue = qname AND t.state = 'waiting' AND jsonb_typeof(f.value) = 'object'
           AND extract(epoch FROM t.enqueued_at - '2026-01-01 00:00:00+00') + (f.value->>'optional_after')::float8 > last),
        (SELECT extract(epoch FROM min(finalize_at) - '2026-01-01 00:00:00+00') FROM matchmaker.provisional WHERE queue = qname),
        (SELECT extract(epoch FROM min(t.enqueued_at) - '2026-01-01 00:00:00+00') + extract(epoch FROM q.max_wait)
         FROM matchmaker.tickets t JOIN matchmaker.queues q ON q.name = t.queue
         WHERE t.queue = qname AND t.state = 'waiting'
           AND NOT EXISTS (SELECT 1 FROM matchmaker.provisional p WHERE p.queue = qname AND t.id = ANY (p.tickets))
         GROUP BY q.max_wait))
$$;
CREATE FUNCTION f_replay(qname text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    origin constant timestamptz := '2026-01-01 00:00:00+00';
    t float8;
    a record;
    ticket bigint;
    last float8 := -1;
BEGIN
    LOOP
        t := least((SELECT min(arrival) FROM fstream WHERE arrival > last), f_next_due(qname, last));
        EXIT WHEN t IS NULL;
        FOR a IN SELECT * FROM fstream WHERE arrival = t ORDER BY id LOOP
            ticket := matchmaker.enqueue(qname, 'p' || a.id, a.rating, a.attrs);
            UPDATE matchmaker.tickets SET enqueued_at = origin + a.arrival * interval '1 second' WHERE id = ticket;
        END LOOP;
        PERFORM matchmaker.tick(qname, origin + t * interval '1 second');
        last := t;
    END LOOP;
END
$$;
CREATE FUNCTION f_compare(q text) RETURNS TABLE (live bigint, simulated bigint, differ bigint, mixed bigint)
LANGUAGE sql AS $$
    WITH live AS (
        SELECT substr(t.player, 2)::bigint AS id,
               CASE WHEN t.match_id IS NULL THEN NULL ELSE dense_rank() OVER (ORDER BY t.match_id) END AS match_no,
               t.team, round(extract(epoch FROM coalesce(t.matched_at, t.ended_at) - '2026-01-01 00:00:00+00')::numeric, 4) AS at
        FROM matchmaker.tickets t WHERE t.queue = q),
    sim AS (SELECT id, match_no, team, round(matched_at::numeric, 4) AS at
            FROM matchmaker.simulate(q, 'SELECT id, rating, arrival, attrs FROM fstream'))
    SELECT (SELECT count(*) FROM live), (SELECT count(*) FROM sim),
           (SELECT count(*) FROM ((TABLE live EXCEPT TABLE sim) UNION ALL (TABLE sim EXCEPT TABLE live)) d),
           (SELECT count(*) FROM (SELECT match_id FROM matchmaker.tickets WHERE queue = q AND match_id IS NOT NULL
                                  GROUP BY match_id HAVING count(DISTINCT attributes->>'mode') > 1) m)
$$;
SELECT matchmaker.create_queue('f_greedy', algorithm => 'greedy', max_wait => '2 s', params => '{"filters": {"mode": "equal"}}');
SELECT matchmaker.create_queue('f_diff', algorithm => 'difference_wait', max_wait => '3 s',
                               params => '{"wait_factor": 1, "filters": {"mode": "equal"}}');
SELECT matchmaker.create_queue('f_multi', algorithm => 'multi_queue', max_wait => '2 s',
                               params => '{"ranges": 4, "on_timeout": "expire", "filters": {"mode": "equal"}}');
SELECT matchmaker.create_queue('f_squad', team_size => 2, algorithm => 'periodic', max_wait => '2 s',
                               params => '{"batch": 8, "filters": {"mode": "equal"}}');
SELECT f_replay(name) FROM matchmaker.queues WHERE name LIKE 'f\_%' ORDER BY name;
SELECT name, c.* FROM matchmaker.queues, f_compare(name) c WHERE name LIKE 'f\_%' ORDER BY name;
-- Without the filter the same stream mixes modes in most matches.
SELECT matchmaker.create_queue('nofilter', algorithm => 'greedy', max_wait => '2 s');
SELECT count(*) FILTER (WHERE modes > 1) > count(*) / 2 AS mostly_mixed
FROM (SELECT s.match_no, count(DISTINCT f.attrs->>'mode') AS modes
      FROM matchmaker.simulate('nofilter', 'SELECT id, rating, arrival, attrs FROM fstream') s
      JOIN fstream f USING (id) WHERE s.match_no IS NOT NULL GROUP BY s.match_no HAVING count(*) > 1) m;
-- The live cost is the simulated one, and the optimum (pairs) the sum over modes.
SELECT q.name, round(sum(m.cost)::numeric, 6) = round(s.cost::numeric, 6) AS same_total_cost
FROM matchmaker.queues q JOIN matchmaker.matches m ON m.queue = q.name,
     matchmaker.simulate_summary(q.name, 'SELECT id, rating, arrival, attrs FROM fstream') s
WHERE q.name LIKE 'f\_%' GROUP BY q.name, s.cost ORDER BY q.name;
SELECT a.matches, a.players, round(a.optimal_cost::numeric, 6) = round((
           SELECT sum(matchmaker.optimal_cost('f_greedy',
               format('SELECT id, rating, arrival, attrs FROM fstream WHERE attrs->>%L = %L', 'mode', m)))
           FROM unnest(ARRAY['solo', 'ranked', 'casual']) m)::numeric, 6) AS audit_optimum_sums_modes,
       a.ratio >= 1 AS at_least_optimal
FROM matchmaker.audit('f_greedy', '2026-01-01 00:00:00+00', '2026-01-02 00:00:00+00') a;
SELECT * FROM matchmaker.check();
-- auto measures each mode's own arrival rate: simulating a 2v2 queue with
-- the filter costs exactly what a queue per mode costs (with the queue's
-- whole rate for every mode it cost more).
SELECT matchmaker.create_queue('auto_modes_2v2', team_size => 2, max_wait => '3 s', params => '{"filters": {"mode": "equal"}}');
SELECT matchmaker.create_queue('auto_one_mode_2v2', team_size => 2, max_wait => '3 s');
SELECT round(s.cost::numeric, 9) = round((
           SELECT sum(x.cost) FROM unnest(ARRAY['solo', 'ranked', 'casual']) m,
               matchmaker.simulate_summary('auto_one_mode_2v2',
                   format('SELECT id, rating, arrival FROM fstream WHERE attrs->>%L = %L', 'mode', m)) x)::numeric, 9)
       AS same_as_a_queue_per_mode
FROM matchmaker.simulate_summary('auto_modes_2v2', 'SELECT id, rating, arrival, attrs FROM fstream') s;
-- In 1v1 auto also estimates where ratings lie, from the latest arrivals of
-- the whole queue, not of each mode: close to a queue per mode, not equal.
SELECT matchmaker.create_queue('auto_modes', max_wait => '3 s', params => '{"filters": {"mode": "equal"}}');
SELECT matchmaker.create_queue('auto_one_mode', max_wait => '3 s');
SELECT abs(s.cost / p.cost - 1) < 0.02 AS close_to_a_queue_per_mode, s.cost <> p.cost AS not_equal
FROM matchmaker.simulate_summary('auto_modes', 'SELECT id, rating, arrival, attrs FROM fstream') s,
     (SELECT sum(x.cost) AS cost FROM unnest(ARRAY['solo', 'ranked', 'casual']) m,
          matchmaker.simulate_summary('auto_one_mode',
              format('SELECT id, rating, arrival FROM fstream WHERE attrs->>%L = %L', 'mode', m)) x) p;
-- A tick measures the own rate of at most 256 combinations (those with the
-- most waiting tickets; the others use the queue's): 300 modes of two
-- equal players each are all matched, none across modes.
SELECT count(matchmaker.enqueue('auto_modes', 'm' || i || '_' || j, 0.5, jsonb_build_object('mode', 'm' || i)))
FROM generate_series(1, 300) i, generate_series(1, 2) j;
SELECT matchmaker.tick('auto_modes') AS made;
SELECT count(*) FILTER (WHERE state = 'matched') AS matched,
       (SELECT count(*) FROM (SELECT match_id FROM matchmaker.tickets WHERE queue = 'auto_modes'
                              GROUP BY match_id HAVING count(DISTINCT attributes->>'mode') > 1) m) AS mixed
FROM matchmaker.tickets WHERE queue = 'auto_modes';

-- Intersect filters: a player gives the maps it accepts (a string or a
-- list); players meet only players sharing one.  Each tick gives every
-- ticket the value of its list that the most waiting tickets accept (the
-- first in the filter's order among equals: shorter, then bytewise) and
-- matches each value's tickets apart; the match records the value.
SELECT matchmaker.create_queue('maps', algorithm => 'greedy', max_wait => '1 hour',
                               params => '{"filters": {"mode": "equal", "map": "intersect"}}');
-- Lists that are empty, hold a non-string, too many values or too long a
-- value, an object, or a list for an equal filter are refused.
SELECT matchmaker.enqueue('maps', 'x', 0.5, '{"mode": "r", "map": []}');
SELECT matchmaker.enqueue('maps', 'x', 0.5, '{"mode": "r", "map": ["dust", 1]}');
SELECT matchmaker.enqueue('maps', 'x', 0.5, '{"mode": "r", "map": {"dust": true}}');
SELECT matchmaker.enqueue('maps', 'x', 0.5, jsonb_build_object('mode', 'r',
           'map', (SELECT jsonb_agg('m' || i) FROM generate_series(1, 17) i)));
SELECT matchmaker.enqueue('maps', 'x', 0.5, jsonb_build_object('mode', 'r', 'map', jsonb_build_array('a', repeat('m', 257))));
SELECT matchmaker.enqueue('maps', 'x', 0.5, '{"mode": ["r"], "map": "dust"}');
SELECT matchmaker.create_queue('maps2', params => '{"filters": {"map": "intersect", "region": "intersect"}}');
SELECT matchmaker.enqueue('maps2', 'x', 0.5, jsonb_build_object(
           'map', (SELECT jsonb_agg('m' || i) FROM generate_series(1, 13) i),
           'region', '["eu", "us", "asia", "sa", "oc"]'::jsonb));
SELECT count(*) AS tickets FROM matchmaker.tickets WHERE queue IN ('maps', 'maps2');
-- 13 maps in 4 regions (52 combinations) and duplicates are accepted.
SELECT matchmaker.enqueue('maps2', 'x', 0.5, jsonb_build_object(
           'map', (SELECT jsonb_agg('m' || i) FROM generate_series(1, 13) i),
           'region', '["eu", "us", "asia", "sa", "eu"]'::jsonb)) > 0 AS accepted;
-- Combinations that take more than 4,096 bytes written out are refused
-- (16 maps of 250 bytes in 4 regions), as is an optional_after under 1 ms.
SELECT matchmaker.enqueue('maps2', 'y', 0.5, jsonb_build_object(
           'map', (SELECT jsonb_agg(repeat('m', 248) || i) FROM generate_series(10, 25) i),
           'region', '["eu", "us", "asia", "sa"]'::jsonb));
SELECT matchmaker.create_queue('bad', params => '{"filters": {"mode": {"kind": "equal", "optional_after": 0.0005}}}');
-- inferno is accepted by three, nuke by two: r1, r2 and r3 play under
-- inferno (r1 with r2, the nearest), r4 waits under nuke, r5 alone
-- under vertigo, c1 alone in its mode.
SELECT matchmaker.enqueue('maps', 'r1', 0.10, '{"mode": "ranked", "map": ["dust", "inferno"]}') AS r1 \gset
SELECT matchmaker.enqueue('maps', 'r2', 0.12, '{"mode": "ranked", "map": "inferno"}') AS r2 \gset
SELECT matchmaker.enqueue('maps', 'r3', 0.90, '{"mode": "ranked", "map": ["nuke", "inferno", "nuke"]}') AS r3 \gset
SELECT matchmaker.enqueue('maps', 'r4', 0.88, '{"mode": "ranked", "map": ["nuke"]}') AS r4 \gset
SELECT matchmaker.enqueue('maps', 'r5', 0.50, '{"mode": "ranked", "map": ["vertigo"]}') AS r5 \gset
SELECT matchmaker.enqueue('maps', 'c1', 0.11, '{"mode": "casual", "map": ["dust", "inferno"]}') AS c1 \gset
SELECT matchmaker.tick('maps', clock_timestamp()) AS made;
-- r3 then plays under nuke, where r4 is.
SELECT matchmaker.tick('maps', clock_timestamp()) AS made;
SELECT string_agg(t.player, ' ' ORDER BY t.player) AS players, m.filters
FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
WHERE m.queue = 'maps' GROUP BY m.id, m.filters ORDER BY players;
SELECT player, state FROM matchmaker.tickets WHERE queue = 'maps' AND state <> 'matched' ORDER BY player;
SELECT * FROM matchmaker.check();
-- check() accepts a list holding the match's value, not one without it.
UPDATE matchmaker.tickets SET attributes = '{"mode": "ranked", "map": ["dust", "nuke"]}' WHERE id = :r3;
SELECT problem, id = :r3 AS is_r3 FROM matchmaker.check();
UPDATE matchmaker.tickets SET attributes = '{"mode": "ranked", "map": ["dust", "inferno"]}' WHERE id = :r3;
SELECT problem, id = :r3 AS is_r3 FROM matchmaker.check();
UPDATE matchmaker.tickets SET attributes = '{"mode": "ranked", "map": ["nuke", "inferno"]}' WHERE id = :r3;
-- Backfill takes a player whose list holds the match's map: the inferno
-- match's place goes neither to r5 (vertigo) nor to a dust player, but
-- to one who accepts dust or inferno.
SELECT matchmaker.backfill((SELECT match_id FROM matchmaker.tickets WHERE id = :r1), 1) AS req \gset
SELECT matchmaker.enqueue('maps', 'r6', 0.11, '{"mode": "ranked", "map": "dust"}') AS r6 \gset
SELECT matchmaker.tick('maps', clock_timestamp()) AS made;
SELECT state, filled FROM matchmaker.backfills WHERE id = :req;
SELECT matchmaker.enqueue('maps', 'r7', 0.70, '{"mode": "ranked", "map": ["dust", "inferno"]}') AS r7 \gset
SELECT matchmaker.tick('maps', clock_timestamp()) AS made;
SELECT state, filled FROM matchmaker.backfills WHERE id = :req;
SELECT match_id = (SELECT match_id FROM matchmaker.tickets WHERE id = :r1) AS r7_joined_r1
FROM matchmaker.tickets WHERE id = :r7;
SELECT * FROM matchmaker.check();
-- The offline optimum lets players meet within each connected set of
-- values (a lower bound with lists, exact without): 1 and 3 list no map
-- in common with 2 and 4, so the modes' sum; a player listing both joins
-- them.
SELECT matchmaker.create_queue('pairmap', algorithm => 'greedy', max_wait => '5 s',
                               params => '{"filters": {"map": "intersect"}}');
SELECT round(matchmaker.optimal_cost('pairmap', $$
    VALUES (1, 0.10, 0.0, '{"map": "a"}'::jsonb), (2, 0.11, 1.0, '{"map": ["b"]}'),
           (3, 0.90, 2.0, '{"map": ["a"]}'), (4, 0.89, 3.0, '{"map": "b"}')$$)::numeric, 6) AS apart,
       round(matchmaker.optimal_cost('pairmap', $$
    VALUES (1, 0.10, 0.0, '{"map": "a"}'::jsonb), (2, 0.11, 1.0, '{"map": ["b"]}'),
           (3, 0.90, 2.0, '{"map": ["a"]}'), (4, 0.89, 3.0, '{"map": "b"}'),
           (5, 0.50, 30.0, '{"map": ["a", "b"]}')$$)::numeric, 6) AS joined;
-- Live equals simulated with intersect filters: the stream's players
-- accept one or two of three maps.
UPDATE fstream SET attrs = attrs || jsonb_build_object('map',
    (ARRAY['["dust"]', '["dust", "nuke"]', '["nuke"]', '["inferno", "nuke"]', '"inferno"'])[1 + id % 5]::jsonb);
SELECT matchmaker.create_queue('g_greedy', algorithm => 'greedy', max_wait => '2 s',
                               params => '{"filters": {"mode": "equal", "map": "intersect"}}');
SELECT matchmaker.create_queue('g_diff', algorithm => 'difference_wait', max_wait => '3 s',
                               params => '{"wait_factor": 1, "filters": {"map": "intersect"}}');
SELECT matchmaker.create_queue('g_squad', team_size => 2, algorithm => 'periodic', max_wait => '2 s',
                               params => '{"batch": 8, "filters": {"map": "intersect"}}');
SELECT f_replay(name) FROM matchmaker.queues WHERE name LIKE 'g\_%' ORDER BY name;
SELECT name, c.live, c.simulated, c.differ FROM matchmaker.queues, f_compare(name) c WHERE name LIKE 'g\_%' ORDER BY name;
SELECT q.name, round(sum(m.cost)::numeric, 6) = round(s.cost::numeric, 6) AS same_total_cost,
       count(DISTINCT m.filters->>'map') AS maps
FROM matchmaker.queues q JOIN matchmaker.matches m ON m.queue = q.name,
     matchmaker.simulate_summary(q.name, 'SELECT id, rating, arrival, attrs FROM fstream') s
WHERE q.name LIKE 'g\_%' GROUP BY q.name, s.cost ORDER BY q.name;
-- Filters that relax (optional_after): a player who waited 1 s meets
-- players of another mode, live as in simulate.
SELECT matchmaker.create_queue('g_relax', algorithm => 'greedy', max_wait => '3 s',
    params => '{"filters": {"mode": {"kind": "equal", "optional_after": 1}, "map": "intersect"}}');
SELECT matchmaker.create_queue('g_relax_diff', algorithm => 'difference_wait', max_wait => '3 s',
    params => '{"wait_factor": 1, "filters": {"mode": {"kind": "equal", "optional_after": 1.5}}}');
SELECT f_replay(name) FROM matchmaker.queues WHERE name LIKE 'g\_relax%' ORDER BY name;
SELECT name, c.live, c.simulated, c.differ FROM matchmaker.queues, f_compare(name) c WHERE name LIKE 'g\_relax%' ORDER BY name;
-- some matches mixed modes, each recording the mode as relaxed and each
-- with a player who had waited the filter's seconds; the others did not
SELECT m.queue, count(*) FILTER (WHERE m.relaxed = '{mode}') > 0 AS some_relaxed,
       count(*) FILTER (WHERE (m.relaxed IS NOT NULL) <> (x.modes > 1)) AS wrongly_recorded,
       count(*) FILTER (WHERE x.modes > 1 AND x.longest < (q.params->'filters'->'mode'->>'optional_after')::float8)
           AS relaxed_early
FROM matchmaker.matches m JOIN matchmaker.queues q ON q.name = m.queue,
     LATERAL (SELECT count(DISTINCT t.attributes->>'mode') AS modes,
                     max(extract(epoch FROM t.matched_at - t.enqueued_at)) AS longest
              FROM matchmaker.tickets t WHERE t.match_id = m.id) x
WHERE m.queue LIKE 'g\_relax%' GROUP BY m.queue ORDER BY m.queue;
-- A ready check keeps what was relaxed: the proposal records it, and so
-- does the match once both accept; tickets who waited less do not relax.
SELECT matchmaker.create_queue('relax_ready', algorithm => 'greedy', max_wait => '1 hour',
    params => '{"accept_timeout": 10, "filters": {"mode": {"kind": "equal", "optional_after": 5}}}');
SELECT matchmaker.enqueue('relax_ready', p, 0.5, jsonb_build_object('mode', m)) > 0 AS enqueued
FROM (VALUES ('m', 'ranked'), ('n', 'casual')) v(p, m);
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '4 seconds' WHERE queue = 'relax_ready';
SELECT matchmaker.tick('relax_ready', now()) AS made;
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '6 seconds' WHERE queue = 'relax_ready';
SELECT matchmaker.tick('relax_ready', now()) AS made;
SELECT filters, relaxed FROM matchmaker.proposals WHERE queue = 'relax_ready';
SELECT player, matchmaker.accept(id) FROM matchmaker.tickets WHERE queue = 'relax_ready' ORDER BY id;
SELECT filters, relaxed FROM matchmaker.matches WHERE queue = 'relax_ready';
SELECT * FROM matchmaker.check();
-- A relaxed filter does not apply to backfill: the match keeps its values.
-- c (casual, waited 30 s) does not fill the ranked match's place, a
-- ranked newcomer far in rating does.
SELECT matchmaker.create_queue('relax_bf', algorithm => 'greedy', max_wait => '10 min',
    params => '{"filters": {"mode": {"kind": "equal", "optional_after": 1}}}');
SELECT matchmaker.enqueue('relax_bf', p, 0.5, '{"mode": "ranked"}') > 0 AS enqueued FROM (VALUES ('a'), ('b')) v(p);
SELECT matchmaker.tick('relax_bf', now()) AS made;
SELECT matchmaker.backfill((SELECT id FROM matchmaker.matches WHERE queue = 'relax_bf'), 1) AS bf_req \gset
SELECT matchmaker.enqueue('relax_bf', 'c', 0.5, '{"mode": "casual"}') AS bf_c \gset
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '30 s' WHERE id = :bf_c;
SELECT matchmaker.tick('relax_bf', now()) AS made;
SELECT matchmaker.enqueue('relax_bf', 'd', 0.99, '{"mode": "ranked"}') > 0 AS enqueued;
SELECT matchmaker.tick('relax_bf', now()) AS made;
SELECT player, state, match_id IS NOT NULL AS in_match FROM matchmaker.tickets WHERE queue = 'relax_bf' ORDER BY player;
SELECT state, filled FROM matchmaker.backfills WHERE id = :bf_req;
SELECT filters, relaxed FROM matchmaker.matches WHERE queue = 'relax_bf';
SELECT * FROM matchmaker.check();
-- simulate of auto over lists: a leftover ticket given a key where a pair
-- was due already is stepped again at once (it used to fail).
SELECT matchmaker.create_queue('rep_auto', max_wait => '6 s', params => '{"filters": {"map": "intersect"}}');
SELECT count(*) AS players, count(DISTINCT match_no) AS matches FROM matchmaker.simulate('rep_auto', $$VALUES
    (0, 0.223::float8, 0.971::float8, '{"map": ["m1"]}'::jsonb), (1, 0.972, 1.304, '{"map": ["m0","m1"]}'),
    (2, 0.656, 1.771, '{"map": ["m2","m3"]}'), (3, 0.421, 1.771, '{"map": ["m0","m3"]}'),
    (4, 0.005, 1.982, '{"map": ["m0","m1","m2","m3"]}'), (5, 0.789, 2.973, '{"map": ["m0","m2"]}'),
    (6, 0.366, 3.425, '{"map": ["m1"]}'), (7, 0.282, 4.398, '{"map": ["m3"]}'),
    (8, 0.443, 4.51, '{"map": ["m2","m3"]}'), (9, 0.935, 4.51, '{"map": ["m0","m1","m2"]}'),
    (10, 0.657, 4.51, '{"map": ["m0","m1","m2","m3"]}'), (11, 0.81, 5.412, '{"map": ["m0","m2"]}'),
    (12, 0.177, 5.412, '{"map": ["m0","m1","m3"]}'), (13, 0.641, 5.412, '{"map": ["m1","m2","m3"]}'),
    (14, 0.311, 6.106, '{"map": ["m1","m3"]}'), (15, 0.1, 7.036, '{"map": ["m2","m3"]}')$$);
-- every match's players accept its map (check), and the lists were used:
-- some players of a two-map list played each of its maps
SELECT * FROM matchmaker.check();
SELECT m.filters->>'map' AS map, count(*) AS players
FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
WHERE m.queue = 'g_greedy' AND t.attributes->'map' = '["dust", "nuke"]'
GROUP BY 1 ORDER BY 1;

-- Block lists: {"blocked": "exclude"} names the attribute in which a
-- player lists the players (identifiers) it never meets; nor does anyone
-- whose list names it.  At most one, never optional.
SELECT matchmaker.create_queue('bad', params => '{"filters": {"blocked": "exclude", "avoid": "exclude"}}');
SELECT matchmaker.create_queue('bad', params => '{"filters": {"blocked": {"kind": "exclude", "optional_after": 5}}}');
SELECT matchmaker.create_queue('bad', algorithm => 'optimize', params => '{"filters": {"blocked": "exclude"}}');
SELECT matchmaker.create_queue('blocks', algorithm => 'greedy', max_wait => '1 hour',
                               params => '{"filters": {"blocked": "exclude"}}');
-- A list is optional; when given, a list of at most 64 strings of at most 256 bytes.
SELECT matchmaker.enqueue('blocks', 'x', 0.5, '{"blocked": "b"}');
SELECT matchmaker.enqueue('blocks', 'x', 0.5, '{"blocked": ["b", 2]}');
SELECT matchmaker.enqueue('blocks', 'x', 0.5, jsonb_build_object('blocked', (SELECT jsonb_agg('p' || i) FROM generate_series(1, 65) i)));
SELECT matchmaker.enqueue('blocks', 'x', 0.5, jsonb_build_object('blocked', jsonb_build_array(repeat('p', 257))));
SELECT count(*) AS tickets FROM matchmaker.tickets WHERE queue = 'blocks';
-- greedy pairs the two oldest, a and b; a blocks b, so b (the younger)
-- sits this tick out and a plays c; b then meets d, who blocks nobody.
SELECT matchmaker.enqueue('blocks', 'a', 0.5, '{"blocked": ["b", "nobody-here"]}') AS ba \gset
SELECT matchmaker.enqueue('blocks', 'b', 0.5) AS bb \gset
SELECT matchmaker.enqueue('blocks', 'c', 0.9, '{"blocked": null}') AS bc \gset
SELECT matchmaker.tick('blocks', clock_timestamp()) AS made;
SELECT matchmaker.enqueue('blocks', 'd', 0.1, '{"blocked": []}') AS bd \gset
SELECT matchmaker.tick('blocks', clock_timestamp()) AS made;
SELECT string_agg(t.player, ' ' ORDER BY t.player) AS players
FROM matchmaker.tickets t WHERE t.queue = 'blocks' AND t.match_id IS NOT NULL GROUP BY t.match_id ORDER BY players;
-- in either direction: e lists nobody, but f lists e
SELECT matchmaker.enqueue('blocks', 'e', 0.5) AS be \gset
SELECT matchmaker.enqueue('blocks', 'f', 0.5, '{"blocked": ["e"]}') AS bf \gset
SELECT matchmaker.tick('blocks', clock_timestamp()) AS made;
SELECT player, state FROM matchmaker.tickets WHERE id IN (:be, :bf) ORDER BY player;
-- a player held out that times out plays with a computer player alone
SELECT matchmaker.tick('blocks', clock_timestamp() + interval '2 hours') AS made;
SELECT player, state, (SELECT bots FROM matchmaker.matches WHERE id = match_id) AS bots
FROM matchmaker.tickets WHERE id IN (:be, :bf) ORDER BY player;
SELECT * FROM matchmaker.check();
-- One player blocking many keeps only itself waiting: g blocks h1 .. h6
-- (all of a rating, g the oldest); the six play each other.
SELECT matchmaker.enqueue('blocks', 'g', 0.3, jsonb_build_object('blocked',
           (SELECT jsonb_agg('h' || i) FROM generate_series(1, 6) i))) AS bg \gset
SELECT count(matchmaker.enqueue('blocks', 'h' || i, 0.3)) AS enqueued FROM generate_series(1, 6) i;
SELECT matchmaker.tick('blocks', clock_timestamp()) AS made;
SELECT player, state FROM matchmaker.tickets WHERE id = :bg;
SELECT * FROM matchmaker.check();
-- check() finds a match whose players block each other.
UPDATE matchmaker.tickets SET attributes = '{"blocked": ["c"]}' WHERE id = :ba;
SELECT problem, id = :ba AS is_a, detail LIKE '%players a and c%' AS names FROM matchmaker.check();
UPDATE matchmaker.tickets SET attributes = '{"blocked": ["b", "nobody-here"]}' WHERE id = :ba;
-- backfill does not check block lists, so it is refused for such a queue.
SELECT matchmaker.backfill((SELECT match_id FROM matchmaker.tickets WHERE id = :ba), 1);
-- Live equals simulated with block lists (simulate's player is the
-- arrival's attributes.player, else its id): every third player blocks
-- the next two.
UPDATE fstream SET attrs = attrs || jsonb_build_object('player', 'p' || id)
    || CASE WHEN id % 3 = 0 THEN jsonb_build_object('blocked', jsonb_build_array('p' || (id + 1), 'p' || (id + 2)))
            ELSE '{}' END;
SELECT matchmaker.create_queue('h_greedy', algorithm => 'greedy', max_wait => '2 s',
                               params => '{"filters": {"blocked": "exclude"}}');
SELECT matchmaker.create_queue('h_diff', algorithm => 'difference_wait', max_wait => '3 s',
                               params => '{"wait_factor": 1, "filters": {"blocked": "exclude", "mode": "equal"}}');
SELECT matchmaker.create_queue('h_squad', team_size => 2, algorithm => 'periodic', max_wait => '2 s',
                               params => '{"batch": 8, "filters": {"blocked": "exclude", "map": "intersect"}}');
SELECT f_replay(name) FROM matchmaker.queues WHERE name LIKE 'h\_%' ORDER BY name;
SELECT name, c.live, c.simulated, c.differ FROM matchmaker.queues, f_compare(name) c WHERE name LIKE 'h\_%' ORDER BY name;
-- no match holds a blocked pair (check), though without the lists some would
SELECT * FROM matchmaker.check();
SELECT count(*) > 0 AS some_blocked_pair_without_lists
FROM matchmaker.simulate('nofilter', 'SELECT id, rating, arrival, attrs FROM fstream') s1
JOIN matchmaker.simulate('nofilter', 'SELECT id, rating, arrival, attrs FROM fstream') s2
  ON s1.match_no = s2.match_no AND s2.id IN (s1.id + 1, s1.id + 2)
WHERE s1.id % 3 = 0;
DROP FUNCTION f_replay(text), f_compare(text), f_next_due(text, float8);
DROP TABLE fstream;
