# Through a connection pooler: game backends connected through Debian's
# pgbouncer in transaction mode (two server connections shared by every
# client of a role) enqueue, read ticket_status, accept a ready check and
# cancel, each call in whatever server connection the pooler hands out;
# the worker matches what they enqueue, and the tickets keep their owner.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MatchmakerLoad;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pgbouncer = '/usr/sbin/pgbouncer';
plan skip_all => "$pgbouncer is not installed (scripts/common.sh installs it)"
  unless -x $pgbouncer;

my $node = MatchmakerLoad::worker_node('pooler');
$node->safe_psql('postgres', q{
	CREATE ROLE regress_backend LOGIN IN ROLE matchmaker_client;
	CREATE ROLE regress_other LOGIN IN ROLE matchmaker_client;
	SELECT matchmaker.create_queue('ranked', algorithm => 'greedy', max_wait => '1 hour',
	                               params => '{"accept_timeout": 60}');
});

# pgbouncer in transaction mode on a Unix socket of its own, two server
# connections per role
my $dir = PostgreSQL::Test::Utils::tempdir;
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $host = $node->host;
my $node_port = $node->port;
open(my $users, '>', "$dir/userlist.txt") or die $!;
print $users qq{"regress_backend" ""\n"regress_other" ""\n};
close($users);
open(my $ini, '>', "$dir/pgbouncer.ini") or die $!;
print $ini qq{[databases]
postgres = host=$host port=$node_port dbname=postgres

[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 50
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
};
close($ini);
system($pgbouncer, '-d', "$dir/pgbouncer.ini") == 0 or die "pgbouncer did not start";
END
{
	local $?;    # keep the test's exit status
	if (defined $dir && -f "$dir/pgbouncer.pid")
	{
		my $pid = slurp_file("$dir/pgbouncer.pid");
		chomp $pid;
		kill 'TERM', $pid;
	}
}

# One statement (one transaction) through the pooler as a role.
sub pooled
{
	my ($role, $sql) = @_;
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run(
		[ $node->installed_command('psql'), '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1',
		  '-h', $dir, '-p', $port, '-U', $role, '-d', 'postgres', '-f', '-' ],
		'<', \$sql, '>', \$stdout, '2>', \$stderr);
	chomp $stdout;
	return ($ok, $stdout, $stderr);
}

sub pooled_ok
{
	my ($role, $sql) = @_;
	my ($ok, $out, $err) = pooled($role, $sql);
	die "through pgbouncer as $role: $sql: $err" unless $ok;
	return $out;
}

# 1. Two players enqueued through the pooler, each in its own client
# connection; the worker proposes their match.
my $ann = pooled_ok('regress_backend', q{SELECT matchmaker.enqueue('ranked', 'ann', 0.5)});
my $bob = pooled_ok('regress_backend', q{SELECT matchmaker.enqueue('ranked', 'bob', 0.5)});
like($ann, qr/^\d+$/, 'enqueue through pgbouncer returns a ticket id');
is(pooled_ok('regress_backend', qq{SELECT matchmaker.enqueue('ranked', 'ann', 0.5)}), $ann,
	'a retried enqueue through pgbouncer returns the same ticket');
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE state = 'proposed'"),
	'the worker proposes the match of the pooled enqueues');

# 2. ticket_status and accept through the pooler; only the owner answers.
is(pooled_ok('regress_backend', "SELECT state FROM matchmaker.ticket_status($ann)"), 'proposed',
	'ticket_status through pgbouncer');
my ($ok, $out, $err) = pooled('regress_other', "SELECT matchmaker.accept($ann)");
ok(!$ok && $err =~ /does not exist|not yours|enqueued by/i,
	'another role cannot answer for the ticket through pgbouncer') or diag($err);
is(pooled_ok('regress_backend', "SELECT matchmaker.accept($ann)"), 'proposed',
	'the first accept through pgbouncer leaves the match proposed');
is(pooled_ok('regress_backend', "SELECT matchmaker.accept($bob)"), 'matched',
	'the second makes it ready');
is(pooled_ok('regress_backend',
		"SELECT state || ' ' || (match_id IS NOT NULL) FROM matchmaker.ticket_status($ann)"),
	'matched true', 'both are matched');

# 3. A transaction of several calls through the pooler (one server
# connection for the whole transaction), then cancel.
my $cid = pooled_ok('regress_backend', q{
BEGIN;
SELECT matchmaker.enqueue('ranked', 'cid', 0.1) \gset
SELECT state FROM matchmaker.ticket_status(:enqueue);
COMMIT;
});
is($cid, 'waiting', 'enqueue and ticket_status in one pooled transaction');
my $cid_id = $node->safe_psql('postgres', "SELECT id FROM matchmaker.tickets WHERE player = 'cid'");
is(pooled_ok('regress_backend', "SELECT matchmaker.cancel($cid_id)"), 't', 'cancel through pgbouncer');
is($node->safe_psql('postgres', "SELECT state FROM matchmaker.tickets WHERE id = $cid_id"),
	'cancelled', 'the ticket is cancelled');

# 4. Many clients of one role through two server connections: 40 players,
# every ticket the role's own, all proposed in 20 matches.
for my $i (1 .. 40)
{
	pooled_ok('regress_backend', "SELECT matchmaker.enqueue('ranked', 'p$i', 0.5)");
}
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 40 FROM matchmaker.tickets WHERE player LIKE 'p%' AND state = 'proposed'"),
	'40 pooled enqueues are all proposed by the worker');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM matchmaker.tickets WHERE enqueued_by_name <> 'regress_backend'"),
	'0', 'every ticket belongs to the role that enqueued it through the pooler');
ok($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE usename = 'regress_backend'") <= 2,
	'the role\'s clients shared at most two server connections');
is($node->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'matchmaker.check() finds nothing');

$node->stop;
done_testing();
