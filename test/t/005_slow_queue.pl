# One slow queue does not delay the others: while a worker is inside a
# tick of queue slow that does not end (matchmaker.test_hold_tick holds it
# before its commit, standing for a round of any length), pairs of players
# enqueue in queue fast and each match's NOTIFY reaches a listener within
# 50 ms of the second enqueue call.  bench/slow_queue_latency.py measures;
# bench/slow_queue.sh records the same figure over more rounds.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('slow_queue');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
});
$node->start;

is($node->safe_psql('postgres', "SHOW matchmaker.workers_per_database"), '2',
	'two workers per database by default');
$node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM pg_stat_activity WHERE backend_type = 'matchmaker worker'")
  or die 'the workers did not start';

my $script = "$FindBin::RealBin/../../bench/slow_queue_latency.py";
my ($out, $err) = ('', '');
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'postgres';
my $ok = IPC::Run::run([ '/usr/bin/python3', $script, '30' ], '>', \$out, '2>', \$err);
ok($ok, 'the measurement ran with a tick of queue slow held throughout') or diag($err);
note($out);
my ($max) = $out =~ /^max_ms=([0-9.]+)$/m;
ok(defined $max && $max < 50,
	'every match of queue fast reached the listener within 50 ms of its second enqueue')
  or diag("max: " . ($max // 'none'));
is($node->safe_psql('postgres',
	"SELECT count(*) FROM matchmaker.tickets WHERE queue = 'fast' AND state = 'matched'"),
	'60', 'all 30 pairs of queue fast were matched');

# Once the held tick is cancelled (the measurement does it), queue slow
# runs again after its failure backoff and matches its two players.
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'slow' AND state = 'matched'"),
	'queue slow matches once its tick is no longer held');
is($node->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'matchmaker.check() finds nothing');

# Two queues woken by one commit, the first one's tick held: the other
# worker serves the second queue at once (an idle worker is woken per
# queue), not at its next timer.  The naptime is raised so that a wait
# for the timer would show.
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('slow2', algorithm => 'greedy', tick => '1 minute', max_wait => '1 hour');
	SELECT matchmaker.create_queue('fast2', algorithm => 'greedy', tick => '1 minute', max_wait => '1 hour');
	SELECT matchmaker.enqueue('slow2', 's1', 0.5);
});
# slow2 runs first, so that it is the queue a worker claims first below
sleep(1);
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('fast2', 'f1', 0.5);
	ALTER SYSTEM SET matchmaker.naptime = '30s';
	ALTER SYSTEM SET matchmaker.test_hold_tick = 'slow2';
	SELECT pg_reload_conf();
});
$node->poll_query_until('postgres', "SELECT current_setting('matchmaker.test_hold_tick') = 'slow2'")
  or die 'the reload';
sleep(1);
my $t0 = time();
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT matchmaker.enqueue('slow2', 's2', 0.5);
	SELECT matchmaker.enqueue('fast2', 'f2', 0.5);
	COMMIT;
});
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'fast2' AND state = 'matched'"),
	'queue fast2 matches while queue slow2, woken by the same commit, holds a worker');
my $took = time() - $t0;
ok($took < 5, "queue fast2 matched within 5 s of the commit (took $took s), not at a timer");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'matchmaker worker' AND query = 'tick queue slow2' AND state = 'active'"),
	'the tick of queue slow2 is the one held meanwhile');
$node->safe_psql('postgres', q{
	ALTER SYSTEM RESET matchmaker.test_hold_tick;
	ALTER SYSTEM RESET matchmaker.naptime;
	SELECT pg_reload_conf();
	SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	WHERE backend_type = 'matchmaker worker' AND query = 'tick queue slow2';
});
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'slow2' AND state = 'matched'"),
	'queue slow2 matches once its tick is no longer held');

$node->stop;
done_testing();
