-- Bad input: every public function, given NULLs, NaN and infinities, huge
-- and tiny numbers, long and empty strings, hostile jsonb, unknown queues,
-- wrong types, bad intervals and bad arrival queries, refuses the call with
-- an SQLSTATE and a clear message, and changes nothing.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

-- Something to damage: queues of each algorithm, waiting tickets, a match,
-- an expired ticket and a provisional group.
SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '30 s',
                               rating_min => 0, rating_max => 3000);
SELECT matchmaker.create_queue('squad', team_size => 2, teams => 2, algorithm => 'multi_queue',
                               params => '{"ranges": 4}');
SELECT matchmaker.create_queue('batch', algorithm => 'periodic', params => '{"batch": 8}');
SELECT matchmaker.create_queue('pairs', algorithm => 'difference_wait', max_wait => '1 hour',
                               params => '{"wait_factor": 3600}');
SELECT matchmaker.create_queue('brief', algorithm => 'greedy', max_wait => '1 microsecond',
                               params => '{"on_timeout": "expire"}');
SELECT matchmaker.enqueue('duel', 'ann', 1500), matchmaker.enqueue('duel', 'bob', 1600);
SELECT matchmaker.tick('duel');
SELECT matchmaker.enqueue('duel', 'cy', 1400) AS waiting_ticket \gset
SELECT matchmaker.enqueue('squad', 'p' || i, i / 10.0) FROM generate_series(1, 3) i;
SELECT matchmaker.enqueue('pairs', 'x', 0.4), matchmaker.enqueue('pairs', 'y', 0.6);
SELECT matchmaker.tick('pairs');
SELECT matchmaker.enqueue('brief', 'late', 0.5);
SELECT matchmaker.tick('brief', clock_timestamp() + interval '1 second');

-- Everything the functions write, as one checksum, and how much of it there is.
CREATE FUNCTION state() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws(' | ',
        (SELECT string_agg(q::text, ',' ORDER BY q.name) FROM matchmaker.queues q),
        (SELECT string_agg(t::text, ',' ORDER BY t.id) FROM matchmaker.tickets t),
        (SELECT string_agg(m::text, ',' ORDER BY m.id) FROM matchmaker.matches m),
        (SELECT string_agg(g::text, ',' ORDER BY g.queue, g.tickets) FROM matchmaker.provisional_groups g),
        (SELECT last_value FROM matchmaker.tickets_id_seq),
        (SELECT last_value FROM matchmaker.matches_id_seq)))
$$;
SELECT (SELECT count(*) FROM matchmaker.queues) AS queues,
       (SELECT string_agg(state || ' ' || n, ', ' ORDER BY state)
        FROM (SELECT state, count(*) n FROM matchmaker.tickets GROUP BY state) s) AS tickets,
       (SELECT count(*) FROM matchmaker.matches) AS matches,
       (SELECT count(*) FROM matchmaker.provisional_groups) AS groups;
SELECT state() AS before \gset

-- Run one call; print "ok" and its result, or its SQLSTATE, message,
-- detail and hint.  A message longer than 200 characters is cut here (and
-- its length shown), so that the output shows which errors repeat a long
-- argument in full.
CREATE FUNCTION try(call text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r record;
    st text;
    msg text;
    det text;
    hint text;
BEGIN
    EXECUTE call INTO r;
    RETURN 'ok ' || r::text;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                            det = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    IF length(msg) > 200 THEN
        msg := left(msg, 60) || format('... (%s characters)', length(msg));
    END IF;
    RETURN st || ' ' || msg || coalesce(' | DETAIL: ' || nullif(det, ''), '')
                             || coalesce(' | HINT: ' || nullif(hint, ''), '');
END
$$;
\pset tuples_only on
\pset format unaligned

-- create_queue: name
SELECT try($$SELECT matchmaker.create_queue(NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('')$$);
SELECT try($$SELECT matchmaker.create_queue(repeat('x', 100000))$$);
SELECT try($$SELECT matchmaker.create_queue('duel')$$);
SELECT try($$SELECT matchmaker.create_queue(E'new\nline')$$);
SELECT try($$SELECT matchmaker.create_queue(E'tab\there')$$);
SELECT try($$SELECT matchmaker.create_queue(' duel')$$);
SELECT try($$SELECT matchmaker.create_queue('duel ')$$);
SELECT try($$SELECT matchmaker.create_queue(' ')$$);
-- team_size, teams
SELECT try($$SELECT matchmaker.create_queue('x', team_size => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', teams => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', team_size => 0)$$);
SELECT try($$SELECT matchmaker.create_queue('x', teams => -2147483648)$$);
SELECT try($$SELECT matchmaker.create_queue('x', team_size => 1, teams => 1)$$);
SELECT try($$SELECT matchmaker.create_queue('x', team_size => 2147483647, teams => 2147483647)$$);
SELECT try($$SELECT matchmaker.create_queue('x', team_size => 2.5)$$);
SELECT try($$SELECT matchmaker.create_queue('x', team_size => '2.5')$$);
SELECT try($$SELECT matchmaker.create_queue('x', team_size => 3000000000)$$);
-- algorithm
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => '')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'Greedy')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => repeat('x', 100000))$$);
-- max_wait and tick: NULL, zero, negative, too large, too fine, not an interval
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => '0')$$);
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => '-1 microsecond')$$);
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => '1 day -2 days')$$);
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => '365 days 1 microsecond')$$);
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => '178000000 years')$$);
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => 'infinity')$$);
SELECT try($$SELECT matchmaker.create_queue('x', max_wait => 'soon')$$);
SELECT try($$SELECT matchmaker.create_queue('x', tick => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', tick => '0')$$);
SELECT try($$SELECT matchmaker.create_queue('x', tick => '-1 s')$$);
SELECT try($$SELECT matchmaker.create_queue('x', tick => '999 microseconds')$$);
SELECT try($$SELECT matchmaker.create_queue('x', tick => '1 day 1 microsecond')$$);
SELECT try($$SELECT matchmaker.create_queue('x', tick => '1000 years')$$);
-- rating_min, rating_max: NULL, NaN, infinities, huge, empty range
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_max => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => 'NaN')$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_max => 'NaN')$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => '-Infinity')$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_max => 'Infinity')$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => -1e308, rating_max => 1e308)$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => 1e308, rating_max => 1e308)$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => '-0', rating_max => 0)$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => 5e-324, rating_max => 0)$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_min => 'low')$$);
SELECT try($$SELECT matchmaker.create_queue('x', rating_max => 1e309)$$);
-- params: not an object, unknown and misplaced keys, wrong types per key,
-- huge and fractional numbers, nesting
SELECT try($$SELECT matchmaker.create_queue('x', params => NULL)$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => 'null')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '[]')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '[{"batch": 8}]')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '"{}"')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '8')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '{not json}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '{"": 1}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '{"Batch": 8}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => jsonb_build_object(repeat('k', 100000), 1))$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '{"ranges": 4}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": null}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": true}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": "8"}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": [8]}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": {"n": 8}}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": -8}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": 8.0000000000000000001}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": 1e400}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": -1e400}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": 1e-400}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => '{"batch": 1000002}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'periodic', params => jsonb_build_object('batch', repeat('8', 100000)))$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'multi_queue', params => '{"ranges": 10001}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'multi_queue', params => '{"ranges": "auto "}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'difference_wait', params => '{"wait_factor": "NaN"}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'difference_wait', params => '{"wait_factor": 1e400}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'difference_wait', params => '{"wait_factor": -1e-300}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'difference_wait', params => '{"wait_factor": 1000000001}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'greedy', params => '{"team_policy": ["patient"]}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'window', params => '{"window": 1e400}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'window', params => '{"widen": "NaN"}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'window', params => '{"percentile": "yes"}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'cluster', params => '{"steepness": 0}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', algorithm => 'cluster', params => '{"recheck": -1e-400}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '{"on_timeout": "EXPIRE"}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => '{"on_timeout": {"bots": true}}')$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => (repeat('[', 5000) || repeat(']', 5000))::jsonb)$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => (repeat('{"a": ', 1000) || '1' || repeat('}', 1000))::jsonb)$$);
SELECT try($$SELECT matchmaker.create_queue('x', params => (repeat('[', 100000) || repeat(']', 100000))::jsonb)$$);

-- alter_queue: an unknown queue, each setting out of its domain, and the
-- changes a queue with tickets refuses
SELECT try($$SELECT matchmaker.alter_queue(NULL)$$);
SELECT try($$SELECT matchmaker.alter_queue('nosuch')$$);
SELECT try($$SELECT matchmaker.alter_queue('')$$);
SELECT try($$SELECT matchmaker.alter_queue(repeat('x', 100000))$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', team_size => 0)$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', teams => 1)$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', teams => 3)$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', algorithm => '')$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', max_wait => '0')$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', max_wait => '-30 s')$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', tick => '2 days')$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', rating_min => 'NaN')$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', rating_max => 'Infinity')$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', rating_min => -1e308, rating_max => 1e308)$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', rating_min => 3000)$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', rating_max => 1350)$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', params => '[]')$$);
SELECT try($$SELECT matchmaker.alter_queue('duel', params => '{"batch": 8}')$$);
SELECT try($$SELECT matchmaker.alter_queue('batch', algorithm => 'greedy')$$);
SELECT try($$SELECT matchmaker.alter_queue('squad', team_size => 1)$$);

-- drop_queue
SELECT try($$SELECT matchmaker.drop_queue(NULL)$$);
SELECT try($$SELECT matchmaker.drop_queue('duel', NULL)$$);
SELECT try($$SELECT matchmaker.drop_queue('nosuch')$$);
SELECT try($$SELECT matchmaker.drop_queue('')$$);
SELECT try($$SELECT matchmaker.drop_queue(repeat('x', 100000), true)$$);
SELECT try($$SELECT matchmaker.drop_queue('duel')$$);
SELECT try($$SELECT matchmaker.drop_queue('duel', 'maybe')$$);

-- enqueue: queue, player, rating, attributes
SELECT try($$SELECT matchmaker.enqueue(NULL, 'p', 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('nosuch', 'p', 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('', 'p', 1500)$$);
SELECT try($$SELECT matchmaker.enqueue(repeat('x', 100000), 'p', 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', NULL, 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', '', 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', repeat('x', 257), 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', repeat('x', 100000), 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', repeat('é', 129), 1500)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', NULL)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 'NaN')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 'Infinity')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', '-Infinity')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1e308)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', -5e-324)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 3000.0000000001)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 'strong')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1500, NULL)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1500, 'null')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1500, '[]')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1500, '"eu"')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1500, '1e400')$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1500, (repeat('[', 5000) || repeat(']', 5000))::jsonb)$$);
SELECT try($$SELECT matchmaker.enqueue('duel', 'p', 1500, '{region: eu}')$$);

-- cancel
SELECT try($$SELECT matchmaker.cancel(NULL)$$);
SELECT try($$SELECT matchmaker.cancel(0)$$);
SELECT try($$SELECT matchmaker.cancel(-1)$$);
SELECT try($$SELECT matchmaker.cancel(9223372036854775807)$$);
SELECT try($$SELECT matchmaker.cancel(9223372036854775808)$$);
SELECT try($$SELECT matchmaker.cancel(1.5)$$);
SELECT try($$SELECT matchmaker.cancel('one')$$);

-- ticket_status
SELECT try($$SELECT * FROM matchmaker.ticket_status(NULL)$$);
SELECT try($$SELECT * FROM matchmaker.ticket_status(0)$$);
SELECT try($$SELECT * FROM matchmaker.ticket_status(-9223372036854775808)$$);
SELECT try($$SELECT * FROM matchmaker.ticket_status('one')$$);

-- match_cost: queue, ratings, waits, bots
SELECT try($$SELECT matchmaker.match_cost(NULL, '{1500, 1500}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('nosuch', '{1500, 1500}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost(repeat('x', 100000), '{1500, 1500}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', NULL, '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', NULL)$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', '{0, 0}', NULL)$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{}', '{}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{}', '{}', 2)$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500}', '{0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500, 1500}', '{0, 0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', '{0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500}', '{0}', -1)$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500}', '{0}', 2147483647)$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{{1500, 1500}}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', '{{0}, {0}}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, NULL}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', '{NULL, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, NaN}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, -Infinity}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1e308}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', '{0, NaN}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', '{0, Infinity}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{1500, 1500}', '{0, -5e-324}')$$);
SELECT try($$SELECT matchmaker.match_cost('brief', '{0.5, 0.5}', '{1e308, 1e308}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', '{a, b}', '{0, 0}')$$);
SELECT try($$SELECT matchmaker.match_cost('duel', ARRAY['1500', '1500'], '{0, 0}')$$);

-- tick: queue, now
SELECT try($$SELECT matchmaker.tick(NULL)$$);
SELECT try($$SELECT matchmaker.tick('nosuch')$$);
SELECT try($$SELECT matchmaker.tick('')$$);
SELECT try($$SELECT matchmaker.tick(repeat('x', 100000))$$);
SELECT try($$SELECT matchmaker.tick('duel', NULL)$$);
SELECT try($$SELECT matchmaker.tick('duel', 'infinity')$$);
SELECT try($$SELECT matchmaker.tick('duel', '-infinity')$$);
SELECT try($$SELECT matchmaker.tick('duel', 'noon-ish')$$);
SELECT try($$SELECT matchmaker.tick('duel', 1700000000)$$);

-- simulate, simulate_summary, optimal_cost: queue, arrivals, params
SELECT try($$SELECT * FROM matchmaker.simulate(NULL, 'SELECT 1, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('nosuch', 'SELECT 1, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate(repeat('x', 100000), 'SELECT 1, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', NULL)$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', '')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', ';')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', repeat('SELECT ', 20000))$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 0; SELECT 2, 1500, 1')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 0) a; DELETE FROM matchmaker.tickets; SELECT * FROM (SELECT 1, 2, 3')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'DELETE FROM matchmaker.tickets')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'DELETE FROM matchmaker.tickets RETURNING id, rating, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'UPDATE matchmaker.queues SET tick = ''1 hour'' RETURNING 1, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'WITH d AS (DELETE FROM matchmaker.tickets RETURNING id) SELECT id, 1500, 0 FROM d')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 0 INTO TEMP stolen')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'TRUNCATE matchmaker.tickets')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 0, 4')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT no_such_column, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT * FROM no_such_table')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1 / 0, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT ''p1'', 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1e30, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, ''good'', 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, now()')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT NULL, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, NULL, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, NULL')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, ''NaN''::float8, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1e308, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, ''NaN''::float8')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, ''-Infinity''::float8')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 1e308')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 1767225600000000')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'VALUES (1, 1500, 0), (1, 1600, 1)')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 0', 'null')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 0', '[]')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('duel', 'SELECT 1, 1500, 0', '{"batch": 8}')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('batch', 'SELECT 1, 0.5, 0', '{"batch": 1e400}')$$);
SELECT try($$SELECT * FROM matchmaker.simulate('batch', 'SELECT 1, 0.5, 0', '{"nope": 1}')$$);
SELECT try($$SELECT * FROM matchmaker.simulate_summary(NULL, NULL)$$);
SELECT try($$SELECT * FROM matchmaker.simulate_summary('nosuch', 'SELECT 1, 1500, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate_summary('duel', 'DELETE FROM matchmaker.tickets RETURNING id, rating, 0')$$);
SELECT try($$SELECT * FROM matchmaker.simulate_summary('duel', 'SELECT 1, 1500, 1e300')$$);
SELECT try($$SELECT * FROM matchmaker.simulate_summary('duel', 'SELECT 1, 1500, 0', '{"team_policy": "lazy"}')$$);
SELECT try($$SELECT matchmaker.optimal_cost(NULL, 'SELECT 1, 1500, 0')$$);
SELECT try($$SELECT matchmaker.optimal_cost('nosuch', 'SELECT 1, 1500, 0')$$);
SELECT try($$SELECT matchmaker.optimal_cost('duel', NULL)$$);
SELECT try($$SELECT matchmaker.optimal_cost('squad', 'SELECT 1, 0.5, 0')$$);
SELECT try($$SELECT matchmaker.optimal_cost('duel', 'DELETE FROM matchmaker.tickets')$$);
SELECT try($$SELECT matchmaker.optimal_cost('duel', 'SELECT 1, 1500, 0, 0')$$);
SELECT try($$SELECT matchmaker.optimal_cost('duel', 'SELECT 1, 1500, NULL::float8')$$);
SELECT try($$SELECT matchmaker.optimal_cost('duel', 'VALUES (1, 1500, 0), (2, 1600, 1e13)')$$);
SELECT try($$SELECT matchmaker.optimal_cost('duel', 'VALUES (1, 1500, 0), (1, 1600, 1)')$$);

-- audit: queue, from, to
SELECT try($$SELECT * FROM matchmaker.audit(NULL, now(), now())$$);
SELECT try($$SELECT * FROM matchmaker.audit('nosuch', now(), now())$$);
SELECT try($$SELECT * FROM matchmaker.audit(repeat('x', 100000), now(), now())$$);
SELECT try($$SELECT * FROM matchmaker.audit('duel', NULL, now())$$);
SELECT try($$SELECT * FROM matchmaker.audit('duel', now(), NULL)$$);
SELECT try($$SELECT * FROM matchmaker.audit('squad', '-infinity', 'infinity')$$);
SELECT try($$SELECT * FROM matchmaker.audit('duel', '2026-01-01 12:00+00', '2026-01-01 11:00+00')$$);
SELECT try($$SELECT * FROM matchmaker.audit('duel', 'infinity', '-infinity')$$);
SELECT try($$SELECT * FROM matchmaker.audit('duel', 'yesterday-ish', now())$$);

\pset tuples_only off
\pset format aligned

-- Nothing changed, and the invariants hold.
SELECT state() = :'before' AS unchanged;
SELECT count(*) AS problems FROM matchmaker.check();

-- Edge values that are valid are taken as given, not clamped: -0 and the
-- smallest double as ratings, a range one subnormal wide, arrays that do
-- not start at 1, extreme but finite arrival times.
SELECT matchmaker.enqueue('squad', 'zero', '-0') > 0 AS enqueued,
       matchmaker.enqueue('squad', 'tiny', 5e-324) > 0 AS enqueued;
SELECT player, rating::text FROM matchmaker.tickets WHERE player IN ('zero', 'tiny') ORDER BY player;
SELECT matchmaker.create_queue('narrow', rating_min => 0, rating_max => 5e-324);
SELECT matchmaker.match_cost('narrow', '{0, 5e-324}', '{0, 0}') AS full_spread;
SELECT matchmaker.match_cost('duel', '[5:6]={1500, 1500}', '{0, 30}') AS cost;
SELECT matchmaker.optimal_cost('duel', 'VALUES (1, 1500, -1e12), (2, 1500, 1e12)') AS two_bots;
-- The arrivals query is the caller's own SQL, run as the caller: a SELECT
-- that calls a function that writes does write.
SELECT count(*) FROM matchmaker.simulate('duel', $$SELECT matchmaker.enqueue('duel', 'from-sim', 1500), 1500, 0$$);
SELECT count(*) AS written FROM matchmaker.tickets WHERE player = 'from-sim';
SELECT count(*) AS problems FROM matchmaker.check();
