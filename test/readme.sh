#!/usr/bin/env bash
# The README's SQL runs as written in fresh databases: the Getting-started
# block matches the two players against each other and then walks a match
# through its ready check (proposed, accepted, ready), as the README says,
# and the Simulation block's sweep, optimum and audit run.
# Needs PGHOST/PGPORT/PGUSER of a running cluster with matchmaker installed.
set -euo pipefail
cd "$(dirname "$0")/.."
db=mm_readme

# The SQL block that follows a README heading.
block() {
	sed -n "/^## $1/,/^## /p" README.md | sed -n '/^```sql$/,/^```$/p' | grep -v '^```'
}
# Run SQL in a fresh database with the extension; print its output.
run() {
	dropdb --if-exists "$db" 2>/dev/null
	createdb "$db"
	printf 'CREATE EXTENSION matchmaker;\n%s\n' "$1" | psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" 2>&1
	dropdb "$db"
}

sql=$(block "Getting started")
[ -n "$sql" ] || { echo "readme: no Getting-started SQL block found" >&2; exit 1; }
out=$(run "$sql")
# The duel match (players 7 and 9 on teams 1 and 2 of match 1), then the
# ranked queue's ready check: proposed, then matched, both in match 2.
for want in 'player-7|1|1' 'player-9|2|1' \
	'"event": "matched", "queue": "duel", "match": 1, "tickets": [3, 4]' \
	'"event": "proposed", "queue": "ranked", "match": 2, "accept_by"' \
	'"event": "ready", "queue": "ranked", "match": 2, "tickets": [5, 6]'; do
	printf '%s\n' "$out" | grep -qF -- "$want" || { echo "readme: Getting started did not print $want" >&2; printf '%s\n' "$out" >&2; exit 1; }
done
last=$(printf '%s\n' "$out" | grep -v '^Asynchronous' | tail -4 | tr '\n' ' ')
expected='proposed matched player-7|matched|2 player-9|matched|2 '
if [ "$last" != "$expected" ]; then
	echo "readme: Getting started ended with '$last', expected '$expected'" >&2
	printf '%s\n' "$out" >&2
	exit 1
fi

sql=$(block "Simulation and the optimum")
[ -n "$sql" ] || { echo "readme: no Simulation SQL block found" >&2; exit 1; }
out=$(run "$sql")
sweep=$(printf '%s\n' "$out" | grep -c '^[0-9]*|[0-9.e-]*|[0-9.e-]*|[0-9]*$' || true)
[ "$sweep" -eq 9 ] || { echo "readme: the sweep returned $sweep rows, expected 9" >&2; printf '%s\n' "$out" >&2; exit 1; }
echo "readme: ok (Getting started and Simulation run as written)"
