-- enqueue and cancel.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
SELECT matchmaker.create_queue('duel', rating_min => 0, rating_max => 3000);
SELECT matchmaker.create_queue('other');

-- A first enqueue makes a waiting ticket.
SELECT matchmaker.enqueue('duel', 'ada', 1500) AS ada \gset
SELECT queue, player, rating, attributes, state, enqueued_at <= clock_timestamp() AS enqueued_in_past,
       matched_at, ended_at, match_id, team
FROM matchmaker.tickets WHERE id = :ada;

-- A retry while it waits returns the same id and changes nothing.
SELECT matchmaker.enqueue('duel', 'ada', 1500) = :ada AS same_id;
SELECT matchmaker.enqueue('duel', 'ada', 2900, '{"region": "eu"}') = :ada AS same_id_other_rating;
SELECT count(*), min(rating), max(attributes::text) FROM matchmaker.tickets WHERE player = 'ada';

-- The same player in another queue, and other players, get their own tickets.
SELECT matchmaker.enqueue('other', 'ada', 0.5) <> :ada AS own_ticket;
SELECT matchmaker.enqueue('duel', 'bob', 0, '{"region": "us"}') AS bob \gset
SELECT matchmaker.enqueue('duel', 'cy', 3000) AS cy \gset
SELECT player, rating, attributes FROM matchmaker.tickets WHERE queue = 'duel' ORDER BY id;

-- cancel ends a waiting ticket once; afterwards it returns false.
SELECT matchmaker.cancel(:bob);
SELECT matchmaker.cancel(:bob);
SELECT state, ended_at IS NOT NULL AS has_ended_at FROM matchmaker.tickets WHERE id = :bob;

-- After a cancel, enqueue makes a new ticket.
SELECT matchmaker.enqueue('duel', 'bob', 10) <> :bob AS new_ticket;
SELECT player, state FROM matchmaker.tickets WHERE player = 'bob' ORDER BY id;

-- Refusals change nothing.
SELECT count(*) AS before FROM matchmaker.tickets \gset
SELECT matchmaker.enqueue('nosuch', 'dan', 0.5);
SELECT matchmaker.enqueue(NULL, 'dan', 0.5);
SELECT matchmaker.enqueue('duel', NULL, 0.5);
SELECT matchmaker.enqueue('duel', '', 0.5);
SELECT matchmaker.enqueue('duel', repeat('p', 257), 0.5);
SELECT matchmaker.enqueue('duel', 'dan', NULL);
SELECT matchmaker.enqueue('duel', 'dan', 'NaN');
SELECT matchmaker.enqueue('duel', 'dan', 'Infinity');
SELECT matchmaker.enqueue('duel', 'dan', '-Infinity');
SELECT matchmaker.enqueue('duel', 'dan', -0.001);
SELECT matchmaker.enqueue('duel', 'dan', 3000.5);
SELECT matchmaker.enqueue('duel', 'dan', 100, NULL);
SELECT matchmaker.enqueue('duel', 'dan', 100, '[1]');
SELECT matchmaker.enqueue('duel', 'dan', 100, '42');
SELECT count(*) = :before AS unchanged FROM matchmaker.tickets;

SELECT matchmaker.cancel(NULL);
SELECT matchmaker.cancel(-1);
SELECT matchmaker.cancel(9223372036854775807);

-- A rolled-back enqueue leaves no ticket, and a later enqueue works.
BEGIN;
SELECT matchmaker.enqueue('duel', 'eve', 700) > 0 AS enqueued;
ROLLBACK;
SELECT count(*) AS eve_tickets FROM matchmaker.tickets WHERE player = 'eve';
SELECT matchmaker.enqueue('duel', 'eve', 700) > 0 AS enqueued;
SELECT player, state FROM matchmaker.tickets WHERE queue = 'duel' AND state = 'waiting' ORDER BY player;

-- ticket_status: state, wait, match and team; while waiting, the expected
-- remaining wait from the waits the ticks recorded for the ticket's tenth
-- of the rating range (of the players who waited longer than it so far),
-- and for a periodic queue the latest end of the current period.
SELECT matchmaker.create_queue('est', algorithm => 'periodic', max_wait => '10 minutes',
                               params => '{"batch": 4}');
-- Four low-rated players, two waited 10 s and two 100 s; four high-rated
-- ones waited 10 s.
SELECT count(matchmaker.enqueue('est', 'low' || i, 0.1 + i / 100.0)) FROM generate_series(1, 4) i;
UPDATE matchmaker.tickets SET enqueued_at = now() - CASE WHEN player IN ('low1', 'low2') THEN interval '10 s' ELSE interval '100 s' END
WHERE queue = 'est';
SELECT matchmaker.tick('est', now());
SELECT count(matchmaker.enqueue('est', 'high' || i, 0.9 + i / 100.0)) FROM generate_series(1, 4) i;
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '10 s' WHERE queue = 'est' AND state = 'waiting';
SELECT matchmaker.tick('est', now());
-- The estimate reads histograms of the waits (buckets a factor 2^(1/4)
-- wide, counts spread evenly inside).  newlow just came: of its tenth of
-- the rating range half waited 10 s, half 100 s, and the median falls at
-- the top of the bucket of 10 s (9.05 to 10.76 s): 11 s.  oldlow has
-- waited 60 s: of those who waited longer (100 s, in the bucket 86.1 to
-- 102.4 s) the median is 93.9 s, 34 s more.  newhigh: 10 s.
SELECT matchmaker.enqueue('est', 'newlow', 0.12) AS newlow, matchmaker.enqueue('est', 'oldlow', 0.13) AS oldlow,
       matchmaker.enqueue('est', 'newhigh', 0.88) AS newhigh \gset
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '60 s' WHERE id = :oldlow;
SELECT player, state, match_id, team, round(extract(epoch FROM expected_wait)) AS expected_s,
       next_round = (SELECT min(enqueued_at) + interval '10 minutes' FROM matchmaker.tickets
                     WHERE queue = 'est' AND state = 'waiting') AS next_round_at_max_wait
FROM (SELECT * FROM matchmaker.ticket_status(:newlow) UNION ALL SELECT * FROM matchmaker.ticket_status(:oldlow)
      UNION ALL SELECT * FROM matchmaker.ticket_status(:newhigh)) s;
-- A ticket that has waited longer than everyone recent: at the latest at max_wait.
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '200 s' WHERE id = :oldlow;
SELECT round(extract(epoch FROM expected_wait)) AS expected_s FROM matchmaker.ticket_status(:oldlow);
-- Ended tickets have no estimate.
SELECT player, state, waited BETWEEN '9 s' AND '11 s' AS waited_10s, match_id IS NOT NULL AS matched,
       team, expected_wait, next_round
FROM matchmaker.ticket_status((SELECT min(id) FROM matchmaker.tickets WHERE queue = 'est'));
SELECT * FROM matchmaker.ticket_status(-1);
SELECT * FROM matchmaker.ticket_status(NULL);

-- enqueue inserts the player's ticket, or returns the one that waits;
-- when the insert meets a ticket of the player that the lookup of the
-- waiting one then cannot find (here a trigger renames the player), it
-- tries again, up to ten times, then ends in a retryable error (40001),
-- not a unique violation.
SELECT matchmaker.create_queue('renamed', algorithm => 'greedy', max_wait => '1 hour');
CREATE FUNCTION lower_player() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN NEW.player := lower(NEW.player); RETURN NEW; END $$;
CREATE TRIGGER lower_player BEFORE INSERT ON matchmaker.tickets FOR EACH ROW EXECUTE FUNCTION lower_player();
SELECT matchmaker.enqueue('renamed', 'alice', 0.5) > 0 AS enqueued;
DO $$ BEGIN PERFORM matchmaker.enqueue('renamed', 'Alice', 0.5);
EXCEPTION WHEN serialization_failure THEN RAISE NOTICE 'serialization_failure: %', SQLERRM; END $$;
SELECT matchmaker.enqueue('renamed', 'Bob', 0.5) > 0 AS enqueued;
SELECT player, state FROM matchmaker.tickets WHERE queue = 'renamed' ORDER BY id;
DROP TRIGGER lower_player ON matchmaker.tickets;
DROP FUNCTION lower_player();

-- enqueue inserts without a statement what its INSERT would insert, and
-- leaves the insert to the statement when the table has more to it than
-- the extension gave it.  A CHECK constraint added to the table is
-- checked (with the statement's error and context) on new rows, and no
-- longer once dropped; a default added to a column is what the ticket
-- gets.
SELECT clock_timestamp() AS before_carol \gset
ALTER TABLE matchmaker.tickets ADD CONSTRAINT below_09 CHECK (rating <= 0.9) NOT VALID;
DO $$
DECLARE
    state text;
    message text;
    context text;
BEGIN
    PERFORM matchmaker.enqueue('renamed', 'carol', 0.95);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, context = PG_EXCEPTION_CONTEXT;
    RAISE NOTICE '% %; context: %', state, message, split_part(context, E'\n', 1);
END
$$;
SELECT matchmaker.enqueue('renamed', 'carol', 0.85) > 0 AS enqueued;
ALTER TABLE matchmaker.tickets DROP CONSTRAINT below_09;
SELECT matchmaker.enqueue('renamed', 'dave', 0.95) > 0 AS enqueued;
ALTER TABLE matchmaker.tickets ALTER COLUMN team SET DEFAULT 7;
SELECT matchmaker.enqueue('renamed', 'erin', 0.5) > 0 AS enqueued;
ALTER TABLE matchmaker.tickets ALTER COLUMN team DROP DEFAULT;
SELECT matchmaker.enqueue('renamed', 'frank', 0.5) > 0 AS enqueued;
-- The statement leaves state to its default: without one, the not-null
-- violation; with 'waiting' again, the ticket.  A constraint on tableoid
-- sees the table's.
ALTER TABLE matchmaker.tickets ALTER COLUMN state DROP DEFAULT;
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'grace', 0.5);
\set VERBOSITY default
ALTER TABLE matchmaker.tickets ALTER COLUMN state SET DEFAULT 'waiting';
ALTER TABLE matchmaker.tickets ADD CONSTRAINT own_table CHECK (tableoid = 'matchmaker.tickets'::regclass);
SELECT matchmaker.enqueue('renamed', 'grace', 0.5) > 0 AS enqueued;
ALTER TABLE matchmaker.tickets DROP CONSTRAINT own_table;
-- A CHECK calling a SQL function, which planning inlines: replacing the
-- function changes at once what the constraint lets in.
CREATE FUNCTION public.allowed_player(p text) RETURNS boolean IMMUTABLE LANGUAGE sql AS $$ SELECT p <> 'hank' $$;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT allowed CHECK (public.allowed_player(player)) NOT VALID;
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'hank', 0.5);
\set VERBOSITY default
CREATE OR REPLACE FUNCTION public.allowed_player(p text) RETURNS boolean IMMUTABLE LANGUAGE sql AS $$ SELECT p <> 'ivan' $$;
SELECT matchmaker.enqueue('renamed', 'hank', 0.5) > 0 AS enqueued;
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'ivan', 0.5);
\set VERBOSITY default
ALTER TABLE matchmaker.tickets DROP CONSTRAINT allowed;
DROP FUNCTION public.allowed_player(text);
-- A CHECK casting to a domain over a domain, neither with a constraint
-- yet: one added to the inner domain applies at once.
CREATE DOMAIN public.player_name AS text;
CREATE DOMAIN public.outer_name AS public.player_name;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT named CHECK ((player::public.outer_name) IS NOT NULL) NOT VALID;
SELECT matchmaker.enqueue('renamed', 'xavier', 0.5) > 0 AS enqueued;
ALTER DOMAIN public.player_name ADD CONSTRAINT no_x CHECK (VALUE NOT LIKE 'x%');
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'xena', 0.5);
\set VERBOSITY default
ALTER TABLE matchmaker.tickets DROP CONSTRAINT named;
DROP DOMAIN public.outer_name;
DROP DOMAIN public.player_name;
-- A CHECK whose function enqueues another player after replacing a
-- function (which makes enqueue learn the table again): the inner
-- enqueue leaves the outer one's insert whole, and both tickets are made.
CREATE FUNCTION public.nested_check(p text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF p = 'outer' THEN
        CREATE OR REPLACE FUNCTION public.nested_dummy() RETURNS int LANGUAGE sql AS 'SELECT 1';
        PERFORM matchmaker.enqueue('renamed', 'inner', 0.5);
    END IF;
    RETURN true;
END
$$;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT nested CHECK (public.nested_check(player)) NOT VALID;
SELECT matchmaker.enqueue('renamed', 'warm', 0.5) > 0 AS enqueued;
SELECT matchmaker.enqueue('renamed', 'outer', 0.5) > 0 AS enqueued;
ALTER TABLE matchmaker.tickets DROP CONSTRAINT nested;
DROP FUNCTION public.nested_check(text);
DROP FUNCTION public.nested_dummy();
SELECT player, state FROM matchmaker.tickets WHERE queue = 'renamed' AND player IN ('xavier', 'xena', 'warm', 'outer', 'inner') ORDER BY id;
-- A CHECK whose immutable function enqueues: planning the constraint while
-- enqueue learns the table runs it (constant folding), so the inner
-- enqueue comes while the outer one learns; it takes the statement rather
-- than learn under it, and the session's later enqueues still work.
CREATE FUNCTION public.folded_check(int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF current_setting('mm_test.arm', true) = 'on' THEN
        PERFORM set_config('mm_test.arm', 'off', false);
        PERFORM matchmaker.enqueue('renamed', 'folded_inner', 0.5);
    END IF;
    RETURN true;
END
$$;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT folded CHECK (public.folded_check(1)) NOT VALID;
SET mm_test.arm = on;
SELECT matchmaker.enqueue('renamed', 'folded_outer', 0.5) > 0 AS enqueued;
SELECT count(matchmaker.cancel(matchmaker.enqueue('renamed', 'folded_' || i, 0.5))) AS cancelled
FROM generate_series(1, 20) i;
ALTER TABLE matchmaker.tickets DROP CONSTRAINT folded;
DROP FUNCTION public.folded_check(int);
RESET mm_test.arm;
SELECT player, state FROM matchmaker.tickets
WHERE queue = 'renamed' AND player IN ('folded_inner', 'folded_outer', 'folded_1', 'folded_20') ORDER BY id;
-- Planning folds an immutable function's call to a constant and records
-- no dependency on it: once the function is replaced, enqueue checks the
-- new one, as the INSERT does.
CREATE FUNCTION public.max_rating() RETURNS float8 LANGUAGE sql IMMUTABLE AS 'SELECT 0.9::float8';
ALTER TABLE matchmaker.tickets ADD CONSTRAINT below_max CHECK (rating <= public.max_rating()) NOT VALID;
SELECT matchmaker.enqueue('renamed', 'max_a', 0.8) > 0 AS enqueued;
CREATE OR REPLACE FUNCTION public.max_rating() RETURNS float8 LANGUAGE sql IMMUTABLE AS 'SELECT 0.5::float8';
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'max_b', 0.8);
\set VERBOSITY default
ALTER TABLE matchmaker.tickets DROP CONSTRAINT below_max;
DROP FUNCTION public.max_rating();
-- A check whose planning would evaluate a call once is planned at each
-- enqueue, as the INSERT plans it: a built-in function of a text search
-- configuration that changes, and a function declared immutable that
-- reads a table.
CREATE TEXT SEARCH CONFIGURATION public.words (COPY = english);
ALTER TABLE matchmaker.tickets ADD CONSTRAINT has_words
    CHECK (length(to_tsvector('public.words'::regconfig, 'cats')::text) > 0) NOT VALID;
SELECT matchmaker.enqueue('renamed', 'ts_a', 0.5) > 0 AS enqueued;
ALTER TEXT SEARCH CONFIGURATION public.words DROP MAPPING FOR asciiword;
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'ts_b', 0.5);
\set VERBOSITY default
ALTER TABLE matchmaker.tickets DROP CONSTRAINT has_words;
DROP TEXT SEARCH CONFIGURATION public.words;
CREATE TABLE public.rating_cap (cap float8);
INSERT INTO public.rating_cap VALUES (1);
CREATE FUNCTION public.cap() RETURNS float8 LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN (SELECT cap FROM public.rating_cap);
END
$$;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT capped CHECK (rating <= public.cap()) NOT VALID;
SELECT matchmaker.enqueue('renamed', 'cap_a', 0.5) > 0 AS enqueued;
UPDATE public.rating_cap SET cap = 0.1;
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'cap_b', 0.5);
\set VERBOSITY default
ALTER TABLE matchmaker.tickets DROP CONSTRAINT capped;
DROP FUNCTION public.cap();
DROP TABLE public.rating_cap;
-- A built-in function written in SQL is inlined by planning, which parses
-- its body with the casts of the moment (text || anynonarray casts its
-- right operand to text): a cast created since applies.
CREATE TYPE public.mood AS ENUM ('happy', 'sad');
CREATE FUNCTION public.mood_text(public.mood) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT upper($1::name::text)
$$;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT moody CHECK (('p' || player::public.mood) <> 'pSAD') NOT VALID;
SELECT matchmaker.enqueue('renamed', 'happy', 0.5) > 0 AS enqueued;
CREATE CAST (public.mood AS text) WITH FUNCTION public.mood_text(public.mood);
\set VERBOSITY terse
SELECT matchmaker.enqueue('renamed', 'sad', 0.5);
\set VERBOSITY default
ALTER TABLE matchmaker.tickets DROP CONSTRAINT moody;
DROP CAST (public.mood AS text);
DROP FUNCTION public.mood_text(public.mood);
DROP TYPE public.mood;
-- An error while enqueue learns the table (an index predicate's function,
-- run when the predicate is loaded) carries the statement's context line.
CREATE FUNCTION public.pred_guard(int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF current_setting('mm_test.refuse', true) = 'on' THEN
        RAISE EXCEPTION 'predicate refused';
    END IF;
    RETURN true;
END
$$;
CREATE INDEX guarded ON matchmaker.tickets (rating) WHERE public.pred_guard(1);
SELECT matchmaker.enqueue('renamed', 'guard_a', 0.5) > 0 AS enqueued;
SET mm_test.refuse = on;
ALTER INDEX matchmaker.guarded SET (fillfactor = 80);
SELECT matchmaker.enqueue('renamed', 'guard_b', 0.5);
RESET mm_test.refuse;
SELECT matchmaker.enqueue('renamed', 'guard_c', 0.5) > 0 AS enqueued;
DROP INDEX matchmaker.guarded;
DROP FUNCTION public.pred_guard(int);
-- A relation an inlined function names, dropped and made again: enqueue
-- plans the constraint again and uses the new one.
CREATE SEQUENCE public.check_seq;
CREATE FUNCTION public.seq_ok(p text) RETURNS boolean LANGUAGE sql AS $$ SELECT nextval('public.check_seq') > 0 $$;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT seq_ok CHECK (public.seq_ok(player)) NOT VALID;
SELECT matchmaker.enqueue('renamed', 'seq_a', 0.5) > 0 AS enqueued;
DROP SEQUENCE public.check_seq;
CREATE SEQUENCE public.check_seq;
SELECT matchmaker.enqueue('renamed', 'seq_b', 0.5) > 0 AS enqueued;
SELECT last_value FROM public.check_seq;
ALTER TABLE matchmaker.tickets DROP CONSTRAINT seq_ok;
DROP FUNCTION public.seq_ok(text);
DROP SEQUENCE public.check_seq;
-- A constraint's function reads the table under a snapshot of the insert's
-- own, as the statement's: the enqueues before it in the same statement
-- count, and the third of a queue allowing two waiting tickets fails.
SELECT matchmaker.create_queue('quota', algorithm => 'greedy', max_wait => '1 hour');
CREATE FUNCTION public.quota_ok(q text) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT q <> 'quota' OR count(*) < 2 FROM matchmaker.tickets WHERE queue = q AND state = 'waiting'
$$;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT quota CHECK (public.quota_ok(queue)) NOT VALID;
\set VERBOSITY terse
SELECT matchmaker.enqueue('quota', 'q' || i, 0.5) FROM generate_series(1, 3) i;
\set VERBOSITY default
SELECT count(*) AS waiting FROM matchmaker.tickets WHERE queue = 'quota';
SELECT count(*) AS enqueued FROM (SELECT matchmaker.enqueue('quota', 'q' || i, 0.5) FROM generate_series(1, 2) i) e;
ALTER TABLE matchmaker.tickets DROP CONSTRAINT quota;
DROP FUNCTION public.quota_ok(text);
SELECT matchmaker.drop_queue('quota', force => true);
-- The queues a session keeps are read again once a function changes: with
-- the trigger's function replaced, a change to a queue is seen at once.
BEGIN;
SELECT matchmaker.enqueue('renamed', 'cache_a', 0.5) > 0 AS enqueued;
CREATE OR REPLACE FUNCTION matchmaker.queues_changed() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END';
SELECT matchmaker.alter_queue('renamed', rating_max => 10) IS NOT NULL AS altered;
SELECT matchmaker.enqueue('renamed', 'cache_b', 5) > 0 AS enqueued;
ROLLBACK;
SELECT player, state FROM matchmaker.tickets
WHERE queue = 'renamed' AND player IN ('max_a', 'max_b', 'ts_a', 'ts_b', 'cap_a', 'cap_b', 'happy', 'sad', 'guard_a', 'guard_b', 'guard_c', 'seq_a', 'seq_b', 'cache_a', 'cache_b') ORDER BY id;
-- An index added to the table (on an expression, with a predicate) holds
-- the tickets enqueued after it that its predicate admits, read back
-- through it alone; once dropped, enqueue no longer writes to it.
CREATE INDEX tickets_upper ON matchmaker.tickets (upper(player)) WHERE rating > 0.4;
SELECT matchmaker.enqueue('renamed', 'judy', 0.5) > 0 AS enqueued;
SELECT matchmaker.enqueue('renamed', 'kate', 0.3) > 0 AS enqueued;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT player FROM matchmaker.tickets WHERE upper(player) IN ('HANK', 'JUDY', 'KATE') AND rating > 0.4;
SELECT player FROM matchmaker.tickets WHERE upper(player) IN ('HANK', 'JUDY', 'KATE') AND rating > 0.4 ORDER BY player;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP INDEX matchmaker.tickets_upper;
SELECT matchmaker.enqueue('renamed', 'leo', 0.5) > 0 AS enqueued;
SELECT player, rating, state, team, attributes, enqueued_by::regrole, enqueued_by_name,
       enqueued_at BETWEEN :'before_carol' AND clock_timestamp() AS enqueued_now
FROM matchmaker.tickets WHERE queue = 'renamed' AND player IN ('carol', 'dave', 'erin', 'frank', 'grace') ORDER BY id;
-- In a transaction that may not write, enqueue fails as its INSERT would.
BEGIN READ ONLY;
SELECT matchmaker.enqueue('renamed', 'gina', 0.5);
ROLLBACK;
SELECT count(*) AS gina FROM matchmaker.tickets WHERE player = 'gina';
