-- match_cost: Schlup's eq. 1 with f_d = k / D.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
SELECT matchmaker.create_queue('duel', max_wait => '5 seconds');
SELECT matchmaker.create_queue('duel3k', max_wait => '5 seconds', rating_min => 0, rating_max => 3000);
SELECT matchmaker.create_queue('squad', team_size => 2, teams => 2, max_wait => '10 seconds');

-- 1v1: q = 0.3, f = 2, waits 0 and 3 of 5 seconds: 0.6 + 0.6.
SELECT matchmaker.match_cost('duel', '{0.2, 0.5}', '{0, 3}');
-- One player who waited 5 s with a computer player: q = 1, so 2 + (1 + 1).
SELECT matchmaker.match_cost('duel', '{0.2}', '{5}', 1);
-- Ratings are normalised with the queue's range: 600 and 1500 of 3000 are 0.2 and 0.5.
SELECT matchmaker.match_cost('duel3k', '{600, 1500}', '{0, 3}');
-- Four players: f = 4, q = 0.3; waits sum 10 of 10 seconds.
SELECT round(matchmaker.match_cost('squad', '{0.1, 0.4, 0.2, 0.3}', '{1, 2, 3, 4}')::numeric, 12);
-- Order does not matter.
SELECT matchmaker.match_cost('duel', '{0.5, 0.2}', '{3, 0}') = matchmaker.match_cost('duel', '{0.2, 0.5}', '{0, 3}') AS symmetric;

-- Refusals.
SELECT matchmaker.match_cost('nosuch', '{0.2, 0.5}', '{0, 3}');
SELECT matchmaker.match_cost(NULL, '{0.2, 0.5}', '{0, 3}');
SELECT matchmaker.match_cost('duel', NULL, '{0, 3}');
SELECT matchmaker.match_cost('duel', '{0.2, 0.5}', NULL);
SELECT matchmaker.match_cost('duel', '{0.2, 0.5}', '{0, 3}', NULL);
SELECT matchmaker.match_cost('duel', '{0.2, NULL}', '{0, 3}');
SELECT matchmaker.match_cost('duel', '{0.2, 0.5}', '{0}');
SELECT matchmaker.match_cost('duel', '{0.2, 0.5, 0.7}', '{0, 3, 1}');
SELECT matchmaker.match_cost('duel', '{0.2}', '{0}');
SELECT matchmaker.match_cost('duel', '{0.2}', '{0}', -1);
SELECT matchmaker.match_cost('duel', '{}', '{}', 2);
SELECT matchmaker.match_cost('duel', '{0.2, NaN}', '{0, 3}');
SELECT matchmaker.match_cost('duel', '{0.2, 1.5}', '{0, 3}');
SELECT matchmaker.match_cost('duel', '{0.2, 0.5}', '{0, -3}');
SELECT matchmaker.match_cost('duel', '{0.2, 0.5}', '{0, Infinity}');
SELECT matchmaker.match_cost('duel', '{{0.2, 0.5}}', '{{0, 3}}');
