-- pgbench feeder of bench/baseline.sh, bench/matcher_cost.sh and bench/enqueue_cpu.sh: one ticket
-- per transaction into queue bench, a random player and a uniform rating.
\set p random(1, 1000000000000000)
\set r random(0, 1000000)
SELECT matchmaker.enqueue('bench', 'p' || :p, :r / 1000000.0);
