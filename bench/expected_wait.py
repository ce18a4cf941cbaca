#!/usr/bin/env python3
"""How accurate ticket_status.expected_wait is: the estimates a live queue
gives against the waits that followed.

A Poisson stream (RATE players per second, ratings normal around 0.5 with
deviation 0.15, clipped to [0, 1], seed SEED) is enqueued in real time into
a fresh 1v1 queue 'est' (algorithm auto, max_wait MAX_WAIT seconds) by one
client with autocommit; the background worker matches it.  After WARMUP
seconds (so the queue has a history), for MEASURE seconds every new ticket
is asked for its ticket_status right after its enqueue, and again once it
has waited 3 seconds if it still waits.  Each answer is compared with the
wait that followed (matched_at, or ended_at, less the time of the call).

The estimate is set against a baseline an operator could compute without
bands: queue_stats.p50_wait (the queue's median wait over the last hour)
less what the ticket has waited, between 0 and the time it has left.

Prints a Markdown table: per kind of call and rating (the middle, |r - 0.5|
< 0.15, and the tails), the calls, the median wait that followed, and the
median absolute error of expected_wait and of the baseline.  Connects with
the PG* environment variables (the cluster must run the matchmaker worker).

Usage: expected_wait.py [RATE [MAX_WAIT [WARMUP [MEASURE [SEED]]]]]
"""
import heapq
import random
import statistics
import sys
import time

import psycopg2
import psycopg2.extensions

RATE = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
MAX_WAIT = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
WARMUP = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
MEASURE = float(sys.argv[4]) if len(sys.argv) > 4 else 180.0
SEED = int(sys.argv[5]) if len(sys.argv) > 5 else 1
LATER = 3.0

PROBE = """
SELECT extract(epoch FROM s.expected_wait)::float8, extract(epoch FROM s.waited)::float8, s.state,
       extract(epoch FROM pg_catalog.clock_timestamp())::float8,
       (SELECT p50_wait FROM matchmaker.queue_stats WHERE queue = 'est')
FROM matchmaker.ticket_status(%s) s"""


def main():
    conn = psycopg2.connect("")
    conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    cur = conn.cursor()
    cur.execute("SELECT matchmaker.drop_queue(name, force => true) FROM matchmaker.queues WHERE name = 'est'")
    cur.execute("SELECT matchmaker.create_queue('est', algorithm => 'auto', max_wait => %s * interval '1 second')",
                (MAX_WAIT,))
    rng = random.Random(SEED)
    start = time.monotonic()
    next_arrival = start
    later = []          # (due, ticket, rating)
    probes = []         # (ticket, rating, kind, estimate, baseline, called_at)
    n = 0

    def probe(ticket, rating, kind):
        cur.execute(PROBE, (ticket,))
        est, waited, state, called_at, p50 = cur.fetchone()
        if state != 'waiting' or est is None:
            return
        left = max(MAX_WAIT - waited, 0.0)
        base = None if p50 is None else min(max(p50 - waited, 0.0), left)
        probes.append((ticket, rating, kind, est, base, called_at))

    while True:
        now = time.monotonic()
        if now - start >= WARMUP + MEASURE and not later:
            break
        if later and later[0][0] <= now:
            _, ticket, rating = heapq.heappop(later)
            probe(ticket, rating, 'after 3 s')
            continue
        if now - start < WARMUP + MEASURE and now >= next_arrival:
            rating = min(max(rng.gauss(0.5, 0.15), 0.0), 1.0)
            n += 1
            cur.execute("SELECT matchmaker.enqueue('est', %s, %s)", ('p%d' % n, rating))
            ticket = cur.fetchone()[0]
            if now - start >= WARMUP:
                probe(ticket, rating, 'at enqueue')
                heapq.heappush(later, (now + LATER, ticket, rating))
            next_arrival += rng.expovariate(RATE)
            continue
        due = [next_arrival] if now - start < WARMUP + MEASURE else []
        if later:
            due.append(later[0][0])
        time.sleep(max(min(due) - time.monotonic(), 0) if due else 0.01)

    # wait until every probed ticket has ended
    ids = [p[0] for p in probes]
    deadline = time.monotonic() + MAX_WAIT + 30
    while time.monotonic() < deadline:
        cur.execute("SELECT count(*) FROM matchmaker.tickets WHERE id = ANY(%s) AND state = 'waiting'", (ids,))
        if cur.fetchone()[0] == 0:
            break
        time.sleep(1)
    cur.execute("SELECT id, extract(epoch FROM coalesce(matched_at, ended_at))::float8 FROM matchmaker.tickets "
                "WHERE id = ANY(%s) AND coalesce(matched_at, ended_at) IS NOT NULL", (ids,))
    ended = dict(cur.fetchall())

    rows = {}
    for ticket, rating, kind, est, base, called_at in probes:
        if ticket not in ended:
            continue
        actual = max(float(ended[ticket]) - float(called_at), 0.0)
        where = 'middle' if abs(rating - 0.5) < 0.15 else 'tails'
        for key in ((kind, where), (kind, 'all')):
            rows.setdefault(key, []).append((actual, float(est), base))

    print("| call | ratings | calls | median wait that followed (s) | median abs. error, expected_wait (s) "
          "| median abs. error, queue median (s) |")
    print("|---|---|---:|---:|---:|---:|")
    for kind in ('at enqueue', 'after 3 s'):
        for where in ('all', 'middle', 'tails'):
            r = rows.get((kind, where), [])
            if not r:
                continue
            actual = statistics.median(a for a, _, _ in r)
            mae = statistics.median(abs(e - a) for a, e, _ in r)
            with_base = [(a, b) for a, _, b in r if b is not None]
            mae_base = statistics.median(abs(b - a) for a, b in with_base) if with_base else float('nan')
            print("| %s | %s | %d | %.2f | %.2f | %.2f |" % (kind, where, len(r), actual, mae, mae_base))


if __name__ == '__main__':
    main()
