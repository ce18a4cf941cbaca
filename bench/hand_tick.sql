-- The grouping of a periodic tick written by hand as one statement over
-- the waiting tickets of queue 'hand': number them by rating, one match
-- row per pair, update the tickets; no costs, no NOTIFY (bench/tick.sh,
-- bench/tick_vs_sql.sh).
WITH ranked AS (
    SELECT id, (row_number() OVER (ORDER BY rating, enqueued_at, id) - 1) / 2 AS pair
    FROM matchmaker.tickets WHERE queue = 'hand' AND state = 'waiting'),
  base AS (SELECT setval('matchmaker.matches_id_seq', nextval('matchmaker.matches_id_seq') + (SELECT count(*) FROM ranked)) - (SELECT count(*) FROM ranked) AS b),
  ids AS (SELECT pair, (SELECT b FROM base) + pair AS match_id FROM ranked GROUP BY pair),
  m AS (INSERT INTO matchmaker.matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost)
        SELECT match_id, 'hand', now(), 0, 0, 0, 0 FROM ids),
  u AS (UPDATE matchmaker.tickets t SET state = 'matched', matched_at = now(), match_id = ids.match_id
        FROM ranked JOIN ids USING (pair) WHERE t.id = ranked.id RETURNING 1)
  SELECT count(*) FROM u;
