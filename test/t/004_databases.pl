# The workers let go of their database: ALTER DATABASE ... RENAME, SET
# TABLESPACE, CREATE DATABASE ... TEMPLATE and DROP DATABASE of a worker's
# database succeed without FORCE, even while a worker holds a tick; a role
# that does not own the database cannot stop its workers; a database of
# matchmaker.database that does not exist (at start, or after a DROP or a
# RENAME) gets one log line, not a restart loop, and its workers start
# once it exists again.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('databases');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'game, absent'
matchmaker.naptime = '200ms'
});
$node->start;

my $missing = qr/matchmaker: database "game" of matchmaker\.database does not exist/;

# The pids of the workers of database db, in order.
sub worker_pids
{
	my ($db) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(pid::text, ',' ORDER BY pid) FROM pg_stat_activity
		WHERE backend_type = 'matchmaker worker' AND datname = '$db'});
}

# Wait until database db has n workers.
sub workers_reach
{
	my ($db, $n) = @_;
	return $node->poll_query_until('postgres', qq{
		SELECT count(*) = $n FROM pg_stat_activity
		WHERE backend_type = 'matchmaker worker' AND datname = '$db'});
}

# The lines of the log after offset that match re.
sub log_count
{
	my ($re, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	my @lines = grep { /$re/ } split /\n/, $log;
	return scalar @lines;
}

# Two players in queue duel of database game are matched by the workers.
sub game_matches
{
	my ($label) = @_;
	my ($x, $y) = split /\|/, $node->safe_psql('game', qq{
		SELECT matchmaker.enqueue('duel', '$label-x', 0.4), matchmaker.enqueue('duel', '$label-y', 0.6)});
	ok( $node->poll_query_until('game', qq{
			SELECT count(*) = 2 FROM matchmaker.tickets WHERE id IN ($x, $y) AND state = 'matched'}),
		"$label: the workers match in database game");
	return;
}

# 1. Neither database exists at start: one line each, however long.
$node->wait_for_log($missing);
sleep 3;
is(log_count($missing, 0), 1, 'a missing database is logged once, not at every retry');
is(log_count(qr/matchmaker: database "absent" of matchmaker\.database does not exist/, 0), 1,
	'the other missing database is logged once too');
ok($node->safe_psql('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'matchmaker launcher' AND datname IS NULL"),
	'the launcher runs, connected to no database');
ok(!$node->log_contains('FATAL'), 'no worker fails to connect meanwhile');

# 2. The database is created: its workers start (two by default) and match.
$node->safe_psql('postgres', 'CREATE DATABASE game');
ok(workers_reach('game', 2), 'the workers of a database start once it exists');
$node->safe_psql('game', q{
	CREATE EXTENSION matchmaker;
	SELECT matchmaker.create_queue('duel', algorithm => 'greedy', tick => '100 ms');
	SELECT matchmaker.create_queue('held', algorithm => 'greedy', tick => '100 ms', max_wait => '1 hour');
});
game_matches('created');

# 3. A role that does not own the database cannot stop its workers.
my $pids = worker_pids('game');
$node->safe_psql('postgres', 'CREATE ROLE intruder LOGIN CREATEDB');
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE game',
	extra_params => [ '-U', 'intruder' ]);
like($stderr, qr/must be owner of database game/, 'a non-owner cannot drop the database');
($ret, $stdout, $stderr) = $node->psql('postgres', 'ALTER DATABASE game RENAME TO other',
	extra_params => [ '-U', 'intruder' ]);
like($stderr, qr/must be owner of database game/, 'nor rename it');
is(worker_pids('game'), $pids, 'and the workers ran on untouched');

# 4. RENAME without FORCE succeeds; the old name no longer exists, once.
my $offset = -s $node->logfile;
($ret, $stdout, $stderr) = $node->psql('postgres', 'ALTER DATABASE game RENAME TO game_renamed');
is($ret, 0, 'ALTER DATABASE ... RENAME of the workers\' database succeeds without FORCE')
  or diag($stderr);
$node->wait_for_log($missing, $offset);
ok(workers_reach('game_renamed', 0), 'no worker serves the renamed database');
sleep 2;
is(log_count($missing, $offset), 1, 'the missing name is logged once after the rename');
$node->safe_psql('postgres', 'ALTER DATABASE game_renamed RENAME TO game');
ok(workers_reach('game', 2), 'renamed back, the database gets its workers again');
game_matches('renamed back');

# 5. A rename in a transaction keeps the workers out until it ends; its
# rollback brings them back at once.
($ret, $stdout, $stderr) = $node->psql('postgres', q{
	BEGIN;
	ALTER DATABASE game RENAME TO game_tx;
	SELECT pg_sleep(1);
	SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'matchmaker worker';
	ROLLBACK;});
is($ret, 0, 'a rename in a transaction succeeds') or diag($stderr);
like($stdout, qr/^0$/m, 'no worker runs while the rename is not committed');
ok(workers_reach('game', 2), 'after its rollback the workers come back');
game_matches('after a rolled back rename');

# 6. SET TABLESPACE and CREATE DATABASE ... TEMPLATE need no other session either.
my $tsdir = $node->basedir . '/ts';
mkdir $tsdir or die "mkdir $tsdir: $!";
$node->safe_psql('postgres', "CREATE TABLESPACE elsewhere LOCATION '$tsdir'");
($ret, $stdout, $stderr) = $node->psql('postgres', 'ALTER DATABASE game SET TABLESPACE elsewhere');
is($ret, 0, 'ALTER DATABASE ... SET TABLESPACE of the workers\' database succeeds') or diag($stderr);
ok(workers_reach('game', 2), 'the workers come back after SET TABLESPACE');
($ret, $stdout, $stderr) = $node->psql('postgres', 'CREATE DATABASE game_copy TEMPLATE game');
is($ret, 0, 'CREATE DATABASE ... TEMPLATE the workers\' database succeeds') or diag($stderr);
ok(workers_reach('game', 2), 'the workers come back after the copy');
game_matches('after SET TABLESPACE and TEMPLATE');

# 7. DROP DATABASE without FORCE while a worker holds a tick: the tick is
# cancelled and rolled back, the drop succeeds, and the end of the
# workers is one log line, with no restart afterwards.
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET matchmaker.test_hold_tick = 'held';
	SELECT pg_reload_conf();
});
$node->poll_query_until('game', "SELECT current_setting('matchmaker.test_hold_tick') = 'held'")
  or die 'the hold is not set';
$offset = -s $node->logfile;
$node->safe_psql('game', q{
	SELECT matchmaker.enqueue('held', 'h1', 0.5), matchmaker.enqueue('held', 'h2', 0.5)});
$node->wait_for_log(qr/holding the tick of queue "held"/, $offset);
pass('a worker holds a tick of database game');
$offset = -s $node->logfile;
($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE game', timeout => 60);
is($ret, 0, 'DROP DATABASE of the workers\' database succeeds without FORCE, a tick held')
  or diag($stderr);
$node->wait_for_log($missing, $offset);
sleep 7;
my $after = slurp_file($node->logfile, $offset);
my @lines = grep { /matchmaker|FATAL|ERROR|exited/ && !/HINT:/ } split /\n/, $after;
is(scalar @lines, 1, 'the dropped database ends its workers with one log line')
  or diag(join("\n", @lines));
ok(workers_reach('game', 0), 'and no worker runs for it');

# 8. Created again, it gets workers again; DROP DATABASE ... WITH (FORCE)
# also ends them with one line.
$node->safe_psql('postgres', q{
	ALTER SYSTEM RESET matchmaker.test_hold_tick;
	SELECT pg_reload_conf();
	CREATE DATABASE game});
ok(workers_reach('game', 2), 'a database created again gets its workers');
$offset = -s $node->logfile;
$node->safe_psql('postgres', 'DROP DATABASE game WITH (FORCE)');
$node->wait_for_log($missing, $offset);
sleep 7;
$after = slurp_file($node->logfile, $offset);
@lines = grep { /matchmaker|FATAL|ERROR|exited/ && !/HINT:/ } split /\n/, $after;
is(scalar @lines, 1, 'DROP DATABASE ... WITH (FORCE): one log line, no restart loop')
  or diag(join("\n", @lines));

$node->stop;
done_testing();
