#!/usr/bin/env bash
# Every command the documentation tells a user to run is stored executable:
# a file of this repository named at the start of a code span (`bench/tick.sh
# 1000`, `MM_KEEP=1 scripts/test.sh`) or of a line of a shell block in
# README.md, bench/README.md, test/README.md or doc/*.md, and beginning with
# "#!", must have the mode 100755 in git (`git ls-files -s`), or be
# executable when the tree is not a git checkout.  A named file that does not
# exist is an error too (a stale path in the documentation).  Needs no server.
set -euo pipefail
cd "$(dirname "$0")/.."

docs="README.md bench/README.md test/README.md"
for f in doc/*.md; do docs="$docs $f"; done

# The paths in command position: at the start of a code span, after any
# VAR=value assignments, or at the start of a line of a ```sh block.
named() {
	local f
	for f in $docs; do
		[ -f "$f" ] || continue
		grep -oE '`([A-Za-z_][A-Za-z0-9_]*=[^ `]* )*(\./)?(scripts|bench|test|demo)/[A-Za-z0-9_./-]+' "$f" |
			sed -E 's/^`([A-Za-z_][A-Za-z0-9_]*=[^ `]* )*(\.\/)?//' || true
		sed -n '/^```sh$/,/^```$/p' "$f" | grep -oE '^([A-Za-z_][A-Za-z0-9_]*=[^ ]* )*(\./)?(scripts|bench|test|demo)/[A-Za-z0-9_./-]+' |
			sed -E 's/^([A-Za-z_][A-Za-z0-9_]*=[^ ]* )*(\.\/)?//' || true
	done | sed -E 's/[.,:;]+$//' | sort -u
}

# The mode git stores for a file, or nothing when git cannot tell.
git_mode() {
	git ls-files -s -- "$1" 2>/dev/null | awk 'NR == 1 { print $1 }'
}

ingit=0
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then ingit=1; fi

checked=0
bad=0
for path in $(named); do
	# A folder (`test/specs`) is named, not run.
	[ -d "$path" ] && continue
	if [ ! -e "$path" ]; then
		echo "commands: the documentation names $path, which does not exist" >&2
		bad=$((bad + 1))
		continue
	fi
	# Only scripts are commands; data and results are merely named.
	[ "$(head -c 2 "$path")" = '#!' ] || continue
	checked=$((checked + 1))
	mode=""
	[ "$ingit" -eq 1 ] && mode=$(git_mode "$path")
	if [ -n "$mode" ]; then
		if [ "$mode" != 100755 ]; then
			echo "commands: $path is stored with mode $mode in git, not 100755 (git update-index --chmod=+x $path)" >&2
			bad=$((bad + 1))
		fi
	elif [ ! -x "$path" ]; then
		echo "commands: $path is not executable (chmod +x $path)" >&2
		bad=$((bad + 1))
	fi
done

if [ "$checked" -eq 0 ]; then
	echo "commands: the documentation names no command (is the pattern out of date?)" >&2
	exit 1
fi
[ "$bad" -eq 0 ] || exit 1
echo "commands: ok ($checked commands named in the documentation are executable)"
