#!/usr/bin/env python3
"""Run one statement under EXPLAIN ANALYZE in a fresh backend and print
its server-side execution time (ms) and the backend's peak private memory
growth during the statement (KiB).

Usage: bench/peak_memory.py SQL
Prints "EXEC_MS PEAK_KIB".  Connects with the PG* environment variables.

Memory is the backend's anonymous resident memory (RssAnon in
/proc/PID/status: its heap and private mappings, not the shared buffers it
touches), read every millisecond while the statement runs; the figure is
the highest reading minus the reading just before the statement.  Needs
to run on the server's machine, as root or as the server's user.
"""
import re
import sys
import threading
import time

import psycopg2


def rss_anon_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise RuntimeError("no RssAnon for process %d" % pid)


def main():
    sql = sys.argv[1]
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SELECT pg_backend_pid()")
    pid = cur.fetchone()[0]
    before = rss_anon_kib(pid)
    peak = [before]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_anon_kib(pid))
            time.sleep(0.001)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        cur.execute("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, COSTS OFF) " + sql)
        plan = [r[0] for r in cur.fetchall()]
    finally:
        done.set()
        sampler.join()
    peak[0] = max(peak[0], rss_anon_kib(pid))
    conn.close()
    ms = None
    for line in plan:
        m = re.match(r"Execution Time: ([0-9.]+) ms", line)
        if m:
            ms = m.group(1)
    if ms is None:
        raise RuntimeError("no execution time in the plan")
    print(ms, peak[0] - before)


if __name__ == "__main__":
    main()
