'use strict';
/*
 * Tests of the Node.js client against a running cluster with the
 * matchmaker worker (PG* variables; the role must be allowed to create
 * queues and terminate backends, e.g. the superuser).  Run by
 * test/t/015_node_client.pl after npm install.
 */
const pg = require('pg');
const { Client, MatchmakerError, TimeoutError } = require('./index.js');

let failures = 0;
function check(cond, what) {
  console.log(`${cond ? 'ok    ' : 'FAILED'} ${what}`);
  if (!cond) failures += 1;
}

async function admin(sql) {
  const c = new pg.Client();
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

async function main() {
  await admin("SELECT matchmaker.create_queue('js_duel', algorithm => 'greedy', max_wait => '1 hour')");
  await admin("SELECT matchmaker.create_queue('js_ready', algorithm => 'greedy', max_wait => '1 hour', "
    + "params => '{\"accept_timeout\": 30}')");
  const mm = new Client();

  // enqueue, a retry, waitForMatch, typed results
  const a = await mm.enqueue('js_duel', 'ann', 0.5, { region: 'eu' });
  check(Number.isInteger(a), 'enqueue returns a ticket id');
  check(await mm.enqueue('js_duel', 'ann', 0.5, { region: 'eu' }) === a, 'a retried enqueue returns the same ticket');
  const b = await mm.enqueue('js_duel', 'bob', 0.5);
  const sa = await mm.waitForMatch(a, { timeout: 10000 });
  const sb = await mm.waitForMatch(b, { timeout: 10000 });
  check(sa.state === 'matched' && sa.final, 'waitForMatch: matched');
  check(sa.matchId !== null && sa.matchId === sb.matchId && sa.team !== sb.team, 'both in one match, on two teams');
  check(typeof sa.waitedSeconds === 'number' && sa.enqueuedAt instanceof Date && sa.player === 'ann', 'typed fields');

  // a party: all its tickets, one team; a retry returns the same tickets
  await admin("SELECT matchmaker.create_queue('js_squad', team_size => 2, algorithm => 'greedy', max_wait => '1 hour')");
  const party = await mm.enqueueParty('js_squad', ['pa', 'pb'], [0.4, 0.6]);
  check(party.length === 2 && party.every(Number.isInteger), 'enqueueParty resolves to the tickets');
  const again = await mm.enqueueParty('js_squad', ['pa', 'pb'], [0.4, 0.6]);
  check(again[0] === party[0] && again[1] === party[1], 'a retried enqueueParty resolves to them again');
  await mm.enqueue('js_squad', 'pc', 0.5);
  await mm.enqueue('js_squad', 'pd', 0.5);
  const p1 = await mm.waitForMatch(party[0], { timeout: 10000 });
  const p2 = await mm.waitForMatch(party[1], { timeout: 10000 });
  check(p1.state === 'matched' && p1.matchId === p2.matchId && p1.team === p2.team, 'the party plays in one team');
  try {
    await mm.enqueueParty('js_squad', ['x', 'y', 'z'], [0.5, 0.5, 0.5]);
    check(false, 'a party larger than a team refused');
  } catch (err) {
    check(err instanceof MatchmakerError && err.sqlstate === '22023', `a party larger than a team refused (${err.message})`);
  }

  // errors carry their SQLSTATE
  for (const [call, state, what] of [
    [() => mm.enqueue('no_such_queue', 'x', 0.5), '42704', 'unknown queue'],
    [() => mm.enqueue('js_duel', 'x', 'NaN'), '22023', 'NaN rating'],
    [() => mm.status(1e12), '42704', 'unknown ticket']]) {
    try {
      await call();
      check(false, `${what} refused`);
    } catch (err) {
      check(err instanceof MatchmakerError && err.sqlstate === state,
        `${what} refused with SQLSTATE ${err.sqlstate} (${err.message})`);
    }
  }

  // a timeout; cancel
  const c = await mm.enqueue('js_duel', 'cid', 0.99);
  try {
    await mm.waitForMatch(c, { timeout: 1000 });
    check(false, 'a lonely ticket times out');
  } catch (err) {
    check(err instanceof TimeoutError, 'a lonely ticket times out');
  }
  check(await mm.cancel(c) === true && await mm.cancel(c) === false, 'cancel, then cancel again');
  check((await mm.status(c)).state === 'cancelled', 'the ticket is cancelled');

  // the listener is killed while waiting and the partner arrives meanwhile
  // (its NOTIFY is lost): the wait reconnects and catches up
  const d = await mm.enqueue('js_duel', 'dan', 0.2);
  const waiting = new Client().waitForMatch(d, { timeout: 20000, reconnectDelay: 1000 })
    .then((s) => ({ s }), (e) => ({ e }));
  await new Promise((r) => setTimeout(r, 1000));
  const killed = await admin("SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity "
    + "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()");
  await mm.enqueue('js_duel', 'eve', 0.2);
  const res = await waiting;
  check(Number(killed[0].n) >= 1, "the listener's connection was terminated");
  check(res.s && res.s.state === 'matched', `after a lost connection the wait catches up: ${res.s ? res.s.state : res.e}`);

  // a ready check
  const f = await mm.enqueue('js_ready', 'fay', 0.5);
  const g = await mm.enqueue('js_ready', 'gus', 0.5);
  const sf = await mm.waitForMatch(f, { timeout: 10000 });
  check(sf.state === 'proposed' && !sf.final, 'a ready check: proposed');
  check(await mm.accept(f) === 'proposed' && await mm.accept(g) === 'matched', 'accepted by both');
  check((await mm.waitForMatch(f, { timeout: 5000 })).state === 'matched', 'then matched');

  // a queue dropped under a waiting ticket: its "dropped" event ends the
  // wait at once with the ticket's "does not exist" error
  await admin("SELECT matchmaker.create_queue('js_gone', algorithm => 'greedy', max_wait => '1 hour')");
  const h = await mm.enqueue('js_gone', 'hal', 0.5);
  setTimeout(() => admin("SELECT matchmaker.drop_queue('js_gone', force => true)"), 1000);
  const started = Date.now();
  try {
    await mm.waitForMatch(h, { timeout: 20000 });
    check(false, 'a dropped queue ends the wait');
  } catch (e) {
    const s = (Date.now() - started) / 1000;
    check(e instanceof MatchmakerError && e.sqlstate === '42704' && s < 10, `a dropped queue ends the wait: ${e.sqlstate} after ${s} s`);
  }
  await mm.close();

  check(Number((await admin('SELECT count(*) AS n FROM matchmaker.check()'))[0].n) === 0, 'matchmaker.check() finds nothing');
  console.log(`${failures} failed`);
  process.exit(failures ? 1 : 0);
}

main().catch((err) => { console.log(`FAILED with ${err.stack}`); process.exit(1); });
