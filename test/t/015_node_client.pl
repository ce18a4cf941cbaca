# The Node.js client (clients/node, on npm's pg) against a real cluster
# with the worker: npm installs its one dependency into a copy of it, then
# its tests enqueue, wait for matches through LISTEN confirmed by
# ticket_status, survive a killed listening connection, time out, cancel,
# answer a ready check and see server errors with their SQLSTATE.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MatchmakerLoad;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Copy;
use IPC::Run;

my $node = MatchmakerLoad::worker_node('node_client');

# a copy of the client with its dependency installed from the npm registry
my $dir = PostgreSQL::Test::Utils::tempdir;
for my $f ('package.json', 'index.js', 'test.js')
{
	copy("$FindBin::RealBin/../../clients/node/$f", "$dir/$f") or die "copy $f: $!";
}
local $ENV{npm_config_cache} = "$dir/.npm";
my ($out, $err) = ('', '');
my $ok = IPC::Run::run([ 'npm', 'install', '--no-audit', '--no-fund', '--prefix', $dir ],
	'>', \$out, '2>', \$err);
ok($ok, 'npm installs the client\'s dependency') or diag("$out\n$err");

local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'postgres';
local $ENV{PGUSER} = $ENV{USER} // getpwuid($<);
($out, $err) = ('', '');
$ok = IPC::Run::run([ 'node', "$dir/test.js" ], '>', \$out, '2>', \$err);
note($out);
ok($ok, 'the Node.js client\'s tests pass') or diag("$out\n$err");
like($out, qr/^0 failed$/m, 'none of them failed');

$node->stop;
done_testing();
