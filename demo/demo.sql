-- The demo's SQL: a one-on-one queue, a few players, and the cost of a match.
\pset footer off
CREATE EXTENSION matchmaker;

\echo '== a one-on-one queue: ratings 0..3000, players wait at most 30 seconds'
SELECT matchmaker.create_queue('duel', team_size => 1, teams => 2, algorithm => 'periodic',
                               max_wait => '30 seconds', rating_min => 0, rating_max => 3000,
                               params => '{"batch": 8}');

\echo '== eight players press "play"'
SELECT player, matchmaker.enqueue('duel', player, rating) AS ticket
FROM (VALUES ('ada', 1510), ('bob', 2920), ('cy', 1480), ('dee', 300),
             ('eli', 2800), ('fay', 350), ('gus', 1900), ('hal', 2050)) AS p(player, rating);

\echo '== a retry returns the same ticket; a cancel ends it'
SELECT matchmaker.enqueue('duel', 'ada', 1510) AS ada_again;
SELECT matchmaker.cancel(matchmaker.enqueue('duel', 'hal', 2050)) AS hal_cancelled;

\echo '== what pairing ada with cy would cost (Schlup eq. 1), against ada with bob'
SELECT matchmaker.match_cost('duel', ARRAY[1510, 1480], ARRAY[4, 0]) AS ada_cy,
       matchmaker.match_cost('duel', ARRAY[1510, 2920], ARRAY[4, 0]) AS ada_bob;

\echo '== the queue'
SELECT id, player, rating, state FROM matchmaker.tickets ORDER BY id;
