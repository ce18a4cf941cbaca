#!/usr/bin/env bash
# Benchmark: several criteria (D = 2, 3) on simulated traffic through the
# C core: greedy, multi_queue on the rating alone, on a grid of every
# criterion (the best side of 1..6, and "auto": eq. 9 generalised) against
# the generalised eq. 7; and simulation speed for D = 1 .. 4.
# Usage: bench/criteria.sh [ARRIVALS]  (default 200000)
# Writes bench/results/criteria.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
n=${1:-200000}
MM_PACKAGES="gcc libc6-dev" mm_install_deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/criteria" bench/criteria.c src/core/*.c -lm
out=bench/results/criteria.md
{
	echo "# Several criteria"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(cc --version | head -1), -O2."
	echo "Command: \`bench/criteria.sh $n\`, run $(date -u +%Y-%m-%d). Poisson arrivals; the rating and every further"
	echo "criterion uniform and independent; equal weights (f_d = k / D); on_timeout bots. Costs per game (Schlup's eq. 1"
	echo "over all D criteria); \"eq. 7 (D)\" is the generalised expected cost of doc/algorithms.md for the ranges used."
	"$tmp/criteria" "$n"
} >"$out"
cat "$out"
