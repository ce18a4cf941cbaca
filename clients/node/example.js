#!/usr/bin/env node
'use strict';
/*
 * A game backend's loop with the client: enqueue a player, wait for the
 * match (accepting its ready check when the queue has one), print it.
 * Usage: node example.js QUEUE PLAYER RATING   (connects with the PG* variables)
 */
const { Client, MatchmakerError, TimeoutError } = require('./index.js');

async function main() {
  const [queue, player, rating] = process.argv.slice(2);
  const mm = new Client();
  let ticket = null;
  try {
    ticket = await mm.enqueue(queue, player, Number(rating));
    console.log(`ticket ${ticket} for ${player} in ${queue}`);
    let status = await mm.waitForMatch(ticket, { timeout: 120000 });
    if (status.state === 'proposed') {
      console.log(`match ${status.matchId} proposed: accepting`);
      await mm.accept(ticket);
      status = await mm.waitForMatch(ticket, { timeout: 120000 });
    }
    console.log(`${status.state}: match ${status.matchId}, team ${status.team}, after ${status.waitedSeconds} s`);
    return 0;
  } catch (err) {
    if (err instanceof MatchmakerError) {
      console.log(`refused (SQLSTATE ${err.sqlstate}): ${err.message}${err.hint ? `; ${err.hint}` : ''}`);
      return 1;
    }
    if (err instanceof TimeoutError) {
      console.log(`gave up: ${err.message}`);
      if (ticket !== null) await mm.cancel(ticket);
      return 2;
    }
    throw err;
  } finally {
    await mm.close();
  }
}

main().then((code) => process.exit(code));
