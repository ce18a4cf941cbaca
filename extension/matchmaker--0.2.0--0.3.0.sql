\echo Use "ALTER EXTENSION matchmaker UPDATE TO '0.3.0'" to load this file. \quit

-- 0.2.0 to 0.3.0: a tick ends a waiting ticket the queue's settings cannot
-- use in the new state 'invalid', with its reason in the new column
-- tickets.end_reason; cancel no longer removes its ticket's provisional
-- group (the next tick dissolves it), so the view provisional shows only
-- groups whose tickets all wait and check() accepts a cancelled member.
--
-- A ticket's owner is recorded as what a restore can carry and a dropped
-- role cannot pass on: enqueued_by becomes a plain oid (a regrole failed
-- the whole COPY of a restore into a cluster without the role), beside
-- the role's name in enqueued_by_name; enqueue, cancel and ticket_status
-- move to entry points that write and check both.  A ticket whose role is
-- already gone gets the name '' and so belongs to nobody.

ALTER TABLE matchmaker.tickets ADD COLUMN end_reason text;
ALTER TABLE matchmaker.tickets DROP CONSTRAINT tickets_state;
ALTER TABLE matchmaker.tickets ADD CONSTRAINT tickets_state
    CHECK (state IN ('waiting', 'matched', 'cancelled', 'expired', 'invalid'));
COMMENT ON TABLE matchmaker.tickets IS 'Players'' requests to play; state waiting, matched, cancelled, expired or invalid (end_reason says why).';

ALTER TABLE matchmaker.tickets ALTER COLUMN enqueued_by TYPE oid;
ALTER TABLE matchmaker.tickets ADD COLUMN enqueued_by_name text;
UPDATE matchmaker.tickets t
SET enqueued_by_name = COALESCE((SELECT r.rolname FROM pg_catalog.pg_roles r
                                 WHERE r.oid OPERATOR(pg_catalog.=) t.enqueued_by), '');
ALTER TABLE matchmaker.tickets ALTER COLUMN enqueued_by_name SET NOT NULL;

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
SELECT pg_catalog.pg_extension_config_dump('matchmaker.tunings', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.tunings_id_seq', '');
GRANT SELECT ON matchmaker.tunings TO matchmaker_admin;

-- New queues use algorithm auto unless they name another; existing queues keep theirs.
CREATE OR REPLACE FUNCTION matchmaker.create_queue(
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

CREATE OR REPLACE FUNCTION matchmaker.enqueue(queue text, player text, rating float8, attributes jsonb DEFAULT '{}')
RETURNS bigint
AS 'MODULE_PATHNAME', 'mm_enqueue_0_3'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION matchmaker.cancel(ticket bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'mm_cancel_0_3'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION matchmaker.ticket_status(ticket bigint,
    OUT queue text, OUT player text, OUT state text, OUT enqueued_at timestamptz,
    OUT waited interval, OUT match_id bigint, OUT team integer,
    OUT expected_wait interval, OUT next_round timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'mm_ticket_status_0_3'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE VIEW matchmaker.provisional AS
    SELECT p.queue, p.tickets, p.q, p.formed_at, p.finalize_at
    FROM matchmaker.provisional_groups p
    WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(p.tickets) AS m(id)
                      LEFT JOIN matchmaker.tickets t ON t.id OPERATOR(pg_catalog.=) m.id
                      WHERE t.state IS DISTINCT FROM 'waiting');

CREATE OR REPLACE FUNCTION matchmaker.check()
RETURNS TABLE (problem text, queue text, id bigint, detail text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- a match has k participants (tickets + computer players)
    SELECT 'match size'::text, m.queue, m.id,
           pg_catalog.format('%s tickets and %s computer players, expected %s',
                             pg_catalog.count(t.id), m.bots, q.team_size OPERATOR(pg_catalog.*) q.teams)
    FROM matchmaker.matches m
    JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) m.queue
    LEFT JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id
    GROUP BY m.id, m.queue, m.bots, q.team_size, q.teams
    HAVING (pg_catalog.count(t.id) OPERATOR(pg_catalog.+) m.bots) OPERATOR(pg_catalog.<>) (q.team_size OPERATOR(pg_catalog.*) q.teams)
  UNION ALL
    -- a team holds at most team_size real players, numbered 1..teams
    SELECT 'team size', m.queue, m.id,
           pg_catalog.format('team %s has %s players, at most %s', t.team, pg_catalog.count(*), q.team_size)
    FROM matchmaker.matches m
    JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) m.queue
    JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id
    GROUP BY m.id, m.queue, t.team, q.team_size, q.teams
    HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) q.team_size
        OR t.team IS NULL OR t.team OPERATOR(pg_catalog.<) 1 OR t.team OPERATOR(pg_catalog.>) q.teams
  UNION ALL
    -- a ticket is matched exactly when it has a match (so no cancelled,
    -- expired or invalid ticket is in one), and the match is of its queue;
    -- an invalid ticket, and only one, has an end_reason
    SELECT 'ticket state', t.queue, t.id,
           pg_catalog.format('state %s with match %s, matched_at %s', t.state,
                             COALESCE(t.match_id::text, 'none'),
                             CASE WHEN t.matched_at IS NULL THEN 'unset' ELSE 'set' END)
    FROM matchmaker.tickets t
    LEFT JOIN matchmaker.matches m ON m.id OPERATOR(pg_catalog.=) t.match_id
    WHERE (t.state OPERATOR(pg_catalog.=) 'matched') OPERATOR(pg_catalog.<>) (m.id IS NOT NULL)
       OR (t.state OPERATOR(pg_catalog.=) 'matched') OPERATOR(pg_catalog.<>) (t.matched_at IS NOT NULL)
       OR (t.match_id IS NOT NULL AND m.id IS NULL)
       OR m.queue OPERATOR(pg_catalog.<>) t.queue
       OR (t.state OPERATOR(pg_catalog.=) 'invalid') OPERATOR(pg_catalog.<>) (t.end_reason IS NOT NULL)
  UNION ALL
    -- every ticket and match belongs to an existing queue
    SELECT 'unknown queue', x.queue, x.id, x.what
    FROM (SELECT t.queue, t.id, 'ticket'::text AS what FROM matchmaker.tickets t
          UNION ALL
          SELECT m.queue, m.id, 'match' FROM matchmaker.matches m) x
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
    -- while this database's worker runs, no ticket waits past max_wait plus a tick interval
    SELECT 'overdue', t.queue, t.id,
           pg_catalog.format('waiting since %s, max_wait %s, tick %s', t.enqueued_at, q.max_wait, q.tick)
    FROM matchmaker.tickets t
    JOIN matchmaker.queues q ON q.name OPERATOR(pg_catalog.=) t.queue
    WHERE t.state OPERATOR(pg_catalog.=) 'waiting'
      -- (the sum is taken for a past enqueued_at only: near the end of time it overflows)
      AND CASE WHEN t.enqueued_at OPERATOR(pg_catalog.<) pg_catalog.now()
          THEN ((t.enqueued_at OPERATOR(pg_catalog.+) q.max_wait) OPERATOR(pg_catalog.+) q.tick)
               OPERATOR(pg_catalog.<) pg_catalog.now() END
      AND EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a
                  WHERE a.backend_type OPERATOR(pg_catalog.=) 'matchmaker worker'
                    AND a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())
      AND pg_catalog.current_setting('matchmaker.enabled', true) IS DISTINCT FROM 'off'
$$;
