'use strict';
/*
 * A client for matchmaker, on npm's pg.
 *
 *   const { Client } = require('./index.js');
 *   const mm = new Client({ connectionString: 'postgres://backend@db/game' });
 *   const ticket = await mm.enqueue('duel', 'ann', 0.62);
 *   let status = await mm.waitForMatch(ticket, { timeout: 60000 });
 *   if (status.state === 'proposed') { await mm.accept(ticket); }
 *
 * Calls run on one connection, each its own transaction (so they work
 * through a transaction-mode pooler).  waitForMatch listens on a second
 * connection, a session of its own (LISTEN needs one: give listen, the
 * direct address, when the calls go through a pooler); a NOTIFY is only a
 * hint: each event naming the ticket is confirmed with ticket_status, and
 * so is the state after a reconnect, since notifications sent while the
 * listener was away are lost.  Server errors are MatchmakerError with the
 * SQLSTATE in .sqlstate.
 *
 * The calls may go to a matchmaker_router (queues sharded over nodes):
 * events are sent on the node that holds the ticket, so the listener then
 * connects to that node (matchmaker.ticket_node's connect string, with the
 * listen settings' user, password and the rest, but the node's place).
 */
const pg = require('pg');
// pg's own parser of connection strings (a dependency of pg)
const parseConnectionString = require('pg-connection-string').parse;

const FINAL_STATES = ['matched', 'cancelled', 'expired', 'declined', 'invalid'];

class MatchmakerError extends Error {
  constructor(err) {
    super(err.code ? `${err.message} (SQLSTATE ${err.code})` : err.message);
    this.name = 'MatchmakerError';
    this.sqlstate = err.code || null;
    this.detail = err.detail || null;
    this.hint = err.hint || null;
  }
}

class TimeoutError extends Error {
  constructor(message) {
    super(message);
    this.name = 'TimeoutError';
  }
}

/* ticket_status's row, typed: waits in seconds, times as Dates, ids as numbers. */
function toStatus(ticket, row) {
  const seconds = (iv) => (iv == null ? null
    : ((iv.days || 0) * 86400 + (iv.hours || 0) * 3600 + (iv.minutes || 0) * 60
       + (iv.seconds || 0) + (iv.milliseconds || 0) / 1000));
  return Object.freeze({
    ticket,
    queue: row.queue,
    player: row.player,
    state: row.state,
    enqueuedAt: row.enqueued_at,
    waitedSeconds: seconds(row.waited),
    matchId: row.match_id == null ? null : Number(row.match_id),
    team: row.team,
    expectedWaitSeconds: seconds(row.expected_wait),
    nextRound: row.next_round,
    final: FINAL_STATES.includes(row.state),
  });
}

/*
 * Whether an error means the connection is gone (and another may work):
 * a socket error (ECONNRESET, ECONNREFUSED, ...), a connection exception
 * (SQLSTATE class 08) or the server shutting down or terminating us (57P01
 * to 57P03).
 */
function connectionLost(err) {
  const code = err && err.code;
  return !code || /^E[A-Z]+$/.test(code) || code.startsWith('08') || /^57P0[123]$/.test(code);
}

function names(payload, ticket) {
  let event;
  try {
    event = JSON.parse(payload);
  } catch (e) {
    return false;
  }
  if (event.ticket === ticket || event.truncated) return true;
  return ['tickets', 'declined', 'requeued'].some((k) => (event[k] || []).includes(ticket));
}

/* A libpq key=value connect string (what ticket_node returns) as its pairs. */
function parseConninfo(conninfo) {
  const out = {};
  const re = /([A-Za-z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S+))/g;
  let m;
  while ((m = re.exec(conninfo)) !== null) {
    out[m[1]] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  }
  return out;
}

class Client {
  /*
   * config: pg's connection settings for the calls; listen: those of the
   * listening session (default: config); channel: the queue's
   * params.channel, or 'matchmaker' (every queue).
   */
  constructor(config = {}, { listen = null, channel = 'matchmaker' } = {}) {
    this.config = config;
    this.listenConfig = listen || config;
    this.channel = channel;
    this.conn = null;
    this.router = null; // whether the calls reach a matchmaker_router (asked once)
  }

  /* The listening session's settings for a ticket: listen's, or through a router its node's place. */
  async listenConfigFor(ticket) {
    if (this.router === null) {
      const rows = await this.query(
        "SELECT pg_catalog.to_regprocedure('matchmaker.ticket_node(bigint)') IS NOT NULL AS router");
      this.router = rows[0].router;
    }
    if (!this.router) return this.listenConfig;
    const node = (await this.query('SELECT matchmaker.ticket_node($1) AS node', [ticket]))[0].node;
    if (node == null) {
      throw new MatchmakerError({ code: '22023', message: `ticket ${ticket} names no node of the router's cluster` });
    }
    // our settings (a connection string's user, password and ssl included)
    // with only the node's place: its user (if any) is the router's, not ours
    const where = parseConninfo(node);
    const { connectionString, ...rest } = this.listenConfig;
    const config = { ...(connectionString ? parseConnectionString(connectionString) : {}), ...rest };
    for (const k of ['host', 'port', 'database']) delete config[k];
    config.host = where.host || where.hostaddr;
    if (where.port) config.port = Number(where.port);
    if (where.dbname) config.database = where.dbname;
    return config;
  }

  async query(sql, args) {
    if (this.conn === null) {
      const conn = new pg.Client(this.config);
      conn.on('error', () => { if (this.conn === conn) this.conn = null; });
      try {
        await conn.connect();
      } catch (err) {
        throw Object.assign(err, { lost: true });
      }
      this.conn = conn;
    }
    try {
      return (await this.conn.query(sql, args)).rows;
    } catch (err) {
      if (!connectionLost(err)) throw new MatchmakerError(err);
      // a broken connection: the next call opens a new one
      const conn = this.conn;
      this.conn = null;
      if (conn) conn.end().catch(() => {});
      throw Object.assign(err, { lost: true });
    }
  }

  async close() {
    if (this.conn !== null) {
      const conn = this.conn;
      this.conn = null;
      await conn.end();
    }
  }

  /* A player's ticket in queue; a retry returns the same waiting ticket. */
  async enqueue(queue, player, rating, attributes = {}) {
    const rows = await this.query('SELECT matchmaker.enqueue($1, $2, $3, $4::jsonb) AS id',
      [queue, player, rating, JSON.stringify(attributes)]);
    return Number(rows[0].id);
  }

  /*
   * A party's tickets in queue, all or nothing, in the order of players;
   * a retry while the party waits returns the same tickets.
   */
  async enqueueParty(queue, players, ratings, attributes = {}) {
    const rows = await this.query(
      'SELECT matchmaker.enqueue_party($1, $2::text[], $3::float8[], $4::jsonb) AS ids',
      [queue, players, ratings, JSON.stringify(attributes)]);
    return rows[0].ids.map(Number);
  }

  /* End a waiting or proposed ticket; false when it had already ended. */
  async cancel(ticket) {
    return (await this.query('SELECT matchmaker.cancel($1) AS done', [ticket]))[0].done;
  }

  /* Answer a proposed ticket's ready check; its state after the answer. */
  async accept(ticket, accepted = true) {
    return (await this.query('SELECT matchmaker.accept($1, $2) AS state', [ticket, accepted]))[0].state;
  }

  /* The ticket's row of ticket_status. */
  async status(ticket) {
    const rows = await this.query('SELECT * FROM matchmaker.ticket_status($1)', [ticket]);
    return toStatus(ticket, rows[0]);
  }

  /*
   * Resolves with the ticket's status once it is proposed, matched or ended
   * (or in one of options.until); rejects with TimeoutError after
   * options.timeout ms.  A lost listening connection is reopened after
   * options.reconnectDelay ms and the state asked again.
   */
  async waitForMatch(ticket, { timeout = 60000, until = ['proposed', ...FINAL_STATES],
    reconnectDelay = 500 } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      let listenConfig;
      try {
        listenConfig = await this.listenConfigFor(ticket);
      } catch (err) {
        if (err instanceof MatchmakerError || !(err.lost || connectionLost(err))) throw err;
        if (Date.now() + reconnectDelay >= deadline) {
          throw new TimeoutError(`ticket ${ticket}: connection lost and not back within ${timeout} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, reconnectDelay));
        continue;
      }
      const listener = new pg.Client(listenConfig);
      let wake = null;
      let lost = false;
      let heard = false;
      const poke = () => { if (wake) { const w = wake; wake = null; w(); } };
      listener.on('notification', (msg) => { if (names(msg.payload, ticket)) { heard = true; poke(); } });
      listener.on('error', () => { lost = true; poke(); });
      listener.on('end', () => { lost = true; poke(); });
      try {
        await listener.connect();
        await listener.query(`LISTEN ${listener.escapeIdentifier(this.channel)}`);
        // catch up first: the event may have come before LISTEN
        let status = await this.status(ticket);
        while (!until.includes(status.state)) {
          const left = deadline - Date.now();
          if (left <= 0) throw new TimeoutError(`ticket ${ticket} still ${status.state} after ${timeout} ms`);
          if (!heard && !lost) {
            await new Promise((resolve) => { wake = resolve; setTimeout(poke, Math.min(left, 1000)); });
          }
          if (lost) throw Object.assign(new Error('listening connection lost'), { lost: true });
          if (heard) {
            heard = false;
            status = await this.status(ticket); // the event is a hint: confirm it
          }
        }
        return status;
      } catch (err) {
        if (err instanceof TimeoutError || err instanceof MatchmakerError
            || !(err.lost || connectionLost(err))) throw err;
        if (Date.now() + reconnectDelay >= deadline) {
          throw new TimeoutError(`ticket ${ticket}: connection lost and not back within ${timeout} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, reconnectDelay));
      } finally {
        listener.removeAllListeners('end');
        listener.on('error', () => {});
        listener.end().catch(() => {});
      }
    }
  }
}

module.exports = { Client, MatchmakerError, TimeoutError, FINAL_STATES };
