#!/usr/bin/env bash
# Every params key of the table in src/params.c is documented: it appears
# as a code span (`key`) in the reference.  The table's rows each open
# with a line "{" followed by the key's name in quotes on a line of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

reference=doc/reference.md
keys=$(sed -n '/BEGIN PARAMS TABLE/,/END PARAMS TABLE/p' src/params.c |
	grep -A1 -E '^[[:space:]]*\{$' |
	sed -n -E 's/^[[:space:]]*"([a-z_]+)",$/\1/p')
if [ -z "$keys" ]; then
	echo "no params keys found in src/params.c" >&2
	exit 1
fi
missing=0
for key in $keys; do
	if ! grep -qF "\`$key\`" "$reference"; then
		echo "params key $key is not documented in $reference" >&2
		missing=$((missing + 1))
	fi
done
if [ "$missing" -gt 0 ]; then
	exit 1
fi
echo "$(echo "$keys" | wc -l) params keys documented in $reference"
