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
    CHECK (state IN ('waiting', 'proposed', 'matched', 'cancelled', 'expired', 'invalid', 'declined'));
COMMENT ON TABLE matchmaker.tickets IS 'Players'' requests to play; state waiting, proposed (in a match awaiting its ready check; accepted holds the answer), matched, cancelled, expired, declined or invalid (end_reason says why).';

ALTER TABLE matchmaker.tickets ALTER COLUMN enqueued_by TYPE oid;
ALTER TABLE matchmaker.tickets ADD COLUMN enqueued_by_name text;
UPDATE matchmaker.tickets t
SET enqueued_by_name = COALESCE((SELECT r.rolname FROM pg_catalog.pg_roles r
                                 WHERE r.oid OPERATOR(pg_catalog.=) t.enqueued_by), '');
ALTER TABLE matchmaker.tickets ALTER COLUMN enqueued_by_name SET NOT NULL;

-- Ready checks (params.accept_timeout): a ticket is 'proposed' while its
-- match awaits its players' answers (tickets.accepted), and 'declined'
-- when it declined or did not answer in time; the match is a row of
-- proposals until every player accepts.  A player has one ticket waiting
-- or proposed per queue.
ALTER TABLE matchmaker.tickets ADD COLUMN accepted boolean;
DROP INDEX matchmaker.tickets_waiting;
CREATE UNIQUE INDEX tickets_waiting ON matchmaker.tickets (queue, player) WHERE state IN ('waiting', 'proposed');
-- params.filters: the values a match's players share, {"mode": "ranked"}
ALTER TABLE matchmaker.matches ADD COLUMN filters jsonb;
-- the filters a player of the match waived after its optional_after
ALTER TABLE matchmaker.matches ADD COLUMN relaxed text[];

-- auto's arrival rate of each filter value (tick.c, measure_key_rates)
CREATE INDEX matches_queue_filters ON matchmaker.matches (queue, filters, created_at) WHERE filters IS NOT NULL;
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
SELECT pg_catalog.pg_extension_config_dump('matchmaker.proposals', '');
GRANT SELECT ON matchmaker.proposals TO matchmaker_admin;

ALTER TABLE matchmaker.tickets ADD COLUMN backfill_id bigint;

-- Parties (enqueue_party) and roles (params.roles)
ALTER TABLE matchmaker.tickets ADD COLUMN party bigint;
ALTER TABLE matchmaker.tickets ADD COLUMN role text;
CREATE INDEX tickets_party ON matchmaker.tickets (party) WHERE party IS NOT NULL;
CREATE FUNCTION matchmaker.enqueue_party(queue text, players text[], ratings float8[], attributes jsonb DEFAULT '{}')
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'mm_enqueue_party'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.enqueue_party IS 'Put a party in a queue, all or nothing; returns its members'' ticket ids (the same ids while the party waits). It plays whole, in one team; cancelling one member cancels it.';
REVOKE ALL ON FUNCTION matchmaker.enqueue_party(text, text[], float8[], jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION matchmaker.enqueue_party(text, text[], float8[], jsonb) TO matchmaker_client;

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
SELECT pg_catalog.pg_extension_config_dump('matchmaker.backfills', '');
SELECT pg_catalog.pg_extension_config_dump('matchmaker.backfills_id_seq', '');
GRANT SELECT ON matchmaker.backfills TO matchmaker_admin;

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
COMMENT ON FUNCTION matchmaker.cancel IS 'Cancel a waiting or proposed ticket of the calling role (a proposed one dissolves its match), with its whole party; false when it is neither.';

-- Ready checks: a player answers for a proposed ticket.
CREATE FUNCTION matchmaker.accept(ticket bigint, accepted boolean DEFAULT true)
RETURNS text
AS 'MODULE_PATHNAME', 'mm_accept'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION matchmaker.accept IS 'Answer the ready check of a proposed ticket of the calling role; returns the ticket''s state after the answer.';
REVOKE ALL ON FUNCTION matchmaker.accept(bigint, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION matchmaker.accept(bigint, boolean) TO matchmaker_client;

-- Backfill of running matches.
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
REVOKE ALL ON FUNCTION matchmaker.backfill(bigint, integer, integer, interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION matchmaker.cancel_backfill(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION matchmaker.backfill(bigint, integer, integer, interval),
    matchmaker.cancel_backfill(bigint) TO matchmaker_client, matchmaker_admin;

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
REVOKE ALL ON FUNCTION matchmaker.waits_add(bigint[], bigint[]), matchmaker.waits_sum(bigint[]),
    matchmaker.wait_quantile(bigint[], float8), matchmaker.worker_queues() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION matchmaker.waits_add(bigint[], bigint[]), matchmaker.waits_sum(bigint[]),
    matchmaker.wait_quantile(bigint[], float8), matchmaker.worker_queues() TO matchmaker_admin;
GRANT SELECT ON matchmaker.queue_buckets, matchmaker.queue_bands, matchmaker.queue_stats TO matchmaker_admin;

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

REVOKE ALL ON FUNCTION matchmaker.purge(text, timestamptz, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION matchmaker.purge(text, timestamptz, integer) TO matchmaker_admin;

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

REVOKE ALL ON FUNCTION matchmaker.set_node_id(integer), matchmaker.node_id(),
    matchmaker.waiting(text, text[]), matchmaker.queues_changed() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION matchmaker.node_id() TO matchmaker_admin;
GRANT EXECUTE ON FUNCTION matchmaker.waiting(text, text[]) TO matchmaker_client, matchmaker_admin;
