# The background worker: it matches without a manual tick, comes back after
# kill -9 and pg_terminate_backend, follows a reload, survives DROP and
# CREATE EXTENSION, idles quietly without the extension, keeps going when one
# queue fails, can be disabled, and runs queues at arrivals and rounds
# (periodic batches, optimize, multi_queue with a second criterion), a busy
# one spaced by matchmaker.arrival_delay.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;
use IPC::Run;
use MatchmakerLoad;

my $node = PostgreSQL::Test::Cluster->new('worker');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
# one worker, so that "the worker" below is one process
matchmaker.workers_per_database = 1
matchmaker.naptime = '200ms'
restart_after_crash = on
});
$node->start;

# Matches with a ticket count other than k, or a ticket in two places: none.
sub check_matches
{
	my ($label) = @_;
	my $bad = $node->safe_psql('postgres', q{
		SELECT count(*) FROM (
		  SELECT m.id FROM matchmaker.matches m
		  JOIN matchmaker.queues q ON q.name = m.queue
		  LEFT JOIN matchmaker.tickets t ON t.match_id = m.id
		  GROUP BY m.id, q.team_size, q.teams, m.bots
		  HAVING count(t.id) + m.bots <> q.team_size * q.teams) AS x});
	is($bad, '0', "$label: every match has k participants");
	my $inconsistent = $node->safe_psql('postgres', q{
		SELECT count(*) FROM matchmaker.tickets
		WHERE (state = 'matched') <> (match_id IS NOT NULL)});
	is($inconsistent, '0', "$label: a ticket is matched exactly when it has a match");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
		"$label: matchmaker.check() finds nothing");
}

# Create the extension and a greedy 1v1 queue, and enqueue players a and b.
sub create_duel
{
	$node->safe_psql('postgres', q{
		CREATE EXTENSION matchmaker;
		SELECT matchmaker.create_queue('duel', algorithm => 'greedy', tick => '100 ms');
		SELECT matchmaker.enqueue('duel', 'a', 0.1);
		SELECT matchmaker.enqueue('duel', 'b', 0.2);
	});
}

# Wait until n tickets are matched.
sub matched_count_reaches
{
	my ($n) = @_;
	return $node->poll_query_until('postgres',
		"SELECT count(*) = $n FROM matchmaker.tickets WHERE state = 'matched'");
}

# Create greedy queues (tick 100 ms) named q and others, enqueue a pair in q,
# and wait until the worker has matched it.
sub pair_matched_in
{
	my ($q, @others) = @_;
	$node->safe_psql('postgres', join('',
		map { "SELECT matchmaker.create_queue('$_', algorithm => 'greedy', tick => '100 ms');" } ($q, @others))
		. "SELECT matchmaker.enqueue('$q', '${q}_1', 0.1); SELECT matchmaker.enqueue('$q', '${q}_2', 0.2);");
	return $node->poll_query_until('postgres',
		"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = '$q' AND state = 'matched'");
}

# 1. The extension is absent: the worker runs and logs nothing about it.
my $pid = MatchmakerLoad::worker_pid($node);
ok($pid > 0, 'worker starts with the server');
is($node->safe_psql('postgres',
	"SELECT wait_event_type FROM pg_stat_activity WHERE pid = $pid"), 'Extension',
	'worker waits on its latch with an extension wait event');
sleep 1;
ok(!$node->log_contains('ERROR'), 'no error while the extension is absent');

# 2. The worker matches without a manual tick.
create_duel();
ok(matched_count_reaches(2), 'worker matched the two tickets by itself');
check_matches('after the first match');
# queue_stats shows the match and the worker's last tick of the queue
ok($node->poll_query_until('postgres', q{
	SELECT matches_1m = 1 AND players_1m = 2 AND last_tick IS NOT NULL AND last_tick <= now()
	       AND last_tick_ms >= 0 AND lag_ms >= 0 AND next_tick > last_tick
	FROM matchmaker.queue_stats WHERE queue = 'duel'}),
	'queue_stats shows the match and the worker\'s last tick');

# 2b. The worker holds its ticks' statistics and writes them about a second
# later (above); those of a queue dropped and created again before they are
# written are not written, to the old queue or to the new one.
ok(pair_matched_in('brief'), 'worker matched the brief queue');
$node->safe_psql('postgres', q{
	SELECT matchmaker.drop_queue('brief');
	SELECT matchmaker.create_queue('brief', algorithm => 'greedy', tick => '100 ms');
});
sleep 2;
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM matchmaker.queue_buckets WHERE queue = 'brief')
	     + (SELECT count(*) FROM matchmaker.queue_bands WHERE queue = 'brief')}), '0',
	'statistics of a queue dropped before they were written are not written');
is($node->safe_psql('postgres', "SELECT matches_1m FROM matchmaker.queue_stats WHERE queue = 'brief'"),
	'0', 'the queue created again under that name shows no matches');
$node->safe_psql('postgres', "SELECT matchmaker.drop_queue('brief')");

# 2c. A tick() a client leaves open in a transaction holds the statistics
# rows it wrote, which the worker also holds counts for: the worker does not
# wait for it, another queue goes on matching, and once the client rolls
# back the worker's own counts are written (its match, not the client's).
ok(pair_matched_in('held', 'other'), 'worker matched the held queue');
my $client = $node->background_psql('postgres', on_error_stop => 1);
$client->query_safe('BEGIN');
$client->query_safe("SELECT matchmaker.enqueue('held', 'h3', 0.1), matchmaker.enqueue('held', 'h4', 0.2)");
$client->query_safe("SELECT matchmaker.tick('held')");
my $late = 0;
for my $i (1 .. 4)
{
	$node->safe_psql('postgres',
		"SELECT matchmaker.enqueue('other', 'o${i}a', 0.1), matchmaker.enqueue('other', 'o${i}b', 0.2)");
	sleep 2;
	$late += $node->safe_psql('postgres',
		"SELECT count(*) FROM matchmaker.tickets WHERE queue = 'other' AND state = 'waiting'");
}
is($late, 0, 'another queue is matched within 2 s while a client holds a tick open');
$client->query_safe('ROLLBACK');
$client->quit;
ok($node->poll_query_until('postgres',
	"SELECT matches_1m = 1 FROM matchmaker.queue_stats WHERE queue = 'held'"),
	"the worker's counts are written once the client rolled back");
$node->safe_psql('postgres', "SELECT matchmaker.drop_queue('held'); SELECT matchmaker.drop_queue('other')");

# 3. A failing queue is logged with its name and does not stop another.
# It is retried 1 s after its first failure, 2 s after the second, and so
# on, whatever its tick interval (an hour here), and matches once the
# cause is gone (a trigger on matches that raises for its matches).
my $offset = -s $node->logfile;
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('broken', algorithm => 'greedy', tick => '1 hour', max_wait => '1 hour');
	CREATE FUNCTION break_matches() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF NEW.queue = 'broken' THEN RAISE EXCEPTION 'broken on purpose'; END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER break_matches BEFORE INSERT ON matchmaker.matches
		FOR EACH ROW EXECUTE FUNCTION break_matches();
});
my $t0 = Time::HiRes::time();
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('broken', 'x', 0.5);
	SELECT matchmaker.enqueue('broken', 'y', 0.5);
	SELECT matchmaker.enqueue('duel', 'c', 0.3);
	SELECT matchmaker.enqueue('duel', 'd', 0.4);
});
ok(matched_count_reaches(4),
	'queue duel keeps matching while queue broken fails');
$node->wait_for_log(qr/matchmaker: queue "broken" failed: broken on purpose/, $offset);
pass('the failing queue is logged with its name');
$node->wait_for_log(qr/queue again in 4 s \(it failed 3 times in a row\)/, $offset);
my $third = Time::HiRes::time() - $t0;
cmp_ok($third, '<', 15,
	sprintf('with a tick of an hour, the failing queue is tried again after 1 s and 2 s (third failure after %.1f s)', $third));
ok($node->log_contains(qr/queue again in 1 s;/, $offset)
	  && $node->log_contains(qr/queue again in 2 s \(it failed 2 times in a row\)/, $offset),
	'each failure logs when the queue runs again');
# worker_queues() and queue_stats show the failures in a row and the
# latest error; a queue that never failed has none
ok($node->poll_query_until('postgres', q{
	SELECT failures >= 3 AND last_error = 'broken on purpose'
	       AND last_error_at BETWEEN now() - interval '1 minute' AND now()
	FROM matchmaker.worker_queues() WHERE queue = 'broken'}),
	'worker_queues() counts the failures in a row and keeps the error');
is($node->safe_psql('postgres', q{
	SELECT (SELECT failures >= 3 AND last_error = 'broken on purpose'
	        FROM matchmaker.queue_stats WHERE queue = 'broken')
	    || ' ' || (SELECT failures = 0 AND last_error IS NULL AND last_error_at IS NULL
	        FROM matchmaker.queue_stats WHERE queue = 'duel')}),
	'true true', 'queue_stats shows them, and nothing for a queue that never failed');

# During its backoff (8 s after the fourth failure) its arrivals wake no
# worker (it runs when the backoff ends anyway), and changes to other
# queues do not end the backoff; an update of its own row does, and its
# failures are counted from one again.
$node->wait_for_log(qr/queue again in 8 s \(it failed 4 times in a row\)/, $offset);
my $wpid = MatchmakerLoad::worker_pid($node);
my $off4 = -s $node->logfile;
# The worker's wake-ups while N players named PREFIX1.. enqueue into queue
# broken, each in a transaction of its own (undef without /proc).
sub wakeups_of_enqueues
{
	my ($n, $prefix) = @_;
	my $before = MatchmakerLoad::voluntary_switches($wpid);
	$node->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
			FOR i IN 1 .. $n LOOP
				PERFORM matchmaker.enqueue('broken', '$prefix' || i, 0.5);
				COMMIT;
			END LOOP;
		END \$\$;
	});
	return defined $before ? MatchmakerLoad::voluntary_switches($wpid) - $before : undef;
}
my $woken = wakeups_of_enqueues(50, 'late');
SKIP:
{
	skip 'no voluntary_ctxt_switches in /proc/PID/status on this system', 1 unless defined $woken;
	cmp_ok($woken, '<', 15, "50 arrivals into a queue backing off wake the worker rarely (wake-ups: $woken)");
}
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('bystander');
	SELECT matchmaker.alter_queue('bystander', tick => '2 seconds');
	SELECT matchmaker.drop_queue('bystander');
});
# nor after those changes (each wakes the worker, to read the queues)
Time::HiRes::sleep(0.5);
$woken = wakeups_of_enqueues(20, 'later');
SKIP:
{
	skip 'no voluntary_ctxt_switches in /proc/PID/status on this system', 1 unless defined $woken;
	cmp_ok($woken, '<', 8, "nor 20 more after changes of another queue (wake-ups: $woken)");
}
Time::HiRes::sleep(0.5);
ok(!$node->log_contains(qr/queue "broken" failed/, $off4),
	'arrivals and changes of other queues do not end the backoff');
my $off5 = -s $node->logfile;
$node->safe_psql('postgres', "SELECT matchmaker.alter_queue('broken', max_wait => '2 hours')");
$node->wait_for_log(qr/queue "broken" failed: broken on purpose\n.*HINT:  [^\n]*again in/, $off5);
ok($node->log_contains(qr/queue "broken" failed: broken on purpose\n.*HINT:  The worker runs the queue again in 1 s;/, $off5),
	'an update of its own row runs the failing queue at once, its failures counted from one again');

$node->safe_psql('postgres', 'DROP TRIGGER break_matches ON matchmaker.matches');
$t0 = Time::HiRes::time();
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 72 FROM matchmaker.tickets WHERE queue = 'broken' AND state = 'matched'"),
	'the queue matches once the cause of its failures is gone, the arrivals during its backoff included');
my $back = Time::HiRes::time() - $t0;
cmp_ok($back, '<', 20, sprintf('within its backoff, %.1f s', $back));
is($node->safe_psql('postgres', q{
	SELECT failures || ' ' || last_error FROM matchmaker.worker_queues() WHERE queue = 'broken'}),
	'0 broken on purpose', 'a tick that succeeds ends the failures in a row; the last error stays');
# The same name made anew, in one transaction, is another queue: the
# old one's error is not its own.
$node->safe_psql('postgres', q{
	BEGIN;
	DELETE FROM matchmaker.tickets WHERE queue = 'broken';
	DELETE FROM matchmaker.matches WHERE queue = 'broken';
	SELECT matchmaker.drop_queue('broken');
	SELECT matchmaker.create_queue('broken', algorithm => 'greedy', tick => '1 hour', max_wait => '1 hour');
	COMMIT;
});
ok($node->poll_query_until('postgres', q{
	SELECT failures = 0 AND last_error IS NULL AND last_error_at IS NULL
	FROM matchmaker.worker_queues() WHERE queue = 'broken'}),
	'a queue dropped and created again under its name does not show the old one\'s error');
# the counts of matched tickets below are of the other queues
$node->safe_psql('postgres', q{
	DELETE FROM matchmaker.tickets WHERE queue = 'broken';
	DELETE FROM matchmaker.matches WHERE queue = 'broken';
	DELETE FROM matchmaker.queues WHERE name = 'broken';
	DROP FUNCTION break_matches();
});

# 4. A reload changes naptime.
$offset = -s $node->logfile;
$node->append_conf('postgresql.conf', "matchmaker.naptime = '350ms'");
$node->reload;
$node->wait_for_log(qr/matchmaker worker: naptime is now 350 ms/, $offset);
pass('reload changes naptime');

# 5. pg_terminate_backend does not disable the worker for good.
$pid = MatchmakerLoad::worker_pid($node);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'matchmaker worker' AND pid <> $pid")
  or die 'worker did not come back';
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('duel', 'e', 0.5);
	SELECT matchmaker.enqueue('duel', 'f', 0.6);
});
ok(matched_count_reaches(6),
	'the restarted worker matches after pg_terminate_backend');

# 6. kill -9 of the worker: crash restart, committed matches survive, no
# ticket is matched twice, matching resumes.
$pid = MatchmakerLoad::worker_pid($node);
my $before = $node->safe_psql('postgres',
	"SELECT string_agg(id || ':' || match_id, ',' ORDER BY id) FROM matchmaker.tickets WHERE state = 'matched'");
kill 'KILL', $pid;
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'matchmaker worker' AND pid <> $pid")
  or die 'worker did not come back after kill -9';
is($node->safe_psql('postgres',
	"SELECT string_agg(id || ':' || match_id, ',' ORDER BY id) FROM matchmaker.tickets WHERE state = 'matched'"),
	$before, 'matches committed before kill -9 are unchanged');
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('duel', 'g', 0.7);
	SELECT matchmaker.enqueue('duel', 'h', 0.8);
});
ok(matched_count_reaches(8),
	'matching resumes after kill -9');
check_matches('after kill -9');

# 7. DROP and CREATE EXTENSION while the worker runs.
$pid = MatchmakerLoad::worker_pid($node);
$offset = -s $node->logfile;
$node->safe_psql('postgres', 'DROP EXTENSION matchmaker');
sleep 1;
is(MatchmakerLoad::worker_pid($node), $pid, 'the worker lives on after DROP EXTENSION');
create_duel();
ok(matched_count_reaches(2), 'the worker matches again after CREATE EXTENSION');
ok(!$node->log_contains('ERROR', $offset), 'no error in the log around DROP and CREATE EXTENSION');

# 7b. DROP EXTENSION and CREATE EXTENSION right after it, while the worker
# ticks 100 queues: the ticks the drop interrupted are not logged as
# failures of their queues (the extension they were read from is gone).
$offset = -s $node->logfile;
for my $round (1 .. 3)
{
	$node->safe_psql('postgres', q{
		SELECT count(matchmaker.create_queue('many' || i, algorithm => 'greedy', tick => '100 ms'))
		FROM generate_series(1, 100) i});
	sleep 1;
	$node->safe_psql('postgres', 'DROP EXTENSION matchmaker CASCADE');
	$node->safe_psql('postgres', 'CREATE EXTENSION matchmaker');
}
sleep 1;
ok(!$node->log_contains('failed', $offset), 'no queue failure logged around DROP and CREATE EXTENSION');
# as after 7: the duel queue with its first match
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('duel', algorithm => 'greedy', tick => '100 ms');
	SELECT matchmaker.enqueue('duel', 'a', 0.1);
	SELECT matchmaker.enqueue('duel', 'b', 0.2);
});
ok(matched_count_reaches(2), 'the worker matches again after the last CREATE EXTENSION');

# 8. matchmaker.enabled = off: the worker idles; on again: it matches.
# naptime is an hour meanwhile, and the queues run only at wake-ups (their
# tick intervals are an hour too), so a wake-up lost would leave their
# players waiting.
$node->safe_psql('postgres', q{
	SELECT matchmaker.alter_queue('duel', tick => '1 hour', max_wait => '1 hour');
	SELECT matchmaker.create_queue('hour_pair', algorithm => 'greedy', max_wait => '1 hour', tick => '1 hour');
});
$node->append_conf('postgresql.conf', "matchmaker.enabled = off\nmatchmaker.naptime = '1h'");
$node->reload;
$node->wait_for_log(qr/matchmaker worker: disabled/);
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('duel', 'c', 0.3);
	SELECT matchmaker.enqueue('duel', 'd', 0.4);
});
sleep 1;
is($node->safe_psql('postgres', "SELECT count(*) FROM matchmaker.tickets WHERE state = 'waiting'"),
	'2', 'a disabled worker leaves tickets waiting');

# While disabled, committed enqueues and cancels wake no worker: 300
# transactions of each, and the worker sleeps on (its voluntary context
# switches, from /proc, count each wake-up).
my @workers = split /\n/, $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'matchmaker worker'");
sub worker_switches
{
	my $sum;
	for my $pid (@workers)
	{
		my $n = MatchmakerLoad::voluntary_switches($pid);
		return undef unless defined $n;
		$sum += $n;
	}
	return $sum;
}
SKIP:
{
	my $before = worker_switches();
	skip 'no voluntary_ctxt_switches in /proc/PID/status on this system', 2
	  unless defined $before && @workers > 0;
	$node->safe_psql('postgres', q{
		DO $$
		BEGIN
			FOR i IN 1 .. 300 LOOP
				PERFORM matchmaker.cancel(matchmaker.enqueue('duel', 'quiet' || i, 0.5));
				COMMIT;
				PERFORM matchmaker.enqueue('duel', 'quiet' || i, 0.5);
				COMMIT;
			END LOOP;
		END $$;
		DELETE FROM matchmaker.tickets WHERE player LIKE 'quiet%';
	});
	my $woken = worker_switches() - $before;
	cmp_ok($woken, '<', 30, "600 commits with arrivals and cancels wake a disabled worker rarely (wake-ups: $woken)");

	# A naptime lowered by a reload applies to the disabled workers' next
	# sleep, not after the hour they were sleeping: 100 ms, so about 20
	# wake-ups each in 2 s (one, for the reload, if the hour still held).
	my $offset = -s $node->logfile;
	$node->append_conf('postgresql.conf', "matchmaker.naptime = '100ms'");
	$node->reload;
	$node->wait_for_log(qr/matchmaker worker: naptime is now 100 ms/, $offset);
	$before = worker_switches();
	sleep 2;
	$woken = worker_switches() - $before;
	cmp_ok($woken, '>=', 10, "a disabled worker sleeps the naptime set by the last reload (wake-ups in 2 s: $woken)");
	$offset = -s $node->logfile;
	$node->append_conf('postgresql.conf', "matchmaker.naptime = '1h'");
	$node->reload;
	$node->wait_for_log(qr/matchmaker worker: naptime is now 3600000 ms/, $offset);
}

# A session whose statement began while the worker was disabled still has
# the old setting when it commits after the reload that enables it: its
# arrivals must still reach the worker.
my ($in, $out, $err) = ('', '', '');
my $stale = IPC::Run::start(
	[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-c', q{
		DO $$
		BEGIN
			PERFORM pg_sleep(2);
			PERFORM matchmaker.enqueue('hour_pair', 'h1', 0.5);
			COMMIT;
			PERFORM matchmaker.enqueue('hour_pair', 'h2', 0.5);
			COMMIT;
		END $$;
	} ], \$in, \$out, \$err);
sleep 1;
$node->append_conf('postgresql.conf', 'matchmaker.enabled = on');
$node->reload;
$stale->finish;
is($err, '', 'the enqueues that straddle the reload succeed');
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM matchmaker.tickets WHERE state = 'waiting'"),
	'an enabled worker matches them, those enqueued by a session that had not reloaded included');
$node->append_conf('postgresql.conf', "matchmaker.naptime = '350ms'");
$node->reload;

# 8b. A reload that disables the worker takes effect between two runs: a
# queue's run lasts 2 s (a trigger on its matches), another queue falls
# due meanwhile, and the worker is disabled meanwhile: the second queue is
# not run after the first, until the worker is enabled again.
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('first', algorithm => 'greedy', max_wait => '1 hour', tick => '1 hour');
	SELECT matchmaker.create_queue('second', algorithm => 'greedy', max_wait => '1 hour', tick => '1 hour');
	CREATE FUNCTION slow_matches() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF NEW.queue = 'first' THEN PERFORM pg_sleep(2); END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER slow_matches AFTER INSERT ON matchmaker.matches
		FOR EACH ROW EXECUTE FUNCTION slow_matches();
});
# the new queues' first runs are over
sleep 1;
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('first', 'f1', 0.5);
	SELECT matchmaker.enqueue('first', 'f2', 0.5);
});
$node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE backend_type = 'matchmaker worker' AND wait_event = 'PgSleep'})
  or die 'the run of queue first did not begin';
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('second', 's1', 0.5);
	SELECT matchmaker.enqueue('second', 's2', 0.5);
});
$offset = -s $node->logfile;
$node->append_conf('postgresql.conf', "matchmaker.enabled = off");
$node->reload;
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'first' AND state = 'matched'"),
	'the run under way when the worker is disabled ends');
$node->wait_for_log(qr/matchmaker worker: disabled/, $offset);
sleep 1;
is($node->safe_psql('postgres',
	"SELECT count(*) FROM matchmaker.tickets WHERE queue = 'second' AND state = 'waiting'"),
	'2', 'the queue due after it is not run once the worker is disabled');
$node->append_conf('postgresql.conf', 'matchmaker.enabled = on');
$node->reload;
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'second' AND state = 'matched'"),
	'enabled again, the worker runs it');
$node->safe_psql('postgres', q{
	DROP TRIGGER slow_matches ON matchmaker.matches;
	DROP FUNCTION slow_matches();
	SELECT matchmaker.drop_queue('first');
	SELECT matchmaker.drop_queue('second');
});

# 10. A periodic queue that needs more players is not run at every enqueue,
# but at once when its batch is complete (its tick interval and max_wait are
# an hour, so only the arrival count can run it in time).
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('batch4', algorithm => 'periodic', max_wait => '1 hour',
		tick => '1 hour', params => '{"batch": 4}');
	SELECT matchmaker.create_queue('pair', algorithm => 'greedy', max_wait => '1 hour', tick => '1 hour');
});
for my $i (1 .. 3)
{
	$node->safe_psql('postgres', "SELECT matchmaker.enqueue('batch4', 'b$i', 0.$i)");
}
$node->safe_psql('postgres', "SELECT matchmaker.enqueue('pair', 'solo', 0.5)");
$node->safe_psql('postgres', "SELECT matchmaker.cancel(matchmaker.enqueue('pair', 'gone', 0.5))");
$node->safe_psql('postgres', "SELECT matchmaker.enqueue('batch4', 'b4', 0.4)");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 4 FROM matchmaker.tickets WHERE queue = 'batch4' AND state = 'matched'"),
	'the fourth arrival runs a periodic queue of batch 4 at once');
$node->safe_psql('postgres', "SELECT matchmaker.enqueue('pair', 'second', 0.6)");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'pair' AND state = 'matched'"),
	'after a cancel, the next arrival still completes a greedy pair at once');

# 11. An optimize queue is run at its rounds (every second here): two
# players who enqueue are matched at the next round, by the worker alone.
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('rounds', algorithm => 'optimize', max_wait => '1 hour',
		tick => '1 hour', params => '{"round": 1}');
	SELECT matchmaker.enqueue('rounds', 'r1', 0.4, '{"ping": {"eu": 20}}');
	SELECT matchmaker.enqueue('rounds', 'r2', 0.6, '{"ping": {"eu": 30}}');
});
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'rounds' AND state = 'matched'"),
	'the worker holds an optimize round at its time');
check_matches('after the optimize round');

# 12. A multi_queue queue with a second criterion: the worker matches the
# two players who share a cell (rating and latency range) as soon as the
# second arrives, and leaves the one of the same rating range but another
# latency range waiting.
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('cells', algorithm => 'multi_queue', max_wait => '1 hour',
		tick => '1 hour', params => '{"ranges": 4, "criteria": {"latency": {"min": 0, "max": 300}}}');
	SELECT matchmaker.enqueue('cells', 'c1', 0.1, '{"latency": 10}');
	SELECT matchmaker.enqueue('cells', 'c2', 0.15, '{"latency": 290}');
	SELECT matchmaker.enqueue('cells', 'c3', 0.12, '{"latency": 20}');
});
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'cells' AND state = 'matched'"),
	'the worker matches a full cell of a queue with criteria');
is($node->safe_psql('postgres', q{
	SELECT string_agg(player, ' ' ORDER BY player) FROM matchmaker.tickets
	WHERE queue = 'cells' AND state = 'matched' GROUP BY match_id}),
	'c1 c3', 'the match is the cell of rating and latency, not of the rating alone');
is($node->safe_psql('postgres',
	"SELECT player FROM matchmaker.tickets WHERE queue = 'cells' AND state = 'waiting'"),
	'c2', 'the player of another latency range waits');
check_matches('after the queue with criteria');

# 13. matchmaker.arrival_delay: a busy queue that arrivals wake runs no
# sooner than ten times its last run's duration after that run began, and
# no later than the setting, so one run serves the arrivals of that time;
# with 0 it runs at every wake-up.  A statement trigger on matches makes each run that
# matches last at least 50 ms; a pair arrives every 20 ms for 2 s.  The
# matches of one run share their created_at.
$node->safe_psql('postgres', q{
	CREATE FUNCTION slow_run() RETURNS trigger LANGUAGE plpgsql
	AS $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$;
	CREATE TRIGGER slow_run AFTER INSERT ON matchmaker.matches
	FOR EACH STATEMENT EXECUTE FUNCTION slow_run();
});
sub steady_runs
{
	my ($queue, $delay, $tick) = @_;
	$tick //= '1 hour';
	$node->safe_psql('postgres', "ALTER SYSTEM SET matchmaker.arrival_delay = '$delay'");
	$node->reload;
	sleep 1;
	$node->safe_psql('postgres', "SELECT matchmaker.create_queue('$queue', algorithm => 'greedy', max_wait => '1 hour', tick => '$tick')");
	@workers = split /\n/, $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'matchmaker worker'");
	my $switches = worker_switches();
	my $start = Time::HiRes::time();
	$node->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
			FOR i IN 1 .. 100 LOOP
				PERFORM matchmaker.enqueue('$queue', 'a' || i, 0.5);
				PERFORM matchmaker.enqueue('$queue', 'b' || i, 0.5);
				COMMIT;
				PERFORM pg_sleep(0.02);
			END LOOP;
		END \$\$;
	});
	ok($node->poll_query_until('postgres',
		"SELECT count(*) = 200 FROM matchmaker.tickets WHERE queue = '$queue' AND state = 'matched'"),
		"arrival_delay $delay: the worker matches the 100 pairs");
	my $elapsed = Time::HiRes::time() - $start;
	my $woken = defined $switches ? worker_switches() - $switches : undef;
	return ($node->safe_psql('postgres',
		"SELECT count(DISTINCT created_at) FROM matchmaker.matches WHERE queue = '$queue'"), $elapsed, $woken);
}
my ($runs_delayed, $took, $woken_delayed) = steady_runs('steady_delayed', '1s');
# a run at most every 500 ms (ten times 50 ms), the first two at once
my $most = int($took / 0.5) + 3;
cmp_ok($runs_delayed, '<=', $most,
	sprintf('arrival_delay 1s: %d runs serve the 100 pairs in %.1f s', $runs_delayed, $took));
# and the arrivals while a run waits do not wake the worker: its wake-ups
# (about 20) are its runs with their 50 ms sleep, its timers and naptime,
# not one per commit (about 100 more when each commit woke it)
SKIP:
{
	skip 'no /proc/PID/status on this system', 1 unless defined $woken_delayed;
	cmp_ok($woken_delayed, '<', 100,
		sprintf('arrival_delay 1s: %d wake-ups of the worker for 100 commits in %.1f s', $woken_delayed, $took));
}
# capped at the setting: 100 ms apart, not ten times 50 ms
my ($runs_capped, $took_capped) = steady_runs('steady_capped', '100ms');
cmp_ok($runs_capped, '>', int($took_capped / 0.5) + 3,
	sprintf('arrival_delay 100ms: %d runs in %.1f s, more than at 500 ms apart', $runs_capped, $took_capped));
# a timer is not held back: with a tick of 100 ms the busy queue runs at
# its tick (about every 150 ms with its 50 ms run), not only at the end
# of each 500 ms wait for arrivals
my ($runs_ticked, $took_ticked) = steady_runs('steady_ticked', '1s', '100 ms');
cmp_ok($runs_ticked, '>', int($took_ticked / 0.5) + 3,
	sprintf('arrival_delay 1s, tick 100 ms: %d runs in %.1f s, more than at 500 ms apart', $runs_ticked, $took_ticked));
my ($runs_at_once) = steady_runs('steady_at_once', '0');
cmp_ok($runs_at_once, '>=', 15, "arrival_delay 0: a run at each wake-up ($runs_at_once runs)");
$node->safe_psql('postgres', q{
	DROP TRIGGER slow_run ON matchmaker.matches;
	DROP FUNCTION slow_run();
	ALTER SYSTEM RESET matchmaker.arrival_delay;
});
$node->reload;
check_matches('after the steady feeds');

# 9. DROP DATABASE of another database is not blocked by the worker.
$node->safe_psql('postgres', 'CREATE DATABASE scratch');
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE scratch', timeout => 30);
is($ret, 0, 'DROP DATABASE of another database completes');

$node->stop;
done_testing();
