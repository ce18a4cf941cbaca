#!/usr/bin/env python3
"""Random calls of every matchmaker function, valid and invalid mixed.

Each call runs in its own transaction and must either succeed or fail with
a clean error: an SQLSTATE outside class XX (internal error) and the
connection still up.  Every so often, and at the end, matchmaker.check()
must report nothing, every ticket id a committed enqueue returned must still
exist (unless its queue was dropped), and an enqueue of a player whose
ticket waits must have returned that ticket's id.

Usage: test/fuzz.py [--seed N] [--calls N] [--database NAME]
Connects with the PG* environment variables; creates (and at the end drops)
the database.  The seed is printed; pass it back with --seed (or
MM_FUZZ_SEED) to repeat a run.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import psycopg2
import psycopg2.errors

QUEUE_NAMES = ["duel", "squad", "ffa", "pairs", "batch", "elo", "q7"]
ALGORITHMS = ["greedy", "periodic", "multi_queue", "difference_wait", "window", "cluster", "auto"]
PLAYERS = ["p%d" % i for i in range(40)]


class Fuzzer:
    def __init__(self, conn, rng):
        self.conn = conn
        self.rng = rng
        self.cur = conn.cursor()
        self.ids = {}           # ticket id -> queue, for committed enqueues
        self.failures = []
        self.codes = {}         # outcome ("ok" or SQLSTATE) -> count
        self.clock = time.time()
        self.retries_checked = 0

    # ------------------------------------------------------------------
    # Random values.  A call is hostile three times in ten: then each of its
    # arguments is spoiled with some probability (NULL, NaN, infinities,
    # huge and tiny numbers, long and empty strings, hostile JSON, unknown
    # names, values of the wrong type); otherwise all are valid.

    def pick(self, *choices):
        return self.rng.choice(choices)

    def bad(self, p=0.3):
        return self.hostile and self.rng.random() < p

    def rating(self, lo=0.0, hi=1.0):
        if self.bad():
            return self.pick(float("nan"), float("inf"), float("-inf"), 1e308, -1e308,
                             -5e-324, hi + 1e-9, lo - 1.0, None, "strong")
        return self.pick(self.rng.uniform(lo, hi), self.rng.uniform(lo, hi), lo, hi, -0.0 if lo == 0 else lo)

    def queue_name(self):
        if self.bad(0.2):
            return self.pick("", "nosuch", " duel", "duel\n", "x" * 64, "x" * 100000,
                             "é" * 40, "duel\"eu'", None)
        return self.rng.choice(QUEUE_NAMES)

    def player(self):
        if self.bad():
            return self.pick("", "x" * 257, "x" * 100000, "é" * 200, None)
        return self.pick(self.rng.choice(PLAYERS), self.rng.choice(PLAYERS), "x" * 256, "\t")

    def interval(self, usual):
        if self.bad(0.2):
            return self.pick("0", "-1 s", "999 microseconds", "2 days", "400 days",
                             "178000000 years", "soon", None)
        return usual

    def params(self, algorithm, override=False):
        if self.bad(0.3):
            return self.pick("[]", "null", '"{}"', "8", "{not json", None, '{"batch": 1e400}',
                             '{"wait_factor": -1e-400}', '{"ranges": 6.0000000000000000001}',
                             '{"batch": 8, "nope": 1}', '{"batch": [8]}', '{"ranges": {"n": 6}}',
                             '{"window": 1e400}', '{"steepness": 0}', '{"recheck": "1"}',
                             '{"on_timeout": "EXPIRE"}', '{"team_policy": "patient"}',
                             "[" * 300 + "]" * 300, json.dumps({"a" * 100000: 1}),
                             json.dumps({"batch": "8" * 100000}))
        p = {}
        if self.rng.random() < 0.5:
            p["on_timeout"] = self.pick("bots", "expire")
        if algorithm == "periodic" and self.rng.random() < 0.7:
            p["batch"] = self.pick(2, 4, 8, "auto")
        if algorithm == "multi_queue" and self.rng.random() < 0.7:
            p["ranges"] = self.pick(1, 3, 6, "auto")
        if algorithm in ("greedy", "multi_queue", "auto") and self.rng.random() < 0.3:
            lat = {"min": 0, "max": 300}
            if algorithm == "multi_queue" and self.rng.random() < 0.5:
                lat["ranges"] = self.pick(1, 2, 5)
            p["criteria"] = {"lat": lat}
            if self.rng.random() < 0.3:
                p["criteria"]["rating"] = {"weight": self.pick(0, 0.5, 3)}
            if self.bad(0.2):
                p["criteria"] = self.pick({"lat": {"min": 1, "max": 0}}, {"lat": 5},
                                          {"lat": {"min": 0, "max": 1, "ranges": 1e9}}, [1],
                                          {"rating": {"weight": 0}})
        if algorithm == "difference_wait" and self.rng.random() < 0.7:
            p["wait_factor"] = self.pick(0, 2.5, 10, 3600)
        # roles: they must add up to the team size, which is often not 3
        if self.rng.random() < 0.25:
            p["roles"] = self.pick({"tank": 1, "dps": 2}, {"front": 1, "back": 1}, {"solo": 1},
                                   {"tank": 1, "healer": 1, "dps": 3})
            if self.bad(0.2):
                p["roles"] = self.pick({"tank": 0}, {"tank": 1.5}, ["tank"], {"": 1}, {"x" * 100: 1},
                                       {"r%d" % i: 1 for i in range(9)}, {"tank": "1"})
        if self.rng.random() < 0.15:
            p["party_rating"] = self.pick("mean", "max") if not self.bad(0.3) else self.pick("median", 1, None)
        if algorithm == "window" and self.rng.random() < 0.7:
            p["window"] = self.pick(0, 0.05, 0.2)
            p["widen"] = self.pick("auto", 0.01, 0)
        if algorithm == "cluster" and self.rng.random() < 0.7:
            p["midpoint"] = self.pick(0, 5, 30)
            p["threshold"] = self.pick(0.0001, 0.1, 1)
        if override and not p:
            return None
        return json.dumps(p)

    def now(self):
        """A tick's now: mostly a clock that moves forward, sometimes back or far away."""
        r = self.rng.random()
        if self.bad(0.5):
            return self.pick(("'infinity'::timestamptz", None), ("'-infinity'::timestamptz", None),
                             ("NULL::timestamptz", None), ("'noon-ish'::timestamptz", None))
        if r < 0.6:
            self.clock += self.rng.uniform(0, 5)
            return ("to_timestamp(%s)", self.clock)
        if r < 0.8:
            return ("clock_timestamp()", None)
        if r < 0.95:
            return ("to_timestamp(%s)", self.clock - self.rng.uniform(0, 86400))
        return self.pick(("to_timestamp(%s)", self.clock + 1e7), ("'4713-01-01 BC'::timestamptz", None))

    def arrivals(self):
        if self.bad(0.3):
            return self.pick("", ";", "SELECT 1, 0.5", "SELECT 1, 0.5, 0, 0",
                             "DELETE FROM matchmaker.tickets", "SELECT 1/0, 0.5, 0",
                             "SELECT 1, 0.5, 0; SELECT 2, 0.5, 1", "TRUNCATE matchmaker.tickets",
                             "SELECT no_such_column", "SELECT " * 1000, None)
        rows = []
        t = self.rng.uniform(-1e6, 1e6)
        for i in range(self.rng.randint(0, 16)):
            t += self.rng.expovariate(2.0)
            rid = i + 1 if not self.bad(0.05) else 1
            rating = self.rng.random() if not self.bad(0.05) else self.rating()
            when = t if not self.bad(0.05) else self.pick(float("nan"), 1e13, float("-inf"), None)
            rows.append("(%s, %s, %s)" % (rid, sql_value(rating), sql_value(when)))
        if rows and self.rng.random() < 0.3:
            # the attributes column, for queues with criteria
            rows = [r[:-1] + ", '%s'::jsonb)" % self.pick('{"lat": 40}', '{"lat": 299}', '{}', '{"lat": 301}')
                    for r in rows]
        if not rows:
            return "SELECT 1::bigint, 0.5::float8, 0::float8 WHERE false"
        return "VALUES " + ", ".join(rows)

    # ------------------------------------------------------------------
    # Calls.  Each returns (sql, args, check) where check, when given, is
    # called with the result inside the transaction.

    def call_create_queue(self):
        algorithm = self.rng.choice(ALGORITHMS) if not self.bad(0.2) else self.pick("", "fifo", None)
        team_size, teams = self.pick((1, 2), (1, 2), (2, 2), (1, 4), (3, 2))
        if self.bad(0.2):
            team_size, teams = self.pick((0, 2), (1, 1), (600, 2), (None, 2), (2, 2147483647), ("2.5", 2))
        rmin, rmax = self.pick((0, 1), (0, 1), (0, 3000))
        if self.bad(0.2):
            rmin, rmax = self.pick((-1e308, 1e308), (1, 1), (float("nan"), 1), (0, float("inf")),
                                   (None, 1), (0, 5e-324), (2, 1))
        sql = ("SELECT matchmaker.create_queue(%s, team_size => %s::int, teams => %s::int, "
               "algorithm => %s, max_wait => %s::interval, rating_min => %s::float8, "
               "rating_max => %s::float8, tick => %s::interval, params => %s::jsonb)")
        return sql, [self.queue_name(), team_size, teams, algorithm,
                     self.interval(self.pick("5 s", "30 s", "2 minutes")), rmin, rmax,
                     self.interval("1 s"), self.params(algorithm)], None

    def call_alter_queue(self):
        args = {"team_size": ("int", self.pick(1, 2, 0, None)),
                "teams": ("int", self.pick(2, 4, 1, None)),
                "algorithm": ("text", self.pick(*ALGORITHMS)),
                "max_wait": ("interval", self.interval(self.pick("10 s", "1 minute"))),
                "rating_min": ("float8", self.rating(-1, 0)),
                "rating_max": ("float8", self.rating(1, 3000)),
                "tick": ("interval", self.interval("2 s")),
                "params": ("jsonb", self.params(self.pick(*ALGORITHMS)))}
        chosen = self.rng.sample(sorted(args), self.rng.randint(0, 2))
        sql = "SELECT matchmaker.alter_queue(%s" + "".join(
            ", %s => %%s::%s" % (name, args[name][0]) for name in chosen) + ")"
        return sql, [self.queue_name()] + [args[name][1] for name in chosen], None

    def call_drop_queue(self):
        return ("SELECT matchmaker.drop_queue(%s, %s)",
                [self.queue_name(), self.pick(False, True, True, None)], self.after_drop)

    def after_drop(self, result, args):
        self.dropped = args[0]

    def call_enqueue(self):
        queue = self.queue_name()
        player = self.player()
        rating = self.rating()
        attributes = self.pick('{}', '{}', '{"region": "eu"}', json.dumps({"deep": [[[[[1]]]]]}),
                               '{"lat": 40}', '{"lat": 250, "region": "eu"}', '{"lat": 300}',
                               '{"roles": ["tank", "dps"]}', '{"roles": ["dps"]}', '{"roles": ["front", "back"]}',
                               '{"roles": ["solo"], "lat": 40}')
        if self.bad(0.1):
            attributes = self.pick('{"roles": []}', '{"roles": ["tank", "tank"]}', '{"roles": "dps"}',
                                   '{"roles": [["dps"]]}', '{"roles": [null]}')
        if self.bad(0.1):
            attributes = self.pick('{"lat": -1}', '{"lat": "40"}', '{"lat": 1e400}', '{"lat": null}')
        if self.bad(0.2):
            attributes = self.pick('[]', 'null', None, "1e400", "{bad", "[" * 1000 + "]" * 1000)
        return ("SELECT matchmaker.enqueue(%s, %s, %s::float8, %s::jsonb)",
                [queue, player, rating, attributes], self.after_enqueue)

    def call_enqueue_party(self):
        n = self.pick(1, 2, 2, 3)
        players = self.rng.sample(PLAYERS, n)
        ratings = [self.rating() for _ in range(n)]
        roles = self.pick(None, ["dps"], ["tank", "dps"], [["tank"], ["dps"], ["dps"]][:n],
                          [["front"], ["back"], ["front", "back"]][:n])
        attributes = {} if roles is None else {"roles": roles}
        if self.bad(0.3):
            players, ratings, attributes = self.pick(
                (players + players[:1], ratings + [0.5], attributes), ([], [], attributes),
                (players, ratings[:-1], attributes), (players[:1] + [None], [0.5, 0.5], attributes),
                (["p%d" % i for i in range(2000)], [0.5] * 2000, attributes),
                (players, [float("nan")] * n, attributes), (players, ratings, {"party": "x"}),
                (players, ratings, {"roles": [["tank"]] * (n + 1)}), (None, ratings, attributes))
        return ("SELECT matchmaker.enqueue_party(%s, %s::text[], %s::float8[], %s::jsonb)",
                [self.queue_name(), players, ratings, json.dumps(attributes)], self.after_enqueue_party)

    def after_enqueue_party(self, result, args):
        ids = result[0][0]
        if len(ids) != len(args[1]):
            self.fail("enqueue_party returned %d ids for %d players" % (len(ids), len(args[1])), args)
        # a retry returns the same ids while the party waits
        self.cur.execute("SELECT matchmaker.enqueue_party(%s, %s::text[], %s::float8[], %s::jsonb)", args)
        again = self.cur.fetchone()[0]
        self.retries_checked += 1
        if again != ids:
            self.fail("a retried enqueue_party returned %s after %s" % (again, ids), args)
        self.pending_ids = [(t, args[0]) for t in ids]

    def before_enqueue(self, args):
        """The id of the player's waiting ticket in that queue, if any."""
        queue, player = args[0], args[1]
        if queue is None or player is None:
            return None
        self.cur.execute("SELECT id FROM matchmaker.tickets WHERE queue = %s AND player = %s "
                         "AND state = 'waiting'", (queue, player))
        row = self.cur.fetchone()
        return row[0] if row else None

    def after_enqueue(self, result, args):
        ticket = result[0][0]
        if self.waiting_before is not None:
            self.retries_checked += 1
            if ticket != self.waiting_before:
                self.fail("enqueue of a waiting player returned %s, not its ticket %s"
                          % (ticket, self.waiting_before), args)
        # A retry in the same transaction returns the same id.
        if self.rng.random() < 0.3:
            self.cur.execute("SELECT matchmaker.enqueue(%s, %s, %s::float8, %s::jsonb)", args)
            again = self.cur.fetchone()[0]
            self.retries_checked += 1
            if again != ticket:
                self.fail("a retried enqueue returned %s after %s" % (again, ticket), args)
        self.pending_id = (ticket, args[0])

    def call_cancel(self):
        known = list(self.ids)
        if known and not self.bad(0.5):
            ticket = self.rng.choice(known)
        else:
            ticket = self.pick(0, -1, 9223372036854775807, None, "one", max(known or [0]) + 1000)
        return "SELECT matchmaker.cancel(%s::bigint)", [ticket], None

    def call_ticket_status(self):
        sql, args, _ = self.call_cancel()
        return sql.replace("matchmaker.cancel(%s::bigint)", "state FROM matchmaker.ticket_status(%s::bigint)"), args, None

    def call_match_cost(self):
        n = self.pick(2, 2, 2, 4, 1)
        bots = {1: 1, 2: 0, 4: 0}[n]
        ratings = [self.rating() for _ in range(n)]
        waits = [self.rng.uniform(0, 60) for _ in range(n)]
        if self.bad(0.2):
            waits[0] = self.pick(float("nan"), float("inf"), -1.0, -5e-324, 1e308, None)
        if self.bad(0.2):
            n, ratings, waits, bots = self.pick((0, [], [], 0), (2, [[0.5, 0.5]], waits, 0),
                                                (2, ratings, waits[:1], 0), (1, ratings[:1], waits[:1], -1),
                                                (n, ratings, waits, None), (n, ratings, waits, 2147483647))
        return ("SELECT matchmaker.match_cost(%s, %s::float8[], %s::float8[], %s::int)",
                [self.queue_name(), ratings, waits, bots], None)

    def call_tick(self):
        expr, value = self.now()
        args = [self.queue_name()]
        if value is not None:
            args.append(value)
        return "SELECT matchmaker.tick(%%s, %s)" % expr, args, None

    def call_simulate(self):
        function = self.pick("SELECT count(*) FROM matchmaker.simulate(%s, %s, %s::jsonb)",
                             "SELECT games FROM matchmaker.simulate_summary(%s, %s, %s::jsonb)")
        over = self.params(self.pick(*ALGORITHMS), override=True) if self.rng.random() < 0.4 else None
        return function, [self.queue_name(), self.arrivals(), over], None

    def call_optimal_cost(self):
        return "SELECT matchmaker.optimal_cost(%s, %s)", [self.queue_name(), self.arrivals()], None

    def call_audit(self):
        t0 = self.clock - self.rng.uniform(-100, 86400)
        t1 = t0 + (self.rng.uniform(0, 86400) if not self.bad() else -self.rng.uniform(1, 86400))
        return ("SELECT matches FROM matchmaker.audit(%s, to_timestamp(%s), to_timestamp(%s))",
                [self.queue_name(), t0, t1], None)

    def call_waiting(self):
        players = [self.player() for _ in range(self.pick(1, 1, 2, 5))]
        if self.bad(0.3):
            players = self.pick(None, [], [None], ["x" * 100000], [[["a"]]])
        queue = self.queue_name()

        def check(result, args):
            # what enqueue would find: a waiting or proposed ticket of one of the players
            self.cur.execute("SELECT EXISTS (SELECT FROM matchmaker.tickets WHERE queue = %s "
                             "AND player = ANY (%s::text[]) AND state IN ('waiting', 'proposed'))", args)
            if result[0][0] != self.cur.fetchone()[0]:
                self.fail("waiting() disagrees with the tickets", args)
        return "SELECT matchmaker.waiting(%s, %s::text[])", [queue, players], \
            (check if isinstance(players, list) and all(isinstance(x, str) for x in players) else None)

    def call_set_node_id(self):
        # valid ids change the ranges only while no id is held; the rest is refused
        node = self.pick(0, 0, 3, -1, 1024, 2147483647, None)
        return "SELECT matchmaker.set_node_id(%s::int)", [node], None

    # ------------------------------------------------------------------

    def fail(self, what, args):
        self.failures.append("%s (args %s)" % (what, shorten(repr(args))))

    def run_one(self, n):
        kind = self.rng.choices(
            ["create_queue", "alter_queue", "drop_queue", "enqueue", "enqueue_party", "cancel",
             "ticket_status", "match_cost", "tick", "simulate", "optimal_cost", "audit", "waiting",
             "set_node_id"],
            weights=[6, 5, 2, 30, 8, 12, 4, 8, 16, 8, 4, 4, 3, 1])[0]
        self.hostile = self.rng.random() < 0.3
        sql, args, check = getattr(self, "call_" + kind)()
        self.waiting_before = None
        self.pending_id = None
        self.pending_ids = []
        self.dropped = None
        try:
            if kind == "enqueue":
                self.waiting_before = self.before_enqueue(args)
            self.cur.execute(sql, args)
            result = self.cur.fetchall()
            if check:
                check(result, args)
            self.conn.commit()
            outcome = "ok"
        except psycopg2.Error as e:
            if self.conn.closed or e.pgcode is None:
                self.fail("call %d, %s: connection lost or no SQLSTATE: %s" % (n, kind, e), args)
                raise
            outcome = e.pgcode
            if e.pgcode.startswith("XX"):
                self.fail("call %d, %s: internal error %s: %s"
                          % (n, kind, e.pgcode, e.pgerror.strip()), args)
            self.conn.rollback()
            self.pending_id = None
            self.pending_ids = []
            self.dropped = None
        self.codes[(kind, outcome)] = self.codes.get((kind, outcome), 0) + 1
        if self.pending_id is not None:
            self.ids[self.pending_id[0]] = self.pending_id[1]
        for t, q in self.pending_ids:
            self.ids[t] = q
        if self.dropped is not None:
            self.ids = {t: q for t, q in self.ids.items() if q != self.dropped}

    def check_state(self, label):
        self.cur.execute("SELECT problem, queue, id, detail FROM matchmaker.check()")
        problems = self.cur.fetchall()
        for p in problems:
            self.failures.append("%s: check() reports %s" % (label, p))
        self.cur.execute("SELECT id FROM matchmaker.tickets WHERE id = ANY(%s)", (list(self.ids),))
        found = {r[0] for r in self.cur.fetchall()}
        missing = sorted(set(self.ids) - found)
        if missing:
            self.failures.append("%s: committed ticket ids missing: %s" % (label, missing[:10]))
        self.conn.commit()


def sql_value(x):
    """A number (or NULL, or a string) as SQL text for an arrivals query."""
    if x is None:
        return "NULL::float8"
    if isinstance(x, str):
        return "'%s'" % x.replace("'", "''")
    if math.isnan(x) or math.isinf(x):
        return "'%s'::float8" % x
    return repr(x)


def shorten(s, n=300):
    return s if len(s) <= n else s[:n] + "... (%d characters)" % len(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=int(os.environ.get("MM_FUZZ_SEED", "0")) or None)
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--database", default="mm_fuzz")
    opts = ap.parse_args()
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(1, 2 ** 31)
    print("fuzz: seed %d (repeat with --seed %d or MM_FUZZ_SEED=%d), %d calls"
          % (seed, seed, seed, opts.calls), flush=True)
    rng = random.Random(seed)

    admin = psycopg2.connect(dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as c:
        c.execute("DROP DATABASE IF EXISTS %s" % opts.database)
        c.execute("CREATE DATABASE %s" % opts.database)
    conn = psycopg2.connect(dbname=opts.database)
    with conn.cursor() as c:
        c.execute("CREATE EXTENSION matchmaker")
        c.execute("SET client_min_messages = warning")
    conn.commit()

    fz = Fuzzer(conn, rng)
    with conn.cursor() as c:
        seen = set()
        for name, algorithm in zip(QUEUE_NAMES, ALGORITHMS * 2):
            # the second greedy and multi_queue queues match on a criterion too
            params = '{"criteria": {"lat": {"min": 0, "max": 300}}}' \
                if algorithm in seen and algorithm in ("greedy", "multi_queue") else '{}'
            seen.add(algorithm)
            c.execute("SELECT matchmaker.create_queue(%s, algorithm => %s, max_wait => '30 s', "
                      "params => %s::jsonb)", (name, algorithm, params))
    conn.commit()
    started = time.time()
    try:
        for n in range(1, opts.calls + 1):
            fz.run_one(n)
            if n % 250 == 0:
                fz.check_state("after call %d" % n)
            if len(fz.failures) >= 20:
                break
        fz.check_state("at the end")
    except psycopg2.Error:
        pass
    elapsed = time.time() - started

    oks = sum(v for (k, o), v in fz.codes.items() if o == "ok")
    calls = sum(fz.codes.values())
    codes = {}
    for (k, o), v in fz.codes.items():
        if o != "ok":
            codes[o] = codes.get(o, 0) + v
    print("fuzz: %d calls in %.1f s: %d succeeded, %d refused; %d tickets tracked, %d retries checked"
          % (calls, elapsed, oks, calls - oks, len(fz.ids), fz.retries_checked))
    print("fuzz: SQLSTATEs: " + ", ".join("%s %d" % kv for kv in sorted(codes.items())))
    for kind in sorted({k for k, _ in fz.codes}):
        ok = fz.codes.get((kind, "ok"), 0)
        total = sum(v for (k, _), v in fz.codes.items() if k == kind)
        print("fuzz:   %-13s %5d calls, %5d succeeded" % (kind, total, ok))
    if not conn.closed:
        try:
            conn.rollback()
            with conn.cursor() as c:
                c.execute("SELECT count(*) FROM matchmaker.matches m JOIN matchmaker.queues q "
                          "ON q.name = m.queue WHERE q.params ? 'criteria'")
                print("fuzz: %d matches made in queues with criteria" % c.fetchone()[0])
        except psycopg2.Error:
            pass
        conn.close()
    if not fz.failures:
        with admin.cursor() as c:
            c.execute("DROP DATABASE %s" % opts.database)
    admin.close()
    if fz.failures:
        for f in fz.failures:
            print("fuzz: FAILED: " + f)
        print("fuzz: seed %d" % seed)
        sys.exit(1)
    print("fuzz: ok, check() clean throughout (seed %d)" % seed)


if __name__ == "__main__":
    main()
