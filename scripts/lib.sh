# Shared shell helpers of the project scripts (sourced, not run).

# Install the Debian packages named that are missing.
ensure_packages() {
	local missing=()
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" ||
			missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null &&
		apt-get install -y -qq "${missing[@]}" >/dev/null ||
		{ echo "apt-get install ${missing[*]} failed" >&2; return 1; }
}

# The PostgreSQL major version the scripts build and test against.
PCC_PG=${PCC_PG:-15}

# Packages every script of the project needs (libkrb5-dev: the server's
# libpq-be.h includes gssapi.h; libfaketime: the clock-step test).
PCC_PACKAGES=(postgresql-$PCC_PG postgresql-server-dev-$PCC_PG
	postgresql-client-$PCC_PG libpq-dev libkrb5-dev libipc-run-perl libfaketime
	make gcc)

PG_BINDIR=/usr/lib/postgresql/$PCC_PG/bin
export PG_CONFIG=$PG_BINDIR/pg_config

# Chroots with other PostgreSQL versions (scripts/pgenv.sh), kept between runs.
PCC_CHROOTS=/var/cache/pg_concurrency_control

# Mount what PostgreSQL needs inside a chroot (processes, shared memory);
# slaves, so that unmounting them never unmounts the host's own.
chroot_mounts() {
	local dir=$1
	mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
	mountpoint -q "$dir/dev" || { mount --rbind /dev "$dir/dev" && mount --make-rslave "$dir/dev"; }
	mountpoint -q "$dir/sys" || { mount --rbind /sys "$dir/sys" && mount --make-rslave "$dir/sys"; }
}

chroot_umounts() {
	local dir=$1
	for m in sys dev proc; do
		mountpoint -q "$dir/$m" && umount -R -l "$dir/$m"
	done
	return 0
}

# Build and install the extension into the server's directories.
build_and_install() {
	local src=$1
	make -s -C "$src" clean >/dev/null
	make -s -C "$src" COPT=-Werror >/dev/null && make -s -C "$src" install >/dev/null
}

# --- throwaway clusters for the benchmark and soak scripts -------------------
# cluster_create PREFIX PORT: initdb as postgres in a new temporary directory
# (PCC_DIR) listening only on a Unix socket there; settings are appended to
# $PCC_DIR/data/postgresql.conf by the caller; the preload is switched by
# cluster_start.  Register cluster_destroy with trap.
cluster_create() {
	PCC_DIR=$(mktemp -d "/tmp/$1.XXXXXX")
	PCC_PORT=$2
	chown postgres "$PCC_DIR"
	runuser -u postgres -- "$PG_BINDIR/initdb" -D "$PCC_DIR/data" -A trust >/dev/null
	cat >>"$PCC_DIR/data/postgresql.conf" <<EOC
port = $PCC_PORT
unix_socket_directories = '$PCC_DIR'
listen_addresses = ''
include_if_exists = 'preload.conf'
EOC
	PSQL="$PG_BINDIR/psql -h $PCC_DIR -p $PCC_PORT -U postgres -qAtX postgres"
}

cluster_ctl() {
	runuser -u postgres -- "$PG_BINDIR/pg_ctl" -D "$PCC_DIR/data" -l "$PCC_DIR/server.log" -w "$@"
}

# cluster_start native|module: (re)start without or with the module preloaded.
cluster_start() {
	if [ "$1" = module ]; then
		echo "shared_preload_libraries = 'pg_concurrency_control'" >"$PCC_DIR/data/preload.conf"
	else
		: >"$PCC_DIR/data/preload.conf"
	fi
	chown postgres "$PCC_DIR/data/preload.conf"
	cluster_ctl -m fast stop >/dev/null 2>&1 || true
	cluster_ctl start >/dev/null
}

cluster_destroy() {
	[ -n "${PCC_DIR:-}" ] || return 0
	cluster_ctl -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$PCC_DIR"
	echo "$HUGEPAGES_BEFORE" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
}

# Huge pages, where the kernel gives them: without them every backend needs
# page tables for all of shared memory (~2 MB per GB), and faults in every
# page it touches, which on some VMs costs more than the work.  Shared
# memory grows with max_connections, so the pool is sized for the
# configuration just written, with the module loaded, as the server itself
# computes it; a pool too small makes huge_pages = try fall back silently
# to 4 kB pages.  cluster_destroy gives the pool back.
HUGEPAGE_KB=$(awk '/Hugepagesize/ {print $2}' /proc/meminfo)
HUGEPAGES_BEFORE=$(cat /proc/sys/vm/nr_hugepages)
reserve_huge_pages() {	# max_connections (for the message)
	[ -n "$HUGEPAGE_KB" ] || return 0
	cluster_ctl -m fast stop >/dev/null 2>&1 || true
	echo "shared_preload_libraries = 'pg_concurrency_control'" >"$PCC_DIR/data/preload.conf"
	chown postgres "$PCC_DIR/data/preload.conf"
	local need
	need=$(runuser -u postgres -- "$PG_BINDIR/postgres" -D "$PCC_DIR/data" -C shared_memory_size_in_huge_pages)
	if [ $(( need + 8 )) -gt "$(cat /proc/sys/vm/nr_hugepages)" ]; then
		echo $(( need + 8 )) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	fi
	echo "huge pages for $1 connections: $need needed, $(cat /proc/sys/vm/nr_hugepages) reserved"
}

# A warning when the server just started does not use huge pages after all.
check_huge_pages() {
	[ -n "$HUGEPAGE_KB" ] || return 0
	if awk '/HugePages_Total/ {t = $2} /HugePages_Free/ {f = $2} /HugePages_Rsvd/ {r = $2}
		END {exit !(t > 0 && f - r == t)}' /proc/meminfo; then
		echo "   warning: the server runs without huge pages"
	fi
}

# The start of every benchmark script: root, packages (the common ones and
# any named), the module built and installed from $ROOT.
prepare_as_root() {
	[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 2; }
	ensure_packages "${PCC_PACKAGES[@]}" "$@" || exit 2
	build_and_install "$ROOT" || { echo "build failed" >&2; exit 2; }
}

# postgresql.conf lines: all four gate limits set to $1, queue order $2,
# and the quantum $3 (ms) when given.
gate_limits_conf() {
	for gate in transaction query autocommit bigquery; do
		echo "pg_concurrency_control.${gate}_concurrency = $1"
	done
	echo "pg_concurrency_control.queue_order = $2"
	[ -z "${3:-}" ] || echo "pg_concurrency_control.quantum = $3"
}
