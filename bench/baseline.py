#!/usr/bin/env python3
"""A matchmaker written as an application would write it without the
extension: a loop that polls the waiting tickets of a plain table, groups
them, and writes the matches back, one NOTIFY per match.  It is the
baseline of bench/baseline.sh.

Usage: bench/baseline.py per-match|batched QUEUE BATCH MAX_WAIT_SECONDS
Connects with the PG* environment variables; runs until SIGTERM or SIGINT.

Tables (same columns and indexes as matchmaker.tickets / matches):
  bl_tickets (id, queue, player, rating, state, enqueued_at, matched_at,
              match_id, ...), filled by the feeder with plain INSERTs;
  bl_matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost).

The rule is the periodic algorithm's with batch BATCH and two players per
match, as the extension's queue runs it: while BATCH tickets wait, the
BATCH oldest are sorted by rating (ties by age) and neighbours pair up.
Each poll is one transaction: read the waiting tickets, decide, then write
  per-match: for each match an INSERT ... RETURNING id, an UPDATE of its
             two tickets and a pg_notify, one round trip each;
  batched:   one INSERT of all matches, one UPDATE of all tickets and one
             SELECT pg_notify(...) over all payloads (psycopg2's
             execute_values).
Ratings are taken on the scale 0..1; the cost of a match is eq. 1 like the
extension's (2 * spread + sum of waits / max_wait).  A poll that makes no
match sleeps 1 ms before the next.
"""
import json
import signal
import sys
import time

import psycopg2
import psycopg2.extras

MODE, QUEUE, BATCH, MAX_WAIT = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
if MODE not in ("per-match", "batched") or BATCH < 2 or BATCH % 2:
    sys.exit("usage: baseline.py per-match|batched QUEUE EVEN_BATCH MAX_WAIT_SECONDS")

stop = False


def on_signal(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)


def decide(rows, now):
    """Pairs (a, b, criteria_cost, wait_cost) by the periodic rule."""
    pairs = []
    for start in range(0, len(rows) - BATCH + 1, BATCH):
        chunk = sorted(rows[start:start + BATCH], key=lambda r: r[1])  # stable: ties by age
        for i in range(0, BATCH, 2):
            a, b = chunk[i], chunk[i + 1]
            criteria = 2 * abs(a[1] - b[1])
            wait = (max(now - a[2], 0) + max(now - b[2], 0)) / MAX_WAIT
            pairs.append((a[0], b[0], criteria, wait))
    return pairs


def payload(match_id, a, b):
    return json.dumps({"match": match_id, "queue": QUEUE, "tickets": [a, b]})


def write_per_match(cur, pairs):
    for a, b, criteria, wait in pairs:
        cur.execute("INSERT INTO bl_matches (queue, created_at, cost, criteria_cost, wait_cost) "
                    "VALUES (%s, now(), %s, %s, %s) RETURNING id",
                    (QUEUE, criteria + wait, criteria, wait))
        match_id = cur.fetchone()[0]
        cur.execute("UPDATE bl_tickets SET state = 'matched', matched_at = now(), match_id = %s "
                    "WHERE id IN (%s, %s)", (match_id, a, b))
        cur.execute("SELECT pg_notify('matchmaker', %s)", (payload(match_id, a, b),))


def write_batched(cur, pairs):
    cur.execute("SELECT nextval('bl_matches_id_seq') FROM generate_series(1, %s)", (len(pairs),))
    ids = [r[0] for r in cur.fetchall()]
    psycopg2.extras.execute_values(
        cur, "INSERT INTO bl_matches (id, queue, created_at, cost, criteria_cost, wait_cost) VALUES %s",
        [(m, QUEUE, c + w, c, w) for m, (a, b, c, w) in zip(ids, pairs)],
        template="(%s, %s, now(), %s, %s, %s)", page_size=10000)
    psycopg2.extras.execute_values(
        cur, "UPDATE bl_tickets AS t SET state = 'matched', matched_at = now(), match_id = v.m "
        "FROM (VALUES %s) AS v(id, m) WHERE t.id = v.id",
        [(t, m) for m, (a, b, c, w) in zip(ids, pairs) for t in (a, b)], page_size=10000)
    cur.execute("SELECT count(pg_notify('matchmaker', p)) FROM unnest(%s::text[]) AS p",
                ([payload(m, a, b) for m, (a, b, c, w) in zip(ids, pairs)],))


def main():
    conn = psycopg2.connect("")
    cur = conn.cursor()
    write = write_per_match if MODE == "per-match" else write_batched
    while not stop:
        cur.execute("SELECT id, rating, extract(epoch FROM enqueued_at)::float8, "
                    "extract(epoch FROM now())::float8 FROM bl_tickets "
                    "WHERE queue = %s AND state = 'waiting' ORDER BY enqueued_at, id", (QUEUE,))
        rows = cur.fetchall()
        pairs = decide(rows, rows[0][3]) if rows else []
        if pairs:
            write(cur, pairs)
        conn.commit()
        if not pairs:
            time.sleep(0.001)
    conn.close()


if __name__ == "__main__":
    main()
