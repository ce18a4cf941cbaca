# Retention with the worker: with matchmaker.retention set (a reload), the
# worker removes each queue's ended rows older than it by itself, in
# batches of 1000, while matching goes on; recent rows stay and check()
# holds throughout.  0 keeps everything.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MatchmakerLoad;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = MatchmakerLoad::worker_node('retention', 'matchmaker.retention = 0',
	'matchmaker.enabled = off');
$node->safe_psql('postgres', q{
	SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour', tick => '200 ms');
});

sub sql { return $node->safe_psql('postgres', $_[0]); }

# 2,500 old matches (5,000 tickets), made by a tick a day ago, and 300
# cancelled tickets that ended a day ago
sql(q{
	SELECT count(matchmaker.enqueue('duel', 'old' || i, (i / 2) / 2500.0)) FROM generate_series(0, 4999) i;
	UPDATE matchmaker.tickets SET enqueued_at = now() - interval '1 day 1 second';
	SELECT matchmaker.tick('duel', now() - interval '1 day');
	SELECT count(matchmaker.cancel(matchmaker.enqueue('duel', 'gone' || i, 0.5))) FROM generate_series(1, 300) i;
	UPDATE matchmaker.tickets SET ended_at = now() - interval '1 day' WHERE state = 'cancelled';
});
is(sql("SELECT count(*) FROM matchmaker.matches"), '2500', '2,500 old matches');
# the worker runs with retention 0: it matches, and keeps everything
$node->append_conf('postgresql.conf', "matchmaker.enabled = on");
$node->reload;
sql("SELECT matchmaker.enqueue('duel', 'kept_a', 0.5), matchmaker.enqueue('duel', 'kept_b', 0.5)");
ok($node->poll_query_until('postgres', "SELECT count(*) = 2 FROM matchmaker.tickets WHERE player LIKE 'kept%' AND state = 'matched'"),
	'the worker matches');
sleep 1;
is(sql("SELECT count(*) FROM matchmaker.tickets WHERE player LIKE 'old%' OR player LIKE 'gone%'"), '5300',
	'retention 0 keeps everything');

# retention one hour: the worker removes the day-old rows by itself (in
# batches of 1000 of each kind), while a new pair is matched and stays
$node->append_conf('postgresql.conf', "matchmaker.retention = '1h'");
$node->reload;
sql("SELECT matchmaker.enqueue('duel', 'new_a', 0.5), matchmaker.enqueue('duel', 'new_b', 0.5)");
ok($node->poll_query_until('postgres', "SELECT count(*) = 0 FROM matchmaker.tickets WHERE player LIKE 'old%' OR player LIKE 'gone%'"),
	'the worker removed the old tickets');
is(sql("SELECT count(*) FROM matchmaker.matches"), '2', 'only the recent matches are left');
is(sql("SELECT string_agg(player || ':' || state, ' ' ORDER BY player) FROM matchmaker.tickets"),
	'kept_a:matched kept_b:matched new_a:matched new_b:matched', 'the recent pairs are matched and kept');
is(sql('SELECT count(*) FROM matchmaker.check()'), '0', 'matchmaker.check() finds nothing');
ok(!$node->log_contains('removing old rows'), 'no removal failed');

# An admin's drop_queue left open in a transaction (it deletes the same
# rows as a removal, in another order) stalls no worker: their removal
# skips that queue while it is held, matching and the other queue's
# removals go on, and its removal resumes once it rolls back.
# (the workers are paused while the queue is set up, so that none removes
# its old rows before the drop_queue holds it)
$node->append_conf('postgresql.conf', "matchmaker.enabled = off");
$node->reload;
sleep 2;
sql(q{
	SELECT matchmaker.create_queue('doomed', algorithm => 'greedy', tick => '200 ms');
	SELECT count(matchmaker.cancel(matchmaker.enqueue('doomed', 'doomed' || i, 0.5))) FROM generate_series(1, 50) i;
	UPDATE matchmaker.tickets SET ended_at = now() - interval '1 day' WHERE queue = 'doomed';
});
my $admin = $node->background_psql('postgres', on_error_stop => 1);
$admin->query_safe('BEGIN');
$admin->query_safe("SELECT matchmaker.drop_queue('doomed')");
$node->append_conf('postgresql.conf', "matchmaker.enabled = on");
$node->reload;
sql(q{
	SELECT count(matchmaker.cancel(matchmaker.enqueue('duel', 'later' || i, 0.5))) FROM generate_series(1, 20) i;
	UPDATE matchmaker.tickets SET ended_at = now() - interval '1 day' WHERE player LIKE 'later%';
});
ok($node->poll_query_until('postgres', "SELECT count(*) = 0 FROM matchmaker.tickets WHERE player LIKE 'later%'"),
	"the other queue's old rows are removed meanwhile");
my $waiting_workers = 0;
for my $i (1 .. 12)
{
	$waiting_workers += sql(q{SELECT count(*) FROM pg_stat_activity
		WHERE backend_type = 'matchmaker worker' AND wait_event_type = 'Lock'});
	sleep 1;
}
is($waiting_workers, 0, 'no worker waited for a lock in 12 s (the removal runs every 10 s)');
sql("SELECT matchmaker.enqueue('duel', 'during_a', 0.5), matchmaker.enqueue('duel', 'during_b', 0.5)");
ok($node->poll_query_until('postgres', "SELECT count(*) = 2 FROM matchmaker.tickets WHERE player LIKE 'during%' AND state = 'matched'"),
	'the worker matches meanwhile');
is(sql("SELECT count(*) FROM matchmaker.tickets WHERE queue = 'doomed'"), '50', "the held queue's rows are left alone");
$admin->query_safe('ROLLBACK');
$admin->quit;
ok($node->poll_query_until('postgres', "SELECT count(*) = 0 FROM matchmaker.tickets WHERE queue = 'doomed'"),
	"once the drop_queue rolled back, the queue's old rows are removed");
is(sql('SELECT count(*) FROM matchmaker.check()'), '0', 'matchmaker.check() finds nothing');
ok(!$node->log_contains('removing old rows'), 'no removal failed');

$node->stop;
done_testing();
