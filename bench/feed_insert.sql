-- The same feed for the application loop (bench/baseline.py): a plain INSERT
-- into its table of the same shape as matchmaker.tickets.
\set p random(1, 1000000000000000)
\set r random(0, 1000000)
INSERT INTO bl_tickets (queue, player, rating, attributes, enqueued_at, enqueued_by, enqueued_by_name) VALUES ('bench', 'p' || :p, :r / 1000000.0, '{}', clock_timestamp(), current_user::text::regrole, current_user);
