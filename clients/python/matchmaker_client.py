"""A client for matchmaker, on psycopg2 (Debian's python3-psycopg2).

    from matchmaker_client import Client

    mm = Client("host=/var/run/postgresql dbname=game user=backend")
    ticket = mm.enqueue("duel", "ann", 0.62)
    status = mm.wait_for_match(ticket, timeout=60)   # a TicketStatus
    if status.state == "proposed":
        mm.accept(ticket)

Calls go through one connection in autocommit mode (each call its own
transaction, so it works through a transaction-mode pooler).  wait_for_match
listens on a second connection, a session of its own (LISTEN needs one: give
listen_dsn to reach PostgreSQL directly when dsn goes through a pooler).  A
NOTIFY is only a hint: every event that names the ticket is confirmed with
ticket_status, and so is the state after a reconnect, since notifications
sent while the listener was disconnected are lost.

dsn may reach a matchmaker_router (queues sharded over several nodes):
events are sent on the node that holds the ticket, so the listener then
connects to that node (the connect string matchmaker.ticket_node returns,
with listen_dsn's user, password and other settings but its place).

Errors from the server are raised as MatchmakerError, carrying the SQLSTATE
(e.g. "22023" for a bad argument, "42704" for an unknown queue or ticket).
"""
import json
import select
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Optional

import psycopg2
import psycopg2.extensions

# States after which a ticket changes no more.
FINAL_STATES = ("matched", "cancelled", "expired", "declined", "invalid")


class MatchmakerError(Exception):
    """An error the server raised: its SQLSTATE, message and hint."""

    def __init__(self, sqlstate: Optional[str], message: str, hint: Optional[str] = None):
        super().__init__(message if sqlstate is None else "%s (SQLSTATE %s)" % (message, sqlstate))
        self.sqlstate = sqlstate
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class TicketStatus:
    """One row of matchmaker.ticket_status."""
    ticket: int
    queue: str
    player: str
    state: str
    enqueued_at: datetime
    waited: timedelta
    match_id: Optional[int]
    team: Optional[int]
    expected_wait: Optional[timedelta]
    next_round: Optional[datetime]

    @property
    def final(self) -> bool:
        """Whether the ticket's state can change no more."""
        return self.state in FINAL_STATES


def _raise(err: psycopg2.Error):
    diag = err.diag
    raise MatchmakerError(err.pgcode, (diag.message_primary or str(err)).strip(),
                          diag.message_hint) from err


class Client:
    """Calls matchmaker's client functions; see the module's documentation."""

    def __init__(self, dsn: str, listen_dsn: Optional[str] = None, channel: str = "matchmaker"):
        self.dsn = dsn
        self.listen_dsn = listen_dsn or dsn
        self.channel = channel
        self._conn = None
        self._router = None      # whether dsn reaches a matchmaker_router (asked once)
        self._listeners = {}     # listening connections, by the dsn they reached

    # -- the calling connection ------------------------------------------
    def _cursor(self):
        if self._conn is None or self._conn.closed:
            self._conn = psycopg2.connect(self.dsn)
            self._conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
        return self._conn.cursor()

    def _one(self, sql: str, args: tuple):
        try:
            with self._cursor() as cur:
                cur.execute(sql, args)
                return cur.fetchone()
        except psycopg2.OperationalError:
            # the connection broke: the next call opens a new one
            self.close_calls()
            raise
        except psycopg2.Error as err:
            _raise(err)

    def close_calls(self):
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def close(self):
        """Close both connections."""
        self.close_calls()
        self._close_listeners()

    # -- the client functions --------------------------------------------
    def enqueue(self, queue: str, player: str, rating: float, attributes: Optional[dict] = None) -> int:
        """A player's ticket in queue; a retry returns the same waiting ticket."""
        row = self._one("SELECT matchmaker.enqueue(%s, %s, %s, %s::jsonb)",
                        (queue, player, rating, json.dumps(attributes or {})))
        return int(row[0])

    def enqueue_party(self, queue: str, players: list, ratings: list,
                      attributes: Optional[dict] = None) -> list:
        """A party's tickets in queue, all or nothing, in the order of players;
        a retry while the party waits returns the same tickets."""
        row = self._one("SELECT matchmaker.enqueue_party(%s, %s::text[], %s::float8[], %s::jsonb)",
                        (queue, list(players), [float(r) for r in ratings], json.dumps(attributes or {})))
        return [int(t) for t in row[0]]

    def cancel(self, ticket: int) -> bool:
        """End a waiting or proposed ticket; False when it had already ended."""
        return bool(self._one("SELECT matchmaker.cancel(%s)", (ticket,))[0])

    def accept(self, ticket: int, accepted: bool = True) -> str:
        """Answer a proposed ticket's ready check; returns its state after the answer."""
        return self._one("SELECT matchmaker.accept(%s, %s)", (ticket, accepted))[0]

    def status(self, ticket: int) -> TicketStatus:
        """The ticket's row of ticket_status."""
        row = self._one("SELECT queue, player, state, enqueued_at, waited, match_id, team, "
                        "expected_wait, next_round FROM matchmaker.ticket_status(%s)", (ticket,))
        return TicketStatus(ticket, *row)

    # -- waiting for a match ---------------------------------------------
    def _close_listeners(self):
        listeners, self._listeners = self._listeners, {}
        for conn in listeners.values():
            try:
                conn.close()
            except psycopg2.Error:
                pass

    def _listen_dsn_for(self, ticket: int) -> str:
        """Where events of the ticket are sent: listen_dsn, or through a router the
        ticket's node, reached with listen_dsn's settings but the node's place."""
        if self._router is None:
            self._router = bool(self._one(
                "SELECT pg_catalog.to_regprocedure('matchmaker.ticket_node(bigint)') IS NOT NULL", ())[0])
        if not self._router:
            return self.listen_dsn
        node = self._one("SELECT matchmaker.ticket_node(%s)", (ticket,))[0]
        if node is None:
            raise MatchmakerError("22023", "ticket %d names no node of the router's cluster" % ticket)
        # where the node is, and which of its servers (a multi-host string after failover)
        places = ("host", "hostaddr", "port", "dbname", "service", "target_session_attrs")
        settings = {k: v for k, v in psycopg2.extensions.parse_dsn(self.listen_dsn).items()
                    if k not in places}
        # only the node's place: its user (if any) is the router's, not ours
        settings.update({k: v for k, v in psycopg2.extensions.parse_dsn(node).items()
                         if k in places})
        return psycopg2.extensions.make_dsn(**settings)

    def _listen(self, ticket: int):
        dsn = self._listen_dsn_for(ticket)
        # what the other nodes' listeners heard meanwhile is of no use: read and drop
        # it, so that their servers never wait on a full socket
        for other, conn in list(self._listeners.items()):
            if other != dsn:
                try:
                    conn.poll()
                    conn.notifies.clear()
                except psycopg2.Error:
                    conn.close()
                    del self._listeners[other]
        conn = self._listeners.get(dsn)
        if conn is None or conn.closed:
            conn = psycopg2.connect(dsn)
            conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
            with conn.cursor() as cur:
                cur.execute("LISTEN %s" % psycopg2.extensions.quote_ident(self.channel, cur))
            self._listeners[dsn] = conn
        return conn

    @staticmethod
    def _names(payload: str, ticket: int) -> bool:
        try:
            event = json.loads(payload)
        except ValueError:
            return False
        if event.get("ticket") == ticket or event.get("truncated"):
            return True
        return any(ticket in (event.get(key) or []) for key in ("tickets", "declined", "requeued"))

    def wait_for_match(self, ticket: int, timeout: float, until=("proposed",) + FINAL_STATES,
                       reconnect_delay: float = 0.5) -> TicketStatus:
        """Wait until the ticket is proposed, matched or has ended (or a state in until);
        returns its status.  Raises TimeoutError after timeout seconds.  Survives a lost
        listening connection: it reconnects and catches up with ticket_status."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                conn = self._listen(ticket)
                # catch up first: an event may have been sent before LISTEN
                status = self.status(ticket)
                if status.state in until:
                    return status
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError("ticket %d still %s after %g s" % (ticket, status.state, timeout))
                    if select.select([conn], [], [], min(left, 1.0)) == ([], [], []):
                        continue
                    conn.poll()
                    heard = False
                    while conn.notifies:
                        heard |= self._names(conn.notifies.pop(0).payload, ticket)
                    if heard:
                        status = self.status(ticket)   # the event is a hint: confirm it
                        if status.state in until:
                            return status
            except psycopg2.OperationalError:
                # the listener (or the calling connection) was lost: reconnect and catch up
                self._close_listeners()
                self.close_calls()
                if time.monotonic() + reconnect_delay >= deadline:
                    raise TimeoutError("ticket %d: connection lost and not back within %g s"
                                       % (ticket, timeout))
                time.sleep(reconnect_delay)
