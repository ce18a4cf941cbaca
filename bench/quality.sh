#!/usr/bin/env bash
# Every algorithm, with its defaults and with the best parameter of a small
# grid, and auto, on Schlup's six arrival specs for k = 2, 4 and 10:
# cost divided by the offline optimum (k = 2) or by the lower bound of
# bench/README.md (k > 2), mean and p95 wait, computer players per game.
# Through the C core alone (no database).
# Usage: bench/quality.sh [PLAYERS_PER_STREAM] [SEEDS] [K_LIST]
#   defaults 2000, 3 and 2,4,10 (even k only).
# Writes bench/results/quality.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
players=${1:-2000}
seeds=${2:-3}
ks=${3:-2,4,10}
MM_PACKAGES="gcc libc6-dev" mm_install_deps

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/quality" bench/quality.c src/core/*.c -lm

out=bench/results/quality.md
start=$(date +%s)
{
	echo "# Quality: every algorithm against the optimum or a bound on it"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(cc --version | head -1), -O2."
	echo "Command: \`bench/quality.sh $players $seeds $ks\`, run $(date -u +%Y-%m-%d); through the core's \`mm_simulate\` and"
	echo "\`mm_optimal_pairs\`, the code behind \`simulate\` and \`optimal_cost\`."
	echo
	echo "Schlup's six arrival specs (Table 2), $players players per stream, seeds 1 to $seeds of each (the streams of"
	echo "bench/paper.sh), uniform ratings, max_wait 5 s, on_timeout bots, two teams of k / 2. Each ratio is the"
	echo "stream's total cost (eq. 1) over the reference, averaged over the 6 x $seeds streams. \"Defaults\": the"
	echo "parameters \`create_queue\` gives with \`params => '{}'\` (periodic's batch and multi_queue's ranges \"auto\" from"
	echo "the stream's mean rate, as \`simulate\` measures it). \"Best of grid\": for each stream, the least cost over the"
	echo "defaults and the grid of bench/quality.c (\`grid_config\`): greedy with the patient policy (k >= 4); periodic"
	echo "batch k x {1, 2, 3, 4, 6, 8, 12, 16}; multi_queue ranges {1, 2, 3, 4, 6, 8, 12, 16}; difference_wait"
	echo "wait_factor {0, 0.05, 0.1, 0.2, 0.4, 0.7, 1, 2} x max_wait; window {0.01, 0.02, 0.05, 0.1} x max_window"
	echo "{0.2, 0.5, 1} x plain or percentile, widening to the cap at max_wait; cluster threshold {0.01, 0.02, 0.05,"
	echo "0.1, 0.2} x midpoint {0.25, 0.5, 1} x max_wait; optimize rounds every max_wait / {2, 4, 8} on the skill"
	echo "factors only, no restarts. auto has no parameter: its two columns are the same run. The best of a grid"
	echo "is picked knowing the stream, which no live queue can do: it flatters the other algorithms."
	"$tmp/quality" report "$ks" "$players" "$seeds"
	echo
	echo "Run time: $(($(date +%s) - start)) s."
} >"$out"
cat "$out"
