#!/usr/bin/env bash
# Benchmark: every algorithm on the same simulated traffic (cost per game,
# mean and p95 wait, each at its best parameter of a small grid), through
# the C core alone.  Usage: bench/algorithms.sh [ARRIVALS]  (default 20000)
# Writes bench/results/algorithms.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
n=${1:-20000}
MM_PACKAGES="gcc libc6-dev" mm_install_deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/algorithms" bench/algorithms.c src/core/*.c -lm
out=bench/results/algorithms.md
{
	echo "# Every algorithm on the same traffic"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(cc --version | head -1), -O2."
	echo "Command: \`bench/algorithms.sh $n\`, run $(date -u +%Y-%m-%d). Poisson arrivals, uniform ratings, on_timeout bots."
	echo "Each algorithm at the parameter of its grid (see bench/algorithms.c) with the least cost per game (Schlup's eq. 1);"
	echo "window widens to its cap at max_wait, every second; cluster uses steepness 10 / max_wait and shift \"auto\"."
	"$tmp/algorithms" "$n"
} >"$out"
cat "$out"
