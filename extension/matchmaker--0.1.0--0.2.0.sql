\echo Use "ALTER EXTENSION matchmaker UPDATE TO '0.2.0'" to load this file. \quit

-- 0.1.0 to 0.2.0: roles matchmaker_client and matchmaker_admin, tickets
-- owned by the role that enqueued them, ticket_status, the functions that
-- write the tables run as the extension's owner, and only the owner keeps
-- privileges on the tables (see matchmaker--0.2.0.sql for why).

-- The roles game backends and operators are granted (roles are shared by
-- the cluster's databases: created when missing, never dropped).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'matchmaker_client') THEN
        CREATE ROLE matchmaker_client NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'matchmaker_admin') THEN
        CREATE ROLE matchmaker_admin NOLOGIN;
    END IF;
END
$$;

-- Tickets enqueued before this version belong to the extension's owner
-- (0.1.0 did not record who enqueued them).
ALTER TABLE matchmaker.tickets ADD COLUMN enqueued_by regrole;
UPDATE matchmaker.tickets
SET enqueued_by = (SELECT e.extowner FROM pg_catalog.pg_extension e
                   WHERE e.extname OPERATOR(pg_catalog.=) 'matchmaker')::regrole;
ALTER TABLE matchmaker.tickets ALTER COLUMN enqueued_by SET NOT NULL;

-- match_cost takes the players' attributes, for queues with several criteria.
DROP FUNCTION matchmaker.match_cost(text, float8[], float8[], integer);
CREATE FUNCTION matchmaker.match_cost(queue text, ratings float8[], waits float8[], bots integer DEFAULT 0,
                                      attributes jsonb[] DEFAULT NULL)
RETURNS float8
AS 'MODULE_PATHNAME', 'mm_match_cost'
LANGUAGE C STABLE;
COMMENT ON FUNCTION matchmaker.match_cost IS 'Cost of one game in a queue (Schlup eq. 1): spread of the rating and the queue''s criteria (from attributes) plus waits.';

-- enqueue and cancel move to entry points that record and check the owner.
CREATE OR REPLACE FUNCTION matchmaker.enqueue(queue text, player text, rating float8, attributes jsonb DEFAULT '{}')
RETURNS bigint
AS 'MODULE_PATHNAME', 'mm_enqueue_0_2'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.enqueue IS 'Put a player in a queue; returns the ticket id (the same id while that ticket waits). The ticket belongs to the calling role.';

CREATE OR REPLACE FUNCTION matchmaker.cancel(ticket bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'mm_cancel_0_2'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.cancel IS 'Cancel a waiting ticket of the calling role; false when it is no longer waiting.';

ALTER FUNCTION matchmaker.create_queue(text, integer, integer, text, interval, float8, float8, interval, jsonb)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION matchmaker.alter_queue(text, integer, integer, text, interval, float8, float8, interval, jsonb)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION matchmaker.drop_queue(text, boolean)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION matchmaker.tick(text, timestamptz)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE FUNCTION matchmaker.ticket_status(ticket bigint,
    OUT queue text, OUT player text, OUT state text, OUT enqueued_at timestamptz,
    OUT waited interval, OUT match_id bigint, OUT team integer,
    OUT expected_wait interval, OUT next_round timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'mm_ticket_status'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.ticket_status IS 'A ticket''s state, wait so far, match and team, and while it waits the expected remaining wait; for the role that enqueued it and for matchmaker_admin.';

-- ---------------------------------------------------------------------
-- Privileges.  PUBLIC gets nothing.  matchmaker_client (game backends):
-- enqueue, cancel and read its own tickets.  matchmaker_admin (operators):
-- queues, tick, simulation, audit and check, and reading every table.
-- Neither may write a table except through the functions.
-- ---------------------------------------------------------------------

-- Start from owner-only privileges on the schema and every table, view,
-- sequence and function in it, whatever default privileges or earlier
-- grants gave (0.1.0's documentation had game backends granted table
-- access).
DO $$
DECLARE
    obj record;
    who oid;
BEGIN
    FOR obj IN
        SELECT CASE WHEN c.relkind OPERATOR(pg_catalog.=) 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind,
               c.oid::pg_catalog.regclass::pg_catalog.text AS name, c.relacl AS acl, c.relowner AS owner
        FROM pg_catalog.pg_class c
        WHERE c.relnamespace OPERATOR(pg_catalog.=) 'matchmaker'::pg_catalog.regnamespace
          AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'v', 'S']::"char"[])
        UNION ALL
        SELECT 'FUNCTION', p.oid::pg_catalog.regprocedure::pg_catalog.text, p.proacl, p.proowner
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace OPERATOR(pg_catalog.=) 'matchmaker'::pg_catalog.regnamespace
        UNION ALL
        SELECT 'SCHEMA', 'matchmaker', n.nspacl, n.nspowner
        FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) 'matchmaker'
    LOOP
        FOR who IN SELECT DISTINCT a.grantee FROM pg_catalog.aclexplode(obj.acl) a
                   WHERE a.grantee OPERATOR(pg_catalog.<>) obj.owner
        LOOP
            EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %s', obj.kind, obj.name,
                CASE WHEN who OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                     ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(who)) END);
        END LOOP;
    END LOOP;
END
$$;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA matchmaker FROM PUBLIC;
GRANT USAGE ON SCHEMA matchmaker TO matchmaker_client, matchmaker_admin;

GRANT EXECUTE ON FUNCTION
    matchmaker.enqueue(text, text, float8, jsonb),
    matchmaker.cancel(bigint),
    matchmaker.ticket_status(bigint)
TO matchmaker_client;

GRANT EXECUTE ON FUNCTION
    matchmaker.create_queue(text, integer, integer, text, interval, float8, float8, interval, jsonb),
    matchmaker.alter_queue(text, integer, integer, text, interval, float8, float8, interval, jsonb),
    matchmaker.drop_queue(text, boolean),
    matchmaker.tick(text, timestamptz),
    matchmaker.match_cost(text, float8[], float8[], integer, jsonb[]),
    matchmaker.simulate(text, text, jsonb),
    matchmaker.simulate_summary(text, text, jsonb),
    matchmaker.optimal_cost(text, text),
    matchmaker.audit(text, timestamptz, timestamptz),
    matchmaker.check(),
    matchmaker.ticket_status(bigint)
TO matchmaker_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA matchmaker TO matchmaker_admin;
