#!/usr/bin/env bash
# Benchmark: one optimize round over 10^3, 10^4 and 10^5 waiting tickets,
# 1v1 and 5v5, through the C core alone: the round's wall-clock time and
# the core's peak memory, with the defaults (round_max 2000, budget_ms
# 200) and with round_max raised to the whole pool.
# Usage: bench/optimize_rounds.sh [REPEATS]  (default 3; about a minute).
# Writes bench/results/optimize_rounds.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
repeats=${1:-3}
MM_PACKAGES="gcc libc6-dev" mm_install_deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/optimize_rounds" bench/optimize_rounds.c src/core/*.c -lm
out=bench/results/optimize_rounds.md
{
	echo "# optimize: time and memory of one round, 10^3 to 10^5 waiting tickets"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(cc --version | head -1), -O2."
	echo "Command: \`bench/optimize_rounds.sh $repeats\`, run $(date -u +%Y-%m-%d). One thread; times are wall clock on a shared machine."
	echo "Solo tickets, uniform ratings, arrivals spread over the last minute, no pings; default weights, 4 restarts,"
	echo "budget_ms 200. A round takes the round_max oldest tickets; peak core memory is the core allocator's high-water"
	echo "mark during the round (the caller's pool and result arrays not included)."
	echo
	"$tmp/optimize_rounds" "$repeats"
} >"$out"
cat "$out"
