# Sharding with matchmaker_router: three matchmaker nodes and a router
# (PL/Proxy) on loopback.  Queues are spread over the nodes by name,
# calls by ticket id go to the node the id names, check() and queue_stats
# cover every node, a queue moves to another node and drains where it was.
# Then pgbench enqueues through the router into many queues, logging every
# enqueue the router saw succeed; one node is killed with kill -9 mid-load:
# the other nodes' queues keep matching, and after its restart every
# logged ticket is on its node, in its queue, matched (or expired) once,
# and check() is clean everywhere.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use File::Copy;
use Test::More;

my @nodes;
for my $i (0 .. 2)
{
	my $node = PostgreSQL::Test::Cluster->new("node$i");
	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'matchmaker'
matchmaker.database = 'postgres'
matchmaker.naptime = '100ms'
});
	$node->start;
	$node->safe_psql('postgres', "CREATE EXTENSION matchmaker; SELECT matchmaker.set_node_id($i)");
	push @nodes, $node;
}

my $router = PostgreSQL::Test::Cluster->new('router');
$router->init;
$router->start;
sub conninfo { my ($n) = @_; return 'host=' . $n->host . ' port=' . $n->port . ' dbname=postgres'; }
# four partitions (a power of two) on three nodes: node 0 holds partitions 0 and 3
my @part = map { conninfo($_) } (@nodes, $nodes[0]);
my $me = $router->safe_psql('postgres', 'SELECT current_user');
$router->safe_psql('postgres', qq{
	CREATE EXTENSION plproxy;
	CREATE SERVER matchmaker_cluster FOREIGN DATA WRAPPER plproxy
		OPTIONS (p0 '$part[0]', p1 '$part[1]', p2 '$part[2]', p3 '$part[3]');
	CREATE USER MAPPING FOR PUBLIC SERVER matchmaker_cluster OPTIONS (user '$me');
	CREATE EXTENSION matchmaker_router;
});

# node index of a conninfo
sub node_of
{
	my ($ci) = @_;
	# partitions() sorts a connect string's pairs: match by port
	my ($port) = $ci =~ /\bport=(\d+)/;
	for my $i (0 .. 2) { return $i if defined $port && $port == $nodes[$i]->port; }
	die "no node for $ci";
}

# --- routing ---------------------------------------------------------
my @queues = map { "q$_" } (0 .. 15);
my $values = join(',', map { "('$_')" } @queues);
$router->safe_psql('postgres', qq{
	SELECT matchmaker.create_queue(q, algorithm => 'greedy', max_wait => '1 s', tick => '100 ms',
		params => '{"on_timeout": "expire"}')
	FROM (VALUES $values) v(q);
});
my %on;    # queue => node index
for my $q (@queues)
{
	$on{$q} = node_of($router->safe_psql('postgres', "SELECT matchmaker.queue_node('$q')"));
	is($nodes[ $on{$q} ]->safe_psql('postgres',
			"SELECT count(*) FROM matchmaker.queues WHERE name = '$q'"),
		'1', "queue $q is created on the node queue_node names (node $on{$q})");
}
my @on_node = map { my $i = $_; [ grep { $on{$_} == $i } @queues ] } (0 .. 2);
ok(@{ $on_node[$_] } > 0, "node $_ holds queues (@{ $on_node[$_] })") for (0 .. 2);
is( $router->safe_psql('postgres',
		"SELECT count(*) FROM (VALUES $values) v(q) WHERE matchmaker.queue_partition(q) <> hashtext(q) & 3"),
	'0', 'a queue lives on the partition of hashtext(name), as PL/Proxy maps it');

# two players of each node's first queue, through the router
my %pair;
for my $i (0 .. 2)
{
	my $q = $on_node[$i][0];
	my ($a, $b) = split /\|/, $router->safe_psql('postgres',
		"SELECT matchmaker.enqueue('$q', 'ann', 0.5), matchmaker.enqueue('$q', 'bob', 0.52)");
	is($a >> 43, $i, "a ticket of node $i carries node id $i in its bits 43 and up");
	is(node_of($router->safe_psql('postgres', "SELECT matchmaker.ticket_node($a)")), $i,
		"ticket_node names node $i");
	$pair{$i} = [ $a, $b ];
}
for my $i (0 .. 2)
{
	my ($a, $b) = @{ $pair{$i} };
	ok( $router->poll_query_until('postgres',
			"SELECT state = 'matched' FROM matchmaker.ticket_status($a)"),
		"node $i\'s worker matched its queue's pair; ticket_status through the router says so");
	is( $router->safe_psql('postgres',
			"SELECT (SELECT match_id FROM matchmaker.ticket_status($a)) = (SELECT match_id FROM matchmaker.ticket_status($b))"),
		't', "node $i: both tickets in one match");
}
# cancel routes by id: a waiting ticket on node 1 is cancelled there
my $q1 = $on_node[1][0];
my $t = $router->safe_psql('postgres', "SELECT matchmaker.enqueue('$q1', 'cat', 0.1, '{}')");
# (a lone player waits up to max_wait: cancel at once)
is($router->safe_psql('postgres', "SELECT matchmaker.cancel($t)"), 't', 'cancel through the router');
is($nodes[1]->safe_psql('postgres', "SELECT state FROM matchmaker.tickets WHERE id = $t"),
	'cancelled', 'the ticket is cancelled on its node');
is($router->safe_psql('postgres', "SELECT matchmaker.cancel($t)"), 'f',
	'a second cancel through the router returns false');
# errors of a node reach the caller with their SQLSTATE
my ($rc, $out, $err) = $router->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT matchmaker.enqueue('nosuch', 'dan', 0.5)");
like($err, qr/42704/, "a node's error keeps its SQLSTATE through the router");
is( $router->safe_psql('postgres',
		q{SELECT round(matchmaker.match_cost('q0', '{0.1,0.2}', '{0,1}')::numeric, 3)}),
	$nodes[ $on{q0} ]->safe_psql('postgres',
		q{SELECT round(matchmaker.match_cost('q0', '{0.1,0.2}', '{0,1}')::numeric, 3)}),
	'match_cost through the router equals the node\'s');
is($router->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'check() through the router: every node healthy, node ids route home');
# (a worker writes its ticks' statistics a second after it made them)
ok( $router->poll_query_until('postgres',
		"SELECT count(*) = 3 FROM matchmaker.queue_stats WHERE queue IN ('$on_node[0][0]', '$on_node[1][0]', '$on_node[2][0]') AND matches_1h >= 1"),
	'queue_stats through the router shows every node\'s queues');
is($router->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.queue_stats'), scalar(@queues),
	'queue_stats: one row per queue');

# a node whose id names another node's partition is reported
my $swap = sub {
	my ($x, $y) = @_;
	$router->safe_psql('postgres',
		"ALTER SERVER matchmaker_cluster OPTIONS (SET p1 '$x', SET p2 '$y')");
};
$swap->($part[2], $part[1]);
is( $router->safe_psql('postgres',
		"SELECT string_agg(problem || ' ' || id, ',' ORDER BY id) FROM matchmaker.check()"),
	'node id 1,node id 2', 'check() reports nodes whose ids route to another node');
$swap->($part[1], $part[2]);
# partitions naming one node in two spellings (another order, an extra
# setting) are one node
$router->safe_psql('postgres',
	"ALTER SERVER matchmaker_cluster OPTIONS (SET p3 'dbname=postgres connect_timeout=5 sslpassword=KeyPass port="
	  . $nodes[0]->port . " host=" . $nodes[0]->host . "')");
is($router->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'a partition naming node 0 in another spelling is still node 0');
is($router->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.queue_stats'), scalar(@queues),
	'queue_stats reads node 0 once');
is($router->safe_psql('postgres', "SELECT count(*) FROM matchmaker.partitions() WHERE conninfo LIKE '%KeyPass%'"),
	'0', 'partitions() leaves out an sslpassword');
($rc, $out, $err) = $router->psql('postgres', "SELECT matchmaker.move_queue('$on_node[0][0]', 3)");
like($err, qr/already on the node of partition 3/, 'a move to another partition of the same node is refused');
$router->safe_psql('postgres', "ALTER SERVER matchmaker_cluster OPTIONS (SET p3 '$part[3]')");

# --- privileges on the router ------------------------------------------
# A matchmaker_client role (with USAGE on the server and a user mapping)
# enqueues, reads and cancels; the admin functions are refused to it.
$router->safe_psql('postgres', qq{
	CREATE ROLE backend LOGIN IN ROLE matchmaker_client;
	GRANT USAGE ON FOREIGN SERVER matchmaker_cluster TO backend;
});
my $as_backend = sub {
	my ($sql) = @_;
	my ($r, $o, $e) = $router->psql('postgres', "SET ROLE backend; $sql");
	return $e eq '' ? $o : "ERROR $e";
};
my $bt = $as_backend->("SELECT matchmaker.enqueue('$on_node[2][0]', 'gus', 0.3)");
like($bt, qr/^\d+$/, 'a matchmaker_client role enqueues through the router');
is($as_backend->("SELECT state FROM matchmaker.ticket_status($bt)"), 'waiting',
	'and reads its ticket');
is($as_backend->("SELECT matchmaker.cancel($bt)"), 't', 'and cancels it');
for my $call ("matchmaker.create_queue('nope')", "matchmaker.move_queue('q0', 1)",
	"matchmaker.finish_move('q0')", 'matchmaker.check()', "matchmaker.drop_queue('q0')")
{
	like($as_backend->("SELECT $call"), qr/permission denied for function/,
		"$call is refused to a matchmaker_client role");
}
like($as_backend->('SELECT * FROM matchmaker.queue_stats'), qr/permission denied/,
	'queue_stats is refused to a matchmaker_client role');

# --- the client libraries through the router --------------------------
# Each waits for a match through the router: its listener must connect to
# the ticket's node (the router sends no events).
{
	local $ENV{PGHOST} = $router->host;
	local $ENV{PGPORT} = $router->port;
	local $ENV{PGDATABASE} = 'postgres';
	local $ENV{PGUSER} = $me;
	my $clients = "$FindBin::RealBin/../../clients";
	my ($cout, $cerr) = ('', '');
	my $ok = IPC::Run::run([ '/usr/bin/python3', "$clients/python/test_router.py" ],
		'>', \$cout, '2>', \$cerr);
	note($cout);
	ok($ok && $cout =~ /^0 failed$/m, 'the Python client works through the router')
	  or diag("$cout\n$cerr");

	# the Node.js client, with its dependency installed from the npm registry into a copy
	my $dir = PostgreSQL::Test::Utils::tempdir;
	for my $f ('package.json', 'index.js', 'test_router.js')
	{
		File::Copy::copy("$clients/node/$f", "$dir/$f") or die "copy $f: $!";
	}
	local $ENV{npm_config_cache} = "$dir/.npm";
	($cout, $cerr) = ('', '');
	IPC::Run::run([ 'npm', 'install', '--no-audit', '--no-fund', '--prefix', $dir ],
		'>', \$cout, '2>', \$cerr)
	  or diag("npm install: $cout\n$cerr");
	($cout, $cerr) = ('', '');
	$ok = IPC::Run::run([ 'node', "$dir/test_router.js" ], '>', \$cout, '2>', \$cerr);
	note($cout);
	ok($ok && $cout =~ /^0 failed$/m, 'the Node.js client works through the router')
	  or diag("$cout\n$cerr");
}

# --- moving a queue --------------------------------------------------
my $mq = $on_node[0][0];
my $old = $router->safe_psql('postgres', "SELECT matchmaker.enqueue('$mq', 'eve', 0.9)");
$router->safe_psql('postgres',
	"SELECT matchmaker.alter_queue('$mq', max_wait => '5 s', params => '{\"on_timeout\": \"expire\", \"channel\": \"moved\"}')");
$router->safe_psql('postgres', "SELECT matchmaker.move_queue('$mq', 2)");
is( $nodes[2]->safe_psql('postgres',
		"SELECT max_wait || ' ' || (params->>'channel') FROM matchmaker.queues WHERE name = '$mq'"),
	'00:00:05 moved', 'move_queue created the queue with its settings on the new node');
my $new = $router->safe_psql('postgres', "SELECT matchmaker.enqueue('$mq', 'fay', 0.9)");
is($new >> 43, 2, 'after the move, enqueue goes to the new node');
is($router->safe_psql('postgres', "SELECT state FROM matchmaker.ticket_status($old)"), 'waiting',
	'a ticket enqueued before the move still waits on the old node, reached by its id');
is($router->safe_psql('postgres', "SELECT matchmaker.enqueue('$mq', 'eve', 0.9)"), $old,
	'a retried enqueue of a player waiting on the old node returns that ticket (no second one)');
is($nodes[2]->safe_psql('postgres', "SELECT count(*) FROM matchmaker.tickets WHERE player = 'eve'"), '0',
	'nothing of that player on the new node');
($rc, $out, $err) = $router->psql('postgres', "SELECT matchmaker.finish_move('$mq')");
like($err, qr/waiting ticket/, 'finish_move is refused while tickets wait on the old node');
($rc, $out, $err) = $router->psql('postgres', "SELECT matchmaker.move_queue('$mq', 0)");
like($err, qr/still draining/, 'a second move waits for finish_move');
ok( $router->poll_query_until('postgres',
		"SELECT state <> 'waiting' FROM matchmaker.ticket_status($old)"),
	'the old node ends the waiting ticket within max_wait');
# a finish_move rolled back on the router after the old node dropped the queue
$router->safe_psql('postgres', "BEGIN; SELECT matchmaker.finish_move('$mq'); ROLLBACK;");
is($nodes[0]->safe_psql('postgres', "SELECT count(*) FROM matchmaker.queues WHERE name = '$mq'"),
	'0', 'finish_move dropped the queue on the old node');
$router->safe_psql('postgres', "SELECT matchmaker.finish_move('$mq')");
is($router->safe_psql('postgres', "SELECT drained_from IS NULL FROM matchmaker.placements WHERE queue = '$mq'"),
	't', 'finish_move again, after one rolled back on the router, completes the move');
is($router->safe_psql('postgres', "SELECT queue FROM matchmaker.ticket_status($new)"), $mq,
	'the ticket enqueued after the move is on the new node');
my $gil = $router->safe_psql('postgres', "SELECT matchmaker.enqueue('$mq', 'gil', 0.9)");
is($router->safe_psql('postgres', "SELECT matchmaker.cancel($gil)"), 't',
	'the moved queue\'s tickets are cancelled on the new node');
is($router->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'check() clean after the move');
# a second router (here: this one, its placement forgotten) follows the move
$router->safe_psql('postgres', "DELETE FROM matchmaker.placements WHERE queue = '$mq'");
($rc, $out, $err) = $router->psql('postgres', "SELECT matchmaker.enqueue('$mq', 'hal', 0.9)");
like($err, qr/does not exist/, 'a router that did not move the queue sends it to the old node, where it is gone');
$router->safe_psql('postgres', "SELECT matchmaker.move_queue('$mq', 2)");
is($router->safe_psql('postgres', "SELECT partition || ' ' || (drained_from IS NULL) FROM matchmaker.placements WHERE queue = '$mq'"),
	'2 true', 'its move_queue follows the queue to where another router moved it');
is($router->safe_psql('postgres', "SELECT matchmaker.enqueue('$mq', 'hal', 0.9) >> 43"), '2',
	'and its enqueues reach the new node');
# drop_queue during a move drops the queue where it goes only: check() says so
my $mq2 = $on_node[0][1] // $on_node[2][1];
my $mq2_old = $router->safe_psql('postgres', "SELECT matchmaker.queue_partition('$mq2')");
my $mq2_to = $mq2_old == 1 ? 2 : 1;
$router->safe_psql('postgres', "SELECT matchmaker.move_queue('$mq2', $mq2_to)");
$router->safe_psql('postgres', "SELECT matchmaker.drop_queue('$mq2')");
like($router->safe_psql('postgres', "SELECT problem || ': ' || detail FROM matchmaker.check() WHERE queue = '$mq2'"),
	qr/^placement: moving from partition $mq2_old to $mq2_to, where it does not exist$/,
	'check() reports a queue dropped where it moves while it drains');
$router->safe_psql('postgres', "SELECT matchmaker.create_queue('$mq2', algorithm => 'greedy', max_wait => '1 s', tick => '100 ms', params => '{\"on_timeout\": \"expire\"}')");
$router->safe_psql('postgres', "SELECT matchmaker.finish_move('$mq2')");
$on{$mq2} = $mq2_to == 1 ? 1 : 2;
@on_node = map { my $i = $_; [ grep { $on{$_} == $i } @queues ] } (0 .. 2);
$on{$mq} = 2;

# --- load through the router, one node killed ------------------------
# One of node 1's queues is being moved to node 2 while node 1 dies: its
# enqueues must go on (to node 2), not wait on the dead node it leaves.
my $drainq = $on_node[1][0];
$router->safe_psql('postgres', "SELECT matchmaker.move_queue('$drainq', 2)");
$on{$drainq} = 2;
@on_node = map { my $i = $_; [ grep { $on{$_} == $i } @queues ] } (0 .. 2);
$router->safe_psql('postgres', q{
	CREATE TABLE enqueue_log (ticket bigint NOT NULL, queue text NOT NULL, player text NOT NULL,
		at timestamptz NOT NULL DEFAULT clock_timestamp());
	CREATE TABLE failed_log (queue text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
	-- an enqueue through the router, logged when it returned a ticket
	CREATE FUNCTION logged_enqueue(q text, p text, r float8) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
		INSERT INTO enqueue_log (ticket, queue, player) SELECT matchmaker.enqueue(q, p, r), q, p;
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO failed_log (queue) VALUES (q);
	END $$;
});
my $dir = PostgreSQL::Test::Utils::tempdir();
open my $fh, '>', "$dir/enqueue.sql" or die;
print $fh "\\set q random(0, " . $#queues . ")\n\\set p random(1, 1000000000)\n"
  . "SELECT logged_enqueue('q' || :q, :client_id || '-' || :p, random());\n";
close $fh;
# (pgbench writes to files: it prints every NOTICE the calls raise, and a
# pipe nobody reads while the test sleeps would stall it)
my $pgbench = IPC::Run::start(
	[ $router->installed_command('pgbench'), '-n', '-h', $router->host, '-p', $router->port,
	  '-c', 4, '-j', 2, '-T', 20, '-f', "$dir/enqueue.sql", 'postgres' ],
	'>', "$dir/pgbench.out", '2>', "$dir/pgbench.err");

sub logged_on
{
	my ($i) = @_;
	return $router->safe_psql('postgres',
		"SELECT count(*) FROM enqueue_log WHERE ticket >> 43 = $i");
}
sub matches_on
{
	my ($i) = @_;
	return $nodes[$i]->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.matches');
}
$router->poll_query_until('postgres', 'SELECT count(*) >= 300 FROM enqueue_log')
  or die 'the load does not make progress';

my $killed = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
$nodes[1]->kill9;
my @before = (matches_on(0), matches_on(2));
my @logged = (logged_on(0), logged_on(2));
sleep 3;
my @after = (matches_on(0), matches_on(2));
ok($after[0] > $before[0] && $after[1] > $before[1],
	"with node 1 down, nodes 0 and 2 keep matching ($before[0] -> $after[0], $before[1] -> $after[1] matches)");
ok(logged_on(0) > $logged[0] && logged_on(2) > $logged[1],
	'with node 1 down, enqueues to the other nodes\' queues go on through the router');
my $failed = $router->safe_psql('postgres',
	"SELECT count(*), count(*) FILTER (WHERE f.queue IN ('" . join("','", @{ $on_node[1] }) . "'))"
	  . " FROM failed_log f");
my ($nf, $nf1) = split /\|/, $failed;
my $newbie = $router->safe_psql('postgres', "SELECT matchmaker.enqueue('$drainq', 'newbie', 0.5)");
is($newbie >> 43, 2, 'a queue moving off the dead node takes enqueues on its new node');
ok($nf > 0, "enqueues to node 1's queues fail while it is down ($nf)");
is($nf1, $nf, 'only enqueues to node 1\'s queues fail');
is($router->safe_psql('postgres', "SELECT count(*) FROM failed_log WHERE at < '$killed'"), '0',
	'no enqueue failed before the kill');

$nodes[1]->start;
my $restarted = $router->safe_psql('postgres', 'SELECT clock_timestamp()');
$pgbench->finish;
is($pgbench->result(0), 0, 'pgbench through the router completed')
  or diag(PostgreSQL::Test::Utils::slurp_file("$dir/pgbench.err"));
ok( $router->safe_psql('postgres',
		"SELECT count(*) > 0 FROM enqueue_log WHERE ticket >> 43 = 1 AND at > '$restarted'"),
	'after its restart, enqueues through the router reach node 1 again');
is( $router->safe_psql('postgres', q{
		SELECT count(*) FROM (SELECT DISTINCT queue, (ticket >> 43)::integer AS nid FROM enqueue_log) l
		WHERE matchmaker.partition_node(l.nid) <> matchmaker.queue_node(l.queue)}),
	'0', 'every logged ticket\'s id names the node of its queue');

for my $i (0 .. 2)
{
	ok( $nodes[$i]->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM matchmaker.tickets WHERE state = 'waiting'"),
		"node $i: its worker ends every waiting ticket (after the restart on node 1)");
	my $ids = $router->safe_psql('postgres',
		"SELECT string_agg(format('(%s,%L,%L)', ticket, queue, player), ',') FROM enqueue_log WHERE ticket >> 43 = $i");
	is( $nodes[$i]->safe_psql('postgres', qq{
			SELECT count(*) FROM (VALUES $ids) l(id, queue, player)
			WHERE NOT EXISTS (SELECT FROM matchmaker.tickets t
			                  WHERE t.id = l.id AND t.queue = l.queue AND t.player = l.player
			                    AND t.state IN ('matched', 'expired'))}),
		'0', "node $i: every logged ticket is there, in its queue, matched or expired");
	is( $nodes[$i]->safe_psql('postgres', q{
			SELECT count(*) FROM matchmaker.matches m
			WHERE (SELECT count(*) FROM matchmaker.tickets t WHERE t.match_id = m.id) <> 2}),
		'0', "node $i: every match has its two tickets (no ticket matched twice)");
}
$router->safe_psql('postgres', "SELECT matchmaker.finish_move('$drainq')");
is($router->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'check() clean on every node after the crash');

# --- growing the cluster's partition count ---------------------------
# Pinning every queue where it is, then going from four partitions to
# eight (the new ones on the same nodes), changes no queue's node.
my $where = "SELECT string_agg(queue || '=' || matchmaker.queue_node(queue), ',' ORDER BY queue) FROM matchmaker.queue_stats";
my $before = $router->safe_psql('postgres', $where);
$router->safe_psql('postgres', q{
	INSERT INTO matchmaker.placements (queue, partition)
	SELECT s.queue, matchmaker.queue_partition(s.queue) FROM matchmaker.queue_stats s
	ON CONFLICT (queue) DO NOTHING});
$router->safe_psql('postgres',
	"ALTER SERVER matchmaker_cluster OPTIONS (ADD p4 '$part[0]', ADD p5 '$part[1]', ADD p6 '$part[2]', ADD p7 '$part[0]')");
is($router->safe_psql('postgres', $where), $before,
	'pinned, every queue stays on its node when the partitions go from 4 to 8');
is($router->safe_psql('postgres', 'SELECT count(*) FROM matchmaker.check()'), '0',
	'check() clean with eight partitions');
my $t8 = $router->safe_psql('postgres', "SELECT matchmaker.enqueue('$on_node[1][0]', 'late', 0.5)");
is($t8 >> 43, 1, 'an enqueue after the change goes to the queue\'s node');
is($router->safe_psql('postgres', "SELECT state FROM matchmaker.ticket_status($t8)"), 'waiting',
	'and its ticket is found there by id');

done_testing();
