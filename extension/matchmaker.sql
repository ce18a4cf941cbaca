\echo Use "CREATE EXTENSION matchmaker" to load this file. \quit

-- The source of the current version's install script: the Makefile copies it
-- to matchmaker--<default_version>.sql (DATA_built).  Edit this file, never
-- the built copy; released versions' full scripts stay frozen beside it.

-- The schema matchmaker is created by CREATE EXTENSION (see matchmaker.control).
-- When it existed already, it must belong to the role installing the
-- extension: objects another role could put in it would sit beside ours.
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
            DETAIL = 'The extension installs into schema matchmaker, which exists and is not owned by the installing role.',
            HINT = 'Drop or rename that schema, or install as its owner.';
    END IF;
END
$$;

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

-- ---------------------------------------------------------------------
-- Tables.  They are written only through the functions below (no role but
-- the owner may write them); integrity between them is kept by those
-- functions (no foreign keys, so that enqueue never locks the queue row and
-- tick writes no trigger work).  tickets.enqueued_by and enqueued_by_name
-- are the oid and the name of the role that enqueued the ticket: the one
-- that may cancel and read it, while a role of that oid has that name.  A
-- plain oid and a text restore into any cluster; a ticket whose role was
-- dropped or renamed, or restored where the oid is not that role's,
-- belongs to nobody (matchmaker_admin still reads it).
-- ---------------------------------------------------------------------

CREATE TABLE matchmaker.queues (
    name        text PRIMARY KEY,
    team_size   integer NOT NULL,
    teams       integer NOT NULL,
    algorithm   text NOT NULL,
    max_wait    interval NOT NULL,
    rating_min  float8 NOT NULL,
    rating_max  float8 NOT NULL,
    tick        interval NOT NULL,
    params      jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    CONSTRAINT queues_game_shape CHECK (team_size >= 1 AND teams >= 1 AND team_size * teams >= 2),
    CONSTRAINT queues_rating_range CHECK (rating_min < rating_max)
);
COMMENT ON TABLE matchmaker.queues IS 'Matchmaking queues: game shape, algorithm and its parameters.';

-- Each backend keeps the rows of the queues it enqueues into; these
-- triggers make every backend drop them whenever the table is written
-- (with any session_replication_role, and by logical replication's apply,
-- which fires row triggers only).
CREATE FUNCTION matchmaker.queues_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'mm_queues_changed'
LANGUAGE C;
COMMENT ON FUNCTION matchmaker.queues_changed IS 'Trigger of matchmaker.queues: every backend drops the queue settings it keeps for enqueue.';
CREATE TRIGGER queues_changed AFTER INSERT OR UPDATE OR DELETE ON matchmaker.queues
    FOR EACH ROW EXECUTE FUNCTION matchmaker.queues_changed();
CREATE TRIGGER queues_truncated AFTER TRUNCATE ON matchmaker.queues
    FOR EACH STATEMENT EXECUTE FUNCTION matchmaker.queues_changed();
ALTER TABLE matchmaker.queues ENABLE ALWAYS TRIGGER queues_changed;
ALTER TABLE matchmaker.queues ENABLE ALWAYS TRIGGER queues_truncated;

CREATE SEQUENCE matchmaker.matches_id_seq;
CREATE TABLE matchmaker.matches (
    id            bigint PRIMARY KEY DEFAULT pg_catalog.nextval('matchmaker.matches_id_seq'),
    queue         text NOT NULL,
    created_at    timestamptz NOT NULL,
    bots          integer NOT NULL DEFAULT 0,
    cost          float8 NOT NULL,
    criteria_cost float8 NOT NULL,
    wait_cost     float8 NOT NULL,
    -- params.filters: the values its players share, {"mode": "ranked"}; null without filters
    filters       jsonb,
    -- the filters a player of the match waived after its optional_after; null for none
    relaxed       text[]
);
ALTER SEQUENCE matchmaker.matches_id_seq OWNED BY matchmaker.matches.id;
CREATE INDEX matches_queue_created ON matchmaker.matches (queue, created_at);
-- auto's arrival rate of each filter value (tick.c, measure_key_rates)
CREATE INDEX matches_queue_filters ON matchmaker.matches (queue, filters, created_at) WHERE filters IS NOT NULL;
COMMENT ON TABLE matchmaker.matches IS 'Matches formed by tick, one row per game, with its cost (Schlup eq. 1).';

CREATE SEQUENCE matchmaker.tickets_id_seq;
CREATE TABLE matchmaker.tickets (
    id          bigint PRIMARY KEY DEFAULT pg_catalog.nextval('matchmaker.tickets_id_seq'),
    queue       text NOT NULL,
    player      text NOT NULL,
    rating      float8 NOT NULL,
    attributes  jsonb NOT NULL DEFAULT '{}',
    state       text NOT NULL DEFAULT 'waiting',
    enqueued_at timestamptz NOT NULL,
    matched_at  timestamptz,
    ended_at    timestamptz,
    match_id    bigint,
    team        integer,
    enqueued_by oid NOT NULL,
    end_reason  text,
    enqueued_by_name text NOT NULL,
    accepted    boolean,
    backfill_id bigint,
    -- enqueue_party: the party's first ticket id, on each member; null alone
    party       bigint,
    -- params.roles: the role the match gave the player; null without roles
    role        text,
    CONSTRAINT tickets_state CHECK (state IN ('waiting', 'proposed', 'matched', 'cancelled', 'expired', 'invalid', 'declined'))
);
ALTER SEQUENCE matchmaker.tickets_id_seq OWNED BY matchmaker.tickets.id;
-- One waiting (or proposed) ticket per (queue, player); also the index tick reads a queue's waiting tickets with.
CREATE UNIQUE INDEX tickets_waiting ON matchmaker.tickets (queue, player) WHERE state IN ('waiting', 'proposed');
CREATE INDEX tickets_match ON matchmaker.tickets (match_id) WHERE match_id IS NOT NULL;
CREATE INDEX tickets_party ON matchmaker.tickets (party) WHERE party IS NOT NULL;
COMMENT ON TABLE matchmaker.tickets IS 'Players'' requests to play; state waiting, proposed (in a match awaiting its ready check; accepted holds the answer), matched, cancelled, expired, declined or invalid (end_reason says why).';

-- Ready checks (params.accept_timeout): a match a tick forms in such a
-- queue is a proposal until its players answer with accept().  Its id is
-- taken from the matches' sequence; once every player accepts, the same
-- id and columns go into matches (state ready).  A decline, a cancel or
-- the timeout dissolves it: its decliners keep match_id pointing here, the
-- others wait again.  Only ready matches are in matches, so what reads the
-- history (audit, tuning, the measured rates) never sees a dissolved one.
CREATE TABLE matchmaker.proposals (
    id            bigint PRIMARY KEY,
    queue         text NOT NULL,
    created_at    timestamptz NOT NULL,
    accept_by     timestamptz NOT NULL,
    bots          integer NOT NULL,
    cost          float8 NOT NULL,
    criteria_cost float8 NOT NULL,
    wait_cost     float8 NOT NULL,
    state         text NOT NULL DEFAULT 'proposed',
    ended_at      timestamptz,
    reason        text,
    filters       jsonb,
    relaxed       text[],
    CONSTRAINT proposals_state CHECK (state IN ('proposed', 'ready', 'dissolved')),
    CONSTRAINT proposals_reason CHECK ((state = 'dissolved') = (reason IS NOT NULL)
                                       AND reason IN ('declined', 'timeout', 'cancelled'))
);
CREATE INDEX proposals_pending ON matchmaker.proposals (queue, accept_by) WHERE state = 'proposed';
COMMENT ON TABLE matchmaker.proposals IS 'Matches of queues with ready checks (params.accept_timeout), from proposal until ready or dissolved (reason: declined, timeout or cancelled).';

-- Backfill: a game server's request for replacements in a running match.
-- A tick fills open requests from the queue's waiting tickets (their
-- tickets.backfill_id names the request) before it forms new matches.
CREATE SEQUENCE matchmaker.backfills_id_seq;
CREATE TABLE matchmaker.backfills (
    id                bigint PRIMARY KEY DEFAULT pg_catalog.nextval('matchmaker.backfills_id_seq'),
    match_id          bigint NOT NULL,
    queue             text NOT NULL,
    team              integer,
    slots             integer NOT NULL,
    filled            integer NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL,
    expires_at        timestamptz NOT NULL,
    state             text NOT NULL DEFAULT 'open',
    ended_at          timestamptz,
    requested_by      oid NOT NULL,
    requested_by_name text NOT NULL,
    CONSTRAINT backfills_state CHECK (state IN ('open', 'filled', 'expired', 'cancelled')),
    CONSTRAINT backfills_filled CHECK (filled >= 0 AND filled <= slots)
);
ALTER SEQUENCE matchmaker.backfills_id_seq OWNED BY matchmaker.backfills.id;
CREATE INDEX backfills_open ON matchmaker.backfills (queue, created_at) WHERE state = 'open';
COMMENT ON TABLE matchmaker.backfills IS 'Backfill requests of running matches: slots asked for, filled so far, and how each ended (filled, expired or cancelled).';

-- difference_wait's provisional groups: tick rewrites a queue's rows each time
-- it runs.  Times are those of the tick that formed the group.  A cancel
-- leaves its ticket's group in place (it locks nothing a tick waits for):
-- the next tick dissolves it, and the view below shows only the groups
-- whose tickets all wait.
CREATE TABLE matchmaker.provisional_groups (
    queue       text NOT NULL,
    tickets     bigint[] NOT NULL,
    q           float8 NOT NULL,
    formed_at   timestamptz NOT NULL,
    finalize_at timestamptz NOT NULL
);
CREATE INDEX provisional_groups_queue ON matchmaker.provisional_groups (queue);
COMMENT ON TABLE matchmaker.provisional_groups IS 'difference_wait provisional groups, as the last tick left them.';

CREATE VIEW matchmaker.provisional AS
    SELECT p.queue, p.tickets, p.q, p.formed_at, p.finalize_at
    FROM matchmaker.provisional_groups p
    WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(p.tickets) AS m(id)
                      LEFT JOIN matchmaker.tickets t ON t.id OPERATOR(pg_catalog.=) m.id
                      WHERE t.state IS DISTINCT FROM 'waiting');
COMMENT ON VIEW matchmaker.provisional IS 'difference_wait provisional groups: their tickets, rating spread q and when they become final.';

-- Self-tuning (params.tune): one row per decision, what was tried and what was adopted.
CREATE SEQUENCE matchmaker.tunings_id_seq;
CREATE TABLE matchmaker.tunings (
    id        bigint PRIMARY KEY DEFAULT pg_catalog.nextval('matchmaker.tunings_id_seq'),
    queue     text NOT NULL,
    tuned_at  timestamptz NOT NULL,
    players   integer NOT NULL,
    current   jsonb NOT NULL,
    tried     jsonb NOT NULL,
    adopted   jsonb,
    note      text
);
ALTER SEQUENCE matchmaker.tunings_id_seq OWNED BY matchmaker.tunings.id;
CREATE INDEX tunings_queue ON matchmaker.tunings (queue, tuned_at);
COMMENT ON TABLE matchmaker.tunings IS 'Self-tuning decisions: the queue''s own configuration and each candidate replayed over its recent players, with their costs, and the one adopted.';

-- Keep queues, tickets, matches, provisional groups, tunings, proposals and backfills (and the id sequences) in pg_dump output.
SELECT pg_catalog.pg_extension_config_dump('matchmaker.queues', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.tickets', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.matches', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.provisional_groups', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.tickets_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.matches_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.tunings', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.tunings_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.proposals', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.backfills', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.backfills_id_seq', '');

-- ---------------------------------------------------------------------
-- Functions.  They are written in C; every query they run names its
-- tables, functions and operators with their schema, so they do not
-- depend on the caller's search_path.
--
-- SECURITY DEFINER: the functions an operator calls to write the tables
-- (create_queue, alter_queue, drop_queue, tick) run as the extension's
-- owner, because no other role may write those tables, which keeps them
-- consistent.  enqueue, cancel and ticket_status, which game backends
-- call, are SECURITY INVOKER and switch to the owner in C for their
-- table access only after noting the calling role (the current user), so
-- that a ticket belongs to the role that called enqueue, also through a
-- caller's own SECURITY DEFINER function.  All of them pin search_path and
-- are revoked from PUBLIC below.  The functions that only read (match_cost,
-- simulate, simulate_summary, optimal_cost, audit, check) run as the
-- caller, with the caller's privileges: simulate and optimal_cost run a
-- query the caller passes, which must never run with the owner's.
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
AS 'MODULE_PATHNAME', 'mm_create_queue'
LANGUAGE C VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.create_queue IS 'Create a matchmaking queue.';

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
AS 'MODULE_PATHNAME', 'mm_alter_queue'
LANGUAGE C VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.alter_queue IS 'Change a queue''s settings; NULL leaves a setting unchanged.';

CREATE FUNCTION matchmaker.drop_queue(name text, force boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'mm_drop_queue'
LANGUAGE C VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.drop_queue IS 'Drop a queue with its tickets and matches; refused while tickets wait unless force.';

CREATE FUNCTION matchmaker.enqueue(queue text, player text, rating float8, attributes jsonb DEFAULT '{}')
RETURNS bigint
AS 'MODULE_PATHNAME', 'mm_enqueue_0_3'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.enqueue IS 'Put a player in a queue; returns the ticket id (the same id while that ticket waits). The ticket belongs to the calling role.';

CREATE FUNCTION matchmaker.enqueue_party(queue text, players text[], ratings float8[], attributes jsonb DEFAULT '{}')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'mm_enqueue_party'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.enqueue_party IS 'Put a party in a queue, all or nothing; returns its members'' ticket ids (the same ids while the party waits). It plays whole, in one team; cancelling one member cancels it.';

CREATE FUNCTION matchmaker.cancel(ticket bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'mm_cancel_0_3'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.cancel IS 'Cancel a waiting or proposed ticket of the calling role (a proposed one dissolves its match), with its whole party; false when it is neither.';

CREATE FUNCTION matchmaker.accept(ticket bigint, accepted boolean DEFAULT true)
RETURNS text
AS 'MODULE_PATHNAME', 'mm_accept'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.accept IS 'Answer the ready check of a proposed ticket of the calling role; returns the ticket''s state after the answer.';

CREATE FUNCTION matchmaker.backfill(match_id bigint, slots integer, team integer DEFAULT NULL,
                                    expires interval DEFAULT '1 minute')
RETURNS bigint
AS 'MODULE_PATHNAME', 'mm_backfill'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.backfill IS 'Ask for waiting players to fill slots of a running match (on one team, or the one with the fewest players); returns the request id.';

CREATE FUNCTION matchmaker.cancel_backfill(request bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'mm_cancel_backfill'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.cancel_backfill IS 'Close an open backfill request; false when it is no longer open.';

CREATE FUNCTION matchmaker.ticket_status(ticket bigint,
    OUT queue text, OUT player text, OUT state text, OUT enqueued_at timestamptz,
    OUT waited interval, OUT match_id bigint, OUT team integer,
    OUT expected_wait interval, OUT next_round timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'mm_ticket_status_0_3'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.ticket_status IS 'A ticket''s state, wait so far, match and team, and while it waits the expected remaining wait; for the role that enqueued it and for matchmaker_admin.';

CREATE FUNCTION matchmaker.match_cost(queue text, ratings float8[], waits float8[], bots integer DEFAULT 0,
                                      attributes jsonb[] DEFAULT NULL)
RETURNS float8
AS 'MODULE_PATHNAME', 'mm_match_cost'
LANGUAGE C STABLE;
COMMENT ON FUNCTION matchmaker.match_cost IS 'Cost of one game in a queue (Schlup eq. 1): spread of the rating and the queue''s criteria (from attributes) plus waits.';

CREATE FUNCTION matchmaker.tick(queue text, now timestamptz DEFAULT pg_catalog.clock_timestamp())
RETURNS integer
AS 'MODULE_PATHNAME', 'mm_tick'
LANGUAGE C VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.tick IS 'Run a queue''s algorithm on its waiting tickets at time now; returns the number of matches made.';

CREATE FUNCTION matchmaker.simulate(queue text, arrivals text, params jsonb DEFAULT NULL)
RETURNS TABLE (match_no bigint, id bigint, team integer, matched_at float8)
AS 'MODULE_PATHNAME', 'mm_simulate_rows'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION matchmaker.simulate IS 'Run a queue''s algorithm (params overriding) over an arrival stream in virtual time: one row per player.';

CREATE FUNCTION matchmaker.simulate_summary(queue text, arrivals text, params jsonb DEFAULT NULL,
    OUT players bigint, OUT games bigint, OUT bots bigint, OUT expired bigint,
    OUT cost float8, OUT criteria_cost float8, OUT wait_cost float8, OUT cost_per_game float8,
    OUT mean_wait float8, OUT max_wait float8)
RETURNS record
AS 'MODULE_PATHNAME', 'mm_simulate_summary'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION matchmaker.simulate_summary IS 'The totals of matchmaker.simulate in one row.';

CREATE FUNCTION matchmaker.optimal_cost(queue text, arrivals text)
RETURNS float8
AS 'MODULE_PATHNAME', 'mm_optimal_cost'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION matchmaker.optimal_cost IS 'Cost of the offline optimum (Schlup''s OPT, pairs) for an arrival stream.';

CREATE FUNCTION matchmaker.audit(queue text, "from" timestamptz, "to" timestamptz,
    OUT matches bigint, OUT players bigint, OUT bots bigint, OUT expired bigint,
    OUT cost float8, OUT optimal_cost float8, OUT ratio float8)
RETURNS record
AS 'MODULE_PATHNAME', 'mm_audit'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION matchmaker.audit IS 'A queue''s matches made in [from, to) against the offline optimum for the same players.';

-- Invariants that hold at every commit, checked in the spirit of amcheck:
-- one row per violation, none when healthy.
CREATE FUNCTION matchmaker.check()
RETURNS TABLE (problem text, queue text, id bigint, detail text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- a match, or a proposal awaiting its ready check, has k participants
    -- (tickets + computer players), or is a smaller match (params.min_players):
    -- from 2 to k - 1 tickets and no computer player; backfilled tickets
    -- (tickets.backfill_id) join a match beyond its k
    SELECT 'match size'::text, m.queue, m.id,
           pg_catalog.format('%s tickets and %s computer players, expected %s',
                             pg_catalog.count(t.id), m.bots, q.team_size OPERATOR(pg_catalog.*) q.teams)
    FROM (SELECT x.id, x.queue, x.bots FROM matchmaker.matches x
          UNION ALL
          SELECT p.id, p.queue, p.bots FROM matchmaker.proposals p
          WHERE p.state OPERATOR(pg_catalog.=) 'proposed') m
    JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) m.queue
    LEFT JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id AND t.backfill_id IS NULL
    GROUP BY m.id, m.queue, m.bots, q.team_size, q.teams
    HAVING (pg_catalog.count(t.id) OPERATOR(pg_catalog.+) m.bots) OPERATOR(pg_catalog.<>) (q.team_size OPERATOR(pg_catalog.*) q.teams)
       AND NOT (m.bots OPERATOR(pg_catalog.=) 0 AND pg_catalog.count(t.id) OPERATOR(pg_catalog.>=) 2
                AND pg_catalog.count(t.id) OPERATOR(pg_catalog.<) (q.team_size OPERATOR(pg_catalog.*) q.teams))
  UNION ALL
    -- a team holds at most team_size real players (backfilled ones aside), numbered 1..teams
    SELECT 'team size', m.queue, m.id,
           pg_catalog.format('team %s has %s players, at most %s', t.team, pg_catalog.count(*), q.team_size)
    FROM (SELECT x.id, x.queue FROM matchmaker.matches x
          UNION ALL
          SELECT p.id, p.queue FROM matchmaker.proposals p
          WHERE p.state OPERATOR(pg_catalog.=) 'proposed') m
    JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) m.queue
    JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id AND t.backfill_id IS NULL
    GROUP BY m.id, m.queue, t.team, q.team_size, q.teams
    HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) q.team_size
        OR t.team IS NULL OR t.team OPERATOR(pg_catalog.<) 1 OR t.team OPERATOR(pg_catalog.>) q.teams
  UNION ALL
    -- a ticket is matched exactly when it is in a match, and proposed
    -- exactly when it is in a pending proposal (both with matched_at set);
    -- a declined ticket, and a cancelled one that has a match_id, point to
    -- a dissolved proposal, whose tickets are all such; no waiting, expired
    -- or invalid ticket has a match_id; a match or proposal is of its
    -- ticket's queue; an invalid ticket, and only one, has an end_reason
    SELECT 'ticket state', t.queue, t.id,
           pg_catalog.format('state %s with match %s%s, matched_at %s', t.state,
                             COALESCE(t.match_id::text, 'none'),
                             CASE WHEN p.id IS NOT NULL THEN ' (proposal ' OPERATOR(pg_catalog.||) p.state OPERATOR(pg_catalog.||) ')'
                                  WHEN t.match_id IS NOT NULL AND m.id IS NULL THEN ' (missing)' ELSE '' END,
                             CASE WHEN t.matched_at IS NULL THEN 'unset' ELSE 'set' END)
    FROM matchmaker.tickets t
    LEFT JOIN matchmaker.matches m ON m.id OPERATOR(pg_catalog.=) t.match_id
    LEFT JOIN matchmaker.proposals p ON p.id OPERATOR(pg_catalog.=) t.match_id
    WHERE (t.state OPERATOR(pg_catalog.=) 'matched') OPERATOR(pg_catalog.<>) (m.id IS NOT NULL)
       OR (t.state OPERATOR(pg_catalog.=) 'proposed') OPERATOR(pg_catalog.<>) (p.state IS NOT DISTINCT FROM 'proposed')
       OR (t.state OPERATOR(pg_catalog.=) ANY (ARRAY['matched', 'proposed'])) OPERATOR(pg_catalog.<>) (t.matched_at IS NOT NULL)
       OR (t.state OPERATOR(pg_catalog.=) 'declined' AND p.state IS DISTINCT FROM 'dissolved')
       OR (p.state OPERATOR(pg_catalog.=) 'dissolved' AND t.state OPERATOR(pg_catalog.<>) ALL (ARRAY['declined', 'cancelled']))
       OR (t.match_id IS NOT NULL AND m.id IS NULL AND p.id IS NULL)
       OR (t.match_id IS NOT NULL AND t.state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'expired', 'invalid']))
       OR m.queue OPERATOR(pg_catalog.<>) t.queue
       OR p.queue OPERATOR(pg_catalog.<>) t.queue
       OR (t.state OPERATOR(pg_catalog.=) 'invalid') OPERATOR(pg_catalog.<>) (t.end_reason IS NOT NULL)
  UNION ALL
    -- a backfilled ticket is matched into its request's match on a team of
    -- the queue; a request counts the tickets it filled, and is of a match
    -- of its queue
    SELECT 'backfill', t.queue, t.id,
           pg_catalog.format('state %s, match %s, team %s, request %s for match %s', t.state,
                             COALESCE(t.match_id::text, 'none'), COALESCE(t.team::text, 'none'),
                             t.backfill_id, COALESCE(b.match_id::text, 'missing'))
    FROM matchmaker.tickets t
    LEFT JOIN matchmaker.backfills b ON b.id OPERATOR(pg_catalog.=) t.backfill_id
    LEFT JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) t.queue
    WHERE t.backfill_id IS NOT NULL
      AND (t.state IS DISTINCT FROM 'matched' OR b.match_id IS DISTINCT FROM t.match_id
           OR t.team IS NULL OR t.team OPERATOR(pg_catalog.<) 1 OR t.team OPERATOR(pg_catalog.>) q.teams)
  UNION ALL
    SELECT 'backfill', b.queue, b.id,
           pg_catalog.format('request %s: filled %s of %s with %s tickets, match %s', b.state, b.filled,
                             b.slots, (SELECT pg_catalog.count(*) FROM matchmaker.tickets t
                                       WHERE t.backfill_id OPERATOR(pg_catalog.=) b.id),
                             CASE WHEN m.id IS NULL THEN 'missing' ELSE 'of queue ' OPERATOR(pg_catalog.||) m.queue END)
    FROM matchmaker.backfills b
    LEFT JOIN matchmaker.matches m ON m.id OPERATOR(pg_catalog.=) b.match_id
    WHERE m.id IS NULL OR m.queue OPERATOR(pg_catalog.<>) b.queue
       OR b.filled OPERATOR(pg_catalog.<>) (SELECT pg_catalog.count(*) FROM matchmaker.tickets t
                                            WHERE t.backfill_id OPERATOR(pg_catalog.=) b.id)
       OR (b.state OPERATOR(pg_catalog.=) 'filled') OPERATOR(pg_catalog.<>) (b.filled OPERATOR(pg_catalog.=) b.slots)
  UNION ALL
    -- a match (or pending proposal) of a queue with filters: every ticket
    -- in it, backfilled ones included, has the values the match records
    -- (or, for an intersect filter, lists them), but for the filters the
    -- match records as relaxed
    SELECT 'filters', m.queue, t.id,
           pg_catalog.format('match %s records %s, the ticket has %s', m.id, m.filters, t.attributes)
    FROM (SELECT x.id, x.queue, x.filters, x.relaxed FROM matchmaker.matches x
          UNION ALL
          SELECT p.id, p.queue, p.filters, p.relaxed FROM matchmaker.proposals p
          WHERE p.state OPERATOR(pg_catalog.=) 'proposed') m
    JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id
    WHERE m.filters IS NOT NULL
      AND t.state OPERATOR(pg_catalog.=) ANY (ARRAY['matched', 'proposed'])
      AND EXISTS (SELECT 1 FROM pg_catalog.jsonb_each(m.filters) f
                  WHERE (t.attributes OPERATOR(pg_catalog.->) f.key) IS DISTINCT FROM f.value
                    AND NOT (pg_catalog.jsonb_typeof(t.attributes OPERATOR(pg_catalog.->) f.key) OPERATOR(pg_catalog.=) 'array'
                             AND (t.attributes OPERATOR(pg_catalog.->) f.key) OPERATOR(pg_catalog.@>) f.value)
                    AND f.key OPERATOR(pg_catalog.<>) ALL (COALESCE(m.relaxed, '{}'::text[])))
  UNION ALL
    -- a match (or pending proposal) of a queue with an exclude filter holds
    -- no two players of whom one lists the other in its block list
    SELECT 'exclude', a.queue, a.id,
           pg_catalog.format('tickets %s and %s (players %s and %s) are in match %s, and the first blocks the second',
                             a.id, b.id, a.player, b.player, a.match_id)
    FROM matchmaker.queues q
    CROSS JOIN LATERAL (SELECT f.key FROM pg_catalog.jsonb_each(q.params OPERATOR(pg_catalog.->) 'filters') f
                        WHERE f.value OPERATOR(pg_catalog.=) '"exclude"'::pg_catalog.jsonb
                           OR (f.value OPERATOR(pg_catalog.->>) 'kind') OPERATOR(pg_catalog.=) 'exclude') x
    JOIN matchmaker.tickets a ON a.queue OPERATOR(pg_catalog.=) q.name
                             AND a.state OPERATOR(pg_catalog.=) ANY (ARRAY['matched', 'proposed'])
    JOIN matchmaker.tickets b ON b.match_id OPERATOR(pg_catalog.=) a.match_id AND b.id OPERATOR(pg_catalog.<>) a.id
                             AND b.state OPERATOR(pg_catalog.=) ANY (ARRAY['matched', 'proposed'])
    WHERE pg_catalog.jsonb_typeof(a.attributes OPERATOR(pg_catalog.->) x.key) OPERATOR(pg_catalog.=) 'array'
      AND pg_catalog.jsonb_exists(a.attributes OPERATOR(pg_catalog.->) x.key, b.player)
  UNION ALL
    -- a party plays whole: its tickets share one state, and when matched
    -- or proposed one match and one team
    SELECT 'party', pt.queue, pt.party,
           pg_catalog.format('party %s has tickets %s in states %s, matches %s, teams %s',
                             pt.party, pt.ids, pt.states, pt.matches, pt.teams)
    FROM (SELECT t.queue, t.party, pg_catalog.array_agg(t.id ORDER BY t.id) AS ids,
                 pg_catalog.array_agg(DISTINCT t.state) AS states,
                 pg_catalog.array_agg(DISTINCT t.match_id) AS matches,
                 pg_catalog.array_agg(DISTINCT t.team) AS teams
          FROM matchmaker.tickets t
          WHERE t.party IS NOT NULL
          GROUP BY t.queue, t.party) pt
    WHERE pg_catalog.cardinality(pt.states) OPERATOR(pg_catalog.>) 1
       OR pg_catalog.cardinality(pt.matches) OPERATOR(pg_catalog.>) 1
       OR pg_catalog.cardinality(pt.teams) OPERATOR(pg_catalog.>) 1
  UNION ALL
    -- a ready proposal is a match
    SELECT 'proposal', p.queue, p.id, 'ready but not in matchmaker.matches'
    FROM matchmaker.proposals p
    WHERE p.state OPERATOR(pg_catalog.=) 'ready'
      AND NOT EXISTS (SELECT 1 FROM matchmaker.matches m WHERE m.id OPERATOR(pg_catalog.=) p.id)
  UNION ALL
    -- every ticket, match, proposal and backfill request belongs to an existing queue
    SELECT 'unknown queue', x.queue, x.id, x.what
    FROM (SELECT t.queue, t.id, 'ticket'::text AS what FROM matchmaker.tickets t
          UNION ALL
          SELECT m.queue, m.id, 'match' FROM matchmaker.matches m
          UNION ALL
          SELECT p.queue, p.id, 'proposal' FROM matchmaker.proposals p
          UNION ALL
          SELECT b.queue, b.id, 'backfill request' FROM matchmaker.backfills b) x
    WHERE NOT EXISTS (SELECT 1 FROM matchmaker.queues q WHERE q.name OPERATOR(pg_catalog.=) x.queue)
  UNION ALL
    -- a provisional group holds tickets of its own queue that wait (or that
    -- a cancel ended since the last tick, which dissolves the group)
    SELECT 'provisional group', g.queue, g.member,
           pg_catalog.format('ticket in a provisional group is %s', COALESCE(t.state, 'missing'))
    FROM (SELECT p.queue, pg_catalog.unnest(p.tickets) AS member FROM matchmaker.provisional_groups p) g
    LEFT JOIN matchmaker.tickets t ON t.id OPERATOR(pg_catalog.=) g.member
    WHERE t.id IS NULL OR t.state OPERATOR(pg_catalog.<>) ALL (ARRAY['waiting', 'cancelled'])
       OR t.queue OPERATOR(pg_catalog.<>) g.queue
  UNION ALL
    -- a waiting ticket's enqueued_at is finite, at most 365 days (the largest
    -- max_wait) ahead and at most 36525 days behind; a tick ends it as invalid
    SELECT 'enqueued_at', t.queue, t.id, pg_catalog.format('waiting, enqueued_at %s', t.enqueued_at)
    FROM matchmaker.tickets t
    WHERE t.state OPERATOR(pg_catalog.=) 'waiting'
      AND (NOT pg_catalog.isfinite(t.enqueued_at)
           OR t.enqueued_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.+) '365 days'::pg_catalog.interval)
           OR t.enqueued_at OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-) '36525 days'::pg_catalog.interval))
  UNION ALL
    -- while this database's worker runs, no ticket waits past max_wait plus a
    -- tick interval, and no proposal stays pending past its accept_by plus one
    SELECT 'overdue', x.queue, x.id, x.detail
    FROM (SELECT t.queue, t.id,
                 pg_catalog.format('waiting since %s, max_wait %s, tick %s', t.enqueued_at, q.max_wait, q.tick) AS detail
          FROM matchmaker.tickets t
          JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) t.queue
          WHERE t.state OPERATOR(pg_catalog.=) 'waiting'
            -- (the sum is taken for a past enqueued_at only: near the end of time it overflows)
            AND CASE WHEN t.enqueued_at OPERATOR(pg_catalog.<) pg_catalog.now()
                THEN ((t.enqueued_at OPERATOR(pg_catalog.+) q.max_wait) OPERATOR(pg_catalog.+) q.tick)
                     OPERATOR(pg_catalog.<) pg_catalog.now() END
          UNION ALL
          SELECT p.queue, p.id, pg_catalog.format('proposal pending since %s, accept_by %s, tick %s',
                                                  p.created_at, p.accept_by, q.tick)
          FROM matchmaker.proposals p
          JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) p.queue
          WHERE p.state OPERATOR(pg_catalog.=) 'proposed'
            AND (p.accept_by OPERATOR(pg_catalog.+) q.tick) OPERATOR(pg_catalog.<) pg_catalog.now()) x
    WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a
                  WHERE a.backend_type OPERATOR(pg_catalog.=) 'matchmaker worker'
                    AND a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
      AND pg_catalog.current_setting('matchmaker.enabled', true) IS DISTINCT FROM 'off'
$$;
COMMENT ON FUNCTION matchmaker.check IS 'The violations of matchmaker''s invariants, one row each; none when healthy.';


-- Queue statistics (stats.c): per queue and 10-second bucket, what the
-- ticks decided (written by a tick run by tick(), by the worker at most a
-- second after its ticks), kept two hours; queue_stats reads them, so it
-- costs the same however long the history.
CREATE TABLE matchmaker.queue_buckets (
    queue        text NOT NULL,
    bucket_start timestamptz NOT NULL,
    matches      bigint NOT NULL,
    players      bigint NOT NULL,
    bot_games    bigint NOT NULL,
    expired      bigint NOT NULL,
    cost         float8 NOT NULL,
    waits        bigint[] NOT NULL,
    PRIMARY KEY (queue, bucket_start)
);
COMMENT ON TABLE matchmaker.queue_buckets IS 'Per queue and 10-second bucket (bucket_start), the matches, real players, games with computer players, expiries, summed cost and a histogram of the matched players'' waits that its ticks decided; kept two hours.';

CREATE FUNCTION matchmaker.waits_add(a bigint[], b bigint[])
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'mm_waits_add'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION matchmaker.waits_add IS 'Two waits histograms added bucket by bucket (the step of waits_sum).';

CREATE AGGREGATE matchmaker.waits_sum(bigint[]) (
    SFUNC = matchmaker.waits_add,
    STYPE = bigint[]
);
COMMENT ON AGGREGATE matchmaker.waits_sum(bigint[]) IS 'The sum of waits histograms (matchmaker.queue_buckets.waits), bucket by bucket.';

-- Per queue, tenth of its rating range (band 0 to 9) and minute, a
-- histogram of the waits of the players its ticks matched, kept an hour:
-- ticket_status reads a waiting ticket's expected wait from its band's
-- rows of the queue's recent history window, so a call costs the same
-- however long the history.
CREATE TABLE matchmaker.queue_bands (
    queue        text NOT NULL,
    band         smallint NOT NULL,
    bucket_start timestamptz NOT NULL,
    waits        bigint[] NOT NULL,
    PRIMARY KEY (queue, band, bucket_start)
);
COMMENT ON TABLE matchmaker.queue_bands IS 'Per queue, tenth of its rating range (band 0 to 9) and minute (bucket_start), a histogram of the matched players'' waits that its ticks decided; kept an hour; ticket_status''s expected_wait reads it.';

CREATE FUNCTION matchmaker.wait_quantile(waits bigint[], q float8)
RETURNS float8
AS 'MODULE_PATHNAME', 'mm_wait_quantile'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION matchmaker.wait_quantile IS 'The wait in seconds below which a fraction q of a waits histogram lies (to within 19 %: a bucket spans a factor of 2^(1/4)); null when it is empty.';

CREATE FUNCTION matchmaker.worker_queues(OUT queue text, OUT last_tick timestamptz,
    OUT last_tick_ms float8, OUT lag_ms float8, OUT next_tick timestamptz,
    OUT failures integer, OUT last_error text, OUT last_error_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'mm_worker_queues'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION matchmaker.worker_queues IS 'The workers'' schedule of this database''s queues: when each last tick began, how long it took, how late it began after its timer was due, when the next is due, its ticks that failed in a row, and the message and time of its latest failure.';

CREATE VIEW matchmaker.queue_stats AS
SELECT q.name AS queue,
       w.waiting,
       w.oldest_wait,
       h.matches_1m, h.players_1m, h.matches_1h, h.players_1h,
       matchmaker.wait_quantile(h.waits, 0.5) AS p50_wait,
       matchmaker.wait_quantile(h.waits, 0.95) AS p95_wait,
       h.bot_share, h.expired_1h, h.mean_cost,
       s.last_tick, s.last_tick_ms, s.lag_ms, s.next_tick,
       s.failures, s.last_error, s.last_error_at
FROM matchmaker.queues q
CROSS JOIN LATERAL (
    SELECT pg_catalog.count(*) AS waiting,
           pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(t.enqueued_at)) AS oldest_wait
    FROM matchmaker.tickets t
    WHERE t.queue OPERATOR(pg_catalog.=) q.name AND t.state OPERATOR(pg_catalog.=) 'waiting') w
CROSS JOIN LATERAL (
    SELECT COALESCE(pg_catalog.sum(b.matches) FILTER (WHERE b.bucket_start OPERATOR(pg_catalog.>=) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 minute'::pg_catalog.interval)), 0)::bigint AS matches_1m,
           COALESCE(pg_catalog.sum(b.players) FILTER (WHERE b.bucket_start OPERATOR(pg_catalog.>=) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 minute'::pg_catalog.interval)), 0)::bigint AS players_1m,
           COALESCE(pg_catalog.sum(b.matches), 0)::bigint AS matches_1h,
           COALESCE(pg_catalog.sum(b.players), 0)::bigint AS players_1h,
           COALESCE(pg_catalog.sum(b.expired), 0)::bigint AS expired_1h,
           (pg_catalog.sum(b.bot_games)::float8 OPERATOR(pg_catalog./) NULLIF(pg_catalog.sum(b.matches), 0)::float8) AS bot_share,
           (pg_catalog.sum(b.cost) OPERATOR(pg_catalog./) NULLIF(pg_catalog.sum(b.matches), 0)::float8) AS mean_cost,
           matchmaker.waits_sum(b.waits) AS waits
    FROM matchmaker.queue_buckets b
    WHERE b.queue OPERATOR(pg_catalog.=) q.name
      AND b.bucket_start OPERATOR(pg_catalog.>=) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval)
      AND b.bucket_start OPERATOR(pg_catalog.<=) pg_catalog.now()) h
LEFT JOIN matchmaker.worker_queues() s ON s.queue OPERATOR(pg_catalog.=) q.name;
COMMENT ON VIEW matchmaker.queue_stats IS 'Per queue: waiting tickets and the oldest wait (s); matches and players in the last minute and hour; p50 and p95 wait (s), share of games with computer players, expiries and mean cost over the last hour; the worker''s last tick, its duration, its lag and the next; its ticks that failed in a row and its latest failure (see doc/reference.md, Operating).';

-- Retention (retention.c): the workers remove ended rows older than
-- matchmaker.retention; purge() does it by hand.  These indexes let each
-- batch take the oldest rows of a queue without a scan.
CREATE INDEX tickets_ended ON matchmaker.tickets (queue, ended_at)
    WHERE match_id IS NULL AND state IN ('cancelled', 'expired', 'invalid');
CREATE INDEX proposals_dissolved ON matchmaker.proposals (queue, ended_at) WHERE state = 'dissolved';

CREATE FUNCTION matchmaker.purge(queue text, before timestamptz, max_rows integer DEFAULT 1000)
RETURNS bigint
AS 'MODULE_PATHNAME', 'mm_purge_sql'
LANGUAGE C VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.purge IS 'Remove a queue''s matches (with their tickets), dissolved proposals and unmatched ended tickets from before a time, at most max_rows of each kind; returns the rows removed. The workers do it under matchmaker.retention.';

-- Node ids (matchmaker_router, doc/scaling.md): a node of a sharded
-- cluster hands out ticket, match and backfill ids from its own range,
-- [id * 2^43 + 1, (id + 1) * 2^43), so that an id says which node holds
-- it and a router sends cancel or ticket_status there without a lookup.
-- Ids stay below 2^53 (exact as JSON and JavaScript numbers).  A node that
-- never set one is node 0, whose range is where the sequences start.
CREATE FUNCTION matchmaker.set_node_id(id integer)
RETURNS void
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    lo bigint;
    hi bigint;
    seq text;
    top bigint;
    cur bigint;
    outside bigint;
BEGIN
    IF id IS NULL OR id < 0 OR id > 1023 THEN
        RAISE EXCEPTION USING
            ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('node id %s is out of range', COALESCE(id::text, 'NULL')),
            HINT = 'A node id is from 0 to 1023: the lowest PL/Proxy partition number naming the node.';
    END IF;
    lo := (id::bigint << 43) + 1;
    hi := ((id::bigint + 1) << 43) - 1;
    -- no id is taken while the ranges change
    LOCK TABLE matchmaker.tickets, matchmaker.matches, matchmaker.proposals, matchmaker.backfills
        IN SHARE MODE;
    SELECT count(*) INTO outside FROM (
        SELECT t.id FROM matchmaker.tickets t WHERE t.id NOT BETWEEN lo AND hi
        UNION ALL SELECT m.id FROM matchmaker.matches m WHERE m.id NOT BETWEEN lo AND hi
        UNION ALL SELECT p.id FROM matchmaker.proposals p WHERE p.id NOT BETWEEN lo AND hi
        UNION ALL SELECT b.id FROM matchmaker.backfills b WHERE b.id NOT BETWEEN lo AND hi) o;
    IF outside > 0 THEN
        RAISE EXCEPTION USING
            ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = format('cannot make this node node %s: %s of its ticket, match and backfill ids are outside that node''s range', id, outside),
            DETAIL = format('Node %s''s ids are %s to %s.', id, lo, hi),
            HINT = 'Set the node id before the node''s first enqueue (or after purging what it holds).';
    END IF;
    -- a sequence already in the range stays where it is; one outside it
    -- starts after the highest id its table holds in the range
    FOR seq, top IN
        SELECT 'tickets_id_seq', (SELECT max(t.id) FROM matchmaker.tickets t)
        UNION ALL SELECT 'matches_id_seq', GREATEST((SELECT max(m.id) FROM matchmaker.matches m),
                                                    (SELECT max(p.id) FROM matchmaker.proposals p))
        UNION ALL SELECT 'backfills_id_seq', (SELECT max(b.id) FROM matchmaker.backfills b)
    LOOP
        -- its position, which a restore keeps (pg_sequences shows none before a first nextval)
        EXECUTE format('SELECT last_value FROM matchmaker.%I', seq) INTO cur;
        IF cur BETWEEN lo AND hi THEN
            EXECUTE format('ALTER SEQUENCE matchmaker.%I MINVALUE %s MAXVALUE %s START %s', seq, lo, hi, lo);
        ELSE
            EXECUTE format('ALTER SEQUENCE matchmaker.%I MINVALUE %s MAXVALUE %s START %s RESTART %s',
                           seq, lo, hi, lo, GREATEST(lo, COALESCE(top + 1, lo)));
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION matchmaker.set_node_id IS 'Make this database node id of a sharded cluster (0 to 1023): its ticket, match and backfill ids come from that node''s range; refused once it holds ids outside it.';

CREATE FUNCTION matchmaker.node_id()
RETURNS integer
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    -- the sequence's position, which pg_dump keeps (its bounds it does not)
    SELECT (GREATEST(q.last_value, 1) >> 43)::integer FROM matchmaker.tickets_id_seq q
$$;
COMMENT ON FUNCTION matchmaker.node_id IS 'This database''s node id (0 unless set_node_id set another): the top bits of its ticket ids.';

-- A router (matchmaker_router) asks the node a queue is leaving whether
-- players of an enqueue still wait there, to send the enqueue there (where
-- it returns the waiting ticket) rather than to the queue's new node.
CREATE FUNCTION matchmaker.waiting(queue text, players text[])
RETURNS boolean
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM matchmaker.tickets t
                   WHERE t.queue = $1 AND t.player = ANY ($2) AND t.state IN ('waiting', 'proposed'))
$$;
COMMENT ON FUNCTION matchmaker.waiting IS 'Whether any of the players has a waiting or proposed ticket in the queue (what enqueue would find); for a router moving the queue.';

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
    matchmaker.enqueue_party(text, text[], float8[], jsonb),
    matchmaker.cancel(bigint),
    matchmaker.accept(bigint, boolean),
    matchmaker.backfill(bigint, integer, integer, interval),
    matchmaker.cancel_backfill(bigint),
    matchmaker.ticket_status(bigint),
    matchmaker.waiting(text, text[])
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
    matchmaker.waits_add(bigint[], bigint[]),
    matchmaker.waits_sum(bigint[]),
    matchmaker.wait_quantile(bigint[], float8),
    matchmaker.worker_queues(),
    matchmaker.purge(text, timestamptz, integer),
    matchmaker.node_id(),
    matchmaker.waiting(text, text[]),
    matchmaker.backfill(bigint, integer, integer, interval),
    matchmaker.cancel_backfill(bigint),
    matchmaker.ticket_status(bigint)
TO matchmaker_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA matchmaker TO matchmaker_admin;
