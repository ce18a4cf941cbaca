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
-- (a backend trims once per bucket: rows age out at bucket boundaries; the
-- rows inserted above are trimmed by the next session's first recording tick)
\c
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
SELECT matchmaker.wait_quantile('{1,2}', '-0') AS minus_zero, matchmaker.wait_quantile('{1,2}', 0) AS zero;
SELECT matchmaker.wait_quantile('{1}', 1.5);
SELECT matchmaker.wait_quantile('{-1}', 0.5);
SELECT matchmaker.wait_quantile(array_fill(1::bigint, ARRAY[117]), 0.5);
SELECT matchmaker.waits_add('{9223372036854775807}', '{1}');
SELECT matchmaker.wait_quantile('[5:6]={1,2}', 0.5);

-- ticket_status's expected_wait reads the waits the ticks recorded per
-- tenth of the rating range and minute (queue_bands): a and b (band 1)
-- waited 2 s, c and d (band 6) 8 s, f and g (band 3) less than a second.
SELECT band, sum((SELECT sum(x) FROM unnest(waits) x)) AS players,
       bool_and(bucket_start = date_trunc('minute', bucket_start)) AS whole_minutes
FROM matchmaker.queue_bands WHERE queue = 'duel' GROUP BY band ORDER BY band;
-- A ticket that just came expects its band's median (2 s and 8 s, to
-- within a bucket); in a band where nobody was matched (9), the median of
-- all bands (2 s); one that has waited 5 s in band 1, where nobody waited
-- that long, the median of all who did (8 s): about 3 s more.
SELECT matchmaker.enqueue('duel', 'i', 0.11) AS i, matchmaker.enqueue('duel', 'j', 0.61) AS j,
       matchmaker.enqueue('duel', 'k', 0.95) AS k, matchmaker.enqueue('duel', 'l', 0.13) AS l \gset
UPDATE matchmaker.tickets SET enqueued_at = now() - interval '5 s' WHERE id = :l;
CREATE TEMP TABLE estimates AS
SELECT player, extract(epoch FROM expected_wait) AS expected, extract(epoch FROM waited) AS waited
FROM (SELECT * FROM matchmaker.ticket_status(:i) UNION ALL SELECT * FROM matchmaker.ticket_status(:j)
      UNION ALL SELECT * FROM matchmaker.ticket_status(:k) UNION ALL SELECT * FROM matchmaker.ticket_status(:l)) s;
-- (expected plus waited is the median; it does not move while the test runs)
SELECT player, round(waited::numeric) AS waited_s, round((expected + waited)::numeric, 1) AS median_s
FROM estimates ORDER BY player;
-- Not a scan of the history: with every ended row removed the estimates
-- stay what they were (less the few milliseconds waited since).
SELECT matchmaker.purge('duel', now()) > 0 AS purged;
SELECT count(*) AS matches_left FROM matchmaker.matches WHERE queue = 'duel';
SELECT e.player, abs(extract(epoch FROM s.expected_wait) - e.expected) < 0.1 AS same
FROM estimates e JOIN matchmaker.tickets t ON t.player = e.player AND t.queue = 'duel' AND t.state = 'waiting',
     matchmaker.ticket_status(t.id) s ORDER BY e.player;
-- Rows older than the queue's history window are not read: without them
-- there is no estimate; a tick that records deletes the rows older than an hour.
UPDATE matchmaker.queue_bands SET bucket_start = bucket_start - interval '2 hours' WHERE queue = 'duel';
SELECT expected_wait FROM matchmaker.ticket_status(:i);
\c
SELECT matchmaker.tick('duel', now()) AS made;
SELECT count(*) FILTER (WHERE bucket_start < now() - interval '1 hour') AS older_than_1h, count(*) > 0 AS recorded
FROM matchmaker.queue_bands WHERE queue = 'duel';

-- A tick at a time ahead of the clock (a day on: the waiting tickets
-- reached max_wait, greedy pairs some, expires the others) is not
-- counted, and removes nothing of the real statistics.
SELECT count(*) AS buckets_before FROM matchmaker.queue_buckets WHERE queue = 'duel' \gset
SELECT count(*) AS bands_before FROM matchmaker.queue_bands WHERE queue = 'duel' \gset
SELECT matchmaker.enqueue('duel', 'm', 0.5) > 0 AS m, matchmaker.enqueue('duel', 'n', 0.5) > 0 AS n;
SELECT matchmaker.tick('duel', now() + interval '1 day') AS made;
SELECT state, count(*) FROM matchmaker.tickets WHERE player IN ('m', 'n') GROUP BY state;
SELECT (SELECT count(*) FROM matchmaker.queue_buckets WHERE queue = 'duel') = :buckets_before AS buckets_unchanged,
       (SELECT count(*) FROM matchmaker.queue_bands WHERE queue = 'duel') = :bands_before AS bands_unchanged,
       (SELECT count(*) FROM matchmaker.queue_bands WHERE bucket_start > now()) AS future_rows;

-- drop_queue removes its buckets.
SELECT matchmaker.drop_queue('duel', force => true);
SELECT count(*) AS buckets_left FROM matchmaker.queue_buckets;
SELECT count(*) AS bands_left FROM matchmaker.queue_bands;

-- worker_queues() fills the columns its declaration has; a declaration
-- with more than the library knows is refused rather than read past.
CREATE FUNCTION public.worker_queues_9(OUT queue text, OUT last_tick timestamptz,
    OUT last_tick_ms float8, OUT lag_ms float8, OUT next_tick timestamptz,
    OUT failures integer, OUT last_error text, OUT last_error_at timestamptz, OUT extra integer)
RETURNS SETOF record AS '$libdir/matchmaker', 'mm_worker_queues' LANGUAGE C;
SELECT * FROM public.worker_queues_9();
DROP FUNCTION public.worker_queues_9();
