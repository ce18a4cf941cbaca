#!/usr/bin/env bash
# Benchmark: arrivals simulated per second by the C core alone (no
# database).  Usage: bench/core_speed.sh [ARRIVALS]  (default 1000000)
# Writes bench/results/core_speed.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
n=${1:-1000000}
MM_PACKAGES="gcc libc6-dev" mm_install_deps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu99 -O2 -Wall -Wextra -Werror -o "$tmp/core_speed" bench/core_speed.c src/core/*.c -lm
out=bench/results/core_speed.md
{
	echo "# Core simulation speed"
	echo
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr), $(cc --version | head -1), -O2."
	echo "Command: \`bench/core_speed.sh $n\`, run $(date -u +%Y-%m-%d). One thread; k = 2, rate 10/s, max_wait 5 s."
	echo
	"$tmp/core_speed" "$n"
} >"$out"
cat "$out"
