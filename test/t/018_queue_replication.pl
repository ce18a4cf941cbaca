# Queues copied by logical replication: a session that has enqueued into a
# queue (and keeps its row) sees a change of that queue applied by a
# subscription at its next enqueue, and a queue deleted that way is gone
# for it too.  The apply worker fires row triggers only, with
# session_replication_role = replica: the extension's triggers on
# matchmaker.queues are row triggers enabled ALWAYS.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MatchmakerLoad;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = MatchmakerLoad::worker_node('queue_replication', 'wal_level = logical',
	'max_replication_slots = 4', 'max_wal_senders = 4', 'matchmaker.enabled = off');
$node->restart;

# The publisher is database pub of the same server, the subscriber postgres.
$node->safe_psql('postgres', 'CREATE DATABASE pub');
$node->safe_psql('pub', q{
	CREATE EXTENSION matchmaker;
	SELECT matchmaker.create_queue('lr', algorithm => 'greedy', max_wait => '1 hour', rating_max => 1);
	CREATE PUBLICATION mmpub FOR TABLE matchmaker.queues;
	SELECT pg_create_logical_replication_slot('mmslot', 'pgoutput');
});
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('lr', algorithm => 'greedy', max_wait => '1 hour', rating_max => 1);
});
my $pubconn = $node->connstr('pub');
$pubconn =~ s/'/''/g;
$node->safe_psql('postgres', qq{
	CREATE SUBSCRIPTION mmsub CONNECTION '$pubconn' PUBLICATION mmpub
	WITH (create_slot = false, slot_name = 'mmslot', copy_data = false);
});

# One session: enqueue (its row kept), wait for the replicated alter, enqueue
# a rating only the new range takes; wait for the replicated delete, enqueue
# again.
my $script = q{
SELECT 'a ' || (matchmaker.enqueue('lr', 'a', 0.5) > 0)::text;
DO $$ BEGIN
	FOR i IN 1..600 LOOP
		EXIT WHEN (SELECT rating_max FROM matchmaker.queues WHERE name = 'lr') = 10;
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;
SELECT 'b ' || (matchmaker.enqueue('lr', 'b', 5) > 0)::text;
DO $$ BEGIN
	FOR i IN 1..600 LOOP
		EXIT WHEN NOT EXISTS (SELECT FROM matchmaker.queues WHERE name = 'lr');
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;
SELECT 'c ' || (matchmaker.enqueue('lr', 'c', 0.5) > 0)::text;
};
# (a file: IPC::Run feeds a scalar's input only while the test pumps it)
my $file = PostgreSQL::Test::Utils::tempdir() . '/session.sql';
PostgreSQL::Test::Utils::append_to_file($file, $script);
my ($out, $err) = ('', '');
my $session = IPC::Run::start(
	[ $node->installed_command('psql'), '-XAtq', '-d', $node->connstr('postgres'), '-f', $file ],
	'>', \$out, '2>', \$err);

ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM matchmaker.tickets WHERE player = 'a'"),
	'the session enqueued into the queue');
$node->safe_psql('pub', "SELECT matchmaker.alter_queue('lr', rating_max => 10)");
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM matchmaker.tickets WHERE player = 'b'"),
	'after the replicated alter the same session enqueues a rating of the new range');
$node->safe_psql('pub', "DELETE FROM matchmaker.queues WHERE name = 'lr'");
$session->finish;
like($out, qr/^a true\nb true$/m, 'both enqueues before the delete succeeded') or diag($out, $err);
like($err, qr/queue "lr" does not exist/, 'after the replicated delete the queue is gone for the session');
is($node->safe_psql('postgres', "SELECT count(*) FROM matchmaker.tickets WHERE player = 'c'"), '0',
	'no ticket entered the deleted queue');

$node->safe_psql('postgres', 'DROP SUBSCRIPTION mmsub');
$node->stop;
done_testing();
