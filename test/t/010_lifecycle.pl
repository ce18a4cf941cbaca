# The match lifecycle with the background worker.  Ready checks: the worker proposes matches,
# players' accept() makes them ready; the worker enforces the timeout at
# accept_by itself (the queue's tick interval is 10 s, far longer), sends the
# player who accepted back to the front of the queue and groups him at once
# with the next arrival; a client idle in transaction after an accept()
# neither stops the queue nor makes the worker spin, and once it ends its
# proposal is settled.  Smaller matches (min_players): the worker plays
# three players of a 2v2 queue against each other at max_wait.  Backfill:
# a request is filled by the worker at the next arrival, and one left
# unfilled expires at its time.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('ready');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
matchmaker.workers_per_database = 1
matchmaker.naptime = '200ms'
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION matchmaker;
	SELECT matchmaker.create_queue('ranked', algorithm => 'greedy', max_wait => '1 hour',
	                               tick => '10 seconds', params => '{"accept_timeout": 2}');
});

sub sql { return $node->safe_psql('postgres', $_[0]); }

sub state_of { return sql("SELECT state FROM matchmaker.tickets WHERE player = '$_[0]'"); }

# 1. The worker proposes a match at the arrival of the second player; both
# accept: it is ready, with the proposal's id.
sql("SELECT matchmaker.enqueue('ranked', 'ann', 0.5), matchmaker.enqueue('ranked', 'bob', 0.5)");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE state = 'proposed'"),
	'the worker proposes ann against bob');
is(sql(q{SELECT matchmaker.accept(id) FROM matchmaker.tickets WHERE player = 'ann'}), 'proposed',
	'ann accepts: the proposal waits for bob');
is(sql(q{SELECT matchmaker.accept(id) FROM matchmaker.tickets WHERE player = 'bob'}), 'matched',
	'bob accepts: the match is ready');
is(sql(q{SELECT count(*) FROM matchmaker.matches m JOIN matchmaker.proposals p USING (id)
       WHERE p.state = 'ready'}), '1', 'the ready proposal is the match');

# 2. The timeout: cat accepts, dan never answers.  The worker dissolves the
# proposal at accept_by, not at its next regular tick 10 s later.
sql("SELECT matchmaker.enqueue('ranked', 'cat', 0.2), matchmaker.enqueue('ranked', 'dan', 0.2)");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE state = 'proposed' AND player IN ('cat', 'dan')"),
	'the worker proposes cat against dan');
is(sql(q{SELECT matchmaker.accept(id) FROM matchmaker.tickets WHERE player = 'cat'}), 'proposed',
	'cat accepts');
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM matchmaker.proposals WHERE state = 'dissolved' AND reason = 'timeout'"),
	'the worker dissolves the proposal for its timeout');
my $late = sql(q{SELECT extract(epoch FROM ended_at - accept_by) FROM matchmaker.proposals WHERE state = 'dissolved'});
cmp_ok($late, '>=', 0, 'not before accept_by');
cmp_ok($late, '<', 1.5, "within 1.5 s after accept_by (took $late s; the queue's tick is 10 s)");
is(state_of('dan'), 'declined', 'dan, who did not answer, is declined');
is(state_of('cat'), 'waiting', 'cat waits again');

# 3. cat is at the front: the next arrival is proposed against her at
# once, and her wait counts from her first enqueue.
sql("SELECT matchmaker.enqueue('ranked', 'eve', 0.9)");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE state = 'proposed' AND player IN ('cat', 'eve')"),
	'cat is proposed against the next arrival');
cmp_ok(sql(q{SELECT extract(epoch FROM matched_at - enqueued_at) FROM matchmaker.tickets WHERE player = 'cat'}),
	'>', 2, "cat's wait counts from her first enqueue");

# 4. A client idle in transaction after eve's accept holds that proposal
# past its timeout: the worker goes on matching the queue (fay and gus are
# proposed), does not spin on the held proposal, and settles it once the
# client commits (cat never answered: declined; eve waits again).
my $idle = $node->background_psql('postgres', on_error_stop => 1);
$idle->query_safe('BEGIN');
is($idle->query_safe(q{SELECT matchmaker.accept(id) FROM matchmaker.tickets WHERE player = 'eve'}),
	'proposed', 'eve accepts in a transaction left open');
sleep(3);
sql("SELECT matchmaker.enqueue('ranked', 'fay', 0.1), matchmaker.enqueue('ranked', 'gus', 0.1)");
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 2 FROM matchmaker.tickets WHERE state = 'proposed' AND player IN ('fay', 'gus')"),
	'the queue is matched while the client idles');
my $ticks_before = sql(q{SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'});
sleep(2);
my $ticks_after = sql(q{SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'});
cmp_ok($ticks_after - $ticks_before, '<', 50,
	'the worker does not spin on the held proposal (' . ($ticks_after - $ticks_before) . ' commits in 2 s)');
is(state_of('eve'), 'proposed', 'the held proposal is still pending');
$idle->query_safe('COMMIT');
$idle->quit;
ok($node->poll_query_until('postgres',
	"SELECT state = 'declined' FROM matchmaker.tickets WHERE player = 'cat' ORDER BY id DESC LIMIT 1"),
	'after the client commits, the timeout dissolves the proposal');
is(state_of('eve'), 'waiting', 'eve, who accepted, waits again');

# 5. Smaller matches: a 2v2 queue with min_players 3 and max_wait 1 s.
sql(q{SELECT matchmaker.create_queue('small', team_size => 2, algorithm => 'greedy', max_wait => '1 second',
                                     params => '{"min_players": 3}');
      SELECT matchmaker.enqueue('small', 's' || i, 0.5) FROM generate_series(1, 3) i});
ok($node->poll_query_until('postgres',
	"SELECT count(*) = 3 FROM matchmaker.tickets WHERE queue = 'small' AND state = 'matched'"),
	'the worker plays the three players at max_wait');
is(sql(q{SELECT bots || ' bots, teams ' || string_agg(t.team::text, ',' ORDER BY t.team)
         FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id = m.id
         WHERE m.queue = 'small' GROUP BY m.id, m.bots}), '0 bots, teams 1,2,2',
	'a smaller match: no computer player, teams of 1 and 2');

# 6. Backfill: one of the small match's slots is asked for; the worker
# fills it at the next arrival, and a second request expires at its time.
my $small = sql(q{SELECT id FROM matchmaker.matches WHERE queue = 'small'});
my $request = sql("SELECT matchmaker.backfill($small, 1, expires => '1 minute')");
sql(q{SELECT matchmaker.enqueue('small', 'late', 0.5)});
ok($node->poll_query_until('postgres',
	"SELECT state = 'filled' FROM matchmaker.backfills WHERE id = $request"),
	'the worker fills the backfill request');
is(sql(q{SELECT match_id || ' ' || team FROM matchmaker.tickets WHERE player = 'late'}), "$small 1",
	'the new player joins the match, on the team with fewest players');
my $short = sql("SELECT matchmaker.backfill($small, 1, expires => '1 second')");
ok($node->poll_query_until('postgres',
	"SELECT state = 'expired' FROM matchmaker.backfills WHERE id = $short"),
	'an unfilled request expires');
cmp_ok(sql("SELECT extract(epoch FROM ended_at - expires_at) FROM matchmaker.backfills WHERE id = $short"),
	'<', 1.5, 'within 1.5 s of its expiry (the queue ticks every second)');

is(sql('SELECT count(*) FROM matchmaker.check()'), '0', 'matchmaker.check() finds nothing');
done_testing();
