#!/usr/bin/env python3
"""Parties, roles and modes in a 5v5 queue, through simulate.

A stream of players arriving at RATE per second for SECONDS seconds, in
parties of 1 to 5 (half of the players alone), each party in one of 3
game modes (50 %, 30 %, 20 %), each player with roles drawn from tank,
healer, dps and flexible mixes (a party redrawn until its players can take
different places of one team).  The queue: 2 teams of 5, roles
{"tank": 1, "healer": 1, "dps": 3}, the mode an equal filter that relaxes
after 30 s, max_wait 120 s, computer players at the timeout.  For each
algorithm, simulate_summary and simulate of the stream: cost per game and
per player, mean and p95 wait, share of games with computer players, share
of games whose players' modes differ (they waived the mode), split parties
(must be 0), and the time simulate took.  The same stream is also run
without parties and roles (every player alone, any role), and without the
mode filter, to show what each costs.

Usage: bench/parties.py [RATE] [SECONDS]   (defaults 50 and 600)
Connects with the PG* environment variables; prints a Markdown table.
"""
import json
import random
import sys
import time

import psycopg2

RATE = float(sys.argv[1]) if len(sys.argv) > 1 else 50.0
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0

ROLE_MIX = [(["tank"], 0.15), (["healer"], 0.15), (["dps"], 0.40),
            (["tank", "dps"], 0.12), (["healer", "dps"], 0.12), (["tank", "healer", "dps"], 0.06)]
SIZES = [(1, 0.50), (2, 0.20), (3, 0.13), (4, 0.09), (5, 0.08)]  # shares of players
MODES = [("ranked", 0.5), ("casual", 0.3), ("arcade", 0.2)]
PLACES = {"tank": 1, "healer": 1, "dps": 3}


def draw(pairs, rnd):
    x = rnd.random()
    for v, p in pairs:
        x -= p
        if x < 0:
            return v
    return pairs[-1][0]


def fits(lists):
    """Whether players with these role lists can take different places of one team."""
    places = [r for r, n in PLACES.items() for _ in range(n)]
    holder = [-1] * len(places)

    def augment(v, seen):
        for p, role in enumerate(places):
            if role in lists[v] and p not in seen:
                seen.add(p)
                if holder[p] < 0 or augment(holder[p], seen):
                    holder[p] = v
                    return True
        return False

    return all(augment(v, set()) for v in range(len(lists)))


def stream(rnd):
    # party sizes drawn so that each size's share of players is as in SIZES
    unit_weights = [(s, p / s) for s, p in SIZES]
    total = sum(w for _, w in unit_weights)
    unit_weights = [(s, w / total) for s, w in unit_weights]
    mean_size = sum(s * w for s, w in unit_weights)
    t = 0.0
    rows = []
    pid = 0
    unit = 0
    while t < SECONDS:
        t += rnd.expovariate(RATE / mean_size)
        size = draw(unit_weights, rnd)
        mode = draw(MODES, rnd)
        base = rnd.random()
        while True:
            lists = [draw(ROLE_MIX, rnd) for _ in range(size)]
            if fits(lists):
                break
        unit += 1
        for m in range(size):
            pid += 1
            rating = min(max(base + rnd.gauss(0, 0.08), 0.0), 1.0) if size > 1 else base
            attrs = {"mode": mode, "roles": lists[m]}
            if size > 1:
                attrs["party"] = "u%d" % unit
            rows.append((pid, round(rating, 5), round(t, 4), json.dumps(attrs)))
    return rows


def main():
    rnd = random.Random(16)
    rows = stream(rnd)
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute("DROP EXTENSION IF EXISTS matchmaker CASCADE")
    cur.execute("CREATE EXTENSION matchmaker")
    cur.execute("DROP TABLE IF EXISTS pstream")
    cur.execute("CREATE TABLE pstream (id bigint, rating float8, arrival float8, attrs jsonb)")
    cur.executemany("INSERT INTO pstream VALUES (%s, %s, %s, %s)", rows)
    cur.execute("ANALYZE pstream")
    cur.execute("SELECT count(*), count(DISTINCT attrs->>'party'), count(*) FILTER (WHERE attrs ? 'party') FROM pstream")
    players, parties, in_parties = cur.fetchone()

    algorithms = ["greedy", "periodic", "multi_queue", "difference_wait", "window", "cluster", "auto"]
    variants = [
        ("parties, roles, modes", {"roles": PLACES,
                                   "filters": {"mode": {"kind": "equal", "optional_after": 30}}},
         "SELECT id, rating, arrival, attrs FROM pstream"),
        ("solo, any role, modes", {"filters": {"mode": {"kind": "equal", "optional_after": 30}}},
         "SELECT id, rating, arrival, attrs - 'party' - 'roles' FROM pstream"),
        ("parties, roles, one pool", {"roles": PLACES},
         "SELECT id, rating, arrival, attrs - 'mode' FROM pstream"),
    ]
    print("Stream: %d players in %.0f s (%.1f per second), %d parties of 2 to 5 holding %d players "
          "(%.0f %%), 3 modes, roles as below; 5v5, max_wait 120 s, bots at the timeout.\n"
          % (players, SECONDS, players / SECONDS, parties, in_parties, 100.0 * in_parties / players))
    print("| variant | algorithm | games | cost/game | cost/player | mean wait s | p95 wait s | "
          "bot games | mixed-mode games | split parties | simulate s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, params, query in variants:
        for a in algorithms:
            name = "b_%s_%d" % (a, variants.index((label, params, query)))
            p = dict(params)
            if a == "periodic":
                p["batch"] = 100
            if a == "multi_queue":
                p["ranges"] = 4
            cur.execute("SELECT matchmaker.create_queue(%s, team_size => 5, teams => 2, algorithm => %s, "
                        "max_wait => '120 s', params => %s)", (name, a, json.dumps(p)))
            started = time.time()
            cur.execute("CREATE TEMP TABLE out AS SELECT * FROM matchmaker.simulate(%s, %s)", (name, query))
            took = time.time() - started
            cur.execute("SELECT games, cost, bots FROM matchmaker.simulate_summary(%s, %s)", (name, query))
            games, cost, bots = cur.fetchone()
            cur.execute("""
                SELECT avg(o.matched_at - s.arrival), percentile_cont(0.95) WITHIN GROUP (ORDER BY o.matched_at - s.arrival)
                FROM out o JOIN pstream s USING (id)""")
            mean_wait, p95 = cur.fetchone()
            cur.execute("""
                SELECT count(*) FILTER (WHERE bots > 0), count(*) FILTER (WHERE modes > 1)
                FROM (SELECT o.match_no, count(DISTINCT s.attrs->>'mode') AS modes, 10 - count(*) AS bots
                      FROM out o JOIN pstream s USING (id) WHERE o.match_no IS NOT NULL GROUP BY o.match_no) g""")
            bot_games, mixed = cur.fetchone()
            cur.execute("""
                SELECT count(*) FROM (SELECT s.attrs->>'party' FROM out o JOIN pstream s USING (id)
                                      WHERE s.attrs ? 'party' AND %s GROUP BY 1
                                      HAVING count(DISTINCT (o.match_no, o.team)) > 1) x""",
                        ("party" in query or "attrs FROM" in query,))
            split = cur.fetchone()[0] if "- 'party'" not in query else 0
            cur.execute("DROP TABLE out")
            print("| %s | %s | %d | %.3f | %.4f | %.1f | %.1f | %.1f %% | %.1f %% | %d | %.2f |"
                  % (label, a, games, cost / games, cost / players, mean_wait, p95,
                     100.0 * bot_games / games, 100.0 * mixed / games, split, took))
    conn.close()


if __name__ == "__main__":
    main()
