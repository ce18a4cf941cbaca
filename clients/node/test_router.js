'use strict';
/*
 * Tests of the Node.js client through a matchmaker_router (PG* variables
 * name the router; the role may create queues there).  Run by
 * test/t/016_router.pl against three nodes: the listener must reach the
 * node that holds each ticket, since the router itself sends no events.
 */
const pg = require('pg');
const { Client } = require('./index.js');

let failures = 0;
function check(cond, what) {
  console.log(`${cond ? 'ok    ' : 'FAILED'} ${what}`);
  if (!cond) failures += 1;
}

async function main() {
  const admin = new pg.Client();
  await admin.connect();
  // one queue on each node that a queue name js_r0 .. js_r31 lands on
  const queues = (await admin.query(
    "SELECT DISTINCT ON (matchmaker.queue_node(q)) q FROM (SELECT 'js_r' || i AS q "
    + 'FROM generate_series(0, 31) i) s ORDER BY matchmaker.queue_node(q), q')).rows.map((r) => r.q);
  for (const q of queues) {
    await admin.query("SELECT matchmaker.create_queue($1, algorithm => 'greedy', max_wait => '1 hour')", [q]);
  }
  await admin.end();
  check(queues.length >= 2, `queues on ${queues.length} nodes`);

  // the listener keeps the caller's credentials and settings, and takes only
  // the node's place from ticket_node (not the user in its connect string)
  const fake = new Client({ connectionString: 'postgres://backend:s3cret@router.example:6432/game?application_name=shop' });
  fake.router = true;
  fake.query = async () => [{ node: "dbname=game2 host=10.0.0.2 port=5433 user=postgres application_name='x y'" }];
  const lc = await fake.listenConfigFor(8796093022209);
  check(lc.user === 'backend' && lc.password === 's3cret' && lc.application_name === 'shop',
    `the listener keeps the caller's user, password and settings (${lc.user}, ${lc.application_name})`);
  check(lc.host === '10.0.0.2' && lc.port === 5433 && lc.database === 'game2',
    "the listener connects to the ticket's node");

  const mm = new Client();
  const other = new Client();
  for (const q of queues) {
    const a = await mm.enqueue(q, 'ann', 0.5);
    const waiting = mm.waitForMatch(a, { timeout: 15000 });
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the waiter listens; the partner arrives after
    const b = await other.enqueue(q, 'bob', 0.5);
    let status = null;
    try {
      status = await waiting;
    } catch (err) {
      console.log(`# ${err.message}`);
    }
    check(status !== null && status.state === 'matched',
      `queue ${q}: waitForMatch through the router hears the match on the ticket's node`);
    check(status !== null && (await other.status(b)).matchId === status.matchId,
      `queue ${q}: both players in that match`);
  }
  await mm.close();
  await other.close();
  console.log(`${failures} failed`);
}

main().catch((err) => { console.error(err); process.exit(1); });
