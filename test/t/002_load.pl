# Load: pgbench clients enqueue, retry and cancel in eight queues (greedy
# 1v1, periodic, multi_queue, greedy 2v2, difference_wait with k = 3,
# window with rematch avoidance, cluster 2v2, optimize rounds) while
# the background worker matches and times tickets out.  Every committed
# call is logged in the transaction that makes it; afterwards every logged
# ticket is accounted for, in a final and consistent state.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MatchmakerLoad;

my $clients = 16;
my $seconds = 18;

my $node = PostgreSQL::Test::Cluster->new('load');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
matchmaker.naptime = '100ms'
max_connections = 40
});
$node->start;
MatchmakerLoad::setup($node);

my ($pgbench, $out, $err) = MatchmakerLoad::start_pgbench($node, $clients, $seconds);

# While the load runs, what holds at every commit holds at every look.
my ($looks, $bad) = (0, '');
while ($pgbench->pumpable)
{
	$bad .= MatchmakerLoad::violations_now($node);
	$looks++;
	$pgbench->pump_nb;
}
$pgbench->finish;
is($pgbench->result(0), 0, 'pgbench completed') or diag($$err);
unlike($$out . $$err, qr/aborted|failed transactions: [1-9]/,
	'no client aborted and no transaction failed');
my ($tx) = $$out =~ /number of transactions actually processed: (\d+)/;
ok($tx > 0, "pgbench committed transactions ($tx)");
ok($looks > 0, "invariants looked at $looks times during the load");
is($bad, '', 'no violation during the load (match sizes, ticket states, one waiting ticket per player)');

is(MatchmakerLoad::violations_now($node), '', 'no player waits twice in a queue when the load stops');
MatchmakerLoad::wait_drained($node, 'after the load');

# Every queue made matches; timeouts happened (some at least when the load stopped).
is( $node->safe_psql('postgres', q{
		SELECT string_agg(q.name, ',' ORDER BY q.name) FROM matchmaker.queues q
		WHERE NOT EXISTS (SELECT 1 FROM matchmaker.matches m WHERE m.queue = q.name)}),
	'', 'every queue made matches');

# A lone player: in an expiring queue it expires after max_wait, not
# before; in a queue with computer players it plays with three of them.
my ($lone, $lone_squad) = split /\|/, $node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('duel', 'lone', 0.5), matchmaker.enqueue('squad', 'lone', 0.5)});
ok( $node->poll_query_until('postgres',
		"SELECT count(*) = 2 FROM matchmaker.tickets WHERE id IN ($lone, $lone_squad) AND state <> 'waiting'"),
	'the lone tickets end');
is( $node->safe_psql('postgres', qq{
		SELECT t.state || ' ' || (t.ended_at - t.enqueued_at >= interval '1 s')
		FROM matchmaker.tickets t WHERE t.id = $lone}),
	'expired true', 'a lone ticket in an expiring queue expires after max_wait');
is( $node->safe_psql('postgres', qq{
		SELECT t.state || ' ' || m.bots FROM matchmaker.tickets t
		JOIN matchmaker.matches m ON m.id = t.match_id WHERE t.id = $lone_squad}),
	'matched 3', 'a lone ticket in a queue with computer players plays with three of them');
$node->safe_psql('postgres', qq{
	INSERT INTO enqueue_log (ticket, queue, player)
	VALUES ($lone, 'duel', 'lone'), ($lone_squad, 'squad', 'lone')});

MatchmakerLoad::check_log($node, 'after the load');
ok( $node->safe_psql('postgres', q{
		SELECT count(*) FILTER (WHERE retry_of = ticket) > 0
		   AND (SELECT count(*) FROM cancel_log WHERE cancelled) > 0
		FROM enqueue_log}),
	'retries returned the waiting ticket and cancels ended tickets');
ok(!$node->log_contains('matchmaker: queue "[^"]*" failed'), 'no queue failed in the worker');
note("$clients clients for $seconds s, $tx transactions: " . MatchmakerLoad::summary($node));

$node->stop;
done_testing();
