\echo Use "CREATE EXTENSION matchmaker_router" to load this file. \quit

-- matchmaker_router: installed on a router database that has PL/Proxy, it
-- offers matchmaker's client and admin functions with the signatures they
-- have on a node, each sent to the node that holds the queue or the id.
-- The nodes are the PL/Proxy cluster matchmaker_cluster, defined the
-- PL/Proxy way (CREATE SERVER matchmaker_cluster FOREIGN DATA WRAPPER
-- plproxy OPTIONS (p0 '...', p1 '...'); a USER MAPPING gives the role each
-- router role acts as on the nodes).  A queue lives on the partition of
-- hashtext(its name), unless matchmaker.placements says otherwise (a moved
-- queue).  A node sets its node id to the lowest partition number naming
-- it (matchmaker.set_node_id on the node), so every id it hands out carries
-- that number in its bits 43 and up.  See doc/scaling.md.

-- The schema is created by CREATE EXTENSION (matchmaker_router.control);
-- when it existed already it must be the installing role's.
DO $$
BEGIN
    IF (SELECT n.nspowner FROM pg_catalog.pg_namespace n
        WHERE n.nspname OPERATOR(pg_catalog.=) 'matchmaker')
       OPERATOR(pg_catalog.<>)
       (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
    THEN
        RAISE EXCEPTION USING
            ERRCODE = 'insufficient_privilege',
            MESSAGE = 'schema "matchmaker" belongs to another role',
            DETAIL = 'The router installs into schema matchmaker, which exists and is not owned by the installing role.',
            HINT = 'Drop or rename that schema, or install as its owner.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'matchmaker_client') THEN
        CREATE ROLE matchmaker_client NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'matchmaker_admin') THEN
        CREATE ROLE matchmaker_admin NOLOGIN;
    END IF;
END
$$;

-- Queues placed on another partition than their name's hash (move_queue).
-- drained_from: the partition the queue is leaving, while its waiting
-- tickets are still matched there (finish_move drops it there).
CREATE TABLE matchmaker.placements (
    queue        text PRIMARY KEY,
    partition    integer NOT NULL CHECK (partition >= 0),
    drained_from integer CHECK (drained_from >= 0),
    moved_at     timestamptz NOT NULL DEFAULT pg_catalog.now()
);
SELECT pg_catalog.pg_extension_config_dump('matchmaker.placements', '');
COMMENT ON TABLE matchmaker.placements IS 'Queues moved off the partition of their name''s hash (move_queue): where each lives, and the partition it is draining from until finish_move.';

-- ---------------------------------------------------------------------
-- Where things live.
-- ---------------------------------------------------------------------

-- The cluster's partitions: number, connect string (its key=value pairs
-- sorted, without a password or any other secret: put those in user
-- mappings, since every role may read a server's options) and the node it
-- names, its host, address, port and database only (two partitions name
-- one node when these are the same, whatever else their strings set).
CREATE FUNCTION matchmaker.partitions(OUT partition integer, OUT conninfo text, OUT node text)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT substr(o, 2, strpos(o, '=') - 2)::integer,
           string_agg(kv[1] || '=' || kv[2], ' ' ORDER BY kv[1], kv[2])
               FILTER (WHERE kv[1] !~* 'password|secret|key$'),
           string_agg(kv[1] || '=' || btrim(kv[2], ''''), ' ' ORDER BY kv[1])
               FILTER (WHERE kv[1] IN ('host', 'hostaddr', 'port', 'dbname'))
    FROM pg_foreign_server s
    CROSS JOIN unnest(s.srvoptions) o
    LEFT JOIN LATERAL regexp_matches(substr(o, strpos(o, '=') + 1),
                                     '([A-Za-z_]+)\s*=\s*(''(?:[^''\\]|\\.)*''|[^\s'']\S*)', 'g') kv ON true
    WHERE s.srvname = 'matchmaker_cluster' AND o ~ '^p[0-9]+='
    GROUP BY o
    ORDER BY 1
$$;
COMMENT ON FUNCTION matchmaker.partitions IS 'The partitions of the PL/Proxy cluster matchmaker_cluster: their connect strings (pairs sorted, secrets removed) and the node each names (host, address, port, database).';

-- The partition count, checked once per call of what needs it.
CREATE FUNCTION matchmaker.partition_count()
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    SELECT count(*) INTO n FROM matchmaker.partitions();
    IF n = 0 THEN
        RAISE EXCEPTION USING
            ERRCODE = 'undefined_object',
            MESSAGE = 'the PL/Proxy cluster matchmaker_cluster is not defined',
            HINT = 'CREATE SERVER matchmaker_cluster FOREIGN DATA WRAPPER plproxy OPTIONS (p0 ''...'', p1 ''...''), with a USER MAPPING (doc/scaling.md).';
    END IF;
    RETURN n;
END
$$;

CREATE FUNCTION matchmaker.waiting_on(partition integer, queue text, players text[])
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT matchmaker.waiting(queue, players);
$$;

-- The hash PL/Proxy places a queue by: its placement, or hashtext(name)
-- (PL/Proxy keeps the low bits: hash & (partition count - 1)).  A null
-- name goes to partition 0, whose node refuses it like any node.
CREATE FUNCTION matchmaker.queue_hash(queue text)
RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((SELECT p.partition FROM matchmaker.placements p WHERE p.queue = $1),
                    hashtext($1), 0)
$$;
COMMENT ON FUNCTION matchmaker.queue_hash IS 'The hash the router places a queue by: its partition in placements (move_queue), or hashtext(name).';

CREATE FUNCTION matchmaker.queue_partition(queue text)
RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT matchmaker.queue_hash($1) & (matchmaker.partition_count() - 1) $$;
COMMENT ON FUNCTION matchmaker.queue_partition IS 'The partition that holds a queue: its placement (move_queue) or hashtext(name) as PL/Proxy maps it.';

-- The partition of a ticket, match or backfill id: its node id.
CREATE FUNCTION matchmaker.id_partition(id bigint)
RETURNS integer
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT COALESCE((GREATEST($1, 0) >> 43)::integer, 0)
$$;
COMMENT ON FUNCTION matchmaker.id_partition IS 'The partition of the node that handed out a ticket, match or backfill id (its bits 43 and up).';

CREATE FUNCTION matchmaker.partition_node(partition integer)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.conninfo FROM matchmaker.partitions() p
    WHERE p.partition = $1 & (matchmaker.partition_count() - 1)
$$;

-- Which node a partition names (host, address, port, database): how the
-- router tells nodes apart.
CREATE FUNCTION matchmaker.partition_node_key(partition integer)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.node FROM matchmaker.partitions() p
    WHERE p.partition = $1 & (matchmaker.partition_count() - 1)
$$;

CREATE FUNCTION matchmaker.queue_node(queue text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT matchmaker.partition_node(matchmaker.queue_partition($1)) $$;
COMMENT ON FUNCTION matchmaker.queue_node IS 'The connect string of the node that holds a queue (LISTEN there for its events).';

CREATE FUNCTION matchmaker.ticket_node(ticket bigint)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT matchmaker.partition_node(matchmaker.id_partition($1)) $$;
COMMENT ON FUNCTION matchmaker.ticket_node IS 'The connect string of the node that holds a ticket (LISTEN there for its events).';

-- ---------------------------------------------------------------------
-- The node API, routed.  Each call runs on one node in its own
-- transaction there (PL/Proxy runs remote calls in autocommit): a router
-- transaction that rolls back does not undo it.
-- ---------------------------------------------------------------------

CREATE FUNCTION matchmaker.create_queue(
    name text,
    team_size integer DEFAULT 1,
    teams integer DEFAULT 2,
    algorithm text DEFAULT 'auto',
    max_wait interval DEFAULT '5 minutes',
    rating_min float8 DEFAULT 0,
    rating_max float8 DEFAULT 1,
    tick interval DEFAULT '1 second',
    params jsonb DEFAULT '{}')
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.queue_hash(name);
$$;
COMMENT ON FUNCTION matchmaker.create_queue IS 'Create a matchmaking queue on the node of its name.';

CREATE FUNCTION matchmaker.alter_queue(
    name text,
    team_size integer DEFAULT NULL,
    teams integer DEFAULT NULL,
    algorithm text DEFAULT NULL,
    max_wait interval DEFAULT NULL,
    rating_min float8 DEFAULT NULL,
    rating_max float8 DEFAULT NULL,
    tick interval DEFAULT NULL,
    params jsonb DEFAULT NULL)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.queue_hash(name);
$$;
COMMENT ON FUNCTION matchmaker.alter_queue IS 'Change a queue''s settings on its node; NULL leaves a setting unchanged.';

CREATE FUNCTION matchmaker.drop_queue(name text, force boolean DEFAULT false)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.queue_hash(name);
$$;
COMMENT ON FUNCTION matchmaker.drop_queue IS 'Drop a queue on its node (refused while tickets wait unless force); a placement of it stays in matchmaker.placements.';

-- Where an enqueue of players goes: the queue's partition, but while the
-- queue drains from a move, the partition it is leaving when one of the
-- players still waits there (there the enqueue finds the waiting ticket,
-- as a retry does; the new node would give the player a second one).
-- PL/Proxy calls do not nest: this asks, then the caller calls.
CREATE FUNCTION matchmaker.enqueue_hash(queue text, players text[])
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    here integer;
    old integer;
BEGIN
    SELECT p.partition, p.drained_from INTO here, old
    FROM matchmaker.placements p WHERE p.queue = enqueue_hash.queue;
    IF old IS NOT NULL THEN
        BEGIN
            IF matchmaker.waiting_on(old, queue, players) THEN
                RETURN old;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            -- the node the queue leaves does not answer: its waiting
            -- tickets are not matched meanwhile either; the enqueue goes
            -- where the queue is
            NULL;
        END;
    END IF;
    RETURN COALESCE(here, hashtext(queue), 0);
END
$$;
COMMENT ON FUNCTION matchmaker.enqueue_hash IS 'The hash an enqueue is routed by: queue_hash, or while the queue drains from a move and one of the players waits on the node it leaves, that node''s partition.';

CREATE FUNCTION matchmaker.enqueue_at(hash integer, queue text, player text, rating float8, attributes jsonb)
RETURNS bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON hash;
    SELECT matchmaker.enqueue(queue, player, rating, attributes);
$$;

CREATE FUNCTION matchmaker.enqueue(queue text, player text, rating float8, attributes jsonb DEFAULT '{}')
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT matchmaker.enqueue_at(matchmaker.enqueue_hash($1, ARRAY[$2]), $1, $2, $3, $4)
$$;
COMMENT ON FUNCTION matchmaker.enqueue IS 'Put a player in a queue on the queue''s node; returns the ticket id, which names that node.';

CREATE FUNCTION matchmaker.enqueue_party_at(hash integer, queue text, players text[], ratings float8[],
                                            attributes jsonb)
RETURNS bigint[]
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON hash;
    SELECT matchmaker.enqueue_party(queue, players, ratings, attributes);
$$;

CREATE FUNCTION matchmaker.enqueue_party(queue text, players text[], ratings float8[], attributes jsonb DEFAULT '{}')
RETURNS bigint[]
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT matchmaker.enqueue_party_at(matchmaker.enqueue_hash($1, $2), $1, $2, $3, $4)
$$;
COMMENT ON FUNCTION matchmaker.enqueue_party IS 'Put a party in a queue on the queue''s node, all or nothing; returns its members'' ticket ids.';

CREATE FUNCTION matchmaker.cancel(ticket bigint)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.id_partition(ticket);
$$;
COMMENT ON FUNCTION matchmaker.cancel IS 'Cancel a ticket on the node its id names.';

CREATE FUNCTION matchmaker.accept(ticket bigint, accepted boolean DEFAULT true)
RETURNS text
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.id_partition(ticket);
$$;
COMMENT ON FUNCTION matchmaker.accept IS 'Answer a proposed ticket''s ready check on the node its id names.';

CREATE FUNCTION matchmaker.ticket_status(ticket bigint,
    OUT queue text, OUT player text, OUT state text, OUT enqueued_at timestamptz,
    OUT waited interval, OUT match_id bigint, OUT team integer,
    OUT expected_wait interval, OUT next_round timestamptz)
RETURNS SETOF record
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.id_partition(ticket);
$$;
COMMENT ON FUNCTION matchmaker.ticket_status IS 'A ticket''s status, from the node its id names.';

CREATE FUNCTION matchmaker.backfill(match_id bigint, slots integer, team integer DEFAULT NULL,
                                    expires interval DEFAULT '1 minute')
RETURNS bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.id_partition(match_id);
$$;
COMMENT ON FUNCTION matchmaker.backfill IS 'Ask for waiting players to fill slots of a running match, on the node its id names.';

CREATE FUNCTION matchmaker.cancel_backfill(request bigint)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.id_partition(request);
$$;
COMMENT ON FUNCTION matchmaker.cancel_backfill IS 'Close an open backfill request on the node its id names.';

CREATE FUNCTION matchmaker.match_cost(queue text, ratings float8[], waits float8[], bots integer DEFAULT 0,
                                      attributes jsonb[] DEFAULT NULL)
RETURNS float8
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.queue_hash(queue);
$$;
COMMENT ON FUNCTION matchmaker.match_cost IS 'Cost of one game in a queue (Schlup eq. 1), computed on the queue''s node.';

CREATE FUNCTION matchmaker.tick(queue text, now timestamptz DEFAULT pg_catalog.clock_timestamp())
RETURNS integer
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON matchmaker.queue_hash(queue);
$$;
COMMENT ON FUNCTION matchmaker.tick IS 'Run a queue''s algorithm on its node at time now (the node''s worker does it by itself).';

-- ---------------------------------------------------------------------
-- Every node: each node once (partitions() tells them apart), at its
-- lowest partition.
-- ---------------------------------------------------------------------

CREATE FUNCTION matchmaker.node_partitions()
RETURNS SETOF integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT min(p.partition) FROM matchmaker.partitions() p GROUP BY p.node ORDER BY 1
$$;
COMMENT ON FUNCTION matchmaker.node_partitions IS 'One partition per node (the lowest naming it): what a node''s id must be.';

CREATE FUNCTION matchmaker.check_on(partition integer)
RETURNS TABLE (problem text, queue text, id bigint, detail text)
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT c.problem, c.queue, c.id, c.detail FROM matchmaker.check() c;
$$;

CREATE FUNCTION matchmaker.node_id_on(partition integer)
RETURNS integer
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT matchmaker.node_id();
$$;

-- Every node's check(), and the router's own invariants: each node's id
-- is a partition that names that node (else ids route elsewhere), each
-- placement is a partition of the cluster, and a queue being moved exists
-- on the node it moves to.
CREATE FUNCTION matchmaker.check()
RETURNS TABLE (problem text, queue text, id bigint, detail text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p integer;
    nid integer;
    n integer := matchmaker.partition_count();
BEGIN
    FOR p IN SELECT * FROM matchmaker.node_partitions() LOOP
        RETURN QUERY SELECT * FROM matchmaker.check_on(p);
        nid := matchmaker.node_id_on(p);
        IF nid IS NULL OR nid >= n OR matchmaker.partition_node_key(nid) <> matchmaker.partition_node_key(p) THEN
            problem := 'node id';
            queue := NULL;
            id := p;
            detail := format('the node of partition %s has node id %s; its ids route to partition %s, %s',
                             p, nid, nid & (n - 1),
                             CASE WHEN nid IS NULL OR nid >= n THEN 'outside the cluster'
                                  ELSE 'another node' END);
            RETURN NEXT;
        END IF;
    END LOOP;
    RETURN QUERY
        SELECT 'placement'::text, pl.queue, pl.partition::bigint,
               format('placed on partition %s of a cluster of %s', pl.partition, n)
        FROM matchmaker.placements pl
        WHERE pl.partition >= n OR pl.drained_from >= n;
    -- a queue being moved exists where it goes (drop_queue during the
    -- move dropped it there only)
    RETURN QUERY
        SELECT 'placement'::text, pl.queue, pl.partition::bigint,
               format('moving from partition %s to %s, where it does not exist', pl.drained_from, pl.partition)
        FROM matchmaker.placements pl
        WHERE pl.drained_from IS NOT NULL AND pl.partition < n
          AND NOT EXISTS (SELECT FROM matchmaker.queue_settings_on(pl.partition, pl.queue));
END
$$;
COMMENT ON FUNCTION matchmaker.check IS 'Every node''s check(), plus the router''s: node ids that route elsewhere, placements outside the cluster, a queue being moved that does not exist where it goes. Every node must answer.';

CREATE FUNCTION matchmaker.queue_stats_on(partition integer)
RETURNS TABLE (queue text, waiting bigint, oldest_wait float8,
               matches_1m bigint, players_1m bigint, matches_1h bigint, players_1h bigint,
               p50_wait float8, p95_wait float8, bot_share float8, expired_1h bigint, mean_cost float8,
               last_tick timestamptz, last_tick_ms float8, lag_ms float8, next_tick timestamptz)
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT s.queue, s.waiting, s.oldest_wait, s.matches_1m, s.players_1m, s.matches_1h,
           s.players_1h, s.p50_wait, s.p95_wait, s.bot_share, s.expired_1h, s.mean_cost,
           s.last_tick, s.last_tick_ms, s.lag_ms, s.next_tick
    FROM matchmaker.queue_stats s;
$$;

CREATE FUNCTION matchmaker.queue_stats_all()
RETURNS SETOF record
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p integer;
BEGIN
    FOR p IN SELECT * FROM matchmaker.node_partitions() LOOP
        RETURN QUERY SELECT * FROM matchmaker.queue_stats_on(p);
    END LOOP;
END
$$;

CREATE VIEW matchmaker.queue_stats AS
SELECT s.* FROM matchmaker.queue_stats_all() AS s(
    queue text, waiting bigint, oldest_wait float8,
    matches_1m bigint, players_1m bigint, matches_1h bigint, players_1h bigint,
    p50_wait float8, p95_wait float8, bot_share float8, expired_1h bigint, mean_cost float8,
    last_tick timestamptz, last_tick_ms float8, lag_ms float8, next_tick timestamptz);
COMMENT ON VIEW matchmaker.queue_stats IS 'Every node''s queue_stats, one row per queue (two for a queue being moved, one per node). Every node must answer.';

-- ---------------------------------------------------------------------
-- Moving a queue.  move_queue creates the queue, with its settings, on
-- the node of another partition and sends every later call for it there;
-- its tickets already waiting stay where they are and are matched (or
-- time out) there, so for up to max_wait the queue's players are matched
-- in two pools.  finish_move drops it where it was, once nothing waits
-- there.  Calls by ticket id need nothing: an id names its node.
-- ---------------------------------------------------------------------

CREATE FUNCTION matchmaker.queue_settings_on(partition integer, queue text,
    OUT team_size integer, OUT teams integer, OUT algorithm text, OUT max_wait interval,
    OUT rating_min float8, OUT rating_max float8, OUT tick interval, OUT params jsonb)
RETURNS SETOF record
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT q.team_size, q.teams, q.algorithm, q.max_wait, q.rating_min, q.rating_max, q.tick, q.params
    FROM matchmaker.queues q WHERE q.name = queue;
$$;

CREATE FUNCTION matchmaker.create_queue_on(partition integer, name text, team_size integer,
    teams integer, algorithm text, max_wait interval, rating_min float8, rating_max float8,
    tick interval, params jsonb)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT matchmaker.create_queue(name, team_size, teams, algorithm, max_wait, rating_min,
                                   rating_max, tick, params);
$$;

CREATE FUNCTION matchmaker.waiting_count_on(partition integer, queue text)
RETURNS bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT count(*) FROM matchmaker.tickets t
    WHERE t.queue = queue AND t.state IN ('waiting', 'proposed');
$$;

CREATE FUNCTION matchmaker.drop_queue_on(partition integer, name text)
RETURNS void
LANGUAGE plproxy
AS $$
    CLUSTER 'matchmaker_cluster';
    RUN ON partition;
    SELECT matchmaker.drop_queue(name, false);
$$;

CREATE FUNCTION matchmaker.move_queue(queue text, partition integer)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer := matchmaker.partition_count();
    here integer;
    s record;
    there record;
BEGIN
    IF queue IS NULL OR partition IS NULL OR partition < 0 OR partition >= n THEN
        RAISE EXCEPTION USING
            ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('cannot move queue %s to partition %s', COALESCE(queue, 'NULL'),
                             COALESCE(partition::text, 'NULL')),
            HINT = format('Partitions are 0 to %s (matchmaker.partitions()).', n - 1);
    END IF;
    -- one move of a queue at a time, and no second move until the first is finished
    PERFORM pg_advisory_xact_lock(hashtext('matchmaker_router.move'), hashtext(queue));
    IF EXISTS (SELECT FROM matchmaker.placements pl WHERE pl.queue = move_queue.queue
               AND pl.drained_from IS NOT NULL) THEN
        RAISE EXCEPTION USING
            ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = format('queue %s is still draining from its last move', queue),
            HINT = 'Call matchmaker.finish_move once nothing waits on the node it left.';
    END IF;
    here := matchmaker.queue_partition(queue);
    IF matchmaker.partition_node_key(here) = matchmaker.partition_node_key(partition) THEN
        RAISE EXCEPTION USING
            ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('queue %s is already on the node of partition %s', queue, partition);
    END IF;
    SELECT * INTO s FROM matchmaker.queue_settings_on(here, queue);
    IF NOT FOUND AND EXISTS (SELECT FROM matchmaker.queue_settings_on(partition, queue)) THEN
        -- another router moved it and finished the move: follow it there
        INSERT INTO matchmaker.placements AS pl (queue, partition, drained_from)
        VALUES (queue, partition, NULL)
        ON CONFLICT ON CONSTRAINT placements_pkey
        DO UPDATE SET partition = excluded.partition, drained_from = NULL, moved_at = pg_catalog.now();
        RETURN;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING
            ERRCODE = 'undefined_object',
            MESSAGE = format('queue %s does not exist', queue),
            HINT = format('Its node is partition %s (%s).', here, matchmaker.partition_node(here));
    END IF;
    -- a move retried after the router failed to record it finds the queue
    -- there already: the same settings are the same queue
    SELECT * INTO there FROM matchmaker.queue_settings_on(partition, queue);
    IF NOT FOUND THEN
        PERFORM matchmaker.create_queue_on(partition, queue, s.team_size, s.teams, s.algorithm,
                                           s.max_wait, s.rating_min, s.rating_max, s.tick, s.params);
    ELSIF there IS DISTINCT FROM s THEN
        RAISE EXCEPTION USING
            ERRCODE = 'duplicate_object',
            MESSAGE = format('queue %s exists with other settings on the node of partition %s', queue, partition),
            HINT = 'Drop it there, or alter it to the same settings, and move again.';
    END IF;
    INSERT INTO matchmaker.placements AS pl (queue, partition, drained_from)
    VALUES (queue, partition, here)
    ON CONFLICT ON CONSTRAINT placements_pkey
    DO UPDATE SET partition = excluded.partition, drained_from = excluded.drained_from,
                  moved_at = pg_catalog.now();
END
$$;
COMMENT ON FUNCTION matchmaker.move_queue IS 'Create a queue, with its settings, on the node of another partition and route its later calls there; its waiting tickets are matched where they are until finish_move.';

CREATE FUNCTION matchmaker.finish_move(queue text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old integer;
    left_waiting bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('matchmaker_router.move'), hashtext(queue));
    SELECT pl.drained_from INTO old FROM matchmaker.placements pl WHERE pl.queue = finish_move.queue;
    IF old IS NULL THEN
        RAISE EXCEPTION USING
            ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = format('queue %s is not being moved', COALESCE(queue, 'NULL'));
    END IF;
    -- gone already when an earlier finish_move dropped it and then rolled
    -- back on the router
    IF EXISTS (SELECT FROM matchmaker.queue_settings_on(old, queue)) THEN
        left_waiting := matchmaker.waiting_count_on(old, queue);
        IF left_waiting > 0 THEN
            RAISE EXCEPTION USING
                ERRCODE = 'object_in_use',
                MESSAGE = format('queue %s still has %s waiting tickets on the node it leaves (partition %s)',
                                 queue, left_waiting, old),
                HINT = 'They are matched there or time out within the queue''s max_wait: call finish_move again then. (drop_queue through the router would drop the queue where it moved.)';
        END IF;
        PERFORM matchmaker.drop_queue_on(old, queue);
    END IF;
    UPDATE matchmaker.placements pl SET drained_from = NULL WHERE pl.queue = finish_move.queue;
END
$$;
COMMENT ON FUNCTION matchmaker.finish_move IS 'Drop a moved queue, with its history, on the node it left; refused there while tickets wait.';

-- ---------------------------------------------------------------------
-- Privileges, as on a node: matchmaker_client calls the client functions,
-- matchmaker_admin the rest.  What a call may do on a node is decided
-- there, by the role the USER MAPPING names.
-- ---------------------------------------------------------------------
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA matchmaker FROM PUBLIC;
GRANT USAGE ON SCHEMA matchmaker TO matchmaker_client, matchmaker_admin;
GRANT EXECUTE ON FUNCTION
    matchmaker.enqueue(text, text, float8, jsonb),
    matchmaker.enqueue_party(text, text[], float8[], jsonb),
    matchmaker.cancel(bigint),
    matchmaker.accept(bigint, boolean),
    matchmaker.backfill(bigint, integer, integer, interval),
    matchmaker.cancel_backfill(bigint),
    matchmaker.ticket_status(bigint),
    matchmaker.queue_node(text),
    matchmaker.ticket_node(bigint),
    matchmaker.partitions(),
    matchmaker.partition_count(),
    matchmaker.partition_node(integer),
    matchmaker.partition_node_key(integer),
    matchmaker.queue_partition(text),
    matchmaker.queue_hash(text),
    matchmaker.enqueue_hash(text, text[]),
    matchmaker.enqueue_at(integer, text, text, float8, jsonb),
    matchmaker.enqueue_party_at(integer, text, text[], float8[], jsonb),
    matchmaker.waiting_on(integer, text, text[]),
    matchmaker.id_partition(bigint)
TO matchmaker_client, matchmaker_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA matchmaker TO matchmaker_admin;
GRANT SELECT ON matchmaker.placements TO matchmaker_client, matchmaker_admin;
GRANT SELECT ON matchmaker.queue_stats TO matchmaker_admin;
