-- bench_load(queue, n): replace a queue's tickets and matches with n
-- waiting tickets, uniform ratings, enqueued within the last second
-- (bench/tick.sh, bench/tick_vs_sql.sh).
CREATE FUNCTION bench_load(qname text, n int) RETURNS void LANGUAGE sql AS $$
  DELETE FROM matchmaker.tickets WHERE queue = qname;
  DELETE FROM matchmaker.matches WHERE queue = qname;
  DELETE FROM matchmaker.provisional_groups WHERE queue = qname;
  INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, enqueued_by, enqueued_by_name)
  SELECT qname, 'p' || i, random(), now() - interval '1 second' * random(), current_user::text::regrole, current_user
  FROM generate_series(1, n) i;
$$;
