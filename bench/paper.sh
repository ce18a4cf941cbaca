#!/usr/bin/env bash
# Reproduce the source papers through the matchmaker's C core (no database):
#   Schlup eq. 5 and eq. 7 against simulation, the data of Schlup's Figure 2
#   (plotted with gnuplot), Schlup's Table 3 against the offline optimum,
#   and Wu's Theorem 3.3.
# Usage: bench/paper.sh [PLAYERS_PER_STREAM] [SEEDS] [WU_PERIODS]
# Writes bench/results/paper.md and bench/results/figure2.png.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
players=${1:-2000}
seeds=${2:-3}
periods=${3:-1000000}
MM_PACKAGES="gcc libc6-dev gnuplot-nox" mm_install_deps

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/schlup" bench/schlup.c src/core/*.c -lm
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/wu" bench/wu.c src/core/*.c -lm

out=bench/results/paper.md
{
	echo "# The papers' results, reproduced"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr)."
	echo "Command: \`bench/paper.sh $players $seeds $periods\`, run $(date -u +%Y-%m-%d); everything goes through the"
	echo "core's \`mm_simulate\`, \`mm_step\` and \`mm_optimal_pairs\`, the code behind \`tick\`, \`simulate\` and \`optimal_cost\`."
	echo
	echo "## Schlup"
	echo
	"$tmp/schlup" "$players" "$seeds" "$tmp/figure2.dat"
	echo
	echo "![cost per game against the parameter](figure2.png)"
	echo
	echo "## Wu, Theorem 3.3 ($periods periods per cell)"
	echo
	"$tmp/wu" "$periods"
} >"$out"

gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output 'bench/results/figure2.png'
set title 'Cost per game against the parameter (k = 2, rate 10/s, max_wait 5 s; cf. Schlup, Figure 2)'
set xlabel 'periodic: batch n / 2;  multi_queue: ranges r;  difference_wait: wait_factor (s)'
set ylabel 'cost per game (eq. 1)'
set key top right
set grid
plot '$tmp/figure2.dat' using (\$1/2):2 with linespoints title 'periodic, simulated', \
     '' using (\$1/2):3 with lines dashtype 2 title 'periodic, eq. 5', \
     '' using 4:5 with linespoints title 'multi_queue, simulated', \
     '' using 4:6 with lines dashtype 2 title 'multi_queue, eq. 7', \
     '' using 7:8 with linespoints title 'difference_wait, simulated', \
     '' using 4:9 with lines title 'greedy, simulated'
GP
echo "wrote $out and bench/results/figure2.png"
