#!/usr/bin/env bash
# The README's Getting-started SQL runs as written in a fresh database and
# ends with the two players matched against each other, as the README says.
# Needs PGHOST/PGPORT/PGUSER of a running cluster with matchmaker installed.
set -euo pipefail
cd "$(dirname "$0")/.."
db=mm_readme
sql=$(sed -n '/^## Getting started/,/^## /p' README.md | sed -n '/^```sql$/,/^```$/p' | grep -v '^```')
[ -n "$sql" ] || { echo "readme: no Getting-started SQL block found" >&2; exit 1; }

dropdb --if-exists "$db" 2>/dev/null; createdb "$db"
out=$(printf 'CREATE EXTENSION matchmaker;\n%s\n' "$sql" | psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" 2>&1)
dropdb "$db"

last=$(printf '%s\n' "$out" | tail -2 | tr '\n' ' ')
expected='player-7|1|1 player-9|2|1 '
if [ "$last" != "$expected" ]; then
	echo "readme: Getting started ended with '$last', expected '$expected'" >&2
	printf '%s\n' "$out" >&2
	exit 1
fi
printf '%s\n' "$out" | grep -q '"tickets": \[3, 4\]' || { echo "readme: the NOTIFY payload differs from the README" >&2; printf '%s\n' "$out" >&2; exit 1; }
echo "readme: ok (Getting started runs as written)"
