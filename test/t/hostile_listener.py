#!/usr/bin/env python3
"""LISTEN matchmaker for the hostile load test (006_hostile.pl): record
each NOTIFY's payload with the time it reached this client, until the stop
file (the first argument) exists; then write them into the table
notify_log (arrived timestamptz, payload jsonb) and print how many.
Prints "listening" once the LISTEN is in place.  Connects with the PG*
environment variables.
"""
import os
import select
import sys
import time

import psycopg2
import psycopg2.extensions


def main():
    stop_file = sys.argv[1]
    conn = psycopg2.connect("")
    conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    cur = conn.cursor()
    cur.execute("LISTEN matchmaker")
    print("listening", flush=True)
    heard = []
    while not os.path.exists(stop_file):
        if select.select([conn], [], [], 0.1)[0]:
            conn.poll()
            now = time.time()
            for n in conn.notifies:
                heard.append((now, n.payload))
            conn.notifies.clear()
    conn.poll()
    now = time.time()
    heard.extend((now, n.payload) for n in conn.notifies)
    cur.execute("UNLISTEN *")
    cur.executemany("INSERT INTO notify_log (arrived, payload) VALUES (to_timestamp(%s), %s::jsonb)",
                    heard)
    print("heard %d" % len(heard), flush=True)


if __name__ == "__main__":
    main()
