-- Upgrade path: install 0.1.0, use it, ALTER EXTENSION matchmaker UPDATE;
-- the data survives, the queue keeps working, and the catalog is exactly
-- what a fresh install of the new version creates.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
DROP SCHEMA IF EXISTS matchmaker CASCADE;
RESET client_min_messages;
\set VERBOSITY default

CREATE EXTENSION matchmaker VERSION '0.1.0';
SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour');
SELECT matchmaker.enqueue('duel', p, r) FROM (VALUES ('a', 0.1), ('b', 0.2), ('c', 0.9)) v(p, r);
SELECT matchmaker.tick('duel');
SELECT matchmaker.enqueue('duel', 'd', 0.5) AS d \gset
SELECT matchmaker.cancel(:d);

-- 0.1.0 had game backends granted table access; the update takes it back.
CREATE ROLE regress_mm_old_backend;
GRANT USAGE ON SCHEMA matchmaker TO regress_mm_old_backend;
GRANT SELECT ON matchmaker.queues TO regress_mm_old_backend;
GRANT SELECT, INSERT, UPDATE ON matchmaker.tickets TO regress_mm_old_backend;
GRANT USAGE ON SEQUENCE matchmaker.tickets_id_seq TO regress_mm_old_backend;

-- The versions a database can move between.
SELECT source, target, path FROM pg_extension_update_paths('matchmaker') ORDER BY 1, 2;

ALTER EXTENSION matchmaker UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'matchmaker';

SELECT c.relname, has_table_privilege('regress_mm_old_backend', c.oid, 'SELECT,INSERT,UPDATE') AS table_access,
       has_schema_privilege('regress_mm_old_backend', 'matchmaker', 'USAGE') AS schema_usage
FROM pg_class c WHERE c.relnamespace = 'matchmaker'::regnamespace AND c.relkind IN ('r', 'S') ORDER BY 1;

-- Old tickets belong to the extension's owner; nothing else changed.
SELECT id, player, state, match_id IS NOT NULL AS matched,
       enqueued_by = (SELECT extowner FROM pg_extension WHERE extname = 'matchmaker')::regrole AS owner
FROM matchmaker.tickets ORDER BY id;
SELECT count(*) AS problems FROM matchmaker.check();
-- The queue works on: a retry returns the waiting ticket, a new player is matched.
SELECT matchmaker.enqueue('duel', 'c', 0.9);
SELECT matchmaker.enqueue('duel', 'e', 0.8);
SELECT matchmaker.tick('duel');
SELECT player, state, team IS NOT NULL AS has_team FROM matchmaker.tickets WHERE player IN ('c', 'e');
SELECT state FROM matchmaker.ticket_status(1);
-- The same session ticked before the update, and reads the updated table
-- as it is now: a party (a column the update added) plays in one team.
SELECT matchmaker.create_queue('duo', team_size => 2, teams => 2, algorithm => 'greedy', max_wait => '1 hour');
SELECT cardinality(matchmaker.enqueue_party('duo', ARRAY['pa', 'pb'], ARRAY[0.9, 0.9])) AS members;
SELECT matchmaker.enqueue('duo', p, 0.1) > 0 AS alone FROM (VALUES ('pc'), ('pd')) v(p);
SELECT matchmaker.tick('duo');
SELECT count(DISTINCT team) AS party_teams FROM matchmaker.tickets WHERE queue = 'duo' AND player IN ('pa', 'pb');
SELECT count(*) AS problems FROM matchmaker.check();
SELECT matchmaker.drop_queue('duo', force => true);

-- The catalog after the update: functions (definition, owner's privileges,
-- comment), columns, constraints, indexes, table privileges, and what
-- pg_dump keeps.
-- Privileges as a sorted list (a NULL ACL means the default one).
CREATE FUNCTION pg_temp.acl_text(acl aclitem[], kind "char", owner oid) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(format('%s:%s:%s', a.grantee::regrole, a.privilege_type, a.is_grantable), ' '
                      ORDER BY a.grantee::regrole::text, a.privilege_type)
    FROM aclexplode(coalesce(acl, acldefault(kind, owner))) a
$$;
CREATE FUNCTION pg_temp.matchmaker_catalog() RETURNS SETOF text LANGUAGE sql AS $$
    SELECT 'function ' || pg_get_functiondef(p.oid) || ' acl ' || pg_temp.acl_text(p.proacl, 'f', p.proowner)
           || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
    FROM pg_proc p WHERE p.pronamespace = 'matchmaker'::regnamespace AND p.prokind <> 'a'
  UNION ALL
    SELECT format('aggregate %s sfunc %s stype %s init %s acl %s comment %s', p.oid::regprocedure,
                  g.aggtransfn::regprocedure, format_type(g.aggtranstype, NULL), g.agginitval,
                  pg_temp.acl_text(p.proacl, 'f', p.proowner), coalesce(obj_description(p.oid, 'pg_proc'), ''))
    FROM pg_proc p JOIN pg_aggregate g ON g.aggfnoid = p.oid WHERE p.pronamespace = 'matchmaker'::regnamespace
  UNION ALL
    SELECT format('column %s.%s %s %s %s not null %s default %s', c.relname, a.attnum, a.attname,
                  format_type(a.atttypid, a.atttypmod), c.relkind, a.attnotnull,
                  pg_get_expr(d.adbin, d.adrelid))
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
    WHERE c.relnamespace = 'matchmaker'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
    SELECT format('relation %s %s acl %s comment %s', c.relname, c.relkind,
                  pg_temp.acl_text(c.relacl, CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner),
                  obj_description(c.oid, 'pg_class'))
    FROM pg_class c WHERE c.relnamespace = 'matchmaker'::regnamespace
  UNION ALL
    SELECT 'index ' || pg_get_indexdef(i.indexrelid)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
    WHERE c.relnamespace = 'matchmaker'::regnamespace
  UNION ALL
    SELECT format('constraint %s %s', conname, pg_get_constraintdef(oid))
    FROM pg_constraint WHERE connamespace = 'matchmaker'::regnamespace
  UNION ALL
    SELECT 'view ' || pg_get_viewdef('matchmaker.provisional'::regclass)
  UNION ALL
    SELECT 'schema acl ' || pg_temp.acl_text(nspacl, 'n', nspowner) FROM pg_namespace WHERE nspname = 'matchmaker'
  UNION ALL
    SELECT 'dumped ' || t.oid::regclass::text
    FROM pg_extension e, unnest(e.extconfig) t(oid) WHERE e.extname = 'matchmaker'
$$;
CREATE TEMP TABLE upgraded AS SELECT * FROM pg_temp.matchmaker_catalog() AS c(item);
SET client_min_messages = warning;
DROP EXTENSION matchmaker CASCADE;
DROP SCHEMA matchmaker CASCADE;
RESET client_min_messages;
CREATE EXTENSION matchmaker;
SELECT extversion FROM pg_extension WHERE extname = 'matchmaker';
SELECT count(*) > 50 AS many_items FROM upgraded;
-- Differences either way: none.
(SELECT 'only after update: ' || item FROM upgraded EXCEPT ALL SELECT 'only after update: ' || c FROM pg_temp.matchmaker_catalog() c)
UNION ALL
(SELECT 'only in a fresh install: ' || c FROM pg_temp.matchmaker_catalog() c EXCEPT ALL SELECT 'only in a fresh install: ' || item FROM upgraded);
DROP OWNED BY regress_mm_old_backend;
DROP ROLE regress_mm_old_backend;
