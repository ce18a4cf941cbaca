-- queue_stats: what the ticks decided per queue, read from 10-second
-- buckets that the ticks write (queue_buckets), however long the history.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default

SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '10 s',
                               params => '{"on_timeout": "expire"}');
SELECT matchmaker.create_queue('quiet', algorithm => 'greedy');
-- A queue with no history: counts are 0, the rest null (no worker here).
SELECT * FROM matchmaker.queue_stats WHERE queue = 'quiet';

-- Two pairs: one waited 2 s, the other 8 s; then a ticket that expires.
SELECT count(*) AS enqueued FROM (
    SELECT matchmaker.enqueue('duel', p, r) AS id
    FROM (VALUES ('a', 0.10), ('b', 0.12), ('c', 0.60), ('d', 0.62)) v(p, r)) e;
UPDATE matchmaker.tickets SET enqueued_at = now() - CASE WHEN player IN ('a', 'b') THEN interval '2 s' ELSE interval '8 s' END
WHERE queue = 'duel';
SELECT matchmaker.tick('duel', now()) AS made;
SELECT matchmaker.enqueue('duel', 'e', 0.9) AS e \gset
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '30 s' WHERE id = :e;
SELECT matchmaker.tick('duel', now()) AS made;
SELECT matchmaker.enqueue('duel', 'f', 0.3) > 0 AS f;
SELECT state, count(*) FROM matchmaker.tickets WHERE queue = 'duel' GROUP BY state ORDER BY state;

-- Two matches of four players in the last minute and hour, one expiry, no
-- computer players; mean cost as in matches; the median wait lies in the
-- 2 s bucket (its top, half the players being there) and the 95th
-- percentile in the 8 s one; f waits.
SELECT queue, waiting, oldest_wait >= 0 AS oldest_known, matches_1m, players_1m, matches_1h, players_1h,
       expired_1h, bot_share,
       round(mean_cost::numeric, 9) = (SELECT round(avg(cost)::numeric, 9) FROM matchmaker.matches WHERE queue = 'duel')
           AS mean_cost_of_matches,
       round(p50_wait::numeric, 3) AS p50_wait, round(p95_wait::numeric, 3) AS p95_wait,
       p50_wait BETWEEN 2 / 1.19 AND 2 * 1.19 AS p50_near_2s, p95_wait BETWEEN 8 / 1.19 AND 8 * 1.19 AS p95_near_8s,
       last_tick, last_tick_ms, lag_ms, next_tick
FROM matchmaker.queue_stats WHERE queue = 'duel';
SELECT sum(matches) AS matches, sum(players) AS players, sum(expired) AS expired FROM matchmaker.queue_buckets WHERE queue = 'duel';

-- Buckets older than an hour are not counted, and a tick that records
-- deletes its queue's buckets older than two hours.
INSERT INTO matchmaker.queue_buckets
SELECT 'duel', now() - interval '90 minutes', 7, 14, 7, 0, 1.0, '{14}'::bigint[]
UNION ALL
SELECT 'duel', now() - interval '3 hours', 5, 10, 0, 0, 1.0, '{10}'::bigint[];
SELECT matches_1h, players_1h, bot_share FROM matchmaker.queue_stats WHERE queue = 'duel';
SELECT matchmaker.enqueue('duel', 'g', 0.31) > 0 AS g;
SELECT matchmaker.tick('duel', now()) AS made;
SELECT count(*) FILTER (WHERE bucket_start < now() - interval '2 hours') AS older_than_2h,
       count(*) FILTER (WHERE bucket_start < now() - interval '1 hour') AS older_than_1h
FROM matchmaker.queue_buckets WHERE queue = 'duel';
-- A tick that decides nothing writes nothing.
SELECT matchmaker.enqueue('duel', 'h', 0.5) > 0 AS h;
SELECT count(*) AS buckets_before FROM matchmaker.queue_buckets WHERE queue = 'duel' \gset
SELECT matchmaker.tick('duel', now()) AS made;
SELECT count(*) = :buckets_before AS unchanged FROM matchmaker.queue_buckets WHERE queue = 'duel';

-- wait_quantile and waits_sum.
SELECT matchmaker.wait_quantile('{}', 0.5) AS empty, matchmaker.wait_quantile('{0,0}', 0.5) AS zeros,
       matchmaker.wait_quantile('{4}', 0.5) AS below_a_tenth, matchmaker.wait_quantile('{1,1}', 1) AS top;
SELECT matchmaker.waits_sum(w) FROM (VALUES ('{1,2}'::bigint[]), ('{3}'), (NULL), ('{0,0,5}')) v(w);
SELECT matchmaker.wait_quantile('{1}', 1.5);
SELECT matchmaker.wait_quantile('{-1}', 0.5);
SELECT matchmaker.wait_quantile(array_fill(1::bigint, ARRAY[117]), 0.5);
SELECT matchmaker.waits_add('{9223372036854775807}', '{1}');

-- drop_queue removes its buckets.
SELECT matchmaker.drop_queue('duel', force => true);
SELECT count(*) AS buckets_left FROM matchmaker.queue_buckets;
