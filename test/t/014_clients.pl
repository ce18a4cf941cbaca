# The client libraries against a real cluster with the worker: the Python
# client (clients/python, on psycopg2) enqueues, waits for matches through
# LISTEN confirmed by ticket_status, survives a killed listening connection
# (catching up what it missed), times out, cancels, answers a ready check,
# and raises server errors with their SQLSTATE.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use MatchmakerLoad;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = MatchmakerLoad::worker_node('clients');

local $ENV{PGHOST} = $node->host;
local $ENV{PGPORT} = $node->port;
local $ENV{PGDATABASE} = 'postgres';
my $dir = "$FindBin::RealBin/../../clients/python";
my ($out, $err) = ('', '');
my $ok = IPC::Run::run([ '/usr/bin/python3', "$dir/test_client.py" ], '>', \$out, '2>', \$err);
note($out);
ok($ok, 'the Python client\'s tests pass') or diag("$out\n$err");
like($out, qr/^0 failed$/m, 'none of them failed');

$node->stop;
done_testing();
