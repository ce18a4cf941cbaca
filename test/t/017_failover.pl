# Failover to a synchronous streaming standby: pgbench enqueues into two
# queues of a primary (each client writes down every ticket id it got back,
# so after its commit was acknowledged); the primary is killed with kill -9
# mid-load and the standby promoted.  The worker starts on the promoted
# server by itself and resumes every queue; every acknowledged ticket is
# there and matched exactly once; check() is clean.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $conf = qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
matchmaker.naptime = '100ms'
};
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION matchmaker;
	SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 s', tick => '100 ms');
	SELECT matchmaker.create_queue('squad', team_size => 2, teams => 2, algorithm => 'auto',
		max_wait => '1 s', tick => '100 ms');
	SELECT matchmaker.create_queue('slow', algorithm => 'greedy', max_wait => '1 hour');
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
# commits wait for the standby's flush from now on
$primary->safe_psql('postgres', "ALTER SYSTEM SET synchronous_standby_names = 'standby'; SELECT pg_reload_conf()");
ok( $primary->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby'"),
	'the standby replicates synchronously');
is($standby->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'matchmaker worker'"),
	'0', 'no worker runs on the standby while it is in recovery');

# Each client appends the id enqueue returned (after its commit) to a file
# of its own.
my $dir = PostgreSQL::Test::Utils::tempdir();
open my $fh, '>', "$dir/enqueue.sql" or die;
print $fh <<"EOF";
\\set p random(1, 1000000000)
\\set s random(0, 1)
SELECT matchmaker.enqueue(CASE WHEN :s = 0 THEN 'duel' ELSE 'squad' END, :client_id || '-' || :p, random()) AS t \\gset
\\shell echo :t >> $dir/acked.:client_id
EOF
close $fh;
my ($out, $err) = ('', '');
my $pgbench = IPC::Run::start(
	[ $primary->installed_command('pgbench'), '-n', '-h', $primary->host, '-p', $primary->port,
	  '-c', 4, '-j', 2, '-T', 60, '-f', "$dir/enqueue.sql", 'postgres' ],
	'>', \$out, '2>', \$err);
sub acked
{
	my @ids;
	for my $f (glob "$dir/acked.*")
	{
		open my $in, '<', $f or die;
		push @ids, grep { /^\d+$/ } map { chomp; $_ } <$in>;
		close $in;
	}
	return @ids;
}
# The Python client waits for a lone player's match across the failover,
# with both servers in its connect string (libpq picks the one that takes
# writes): its listener is cut, it reconnects to the promoted server and
# asks ticket_status, then hears the match made there.
my $dsn = 'host=' . $primary->host . ',' . $standby->host . ' port=' . $primary->port . ','
  . $standby->port . ' dbname=postgres target_session_attrs=read-write';
open $fh, '>', "$dir/wait.py" or die;
print $fh <<'EOF';
import sys
from matchmaker_client import Client
mm = Client(sys.argv[1])
ticket = mm.enqueue('slow', 'lone', 0.5)
print('ticket', ticket, flush=True)
status = mm.wait_for_match(ticket, timeout=90, reconnect_delay=0.2)
print('state', status.state, status.match_id, flush=True)
EOF
close $fh;
my ($wout, $werr) = ('', '');
my $waiter = IPC::Run::start([ '/usr/bin/python3', "$dir/wait.py", $dsn ], '>', \$wout, '2>', \$werr,
	init => sub { $ENV{PYTHONPATH} = "$FindBin::RealBin/../../clients/python"; });
my $t0 = time;
$waiter->pump until $wout =~ /^ticket \d+$/m || time - $t0 > 30;
my ($lone) = $wout =~ /^ticket (\d+)$/m;
ok(defined $lone, 'the Python client waits for a ticket on the primary');
$t0 = time;
sleep 1 while (scalar(acked()) < 500 && time - $t0 < 60);
ok(scalar(acked()) >= 500, 'the load runs on the primary');

$primary->kill9;
$pgbench->finish;
my @ids = acked();
note scalar(@ids) . ' enqueues acknowledged before the primary died';
$standby->promote;

ok( $standby->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'matchmaker launcher'"),
	'the launcher starts on the promoted server by itself');
ok( $standby->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM matchmaker.tickets WHERE state = 'waiting' AND queue <> 'slow'"),
	'the promoted server\'s worker resumes both loaded queues: nothing waits past max_wait');
my $list = join(',', map { "($_)" } @ids);
is( $standby->safe_psql('postgres',
		"SELECT count(*) FROM (VALUES $list) a(id) WHERE NOT EXISTS (SELECT FROM matchmaker.tickets t WHERE t.id = a.id)"),
	'0', 'every acknowledged enqueue survived the failover');
is( $standby->safe_psql('postgres',
		"SELECT count(*) FROM (VALUES $list) a(id) JOIN matchmaker.tickets t ON t.id = a.id WHERE t.state <> 'matched' OR t.match_id IS NULL"),
	'0', 'every acknowledged ticket is matched');
is( $standby->safe_psql('postgres', q{
		SELECT count(*) FROM matchmaker.matches m
		WHERE (SELECT count(*) FROM matchmaker.tickets t WHERE t.match_id = m.id) + m.bots
		      <> CASE m.queue WHEN 'duel' THEN 2 ELSE 4 END}),
	'0', 'every match is whole: no ticket was matched twice or lost from its match');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'check() is clean on the promoted server');

# the waiting client's partner arrives on the promoted server
$standby->safe_psql('postgres', "SELECT matchmaker.enqueue('slow', 'partner', 0.5)");
$waiter->finish;
like($wout, qr/^state matched \d+$/m,
	'the Python client reconnected to the promoted server and saw its ticket matched there')
  or diag("$wout\n$werr");

# new players are matched on the promoted server
$standby->safe_psql('postgres',
	"SELECT matchmaker.enqueue('duel', 'after-1', 0.4), matchmaker.enqueue('duel', 'after-2', 0.41)");
ok( $standby->poll_query_until('postgres',
		"SELECT count(*) = 2 FROM matchmaker.tickets WHERE player LIKE 'after-%' AND state = 'matched'"),
	'players enqueued after the failover are matched');

done_testing();
