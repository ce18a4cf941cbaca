#!/usr/bin/env python3
"""Delay from a match's due time to its NOTIFY at a listener, with the
background worker (no manual tick).

Two cases, ROUNDS matches each:
  arrival: a greedy 1v1 queue; the match is due when the second player's
           enqueue commits, which wakes the worker; measured from the start
           of that enqueue call, so the figure includes its round trip.
  timer:   a lone player in a greedy queue with max_wait 0.5 s and
           on_timeout bots; the match is due at enqueued_at + max_wait, a
           timer of the worker (the queue's tick interval is 1 s).
Prints median, p99 and max in milliseconds.  Connects with the PG*
environment variables (bench/notify_latency.sh starts a cluster).
"""
import select
import statistics
import sys
import time

import psycopg2
import psycopg2.extensions

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 200


def connect():
    conn = psycopg2.connect("")
    conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    return conn


def wait_notify(listener, timeout=5.0):
    """Block until one NOTIFY arrives; return its arrival time."""
    end = time.time() + timeout
    while not listener.notifies:
        left = end - time.time()
        if left <= 0:
            raise RuntimeError("no NOTIFY within %.1f s" % timeout)
        select.select([listener], [], [], left)
        listener.poll()
    t = time.time()
    listener.notifies.clear()
    return t


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def main():
    client = connect()
    cur = client.cursor()
    listener = connect()
    lcur = listener.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS matchmaker")
    cur.execute("""SELECT matchmaker.create_queue('arrival', algorithm => 'greedy', tick => '1 second',
                                                  max_wait => '1 minute')""")
    cur.execute("""SELECT matchmaker.create_queue('timer', algorithm => 'greedy', tick => '1 second',
                                                  max_wait => '0.5 seconds')""")
    lcur.execute("LISTEN matchmaker")

    arrival = []
    for i in range(ROUNDS):
        cur.execute("SELECT matchmaker.enqueue('arrival', %s, 0.5)", ("a%d" % i,))
        time.sleep(0.005)
        listener.poll()
        listener.notifies.clear()
        sent = time.time()          # includes the enqueue's own round trip
        cur.execute("SELECT matchmaker.enqueue('arrival', %s, 0.5)", ("b%d" % i,))
        arrival.append((wait_notify(listener) - sent) * 1000.0)

    timer = []
    for i in range(ROUNDS):
        cur.execute("SELECT matchmaker.enqueue('timer', %s, 0.5)", ("t%d" % i,))
        ticket = cur.fetchone()[0]
        cur.execute("""SELECT extract(epoch FROM enqueued_at + interval '0.5 seconds')
                       FROM matchmaker.tickets WHERE id = %s""", (ticket,))
        due = float(cur.fetchone()[0])
        timer.append((wait_notify(listener) - due) * 1000.0)
        time.sleep(0.013 * (i % 7))  # spread the phase against the worker's other timers

    for name, values in (("arrival (second enqueue call -> NOTIFY)", arrival),
                         ("timer (max_wait due -> NOTIFY)", timer)):
        print("| %s | %d | %.1f | %.1f | %.1f |" % (
            name, len(values), statistics.median(values), pct(values, 99), max(values)))


if __name__ == "__main__":
    main()
