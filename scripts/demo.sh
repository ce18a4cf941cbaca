#!/usr/bin/env bash
# The live demo: install what is needed, build and install matchmaker, start
# a throw-away cluster, create a queue, enqueue players and score a match.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

mm_install_deps
mm_build_install
mm_start_cluster
echo "== throw-away cluster at $PGHOST (removed on exit)"
psql -X -q -v ON_ERROR_STOP=1 -f demo/demo.sql
