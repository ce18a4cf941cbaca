-- Node ids of a sharded cluster (matchmaker_router): set_node_id makes the
-- node hand out ticket, match and backfill ids in [id * 2^43 + 1,
-- (id + 1) * 2^43), so that an id names its node; refused out of range and
-- once the node holds ids outside the new range.
SELECT matchmaker.node_id();
SELECT matchmaker.set_node_id(-1);
SELECT matchmaker.set_node_id(1024);
SELECT matchmaker.set_node_id(NULL);
SELECT matchmaker.set_node_id(5);
SELECT matchmaker.node_id();
SELECT matchmaker.create_queue('nodes', algorithm => 'greedy');
SELECT matchmaker.enqueue('nodes', 'ann', 0.5) AS ann \gset
SELECT matchmaker.enqueue('nodes', 'bob', 0.5) AS bob \gset
SELECT :ann = 5 * 2^43 + 1 AS first_id, :bob = :ann + 1 AS second_id, :ann >> 43 AS node;
SELECT matchmaker.tick('nodes');
SELECT id >> 43 AS match_node FROM matchmaker.matches WHERE queue = 'nodes';
-- the same id again keeps the sequences where they are
SELECT matchmaker.set_node_id(5);
SELECT matchmaker.enqueue('nodes', 'cat', 0.5) = :bob + 1 AS continues;
SELECT matchmaker.node_id();
-- a restore keeps the sequences' positions but not their bounds:
-- node_id() reads the position; set_node_id with the same id puts the
-- bounds back and keeps the position
ALTER SEQUENCE matchmaker.tickets_id_seq NO MINVALUE NO MAXVALUE;
SELECT setval('matchmaker.tickets_id_seq', (5 * 2^43 + 40)::bigint, false) > 0 AS restored;
SELECT matchmaker.node_id();
SELECT matchmaker.set_node_id(5);
SELECT min_value = 5 * 2^43 + 1 AS min_back, max_value = 6 * 2^43 - 1 AS max_back
FROM pg_sequences WHERE sequencename = 'tickets_id_seq';
SELECT matchmaker.enqueue('nodes', 'eve', 0.5) = 5 * 2^43 + 40 AS position_kept;
-- waiting(): whether any of the players waits in the queue (for a router
-- moving the queue), for clients too
SELECT matchmaker.waiting('nodes', ARRAY['cat']) AS cat, matchmaker.waiting('nodes', ARRAY['ann', 'zed']) AS ann,
       matchmaker.waiting('nodes', ARRAY['cat', 'zed']) AS cat_or_zed, matchmaker.waiting('nowhere', ARRAY['cat']) AS elsewhere;
-- another id is refused while the node holds ids of node 5
SELECT matchmaker.set_node_id(6);
-- a client or an admin may not set it
CREATE ROLE node_admin IN ROLE matchmaker_admin;
SET ROLE node_admin;
SELECT matchmaker.node_id();
SELECT matchmaker.waiting('nodes', ARRAY['eve']);
SELECT matchmaker.set_node_id(0);
RESET ROLE;
DROP ROLE node_admin;
-- a dropped queue's ids are gone: node 7 may be set; its range holds no id yet
SELECT matchmaker.drop_queue('nodes', force => true);
SELECT matchmaker.set_node_id(7);
SELECT matchmaker.create_queue('nodes', algorithm => 'greedy');
SELECT matchmaker.enqueue('nodes', 'dan', 0.5) = 7 * 2^43 + 1 AS node_7_first;
SELECT matchmaker.drop_queue('nodes', force => true);
-- back to node 0 for the tests after
SELECT matchmaker.set_node_id(0);
SELECT matchmaker.node_id();
