#!/bin/sh
# A throw-away PostgreSQL server for trying approve-tui's PostgreSQL backend
# (and for its tests): a fresh cluster in DIR, listening on 127.0.0.1:PORT and
# on a unix socket in DIR, with trust authentication. Nothing outside DIR is
# touched.
#
#   sh examples/postgres-local.sh start DIR [PORT]   # prints the database URL
#   sh examples/postgres-local.sh stop DIR
#
# Run as root it runs the server as the postgres user (initdb refuses root).
# It needs the PostgreSQL server binaries (Debian: postgresql); set PGBIN to
# their directory when pg_ctl is not on PATH.
set -eu

cmd=${1:-}
dir=${2:-}
port=${3:-55432}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
	echo "usage: $0 start|stop DIR [PORT]" >&2
	exit 2
fi

if [ -z "${PGBIN:-}" ]; then
	if command -v pg_ctl >/dev/null 2>&1; then
		PGBIN=$(dirname "$(command -v pg_ctl)")
	else
		PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	fi
fi
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/pg_ctl" ]; then
	echo "$0: no PostgreSQL server binaries found (install the postgresql package, or set PGBIN)" >&2
	exit 1
fi

# runuser is in sbin, which a root shell's PATH may lack.
runuser=$(command -v runuser 2>/dev/null || ls /usr/sbin/runuser /sbin/runuser 2>/dev/null | head -n 1 || true)
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		"${runuser:-runuser}" -u postgres -- "$@"
	else
		"$@"
	fi
}

case "$cmd" in
start)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [ "$(id -u)" = 0 ]; then
		chown postgres "$dir"
	fi
	if [ ! -f "$dir/PG_VERSION" ]; then
		as_owner "$PGBIN/initdb" -D "$dir" -A trust -U postgres -E UTF8 --no-instructions >"$dir.initdb.log" 2>&1 || {
			echo "$0: initdb failed:" >&2
			cat "$dir.initdb.log" >&2
			exit 1
		}
	fi
	as_owner "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=on" start >/dev/null || {
		echo "$0: the server did not start:" >&2
		cat "$dir/server.log" >&2
		exit 1
	}
	echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	;;
stop)
	as_owner "$PGBIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
	;;
*)
	echo "usage: $0 start|stop DIR [PORT]" >&2
	exit 2
	;;
esac
