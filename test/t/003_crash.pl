# Crashes under load: kill -9 of a client backend holding an uncommitted
# enqueue, then kill -9 of the worker while a tick has written its matches
# and not committed them (matchmaker.test_hold_tick).  Each crash restarts
# the whole cluster (restart_after_crash); afterwards every committed call
# is accounted for, committed matches are whole and unchanged, nothing of
# the killed transactions remains, and matching resumes.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;
use MatchmakerLoad;

my $clients = 8;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
# one worker, so that "the worker" below is one process
matchmaker.workers_per_database = 1
matchmaker.naptime = '100ms'
restart_after_crash = on
max_connections = 40
});
$node->start;
MatchmakerLoad::setup($node);
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('held', team_size => 2, teams => 2, algorithm => 'greedy',
		max_wait => '1 hour', tick => '100 ms');
});

# Wait until at least n more enqueues than now are logged.
sub load_runs
{
	my ($n) = @_;
	my $now = $node->safe_psql('postgres', 'SELECT count(*) FROM enqueue_log');
	$node->poll_query_until('postgres',
		'SELECT count(*) >= ' . ($now + $n) . ' FROM enqueue_log')
	  or die 'the load does not make progress';
	return;
}

# Wait for the crash restart that began after log offset: the postmaster
# reinitialises and accepts connections again.
sub wait_restart
{
	my ($offset) = @_;
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	ok($node->poll_query_until('postgres', 'SELECT true'),
		'the server accepts connections after the crash restart');
	return;
}

# Two new players in the 1v1 queue are matched together.
sub matching_resumes
{
	my ($label) = @_;
	my ($x, $y) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT matchmaker.enqueue('duel', '$label-x', 0.4), matchmaker.enqueue('duel', '$label-y', 0.6)});
	$node->safe_psql('postgres', qq{
		INSERT INTO enqueue_log (ticket, queue, player)
		VALUES ($x, 'duel', '$label-x'), ($y, 'duel', '$label-y')});
	ok( $node->poll_query_until('postgres', qq{
			SELECT count(DISTINCT match_id) = 1 AND count(*) FILTER (WHERE state = 'matched') = 2
			FROM matchmaker.tickets WHERE id IN ($x, $y)}),
		"$label: matching resumes, new players are matched together");
	return;
}

# 1. A client backend is killed with kill -9 while it holds an uncommitted
# enqueue, with the load running.
my ($pgbench, $out, $err) = MatchmakerLoad::start_pgbench($node, $clients, 120);
load_runs(4000);
my $worker = MatchmakerLoad::worker_pid($node);
my $ghost_session = $node->background_psql('postgres', on_error_stop => 0);
$ghost_session->query_safe('BEGIN');
my $ghost = $ghost_session->query_safe(q{SELECT matchmaker.enqueue('duel', 'ghost', 0.5)});
$ghost_session->query_safe(
	"INSERT INTO enqueue_log (ticket, queue, player) VALUES ($ghost, 'duel', 'ghost')");
my $ghost_pid = $ghost_session->query_safe('SELECT pg_backend_pid()');
is($node->safe_psql('postgres', "SELECT count(*) FROM matchmaker.tickets WHERE id = $ghost"),
	'0', 'an uncommitted enqueue is invisible to other sessions');

my $offset = -s $node->logfile;
kill 'KILL', $ghost_pid;
wait_restart($offset);
ok($node->log_contains(qr/server process \(PID $ghost_pid\) was terminated by signal 9/, $offset),
	'the client backend was killed with signal 9');
$ghost_session->quit;
$pgbench->finish;
like($$err, qr/aborted/, 'the crash cut the pgbench clients off mid-load');
isnt(MatchmakerLoad::worker_pid($node), $worker, 'a new worker runs after the restart');
is( $node->safe_psql('postgres', q{
		SELECT (SELECT count(*) FROM matchmaker.tickets WHERE player = 'ghost')
		     + (SELECT count(*) FROM enqueue_log WHERE player = 'ghost')}),
	'0', 'the killed transaction left no ticket and no log row');
MatchmakerLoad::wait_drained($node, 'client kill');
MatchmakerLoad::check_log($node, 'client kill');
matching_resumes('client kill');

# 2. The worker is killed with kill -9 in the middle of a tick: it has
# written a match of queue held and waits before its commit.  Set the hold
# and wait for the worker to have read it (the naptime changed in the same
# reload is logged).
$offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	ALTER SYSTEM SET matchmaker.test_hold_tick = 'held';
	ALTER SYSTEM SET matchmaker.naptime = '150ms';
	SELECT pg_reload_conf();
});
$node->wait_for_log(qr/matchmaker worker: naptime is now 150 ms/, $offset);

($pgbench, $out, $err) = MatchmakerLoad::start_pgbench($node, $clients, 120);
load_runs(4000);
my $held = $node->safe_psql('postgres', q{
	SELECT string_agg(matchmaker.enqueue('held', p, 0.5)::text, ',' ORDER BY p)
	FROM unnest(ARRAY['h1', 'h2', 'h3', 'h4']) AS p});
my ($h1) = split /,/, $held;
$node->wait_for_log(qr/holding the tick of queue "held" before commit with 1 new matches/, $offset);
pass('the worker holds a tick of queue held that made one match');

# While the tick is held, only the worker could commit matches: take the
# committed ones as they are now.
my $matches = q{
	SELECT count(*) || ' ' || md5(string_agg(x, ';' ORDER BY id)) FROM (
	  SELECT m.id, m.id || ' ' || m.queue || ' ' || m.bots || ' ' || m.created_at || ' '
	               || string_agg(t.id || '@' || t.team || ' ' || t.state, ',' ORDER BY t.id) AS x
	  FROM matchmaker.matches m LEFT JOIN matchmaker.tickets t ON t.match_id = m.id
	  WHERE m.id <= %s
	  GROUP BY m.id) s};
my $last_match = $node->safe_psql('postgres', 'SELECT COALESCE(max(id), 0) FROM matchmaker.matches');
my $committed = $node->safe_psql('postgres', sprintf($matches, $last_match));
is( $node->safe_psql('postgres', qq{
		SELECT (SELECT count(*) FROM matchmaker.matches WHERE queue = 'held') || ' '
		    || (SELECT count(*) FROM matchmaker.tickets WHERE id IN ($held) AND state = 'waiting')}),
	'0 4', 'the held match is invisible and its tickets still wait');
is( $node->safe_psql('postgres', q{
		SELECT query || ' ' || wait_event_type FROM pg_stat_activity
		WHERE backend_type = 'matchmaker worker'}),
	'tick queue held Extension', 'the worker waits inside the tick of queue held');

# A cancel of a held ticket waits for the tick.
my ($cancel_out, $cancel_err) = ('', '');
my $canceller = IPC::Run::start(
	[ $node->installed_command('psql'), '-XAtq', '-d', $node->connstr('postgres'),
	  '-c', "SELECT matchmaker.cancel($h1)" ],
	'>', \$cancel_out, '2>', \$cancel_err);
ok( $node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE wait_event_type = 'Lock' AND query LIKE '%matchmaker.cancel($h1)%'}),
	'a cancel of a held ticket waits for the held tick');

# The restarted worker must not hold again: clear the setting (the held
# worker does not read it any more; new processes get it from the postmaster).
$node->safe_psql('postgres', q{
	ALTER SYSTEM RESET matchmaker.test_hold_tick;
	SELECT pg_reload_conf();
});
$node->poll_query_until('postgres', "SELECT current_setting('matchmaker.test_hold_tick') = ''")
  or die 'the setting was not cleared';

$worker = MatchmakerLoad::worker_pid($node);
my $kill_time = $node->safe_psql('postgres', 'SELECT now()');
$offset = -s $node->logfile;
kill 'KILL', $worker;
wait_restart($offset);
ok($node->log_contains(qr/\(PID $worker\) was terminated by signal 9/, $offset),
	'the worker was killed with signal 9');
$canceller->finish;
isnt($canceller->result(0), 0, 'the waiting cancel failed with the crash') or diag($cancel_out);
$pgbench->finish;
like($$err, qr/aborted/, 'the crash cut the pgbench clients off mid-load');

is($node->safe_psql('postgres', sprintf($matches, $last_match)), $committed,
	'the matches committed before the crash are unchanged, with their tickets');
ok( $node->poll_query_until('postgres', qq{
		SELECT count(*) = 4 FROM matchmaker.tickets WHERE id IN ($held) AND state = 'matched'}),
	'a fresh tick matches the held tickets');
is( $node->safe_psql('postgres', qq{
		SELECT count(DISTINCT m.id) || ' ' || count(*) || ' ' || bool_and(m.created_at > '$kill_time')
		FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
		WHERE m.queue = 'held'}),
	'1 4 true', 'queue held has one match of four, made after the crash: nothing of the held tick remains');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM matchmaker.tickets WHERE id = $h1 AND state = 'cancelled'"),
	'0', 'the cancel that waited for the held tick left no trace');
isnt(MatchmakerLoad::worker_pid($node), $worker, 'a new worker runs after the restart');
MatchmakerLoad::wait_drained($node, 'worker kill');
MatchmakerLoad::check_log($node, 'worker kill');
matching_resumes('worker kill');
ok(!$node->log_contains('matchmaker: queue "[^"]*" failed'), 'no queue failed in the worker');
note('two crash restarts under the load of ' . $clients . ' clients: ' . MatchmakerLoad::summary($node));

$node->stop;
done_testing();
