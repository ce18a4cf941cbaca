# Bounded work and memory: statement_timeout stops the core's long
# computations (the offline optimum's matching, a simulation, an optimize
# round) within a second, the core's memory limit refuses 16,000
# simultaneous arrivals at once with a clear error, and an optimize round
# keeps to budget_ms from its first climb on.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('bounds');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION matchmaker;
	SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 minute');
	SELECT matchmaker.create_queue('opt5', team_size => 5, algorithm => 'optimize',
	                               max_wait => '1 minute',
	                               params => '{"round": 60, "restarts": 1000, "budget_ms": 600000, "round_max": 3000}');
});

# Run sql with a statement_timeout of 200 ms: its SQLSTATE and how long it took.
sub timed_out
{
	my ($sql, %opt) = @_;
	my $set = $opt{set} // '';
	my $t0 = time;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '200ms'; $set\n\\set VERBOSITY sqlstate\n$sql");
	return ($err, time - $t0);
}

# The offline optimum of 20,000 players (12 million admissible pairs) takes
# seconds; cancelled in its pair counting or its blossom matching.
my ($err, $took) = timed_out(q{
	SELECT matchmaker.optimal_cost('duel',
	  $$SELECT g, (g * 7919 % 20000) / 20000.0, g / 10.0 FROM generate_series(1, 20000) g$$)});
like($err, qr/57014/, 'optimal_cost: statement_timeout cancels the matching');
cmp_ok($took, '<', 2, "optimal_cost: cancelled within 2 s (took ${took}s)");

# A simulation of an optimize queue whose rounds each search for minutes.
($err, $took) = timed_out(q{
	SELECT count(*) FROM matchmaker.simulate('opt5',
	  $$SELECT g, (g * 7919 % 5000) / 5000.0, 0 FROM generate_series(1, 5000) g$$)});
like($err, qr/57014/, 'simulate: statement_timeout cancels an optimize round');
cmp_ok($took, '<', 2, "simulate: cancelled within 2 s (took ${took}s)");

# A tick of an optimize queue with 3,000 waiting tickets (5v5): the first
# climb alone took a minute and could not be cancelled.
$node->safe_psql('postgres', q{
	SELECT count(matchmaker.enqueue('opt5', 'p' || g, (g * 7919 % 3000) / 3000.0))
	FROM generate_series(1, 3000) g});
($err, $took) = timed_out(q{SELECT matchmaker.tick('opt5', now() + interval '2 minutes')});
like($err, qr/57014/, 'tick: statement_timeout cancels an optimize round');
cmp_ok($took, '<', 2, "tick: cancelled within 2 s (took ${took}s)");
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM matchmaker.tickets WHERE queue = 'opt5' AND state = 'waiting'}),
	'3000', 'tick: the cancelled round changed nothing');

# With its default budget the same round ends within the budget: the first
# climb stops when 200 ms are spent.
$node->safe_psql('postgres',
	q{SELECT matchmaker.alter_queue('opt5', params => '{"round": 60, "restarts": 4, "budget_ms": 200, "round_max": 3000}')});
my $t0 = time;
my $matches = $node->safe_psql('postgres',
	q{SELECT matchmaker.tick('opt5', now() + interval '2 minutes')});
$took = time - $t0;
is($matches, '300', 'tick: a round of 3,000 tickets makes 300 matches');
cmp_ok($took, '<', 5, "tick: a 200 ms budget bounds the round (took ${took}s)");

# round_max: the 2,000 oldest of 3,000 tickets take part, the rest wait.
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('opt1', algorithm => 'optimize', max_wait => '1 hour',
	                               params => '{"round": 60, "round_max": 2000}');
	SELECT count(matchmaker.enqueue('opt1', 'q' || g, (g * 7919 % 3000) / 3000.0))
	FROM generate_series(1, 3000) g});
is($node->safe_psql('postgres',
	q{SELECT matchmaker.tick('opt1', now() + interval '2 minutes')}),
	'1000', 'round_max: a round of the 2,000 oldest tickets');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM matchmaker.tickets
	WHERE queue = 'opt1' AND state = 'waiting'
	  AND id < (SELECT max(id) FROM matchmaker.tickets WHERE queue = 'opt1' AND state <> 'waiting')}),
	'0', 'round_max: the tickets left waiting are the youngest');

# Many regions: 2,100 tickets naming 64 regions of their own each (134,400
# regions; a table of tickets x regions was 1.1 GB and failed every tick).
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('regions', algorithm => 'optimize', max_wait => '1 hour',
	                               params => '{"round": 60, "round_max": 3000}');
	SELECT count(matchmaker.enqueue('regions', 'r' || g, (g * 7919 % 2100) / 2100.0,
	         jsonb_build_object('ping',
	           (SELECT jsonb_object_agg('region-' || g || '-' || x, 20 + x) FROM generate_series(1, 64) x))))
	FROM generate_series(1, 2100) g});
$t0 = time;
is($node->safe_psql('postgres', q{SELECT matchmaker.tick('regions', now() + interval '2 minutes')}),
	'1050', 'regions: a round over 134,400 distinct regions matches everyone');
$took = time - $t0;
cmp_ok($took, '<', 10, "regions: within seconds (took ${took}s)");

# The core's memory limit: 16,000 simultaneous arrivals (128 million pairs,
# some 4 GB) are refused at once, naming the setting.
$t0 = time;
my ($ret, $out);
($ret, $out, $err) = $node->psql('postgres', q{
	SELECT matchmaker.optimal_cost('duel',
	  $$SELECT g, (g * 7919 % 16000) / 16000.0, 0 FROM generate_series(1, 16000) g$$)});
$took = time - $t0;
like($err, qr/out of memory while computing the optimum of queue "duel": it needs more than matchmaker.core_memory_limit \(1048576 kB\)/,
	'memory limit: 16,000 simultaneous arrivals are refused');
like($err, qr/HINT:  Raise matchmaker.core_memory_limit/, 'memory limit: the hint names the setting');
cmp_ok($took, '<', 10, "memory limit: refused quickly (took ${took}s)");
($ret, $out, $err) = $node->psql('postgres', q{
	SET matchmaker.core_memory_limit = '1MB';
	SELECT matchmaker.optimal_cost('duel',
	  $$SELECT g, (g * 7919 % 2000) / 2000.0, g / 10.0 FROM generate_series(1, 2000) g$$)});
like($err, qr/core_memory_limit \(1024 kB\)/, 'memory limit: SET lowers it for the session');

$node->stop;
done_testing();
