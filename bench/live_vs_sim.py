#!/usr/bin/env python3
"""Live equals simulated: an auto queue fed in real time through enqueue,
matched by the background worker, against simulate on the same stream.

A Poisson stream of N players (RATE per second, uniform ratings, seed SEED)
is enqueued at its arrival times into a fresh 1v1 queue 'live' (algorithm
auto, max_wait MAX_WAIT seconds) by one client with autocommit; the worker
matches it.  Once every ticket has ended, the live cost (the sum of the
matches' eq. 1 costs) is compared with simulate_summary over the arrivals
as they were recorded (enqueued_at, so the client's own delays do not
count) and over the arrivals as scheduled.

Prints a Markdown table row and, last, "ratio=<live / simulated>" for
scripts.  Connects with the PG* environment variables (the cluster must run
the matchmaker worker on this database); test/t/009_live_sim.pl runs it on
a short stream, bench/live_vs_sim.sh on a long one.

With MODES > 1 the queue filters on a game mode (params.filters): each
player is in mode m0 with probability 0.6, else in one of m1 .. m<MODES-1>
alike, so every mode is matched apart at its own arrival rate.

Usage: live_vs_sim.py [N [RATE [MAX_WAIT [SEED [MODES]]]]]
"""
import random
import sys
import time

import psycopg2
import psycopg2.extensions

N = int(sys.argv[1]) if len(sys.argv) > 1 else 300
RATE = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
MAX_WAIT = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
SEED = int(sys.argv[4]) if len(sys.argv) > 4 else 1
MODES = int(sys.argv[5]) if len(sys.argv) > 5 else 1


def connect():
    conn = psycopg2.connect("")
    conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    return conn


def main():
    rng = random.Random(SEED)
    stream = []
    t = 0.0
    for i in range(N):
        t += rng.expovariate(RATE)
        rating = rng.random()
        mode = 0 if MODES == 1 or rng.random() < 0.6 else rng.randrange(1, MODES)
        stream.append((i + 1, rating, t, '{"mode": "m%d"}' % mode))

    conn = connect()
    cur = conn.cursor()
    cur.execute("SELECT matchmaker.drop_queue('live', force => true) "
                "FROM matchmaker.queues WHERE name = 'live'")
    params = '{"filters": {"mode": "equal"}}' if MODES > 1 else '{}'
    cur.execute("SELECT matchmaker.create_queue('live', max_wait => %s::interval, params => %s)",
                ("%g seconds" % MAX_WAIT, params))

    start = time.time()
    late = 0.0
    for pid, rating, at, attrs in stream:
        delay = start + at - time.time()
        if delay > 0:
            time.sleep(delay)
        else:
            late = max(late, -delay)
        cur.execute("SELECT matchmaker.enqueue('live', %s, %s, %s)", ("p%d" % pid, rating, attrs))

    end = time.time() + MAX_WAIT + 30
    while True:
        cur.execute("SELECT count(*) FROM matchmaker.tickets "
                    "WHERE queue = 'live' AND state = 'waiting'")
        if cur.fetchone()[0] == 0:
            break
        if time.time() > end:
            raise RuntimeError("tickets still waiting %.0f s after the last arrival" % (MAX_WAIT + 30))
        time.sleep(0.2)

    cur.execute("SELECT count(*), sum(cost), sum(bots) FROM matchmaker.matches WHERE queue = 'live'")
    games, live_cost, live_bots = cur.fetchone()
    cur.execute("SELECT max(extract(epoch FROM matched_at - enqueued_at)) FROM matchmaker.tickets "
                "WHERE queue = 'live'")
    live_max_wait = float(cur.fetchone()[0])

    recorded = ("SELECT id, rating, extract(epoch FROM enqueued_at - "
                "(SELECT min(enqueued_at) FROM matchmaker.tickets WHERE queue = 'live'))::float8, "
                "attributes FROM matchmaker.tickets WHERE queue = 'live'")
    cur.execute("SELECT cost, games, bots FROM matchmaker.simulate_summary('live', %s)", (recorded,))
    sim_cost, sim_games, sim_bots = cur.fetchone()
    scheduled = "VALUES " + ", ".join("(%d, %r, %r, '%s'::jsonb)" % s for s in stream)
    cur.execute("SELECT cost FROM matchmaker.simulate_summary('live', %s)", (scheduled,))
    sched_cost = cur.fetchone()[0]

    cur.execute("SELECT count(*) FROM (SELECT match_id FROM matchmaker.tickets WHERE queue = 'live' "
                "AND match_id IS NOT NULL GROUP BY match_id "
                "HAVING count(DISTINCT attributes->>'mode') > 1) m")
    mixed = cur.fetchone()[0]

    print("| players | rate/s | max_wait s | modes | live cost (games, bots) | simulated on recorded "
          "arrivals (games, bots) | live / simulated | simulated on scheduled arrivals | "
          "client late at most |")
    print("|---:|---:|---:|---:|---|---|---:|---:|---:|")
    print("| %d | %g | %g | %d | %.3f (%d, %d) | %.3f (%d, %d) | %.4f | %.3f | %.0f ms |"
          % (N, RATE, MAX_WAIT, MODES, live_cost, games, live_bots, sim_cost, sim_games, sim_bots,
             live_cost / sim_cost, sched_cost, late * 1000))
    print("mixed_matches=%d" % mixed)
    print("live_max_wait=%.3f" % live_max_wait)
    print("ratio=%.4f" % (live_cost / sim_cost))


if __name__ == "__main__":
    main()
