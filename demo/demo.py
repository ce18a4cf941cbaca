#!/usr/bin/env python3
"""The live demo: players arrive over time, the background worker matches
them, and each match is printed as its NOTIFY arrives.  In the queue
'ranked' a match is first proposed (a ready check): the demo answers for
its players, all accept except one, who declines the first proposal he is
in; his opponent goes back to the front of the queue.

Connects with the usual PG* environment variables; scripts/demo.sh sets
them for a throw-away cluster with the worker preloaded.
"""
import json
import os
import random
import select
import sys
import threading
import time

import psycopg2
import psycopg2.extensions

# The game backends' calls go through the Python client library.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
from matchmaker_client import Client  # noqa: E402

ARRIVALS = 60          # players per queue (duel, squad)
RANKED = 20            # players of the ranked queue
RATE = 3.0             # arrivals per second
SEED = 7

SETUP = """
CREATE EXTENSION IF NOT EXISTS matchmaker;
SELECT matchmaker.create_queue('duel', team_size => 1, teams => 2,
                               max_wait => '8 seconds', rating_min => 0, rating_max => 3000,
                               tick => '200 ms');
SELECT matchmaker.create_queue('squad', team_size => 2, teams => 2, algorithm => 'multi_queue',
                               max_wait => '8 seconds', rating_min => 0, rating_max => 3000,
                               tick => '200 ms', params => '{"ranges": 3}');
SELECT matchmaker.create_queue('ranked', team_size => 1, teams => 2,
                               max_wait => '8 seconds', rating_min => 0, rating_max => 3000,
                               tick => '200 ms', params => '{"accept_timeout": 5, "channel": "ranked"}');
"""


def connect():
    conn = psycopg2.connect("")
    conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    return conn


def feed(queue, names, rng):
    """Enqueue players with exponential gaps, as a game backend would."""
    backend = Client("")
    for name in names:
        time.sleep(rng.expovariate(RATE))
        rating = min(3000.0, max(0.0, rng.gauss(1500, 500)))
        backend.enqueue(queue, name, round(rating))
    backend.close()


def describe(cur, note):
    """One line for a match, read back from the tables."""
    cur.execute("""
        SELECT m.bots, m.cost, t.team, t.player, t.rating,
               extract(epoch FROM t.matched_at - t.enqueued_at)
        FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
        WHERE m.id = %s ORDER BY t.team, t.rating""", (note["match"],))
    rows = cur.fetchall()
    if not rows:
        return None
    teams = {}
    for bots, cost, team, player, rating, waited in rows:
        teams.setdefault(team, []).append(f"{player}({rating:.0f}, {waited:.1f}s)")
    sides = " vs ".join(" + ".join(members) for _, members in sorted(teams.items()))
    if rows[0][0]:
        sides += f" vs {rows[0][0]} computer player(s)"
    return f"{note['event']:<8} {note['match']:>3} {note['queue']:<6} cost {rows[0][1]:5.2f}  {sides}"


def players(cur, ids):
    """The players of some tickets, in the order of ids."""
    cur.execute("SELECT id, player FROM matchmaker.tickets WHERE id = ANY(%s)", (list(ids),))
    names = dict(cur.fetchall())
    return [names.get(i, str(i)) for i in ids]


def answer(cur, backend, note, state):
    """A ready check: every player accepts, except the first player of the
    demo's second proposal, who declines (once)."""
    names = players(cur, note["tickets"])
    decliner = None
    if state["proposals"] == 1 and not state["declined"]:
        decliner = names[0]
        state["declined"] = True
    state["proposals"] += 1
    print(f"proposed {note['match']:>3} {note['queue']:<6} {' vs '.join(names)}: "
          f"accept by {note['accept_by'][11:19]} UTC"
          + (f"; {decliner} declines" if decliner else ""), flush=True)
    for ticket, name in zip(note["tickets"], names):
        backend.accept(ticket, name != decliner)


def main():
    rng = random.Random(SEED)
    conn = connect()
    cur = conn.cursor()
    cur.execute(SETUP)
    cur.execute("LISTEN matchmaker")
    print("== queues 'duel' (1v1, auto) and 'squad' (2v2, multi_queue); "
          f"{ARRIVALS} players arrive in each at about {RATE:g} per second")
    print(f"== queue 'ranked' (1v1, auto, ready checks of 5 s): {RANKED} players; "
          "every player accepts, but one declines once")
    print("== each line is printed when its NOTIFY arrives")

    feeders = [
        threading.Thread(target=feed, args=("duel", [f"d{i:02d}" for i in range(ARRIVALS)], random.Random(rng.random()))),
        threading.Thread(target=feed, args=("squad", [f"s{i:02d}" for i in range(ARRIVALS)], random.Random(rng.random()))),
        threading.Thread(target=feed, args=("ranked", [f"r{i:02d}" for i in range(RANKED)], random.Random(rng.random()))),
    ]
    for f in feeders:
        f.start()

    backend = Client("")
    matches = 0
    deadline = None
    state = {"proposals": 0, "declined": False}
    while True:
        if deadline is None and not any(f.is_alive() for f in feeders):
            deadline = time.time() + 10     # longer than max_wait: every ticket ends
        if deadline is not None and time.time() > deadline:
            break
        if select.select([conn], [], [], 0.5) == ([], [], []):
            continue
        conn.poll()
        while conn.notifies:
            note = json.loads(conn.notifies.pop(0).payload)
            event = note["event"]
            if event == "proposed":
                answer(cur, backend, note, state)
                continue
            if event == "declined":
                print(f"declined {note['match']:>3} {note['queue']:<6} ({note['reason']}): "
                      f"{', '.join(players(cur, note['declined']))} out; "
                      f"{', '.join(players(cur, note['requeued'])) or 'nobody'} waiting again", flush=True)
                continue
            if event not in ("matched", "ready"):
                # A ticket's own event (expired, cancelled or invalid), or another queue event
                what = f"ticket {note['ticket']} " if "ticket" in note else ""
                print(f"{event} {what}{note['queue']}"
                      + (f": {note['reason']}" if "reason" in note else ""), flush=True)
                continue
            line = describe(cur, note)
            if line:
                matches += 1
                print(line, flush=True)

    cur.execute("""
        SELECT queue, count(*) FILTER (WHERE state = 'matched'), count(*) FILTER (WHERE state = 'expired'),
               count(*) FILTER (WHERE state = 'waiting'), count(*) FILTER (WHERE state = 'declined'),
               round(avg(extract(epoch FROM matched_at - enqueued_at))::numeric, 2)
        FROM matchmaker.tickets GROUP BY queue ORDER BY queue""")
    print(f"== {matches} matches heard")
    for queue, matched, expired, waiting, declined, mean_wait in cur.fetchall():
        print(f"== {queue}: {matched} players matched (mean wait {mean_wait} s), "
              f"{expired} expired, {declined} declined, {waiting} still waiting")
    cur.execute("""SELECT queue, count(*), round(avg(cost)::numeric, 3), sum(bots)
                   FROM matchmaker.matches GROUP BY queue ORDER BY queue""")
    for queue, games, mean_cost, bots in cur.fetchall():
        print(f"== {queue}: {games} games, mean cost {mean_cost} (Schlup eq. 1), {bots} computer players")
    # What an operator watches (doc/reference.md, Operating).
    cur.execute("""SELECT queue, matches_1m, players_1m, round(p50_wait::numeric, 2), round(p95_wait::numeric, 2),
                          round(bot_share::numeric, 2), round(last_tick_ms::numeric, 2), round(lag_ms::numeric, 2)
                   FROM matchmaker.queue_stats ORDER BY queue""")
    print("== matchmaker.queue_stats: queue, matches and players in the last minute, p50 and p95 wait (s), "
          "share of games with computer players, the worker's last tick (ms) and its lag (ms)")
    for row in cur.fetchall():
        print("== " + " | ".join(str(v) for v in row))


if __name__ == "__main__":
    main()
