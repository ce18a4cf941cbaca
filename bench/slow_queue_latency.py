#!/usr/bin/env python3
"""Enqueue-to-NOTIFY delay of one queue while a worker is stuck in another
queue's tick, with the background workers (no manual tick).

The tick of queue 'slow' is held before its commit (matchmaker.test_hold_tick,
set here with ALTER SYSTEM, so the connection must be a superuser's): it
stands for a round of any length, here as long as the measurement lasts.
Meanwhile ROUNDS pairs of players enqueue in the greedy 1v1 queue 'fast';
each delay runs from the start of the second enqueue call (so it includes
that call's round trip) to the match's NOTIFY at a listener.  Then the
hold is lifted and the held tick cancelled.

Prints a Markdown table row (median, p99 and max in milliseconds) and,
last, "max_ms=<max>" for scripts.  Connects with the PG* environment
variables (bench/slow_queue.sh starts a cluster; test/t/005_slow_queue.pl
runs it in its own).
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


def wait_notify(listener, queue, timeout=5.0):
    """Block until a NOTIFY of queue arrives; return its arrival time."""
    end = time.time() + timeout
    while True:
        for n in listener.notifies:
            if '"queue": "%s"' % queue in n.payload:
                t = time.time()
                listener.notifies.clear()
                return t
        listener.notifies.clear()
        left = end - time.time()
        if left <= 0:
            raise RuntimeError("no NOTIFY of queue %s within %.1f s" % (queue, timeout))
        select.select([listener], [], [], left)
        listener.poll()


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def wait_until(cur, sql, what, timeout=30.0):
    end = time.time() + timeout
    while True:
        cur.execute(sql)
        if cur.fetchone()[0]:
            return
        if time.time() > end:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.05)


def main():
    client = connect()
    cur = client.cursor()
    listener = connect()
    lcur = listener.cursor()
    cur.execute("CREATE EXTENSION IF NOT EXISTS matchmaker")
    cur.execute("""SELECT matchmaker.create_queue('slow', algorithm => 'greedy', tick => '1 second',
                                                  max_wait => '1 hour')""")
    cur.execute("""SELECT matchmaker.create_queue('fast', algorithm => 'greedy', tick => '1 second',
                                                  max_wait => '1 hour')""")
    cur.execute("ALTER SYSTEM SET matchmaker.test_hold_tick = 'slow'")
    cur.execute("SELECT pg_reload_conf()")
    wait_until(cur, "SELECT current_setting('matchmaker.test_hold_tick') = 'slow'", "the reload")
    time.sleep(0.5)                 # the workers read the reloaded file at their next wake-up
    cur.execute("SELECT matchmaker.enqueue('slow', 's1', 0.5), matchmaker.enqueue('slow', 's2', 0.5)")
    wait_until(cur, """SELECT count(*) = 1 FROM pg_stat_activity
                       WHERE backend_type = 'matchmaker worker' AND query = 'tick queue slow'
                         AND wait_event_type = 'Extension' AND state = 'active'""",
               "a worker holding the tick of queue slow")
    lcur.execute("LISTEN matchmaker")

    delays = []
    try:
        for i in range(ROUNDS):
            cur.execute("SELECT matchmaker.enqueue('fast', %s, 0.5)", ("a%d" % i,))
            time.sleep(0.005)
            listener.poll()
            listener.notifies.clear()
            sent = time.time()      # includes the enqueue's own round trip
            cur.execute("SELECT matchmaker.enqueue('fast', %s, 0.5)", ("b%d" % i,))
            delays.append((wait_notify(listener, "fast") - sent) * 1000.0)
        cur.execute("""SELECT count(*) FROM pg_stat_activity
                       WHERE backend_type = 'matchmaker worker' AND query = 'tick queue slow'
                         AND state = 'active'""")
        still_held = cur.fetchone()[0] == 1
    finally:
        cur.execute("ALTER SYSTEM RESET matchmaker.test_hold_tick")
        cur.execute("SELECT pg_reload_conf()")
        cur.execute("""SELECT pg_cancel_backend(pid) FROM pg_stat_activity
                       WHERE backend_type = 'matchmaker worker' AND query = 'tick queue slow'""")
    if not still_held:
        raise RuntimeError("the tick of queue slow ended during the measurement")

    print("| fast queue, a tick of queue slow held (second enqueue call -> NOTIFY) | %d | %.1f | %.1f | %.1f |" % (
        len(delays), statistics.median(delays), pct(delays, 99), max(delays)))
    print("max_ms=%.1f" % max(delays))


if __name__ == "__main__":
    main()
