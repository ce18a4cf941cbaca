#!/usr/bin/env bash
# Benchmark: enqueue throughput through matchmaker_router (PL/Proxy)
# against direct calls to the nodes, on 1, 2 and 3 nodes, with each node's
# worker matching its queues (greedy 1v1, 16 queues spread by name).
# Direct: each node gets its share of the clients, enqueuing into the
# queues it holds (a client that knows the placement); router: all the
# clients call the router.  Then the router's cost per call: one client,
# its mean latency through the router against direct to the node.
# Durable: fsync and synchronous commit on.  Sides alternate, ROUNDS times.
# Every server runs on this machine: with 2 cores, more nodes share the same
# CPU, so the figures show the router's overhead and that the routing works
# under load, not how a cluster of separate machines scales.
# Usage: bench/router.sh [CLIENTS] [SECONDS] [ROUNDS]  (default 6 10 3)
# Writes bench/results/router.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
clients=${1:-6}
seconds=${2:-10}
rounds=${3:-3}

mm_install_deps
mm_build_install
top=$(mktemp -d /tmp/matchmaker-router.XXXXXX)
chmod 755 "$top"
if [ "$(id -u)" -eq 0 ]; then chown postgres "$top"; fi
# Start a cluster in $top/NAME on PORT, with extra postgresql.conf lines.
start() {
	local name=$1 port=$2
	shift 2
	mm_as_server_user "$PGBIN/initdb" -D "$top/$name" -A trust -U postgres --no-sync >/dev/null
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$top'"
		echo "port = $port"
		echo "fsync = on"
		echo "max_connections = 100"
		for line in "$@"; do echo "$line"; done
	} >>"$top/$name/postgresql.conf"
	mm_as_server_user "$PGBIN/pg_ctl" -D "$top/$name" -l "$top/$name.log" -w start >/dev/null
}
stop_all() {
	for d in "$top"/*/; do
		[ -f "$d/postmaster.pid" ] && mm_as_server_user "$PGBIN/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1
	done
	rm -rf "$top"
}
trap stop_all EXIT
q() { local port=$1; shift; psql -X -q -At -h "$top" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -c "$1"; }
node_port() { echo $((6100 + $1)); }
router=6099
for i in 0 1 2; do
	start "node$i" "$(node_port $i)" "shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
	q "$(node_port $i)" "CREATE EXTENSION matchmaker; SELECT matchmaker.set_node_id($i)" >/dev/null
done
start router $router
q $router "CREATE EXTENSION plproxy"

# Point the router at the first n nodes (partitions: 1, 2 or 4, the fourth on node 0).
use_nodes() {
	local n=$1 opts
	case $n in
	1) opts="p0 'host=$top port=$(node_port 0) dbname=postgres'" ;;
	2) opts="p0 'host=$top port=$(node_port 0) dbname=postgres', p1 'host=$top port=$(node_port 1) dbname=postgres'" ;;
	3) opts="p0 'host=$top port=$(node_port 0) dbname=postgres', p1 'host=$top port=$(node_port 1) dbname=postgres', p2 'host=$top port=$(node_port 2) dbname=postgres', p3 'host=$top port=$(node_port 0) dbname=postgres'" ;;
	esac
	q $router "DROP EXTENSION IF EXISTS matchmaker_router; DROP SERVER IF EXISTS matchmaker_cluster CASCADE"
	q $router "CREATE SERVER matchmaker_cluster FOREIGN DATA WRAPPER plproxy OPTIONS ($opts)"
	q $router "CREATE USER MAPPING FOR PUBLIC SERVER matchmaker_cluster OPTIONS (user 'postgres')"
	q $router "CREATE EXTENSION matchmaker_router"
	for i in 0 1 2; do q "$(node_port $i)" "SELECT matchmaker.drop_queue(name, force => true) FROM matchmaker.queues" >/dev/null; done
	q $router "SELECT matchmaker.create_queue('q' || i, algorithm => 'greedy', max_wait => '5 s', tick => '100 ms') FROM generate_series(0, 15) i" >/dev/null
}

dir=$(mktemp -d)
chmod 755 "$dir"
# A pgbench script enqueuing into the given queues, at random.
script() {
	local file=$1
	shift
	local list
	list=$(printf "'%s'," "$@")
	{
		echo "\\set i random(1, $#)"
		echo '\set p random(1, 1000000000000000)'
		echo '\set r random(0, 1000000)'
		echo "SELECT matchmaker.enqueue((ARRAY[${list%,}])[:i], 'p' || :p, :r / 1000000.0);"
	} >"$file"
}
# tps of pgbench against port with clients, one script
bench() {
	local port=$1 c=$2 f=$3
	pgbench -n -h "$top" -p "$port" -U postgres -c "$c" -j "$((c < 2 ? 1 : 2))" -T "$seconds" -f "$f" postgres 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}
latency() {
	local port=$1 f=$2
	pgbench -n -h "$top" -p "$port" -U postgres -c 1 -T "$seconds" -f "$f" postgres 2>/dev/null |
		sed -n 's/^latency average = \([0-9.]*\) ms/\1/p'
}
declare -A runs
for n in 1 2 3; do
	use_nodes "$n"
	mapfile -t all < <(q $router "SELECT 'q' || i FROM generate_series(0, 15) i")
	script "$dir/router.sql" "${all[@]}"
	for ((i = 0; i < n; i++)); do
		mapfile -t mine < <(q $router "SELECT q FROM (SELECT 'q' || i AS q FROM generate_series(0, 15) i) s WHERE matchmaker.queue_node(q) = matchmaker.partition_node($i)")
		script "$dir/direct$i.sql" "${mine[@]}"
	done
	for ((r = 1; r <= rounds; r++)); do
		q $router "CHECKPOINT" >/dev/null
		t=$(bench $router "$clients" "$dir/router.sql")
		echo "$n nodes, round $r, router: $t enqueues/s"
		runs[router$n]="${runs[router$n]:-} $t"
		# direct: the clients split over the nodes, each pgbench at once
		pids=()
		for ((i = 0; i < n; i++)); do
			c=$((clients / n + (i < clients % n ? 1 : 0)))
			bench "$(node_port $i)" "$c" "$dir/direct$i.sql" >"$dir/out$i" &
			pids+=($!)
		done
		wait "${pids[@]}"
		t=$(cat "$dir"/out* | awk '{ s += $1 } END { printf "%.1f", s }')
		rm -f "$dir"/out*
		echo "$n nodes, round $r, direct: $t enqueues/s"
		runs[direct$n]="${runs[direct$n]:-} $t"
	done
done
# the router's cost per call: one client, to node 0's queues
use_nodes 1
script "$dir/one.sql" q0 q1 q2 q3
for ((r = 1; r <= rounds; r++)); do
	l=$(latency $router "$dir/one.sql")
	runs[lat_router]="${runs[lat_router]:-} $l"
	l=$(latency "$(node_port 0)" "$dir/one.sql")
	runs[lat_direct]="${runs[lat_direct]:-} $l"
	echo "latency round $r: router $(echo "${runs[lat_router]}" | awk '{print $NF}') ms, direct $l ms"
done
rm -rf "$dir"

mean() { tr ' ' '\n' <<<"${runs[$1]}" | awk 'NF { s += $1; n++ } END { printf "%.1f", s / n }'; }
list() { tr ' ' '\n' <<<"${runs[$1]}" | awk 'NF' | paste -sd, | sed 's/,/, /g'; }
out=bench/results/router.md
{
	echo "# Enqueue through matchmaker_router against direct calls"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(q $router 'SHOW server_version'), PL/Proxy $(q $router "SELECT extversion FROM pg_extension WHERE extname = 'plproxy'"), fsync on, synchronous_commit on; every server on this machine."
	echo "Command: \`bench/router.sh $clients $seconds $rounds\`, run $(date -u +%Y-%m-%d): pgbench, $clients clients, $seconds s per run, 16 greedy queues spread over the nodes by name, each node's worker matching them; sides alternate, $rounds rounds."
	echo
	echo "| nodes | router, enqueues/s (runs) | direct, enqueues/s (runs) | router / direct |"
	echo "|---|---|---|---|"
	for n in 1 2 3; do
		echo "| $n | $(mean router$n) ($(list router$n)) | $(mean direct$n) ($(list direct$n)) | $(awk -v a="$(mean router$n)" -v b="$(mean direct$n)" 'BEGIN { printf "%.2f", a / b }') |"
	done
	echo
	echo "One client, one node: mean latency of an enqueue through the router $(mean lat_router) ms ($(list lat_router)), direct $(mean lat_direct) ms ($(list lat_direct)): the router adds $(awk -v a="$(mean lat_router)" -v b="$(mean lat_direct)" 'BEGIN { printf "%.2f", a - b }') ms per call."
} >"$out"
cat "$out"
