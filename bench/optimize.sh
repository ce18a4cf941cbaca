#!/usr/bin/env bash
# Benchmark: what optimize's random restarts buy on rounds of 120 players
# (3v3, four regions, premades, previous-match pairs), through the C core
# alone: the round score after the start, after the first climb and with
# 1 to 1024 restarts, and the time each took.
# Usage: bench/optimize.sh [ROUNDS]  (default 3; 1024 restarts take about a
# minute per round on one core).  Writes bench/results/optimize.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
rounds=${1:-3}
MM_PACKAGES="gcc libc6-dev" mm_install_deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/optimize" bench/optimize.c src/core/*.c -lm
out=bench/results/optimize.md
{
	echo "# optimize: a couple of restarts or a thousand?"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(cc --version | head -1), -O2."
	echo "Command: \`bench/optimize.sh $rounds\`, run $(date -u +%Y-%m-%d). One thread; times are wall clock on a shared machine."
	echo "Each round is searched from scratch by every variant (\`mm_optimize_search\`, budget unlimited); the restarts"
	echo "of a variant are the first ones of the next (same seed), so more restarts never score lower."
	"$tmp/optimize" "$rounds"
} >"$out"
cat "$out"
