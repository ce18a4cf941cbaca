# Hostile load: 16 pgbench clients of ordinary traffic in the eight queues
# of the load test while, at the same time,
#  - one client sits idle in transaction after cancelling its own waiting
#    ticket in queue duel (the cancel's locks held, not committed);
#  - one sits idle in transaction after an enqueue in queue squad;
#  - one floods the optimize queue flood with tickets that each name 64
#    regions of their own (thousands of tickets, over 10^5 region names);
#  - one enqueues attributes of 1 MB (the extension sets no limit of its
#    own) in queues ranges and rounds;
#  - an admin creates, fills, alters (criteria, a switch to optimize,
#    settings) and drops other queues in a loop.
# The traffic queues keep matching: every few seconds each makes matches,
# and the greedy ones (duel, squad), which match as soon as a match's last
# player arrives, have an enqueue-to-NOTIFY p99 under 200 ms: from the
# commit of the match's last enqueue (track_commit_timestamp) to the
# NOTIFY's arrival at a listening client (hostile_listener.py).
# matchmaker.check() stays clean during and after, the idle clients were
# idle in transaction throughout, every committed enqueue is accounted for
# (MatchmakerLoad's log checks) and no ticket is in two matches.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use MatchmakerLoad;

my $clients = 16;
my $seconds = 15;
my $rate = 200;                                      # transactions per second, all clients
my $p99_bound = 200;                                 # ms, the issue's bound
my @greedy = qw(duel squad);

my $node = PostgreSQL::Test::Cluster->new('hostile');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
matchmaker.naptime = '100ms'
max_connections = 40
track_commit_timestamp = on
});
$node->start;
MatchmakerLoad::setup($node);

# The flooded queue: optimize 1v1, rounds every 3 s, so that each round
# takes hundreds to thousands of tickets naming 64 regions each.  The
# listener's table.
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('flood', algorithm => 'optimize', max_wait => '6 s',
		tick => '100 ms', params => '{"round": 3, "on_timeout": "expire"}');
	CREATE TABLE notify_log (arrived timestamptz NOT NULL, payload jsonb NOT NULL);
});

# Start pgbench with one client running script for seconds.
sub start_client
{
	my ($name, $script) = @_;
	my $file = PostgreSQL::Test::Utils::tempdir() . "/$name.sql";
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $script;
	close $fh;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			$node->installed_command('pgbench'), '-n', '-h', $node->host, '-p', $node->port,
			'-c', 1, '-T', $seconds, '-f', $file, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return { name => $name, h => $h, out => \$out, err => \$err };
}

# The listener.
my $stop_file = PostgreSQL::Test::Utils::tempdir() . '/stop';
my ($lout, $lerr) = ('', '');
my $listener;
{
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = 'postgres';
	$listener = IPC::Run::start([ '/usr/bin/python3', "$FindBin::RealBin/hostile_listener.py", $stop_file ],
		'>', \$lout, '2>', \$lerr);
}
$listener->pump until $lout =~ /listening/ || !$listener->pumpable;
like($lout, qr/listening/, 'the listener listens') or diag($lerr);

# Idle in transaction after a cancel of its own waiting ticket in duel:
# the ticket is enqueued and committed while duel is empty (it waits, as
# max_wait is 1 s away), then cancelled in a transaction left open.
my $cancel_session = $node->background_psql('postgres', on_error_stop => 1);
my ($cancelled_ticket, $cancelled) = (undef, 'f');
for my $try (1 .. 3)
{
	$cancelled_ticket = $node->safe_psql('postgres', qq{
		INSERT INTO enqueue_log (ticket, queue, player)
		SELECT matchmaker.enqueue('duel', 'idle_cancel_$try', 0.5, '{"lat": 500}'), 'duel', 'idle_cancel_$try'
		RETURNING ticket});
	$cancel_session->query_safe('BEGIN');
	$cancelled = $cancel_session->query_safe(
		"INSERT INTO cancel_log (ticket, cancelled) SELECT $cancelled_ticket, matchmaker.cancel($cancelled_ticket) RETURNING cancelled"
	);
	last if $cancelled eq 't';
	$cancel_session->query_safe('COMMIT');
}
is($cancelled, 't', 'the idle client cancelled its waiting ticket in duel');
my $cancel_pid = $cancel_session->query_safe('SELECT pg_backend_pid()');

# Idle in transaction after an enqueue in squad.
my $enqueue_session = $node->background_psql('postgres', on_error_stop => 1);
$enqueue_session->query_safe('BEGIN');
my $idle_ticket = $enqueue_session->query_safe(q{
	INSERT INTO enqueue_log (ticket, queue, player)
	SELECT matchmaker.enqueue('squad', 'idle_enqueue', 0.5, '{"lat": 500}'), 'squad', 'idle_enqueue'
	RETURNING ticket});
my $enqueue_pid = $enqueue_session->query_safe('SELECT pg_backend_pid()');
my $idle_pids = "$cancel_pid, $enqueue_pid";
my $idle_query = qq{
	SELECT count(*) FROM pg_stat_activity
	WHERE pid IN ($idle_pids) AND state = 'idle in transaction'};
is($node->safe_psql('postgres', $idle_query), '2', 'both idle clients are idle in transaction');

my $start = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my ($pgbench, $out, $err) = MatchmakerLoad::start_pgbench($node, $clients, $seconds, $rate);
my @hostile = (
	# 20 tickets a transaction, each naming 64 regions no other ticket names
	start_client('flood', q{\set p random(1, 1000000000)
INSERT INTO enqueue_log (ticket, queue, player)
  SELECT matchmaker.enqueue('flood', 'f' || :p || '_' || i, random(),
           jsonb_build_object('ping', (SELECT jsonb_object_agg('r' || :p || '_' || i || '_' || g, 10 + g)
                                       FROM generate_series(1, 64) g))),
         'flood', 'f' || :p || '_' || i
  FROM generate_series(1, 20) i;
\sleep 50 ms
}),
	# 1 MB of attributes (32768 md5 digests, which hardly compress)
	start_client('large', q{\set p random(1, 1000000000)
\set q random(1, 2)
\set l random(0, 1000)
INSERT INTO enqueue_log (ticket, queue, player)
  SELECT matchmaker.enqueue(v.q, 'large' || :p, :l / 1000.0,
           jsonb_build_object('lat', :l, 'ping', jsonb_build_object('eu', 20 + :l % 50),
             'pad', (SELECT string_agg(md5(g::text || :p), '') FROM generate_series(1, 32768) g))),
         v.q, 'large' || :p
  FROM (VALUES ((ARRAY['ranges', 'rounds'])[:q])) v(q);
\sleep 200 ms
}),
	# another queue's whole life, with two tickets waiting through its alters and drop
	start_client('admin', q{\set n random(1, 1000000000)
SELECT matchmaker.create_queue('adm' || :n, team_size => 2, algorithm => 'greedy', max_wait => '1 hour', tick => '100 ms');
SELECT matchmaker.enqueue('adm' || :n, 'a', 0.2, '{"lat": 10}'), matchmaker.enqueue('adm' || :n, 'b', 0.9, '{"lat": 20}');
SELECT matchmaker.alter_queue('adm' || :n, params => '{"criteria": {"lat": {"min": 0, "max": 300}}}');
SELECT matchmaker.alter_queue('adm' || :n, algorithm => 'optimize', params => '{"round": 1}');
SELECT matchmaker.alter_queue('adm' || :n, tick => '50 ms', max_wait => '30 s', rating_max => 2);
SELECT matchmaker.drop_queue('adm' || :n, force => true);
\sleep 20 ms
}));

# While the load runs: the invariants, the idle clients, the flood's size.
# Should the clients still run 30 s after their end (calls stuck behind
# the idle clients' locks), say what waits and release the idle clients.
my ($looks, $bad, $not_idle, $flood_peak, $released) = (0, '', 0, 0, 0);
my $deadline = time + $seconds + 30;
while ($pgbench->pumpable || grep { $_->{h}->pumpable } @hostile)
{
	if (!$released && time > $deadline)
	{
		fail('the load ended within 30 s of its end');
		diag($node->safe_psql('postgres', q{
			SELECT wait_event_type || ' ' || wait_event || ': ' || count(*) || ' sessions, e.g. '
			       || left(min(query), 80)
			FROM pg_stat_activity WHERE wait_event_type = 'Lock' GROUP BY wait_event_type, wait_event}));
		$cancel_session->query_safe('COMMIT');
		$enqueue_session->query_safe('COMMIT');
		$released = 1;
	}
	$bad .= MatchmakerLoad::violations_now($node);
	$not_idle++ if $node->safe_psql('postgres', $idle_query) ne '2';
	my $waiting = $node->safe_psql('postgres',
		"SELECT count(*) FROM matchmaker.tickets WHERE queue = 'flood' AND state = 'waiting'");
	$flood_peak = $waiting if $waiting > $flood_peak;
	$looks++;
	$pgbench->pump_nb if $pgbench->pumpable;
	$_->{h}->pump_nb for grep { $_->{h}->pumpable } @hostile;
	usleep(300_000);
}
$pgbench->finish;
my $end = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
$_->{h}->finish for @hostile;
is($pgbench->result(0), 0, 'the traffic pgbench completed') or diag($$err);
unlike($$out . $$err, qr/aborted|failed transactions: [1-9]/,
	'no traffic client aborted and no transaction failed');
my ($tx) = $$out =~ /number of transactions actually processed: (\d+)/;
ok($tx > 0, "the traffic committed transactions ($tx)");
my %hostile_tx;
for my $c (@hostile)
{
	is($c->{h}->result(0), 0, "the $c->{name} client completed") or diag(${ $c->{err} });
	unlike(${ $c->{out} } . ${ $c->{err} }, qr/aborted|failed transactions: [1-9]/,
		"the $c->{name} client did not abort and none of its transactions failed");
	($hostile_tx{ $c->{name} }) = ${ $c->{out} } =~ /number of transactions actually processed: (\d+)/;
	ok(($hostile_tx{ $c->{name} } // 0) > 0,
		"the $c->{name} client committed transactions (" . ($hostile_tx{ $c->{name} } // 0) . ')');
}
ok($looks > 0, "looked $looks times during the load");
is($bad, '', 'no violation of check() (but overdue) and no player waiting twice during the load');
is($not_idle, 0, 'both idle clients were idle in transaction at every look');

# Stop the listener once the last matches of the load have been heard.
usleep(1_000_000);
open my $fh, '>', $stop_file or die "could not write $stop_file: $!";
close $fh;
$listener->finish;
like($lout, qr/heard [1-9]/, 'the listener heard matches') or diag($lerr);

# The idle clients are still there, idle in transaction since before the
# load; the cancelled ticket still waits for every other session, and no
# tick has put it in a match.
is( $node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_stat_activity
		WHERE pid IN ($idle_pids) AND state = 'idle in transaction' AND xact_start < '$start'}),
	'2', 'the idle clients sat idle in transaction through the whole load');
is($node->safe_psql('postgres', "SELECT state FROM matchmaker.tickets WHERE id = $cancelled_ticket"),
	'waiting', 'the uncommitted cancel left its ticket to no match');

# Every traffic queue kept matching: a match in every 3-second window of
# the traffic, which ends $seconds s after its start (the hostile clients
# may run on for a few seconds, in a last transaction, after it).
is( $node->safe_psql('postgres', qq{
		SELECT string_agg(q || ' from ' || to_char(w, 'HH24:MI:SS.MS'), ', ' ORDER BY q, w)
		FROM unnest(ARRAY['duel', 'batch', 'ranges', 'squad', 'trio', 'widen', 'clump', 'rounds']) q,
		     generate_series('$start'::timestamptz,
		                     least('$end'::timestamptz, '$start'::timestamptz + interval '$seconds s') - interval '3 s',
		                     interval '3 s') w
		WHERE NOT EXISTS (SELECT 1 FROM matchmaker.matches m
		                  WHERE m.queue = q AND m.created_at >= w AND m.created_at < w + interval '3 s')}),
	'', 'every traffic queue made matches in every 3 seconds of the load');

# Enqueue-to-NOTIFY: from the commit of a match's last enqueue (the first
# commit of each ticket: retries log it again) to the NOTIFY's arrival.
# Matches with computer players are due at max_wait, not at an arrival.
my $latency = q{
	WITH heard AS (
		SELECT (payload->>'match')::bigint AS match, min(arrived) AS arrived
		FROM notify_log WHERE payload->>'event' = 'matched' GROUP BY 1),
	committed AS (
		SELECT ticket, min(pg_xact_commit_timestamp(xmin)) AS at FROM enqueue_log GROUP BY ticket),
	due AS (
		SELECT m.id AS match, m.queue, max(c.at) AS at, count(*) = count(c.at) AS complete
		FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
		LEFT JOIN committed c ON c.ticket = t.id
		WHERE m.bots = 0 GROUP BY m.id, m.queue),
	ms AS (
		SELECT d.queue, extract(epoch FROM h.arrived - d.at) * 1000 AS ms
		FROM heard h JOIN due d USING (match) WHERE d.complete)};
my $per_queue = $node->safe_psql('postgres', $latency . q{
	SELECT format('%s: %s matches, median %s ms, p99 %s ms, max %s ms', queue, count(*),
	              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1),
	              round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1),
	              round(max(ms)::numeric, 1))
	FROM ms GROUP BY queue ORDER BY queue});
note("enqueue-to-NOTIFY per queue (the greedy ones asserted):\n$per_queue");
my ($count, $p99) = split /\|/, $node->safe_psql('postgres', $latency . qq{
	SELECT count(*), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1)
	FROM ms WHERE queue IN ('@{[ join "', '", @greedy ]}')});
ok($count >= 100, "enough greedy matches were heard to measure ($count)");
ok($p99 < $p99_bound, "enqueue-to-NOTIFY p99 of the greedy traffic queues under $p99_bound ms ($p99 ms)");

# What the listener heard (its matched events; a drop_queue's "dropped"
# event names tickets too): no match twice, no ticket in two matches, each
# match as it is in the tables.
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT payload->>'match' FROM notify_log WHERE payload->>'event' = 'matched'
		                      GROUP BY 1 HAVING count(*) > 1) x}),
	'0', 'no match was heard twice');
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT e.value FROM notify_log, jsonb_array_elements(payload->'tickets') e
		                      WHERE payload->>'event' = 'matched'
		                      GROUP BY 1 HAVING count(*) > 1) x}),
	'0', 'no ticket was heard in two matches');
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM notify_log n
		WHERE n.payload->>'event' = 'matched'
		  AND (SELECT array_agg(e.value::bigint ORDER BY e.value::bigint)
		       FROM jsonb_array_elements(n.payload->'tickets') e)
		      IS DISTINCT FROM
		      (SELECT array_agg(t.id ORDER BY t.id) FROM matchmaker.tickets t
		       WHERE t.match_id = (n.payload->>'match')::bigint)}),
	'0', 'every heard match has the tickets the tables give it');

# The flood: thousands of tickets, each with its own 64 regions; the queue
# kept its rounds and matched.
my ($flood_tickets, $flood_matches) = split /\|/, $node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM matchmaker.tickets WHERE queue = 'flood'),
	       (SELECT count(*) FROM matchmaker.matches WHERE queue = 'flood')});
ok($flood_tickets >= 1000, "the flood enqueued thousands of tickets ($flood_tickets, at most $flood_peak waiting at once)");
ok($flood_matches > 0, "the flooded queue matched ($flood_matches matches)");
is( $node->safe_psql('postgres', q{
		SELECT count(*) FROM matchmaker.tickets
		WHERE queue IN ('ranges', 'rounds') AND player LIKE 'large%' AND pg_column_size(attributes) > 1000000}),
	$hostile_tx{large}, 'every ticket of the large client holds 1 MB of attributes');
is($node->safe_psql('postgres', q{SELECT count(*) FROM matchmaker.queues WHERE name LIKE 'adm%'}),
	'0', 'the admin dropped every queue it created');

# Release the idle clients: the cancel commits, the enqueue commits and
# its ticket is matched (with computer players, in squad).
if (!$released)
{
	$cancel_session->query_safe('COMMIT');
	$enqueue_session->query_safe('COMMIT');
}
$cancel_session->quit;
$enqueue_session->quit;
is($node->safe_psql('postgres', "SELECT state FROM matchmaker.tickets WHERE id = $cancelled_ticket"),
	'cancelled', 'the released cancel ended its ticket');
MatchmakerLoad::wait_drained($node, 'after the hostile load');
is($node->safe_psql('postgres', "SELECT state FROM matchmaker.tickets WHERE id = $idle_ticket"),
	'matched', 'the released enqueue was matched');

MatchmakerLoad::check_log($node, 'after the hostile load');
ok(!$node->log_contains('matchmaker: queue "[^"]*" failed'), 'no queue failed in the workers');
note("$clients clients for $seconds s, $tx transactions, "
	  . join(', ', map { "$_ $hostile_tx{$_}" } sort keys %hostile_tx)
	  . " hostile transactions: " . MatchmakerLoad::summary($node));

$node->stop;
done_testing();
