# Metrics: Debian's prometheus-postgres-exporter, run with
# monitoring/prometheus-queries.yaml against a cluster with the worker,
# serves matchmaker's queue statistics on /metrics: each column of
# queue_stats as a series per queue, with the values the view shows.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MatchmakerLoad;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use IPC::Run;
use Time::HiRes qw(sleep);

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => "$exporter is not installed (scripts/common.sh installs it)"
  unless -x $exporter;

my $node = MatchmakerLoad::worker_node('metrics');
$node->safe_psql('postgres', q{
	CREATE ROLE regress_exporter LOGIN IN ROLE matchmaker_admin;
	SELECT matchmaker.create_queue('duel', algorithm => 'greedy', max_wait => '1 hour');
	SELECT matchmaker.create_queue('quiet', algorithm => 'greedy', max_wait => '1 hour');
	SELECT matchmaker.enqueue('duel', 'a', 0.5), matchmaker.enqueue('duel', 'b', 0.5),
	       matchmaker.enqueue('duel', 'c', 0.9);
});
# the worker matches a and b; c waits
ok($node->poll_query_until('postgres',
	"SELECT matches_1m = 1 AND waiting = 1 AND last_tick IS NOT NULL FROM matchmaker.queue_stats WHERE queue = 'duel'"),
	'the worker matched a pair');

my $queries = "$FindBin::RealBin/../../monitoring/prometheus-queries.yaml";
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $host = $node->host;
my $node_port = $node->port;
local $ENV{DATA_SOURCE_NAME} =
  "host=$host port=$node_port user=regress_exporter dbname=postgres sslmode=disable";
my ($out, $err) = ('', '');
our $h = IPC::Run::start(
	[ $exporter, "--web.listen-address=127.0.0.1:$port", "--extend.query-path=$queries",
	  '--disable-default-metrics', '--disable-settings-metrics' ],
	'>', \$out, '2>', \$err);
END { local $?; eval { $h->kill_kill } if defined $h; }

# /metrics once the exporter answers and has read the queue statistics
my $http = HTTP::Tiny->new(timeout => 5);
my $metrics = '';
for (1 .. 100)
{
	my $r = $http->get("http://127.0.0.1:$port/metrics");
	if ($r->{success} && $r->{content} =~ /^matchmaker_queue_waiting/m)
	{
		$metrics = $r->{content};
		last;
	}
	sleep 0.2;
}
$h->kill_kill;
ok($metrics ne '', 'the exporter serves matchmaker series on /metrics') or diag($err);

sub series
{
	my ($name, $queue) = @_;
	return $metrics =~ /^matchmaker_queue_\Q$name\E\{[^}]*queue="\Q$queue\E"[^}]*\} (\S+)$/m ? $1 : undef;
}
is(series('waiting', 'duel'), '1', 'matchmaker_queue_waiting: c waits');
is(series('matches_1m', 'duel'), '1', 'matchmaker_queue_matches_1m: one match');
is(series('players_1h', 'duel'), '2', 'matchmaker_queue_players_1h: two players');
is(series('bot_share', 'duel'), '0', 'matchmaker_queue_bot_share: no computer players');
ok(defined series('p95_wait', 'duel') && series('p95_wait', 'duel') >= 0, 'matchmaker_queue_p95_wait');
ok(defined series('last_tick', 'duel') && series('last_tick', 'duel') > 1.7e9,
	'matchmaker_queue_last_tick: a Unix time');
is(series('failures', 'duel'), '0', 'matchmaker_queue_failures: no failed tick');
is(series('last_error_at', 'duel'), 'NaN', 'matchmaker_queue_last_error_at: none');
is(series('matches_1h', 'quiet'), '0', 'a queue without matches has its series');
is(series('p50_wait', 'quiet'), 'NaN', 'an unknown statistic is NaN');
like($metrics, qr/^# HELP matchmaker_queue_lag_ms Milliseconds the last tick began after its timer was due/m,
	'the series carry their descriptions');

$node->stop;
done_testing();
