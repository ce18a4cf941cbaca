# Shared by the TAP tests: eight queues of different shapes and algorithms
# with short waits, pgbench scripts that enqueue, retry and cancel while
# logging every committed call in side tables (in the same transaction as
# the call), the checks of the tickets against that log, and the worker's
# pid.
package MatchmakerLoad;

use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @QUEUES = qw(duel batch ranges squad trio widen clump rounds);

# A started node whose worker runs the queues of database postgres (naptime
# 200 ms, and the lines of @conf), with the extension created there.
sub worker_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', join("\n",
		"shared_preload_libraries = 'matchmaker'", "matchmaker.database = 'postgres'",
		"matchmaker.naptime = '200ms'", @conf) . "\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION matchmaker');
	return $node;
}

# The worker's pid, once it shows in pg_stat_activity.
sub worker_pid
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'matchmaker worker'")
	  or die "no matchmaker worker in pg_stat_activity";
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'matchmaker worker'");
}

# A process's voluntary context switches (each wake-up from a sleep is
# one), from /proc; undef where /proc/PID/status does not have them.
sub voluntary_switches
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/status") or return undef;
	my ($n) = join('', <$fh>) =~ /^voluntary_ctxt_switches:\s+(\d+)/m;
	close $fh;
	return $n;
}

# Eight queues with max_wait of a second or so, so that timeouts happen
# while the load runs (the multi_queue one on a second criterion, "lat",
# which every enqueue sends); the log tables.
sub setup
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		CREATE EXTENSION matchmaker;
		SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 s',
			tick => '100 ms', params => '{"on_timeout": "expire"}');
		SELECT matchmaker.create_queue('batch', algorithm => 'periodic', max_wait => '1 s',
			tick => '100 ms', params => '{"batch": 8}');
		SELECT matchmaker.create_queue('ranges', algorithm => 'multi_queue', max_wait => '1 s',
			tick => '100 ms', params => '{"ranges": 4, "on_timeout": "expire",
				"criteria": {"lat": {"min": 0, "max": 1000, "ranges": 2}}}');
		SELECT matchmaker.create_queue('squad', team_size => 2, teams => 2, algorithm => 'greedy',
			max_wait => '1 s', tick => '100 ms');
		SELECT matchmaker.create_queue('trio', team_size => 1, teams => 3,
			algorithm => 'difference_wait', max_wait => '1.5 s', tick => '100 ms',
			params => '{"wait_factor": 0.5, "on_timeout": "expire"}');
		SELECT matchmaker.create_queue('widen', algorithm => 'window', max_wait => '1 s',
			tick => '100 ms', params => '{"window": 0.02, "max_window": 0.5, "recheck": 0.1,
				"rematch_last": 2, "on_timeout": "expire"}');
		SELECT matchmaker.create_queue('clump', team_size => 2, teams => 2, algorithm => 'cluster',
			max_wait => '1 s', tick => '100 ms', params => '{"threshold": 0.1, "recheck": 0.1}');
		SELECT matchmaker.create_queue('rounds', algorithm => 'optimize', max_wait => '1 s',
			tick => '100 ms', params => '{"round": 0.2, "restarts": 1, "on_timeout": "expire"}');
		-- one row per committed enqueue; retry_of: the ticket the same call returned before
		CREATE TABLE enqueue_log (ticket bigint NOT NULL, queue text NOT NULL, player text NOT NULL,
			retry_of bigint);
		-- one row per committed cancel, with what it returned and when it had returned
		CREATE TABLE cancel_log (ticket bigint NOT NULL, cancelled boolean NOT NULL,
			returned_at timestamptz NOT NULL DEFAULT clock_timestamp());
	});
	return;
}

# Write the pgbench scripts into dir and return the -f arguments with
# their weights.  Each logs its call in the statement that makes it.
sub scripts
{
	my ($dir) = @_;
	my $pick = q{\set q random(1, 8)
\set p random(1, 300)
\set r random(0, 1000)
\set l random(0, 1000)
};
	my $queue = q{(ARRAY['duel', 'batch', 'ranges', 'squad', 'trio', 'widen', 'clump', 'rounds'])[:q]};
	my $enqueue = "INSERT INTO enqueue_log (ticket, queue, player)
  SELECT matchmaker.enqueue($queue, 'p' || :p, :r / 1000.0, jsonb_build_object('lat', :l)), $queue, 'p' || :p
  RETURNING ticket \\gset\n";
	my %script = (
		# a player asks to play
		enqueue => $pick . $enqueue,
		# the same call again, as after a lost reply
		retry => $pick . $enqueue
		  . "INSERT INTO enqueue_log (ticket, queue, player, retry_of)
  SELECT matchmaker.enqueue($queue, 'p' || :p, :r / 1000.0, jsonb_build_object('lat', :l)), $queue, 'p' || :p, :ticket;\n",
		# a player asks to play and gives up a moment later
		cancel => $pick . $enqueue
		  . "\\set w random(0, 40)\n\\sleep :w ms\n"
		  . "INSERT INTO cancel_log (ticket, cancelled) SELECT :ticket, matchmaker.cancel(:ticket);\n");
	my %weight = (enqueue => 4, retry => 2, cancel => 2);
	my @args;
	for my $name (sort keys %script)
	{
		my $file = "$dir/$name.sql";
		open my $fh, '>', $file or die "could not write $file: $!";
		print $fh $script{$name};
		close $fh;
		push @args, '-f', "$file\@$weight{$name}";
	}
	return @args;
}

# Start pgbench in the background: clients for seconds, as fast as they
# can or, given a rate, at that many transactions per second in all.
# Returns the IPC::Run handle and references to its stdout and stderr.
sub start_pgbench
{
	my ($node, $clients, $seconds, $rate) = @_;
	my ($out, $err) = ('', '');
	my @cmd = (
		$node->installed_command('pgbench'), '-n',
		'-h', $node->host, '-p', $node->port,
		'-c', $clients, '-j', 2, '-T', $seconds,
		(defined $rate ? ('-R', $rate) : ()),
		scripts(PostgreSQL::Test::Utils::tempdir()), 'postgres');
	my $h = IPC::Run::start(\@cmd, '>', \$out, '2>', \$err);
	return ($h, \$out, \$err);
}

# Wait until no ticket waits any more (every queue times out within 1.5 s).
sub wait_drained
{
	my ($node, $label) = @_;
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM matchmaker.tickets WHERE state = 'waiting'"),
		"$label: no ticket is left waiting once max_wait has passed");
	return;
}

# Pass when the query returns no rows; else show the first few.
sub no_rows
{
	my ($node, $query, $name) = @_;
	my $rows = $node->safe_psql('postgres', "SELECT * FROM ($query) AS x LIMIT 5");
	is($rows, '', $name);
	return;
}

# Check the tickets against the log of committed calls, and the matches;
# the queues have settled (nothing waits).
sub check_log
{
	my ($node, $label) = @_;

	no_rows($node, q{
		SELECT l.*, t.queue AS t_queue, t.player AS t_player FROM enqueue_log l
		LEFT JOIN matchmaker.tickets t ON t.id = l.ticket
		WHERE t.id IS NULL OR t.queue <> l.queue OR t.player <> l.player},
		"$label: every committed enqueue is a ticket of its queue and player");
	no_rows($node, q{
		SELECT t.* FROM matchmaker.tickets t
		WHERE t.queue IN ('duel', 'batch', 'ranges', 'squad', 'trio')
		  AND NOT EXISTS (SELECT 1 FROM enqueue_log l WHERE l.ticket = t.id)},
		"$label: every ticket comes from a committed enqueue");
	# Another ticket for a retry: the first one has ended, and the other
	# one waited after the first call (it ended after the first ticket was
	# made).  Ids do not tell the order: an enqueue takes its id before it
	# waits for a concurrent one of the same player, and inserts once that
	# one's ticket has been matched.
	no_rows($node, q{
		SELECT l.*, first.state, first.enqueued_at, other.state, other.matched_at, other.ended_at
		FROM enqueue_log l
		JOIN matchmaker.tickets first ON first.id = l.retry_of
		JOIN matchmaker.tickets other ON other.id = l.ticket
		WHERE l.ticket <> l.retry_of
		  AND (first.state = 'waiting'
		       OR COALESCE(other.matched_at, other.ended_at) < first.enqueued_at)},
		"$label: a retried enqueue returns the same ticket unless that ticket had ended");
	no_rows($node, q{
		SELECT t.* FROM matchmaker.tickets t
		WHERE CASE t.state
		        WHEN 'matched' THEN t.match_id IS NULL OR t.matched_at IS NULL
		                            OR t.matched_at < t.enqueued_at OR t.ended_at IS NOT NULL
		        WHEN 'cancelled' THEN t.match_id IS NOT NULL OR t.ended_at IS NULL
		        WHEN 'expired' THEN t.match_id IS NOT NULL OR t.ended_at IS NULL
		        ELSE true END},
		"$label: every ticket ended matched, cancelled or expired, consistently");
	no_rows($node, q{
		SELECT t.*, q.max_wait FROM matchmaker.tickets t JOIN matchmaker.queues q ON q.name = t.queue
		WHERE t.state = 'expired'
		  AND (t.ended_at - t.enqueued_at < q.max_wait - interval '1 ms'
		       OR q.params->>'on_timeout' IS DISTINCT FROM 'expire')},
		"$label: tickets expire only in expiring queues and only after max_wait");
	no_rows($node, q{
		SELECT m.id, m.queue, m.bots, count(t.id) AS tickets FROM matchmaker.matches m
		JOIN matchmaker.queues q ON q.name = m.queue
		LEFT JOIN matchmaker.tickets t ON t.match_id = m.id AND t.queue = m.queue
		GROUP BY m.id, m.bots, q.team_size, q.teams, q.params
		HAVING count(t.id) + m.bots <> q.team_size * q.teams OR count(t.id) = 0
		    OR (m.bots > 0 AND q.params->>'on_timeout' = 'expire')},
		"$label: every match has k participants, at least one of them a player");
	no_rows($node, q{
		SELECT c.*, t.state, t.matched_at, t.ended_at FROM cancel_log c
		JOIN matchmaker.tickets t ON t.id = c.ticket
		WHERE CASE WHEN c.cancelled THEN t.state <> 'cancelled' OR t.ended_at > c.returned_at
		      ELSE t.state = 'waiting'
		        OR COALESCE(t.matched_at, t.ended_at) > c.returned_at
		        OR (t.state = 'cancelled'
		            AND NOT EXISTS (SELECT 1 FROM cancel_log o
		                            WHERE o.ticket = c.ticket AND o.cancelled)) END},
		"$label: a cancel that returned true ended its ticket, one that returned false found it ended");
	no_rows($node, q{
		SELECT ticket FROM cancel_log WHERE cancelled GROUP BY ticket HAVING count(*) > 1},
		"$label: a ticket is cancelled once");
	no_rows($node, 'SELECT * FROM matchmaker.check()', "$label: matchmaker.check() finds nothing");
	return;
}

# Violations of what must hold at every moment, also under load, one line
# each: check() but for overdue tickets (a busy worker may lag), and a
# player waiting twice in one queue.
sub violations_now
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT * FROM matchmaker.check() WHERE problem <> 'overdue'
		UNION ALL
		SELECT 'waiting twice', queue, NULL, player FROM matchmaker.tickets
		WHERE state = 'waiting' GROUP BY queue, player HAVING count(*) > 1});
}

# Counts for the record: calls, tickets by state, matches, computer players.
sub summary
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT format('%s enqueue calls (%s retries, %s of them the same ticket), %s cancel calls '
		              || '(%s true); tickets: %s; %s matches with %s computer players',
		  (SELECT count(*) FROM enqueue_log),
		  (SELECT count(*) FROM enqueue_log WHERE retry_of IS NOT NULL),
		  (SELECT count(*) FROM enqueue_log WHERE retry_of = ticket),
		  (SELECT count(*) FROM cancel_log),
		  (SELECT count(*) FROM cancel_log WHERE cancelled),
		  (SELECT string_agg(state || ' ' || n, ', ' ORDER BY state)
		     FROM (SELECT state, count(*) AS n FROM matchmaker.tickets GROUP BY state) s),
		  (SELECT count(*) FROM matchmaker.matches),
		  (SELECT COALESCE(sum(bots), 0) FROM matchmaker.matches))});
}

1;
