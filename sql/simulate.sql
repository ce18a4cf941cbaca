-- simulate, simulate_summary, optimal_cost and audit.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

-- The periodic example of the tick test, as an arrival stream: the same groups.
SELECT matchmaker.create_queue('p', algorithm => 'periodic', max_wait => '60 s', params => '{"batch": 8}');
SELECT match_no, string_agg(id::text, ' ' ORDER BY id) AS ids, min(matched_at) AS at
FROM matchmaker.simulate('p', $$SELECT * FROM (VALUES (1, .1, 1), (2, .9, 2), (3, .2, 3), (4, .8, 4),
                                                  (5, .3, 5), (6, .7, 6), (7, .4, 7), (8, .6, 8)) v$$)
GROUP BY match_no ORDER BY match_no;

-- params override the queue's own: batches of 4.
SELECT match_no, string_agg(id::text, ' ' ORDER BY id) AS ids, min(matched_at) AS at
FROM matchmaker.simulate('p', $$SELECT * FROM (VALUES (1, .1, 1), (2, .9, 2), (3, .2, 3), (4, .8, 4),
                                                  (5, .3, 5), (6, .7, 6), (7, .4, 7), (8, .6, 8)) v$$,
                         '{"batch": 4}')
GROUP BY match_no ORDER BY match_no;

-- A lone player: a computer player at max_wait (on_timeout bots), or expiry.
SELECT * FROM matchmaker.simulate('p', 'SELECT 7, 0.5, 100.0');
SELECT * FROM matchmaker.simulate('p', 'SELECT 7, 0.5, 100.0', '{"on_timeout": "expire"}');

-- The summary of a greedy 1v1: two games, (.1,.9) at 1 s and (.5,.6) at 3 s.
SELECT matchmaker.create_queue('g', algorithm => 'greedy', max_wait => '10 s');
SELECT players, games, bots, expired, round(cost::numeric, 6) AS cost,
       round(criteria_cost::numeric, 6) AS criteria, round(wait_cost::numeric, 6) AS wait,
       round(cost_per_game::numeric, 6) AS per_game, mean_wait, max_wait
FROM matchmaker.simulate_summary('g', $$VALUES (1, .1, 0), (2, .9, 1), (3, .5, 2), (4, .6, 3)$$);
SELECT matchmaker.match_cost('g', '{.1, .9}', '{1, 0}') + matchmaker.match_cost('g', '{.5, .6}', '{1, 0}') AS same_cost;
-- An empty stream.
SELECT * FROM matchmaker.simulate_summary('g', 'SELECT 1, 0.5, 0.0 WHERE false');
-- Rows beyond the memory kept (here work_mem) go to a temporary file and
-- come back whole: 20,000 players at 100 per second, about 800 kB of rows.
SET work_mem = '64kB';
WITH r AS (SELECT * FROM matchmaker.simulate('g', $$SELECT i, (i * 0.6180339887) % 1, i / 100.0 FROM generate_series(1, 20000) i$$)),
     s AS (SELECT * FROM matchmaker.simulate_summary('g', $$SELECT i, (i * 0.6180339887) % 1, i / 100.0 FROM generate_series(1, 20000) i$$))
SELECT (SELECT count(*) FROM r) AS rows, (SELECT count(DISTINCT id) FROM r) AS players,
       (SELECT sum(id) FROM r) = 20000 * 20001 / 2 AS every_id,
       (SELECT count(DISTINCT match_no) FROM r) = s.games AS games_agree,
       (SELECT count(*) FROM r WHERE match_no IS NULL) = s.expired AS expired_agree
FROM s;
RESET work_mem;

-- Ratings are on the queue's scale.
SELECT matchmaker.create_queue('elo', algorithm => 'greedy', rating_min => 0, rating_max => 3000);
SELECT count(*) FROM matchmaker.simulate('elo', $$VALUES (1, 1500, 0), (2, 2900, 1)$$);

-- Refusals.
SELECT * FROM matchmaker.simulate('nosuch', 'SELECT 1, 0.5, 0.0');
SELECT * FROM matchmaker.simulate(NULL, 'SELECT 1, 0.5, 0.0');
SELECT * FROM matchmaker.simulate('g', NULL);
SELECT * FROM matchmaker.simulate('g', 'SELECT 1, 0.5');
SELECT * FROM matchmaker.simulate('g', 'SELECT no_such_column');
SELECT * FROM matchmaker.simulate('g', $$VALUES (1, NULL::float8, 0.0)$$);
SELECT * FROM matchmaker.simulate('g', $$VALUES (1, 0.5, 'Infinity'::float8)$$);
SELECT * FROM matchmaker.simulate('g', $$VALUES (1, 0.5, 0.0), (1, 0.6, 1.0)$$);
SELECT * FROM matchmaker.simulate('g', $$VALUES (1, 1.5, 0.0)$$);
-- The first invalid row in the query's order is the one reported.
SELECT * FROM matchmaker.simulate('g', $$VALUES (1, 0.5, 0.0), (2, 0.5, 1.0), (NULL, 0.5, 2.0), (4, 7.0, 3.0)$$);
SELECT * FROM matchmaker.simulate('g', $$VALUES (1, 0.5, 0.0), (2, -1.0, 1.0), (NULL, 0.5, 2.0)$$);
SELECT * FROM matchmaker.simulate('g', 'SELECT 1, 0.5, 0.0', '{"batch": 4}');
SELECT * FROM matchmaker.simulate('g', 'SELECT 1, 0.5, 0.0', '[1]');

-- A live queue replayed through simulate makes the same matches: tick at
-- every arrival (after all arrivals of that instant) and at every timer, as
-- the simulator decides, and compare ticket by ticket.
-- The next time a queue's timers fall due (seconds from the origin), as the
-- simulator computes it: the oldest waiting ticket's max_wait (for
-- difference_wait: of tickets outside provisional groups), a group's
-- finalize_at, or for window and cluster with k or more waiting the next
-- recheck instant after the last tick (the origin lies on the grid).
CREATE FUNCTION next_due(qname text, last float8) RETURNS float8 LANGUAGE sql AS $$
    SELECT least(
        (SELECT extract(epoch FROM min(finalize_at) - '2026-01-01 00:00:00+00') FROM matchmaker.provisional WHERE queue = qname),
        (SELECT extract(epoch FROM min(t.enqueued_at) - '2026-01-01 00:00:00+00') + extract(epoch FROM q.max_wait)
         FROM matchmaker.tickets t JOIN matchmaker.queues q ON q.name = t.queue
         WHERE t.queue = qname AND t.state = 'waiting'
           AND NOT (q.algorithm = 'difference_wait'
                    AND EXISTS (SELECT 1 FROM matchmaker.provisional p WHERE p.queue = qname AND t.id = ANY (p.tickets)))
         GROUP BY q.max_wait),
        (SELECT (floor(last / (q.params->>'recheck')::float8) + 1) * (q.params->>'recheck')::float8
         FROM matchmaker.queues q
         WHERE q.name = qname AND q.algorithm IN ('window', 'cluster')
           AND (SELECT count(*) FROM matchmaker.tickets t WHERE t.queue = qname AND t.state = 'waiting')
               >= q.team_size * q.teams))
$$;

CREATE FUNCTION replay(qname text, stream text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    origin constant timestamptz := '2026-01-01 00:00:00+00';
    a record;
    pending_time float8 := NULL;
    last float8 := 0;
    due float8;
    ticket bigint;
BEGIN
    FOR a IN EXECUTE 'SELECT id, rating, arrival FROM (' || stream || ') s(id, rating, arrival) ORDER BY arrival, id' LOOP
        IF pending_time IS NOT NULL AND a.arrival > pending_time THEN
            PERFORM matchmaker.tick(qname, origin + pending_time * interval '1 second');
            last := pending_time;
            pending_time := NULL;
        END IF;
        -- timers that fall due before this arrival
        LOOP
            due := next_due(qname, last);
            EXIT WHEN due IS NULL OR due >= a.arrival;
            PERFORM matchmaker.tick(qname, origin + due * interval '1 second');
            last := due;
        END LOOP;
        ticket := matchmaker.enqueue(qname, 'p' || a.id, a.rating);
        UPDATE matchmaker.tickets SET enqueued_at = origin + a.arrival * interval '1 second' WHERE id = ticket;
        pending_time := a.arrival;
    END LOOP;
    IF pending_time IS NOT NULL THEN
        PERFORM matchmaker.tick(qname, origin + pending_time * interval '1 second');
        last := pending_time;
    END IF;
    LOOP
        due := next_due(qname, last);
        EXIT WHEN due IS NULL;
        PERFORM matchmaker.tick(qname, origin + due * interval '1 second');
        last := due;
    END LOOP;
END
$$;

-- 300 arrivals at about 10 per second, ratings uniform, on a millisecond grid.
CREATE TABLE stream AS
SELECT i AS id, round(random()::numeric, 4)::float8 AS rating,
       round((sum(-ln(1 - random()) / 10) OVER (ORDER BY i))::numeric, 3)::float8 AS arrival
FROM (SELECT setseed(0.42)) s, generate_series(1, 300) i;

-- Live and simulated outcomes of one queue: (player, match number, team, time) rows in one and not the other.
CREATE FUNCTION compare(q text, params jsonb DEFAULT NULL) RETURNS TABLE (live bigint, simulated bigint, differ bigint)
LANGUAGE sql AS $$
    WITH live AS (
        SELECT substr(t.player, 2)::bigint AS id,
               CASE WHEN t.match_id IS NULL THEN NULL ELSE dense_rank() OVER (ORDER BY t.match_id) END AS match_no,
               t.team, round(extract(epoch FROM coalesce(t.matched_at, t.ended_at) - '2026-01-01 00:00:00+00')::numeric, 4) AS at
        FROM matchmaker.tickets t WHERE t.queue = q),
    sim AS (SELECT id, match_no, team, round(matched_at::numeric, 4) AS at
            FROM matchmaker.simulate(q, 'SELECT id, rating, arrival FROM stream', params))
    SELECT (SELECT count(*) FROM live), (SELECT count(*) FROM sim),
           (SELECT count(*) FROM ((TABLE live EXCEPT TABLE sim) UNION ALL (TABLE sim EXCEPT TABLE live)) d)
$$;

SELECT matchmaker.create_queue('r_greedy', algorithm => 'greedy', max_wait => '5 s');
SELECT matchmaker.create_queue('r_periodic', algorithm => 'periodic', max_wait => '5 s', params => '{"batch": 8}');
SELECT matchmaker.create_queue('r_multi', algorithm => 'multi_queue', max_wait => '5 s', params => '{"ranges": 6}');
SELECT matchmaker.create_queue('r_multi_exp', algorithm => 'multi_queue', max_wait => '0.4 s',
                               params => '{"ranges": 12, "on_timeout": "expire"}');
SELECT matchmaker.create_queue('r_greedy_short', team_size => 3, teams => 2, algorithm => 'greedy', max_wait => '0.3 s');
SELECT matchmaker.create_queue('r_diff_short', algorithm => 'difference_wait', max_wait => '0.25 s',
                               params => '{"wait_factor": 4, "on_timeout": "expire"}');
SELECT matchmaker.create_queue('r_diff', algorithm => 'difference_wait', max_wait => '5 s', params => '{"wait_factor": 2}');
SELECT matchmaker.create_queue('r_diff3', team_size => 1, teams => 3, algorithm => 'difference_wait',
                               max_wait => '1 s', params => '{"wait_factor": 2}');
SELECT matchmaker.create_queue('r_teams', team_size => 2, teams => 2, algorithm => 'periodic',
                               max_wait => '0.5 s', params => '{"batch": 8}');
SELECT matchmaker.create_queue('r_window', algorithm => 'window', max_wait => '5 s',
                               params => '{"window": 0.02, "max_window": 0.3, "recheck": 0.5}');
SELECT matchmaker.create_queue('r_window_pct', team_size => 1, teams => 3, algorithm => 'window', max_wait => '2 s',
                               params => '{"window": 0.02, "max_window": 0.2, "recheck": 0.5, "percentile": true,
                                           "on_timeout": "expire"}');
SELECT matchmaker.create_queue('r_cluster', algorithm => 'cluster', max_wait => '5 s',
                               params => '{"threshold": 0.03, "midpoint": 2, "steepness": 2, "shift": 0.5, "recheck": 0.5}');
SELECT replay(name, 'SELECT id, rating, arrival FROM stream') FROM matchmaker.queues WHERE name LIKE 'r\_%' ORDER BY name;
SELECT name, c.* FROM matchmaker.queues, compare(name) c WHERE name LIKE 'r\_%' ORDER BY name;
-- The replay made real matches (the comparison is not vacuous).
SELECT queue, count(*) AS matches, sum(bots) AS bots FROM matchmaker.matches GROUP BY queue ORDER BY queue;
SELECT queue, state, count(*) FROM matchmaker.tickets WHERE state <> 'matched' GROUP BY 1, 2 ORDER BY 1, 2;
-- The live costs agree with the simulated ones.
SELECT q.name, round(sum(m.cost)::numeric, 6) = round(s.cost::numeric, 6) AS same_total_cost
FROM matchmaker.queues q JOIN matchmaker.matches m ON m.queue = q.name,
     matchmaker.simulate_summary(q.name, 'SELECT id, rating, arrival FROM stream') s
WHERE q.name LIKE 'r\_%' GROUP BY q.name, s.cost ORDER BY q.name;

-- optimal_cost: Schlup's offline optimum for pairs.  A pair costs
-- 2 |r1 - r2| + (later arrival - earlier) / max_wait; a player alone gets a
-- computer player at arrival and costs 2 + 0 + 1 = 3.
SELECT matchmaker.create_queue('duel5', algorithm => 'greedy', max_wait => '5 s');
SELECT matchmaker.optimal_cost('duel5', $$VALUES (1, .2, 0), (2, .5, 3)$$) AS one_pair;          -- 1.2
SELECT matchmaker.optimal_cost('duel5', $$VALUES (1, .2, 0), (2, .5, 10)$$) AS too_far_apart;    -- 6
-- Pairing .5 with .55 and giving .1 a computer player (0.3 + 3) beats .1 with .5 (1 + 3).
SELECT round(matchmaker.optimal_cost('duel5', $$VALUES (1, .1, 0), (2, .5, 1), (3, .55, 2)$$)::numeric, 6) AS three;
SELECT matchmaker.optimal_cost('duel5', 'SELECT 1, 0.5, 0.0 WHERE false') AS empty;
-- The optimum is below every online algorithm on the same stream.
SELECT q.name, round(o.opt::numeric, 3) AS optimal, round(s.cost::numeric, 3) AS online, o.opt < s.cost AS below
FROM matchmaker.queues q,
     matchmaker.simulate_summary(q.name, 'SELECT id, rating, arrival FROM stream') s,
     LATERAL (SELECT matchmaker.optimal_cost(q.name, 'SELECT id, rating, arrival FROM stream') AS opt) o
WHERE q.name IN ('r_greedy', 'r_periodic', 'r_multi', 'r_diff') ORDER BY q.name;
SELECT matchmaker.optimal_cost('r_diff3', 'SELECT id, rating, arrival FROM stream');
SELECT matchmaker.optimal_cost('duel5', NULL);

-- audit: the replayed queues' matches against the optimum for the same players.
SELECT q.name, a.matches, a.players, a.bots, a.expired, round(a.cost::numeric, 3) AS cost,
       round(a.optimal_cost::numeric, 3) AS optimal, round(a.ratio::numeric, 3) AS ratio,
       round(a.cost::numeric, 6) = (SELECT round(sum(cost)::numeric, 6) FROM matchmaker.matches WHERE queue = q.name) AS cost_is_sum
FROM matchmaker.queues q, matchmaker.audit(q.name, '2026-01-01 00:00:00+00', '2026-01-02 00:00:00+00') a
WHERE q.name IN ('r_greedy', 'r_periodic', 'r_multi', 'r_diff', 'r_diff_short', 'r_multi_exp') ORDER BY q.name;
-- After alter_queue, audit scores the period's matches under the queue's
-- settings now, as it computes the optimum: a rating range twice as wide
-- and a max_wait twice as long halve every spread's and every wait's cost
-- (r_greedy has no computer players), where the costs stored with the
-- matches are those of their time.
SELECT matchmaker.alter_queue('r_greedy', rating_min => -1, max_wait => '10 s');
SELECT round(a.cost::numeric, 6) = round((SELECT sum(cost) / 2 FROM matchmaker.matches WHERE queue = 'r_greedy')::numeric, 6)
         AS cost_halved,
       round(a.ratio::numeric, 9) = round((a.cost / a.optimal_cost)::numeric, 9) AS ratio_of_the_two
FROM matchmaker.audit('r_greedy', '2026-01-01 00:00:00+00', '2026-01-02 00:00:00+00') a;
SELECT matchmaker.alter_queue('r_greedy', rating_min => 0, max_wait => '5 s');
-- An empty period, and a queue that is not of pairs.
SELECT * FROM matchmaker.audit('r_greedy', '2025-01-01', '2025-01-02');
SELECT * FROM matchmaker.audit('r_teams', '2026-01-01', '2026-01-02');
SELECT * FROM matchmaker.audit('r_greedy', NULL, '2026-01-02');

-- Ids of smallint, integer or bigint with float8 ratings and arrivals are
-- read as the query returns them; other types (numeric here) are cast to
-- bigint and float8: the same stream gives the same matches either way.
WITH kinds(kind, q) AS (VALUES
    ('smallint', $$SELECT i::int2, ((i * 0.6180339887) % 1)::float8, (i / 10.0)::float8 FROM generate_series(1, 300) i$$),
    ('integer', $$SELECT i::int4, ((i * 0.6180339887) % 1)::float8, (i / 10.0)::float8 FROM generate_series(1, 300) i$$),
    ('bigint', $$SELECT i::int8 + 5000000000, ((i * 0.6180339887) % 1)::float8, (i / 10.0)::float8 FROM generate_series(1, 300) i$$),
    ('numeric', $$SELECT i::numeric, ((i * 0.6180339887) % 1)::numeric, (i / 10.0)::numeric FROM generate_series(1, 300) i$$)),
  runs AS (SELECT k.kind, count(*) AS players, count(DISTINCT s.match_no) AS games,
                  md5(string_agg(concat_ws(' ', s.id % 5000000000, s.match_no, s.team, s.matched_at), ',' ORDER BY s.id)) AS outcome
           FROM kinds k, matchmaker.simulate('g', k.q) s GROUP BY k.kind)
SELECT kind, players, games, outcome = (SELECT outcome FROM runs WHERE kind = 'numeric') AS same_as_numeric
FROM runs ORDER BY kind;
-- A trailing semicolon or comment ends the query as written, whatever its
-- columns' types (numeric columns are cast in a query around it).
SELECT count(*) FROM matchmaker.simulate('g', 'SELECT 1::int4, 0.5::float8, 0.0::float8; -- as it is');
SELECT count(*) FROM matchmaker.simulate('g', 'SELECT 1::numeric, 0.5::numeric, 0.0::numeric; -- cast');
SELECT count(*) FROM matchmaker.simulate('g', 'SELECT 1::numeric, 0.5::numeric, 0.0::numeric -- cast');
-- A query that writes is refused before it runs, whatever its columns' types.
CREATE TEMP TABLE sim_written (id int, r float8, a float8);
SELECT * FROM matchmaker.simulate('g', 'WITH x AS (INSERT INTO sim_written VALUES (1, 0.5, 0) RETURNING *) SELECT id, r, a FROM x');
SELECT * FROM matchmaker.simulate('g', 'WITH x AS (INSERT INTO sim_written VALUES (1, 0.5, 0) RETURNING *) SELECT id::numeric, r, a FROM x');
SELECT count(*) AS written FROM sim_written;
