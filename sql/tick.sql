-- tick: each algorithm on hand-built arrivals at deterministic times.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

-- Arrivals at chosen seconds after a fixed origin: enqueue, then set the
-- ticket's enqueued_at (the test is superuser; applications never write
-- the tables).
CREATE FUNCTION arrive(q text, player text, rating float8, t float8) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    ticket bigint := matchmaker.enqueue(q, player, rating);
BEGIN
    UPDATE matchmaker.tickets SET enqueued_at = '2026-01-01 00:00:00+00'::timestamptz + t * interval '1 second'
    WHERE id = ticket;
    RETURN ticket;
END
$$;
CREATE FUNCTION at(t float8) RETURNS timestamptz
LANGUAGE sql AS $$ SELECT '2026-01-01 00:00:00+00'::timestamptz + t * interval '1 second' $$;

-- The matches of a queue: members by team, bots and cost.
CREATE VIEW groups AS
SELECT m.queue, string_agg(t.player || '@' || t.team, ' ' ORDER BY t.team, t.rating, t.player) AS members,
       m.bots, round(m.cost::numeric, 6) AS cost, m.created_at - at(0) AS at
FROM matchmaker.matches m LEFT JOIN matchmaker.tickets t ON t.match_id = m.id
GROUP BY m.id ORDER BY m.id;

-- greedy: the first k waiting tickets in arrival order, whatever their ratings.
SELECT matchmaker.create_queue('g', algorithm => 'greedy', max_wait => '10 s');
SELECT arrive('g', 'a', 0.9, 0), arrive('g', 'b', 0.1, 1), arrive('g', 'c', 0.5, 2),
       arrive('g', 'd', 0.95, 3), arrive('g', 'e', 0.2, 4) \gset
SELECT matchmaker.tick('g', at(4));
SELECT * FROM groups WHERE queue = 'g';
SELECT player, state FROM matchmaker.tickets WHERE queue = 'g' AND state = 'waiting';
-- Nothing more to do until e times out at 14 s; then a computer player joins (on_timeout bots).
SELECT matchmaker.tick('g', at(13.9));
SELECT matchmaker.tick('g', at(14));
SELECT * FROM groups WHERE queue = 'g';
-- Each cost is match_cost of the same game.
SELECT matchmaker.match_cost('g', '{0.9, 0.1}', '{4, 3}') AS ab,
       matchmaker.match_cost('g', '{0.2}', '{10}', 1) AS e_with_bot;

-- periodic, batch 8: sort the period's players by rating, pair neighbours.
SELECT matchmaker.create_queue('p', algorithm => 'periodic', max_wait => '60 s', params => '{"batch": 8}');
SELECT count(arrive('p', 'r' || r, r, i)) FROM unnest('{.1,.9,.2,.8,.3,.7,.4}'::float8[]) WITH ORDINALITY AS x(r, i);
SELECT matchmaker.tick('p', at(7));     -- 7 players: the period goes on
SELECT arrive('p', 'r0.6', 0.6, 8) > 0 AS arrived;
SELECT matchmaker.tick('p', at(8));
SELECT members FROM groups WHERE queue = 'p';

-- periodic, batch "auto": ten arrivals in one second measure 2 players/s
-- over the window (max_wait, as the queue is new); eq. 6 gives n_opt = 3.47,
-- and of the multiples of k around it n = 4 has the lower eq. 5 cost.  So
-- two batches of four are matched, each sorted by rating, and two wait.
SELECT matchmaker.create_queue('pa', algorithm => 'periodic', max_wait => '5 s', params => '{"batch": "auto"}');
SELECT count(arrive('pa', 'r' || r, r, i / 10.0))
FROM unnest('{.9,.1,.8,.2,.7,.3,.6,.4,.5,.55}'::float8[]) WITH ORDINALITY AS x(r, i);
SELECT matchmaker.tick('pa', at(1));
SELECT members FROM groups WHERE queue = 'pa';
SELECT player FROM matchmaker.tickets WHERE queue = 'pa' AND state = 'waiting' ORDER BY player;

-- Teams: a 2v2 of .1 .2 .3 .4 is split {.1, .4} against {.2, .3}.
SELECT matchmaker.create_queue('t', team_size => 2, teams => 2, algorithm => 'greedy');
SELECT count(arrive('t', 'r' || r, r, i)) FROM unnest('{.1,.2,.3,.4}'::float8[]) WITH ORDINALITY AS x(r, i);
SELECT matchmaker.tick('t', at(4));
SELECT members FROM groups WHERE queue = 't';

-- Wu's patient policy, players of type H (1) and L (0): H L H H cannot be
-- split evenly, so the four wait; when an L arrives, the newest H sits out
-- and the other four play H + L against H + L.
SELECT matchmaker.create_queue('wu', team_size => 2, teams => 2, algorithm => 'greedy',
                               params => '{"team_policy": "patient"}');
SELECT count(arrive('wu', p, r, i)) FROM unnest('{H1,L2,H3,H4}'::text[], '{1,0,1,1}'::float8[]) WITH ORDINALITY AS x(p, r, i);
SELECT matchmaker.tick('wu', at(4));
SELECT arrive('wu', 'L5', 0, 5) > 0 AS arrived;
SELECT matchmaker.tick('wu', at(5));
SELECT members FROM groups WHERE queue = 'wu';
SELECT player FROM matchmaker.tickets WHERE queue = 'wu' AND state = 'waiting';

-- multi_queue, 4 ranges: .1 and .2 share a range and match at once; .6 is
-- alone in its range and times out (on_timeout expire).
SELECT matchmaker.create_queue('m', algorithm => 'multi_queue', max_wait => '5 s',
                               params => '{"ranges": 4, "on_timeout": "expire"}');
SELECT arrive('m', 'r0.1', 0.1, 0), arrive('m', 'r0.2', 0.2, 1), arrive('m', 'r0.6', 0.6, 2) \gset
SELECT matchmaker.tick('m', at(2));
SELECT members FROM groups WHERE queue = 'm';
SELECT matchmaker.tick('m', at(6.9));
SELECT player, state FROM matchmaker.tickets WHERE queue = 'm' AND state <> 'matched';
SELECT matchmaker.tick('m', at(7));
SELECT player, state, ended_at - at(0) AS ended FROM matchmaker.tickets WHERE queue = 'm' AND state <> 'matched';

-- difference_wait: .5 and .9 pair provisionally; newcomer .55 takes .9's
-- place; the pair becomes final after wait_factor * q; .9 times out.
SELECT matchmaker.create_queue('d', algorithm => 'difference_wait', max_wait => '30 s',
                               params => '{"wait_factor": 10, "on_timeout": "expire"}');
SELECT arrive('d', 'r0.5', 0.5, 0), arrive('d', 'r0.9', 0.9, 1) \gset
SELECT matchmaker.tick('d', at(1));
SELECT (SELECT string_agg(player, ' ' ORDER BY rating) FROM matchmaker.tickets WHERE id = ANY (tickets)) AS members,
       round(q::numeric, 6) AS q, finalize_at - at(0) AS finalize FROM matchmaker.provisional;
-- The tick takes a group's spread from its members' ratings, not from the
-- stored q: narrowed to 0.01 here, .55 would not improve the pair if it did.
UPDATE matchmaker.provisional_groups SET q = 0.01 WHERE queue = 'd';
SELECT arrive('d', 'r0.55', 0.55, 2) > 0 AS arrived;
SELECT matchmaker.tick('d', at(2));
SELECT (SELECT string_agg(player, ' ' ORDER BY rating) FROM matchmaker.tickets WHERE id = ANY (tickets)) AS members,
       round(q::numeric, 6) AS q, finalize_at - at(0) AS finalize FROM matchmaker.provisional;
SELECT matchmaker.tick('d', at(2.4));   -- not yet: final at 2.5
SELECT matchmaker.tick('d', at(3));
SELECT members FROM groups WHERE queue = 'd';
SELECT count(*) AS provisional FROM matchmaker.provisional;
SELECT matchmaker.tick('d', at(31));
SELECT player, state FROM matchmaker.tickets WHERE queue = 'd' ORDER BY rating;

-- The matched tickets carry their match, team and time; every match has k
-- participants (tickets plus bots).
SELECT t.queue, count(*) FILTER (WHERE t.match_id IS NULL) AS matched_without_match,
       count(*) FILTER (WHERE t.matched_at IS DISTINCT FROM m.created_at) AS wrong_time
FROM matchmaker.tickets t LEFT JOIN matchmaker.matches m ON m.id = t.match_id
WHERE t.state = 'matched' GROUP BY t.queue ORDER BY t.queue;
SELECT m.queue, m.id, count(t.id) + m.bots AS participants, q.team_size * q.teams AS k
FROM matchmaker.matches m JOIN matchmaker.queues q ON q.name = m.queue
LEFT JOIN matchmaker.tickets t ON t.match_id = m.id
GROUP BY m.id, q.name HAVING count(t.id) + m.bots <> q.team_size * q.teams;

-- A cancelled ticket is never matched.
SELECT matchmaker.create_queue('c', algorithm => 'greedy');
SELECT matchmaker.cancel(arrive('c', 'x', 0.5, 0));
SELECT arrive('c', 'y', 0.5, 1), arrive('c', 'z', 0.5, 2) \gset
SELECT matchmaker.tick('c', at(3));
SELECT player, state, match_id IS NOT NULL AS has_match FROM matchmaker.tickets WHERE queue = 'c' ORDER BY player;

-- A tick of 10,000 matches: each pair of rating neighbours is one match,
-- every ticket is written once, and match ids follow the ratings, lowest
-- first.
SELECT matchmaker.create_queue('big', algorithm => 'periodic', max_wait => '60 s', params => '{"batch": 20004}');
SELECT count(matchmaker.enqueue('big', 'b' || i, ((i * 7919) % 20004) / 20004.0)) FROM generate_series(0, 20003) i;
SELECT matchmaker.tick('big');
WITH r AS (SELECT match_id, team, rank() OVER (ORDER BY rating) - 1 AS pos FROM matchmaker.tickets WHERE queue = 'big'),
     m AS (SELECT match_id, count(*) AS n, min(pos) AS lo, max(pos) AS hi, array_agg(team ORDER BY pos) AS teams
           FROM r GROUP BY match_id)
SELECT count(*) AS matches,
       bool_and(match_id IS NOT NULL AND n = 2 AND lo % 2 = 0 AND hi = lo + 1) AS neighbours,
       bool_and(teams = '{1,2}') AS teams_by_rating,
       count(*) = (SELECT count(*) FROM matchmaker.matches WHERE queue = 'big') AS rows_written,
       array_agg(lo ORDER BY match_id) = array_agg(lo ORDER BY lo) AS ids_by_rating
FROM m;

-- Refusals.
SELECT matchmaker.tick('nosuch');
SELECT matchmaker.tick(NULL);
SELECT matchmaker.tick('g', NULL);
SELECT matchmaker.tick('g', 'infinity');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT matchmaker.tick('g');
ROLLBACK;

-- window (the 1v1 thread): hplus0603's example on a 0..3000 scale.  Windows
-- of +-5 % of the range on arrival, 5 % more every 10 s.  "800" waited 300 s
-- (its window is at the cap) when "2000" joins, 1200 away: 800 accepts 2000,
-- 2000 does not accept 800 until its window reaches 40 %, 70 s later.
SELECT matchmaker.create_queue('w', algorithm => 'window', max_wait => '1 hour',
                               rating_min => 0, rating_max => 3000,
                               params => '{"window": 0.05, "widen": 0.005, "recheck": 10, "max_window": 1}');
SELECT arrive('w', 'p800', 800, 0), arrive('w', 'p2000', 2000, 300) \gset
SELECT matchmaker.tick('w', at(300)), matchmaker.tick('w', at(369.9)), matchmaker.tick('w', at(370));
SELECT members, at FROM groups WHERE queue = 'w';
-- myro's first suggestion: windows 0.015 growing 0.01 a minute (on 0..1);
-- Team2 joins beside Team1, the pair that accepts each other first plays.
SELECT matchmaker.create_queue('w2', algorithm => 'window', max_wait => '1 hour',
                               params => '{"window": 0.015, "widen": 0.000166666666667, "recheck": 60}');
SELECT arrive('w2', 'team0', 0.23, 0), arrive('w2', 'team1', 0.20, 0) \gset
SELECT matchmaker.tick('w2', at(60));
SELECT arrive('w2', 'team2', 0.205, 60), arrive('w2', 'team3', 0.19, 60) \gset
SELECT matchmaker.tick('w2', at(60)), matchmaker.tick('w2', at(239)), matchmaker.tick('w2', at(240));
SELECT members, at FROM groups WHERE queue = 'w2';
-- The same stream through simulate: the same pairs at the same times.
SELECT s.match_no, string_agg(t.player, ' ' ORDER BY t.player) AS players, s.matched_at
FROM matchmaker.simulate('w2', $$SELECT id, rating, extract(epoch FROM enqueued_at - '2026-01-01 00:00:00+00')
                                 FROM matchmaker.tickets WHERE queue = 'w2'$$) s
JOIN matchmaker.tickets t ON t.id = s.id
GROUP BY s.match_no, s.matched_at ORDER BY s.match_no;
-- Percentile windows: a window of a third of the ranks pairs the lone top
-- player with the next one down, however far in rating.
SELECT matchmaker.create_queue('wp', algorithm => 'window', max_wait => '1 hour',
                               params => '{"window": 0.34, "max_window": 0.34, "percentile": true}');
SELECT count(arrive('wp', 'r' || r, r, i)) FROM unnest('{0.9,0,0.01,0.02}'::float8[]) WITH ORDINALITY AS x(r, i);
SELECT matchmaker.tick('wp', at(4));
SELECT members FROM groups WHERE queue = 'wp';
-- The window parameters and their refusals.
SELECT params FROM matchmaker.queues WHERE name = 'w';
SELECT matchmaker.create_queue('wbad', algorithm => 'window', params => '{"window": 0.3, "max_window": 0.2}');
SELECT matchmaker.create_queue('wbad', algorithm => 'window', params => '{"window": 1.5}');
SELECT matchmaker.create_queue('wbad', algorithm => 'window', params => '{"recheck": 0}');
SELECT matchmaker.create_queue('wbad', algorithm => 'window', params => '{"percentile": "yes"}');
SELECT matchmaker.create_queue('wbad', algorithm => 'window', params => '{"widen": "fast"}');
SELECT matchmaker.create_queue('wbad', algorithm => 'greedy', params => '{"window": 0.1}');

-- cluster (the CS:GO post): 0.1 and 0.9 decay toward their mean 0.5 along
-- the logistic curve (halfway at 330 s); with a threshold of 0.1 they are
-- close enough once 0.8 * decay < 0.1, after 427.4 s (waits count in whole
-- seconds, the default recheck).
SELECT matchmaker.create_queue('cl', algorithm => 'cluster', max_wait => '1 hour',
                               params => '{"midpoint": 330, "steepness": 0.02, "threshold": 0.1, "shift": 0}');
SELECT arrive('cl', 'low', 0.1, 0), arrive('cl', 'high', 0.9, 0) \gset
SELECT matchmaker.tick('cl', at(427)), matchmaker.tick('cl', at(428));
SELECT members, at FROM groups WHERE queue = 'cl';
-- k = 3, in arrival order: each ticket joins the closest centroid within
-- 0.07 or opens a cluster; a full cluster plays.
SELECT matchmaker.create_queue('cl3', teams => 3, algorithm => 'cluster', max_wait => '1 hour',
                               params => '{"threshold": 0.07}');
SELECT count(arrive('cl3', 'r' || r, r, i / 100.0)) FROM unnest('{.5,.56,.44,.45,.52,.40}'::float8[]) WITH ORDINALITY AS x(r, i);
SELECT matchmaker.tick('cl3', at(1));
SELECT members FROM groups WHERE queue = 'cl3';
-- The same streams through simulate: the same groups at the same times.
SELECT s.match_no, string_agg(t.player, ' ' ORDER BY t.player) AS players, s.matched_at
FROM matchmaker.simulate('cl', $$SELECT id, rating, extract(epoch FROM enqueued_at - '2026-01-01 00:00:00+00')
                                 FROM matchmaker.tickets WHERE queue = 'cl'$$) s
JOIN matchmaker.tickets t ON t.id = s.id
GROUP BY s.match_no, s.matched_at ORDER BY s.match_no;
SELECT count(*) AS players, count(DISTINCT match_no) AS games
FROM matchmaker.simulate('cl3', $$SELECT id, rating, extract(epoch FROM enqueued_at - '2026-01-01 00:00:00+00')
                                 FROM matchmaker.tickets WHERE queue = 'cl3'$$);
-- "auto" shift (the default): newcomers count as having waited the mean
-- wait of the queue's recent matches.  After low and high (428 s each),
-- two newcomers 0.6 apart decay as after 428 s: 0.6 * 0.124 < 0.1, they
-- play at once; with shift 0 they wait.
SELECT matchmaker.create_queue('cla', algorithm => 'cluster', max_wait => '1 hour',
                               params => '{"midpoint": 330, "steepness": 0.02, "threshold": 0.1}');
SELECT arrive('cla', 'low', 0.1, 0), arrive('cla', 'high', 0.9, 0) \gset
SELECT matchmaker.tick('cla', at(428));
SELECT arrive('cla', 'p', 0.2, 428), arrive('cla', 'q', 0.8, 428),
       arrive('cl', 'p', 0.2, 428), arrive('cl', 'q', 0.8, 428) \gset
SELECT matchmaker.tick('cla', at(428)) AS auto_shift, matchmaker.tick('cl', at(428)) AS no_shift;
-- The cluster parameters and their refusals.
SELECT matchmaker.create_queue('clbad', algorithm => 'cluster', params => '{"threshold": 0}');
SELECT matchmaker.create_queue('clbad', algorithm => 'cluster', params => '{"steepness": -1}');
SELECT matchmaker.create_queue('clbad', algorithm => 'cluster', params => '{"shift": "soon"}');
SELECT matchmaker.create_queue('clbad', algorithm => 'cluster', params => '{"window": 0.1}');
SELECT matchmaker.create_queue('clbad', algorithm => 'periodic', params => '{"recheck": 1}');

-- window's rematch avoidance: a and b played; when they queue again beside
-- c, a ban pairs a with c although b is closer; a penalty of 0.1 (on
-- windows of 0.2) lets a and b meet again.
SELECT matchmaker.create_queue('wr', algorithm => 'window', max_wait => '1 hour',
                               params => '{"window": 0.2, "max_window": 0.2, "rematch_last": 1}');
SELECT matchmaker.create_queue('wrp', algorithm => 'window', max_wait => '1 hour',
                               params => '{"window": 0.2, "max_window": 0.2, "rematch_last": 1, "rematch_penalty": 0.1}');
SELECT count(*) AS arrived FROM (SELECT arrive(q, 'a', 0.5, 0), arrive(q, 'b', 0.52, 0) FROM unnest('{wr,wrp}'::text[]) q) x;
SELECT matchmaker.tick('wr', at(1)), matchmaker.tick('wrp', at(1));
SELECT count(*) AS arrived
FROM (SELECT arrive(q, 'a', 0.5, 2), arrive(q, 'b', 0.52, 2), arrive(q, 'c', 0.6, 2) FROM unnest('{wr,wrp}'::text[]) q) x;
SELECT matchmaker.tick('wr', at(3)), matchmaker.tick('wrp', at(3));
SELECT queue, members FROM groups WHERE queue IN ('wr', 'wrp') ORDER BY queue, members;
SELECT matchmaker.create_queue('wbad', algorithm => 'window', params => '{"rematch_penalty": "never"}');

-- optimize (the Awesomenauts write-up): rounds on the minute (round 60 s).
-- Two premades of three and six solo players in 3v3: the premades face
-- each other, the solos play together.  Between rounds nothing happens.
SELECT matchmaker.create_queue('opt', team_size => 3, teams => 2, algorithm => 'optimize',
                               max_wait => '10 minutes', params => '{"round": 60, "restarts": 8}');
CREATE FUNCTION arrive_with(q text, player text, rating float8, t float8, attrs jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    ticket bigint := matchmaker.enqueue(q, player, rating, attrs);
BEGIN
    UPDATE matchmaker.tickets SET enqueued_at = at(t) WHERE id = ticket;
    RETURN ticket;
END
$$;
SELECT count(arrive_with('opt', p || i, 0.5 + i / 100.0, i, jsonb_build_object('party', p)))
FROM generate_series(1, 3) i, unnest('{A,B}'::text[]) p;
SELECT count(arrive('opt', 's' || i, 0.47 + i / 100.0, 10 + i)) FROM generate_series(1, 6) i;
-- a fourth member would make the party too big for a team
SELECT matchmaker.enqueue('opt', 'A4', 0.5, '{"party": "A"}');
SELECT matchmaker.tick('opt', at(59)) AS before_the_round, matchmaker.tick('opt', at(60)) AS at_the_round;
SELECT members FROM groups WHERE queue = 'opt' ORDER BY members;
-- With pings: two regions far apart and similar skills; every match is regional.
SELECT matchmaker.create_queue('optping', team_size => 1, teams => 2, algorithm => 'optimize',
                               max_wait => '10 minutes', params => '{"round": 60, "restarts": 4, "weights": {"ping": 4}}');
SELECT count(arrive_with('optping', r || i, 0.5 + (i % 2) / 100.0, i,
                         jsonb_build_object('ping', CASE r WHEN 'eu' THEN '{"eu": 20, "au": 300}'::jsonb
                                                               ELSE '{"eu": 300, "au": 20}'::jsonb END)))
FROM generate_series(1, 4) i, unnest('{eu,au}'::text[]) r;
SELECT matchmaker.tick('optping', at(60));
SELECT members FROM groups WHERE queue = 'optping' ORDER BY members;
-- ticket_status tells a waiting player when the next round is.
SELECT matchmaker.enqueue('opt', 'late', 0.5) AS late \gset
SELECT next_round = date_trunc('minute', now()) + interval '1 minute' AS next_round_on_the_minute
FROM matchmaker.ticket_status(:late);
-- The same traffic of solo players through simulate: the same matches at the same times.
SELECT matchmaker.create_queue('optsolo', team_size => 2, teams => 2, algorithm => 'optimize',
                               max_wait => '100 s', params => '{"round": 30}');
SELECT count(arrive('optsolo', 'q' || i, (i * 37 % 100) / 100.0, i * 7)) FROM generate_series(1, 20) i;
SELECT matchmaker.tick('optsolo', at(t)) FROM unnest('{30,60,90,120,150,180}'::float8[]) t;
SELECT (SELECT count(*) FROM matchmaker.simulate('optsolo', $$SELECT id, rating, extract(epoch FROM enqueued_at - '2026-01-01 00:00:00+00')
                                 FROM matchmaker.tickets WHERE queue = 'optsolo'$$) s
        JOIN matchmaker.tickets t ON t.id = s.id
        WHERE round(s.matched_at::numeric, 3) = round(extract(epoch FROM coalesce(t.matched_at, t.ended_at) - at(0))::numeric, 3))
       AS same_time, (SELECT count(*) FROM matchmaker.tickets WHERE queue = 'optsolo') AS tickets;
-- The premades' and the regions' traffic through simulate, with the
-- attributes as a fourth column: the same matches and teams as live.
-- Without the attributes the stream is only ratings, and the matches differ.
CREATE FUNCTION live_and_simulated(q text, attributes boolean) RETURNS boolean LANGUAGE sql AS $$
SELECT (SELECT array_agg(g ORDER BY g) FROM (SELECT string_agg(t.player || '@' || t.team, ' ' ORDER BY t.player) g
          FROM matchmaker.tickets t WHERE t.queue = q AND t.state = 'matched' GROUP BY t.match_id) live)
     = (SELECT array_agg(g ORDER BY g) FROM (SELECT string_agg(t.player || '@' || s.team, ' ' ORDER BY t.player) g
          FROM matchmaker.simulate(q, format($f$SELECT id, rating, extract(epoch FROM enqueued_at - '2026-01-01 00:00:00+00')%s
                                              FROM matchmaker.tickets WHERE queue = %L AND state = 'matched'$f$,
                                             CASE WHEN attributes THEN ', attributes' ELSE '' END, q)) s
          JOIN matchmaker.tickets t ON t.id = s.id GROUP BY s.match_no) sim)
$$;
SELECT q, live_and_simulated(q, true) AS same_with_attributes, live_and_simulated(q, false) AS same_without
FROM unnest('{opt,optping}'::text[]) q;
-- The optimize parameters and their refusals.
SELECT matchmaker.enqueue('opt', 'x', 0.5, '{"party": 7}');
SELECT matchmaker.enqueue('opt', 'y', 0.5, '{"ping": {"eu": -5}}');
SELECT matchmaker.create_queue('obad', team_size => 4, teams => 4, algorithm => 'optimize');
SELECT matchmaker.create_queue('obad', teams => 1, team_size => 2, algorithm => 'optimize');
SELECT matchmaker.create_queue('obad', algorithm => 'optimize', params => '{"weights": {"ping": 0, "balance": 0, "spread": 0, "premades": 0, "variation": 0}}');
SELECT matchmaker.create_queue('obad', algorithm => 'optimize', params => '{"weights": {"fun": 1}}');
SELECT matchmaker.create_queue('obad', algorithm => 'optimize', params => '{"skill_cap": [0.9, 0.1]}');
SELECT matchmaker.create_queue('obad', algorithm => 'optimize', params => '{"restarts": -1}');
SELECT matchmaker.create_queue('obad', algorithm => 'greedy', params => '{"round": 60}');
-- A tick in a transaction that itself holds the tickets, with locks of
-- two kinds (a MultiXact of its own transaction and subtransaction),
-- matches them: its own locks do not hold a ticket back (nor fail the
-- check of its first step, which would say so at DEBUG1).
SELECT matchmaker.create_queue('own', algorithm => 'greedy', max_wait => '1 hour');
SELECT count(matchmaker.enqueue('own', 'o' || i, i / 10.0)) FROM generate_series(1, 10) i;
BEGIN;
SELECT count(*) FROM (SELECT id FROM matchmaker.tickets WHERE queue = 'own' FOR KEY SHARE) s;
SAVEPOINT a;
SELECT count(*) FROM (SELECT id FROM matchmaker.tickets WHERE queue = 'own' FOR UPDATE) s;
RELEASE a;
SET client_min_messages = debug1;
SELECT matchmaker.tick('own');
RESET client_min_messages;
COMMIT;
SELECT state, count(*) FROM matchmaker.tickets WHERE queue = 'own' GROUP BY state;
SELECT count(*) AS problems FROM matchmaker.check();
