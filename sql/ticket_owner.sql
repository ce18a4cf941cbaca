-- A ticket's owner is the role's oid and name (tickets.enqueued_by and
-- enqueued_by_name): a role owns a ticket while a role of that oid has that
-- name.  A dropped role's tickets pass to no later role, neither one that
-- takes its name nor one that holds its oid; matchmaker_admin still reads
-- them, superusers still act on them, and they match as usual.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS matchmaker CASCADE;
DROP ROLE IF EXISTS regress_mm_owner, regress_mm_owner2, regress_mm_owner_admin, regress_mm_owner_renamed;
CREATE EXTENSION matchmaker;
RESET client_min_messages;
\set VERBOSITY default
CREATE ROLE regress_mm_owner IN ROLE matchmaker_client;
CREATE ROLE regress_mm_owner2 IN ROLE matchmaker_client;
CREATE ROLE regress_mm_owner_admin IN ROLE matchmaker_admin;
SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour');

SET ROLE regress_mm_owner;
SELECT matchmaker.enqueue('duel', 'ann', 0.5) AS ann \gset
SELECT matchmaker.enqueue('duel', 'bob', 0.1) AS bob \gset
SELECT state FROM matchmaker.ticket_status(:ann);
RESET ROLE;
SELECT player, enqueued_by = 'regress_mm_owner'::regrole AS by_oid, enqueued_by_name
FROM matchmaker.tickets ORDER BY id;

-- A stored oid that now belongs to another role (as after DROP ROLE and
-- an oid handed out again, written here by hand): that role does not get
-- the ticket, and neither does the role named in it.
UPDATE matchmaker.tickets SET enqueued_by = 'regress_mm_owner2'::regrole WHERE id = :bob;
SET ROLE regress_mm_owner2;
SELECT matchmaker.cancel(:bob);
SELECT state FROM matchmaker.ticket_status(:bob);
SELECT matchmaker.enqueue('duel', 'bob', 0.1);
SET ROLE regress_mm_owner;
SELECT matchmaker.cancel(:bob);
RESET ROLE;

-- A renamed role gives up its tickets until it has its old name again.
ALTER ROLE regress_mm_owner RENAME TO regress_mm_owner_renamed;
SET ROLE regress_mm_owner_renamed;
SELECT state FROM matchmaker.ticket_status(:ann);
RESET ROLE;
ALTER ROLE regress_mm_owner_renamed RENAME TO regress_mm_owner;
SET ROLE regress_mm_owner;
SELECT state FROM matchmaker.ticket_status(:ann);
RESET ROLE;

-- DROP ROLE, then a new role of the same name: the new role may not
-- cancel, read or take over the old role's waiting ticket.
DROP ROLE regress_mm_owner;
CREATE ROLE regress_mm_owner IN ROLE matchmaker_client;
SELECT player, enqueued_by = 'regress_mm_owner'::regrole AS by_new_role, enqueued_by_name
FROM matchmaker.tickets ORDER BY id;
SET ROLE regress_mm_owner;
SELECT matchmaker.cancel(:ann);
SELECT state FROM matchmaker.ticket_status(:ann);
SELECT matchmaker.enqueue('duel', 'ann', 0.5);
RESET ROLE;

-- matchmaker_admin reads tickets of nobody; they match as usual.
SET ROLE regress_mm_owner_admin;
SELECT player, state FROM matchmaker.ticket_status(:ann);
SELECT player, state FROM matchmaker.ticket_status(:bob);
RESET ROLE;
-- Superusers act on any ticket, one of nobody too.
SELECT matchmaker.cancel(:bob);
SET ROLE regress_mm_owner2;
SELECT matchmaker.enqueue('duel', 'cat', 0.5) AS cat \gset
RESET ROLE;
SELECT matchmaker.tick('duel');
SELECT player, state FROM matchmaker.tickets ORDER BY id;
SELECT count(*) AS problems FROM matchmaker.check();

-- A database still on 0.2.0 (enqueued_by a regrole) works with this
-- library until ALTER EXTENSION UPDATE, which keeps each ticket's owner.
SET client_min_messages = warning;
DROP EXTENSION matchmaker CASCADE;
RESET client_min_messages;
CREATE EXTENSION matchmaker VERSION '0.2.0';
SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour');
SET ROLE regress_mm_owner2;
SELECT matchmaker.enqueue('duel', 'dan', 0.5) AS dan \gset
SELECT matchmaker.enqueue('duel', 'dan', 0.5) = :dan AS same_ticket;
SELECT state FROM matchmaker.ticket_status(:dan);
SET ROLE regress_mm_owner;
SELECT matchmaker.cancel(:dan);
SELECT matchmaker.enqueue('duel', 'eli', 0.9) AS eli \gset
RESET ROLE;
DROP ROLE regress_mm_owner;
ALTER EXTENSION matchmaker UPDATE;
SELECT player, pg_typeof(enqueued_by), enqueued_by = 'regress_mm_owner2'::regrole AS by_oid, enqueued_by_name
FROM matchmaker.tickets ORDER BY id;
SET ROLE regress_mm_owner2;
SELECT matchmaker.cancel(:dan);
SELECT matchmaker.cancel(:eli);
RESET ROLE;

SET client_min_messages = warning;
DROP EXTENSION matchmaker CASCADE;
RESET client_min_messages;
DROP ROLE regress_mm_owner2, regress_mm_owner_admin;
CREATE EXTENSION matchmaker;
