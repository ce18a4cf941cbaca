-- Parties (enqueue_party) and roles (params.roles) in every algorithm: a
-- party plays whole, in one team; every team's roles fill; bad input is
-- refused and changes nothing; live equals simulate.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS matchmaker;
SET client_min_messages = notice;
SET TIME ZONE 'UTC';

SELECT matchmaker.create_queue('duo', team_size => 2, algorithm => 'greedy', max_wait => '60 s');
SELECT matchmaker.create_queue('trio', team_size => 3, algorithm => 'greedy', max_wait => '60 s',
                               params => '{"roles": {"tank": 1, "healer": 1, "dps": 1}}');

-- A party's tickets: one instant, the first id names the party; a repeated
-- call returns the same ids.
SELECT matchmaker.enqueue_party('duo', ARRAY['ann', 'bob'], ARRAY[0.2, 0.4]) AS ids \gset
SELECT :'ids' = matchmaker.enqueue_party('duo', ARRAY['ann', 'bob'], ARRAY[0.2, 0.4])::text AS same_ids;
SELECT player, party = (:'ids'::bigint[])[1] AS names_party, rating,
       enqueued_at = (SELECT min(enqueued_at) FROM matchmaker.tickets WHERE party IS NOT NULL) AS one_instant
FROM matchmaker.tickets WHERE queue = 'duo' ORDER BY id;

-- Bad input: each refused, nothing written.
SELECT count(*) AS tickets_before FROM matchmaker.tickets \gset
SELECT matchmaker.enqueue_party('duo', ARRAY['a', 'b', 'c'], ARRAY[0.1, 0.2, 0.3]);
SELECT matchmaker.enqueue_party('duo', ARRAY['a', 'a'], ARRAY[0.1, 0.2]);
SELECT matchmaker.enqueue_party('duo', ARRAY['a', NULL], ARRAY[0.1, 0.2]);
SELECT matchmaker.enqueue_party('duo', ARRAY['a', 'b'], ARRAY[0.1]);
SELECT matchmaker.enqueue_party('duo', ARRAY[]::text[], ARRAY[]::float8[]);
SELECT matchmaker.enqueue_party('duo', ARRAY['a', 'b'], ARRAY[0.1, 7]);
SELECT matchmaker.enqueue_party('duo', ARRAY['a', 'b'], ARRAY[0.1, 0.2], '{"party": "x"}');
SELECT matchmaker.enqueue_party('duo', ARRAY['a', 'bob'], ARRAY[0.1, 0.2]);
SELECT matchmaker.enqueue_party('nosuch', ARRAY['a', 'b'], ARRAY[0.1, 0.2]);
SELECT matchmaker.enqueue_party('duo', ARRAY[['a', 'b']], ARRAY[[0.1, 0.2]]);
SELECT matchmaker.enqueue_party('trio', ARRAY['a', 'b'], ARRAY[0.1, 0.2], '{"roles": ["tank"]}');
SELECT matchmaker.enqueue_party('trio', ARRAY['a', 'b'], ARRAY[0.1, 0.2], '{"roles": [["tank"], ["mage"]]}');
SELECT matchmaker.enqueue_party('trio', ARRAY['a', 'b'], ARRAY[0.1, 0.2], '{"roles": [["tank"]]}');
SELECT matchmaker.enqueue_party('trio', ARRAY['a', 'b'], ARRAY[0.1, 0.2]);
SELECT matchmaker.enqueue('trio', 'a', 0.1, '{"roles": "tank"}');
SELECT matchmaker.enqueue('trio', 'a', 0.1, '{"roles": ["tank", "tank"]}');
SELECT matchmaker.enqueue('trio', 'a', 0.1, '{"roles": []}');
SELECT count(*) = :tickets_before AS nothing_written FROM matchmaker.tickets;

-- Roles that no team can use, and where roles do not apply.
SELECT matchmaker.create_queue('bad', team_size => 3, params => '{"roles": {"tank": 1, "dps": 1}}');
SELECT matchmaker.create_queue('bad', team_size => 3, params => '{"roles": {"tank": 1, "dps": 0, "healer": 2}}');
SELECT matchmaker.create_queue('bad', team_size => 3, params => '{"roles": ["tank"]}');
SELECT matchmaker.create_queue('bad', team_size => 3, algorithm => 'optimize', params => '{"roles": {"tank": 3}}');
SELECT matchmaker.create_queue('bad', team_size => 3, params => '{"party_rating": "median"}');
SELECT matchmaker.alter_queue('trio', team_size => 4);

-- Cancelling one member cancels the party; the other ids cancel nothing more.
SELECT matchmaker.cancel((:'ids'::bigint[])[2]) AS cancelled;
SELECT player, state FROM matchmaker.tickets WHERE queue = 'duo' ORDER BY id;
SELECT matchmaker.cancel((:'ids'::bigint[])[1]) AS again;

-- A party groups at its mean rating (params.party_rating "max": its best
-- player's) and plays in one team: 2v2 greedy, a party of two and two
-- solos form one match, the party on one side.
SELECT matchmaker.enqueue_party('duo', ARRAY['p1', 'p2'], ARRAY[0.1, 0.9]) IS NOT NULL AS party;
SELECT matchmaker.enqueue('duo', 's' || g, 0.5) IS NOT NULL AS solo FROM generate_series(1, 2) g;
SELECT matchmaker.tick('duo', now() + interval '1 s');
SELECT player, state, team = (SELECT team FROM matchmaker.tickets WHERE queue = 'duo' AND player = 'p1' AND state = 'matched') AS with_p1
FROM matchmaker.tickets WHERE queue = 'duo' AND state = 'matched' ORDER BY player;
-- the cost counts each player of the party at the party's rating (0.5):
-- one match of four players at 0.5: no rating spread
SELECT criteria_cost = 0 AS party_at_mean FROM matchmaker.matches WHERE queue = 'duo';

-- Roles: every team gets its tank, healer and dps, each from its list.
SELECT matchmaker.enqueue_party('trio', ARRAY['t1', 'h1'], ARRAY[0.5, 0.5],
                                '{"roles": [["tank"], ["healer", "dps"]]}') IS NOT NULL AS party;
SELECT matchmaker.enqueue('trio', 'd' || g, 0.5, '{"roles": ["dps"]}') IS NOT NULL AS dps FROM generate_series(1, 3) g;
SELECT matchmaker.tick('trio', now() + interval '1 s') AS without_tank;
SELECT matchmaker.enqueue('trio', 'h2', 0.5, '{"roles": ["healer"]}') IS NOT NULL AS healer;
SELECT matchmaker.tick('trio', now() + interval '1 s') AS still_without_tank;
SELECT matchmaker.enqueue('trio', 't2', 0.5, '{"roles": ["tank", "dps"]}') IS NOT NULL AS tank;
SELECT matchmaker.tick('trio', now() + interval '1 s') AS with_tank;
SELECT team, string_agg(role, ',' ORDER BY role) AS roles, bool_and(attributes->'roles' ? role) AS listed,
       count(DISTINCT party) AS parties
FROM matchmaker.tickets WHERE queue = 'trio' AND state = 'matched' GROUP BY team ORDER BY team;
SELECT player FROM matchmaker.tickets WHERE queue = 'trio' AND state = 'waiting';
-- backfill does not fill roles
SELECT matchmaker.backfill((SELECT max(match_id) FROM matchmaker.tickets WHERE queue = 'trio'), 1);

-- party_rating "max": the party of 0.1 and 0.9 groups at 0.9, with two
-- solos at 0.9; a party of one is a solo ticket.
SELECT matchmaker.create_queue('duo_max', team_size => 2, algorithm => 'greedy', max_wait => '60 s',
                               params => '{"party_rating": "max"}');
SELECT matchmaker.enqueue_party('duo_max', ARRAY['m1', 'm2'], ARRAY[0.1, 0.9]) IS NOT NULL AS party;
SELECT matchmaker.enqueue_party('duo_max', ARRAY['m3'], ARRAY[0.9]) IS NOT NULL AS alone;
SELECT matchmaker.enqueue('duo_max', 'm4', 0.9) IS NOT NULL AS solo;
SELECT matchmaker.tick('duo_max', now() + interval '1 s');
SELECT criteria_cost = 0 AS party_at_max FROM matchmaker.matches WHERE queue = 'duo_max';
SELECT player, party IS NULL AS alone FROM matchmaker.tickets WHERE queue = 'duo_max' ORDER BY player;

-- Block lists (an exclude filter) with parties: a party whose player
-- blocks a player of another never meets it, and one may not block itself.
SELECT matchmaker.create_queue('pblock', team_size => 2, algorithm => 'greedy', max_wait => '60 s',
                               params => '{"filters": {"blocked": "exclude"}}');
SELECT matchmaker.enqueue_party('pblock', ARRAY['x1', 'x2'], ARRAY[0.5, 0.5], '{"blocked": ["x2"]}');
SELECT matchmaker.enqueue_party('pblock', ARRAY['x1', 'x2'], ARRAY[0.5, 0.5], '{"blocked": ["y1"]}') IS NOT NULL AS x;
SELECT matchmaker.enqueue_party('pblock', ARRAY['y1', 'y2'], ARRAY[0.5, 0.5]) IS NOT NULL AS y;
SELECT matchmaker.tick('pblock', now() + interval '1 s') AS blocked;
SELECT matchmaker.enqueue_party('pblock', ARRAY['z1', 'z2'], ARRAY[0.5, 0.5]) IS NOT NULL AS z;
SELECT matchmaker.tick('pblock', now() + interval '2 s') AS one_match;
SELECT string_agg(player, ',' ORDER BY player) AS together, count(DISTINCT team) AS teams
FROM matchmaker.tickets WHERE queue = 'pblock' AND state = 'matched' GROUP BY match_id;
SELECT string_agg(player, ',' ORDER BY player) AS waiting FROM matchmaker.tickets WHERE queue = 'pblock' AND state = 'waiting';

-- optimize forms its own units: a party of enqueue_party is one, as a
-- premade of attributes.party is (each player at its own rating).
SELECT matchmaker.create_queue('opt', team_size => 2, algorithm => 'optimize', max_wait => '60 s',
                               params => '{"round": 1}');
SELECT matchmaker.enqueue_party('opt', ARRAY['o1', 'o2'], ARRAY[0.1, 0.9]) IS NOT NULL AS party;
SELECT matchmaker.enqueue('opt', 'o' || g, 0.5, jsonb_build_object('party', 'pre')) IS NOT NULL AS premade
FROM generate_series(3, 4) g;
SELECT matchmaker.tick('opt', now() + interval '61 s') > 0 AS matched;
SELECT string_agg(player, ',' ORDER BY player) AS team FROM matchmaker.tickets
WHERE queue = 'opt' AND state = 'matched' GROUP BY team ORDER BY 1;
SELECT rating FROM matchmaker.tickets WHERE queue = 'opt' AND party IS NOT NULL ORDER BY player;

-- A ready check: a party answers as one.
SELECT matchmaker.create_queue('ready', team_size => 2, algorithm => 'greedy', max_wait => '60 s',
                               params => '{"accept_timeout": 30}');
SELECT matchmaker.enqueue_party('ready', ARRAY['r1', 'r2'], ARRAY[0.5, 0.5]) IS NOT NULL AS party;
SELECT matchmaker.enqueue('ready', 'r' || g, 0.5) IS NOT NULL FROM generate_series(3, 4) g;
SELECT matchmaker.tick('ready', now() + interval '1 s');
SELECT matchmaker.accept(id, false) FROM matchmaker.tickets WHERE queue = 'ready' AND player = 'r1';
SELECT player, state FROM matchmaker.tickets WHERE queue = 'ready' ORDER BY player;

-- Every algorithm keeps parties whole, in one team: a stream of parties of
-- one to three players (3v3, roles) replayed live, tick at every arrival
-- and timer, compared with simulate ticket by ticket.
CREATE TABLE pstream AS
WITH u AS (
    SELECT i AS unit, 1 + floor(random() * 3)::int AS size, random() AS r,
           round((sum(-ln(1 - random()) / 2) OVER (ORDER BY i))::numeric, 3)::float8 AS arrival
    FROM (SELECT setseed(0.31)) s, generate_series(1, 80) i)
SELECT (u.unit * 10 + m)::bigint AS id, round((u.r * 0.8 + m * 0.05)::numeric, 4)::float8 AS rating, u.arrival,
       jsonb_build_object('roles', CASE WHEN u.size = 1 THEN (ARRAY['["tank"]', '["healer"]', '["dps"]', '["dps", "tank"]', '["healer", "dps"]'])[1 + (u.unit % 5)]::jsonb
                                        ELSE (ARRAY['["tank", "dps"]', '["healer"]', '["dps"]'])[m]::jsonb END)
       || jsonb_build_object('mode', (ARRAY['ranked', 'casual'])[1 + (u.unit * 7 % 3 = 0)::int])
       || CASE WHEN u.size > 1 THEN jsonb_build_object('party', 'u' || u.unit) ELSE '{}' END AS attrs,
       u.unit, u.size
FROM u, generate_series(1, u.size) m;
CREATE FUNCTION p_next_due(qname text, last float8) RETURNS float8 LANGUAGE sql AS $$
    SELECT least(
        -- the next instant a waiting ticket's filter relaxes (optional_after)
        (SELECT min(extract(epoch FROM t.enqueued_at - '2026-01-01 00:00:00+00') + (f.value->>'optional_after')::float8)
         FROM matchmaker.tickets t JOIN matchmaker.queues q ON q.name = t.queue,
              jsonb_each(q.params->'filters') f
         WHERE t.queue = qname AND t.state = 'waiting' AND jsonb_typeof(f.value) = 'object'
           AND extract(epoch FROM t.enqueued_at - '2026-01-01 00:00:00+00') + (f.value->>'optional_after')::float8 > last),
        -- every group the last tick left, as the worker's next deadline counts
        -- them (one that gave a player to a match is dissolved by the next tick)
        (SELECT extract(epoch FROM min(finalize_at) - '2026-01-01 00:00:00+00') FROM matchmaker.provisional_groups WHERE queue = qname),
        (SELECT extract(epoch FROM min(t.enqueued_at) - '2026-01-01 00:00:00+00') + extract(epoch FROM q.max_wait)
         FROM matchmaker.tickets t JOIN matchmaker.queues q ON q.name = t.queue
         WHERE t.queue = qname AND t.state = 'waiting'
           AND NOT EXISTS (SELECT 1 FROM matchmaker.provisional_groups p WHERE p.queue = qname AND t.id = ANY (p.tickets))
         GROUP BY q.max_wait))
$$;
CREATE FUNCTION p_replay(qname text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    origin constant timestamptz := '2026-01-01 00:00:00+00';
    t float8;
    u record;
    last float8 := -1;
BEGIN
    LOOP
        t := least((SELECT min(arrival) FROM pstream WHERE arrival > last), p_next_due(qname, last));
        EXIT WHEN t IS NULL;
        FOR u IN SELECT unit, array_agg('p' || id ORDER BY id) AS players, array_agg(rating ORDER BY id) AS ratings,
                        jsonb_build_object('roles', jsonb_agg(attrs->'roles' ORDER BY id),
                                           'mode', min(attrs->>'mode')) AS attrs
                 FROM pstream WHERE arrival = t GROUP BY unit ORDER BY unit LOOP
            PERFORM matchmaker.enqueue_party(qname, u.players, u.ratings, u.attrs);
        END LOOP;
        UPDATE matchmaker.tickets SET enqueued_at = origin + t * interval '1 second'
        WHERE queue = qname AND state = 'waiting' AND enqueued_at > origin + t * interval '1 second';
        PERFORM matchmaker.tick(qname, origin + t * interval '1 second');
        last := t;
    END LOOP;
END
$$;
CREATE FUNCTION p_compare(q text) RETURNS TABLE (live bigint, simulated bigint, differ bigint)
LANGUAGE sql AS $$
    WITH live AS (
        SELECT substr(t.player, 2)::bigint AS id,
               CASE WHEN t.match_id IS NULL THEN NULL ELSE dense_rank() OVER (ORDER BY t.match_id) END AS match_no,
               t.team, round(extract(epoch FROM coalesce(t.matched_at, t.ended_at) - '2026-01-01 00:00:00+00')::numeric, 4) AS at
        FROM matchmaker.tickets t WHERE t.queue = q),
    sim AS (SELECT id, match_no, team, round(matched_at::numeric, 4) AS at
            FROM matchmaker.simulate(q, 'SELECT id, rating, arrival, attrs FROM pstream'))
    SELECT (SELECT count(*) FROM live), (SELECT count(*) FROM sim),
           (SELECT count(*) FROM ((TABLE live EXCEPT TABLE sim) UNION ALL (TABLE sim EXCEPT TABLE live)) d)
$$;
SELECT matchmaker.create_queue('p_' || a, team_size => 3, algorithm => a, max_wait => '8 s',
                               params => '{"roles": {"tank": 1, "healer": 1, "dps": 1}}'::jsonb
                                         || CASE a WHEN 'periodic' THEN '{"batch": 12}'
                                                   WHEN 'multi_queue' THEN '{"ranges": 3, "on_timeout": "expire"}'
                                                   WHEN 'difference_wait' THEN '{"wait_factor": 2}' ELSE '{}' END::jsonb)
FROM unnest(ARRAY['greedy', 'periodic', 'multi_queue', 'difference_wait']) a;
-- and with a filter that relaxes: players meet their own mode, any after 3 s
SELECT matchmaker.create_queue('p_modes', team_size => 3, algorithm => 'greedy', max_wait => '8 s',
                               params => '{"roles": {"tank": 1, "healer": 1, "dps": 1},
                                           "filters": {"mode": {"kind": "equal", "optional_after": 3}}}');
SELECT p_replay(name) FROM matchmaker.queues WHERE name LIKE 'p\_%' ORDER BY name;
SELECT name, c.* FROM matchmaker.queues, p_compare(name) c WHERE name LIKE 'p\_%' ORDER BY name;
-- in every queue: parties whole in one team, each team's roles filled
-- from its players' lists, most players matched
SELECT t.queue,
       count(*) FILTER (WHERE t.state = 'matched') > count(*) * 2 / 3 AS most_matched,
       (SELECT count(*) FROM (SELECT party FROM matchmaker.tickets x WHERE x.queue = t.queue AND party IS NOT NULL
                              GROUP BY party HAVING count(DISTINCT (state, match_id, team)) > 1) s) AS split_parties,
       (SELECT count(*) FROM (SELECT match_id, team FROM matchmaker.tickets x WHERE x.queue = t.queue AND state = 'matched'
                              GROUP BY match_id, team HAVING count(DISTINCT role) < count(*)) s) AS roles_repeated,
       bool_and(t.state <> 'matched' OR t.attributes->'roles' ? t.role) AS roles_listed
FROM matchmaker.tickets t WHERE t.queue LIKE 'p\_%' GROUP BY t.queue ORDER BY t.queue;
-- p_modes: some matches waived the mode, and only those mix modes
SELECT count(*) FILTER (WHERE m.relaxed IS NOT NULL) > 0 AS some_relaxed,
       count(*) FILTER (WHERE m.relaxed IS NULL AND x.modes > 1) AS mixed_unrelaxed
FROM matchmaker.matches m
JOIN (SELECT match_id, count(DISTINCT attributes->>'mode') AS modes FROM matchmaker.tickets GROUP BY match_id) x
  ON x.match_id = m.id
WHERE m.queue = 'p_modes';
-- window, cluster and auto keep parties whole too (their timers are their own)
SELECT matchmaker.create_queue('q_' || a, team_size => 3, algorithm => a, max_wait => '8 s',
                               params => '{"roles": {"tank": 1, "healer": 1, "dps": 1}}')
FROM unnest(ARRAY['window', 'cluster', 'auto']) a;
SELECT q.name, count(*) AS players,
       count(*) FILTER (WHERE s.match_no IS NOT NULL) > count(*) * 2 / 3 AS most_matched,
       (SELECT count(*) FROM (SELECT p.unit FROM pstream p JOIN matchmaker.simulate(q.name, 'SELECT id, rating, arrival, attrs FROM pstream') x USING (id)
                              WHERE p.size > 1 GROUP BY p.unit HAVING count(DISTINCT (x.match_no, x.team)) > 1) z) AS split_parties
FROM matchmaker.queues q, matchmaker.simulate(q.name, 'SELECT id, rating, arrival, attrs FROM pstream') s
WHERE q.name LIKE 'q\_%' GROUP BY q.name ORDER BY q.name;
-- simulate refuses a party arriving at two times, or too big for a team
SELECT * FROM matchmaker.simulate('p_greedy', $$VALUES (1, 0.5, 0.0, '{"party": "x", "roles": ["tank"]}'::jsonb),
                                                     (2, 0.5, 1.0, '{"party": "x", "roles": ["dps"]}'::jsonb)$$);
SELECT * FROM matchmaker.simulate('p_greedy', $$SELECT g, 0.5, 0.0, '{"party": "x", "roles": ["dps", "tank", "healer"]}'::jsonb
                                                 FROM generate_series(1, 4) g$$);
SELECT * FROM matchmaker.simulate('p_greedy', $$VALUES (1, 0.5, 0.0, '{"roles": ["mage"]}'::jsonb)$$);
SELECT * FROM matchmaker.check();
