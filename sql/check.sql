-- check: healthy data has no violations; each kind of damage is reported.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;

SELECT matchmaker.create_queue('g', algorithm => 'greedy');
SELECT matchmaker.create_queue('t', team_size => 2, teams => 2, algorithm => 'greedy');
SELECT matchmaker.create_queue('d', algorithm => 'difference_wait', max_wait => '1 hour',
                               params => '{"wait_factor": 3600}');
SELECT count(matchmaker.enqueue('g', 'p' || i, i / 10.0)) FROM generate_series(1, 5) i;
SELECT count(matchmaker.enqueue('t', 'p' || i, i / 10.0)) FROM generate_series(1, 4) i;
SELECT count(matchmaker.enqueue('d', 'p' || i, i / 10.0)) FROM generate_series(1, 3) i;
SELECT matchmaker.cancel(id) FROM matchmaker.tickets WHERE queue = 'g' AND player = 'p5';
SELECT matchmaker.tick(name) FROM matchmaker.queues ORDER BY name;
SELECT count(*) AS provisional_groups FROM matchmaker.provisional;
SELECT * FROM matchmaker.check();

-- Damage, one kind at a time (a superuser writing the tables directly).
BEGIN;
UPDATE matchmaker.matches SET bots = 1 WHERE id = (SELECT min(id) FROM matchmaker.matches WHERE queue = 'g');
SELECT problem, queue, detail FROM matchmaker.check();
ROLLBACK;
BEGIN;
UPDATE matchmaker.tickets SET team = 1 WHERE queue = 't';
SELECT problem, queue, detail FROM matchmaker.check();
ROLLBACK;
BEGIN;
UPDATE matchmaker.tickets SET state = 'cancelled' WHERE queue = 'g' AND player = 'p1';
SELECT problem, queue, detail FROM matchmaker.check() ORDER BY problem;
ROLLBACK;
BEGIN;
UPDATE matchmaker.tickets SET state = 'matched', matched_at = now() WHERE queue = 'g' AND player = 'p5';
SELECT problem, queue, detail FROM matchmaker.check() ORDER BY problem;
ROLLBACK;
BEGIN;
UPDATE matchmaker.tickets SET state = 'expired' WHERE id = (SELECT tickets[1] FROM matchmaker.provisional);
SELECT problem, queue, detail FROM matchmaker.check() ORDER BY problem;
ROLLBACK;
BEGIN;
DELETE FROM matchmaker.queues WHERE name = 'g';
SELECT problem, queue, count(*) FROM matchmaker.check() GROUP BY 1, 2 ORDER BY 1, 2;
ROLLBACK;
SELECT count(*) AS violations FROM matchmaker.check();
