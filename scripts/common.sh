# Shared by scripts/demo.sh and scripts/test.sh: install what the project
# needs from Debian's packages, build and install the extension, and run a
# throw-away PostgreSQL cluster as a non-root user.
#
# Environment:
#   PG_CONFIG   pg_config of the server to build for (default: PostgreSQL 15's)
#   MM_KEEP     set to 1 to leave the throw-away cluster's directory behind

PG_MAJOR=15
: "${PG_CONFIG:=/usr/lib/postgresql/$PG_MAJOR/bin/pg_config}"
PGBIN=$("$PG_CONFIG" --bindir)
MM_PACKAGES="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR \
make gcc libc6-dev libipc-run-perl python3 python3-psycopg2 valgrind pgbouncer \
prometheus-postgres-exporter postgresql-$PG_MAJOR-plproxy"

# Run a command as root: directly when we are root, else through sudo.
mm_as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The user that runs the server: ourselves, or postgres when we are root.
mm_server_user() {
	if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

# Run a command as the server user.
mm_as_server_user() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Install the Debian packages that are missing.
mm_install_deps() {
	local missing=""
	for p in $MM_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	# Node.js and npm (the Node.js client's tests), unless a Node.js with npm is there
	command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
	if [ -n "$missing" ]; then
		echo "== installing Debian packages:$missing"
		mm_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		# shellcheck disable=SC2086
		mm_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	fi
}

# Build warning-free (-Werror is in the Makefile) and install the extension.
mm_build_install() {
	echo "== building matchmaker"
	make -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
	make -s PG_CONFIG="$PG_CONFIG" "$@"
	mm_as_root make -s PG_CONFIG="$PG_CONFIG" install "$@" >/dev/null
}

# Start a throw-away cluster; sets PGHOST, PGPORT, PGUSER, PGDATABASE and
# MM_CLUSTER.  Extra lines for postgresql.conf come as arguments.
mm_start_cluster() {
	MM_CLUSTER=$(mktemp -d /tmp/matchmaker-cluster.XXXXXX)
	chmod 755 "$MM_CLUSTER"
	if [ "$(id -u)" -eq 0 ]; then chown postgres "$MM_CLUSTER"; fi
	mm_as_server_user "$PGBIN/initdb" -D "$MM_CLUSTER/data" -A trust -U postgres --no-sync >/dev/null
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$MM_CLUSTER'"
		echo "port = 5432"
		echo "fsync = off"
		for line in "$@"; do echo "$line"; done
	} >>"$MM_CLUSTER/data/postgresql.conf"
	mm_as_server_user "$PGBIN/pg_ctl" -D "$MM_CLUSTER/data" -l "$MM_CLUSTER/server.log" -w start >/dev/null
	export PGHOST="$MM_CLUSTER" PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
	trap mm_stop_cluster EXIT
}

# Stop the throw-away cluster and remove it (unless MM_KEEP=1).
mm_stop_cluster() {
	[ -n "${MM_CLUSTER:-}" ] || return 0
	mm_as_server_user "$PGBIN/pg_ctl" -D "$MM_CLUSTER/data" -m fast -w stop >/dev/null 2>&1 || true
	if [ "${MM_KEEP:-0}" = 1 ]; then
		echo "== cluster left in $MM_CLUSTER"
	else
		rm -rf "$MM_CLUSTER"
	fi
	MM_CLUSTER=""
}
