# Live equals simulated: an auto queue fed in real time through enqueue and
# matched by the background worker costs within 5 % of simulate on the same
# arrivals (as recorded), and nobody waits past max_wait plus the worker's
# wake-up.  bench/live_vs_sim.py measures; bench/live_vs_sim.sh records the
# figure on a longer stream.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('live_sim');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION matchmaker');
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE backend_type = 'matchmaker worker'")
  or die 'the workers did not start';

my $script = "$FindBin::RealBin/../../bench/live_vs_sim.py";
my ($out, $err) = ('', '');
local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'postgres';
my $ok = IPC::Run::run([ '/usr/bin/python3', $script, '240', '12', '3', '7' ],
	'>', \$out, '2>', \$err);
ok($ok, '240 players fed at 12 per second were all matched') or diag($err);
note($out);
my ($ratio) = $out =~ /^ratio=([0-9.]+)$/m;
ok(defined $ratio && abs($ratio - 1) <= 0.05,
	'the live cost is within 5 % of simulate on the same arrivals')
  or diag("live / simulated: " . ($ratio // 'none'));
my ($maxw) = $out =~ /^live_max_wait=([0-9.]+)$/m;
ok(defined $maxw && $maxw <= 3.5, 'nobody waited past max_wait plus the wake-up')
  or diag("longest wait: " . ($maxw // 'none'));
# With a filter on three game modes (60 %, 20 %, 20 % of the players):
# each mode is matched at its own arrival rate, live as in simulate (with
# the queue's rate for every mode the live cost was 1.27 times simulate's).
($out, $err) = ('', '');
$ok = IPC::Run::run([ '/usr/bin/python3', $script, '300', '12', '3', '7', '3' ],
	'>', \$out, '2>', \$err);
ok($ok, '300 players in three modes fed at 12 per second were all matched') or diag($err);
note($out);
($ratio) = $out =~ /^ratio=([0-9.]+)$/m;
ok(defined $ratio && abs($ratio - 1) <= 0.05,
	'with filters, the live cost is within 5 % of simulate on the same arrivals')
  or diag("live / simulated: " . ($ratio // 'none'));
like($out, qr/^mixed_matches=0$/m, 'no match mixes modes');
is($node->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'matchmaker.check() finds nothing');

$node->stop;
done_testing();
