#!/usr/bin/env bash
# Run every benchmark with its recorded arguments; each writes its table
# to bench/results/.  Takes about fifty minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")"
bash core_speed.sh 1000000
bash auto_step.sh 10000 100000 1000000
bash paper.sh 2000 3 1000000
bash quality.sh 2000 3
bash algorithms.sh 20000
bash criteria.sh 200000
bash optimize.sh 5
bash optimize_rounds.sh 3
bash simulate.sh 1000000 7
bash simulate_cpu.sh 200000
bash tick.sh 1000 10000 100000 1000000
bash tick_vs_sql.sh 100000 5
bash enqueue.sh 8 10 9
bash enqueue.sh 32 10 9
bash enqueue_cpu.sh 10 5
bash notify_latency.sh 200
bash slow_queue.sh 200
bash live_vs_sim.sh
bash baseline.sh 15 4 1000 2
LOADS=max OUT=bench/results/baseline-max-4.md bash baseline.sh 15 4 1000 5
LOADS=max OUT=bench/results/baseline-max-16.md bash baseline.sh 15 16 1000 5
bash matcher_cost.sh 16 8 3
bash filters.sh 100000
bash parties.sh 50 600 100000
bash queue_stats.sh
bash expected_wait.sh 10 20 60 180
bash router.sh 6 10 3
bash soak.sh 1800 500 5min
