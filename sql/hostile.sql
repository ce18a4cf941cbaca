-- Hostile objects: functions, aggregates and operators named like the ones
-- matchmaker uses, planted in public and pg_temp by an untrusted role that
-- may create there, ahead of pg_catalog in search_path.  Installing the
-- extension and calling every function must not use any of them (each
-- raises "hostile ... called").  Also: a schema matchmaker of another role,
-- and an object already in it, stop CREATE EXTENSION.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
DROP SCHEMA IF EXISTS matchmaker CASCADE;
DROP ROLE IF EXISTS regress_mm_evil;
RESET client_min_messages;
\set VERBOSITY default

CREATE ROLE regress_mm_evil IN ROLE matchmaker_client;
GRANT CREATE ON SCHEMA public TO regress_mm_evil;

-- A schema named matchmaker that another role owns, or an object already in
-- the schema: refused.
CREATE SCHEMA matchmaker AUTHORIZATION regress_mm_evil;
CREATE EXTENSION matchmaker;
DROP SCHEMA matchmaker;
CREATE SCHEMA matchmaker;
CREATE TABLE matchmaker.tickets (id bigint);
CREATE EXTENSION matchmaker;
DROP SCHEMA matchmaker CASCADE;
SELECT count(*) FROM pg_extension WHERE extname = 'matchmaker';

SET ROLE regress_mm_evil;
-- One function per signature, each raising; operators on every type the
-- extension compares or computes with.
CREATE FUNCTION public.hostile(what text) RETURNS void LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'hostile % called', what; END $$;
DO $$
DECLARE
    t text;
    op text;
BEGIN
    FOREACH t IN ARRAY ARRAY['text', 'bigint', 'integer', 'double precision', 'timestamptz', 'interval', 'boolean', 'jsonb', 'regrole'] LOOP
        FOREACH op IN ARRAY ARRAY['=', '<>', '<', '<=', '>', '>=', '+', '-', '*', '/', '||'] LOOP
            EXECUTE format('CREATE FUNCTION public.%I(a %s, b %s) RETURNS %s LANGUAGE plpgsql AS $f$ BEGIN PERFORM public.hostile(%L); RETURN NULL; END $f$',
                           'op_' || md5(op || t), t, t, t, op || ' on ' || t);
            EXECUTE format('CREATE OPERATOR public.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = public.%I)',
                           op, t, t, 'op_' || md5(op || t));
        END LOOP;
    END LOOP;
END
$$;
CREATE FUNCTION public.hostile_tsi(a timestamptz, b interval) RETURNS timestamptz LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('timestamptz + interval'); RETURN NULL; END $$;
CREATE OPERATOR public.+ (LEFTARG = timestamptz, RIGHTARG = interval, FUNCTION = public.hostile_tsi);
CREATE OPERATOR public.- (LEFTARG = timestamptz, RIGHTARG = interval, FUNCTION = public.hostile_tsi);
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('now()'); RETURN NULL; END $$;
CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('clock_timestamp()'); RETURN NULL; END $$;
CREATE FUNCTION public.nextval(regclass) RETURNS bigint LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('nextval()'); RETURN NULL; END $$;
CREATE FUNCTION public.unnest(bigint[]) RETURNS SETOF bigint LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('unnest()'); END $$;
CREATE FUNCTION public.format(text, VARIADIC text[]) RETURNS text LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('format()'); RETURN NULL; END $$;
CREATE FUNCTION public.date_part(text, timestamptz) RETURNS double precision LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('date_part()'); RETURN NULL; END $$;
CREATE FUNCTION public.cardinality(bigint[]) RETURNS integer LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('cardinality()'); RETURN NULL; END $$;
CREATE FUNCTION public.current_setting(text, boolean) RETURNS text LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('current_setting()'); RETURN NULL; END $$;
CREATE FUNCTION public.current_database() RETURNS name LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('current_database()'); RETURN NULL; END $$;
CREATE FUNCTION public.hostile_acc(s bigint, v bigint) RETURNS bigint LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('an aggregate'); RETURN NULL; END $$;
CREATE AGGREGATE public.count(bigint) (SFUNC = public.hostile_acc, STYPE = bigint);
CREATE AGGREGATE public.sum(bigint) (SFUNC = public.hostile_acc, STYPE = bigint);
-- Same-named functions in public and a table in pg_temp for each of the
-- extension's tables.
CREATE FUNCTION public.enqueue(queue text, player text, rating float8, attributes jsonb DEFAULT '{}')
RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN PERFORM public.hostile('public.enqueue()'); RETURN NULL; END $$;
CREATE TEMP TABLE tickets (id bigint, queue text, state text);
CREATE TEMP TABLE queues (name text);
CREATE TEMP TABLE matches (id bigint);
CREATE FUNCTION pg_temp.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql
AS $$ BEGIN PERFORM public.hostile('pg_temp.clock_timestamp()'); RETURN NULL; END $$;
RESET ROLE;

-- The superuser installs and runs everything with the hostile objects
-- first in search_path (the temporary tables come first anyway).  The
-- statements below qualify their own operators; an unqualified one shows
-- that the trap is armed.
SET search_path = public, pg_catalog;
SELECT 1 = 1;
CREATE EXTENSION matchmaker;
SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour', rating_min => 0, rating_max => 3000);
SELECT matchmaker.create_queue('pairs', algorithm => 'difference_wait', max_wait => '1 hour');
SELECT matchmaker.alter_queue('duel', tick => '2 s');
SELECT matchmaker.enqueue('duel', 'p' OPERATOR(pg_catalog.||) i, i OPERATOR(pg_catalog.*) 100, '{"region": "eu"}')
FROM generate_series(1, 5) i;
SELECT matchmaker.enqueue('duel', 'p1', 100);
SELECT matchmaker.cancel(5);
SELECT matchmaker.tick('duel');
SELECT matchmaker.enqueue('pairs', 'x', 0.4), matchmaker.enqueue('pairs', 'y', 0.45);
SELECT matchmaker.tick('pairs');
SELECT count(*) FROM matchmaker.provisional;
SELECT state, match_id IS NOT NULL AS matched FROM matchmaker.ticket_status(1);
SELECT matchmaker.match_cost('duel', '{100,200}', '{1,2}');
SELECT games FROM matchmaker.simulate_summary('duel',
    'SELECT i::bigint, i::float8, i::float8 FROM pg_catalog.generate_series(1, 6) i');
SELECT count(*) FROM matchmaker.simulate('duel',
    'SELECT i::bigint, i::float8, i::float8 FROM pg_catalog.generate_series(1, 6) i');
SELECT matchmaker.optimal_cost('duel',
    'SELECT i::bigint, i::float8, i::float8 FROM pg_catalog.generate_series(1, 6) i') OPERATOR(pg_catalog.>) 0.0 AS optimal;
SELECT matches FROM matchmaker.audit('duel', '-infinity', 'infinity');
SELECT * FROM matchmaker.check();
SELECT matchmaker.drop_queue('pairs', force => true);
-- The same as the untrusted client, with its objects first.
SET ROLE regress_mm_evil;
SET search_path = pg_temp, public, pg_catalog;
SELECT matchmaker.enqueue('duel', 'e1', 1500) AS e1 \gset
SELECT matchmaker.enqueue('duel', 'e1', 1500) = :e1 AS same_ticket;
SELECT queue, player, state FROM matchmaker.ticket_status(:e1);
SELECT matchmaker.cancel(:e1);
RESET ROLE;
RESET search_path;
SELECT count(*) AS problems FROM matchmaker.check();

-- The trigger function of matchmaker.queues cannot be called by itself.
SELECT matchmaker.queues_changed();

DROP EXTENSION matchmaker CASCADE;
DROP OWNED BY regress_mm_evil;
DROP ROLE regress_mm_evil;
