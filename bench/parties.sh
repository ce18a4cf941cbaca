#!/usr/bin/env bash
# Benchmark: parties and roles.  A 5v5 queue with roles {"tank": 1,
# "healer": 1, "dps": 3}, parties of 1 to 5 and 3 game modes (an equal
# filter relaxing after 30 s) at RATE players per second for SECONDS
# seconds, through simulate for every algorithm but optimize: cost, mean
# and p95 wait, games with computer players, share of games that waived
# the mode, split parties; the same stream without parties and roles, and
# without modes (bench/parties.py).  Then one tick on N waiting tickets of
# a periodic 5v5 queue (one batch of them all), half in parties of 2 to 5
# with roles, against the same tickets alone without roles: time and peak
# memory (peak_memory.py).
#
# Usage: bench/parties.sh [RATE] [SECONDS] [N]   (defaults 50 600 100000)
# Writes bench/results/parties.md.  Starts its own throw-away cluster
# (scripts/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
rate=${1:-50}
seconds=${2:-600}
n=${3:-100000}

mm_install_deps
mm_build_install
mm_start_cluster "shared_buffers = '1GB'" "max_wal_size = '4GB'"
out=bench/results/parties.md
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
run() { /usr/bin/python3 bench/peak_memory.py "$1"; }

table=$(/usr/bin/python3 bench/parties.py "$rate" "$seconds")

# one tick over N waiting tickets: blocks of 5 players; in every odd block
# b the first 2 + b % 4 form a party, the others are alone; roles cycle
# over the block so that every party fits a team; the same tickets alone
# and without roles
batch=$(( n - n % 10 ))
q "CREATE TABLE units AS
   SELECT i, random() AS rating,
          (CASE WHEN (i / 5) % 2 = 1 AND i % 5 < 2 + (i / 5) % 4 THEN i / 5 END) AS unit
   FROM generate_series(0, $n - 1) i"
q "SELECT matchmaker.create_queue('tick_parties', team_size => 5, algorithm => 'periodic', max_wait => '1 hour',
     params => jsonb_build_object('batch', $batch, 'roles', jsonb_build_object('tank', 1, 'healer', 1, 'dps', 3)))" >/dev/null
q "SELECT matchmaker.create_queue('tick_solo', team_size => 5, algorithm => 'periodic', max_wait => '1 hour',
     params => jsonb_build_object('batch', $batch))" >/dev/null
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, attributes, enqueued_by, enqueued_by_name, party)
   SELECT 'tick_parties', 'p' || i, rating, now() - interval '10 seconds',
          jsonb_build_object('roles', (ARRAY['[\"tank\", \"dps\"]', '[\"healer\", \"dps\"]', '[\"dps\"]', '[\"dps\"]', '[\"dps\", \"tank\", \"healer\"]'])[1 + i % 5]::jsonb),
          current_user::text::regrole, current_user,
          CASE WHEN unit IS NOT NULL THEN 1000000000 + unit END
   FROM units"
q "INSERT INTO matchmaker.tickets (queue, player, rating, enqueued_at, attributes, enqueued_by, enqueued_by_name)
   SELECT 'tick_solo', 'p' || i, rating, now() - interval '10 seconds', '{}', current_user::text::regrole, current_user
   FROM units"
q "VACUUM ANALYZE matchmaker.tickets"
r=$(run "SELECT matchmaker.tick('tick_parties')"); read -r t_p m_p <<<"$r"
r=$(run "SELECT matchmaker.tick('tick_solo')"); read -r t_s m_s <<<"$r"
made_p=$(q "SELECT count(*) FROM matchmaker.tickets WHERE queue = 'tick_parties' AND state = 'matched'")
made_s=$(q "SELECT count(*) FROM matchmaker.tickets WHERE queue = 'tick_solo' AND state = 'matched'")
bad=$(q "SELECT count(*) FROM matchmaker.check() WHERE problem = 'party'")

{
	echo "# Parties and roles"
	echo
	echo "Command: \`bench/parties.sh $rate $seconds $n\`. Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB,"
	echo "PostgreSQL $(psql -X -At -c 'SHOW server_version'), $(date -u +%Y-%m-%d)."
	echo
	echo "## A 5v5 queue with roles, parties and modes, through simulate"
	echo
	echo "$table"
	echo
	echo "Mixed-mode games are those whose players waived the mode (a filter relaxing after 30 s);"
	echo "without the mode filter every game mixes modes. Split parties counts parties whose players"
	echo "did not all play one game in one team (must be 0)."
	echo
	echo "## One tick on $n waiting tickets"
	echo
	echo "A periodic 5v5 queue whose batch takes every ticket: 35 % of the players in parties of 2"
	echo "to 5, every player with roles {\"tank\": 1, \"healer\": 1, \"dps\": 3}, against the same players alone and"
	echo "without roles (one tick each, in a fresh session)."
	echo
	echo "| tickets | tick ms | peak memory MiB | players matched | split parties (check) |"
	echo "|---|---|---|---|---|"
	echo "| parties and roles | $t_p | $(awk -v k="$m_p" 'BEGIN { printf "%.0f", k / 1024 }') | $made_p | $bad |"
	echo "| alone, no roles | $t_s | $(awk -v k="$m_s" 'BEGIN { printf "%.0f", k / 1024 }') | $made_s | |"
} >"$out"
cat "$out"
