#!/usr/bin/env bash
# Benchmark: one auto step (k = 2) over N waiting tickets that are all due
# (bench/auto_step.c), by the C core alone (no database), without and with
# a sample of recent ratings.  Usage: bench/auto_step.sh [N ...]
# (default: 10000 100000 1000000).  Writes bench/results/auto_step.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
MM_PACKAGES="gcc libc6-dev" mm_install_deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/auto_step" bench/auto_step.c src/core/*.c -lm
out=bench/results/auto_step.md
{
	echo "# One auto step over tickets all due"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(cc --version | head -1), -O2."
	echo "Command: \`bench/auto_step.sh ${sizes[*]}\`, run $(date -u +%Y-%m-%d). One thread; k = 2, max_wait 5 s,"
	echo "N tickets with uniform ratings arrived evenly within one second, stepped at 4.9 s; the best of three."
	echo
	echo "| N | recent ratings | matches | step (s) |"
	echo "|---:|---|---:|---:|"
	for n in "${sizes[@]}"; do
		for mode in "" recent; do
			# shellcheck disable=SC2086
			line=$("$tmp/auto_step" "$n" $mode)
			m=$(sed -n 's/.*: \([0-9]*\) matches.*/\1/p' <<<"$line")
			s=$(sed -n 's/.*step \([0-9.]*\) s$/\1/p' <<<"$line")
			echo "| $n | ${mode:-none} | $m | $s |"
		done
	done
} >"$out"
cat "$out"
