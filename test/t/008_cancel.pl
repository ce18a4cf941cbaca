# The core's long computations answer pg_cancel_backend and
# pg_terminate_backend, not only statement_timeout (007_bounds.pl): the
# offline optimum of optimal_cost and of audit (seconds of blossom
# matching over 20,000 players) and an optimize round of 3,000 tickets,
# each signalled from another session once it has run for half a second,
# stop within 2 s (generous: the machine may be loaded; they take
# milliseconds).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION matchmaker;
	SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 minute');
	SELECT matchmaker.create_queue('opt5', team_size => 5, algorithm => 'optimize',
	                               max_wait => '1 minute',
	                               params => '{"round": 60, "restarts": 1000, "budget_ms": 600000, "round_max": 3000}');
	SELECT count(matchmaker.enqueue('opt5', 'p' || g, (g * 7919 % 3000) / 3000.0))
	FROM generate_series(1, 3000) g;
});

# audit's matches: 20,000 players matched in pairs, their arrivals spread
# over 2,000 s by hand, so that the optimum has 12 million admissible pairs.
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('aud', algorithm => 'greedy', max_wait => '1 minute');
	SELECT count(matchmaker.enqueue('aud', 'a' || g, (g * 7919 % 20000) / 20000.0))
	FROM generate_series(1, 20000) g;
	SELECT matchmaker.tick('aud');
	UPDATE matchmaker.tickets SET enqueued_at = enqueued_at - (id % 20000) / 10.0 * interval '1 second'
	WHERE queue = 'aud';
});
is($node->safe_psql('postgres', q{SELECT count(*) FROM matchmaker.matches WHERE queue = 'aud'}),
	'10000', 'audit: 10,000 matches to audit');

my %computation = (
	optimal_cost => q{SELECT matchmaker.optimal_cost('duel',
	  $$SELECT g, (g * 7919 % 20000) / 20000.0, g / 10.0 FROM generate_series(1, 20000) g$$)},
	audit => q{SELECT ratio FROM matchmaker.audit('aud', now() - interval '1 hour', now() + interval '1 hour')},
	tick => q{SELECT matchmaker.tick('opt5', now() + interval '2 minutes')},
);

# Start sql in a session of its own, wait until it has run for 500 ms (so
# that it is inside the core's computation), send it $signal from another
# session, and return its stderr, how long it took to end after the signal,
# and whether its backend is gone.
sub interrupt
{
	my ($name, $signal) = @_;
	my $app = "victim_${name}_$signal";
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $node->installed_command('psql'), '-XAtq', '-d',
		  $node->connstr('postgres') . " application_name=$app",
		  '-c', $computation{$name} ],
		'>', \$out, '2>', \$err);
	$node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE application_name = '$app' AND state = 'active'
		  AND clock_timestamp() - query_start > interval '500 ms'})
	  or die "$name did not start";
	my $pid = $node->safe_psql('postgres',
		qq{SELECT pid FROM pg_stat_activity WHERE application_name = '$app'});
	my $t0 = time;
	$node->safe_psql('postgres', "SELECT $signal($pid)");
	$h->finish;
	my $took = time - $t0;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
	  or die "the backend of $name did not end";
	return ($err, $took);
}

for my $name (qw(optimal_cost audit tick))
{
	my ($err, $took) = interrupt($name, 'pg_cancel_backend');
	like($err, qr/canceling statement due to user request/,
		"$name: pg_cancel_backend cancels it");
	cmp_ok($took, '<', 2, "$name: cancelled within 2 s (took ${took}s)");

	($err, $took) = interrupt($name, 'pg_terminate_backend');
	like($err, qr/terminating connection due to administrator command/,
		"$name: pg_terminate_backend ends it");
	cmp_ok($took, '<', 2, "$name: terminated within 2 s (took ${took}s)");
}

# The interrupted rounds changed nothing, and the server still serves.
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM matchmaker.tickets WHERE queue = 'opt5' AND state = 'waiting'}),
	'3000', 'tick: the interrupted rounds changed nothing');
is($node->safe_psql('postgres', q{SELECT count(*) FROM matchmaker.check()}), '0',
	'check() is clean');

$node->stop;
done_testing();
