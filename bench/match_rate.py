#!/usr/bin/env python3
"""Listen on channel matchmaker for SECONDS and measure, over the window
from WARMUP to SECONDS, the tickets matched per second as a client sees
them (ticket ids in the NOTIFY payloads received in the window) and the
delay from each such ticket's enqueued_at to the receipt of its NOTIFY.

Usage: bench/match_rate.py SECONDS WARMUP TICKETS_TABLE READY_FILE
Touches READY_FILE once it listens.  Prints "TICKETS_PER_S MEDIAN_MS P99_MS".
Connects with the PG* environment variables; the server's clock is this
machine's clock (same host).
"""
import json
import select
import statistics
import sys
import time

import psycopg2
import psycopg2.extensions

SECONDS, WARMUP, TABLE, READY = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]


def main():
    conn = psycopg2.connect("")
    conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    cur = conn.cursor()
    cur.execute("LISTEN matchmaker")
    open(READY, "w").close()
    start = time.time()
    received = []  # (receipt time, ticket id)
    while True:
        left = start + SECONDS - time.time()
        if left <= 0:
            break
        select.select([conn], [], [], left)
        conn.poll()
        now = time.time()
        for n in conn.notifies:
            event = json.loads(n.payload)
            # matches only (other events name tickets too: proposed, dropped ...)
            if now - start >= WARMUP and event.get("event", "matched") == "matched":
                received.extend((now, t) for t in event.get("tickets", []))
        conn.notifies.clear()
    if not received:
        print("0 - -")
        return
    cur.execute("SELECT id, extract(epoch FROM enqueued_at)::float8 FROM " + TABLE +
                " WHERE id = ANY(%s)", ([t for _, t in received],))
    enq = dict(cur.fetchall())
    delays = sorted((r - enq[t]) * 1000 for r, t in received)
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))]
    print("%.0f %.1f %.1f" % (len(received) / (SECONDS - WARMUP), statistics.median(delays), p99))


if __name__ == "__main__":
    main()
