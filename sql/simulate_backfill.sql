-- simulate models backfill: an arrival whose attributes carry leaves_after
-- leaves its match that many seconds after it joined it, and a request for
-- one place in its team opens then (expiring a minute later); every step
-- fills the open requests before it forms new matches, as a tick does.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default

-- By hand: a pair at 0 s (.50 and .52); .52 leaves 10 s after; at 12 s
-- come .90 and .51: the request takes .51 (it adds no spread to the match's
-- .50 .. .52), .90 waits and plays a computer player at max_wait (30 s).
SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '30 s');
SELECT id, match_no, team, matched_at FROM matchmaker.simulate('duel', $$
    VALUES (1, 0.50, 0.0, '{}'::jsonb), (2, 0.52, 0.0, '{"leaves_after": 10}'),
           (3, 0.90, 12.0, '{}'), (4, 0.51, 12.0, '{}')$$) ORDER BY id;
-- Without the departure the two latecomers play each other.
SELECT id, match_no, team, matched_at FROM matchmaker.simulate('duel', $$
    VALUES (1, 0.50, 0.0, '{}'::jsonb), (2, 0.52, 0.0, '{}'),
           (3, 0.90, 12.0, '{}'), (4, 0.51, 12.0, '{}')$$) ORDER BY id;
-- A request expires a minute after the departure: a player at 71 s finds
-- none open and waits for its own match.
SELECT id, match_no, matched_at FROM matchmaker.simulate('duel', $$
    VALUES (1, 0.50, 0.0, '{}'::jsonb), (2, 0.52, 0.0, '{"leaves_after": 10}'), (3, 0.51, 71.0, '{}')$$)
ORDER BY id;
SELECT id, match_no, matched_at FROM matchmaker.simulate('duel', $$
    VALUES (1, 0.50, 0.0, '{}'::jsonb), (2, 0.52, 0.0, '{"leaves_after": 10}'), (3, 0.51, 69.0, '{}')$$)
ORDER BY id;
-- A waiting ticket is taken at the instant of the departure, before its
-- own max_wait; a backfilled player who leaves opens a request in turn;
-- null leaves_after is a player who stays.
SELECT id, match_no, team, matched_at FROM matchmaker.simulate('duel', $$
    VALUES (1, 0.50, 0.0, '{}'::jsonb), (2, 0.52, 0.0, '{"leaves_after": 10}'),
           (3, 0.55, 5.0, '{"leaves_after": 2.5}'), (4, 0.10, 11.0, '{"leaves_after": null}')$$) ORDER BY id;
-- The totals count backfilled players as matched, in the games they joined.
SELECT players, games, bots, expired, round(mean_wait::numeric, 3) AS mean_wait FROM matchmaker.simulate_summary('duel', $$
    VALUES (1, 0.50, 0.0, '{}'::jsonb), (2, 0.52, 0.0, '{"leaves_after": 10}'),
           (3, 0.90, 12.0, '{}'), (4, 0.51, 12.0, '{}')$$);

-- Bad departures are refused, naming the arrival.
SELECT * FROM matchmaker.simulate('duel', $$VALUES (1, 0.5, 0.0, '{"leaves_after": 0}'::jsonb)$$);
SELECT * FROM matchmaker.simulate('duel', $$VALUES (1, 0.5, 0.0, '{}'::jsonb), (7, 0.5, 1.0, '{"leaves_after": -3}')$$);
SELECT * FROM matchmaker.simulate('duel', $$VALUES (1, 0.5, 0.0, '{"leaves_after": "soon"}'::jsonb)$$);
SELECT * FROM matchmaker.simulate('duel', $$VALUES (1, 0.5, 0.0, '{"leaves_after": 1e13}'::jsonb)$$);
SELECT matchmaker.create_queue('rounds', algorithm => 'optimize', max_wait => '30 s');
SELECT * FROM matchmaker.simulate('rounds', $$VALUES (1, 0.5, 0.0, '{"leaves_after": 5}'::jsonb)$$);
-- A null leaves_after is no departure, which optimize takes.
SELECT count(*) FROM matchmaker.simulate('rounds', $$VALUES (1, 0.5, 0.0, '{"leaves_after": null}'::jsonb)$$);

-- Live equals simulated: replay a stream through live queues, calling
-- backfill() for each departure at its instant (with the request's times
-- moved onto the stream's clock), and tick at every event as the worker
-- does; then compare ticket by ticket with simulate.
CREATE TABLE bstream AS
SELECT i AS id, round(random()::numeric, 4)::float8 AS rating,
       round((sum(-ln(1 - random()) / 4) OVER (ORDER BY i))::numeric, 3)::float8 AS arrival,
       CASE WHEN random() < 0.3 THEN jsonb_build_object('leaves_after', round((1 + random() * 20)::numeric, 3))
            ELSE '{}' END AS attrs
FROM (SELECT setseed(0.17)) s, generate_series(1, 200) i;
CREATE TABLE arrived (id bigint PRIMARY KEY);
CREATE TABLE departed (ticket bigint PRIMARY KEY);

-- The next instant after last a queue's waiting tickets fall due (oldest
-- max_wait outside provisional groups, a group's finalize_at).
CREATE FUNCTION bf_next_due(qname text) RETURNS float8 LANGUAGE sql AS $$
    SELECT least(
        (SELECT extract(epoch FROM min(finalize_at) - '2026-01-01 00:00:00+00') FROM matchmaker.provisional WHERE queue = qname),
        (SELECT extract(epoch FROM min(t.enqueued_at) - '2026-01-01 00:00:00+00') + extract(epoch FROM q.max_wait)
         FROM matchmaker.tickets t JOIN matchmaker.queues q ON q.name = t.queue
         WHERE t.queue = qname AND t.state = 'waiting'
           AND NOT EXISTS (SELECT 1 FROM matchmaker.provisional p WHERE p.queue = qname AND t.id = ANY (p.tickets))
         GROUP BY q.max_wait))
$$;

-- Departures: matched tickets with leaves_after not yet gone.
CREATE VIEW departures AS
SELECT t.queue, t.id AS ticket, t.match_id, t.team,
       extract(epoch FROM t.matched_at - '2026-01-01 00:00:00+00') + (b.attrs->>'leaves_after')::float8 AS at
FROM matchmaker.tickets t JOIN bstream b ON 'p' || b.id = t.player
WHERE t.state = 'matched' AND b.attrs ? 'leaves_after'
  AND NOT EXISTS (SELECT 1 FROM departed d WHERE d.ticket = t.id);

CREATE FUNCTION bf_replay(qname text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    origin constant timestamptz := '2026-01-01 00:00:00+00';
    t float8;
    a record;
    d record;
    req bigint;
    ticket bigint;
BEGIN
    TRUNCATE arrived;
    LOOP
        t := least((SELECT min(arrival) FROM bstream WHERE id NOT IN (SELECT id FROM arrived)),
                   bf_next_due(qname),
                   (SELECT min(at) FROM departures WHERE queue = qname),
                   (SELECT extract(epoch FROM min(expires_at) - origin) FROM matchmaker.backfills
                    WHERE queue = qname AND state = 'open'));
        EXIT WHEN t IS NULL;
        FOR a IN SELECT * FROM bstream WHERE arrival = t ORDER BY id LOOP
            ticket := matchmaker.enqueue(qname, 'p' || a.id, a.rating);
            UPDATE matchmaker.tickets SET enqueued_at = origin + a.arrival * interval '1 second' WHERE id = ticket;
            INSERT INTO arrived VALUES (a.id);
        END LOOP;
        FOR d IN SELECT * FROM departures WHERE queue = qname AND at <= t ORDER BY at, ticket LOOP
            req := matchmaker.backfill(d.match_id, 1, d.team);
            UPDATE matchmaker.backfills SET created_at = origin + d.at * interval '1 second',
                   expires_at = origin + (d.at + 60) * interval '1 second' WHERE id = req;
            INSERT INTO departed VALUES (d.ticket);
        END LOOP;
        PERFORM matchmaker.tick(qname, origin + t * interval '1 second');
    END LOOP;
END
$$;

CREATE FUNCTION bf_compare(q text) RETURNS TABLE (live bigint, simulated bigint, differ bigint, backfilled bigint)
LANGUAGE sql AS $$
    WITH live AS (
        SELECT substr(t.player, 2)::bigint AS id,
               CASE WHEN t.match_id IS NULL THEN NULL ELSE dense_rank() OVER (ORDER BY t.match_id) END AS match_no,
               t.team, round(extract(epoch FROM coalesce(t.matched_at, t.ended_at) - '2026-01-01 00:00:00+00')::numeric, 4) AS at
        FROM matchmaker.tickets t WHERE t.queue = q),
    sim AS (SELECT id, match_no, team, round(matched_at::numeric, 4) AS at
            FROM matchmaker.simulate(q, 'SELECT id, rating, arrival, attrs FROM bstream'))
    SELECT (SELECT count(*) FROM live), (SELECT count(*) FROM sim),
           (SELECT count(*) FROM ((TABLE live EXCEPT TABLE sim) UNION ALL (TABLE sim EXCEPT TABLE live)) d),
           (SELECT count(*) FROM matchmaker.tickets WHERE queue = q AND backfill_id IS NOT NULL)
$$;

SELECT matchmaker.create_queue('b_greedy', algorithm => 'greedy', max_wait => '5 s');
SELECT matchmaker.create_queue('b_squad', team_size => 2, algorithm => 'greedy', max_wait => '3 s');
SELECT matchmaker.create_queue('b_diff', algorithm => 'difference_wait', max_wait => '5 s', params => '{"wait_factor": 2}');
SELECT matchmaker.create_queue('b_multi', algorithm => 'multi_queue', max_wait => '2 s',
                               params => '{"ranges": 6, "on_timeout": "expire"}');
SELECT bf_replay(name) FROM matchmaker.queues WHERE name LIKE 'b\_%' ORDER BY name;
SELECT name, c.* FROM matchmaker.queues, bf_compare(name) c WHERE name LIKE 'b\_%' ORDER BY name;
-- Requests ended filled or expired, none left open; check() is clean.
SELECT queue, state, count(*) FROM matchmaker.backfills GROUP BY 1, 2 ORDER BY 1, 2;
SELECT * FROM matchmaker.check();
DROP FUNCTION bf_replay(text), bf_compare(text), bf_next_due(text);
DROP VIEW departures;
DROP TABLE bstream, arrived, departed;
