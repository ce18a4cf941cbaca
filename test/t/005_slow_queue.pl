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
use MatchmakerLoad;

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

# While a worker runs a queue, that queue's arrivals wake no other
# worker: the one running it reads them when its run ends, and runs the
# queue again.  A trigger makes each run of queue held that matches last
# 10 s.  Over 100 commits into held meanwhile (10 ms apart, so that each
# would find the other worker asleep), the other worker's wake-ups (its
# voluntary context switches) stay few, where each commit woke it before;
# once the run ends, the running worker matches those arrivals (the
# queues before are dropped, naptime and the ticks are long: only a
# wake-up runs a queue).  A queue
# created meanwhile whose name hashes to the same wake bit as held gets
# the other worker at once, before held's run ends.
$node->safe_psql('postgres', q{
	SELECT matchmaker.drop_queue(name) FROM matchmaker.queues;
	SELECT matchmaker.create_queue('held', algorithm => 'greedy', tick => '1 hour', max_wait => '1 hour');
	CREATE FUNCTION slow_held() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF EXISTS (SELECT 1 FROM new_matches WHERE queue = 'held') THEN
			PERFORM pg_sleep(10);
		END IF;
		RETURN NULL;
	END $$;
	CREATE TRIGGER slow_held AFTER INSERT ON matchmaker.matches
	REFERENCING NEW TABLE AS new_matches FOR EACH STATEMENT EXECUTE FUNCTION slow_held();
	ALTER SYSTEM SET matchmaker.naptime = '1min';
	SELECT pg_reload_conf();
});
my $twin = $node->safe_psql('postgres', q{
	SELECT 'twin' || i FROM generate_series(1, 100000) i
	WHERE hashtext('twin' || i) & 1023 = hashtext('held') & 1023 LIMIT 1});
like($twin, qr/^twin\d+$/, "queue name $twin has the wake bit of queue held");
sleep(1);
$node->safe_psql('postgres', q{
	SELECT matchmaker.enqueue('held', 'h1', 0.5);
	SELECT matchmaker.enqueue('held', 'h2', 0.5);
});
my $held_running = "SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'matchmaker worker' AND query = 'tick queue held' AND state = 'active'";
ok($node->poll_query_until('postgres', $held_running), 'a worker runs queue held');
my $other = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'matchmaker worker' AND NOT (query = 'tick queue held' AND state = 'active')");
like($other, qr/^\d+$/, "the other worker ($other)");
my $t_feed = time();
SKIP:
{
	my $before = MatchmakerLoad::voluntary_switches($other);
	skip 'no voluntary_ctxt_switches in /proc/PID/status on this system', 1 unless defined $before;
	$node->safe_psql('postgres', q{
		DO $$
		BEGIN
			FOR i IN 1 .. 100 LOOP
				PERFORM matchmaker.enqueue('held', 'more' || i, 0.5);
				COMMIT;
				PERFORM pg_sleep(0.01);
			END LOOP;
		END $$;
	});
	my $woken = MatchmakerLoad::voluntary_switches($other) - $before;
	cmp_ok($woken, '<', 30,
		"100 commits into the queue a worker is running wake the other worker rarely (wake-ups: $woken)");
}
$node->safe_psql('postgres',
	"SELECT matchmaker.create_queue('$twin', algorithm => 'greedy', tick => '1 hour', max_wait => '1 hour')");
# its first run, which any new queue gets, and the statistics written a
# second after it are over before its players come: then only a wake-up
# gets the other worker to it
ok($node->poll_query_until('postgres',
	"SELECT last_tick IS NOT NULL FROM matchmaker.worker_queues() WHERE queue = '$twin'"),
	"the new queue $twin had its first run");
sleep(2);
# A pair enqueued into the twin queue while held runs is matched at once.
sub twin_pair
{
	my ($first, $second, $matched, $when) = @_;
	$node->safe_psql('postgres', qq{
		SELECT matchmaker.enqueue('$twin', '$first', 0.5);
		SELECT matchmaker.enqueue('$twin', '$second', 0.5);
	});
	ok($node->poll_query_until('postgres',
		"SELECT count(*) = $matched FROM matchmaker.tickets WHERE queue = '$twin' AND state = 'matched'"),
		"$twin, sharing held's wake bit, matches $first and $second");
	is($node->safe_psql('postgres', $held_running), 't', $when);
	cmp_ok($node->safe_psql('postgres', qq{
		SELECT extract(epoch FROM m.created_at - max(t.enqueued_at)) FROM matchmaker.matches m
		JOIN matchmaker.tickets t ON t.match_id = m.id
		WHERE m.queue = '$twin' AND t.player = '$second' GROUP BY m.id}),
		'<', 1, 'within a second of its second player');
}
twin_pair('t1', 't2', 2, "before held's run ends");
# the run that takes held's other 100 players: a queue of the same wake
# bit known when that run began gets the other worker at once too
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE queue = 'held' AND state = 'matched'"),
	"held's first run ended");
ok($node->poll_query_until('postgres', $held_running), "held's second run began");
twin_pair('t3', 't4', 4, "during held's second run");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 102 FROM matchmaker.tickets WHERE queue = 'held' AND state = 'matched'"),
	'the worker running held matches the arrivals of its run once it ends');
my $took_held = time() - $t_feed;
ok($took_held < 30, "at once (after $took_held s, two runs of 10 s), not at naptime");
$node->safe_psql('postgres', q{
	DROP TRIGGER slow_held ON matchmaker.matches;
	DROP FUNCTION slow_held();
	ALTER SYSTEM RESET matchmaker.naptime;
	SELECT pg_reload_conf();
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'matchmaker.check() finds nothing');

$node->stop;
done_testing();
