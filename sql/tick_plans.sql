-- A tick locks and updates the tickets it decided on by ctid or id, never
-- by a scan of the tickets table.  The session's plans are made while the
-- table is new and small (the planner then prices one scan of it below a
-- dozen tid probes), and the ticks go on as it grows: no scan of the table,
-- whether they match, expire or end tickets.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

CREATE OR REPLACE FUNCTION at(t float8) RETURNS timestamptz
LANGUAGE sql AS $$ SELECT '2026-01-01 00:00:00+00'::timestamptz + t * interval '1 second' $$;
SELECT matchmaker.create_queue('scanless', algorithm => 'greedy', max_wait => '5 s',
                               params => '{"on_timeout": "expire"}');
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS scans_before FROM pg_stat_user_tables WHERE relid = 'matchmaker.tickets'::regclass \gset
-- Twelve rounds of twelve players arriving together (enqueued_at set by
-- hand: the test is superuser), each round one tick: six pairs each.
-- Then a player alone, who expires.
DO $$
DECLARE
    ticket bigint;
BEGIN
    FOR i IN 1..12 LOOP
        FOR p IN 1..12 LOOP
            ticket := matchmaker.enqueue('scanless', 'p' || i || '.' || p, p / 100.0);
            UPDATE matchmaker.tickets SET enqueued_at = at(100 * i) WHERE id = ticket;
        END LOOP;
        PERFORM matchmaker.tick('scanless', at(100 * i));
    END LOOP;
    ticket := matchmaker.enqueue('scanless', 'alone', 0.5);
    UPDATE matchmaker.tickets SET enqueued_at = at(2000) WHERE id = ticket;
    PERFORM matchmaker.tick('scanless', at(2010));
END
$$;
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :scans_before AS scans,
       (SELECT count(*) FROM matchmaker.tickets WHERE queue = 'scanless' AND state = 'matched') AS matched,
       (SELECT count(*) FROM matchmaker.matches WHERE queue = 'scanless') AS matches,
       (SELECT count(*) FROM matchmaker.tickets WHERE queue = 'scanless' AND state = 'expired') AS expired,
       (SELECT count(*) FROM matchmaker.tickets WHERE queue = 'scanless' AND state = 'waiting') AS waiting
FROM pg_stat_user_tables WHERE relid = 'matchmaker.tickets'::regclass;

-- The same for the tickets a tick ends as invalid (here rated outside the
-- queue's range by hand; the test is superuser), with many tickets waiting
-- in another queue: the plans are made on the small table, then the tick
-- reads tickets_waiting once (its own read of the queue), scans no table
-- and fetches fewer rows by the primary key than twice the tickets it
-- ends (none of the 2,000 waiting in the other queue).
\c
SELECT matchmaker.create_queue('inv', algorithm => 'greedy', max_wait => '1 hour');
SELECT matchmaker.create_queue('crowd', algorithm => 'periodic', params => '{"batch": 100000}');
UPDATE matchmaker.tickets SET rating = 5 WHERE id = matchmaker.enqueue('inv', 'first', 0.5);
SELECT matchmaker.tick('inv') AS matches;
SELECT count(matchmaker.enqueue('crowd', 'c' || i, 0.5)) AS crowd FROM generate_series(1, 2000) i;
SELECT count(matchmaker.enqueue('inv', 'i' || i, 0.5)) AS inv FROM generate_series(1, 50) i;
UPDATE matchmaker.tickets SET rating = 5 WHERE queue = 'inv' AND state = 'waiting';
SELECT pg_stat_force_next_flush();
SELECT (SELECT seq_scan FROM pg_stat_user_tables WHERE relid = 'matchmaker.tickets'::regclass) AS seq_before,
       (SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelid = 'matchmaker.tickets_waiting'::regclass) AS waiting_before,
       (SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelid = 'matchmaker.tickets_pkey'::regclass) AS pkey_before \gset
SELECT matchmaker.tick('inv') AS matches;
SELECT pg_stat_force_next_flush();
SELECT (SELECT seq_scan FROM pg_stat_user_tables WHERE relid = 'matchmaker.tickets'::regclass) - :seq_before AS scans,
       (SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelid = 'matchmaker.tickets_waiting'::regclass) - :waiting_before AS waiting_reads,
       (SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelid = 'matchmaker.tickets_pkey'::regclass) - :pkey_before < 100 AS pkey_rows_below_twice_ended,
       (SELECT count(*) FROM matchmaker.tickets WHERE queue = 'inv' AND state = 'invalid') AS invalid;

-- A tick of a queue without proposals or open backfill requests finds that
-- in their indexes alone and skips its statements on those tables, but
-- locks them as those statements would (FOR UPDATE: RowShareLock), so that
-- no session can take a lock there in between that the rest of the tick's
-- transaction would then wait for; a queue with an open request runs them
-- (and writes the request: RowExclusiveLock).
BEGIN;
SELECT matchmaker.tick('inv') AS matches;
SELECT relation::regclass AS rel, mode FROM pg_locks
WHERE pid = pg_backend_pid() AND relation IN ('matchmaker.proposals'::regclass, 'matchmaker.backfills'::regclass)
ORDER BY 1, 2;
ROLLBACK;
SELECT matchmaker.backfill((SELECT min(id) FROM matchmaker.matches WHERE queue = 'scanless'), 1) > 0 AS requested;
BEGIN;
SELECT matchmaker.tick('scanless') AS matches;
SELECT relation::regclass AS rel, mode FROM pg_locks
WHERE pid = pg_backend_pid() AND relation IN ('matchmaker.proposals'::regclass, 'matchmaker.backfills'::regclass)
ORDER BY 1, 2;
ROLLBACK;

-- The tick's writes of the tickets it matches: the rows carry their
-- match, team and time, their new versions are in the indexes (read here
-- through tickets_match alone), the table's constraints apply (one added
-- by hand refuses the tick) and its triggers fire for each ticket.
SELECT matchmaker.create_queue('rows', algorithm => 'greedy', max_wait => '1 hour');
SELECT count(matchmaker.enqueue('rows', 'r' || i, i / 10.0)) AS enqueued FROM generate_series(1, 6) i;
SELECT matchmaker.tick('rows') AS matches;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT t.player, t.state, t.team, t.matched_at = m.created_at AS at_match
FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
WHERE m.queue = 'rows' ORDER BY t.player;
RESET enable_seqscan;
RESET enable_bitmapscan;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT one_team CHECK (team IS NULL OR team < 2) NOT VALID;
SELECT count(matchmaker.enqueue('rows', 'c' || i, i / 10.0)) AS enqueued FROM generate_series(1, 2) i;
\set VERBOSITY terse
SELECT matchmaker.tick('rows') AS matches;
\set VERBOSITY default
ALTER TABLE matchmaker.tickets DROP CONSTRAINT one_team;
CREATE TABLE rows_seen (id bigint, old_state text, new_state text);
CREATE FUNCTION rows_seen() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN INSERT INTO public.rows_seen VALUES (NEW.id, OLD.state, NEW.state); RETURN NEW; END $$;
CREATE TRIGGER rows_seen AFTER UPDATE ON matchmaker.tickets FOR EACH ROW EXECUTE FUNCTION rows_seen();
SELECT matchmaker.tick('rows') AS matches;
SELECT count(matchmaker.enqueue('rows', 's' || i, i / 10.0)) AS enqueued FROM generate_series(1, 4) i;
SELECT matchmaker.tick('rows') AS matches;
SELECT old_state, new_state, count(*) FROM rows_seen GROUP BY 1, 2 ORDER BY 1, 2;
DROP TRIGGER rows_seen ON matchmaker.tickets;
DROP TABLE rows_seen;
DROP FUNCTION rows_seen();

-- The rows of its matches: the table's constraints apply (one added by
-- hand refuses the tick), a column added with a default gets it, and a
-- trigger fires for each match.
SELECT count(matchmaker.enqueue('rows', 'm' || i, i / 10.0)) AS enqueued FROM generate_series(1, 4) i;
ALTER TABLE matchmaker.matches ADD CONSTRAINT cheap CHECK (cost < 0) NOT VALID;
\set VERBOSITY terse
SELECT matchmaker.tick('rows') AS matches;
\set VERBOSITY default
ALTER TABLE matchmaker.matches DROP CONSTRAINT cheap;
ALTER TABLE matchmaker.matches ADD COLUMN note text;
ALTER TABLE matchmaker.matches ALTER COLUMN note SET DEFAULT 'by default';
SELECT matchmaker.tick('rows') AS matches;
SELECT note, count(*) FROM matchmaker.matches WHERE queue = 'rows' GROUP BY 1 ORDER BY 1;
ALTER TABLE matchmaker.matches DROP COLUMN note;
CREATE TABLE matches_seen (id bigint, queue text);
CREATE FUNCTION matches_seen() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN INSERT INTO public.matches_seen VALUES (NEW.id, NEW.queue); RETURN NEW; END $$;
CREATE TRIGGER matches_seen AFTER INSERT ON matchmaker.matches FOR EACH ROW EXECUTE FUNCTION matches_seen();
SELECT count(matchmaker.enqueue('rows', 'n' || i, i / 10.0)) AS enqueued FROM generate_series(1, 6) i;
SELECT matchmaker.tick('rows') AS matches;
SELECT s.queue, count(*) AS seen, count(m.id) AS in_matches, count(DISTINCT s.id) AS distinct_ids
FROM matches_seen s LEFT JOIN matchmaker.matches m ON m.id = s.id GROUP BY 1;
DROP TRIGGER matches_seen ON matchmaker.matches;
DROP TABLE matches_seen;
DROP FUNCTION matches_seen();
-- a column of a domain added to matches gets the domain's default; a
-- stored generated column added to tickets is computed for the matched rows
CREATE DOMAIN seven AS integer DEFAULT 7;
ALTER TABLE matchmaker.matches ADD COLUMN d seven;
ALTER TABLE matchmaker.tickets ADD COLUMN done boolean GENERATED ALWAYS AS (state <> 'waiting') STORED;
SELECT count(matchmaker.enqueue('rows', 'g' || i, i / 10.0)) AS enqueued FROM generate_series(1, 2) i;
SELECT matchmaker.tick('rows') AS matches;
SELECT m.d, t.state, t.done FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
WHERE t.player LIKE 'g%' ORDER BY t.player;
ALTER TABLE matchmaker.tickets DROP COLUMN done;
ALTER TABLE matchmaker.matches DROP COLUMN d;
DROP DOMAIN seven;
-- with the dropped columns still in the tables, a tick writes its rows again
SELECT count(matchmaker.enqueue('rows', 'o' || i, i / 10.0)) AS enqueued FROM generate_series(1, 2) i;
SELECT matchmaker.tick('rows') AS matches;
SELECT count(*) AS matches, count(*) FILTER (WHERE cost > 0 AND bots = 0 AND created_at IS NOT NULL) AS complete
FROM matchmaker.matches WHERE queue = 'rows';
