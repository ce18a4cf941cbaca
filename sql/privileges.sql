-- Roles and privileges: what matchmaker_client, matchmaker_admin and a role
-- with neither may do.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
DROP ROLE IF EXISTS regress_mm_client, regress_mm_client2, regress_mm_admin, regress_mm_nobody;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default

-- The extension created both roles; they cannot log in.
SELECT rolname, rolcanlogin, rolsuper, rolcreaterole, rolcreatedb
FROM pg_roles WHERE rolname LIKE 'matchmaker\_%' ORDER BY rolname;

-- PUBLIC may execute none of the functions; which role may execute which.
SELECT p.proname,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public,
       has_function_privilege('matchmaker_client', p.oid, 'EXECUTE') AS client,
       has_function_privilege('matchmaker_admin', p.oid, 'EXECUTE') AS admin,
       p.prosecdef AS security_definer, p.proconfig
FROM pg_proc p WHERE p.pronamespace = 'matchmaker'::regnamespace ORDER BY p.proname;

-- No role but the owner may write a table, sequence or view.
SELECT c.relname, r.rolname,
       has_table_privilege(r.rolname, c.oid, 'SELECT') AS sel,
       has_table_privilege(r.rolname, c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER') AS write
FROM pg_class c, (VALUES ('public'), ('matchmaker_client'), ('matchmaker_admin')) r(rolname)
WHERE c.relnamespace = 'matchmaker'::regnamespace AND c.relkind IN ('r', 'v', 'S')
ORDER BY c.relname, r.rolname;

CREATE ROLE regress_mm_client IN ROLE matchmaker_client;
CREATE ROLE regress_mm_client2 IN ROLE matchmaker_client;
CREATE ROLE regress_mm_admin IN ROLE matchmaker_admin;
CREATE ROLE regress_mm_nobody;

SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour');

-- The client enqueues, retries, reads and cancels its own tickets.
SET ROLE regress_mm_client;
SELECT matchmaker.enqueue('duel', 'ann', 0.5) AS ann \gset
SELECT matchmaker.enqueue('duel', 'ann', 0.5) = :ann AS same_ticket;
SELECT matchmaker.enqueue('duel', 'bob', 0.6) AS bob \gset
SELECT queue, player, state, waited >= '0'::interval AS waited, match_id, team
FROM matchmaker.ticket_status(:bob);
SELECT matchmaker.cancel(:bob);
SELECT state FROM matchmaker.ticket_status(:bob);
-- a refused call leaves the caller as it was, also when the error is caught
SELECT matchmaker.enqueue('duel', 'x', 5);
SELECT current_user;
DO $$
BEGIN
    PERFORM matchmaker.enqueue('duel', 'x', 5);
EXCEPTION WHEN numeric_value_out_of_range THEN
    RAISE NOTICE 'caught; current_user is %', current_user;
END
$$;
-- and nothing else
SELECT count(*) FROM matchmaker.tickets;
INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, enqueued_by, enqueued_by_name)
VALUES ('duel', 'eve', 0.5, now(), 'regress_mm_client'::regrole, 'regress_mm_client');
UPDATE matchmaker.tickets SET rating = 0.9;
SELECT matchmaker.create_queue('mine');
SELECT matchmaker.alter_queue('duel', max_wait => '1 s');
SELECT matchmaker.drop_queue('duel', force => true);
SELECT matchmaker.tick('duel');
SELECT matchmaker.match_cost('duel', '{0.1,0.2}', '{0,0}');
SELECT * FROM matchmaker.simulate('duel', 'SELECT 1::bigint, 0.5::float8, 0::float8');
SELECT * FROM matchmaker.check();
SELECT * FROM matchmaker.audit('duel', now() - interval '1 hour', now());
RESET ROLE;

-- Another client may not cancel or read the first one's ticket, nor take
-- over its waiting player.
SET ROLE regress_mm_client2;
SELECT matchmaker.cancel(:ann);
SELECT * FROM matchmaker.ticket_status(:ann);
SELECT matchmaker.enqueue('duel', 'ann', 0.5);
SELECT matchmaker.enqueue('duel', 'cid', 0.52) AS cid \gset
RESET ROLE;
SELECT player, state, enqueued_by::regrole AS enqueued_by FROM matchmaker.tickets ORDER BY id;

-- The admin manages queues, ticks, simulates, audits, checks and removes
-- old rows, reads every table and every ticket, and writes none directly.
SET ROLE regress_mm_admin;
SELECT matchmaker.create_queue('squad', team_size => 2, algorithm => 'periodic');
SELECT matchmaker.alter_queue('squad', max_wait => '2 minutes');
SELECT matchmaker.tick('duel');
SELECT state, match_id IS NOT NULL AS has_match, team IS NOT NULL AS has_team
FROM matchmaker.ticket_status(:ann);
SELECT count(*) AS matches FROM matchmaker.matches;
SELECT matchmaker.match_cost('duel', '{0.1,0.2}', '{0,0}');
SELECT games FROM matchmaker.simulate_summary('duel', 'SELECT i::bigint, i / 10.0, i::float8 FROM generate_series(1, 4) i');
SELECT count(*) FROM matchmaker.check();
SELECT matches, players FROM matchmaker.audit('duel', now() - interval '1 hour', now() + interval '1 hour');
SELECT matchmaker.drop_queue('squad');
-- purge: not with a cut-off in the future; before now, the match of ann and
-- cid with its two tickets, and bob's cancelled ticket (4 rows)
SELECT matchmaker.purge('duel', now() + interval '1 hour');
SELECT matchmaker.purge('duel', now()) AS removed;
SELECT count(*) AS matches FROM matchmaker.matches;
SELECT matchmaker.enqueue('duel', 'dan', 0.5);
SELECT matchmaker.cancel(:cid);
DELETE FROM matchmaker.matches;
UPDATE matchmaker.tickets SET state = 'waiting';
INSERT INTO matchmaker.queues (name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params)
VALUES ('x', 1, 2, 'greedy', '1 s', 0, 1, '1 s', '{}');
RESET ROLE;

-- A role with neither may not even look up the schema's functions.
SET ROLE regress_mm_nobody;
SELECT matchmaker.enqueue('duel', 'zed', 0.5);
SELECT * FROM matchmaker.ticket_status(:cid);
SELECT count(*) FROM matchmaker.queues;
RESET ROLE;

-- A ticket belongs to the role that called enqueue: through a SECURITY
-- DEFINER function of a client, the function's owner, not the session's role.
CREATE FUNCTION public.join_duel(p text) RETURNS bigint LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT matchmaker.enqueue('duel', p, 0.5) $$;
ALTER FUNCTION public.join_duel(text) OWNER TO regress_mm_client2;
GRANT USAGE ON SCHEMA public TO regress_mm_nobody;
SET ROLE regress_mm_nobody;
SELECT public.join_duel('via_wrapper') AS via \gset
RESET ROLE;
SELECT player, enqueued_by::regrole AS enqueued_by FROM matchmaker.tickets WHERE id = :via;
DROP FUNCTION public.join_duel(text);
REVOKE USAGE ON SCHEMA public FROM regress_mm_nobody;

-- Superusers act for any role.
SET ROLE regress_mm_client2;
SELECT matchmaker.enqueue('duel', 'eve', 0.5) AS eve \gset
RESET ROLE;
SELECT matchmaker.cancel(:eve);
SELECT state FROM matchmaker.ticket_status(:eve);
SELECT count(*) FROM matchmaker.check();

-- A queue's settings read as the caller, for the functions that run as the
-- caller (match_cost): a grant of SELECT on the columns read is enough, and
-- row security on matchmaker.queues hides a queue as a query would.
CREATE ROLE regress_mm_reader;
GRANT USAGE ON SCHEMA matchmaker TO regress_mm_reader;
GRANT EXECUTE ON FUNCTION matchmaker.match_cost(text, float8[], float8[], integer, jsonb[]) TO regress_mm_reader;
SET ROLE regress_mm_reader;
SELECT matchmaker.match_cost('duel', '{0.1,0.2}', '{0,0}');
RESET ROLE;
GRANT SELECT (name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params, created_at)
    ON matchmaker.queues TO regress_mm_reader;
SET ROLE regress_mm_reader;
SELECT matchmaker.match_cost('duel', '{0.1,0.2}', '{0,0}');
RESET ROLE;
GRANT SELECT ON matchmaker.queues TO regress_mm_reader;
ALTER TABLE matchmaker.queues ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_only_mine ON matchmaker.queues FOR SELECT TO regress_mm_reader USING (name = 'mine');
SET ROLE regress_mm_reader;
SELECT matchmaker.match_cost('duel', '{0.1,0.2}', '{0,0}');
RESET ROLE;
DROP POLICY regress_only_mine ON matchmaker.queues;
ALTER TABLE matchmaker.queues DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON matchmaker.queues FROM regress_mm_reader;
REVOKE ALL ON SCHEMA matchmaker FROM regress_mm_reader;
DROP OWNED BY regress_mm_reader;
DROP ROLE regress_mm_reader;

DROP EXTENSION matchmaker CASCADE;
DROP ROLE regress_mm_client, regress_mm_client2, regress_mm_admin, regress_mm_nobody;

-- enqueue's insert needs what its statement needs of the extension's
-- owner: INSERT, and SELECT for what it returns.  An owner that gave up
-- SELECT on the tickets (and is no longer a superuser) gets the
-- statement's refusal, with no ticket made.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS matchmaker CASCADE;
DROP ROLE IF EXISTS regress_mm_installer;
RESET client_min_messages;
CREATE ROLE regress_mm_installer SUPERUSER;
SET ROLE regress_mm_installer;
CREATE EXTENSION matchmaker;
SELECT matchmaker.create_queue('owned', algorithm => 'greedy', max_wait => '1 hour');
REVOKE SELECT ON matchmaker.tickets FROM regress_mm_installer;
RESET ROLE;
ALTER ROLE regress_mm_installer NOSUPERUSER;
SELECT matchmaker.enqueue('owned', 'a', 0.5);
SELECT count(*) AS tickets FROM matchmaker.tickets;
ALTER ROLE regress_mm_installer SUPERUSER;
DROP EXTENSION matchmaker CASCADE;
DROP SCHEMA matchmaker;
DROP ROLE regress_mm_installer;
