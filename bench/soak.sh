#!/usr/bin/env bash
# Benchmark: a soak run with retention.  pgbench enqueues players into an
# auto 1v1 queue at a fixed rate for a while, the worker matches them and
# removes ended rows older than matchmaker.retention; every 20 s the
# tables' sizes and rows, the worker's last tick and its lag are sampled,
# and pgbench reports the enqueue latency every 20 s.  Flat lines mean
# nothing grows without bound.
#
# Usage: bench/soak.sh [SECONDS [RATE [RETENTION]]]   (default: 1800 500 5min)
# Writes bench/results/soak.md and bench/results/soak.png.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
seconds=${1:-1800}
rate=${2:-500}
retention=${3:-5min}

MM_PACKAGES="$MM_PACKAGES gnuplot-nox" mm_install_deps
mm_build_install
mm_start_cluster "shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'" \
	"matchmaker.retention = '$retention'" "shared_buffers = '512MB'"
psql -X -q -c 'CREATE EXTENSION matchmaker'
psql -X -q -c "SELECT matchmaker.create_queue('duel', max_wait => '10 s')" >/dev/null
tmp=$(mktemp -d)
chmod 755 "$tmp"
cat >"$tmp/enqueue.sql" <<'SQL'
\set player random(1, 2000000000)
SELECT matchmaker.enqueue('duel', 'p' || :client_id || '_' || :player, random());
SQL

# the sampler: seconds since start, tickets and matches (rows, MB), the last tick (ms) and its lag (ms)
sample() {
	local start=$1
	while sleep 20; do
		psql -X -q -At -F ' ' -c "
			SELECT round(extract(epoch FROM clock_timestamp()) - $start),
			       (SELECT count(*) FROM matchmaker.tickets),
			       round(pg_total_relation_size('matchmaker.tickets') / 1048576.0, 1),
			       (SELECT count(*) FROM matchmaker.matches),
			       round(pg_total_relation_size('matchmaker.matches') / 1048576.0, 1),
			       coalesce(round(s.last_tick_ms::numeric, 2), 0), coalesce(round(s.lag_ms::numeric, 2), 0),
			       s.players_1m
			FROM matchmaker.queue_stats s WHERE s.queue = 'duel'" >>"$tmp/samples.dat" || true
	done
}
start=$(date +%s)
sample "$start" &
sampler=$!
mm_as_server_user "$PGBIN/pgbench" -n -f "$tmp/enqueue.sql" -c 4 -j 2 -R "$rate" -T "$seconds" -P 20 \
	-h "$PGHOST" -p "$PGPORT" -U "$PGUSER" "$PGDATABASE" >"$tmp/pgbench.out" 2>"$tmp/progress.txt"
kill "$sampler" 2>/dev/null || true
# progress lines: "progress: 20.0 s, 499.9 tps, lat 1.234 ms stddev 0.5, lag 0.1 ms"
awk '/^progress:/ { sub(",", "", $2); print $2, $4, $7 }' "$tmp/progress.txt" >"$tmp/latency.dat"

gnuplot <<GP
set terminal pngcairo size 900,900 noenhanced
set output 'bench/results/soak.png'
set multiplot layout 3,1 title 'Soak: $rate enqueues per second for $seconds s, retention $retention'
set xlabel 'seconds'
set ylabel 'MB'
plot '$tmp/samples.dat' using 1:3 with lines title 'tickets (table and indexes)', \
     '' using 1:5 with lines title 'matches (table and indexes)'
set ylabel 'ms'
plot '$tmp/samples.dat' using 1:6 with lines title "the worker's last tick", \
     '' using 1:7 with lines title 'its lag'
set ylabel 'ms'
plot '$tmp/latency.dat' using 1:3 with lines title 'enqueue latency (pgbench, mean per 20 s)'
unset multiplot
GP

field() { sed -n "${2}p" "$tmp/$1" | awk -v c="$3" '{print $c}'; }
n=$(wc -l <"$tmp/samples.dat")
mid=$(( (n + 1) / 2 ))
{
	echo "# Soak with retention"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), PostgreSQL $(psql -X -At -c 'SHOW server_version')."
	echo "Command: \`bench/soak.sh $seconds $rate $retention\`, run $(date -u +%Y-%m-%d). pgbench (4 clients, -R $rate) enqueues"
	echo "into an auto 1v1 queue (max_wait 10 s) with the worker; matchmaker.retention = '$retention'."
	echo
	echo "![sizes, tick time and enqueue latency over the run](soak.png)"
	echo
	echo "| sample | seconds | tickets (rows, MB) | matches (rows, MB) | last tick (ms) | lag (ms) | players matched in the last minute |"
	echo "|---|---:|---|---|---:|---:|---:|"
	for row in 1 "$mid" "$n"; do
		read -r t tr tm mr mm tick lag pl < <(sed -n "${row}p" "$tmp/samples.dat")
		echo "| $row of $n | $t | $tr, $tm | $mr, $mm | $tick | $lag | $pl |"
	done
	echo
	echo "Enqueue latency (pgbench, mean per 20 s): first $(field latency.dat 1 3) ms, middle $(field latency.dat "$(( ($(wc -l <"$tmp/latency.dat") + 1) / 2 ))" 3) ms, last $(field latency.dat "$(wc -l <"$tmp/latency.dat")" 3) ms."
	echo
	echo '```'
	grep -E "^(number of transactions actually processed|latency average|tps)" "$tmp/pgbench.out" || true
	echo '```'
} >bench/results/soak.md
cat bench/results/soak.md
rm -rf "$tmp"
