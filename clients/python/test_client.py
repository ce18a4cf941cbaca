#!/usr/bin/env python3
"""Tests of matchmaker_client against a running cluster with the matchmaker
worker (PG* variables; the role must be allowed to create queues and to
terminate backends, e.g. the superuser).  Run by test/t/014_clients.pl."""
import sys
import threading
import time
from datetime import timedelta

import psycopg2

from matchmaker_client import Client, MatchmakerError, TicketStatus

failures = 0


def check(cond, what):
    global failures
    print(("ok     " if cond else "FAILED ") + what, flush=True)
    if not cond:
        failures += 1


def admin(sql, *args):
    conn = psycopg2.connect("")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(sql, args)
        rows = cur.fetchall() if cur.description else None
    conn.close()
    return rows


admin("SELECT matchmaker.create_queue('py_duel', algorithm => 'greedy', max_wait => '1 hour')")
admin("SELECT matchmaker.create_queue('py_ready', algorithm => 'greedy', max_wait => '1 hour', "
      "params => '{\"accept_timeout\": 30}')")
mm = Client("")

# enqueue, a retry, wait_for_match, typed results
a = mm.enqueue("py_duel", "ann", 0.5, {"region": "eu"})
check(isinstance(a, int), "enqueue returns a ticket id")
check(mm.enqueue("py_duel", "ann", 0.5, {"region": "eu"}) == a, "a retried enqueue returns the same ticket")
b = mm.enqueue("py_duel", "bob", 0.5)
sa = mm.wait_for_match(a, timeout=10)
sb = mm.wait_for_match(b, timeout=10)
check(isinstance(sa, TicketStatus) and sa.state == "matched" and sa.final, "wait_for_match: matched")
check(sa.match_id is not None and sa.match_id == sb.match_id and sa.team != sb.team,
      "both in one match, on two teams")
check(isinstance(sa.waited, timedelta) and sa.queue == "py_duel" and sa.player == "ann",
      "typed fields")

# a party: all its tickets, one team; a retry returns the same tickets
admin("SELECT matchmaker.create_queue('py_squad', team_size => 2, algorithm => 'greedy', max_wait => '1 hour')")
party = mm.enqueue_party("py_squad", ["pa", "pb"], [0.4, 0.6])
check(len(party) == 2 and all(isinstance(t, int) for t in party), "enqueue_party returns the tickets")
check(mm.enqueue_party("py_squad", ["pa", "pb"], [0.4, 0.6]) == party, "a retried enqueue_party returns them again")
mm.enqueue("py_squad", "pc", 0.5)
mm.enqueue("py_squad", "pd", 0.5)
s1 = mm.wait_for_match(party[0], timeout=10)
s2 = mm.wait_for_match(party[1], timeout=10)
check(s1.state == "matched" and s1.match_id == s2.match_id and s1.team == s2.team,
      "the party plays in one team")
try:
    mm.enqueue_party("py_squad", ["x", "y", "z"], [0.5, 0.5, 0.5])
    check(False, "a party larger than a team refused")
except MatchmakerError as err:
    check(err.sqlstate == "22023", "a party larger than a team refused (%s)" % err.message)

# errors carry their SQLSTATE
for call, state, what in ((lambda: mm.enqueue("no_such_queue", "x", 0.5), "42704", "unknown queue"),
                          (lambda: mm.enqueue("py_duel", "x", float("nan")), "22023", "NaN rating"),
                          (lambda: mm.status(10 ** 12), "42704", "unknown ticket")):
    try:
        call()
        check(False, what + " refused")
    except MatchmakerError as err:
        check(err.sqlstate == state, "%s refused with SQLSTATE %s (%s)" % (what, err.sqlstate, err.message))

# cancel; a timeout
c = mm.enqueue("py_duel", "cid", 0.99)
try:
    mm.wait_for_match(c, timeout=1)
    check(False, "a lonely ticket times out")
except TimeoutError:
    check(True, "a lonely ticket times out")
check(mm.cancel(c) is True and mm.cancel(c) is False, "cancel, then cancel again")
check(mm.status(c).state == "cancelled", "the ticket is cancelled")

# the listener is killed while waiting, and the partner arrives while it is
# down (its NOTIFY is lost): the wait reconnects and catches up
d = mm.enqueue("py_duel", "dan", 0.2)
result = {}


def waiter():
    try:
        result["status"] = Client("").wait_for_match(d, timeout=20, reconnect_delay=1.0)
    except Exception as err:     # reported below
        result["error"] = err


t = threading.Thread(target=waiter)
t.start()
time.sleep(1.0)
killed = admin("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
               "WHERE query LIKE 'LISTEN%%' AND pid <> pg_backend_pid()")[0][0]
e = mm.enqueue("py_duel", "eve", 0.2)
t.join(30)
check(killed >= 1, "the listener's connection was terminated")
check(result.get("status") is not None and result["status"].state == "matched",
      "after a lost connection the wait catches up: %s" % (result.get("status") or result.get("error")))

# a ready check: proposed, then accepted by both
f = mm.enqueue("py_ready", "fay", 0.5)
g = mm.enqueue("py_ready", "gus", 0.5)
sf = mm.wait_for_match(f, timeout=10)
check(sf.state == "proposed" and not sf.final, "a ready check: proposed")
check(mm.accept(f) == "proposed" and mm.accept(g) == "matched", "accepted by both")
check(mm.wait_for_match(f, timeout=5).state == "matched", "then matched")

# a queue dropped under a waiting ticket: its "dropped" event ends the wait
# at once with the ticket's "does not exist" error
admin("SELECT matchmaker.create_queue('py_gone', algorithm => 'greedy', max_wait => '1 hour')")
h = mm.enqueue("py_gone", "hal", 0.5)
threading.Timer(1.0, admin, ("SELECT matchmaker.drop_queue('py_gone', force => true)",)).start()
started = time.monotonic()
try:
    mm.wait_for_match(h, timeout=20)
    check(False, "a dropped queue ends the wait")
except MatchmakerError as e:
    check(e.sqlstate == "42704" and time.monotonic() - started < 10,
          "a dropped queue ends the wait: %s after %.1f s" % (e.sqlstate, time.monotonic() - started))
mm.close()

check(admin("SELECT count(*) FROM matchmaker.check()")[0][0] == 0, "matchmaker.check() finds nothing")
print("%d failed" % failures)
sys.exit(1 if failures else 0)
