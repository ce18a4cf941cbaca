#!/usr/bin/env python3
"""Sample, every 5 ms for SECONDS, what the feeder's backends are doing:
the sessions whose current or last statement starts with PREFIX
(pg_stat_activity).  Prints the mean number of them, per sample, in each of
four states: waiting for the WAL flush of a commit (LWLock WALWrite, IO
WALSync or WALWrite), on the CPU (no wait event), waiting for the client
(ClientRead: idle between transactions), anything else (locks, buffers, WAL insertion).

Usage: bench/feed_waits.py SECONDS PREFIX
Prints "FLUSH CPU CLIENT OTHER".  Connects with the PG* environment variables.
"""
import sys
import time

import psycopg2

SECONDS, PREFIX = float(sys.argv[1]), sys.argv[2]


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    totals = {"flush": 0, "cpu": 0, "client": 0, "other": 0}
    samples = 0
    end = time.time() + SECONDS
    while time.time() < end:
        cur.execute(
            "SELECT wait_event_type, wait_event FROM pg_stat_activity "
            "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
            "AND starts_with(query, %s)", (PREFIX,))
        for kind, event in cur.fetchall():
            if (kind, event) in (("LWLock", "WALWrite"), ("IO", "WALSync"), ("IO", "WALWrite")):
                totals["flush"] += 1
            elif kind is None:
                totals["cpu"] += 1
            elif kind == "Client":
                totals["client"] += 1
            else:
                totals["other"] += 1
        samples += 1
        time.sleep(0.005)
    print(" ".join("%.1f" % (totals[k] / max(samples, 1)) for k in ("flush", "cpu", "client", "other")))


if __name__ == "__main__":
    main()
