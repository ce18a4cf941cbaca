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

$node->stop;
done_testing();
