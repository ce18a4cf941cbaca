#!/usr/bin/env bash
# The live demo: install what is needed, build and install matchmaker, start
# a throw-away cluster with the background worker, feed it players over time
# and print each match as its NOTIFY arrives.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh

mm_install_deps
mm_build_install
mm_start_cluster "shared_preload_libraries = 'matchmaker'" "matchmaker.database = 'postgres'"
echo "== throw-away cluster at $PGHOST with the matchmaker worker (removed on exit)"
# Debian's interpreter, which has python3-psycopg2.
/usr/bin/python3 demo/demo.py
