#!/usr/bin/env bash
# Builds the Debian package postgresql-NN-pg-concurrency-control for the
# PostgreSQL version installed here (PCC_PG; debian/ in the style of
# Debian's own extension packages: pg_buildext, dh --with pgxs_loop),
# installs it, preloads it in a fresh cluster and checks that it gates.
# Prints TAP lines ("ok N - ...") for scripts/suite.sh to count; leaves the
# system as it found it (the package removed, the module reinstalled from
# the tree).  Run as root.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

n=0
check() {	# check "description" command...
	local what=$1
	shift
	n=$((n + 1))
	if "$@" >>"$WORK/package.log" 2>&1; then echo "ok $n - package: $what"; else
		echo "not ok $n - package: $what"
		tail -20 "$WORK/package.log" | sed 's/^/#   /'
	fi
}

ensure_packages dpkg-dev debhelper fakeroot postgresql-server-dev-all libkrb5-dev || exit 2
# never replace, then remove, a package somebody installed on purpose
if dpkg-query -W -f='${Status}' "postgresql-$PCC_PG-pg-concurrency-control" 2>/dev/null |
	grep -q "ok installed"; then
	echo "not ok 1 - package: postgresql-$PCC_PG-pg-concurrency-control is installed here already; remove it to run this test"
	exit 1
fi
WORK=$(mktemp -d /tmp/pcc-package.XXXXXX)
cleanup() {
	[ -f "$WORK/data/postmaster.pid" ] &&
		runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$WORK/data" -m immediate stop >/dev/null 2>&1
	dpkg -r "postgresql-$PCC_PG-pg-concurrency-control" >/dev/null 2>&1
	make -s -C "$ROOT" install >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$WORK/src"
(cd "$ROOT" && tar --exclude=.git --exclude=docs --exclude='*.o' --exclude='*.so' \
	--exclude='*.bc' --exclude=pgbench_scripts/pccload -cf - .) | tar -xf - -C "$WORK/src"
# What a build by hand (for another PostgreSQL version, say) leaves in a
# tree, newer than the sources: the package builds its own (pg_buildext's
# clean runs make clean).
for c in "$WORK"/src/pg_concurrency_control/*.c; do echo stale >"${c%.c}.o"; done
echo stale >"$WORK/src/pg_concurrency_control.so"

build() {
	cd "$WORK/src" && pg_buildext updatecontrol && dpkg-buildpackage -us -uc -b
}
check "dpkg-buildpackage builds postgresql-$PCC_PG-pg-concurrency-control" build
deb=$(ls "$WORK"/postgresql-"$PCC_PG"-pg-concurrency-control_*.deb 2>/dev/null | head -1)
check "the package installs" apt-get install -y -qq "$deb"
check "it ships the library and the 1.0 script" \
	test -f "/usr/lib/postgresql/$PCC_PG/lib/pg_concurrency_control.so" -a \
	-f "/usr/share/postgresql/$PCC_PG/extension/pg_concurrency_control--1.0.sql"

chown postgres "$WORK"
as_pg() { runuser -u postgres -- "$@"; }
start() {
	as_pg "$PG_BINDIR/initdb" -D "$WORK/data" -A trust &&
		cat >>"$WORK/data/postgresql.conf" <<EOC &&
listen_addresses = ''
unix_socket_directories = '$WORK'
port = 54329
shared_preload_libraries = 'pg_concurrency_control'
pg_concurrency_control.query_concurrency = 2
EOC
		as_pg "$PG_BINDIR/pg_ctl" -D "$WORK/data" -l "$WORK/server.log" -w start
}
check "a fresh cluster starts with it preloaded" start
sql() { as_pg "$PG_BINDIR/psql" -h "$WORK" -p 54329 -qAtX -v ON_ERROR_STOP=1 -d postgres -c "$1"; }
gates() {
	sql 'CREATE EXTENSION pg_concurrency_control' &&
		[ "$(sql "SELECT max_concurrency FROM pg_concurrency_control WHERE gate = 'query'")" = 2 ]
}
check "CREATE EXTENSION; the status view shows the configured limit" gates
admits() {
	sql 'SELECT pg_concurrency_control_reset()' && sql 'SELECT 1' &&
		[ "$(sql "SELECT admitted FROM pg_concurrency_control WHERE gate = 'query'")" -ge 2 ] &&
		[ -z "$(sql 'SELECT * FROM pg_concurrency_control_check()')" ]
}
check "statements are admitted through the query gate; check() is clean" admits
