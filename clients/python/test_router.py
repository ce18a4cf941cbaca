#!/usr/bin/env python3
"""Tests of matchmaker_client through a matchmaker_router (PG* variables
name the router; the role may create queues there).  Run by
test/t/016_router.pl against three nodes: the listener must reach the node
that holds each ticket, since the router itself sends no events."""
import threading
import time

import psycopg2

from matchmaker_client import Client

failures = 0


def check(cond, what):
    global failures
    print(("ok     " if cond else "FAILED ") + what, flush=True)
    if not cond:
        failures += 1


conn = psycopg2.connect("")
conn.autocommit = True
with conn.cursor() as cur:
    # queues on at least two nodes: one per partition name tried until two nodes hold one
    cur.execute("SELECT q FROM (SELECT 'py_r' || i AS q FROM generate_series(0, 31) i) s "
                "ORDER BY matchmaker.queue_node(q), q")
    names = [r[0] for r in cur.fetchall()]
    cur.execute("SELECT DISTINCT ON (matchmaker.queue_node(q)) q "
                "FROM unnest(%s::text[]) q ORDER BY matchmaker.queue_node(q), q", (names,))
    queues = [r[0] for r in cur.fetchall()]
    for q in queues:
        cur.execute("SELECT matchmaker.create_queue(%s, algorithm => 'greedy', max_wait => '1 hour')", (q,))
check(len(queues) >= 2, "queues on %d nodes" % len(queues))

# the listener keeps the caller's credentials and settings, and takes only
# the node's place from ticket_node (not the user in its connect string)
fake = Client("host=router.example port=6432 dbname=game user=backend password=s3cret application_name=shop")
fake._router = True
fake._one = lambda sql, args: ("dbname=game2 host=10.0.0.2 port=5433 user=postgres application_name='x y'",)
got = psycopg2.extensions.parse_dsn(fake._listen_dsn_for(8796093022209))
check(got.get("user") == "backend" and got.get("password") == "s3cret"
      and got.get("application_name") == "shop",
      "the listener keeps the caller's user, password and settings (%s)" % got)
check(got.get("host") == "10.0.0.2" and got.get("port") == "5433" and got.get("dbname") == "game2",
      "the listener connects to the ticket's node")

mm = Client("")
for q in queues:
    a = mm.enqueue(q, "ann", 0.5)
    result = {}

    def wait():
        result["status"] = mm.wait_for_match(a, timeout=15)

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(1.0)   # the waiter listens; the partner arrives after
    b = Client("").enqueue(q, "bob", 0.5)
    waiter.join()
    status = result.get("status")
    check(status is not None and status.state == "matched",
          "queue %s: wait_for_match through the router hears the match on the ticket's node" % q)
    check(status is not None and mm.status(b).match_id == status.match_id,
          "queue %s: both players in that match" % q)
check(len(mm._listeners) == len(queues), "one listener per node")
mm.close()
print("%d failed" % failures)
