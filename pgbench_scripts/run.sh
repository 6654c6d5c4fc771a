#!/usr/bin/env bash
# The comparison driver: native PostgreSQL | PostgreSQL with pg_concurrency_control
# | PgBouncer (transaction pooling) in front of native PostgreSQL, over a doubling
# series of connection counts, measured with pccload; writes
# results/<timestamp>/report.md with tables and SVG plots.
#
#   pgbench_scripts/run.sh --quick            64, 256, 1024; 10 s steps; a few minutes
#   pgbench_scripts/run.sh                    64..16384 (capped by the machine), 60 s steps
#   options: --from N --to N --step-factor N (2) --duration S --scale N --limit N
#            --warmup S (10; 5 with --quick: load before each step's steady
#             phase, not counted, so that the backends' caches are warm)
#            --queue-order fifo|warm --warm-max-wait MS
#            --quantum MS (target "module": by default the module's own defaults; a
#             number sets quantum MS with turn_grace and max_turn_wait off)
#            --workload tpcb|simple-update|select-only|partition-mix
#            --protocols "prepared simple" --targets "native module module-q0 pgbouncer"
#            (module-qN: the module with quantum N ms, side by side with "module";
#             module-qN-gG: and turn_grace G us; module-qN-gG-wW, module-qN-wW: and
#             max_turn_wait W ms; a last -mM: turn_grace_max M us (else 0, so that
#             every session has turn_grace); pgbouncer: Debian bookworm's 1.18,
#             simple protocol only; pgbouncer126: sid's 1.26 from a chroot, both
#             protocols, prepared statements pooled)
#            --think MS (each client pauses MS between transactions)
#            --unlogged (unlogged tables, synchronous_commit off)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE="$ROOT/pgbench_scripts"
. "$ROOT/scripts/lib.sh"

FROM=64 TO=16384 FACTOR=2 DURATION=60 SCALE=50 LIMIT=$(( $(nproc) * 8 )) ORDER=fifo WARM_WAIT=1 QUANTUM=default
WORKLOAD=tpcb PROTOCOLS="prepared simple" TARGETS="native module module-q0 pgbouncer" UNLOGGED=0 THINK="" WARMUP=10
while [ $# -gt 0 ]; do
	case $1 in
	--quick) FROM=64 TO=1024 FACTOR=4 DURATION=10 WARMUP=5 SCALE=10 TARGETS="native module pgbouncer" ;;
	--step-factor) FACTOR=$2; shift ;;
	--from) FROM=$2; shift ;;
	--to) TO=$2; shift ;;
	--duration) DURATION=$2; shift ;;
	--warmup) WARMUP=$2; shift ;;
	--scale) SCALE=$2; shift ;;
	--limit) LIMIT=$2; shift ;;
	--queue-order) ORDER=$2; shift ;;
	--warm-max-wait) WARM_WAIT=$2; shift ;;
	--quantum) QUANTUM=$2; shift ;;
	--workload) WORKLOAD=$2; shift ;;
	--protocols) PROTOCOLS=$2; shift ;;
	--targets) TARGETS=$2; shift ;;
	--unlogged) UNLOGGED=1 ;;
	--think) THINK=$2; shift ;;
	-h|--help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
# The turn settings of a module target as ALTER SYSTEM commands: the
# module's defaults (or --quantum) for "module", else quantum N ms,
# turn_grace G us, max_turn_wait W ms and turn_grace_max M us from
# "module-qN[-gG][-wW][-mM]".
target_turns() {
	local q g=0 w=0 m=0
	if [ "$1" = module ] && [ "$QUANTUM" = default ]; then
		for p in quantum turn_grace max_turn_wait turn_grace_max; do
			echo "ALTER SYSTEM RESET pg_concurrency_control.$p;"
		done
		return
	elif [ "$1" = module ]; then
		q=$QUANTUM
	elif [[ $1 =~ ^module-q([0-9]+)(-g([0-9]+))?(-w([0-9]+))?(-m([0-9]+))?$ ]]; then
		q=${BASH_REMATCH[1]} g=${BASH_REMATCH[3]:-0} w=${BASH_REMATCH[5]:-0} m=${BASH_REMATCH[7]:-0}
	else
		echo "unknown target $1" >&2
		exit 2
	fi
	echo "ALTER SYSTEM SET pg_concurrency_control.quantum = $q;"
	echo "ALTER SYSTEM SET pg_concurrency_control.turn_grace = '${g}us';"
	echo "ALTER SYSTEM SET pg_concurrency_control.max_turn_wait = $w;"
	echo "ALTER SYSTEM SET pg_concurrency_control.turn_grace_max = '${m}us';"
}
[[ $QUANTUM =~ ^([0-9]+|default)$ ]] || { echo "--quantum takes a number of ms" >&2; exit 2; }
for target in $TARGETS; do
	case $target in
	native|pgbouncer|pgbouncer126) ;;
	*) target_turns "$target" >/dev/null ;;
	esac
done
prepare_as_root pgbouncer gnuplot-nox
make -s -C "$HERE" pccload >/dev/null

OUT="$HERE/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
CSV="$OUT/results.csv"
BOUNCER_PORT=56432
BOUNCER_PID=""
BOUNCER126_ROOT=""
cleanup() {
	[ -n "$BOUNCER_PID" ] && kill "$BOUNCER_PID" 2>/dev/null || true
	[ -f "${DIR:-}/pgbouncer.pid" ] && kill "$(cat "$DIR/pgbouncer.pid")" 2>/dev/null || true
	[ -z "$BOUNCER126_ROOT" ] || umount -l "$BOUNCER126_ROOT${DIR:-/nonexistent}" 2>/dev/null || true
	cluster_destroy
}
trap cleanup EXIT
trap 'echo interrupted >&2; exit 130' INT TERM

# --- capacity: what this machine can hold, computed
fd_limit=$(ulimit -Hn)
ulimit -n "$fd_limit"
mem_avail_mb=$(awk '/MemAvailable/ {print int($2/1024)}' /proc/meminfo)
shared_buffers_mb=$(( mem_avail_mb / 8 > 4096 ? 4096 : mem_avail_mb / 8 ))

cluster_create pcc-run 55499
DIR=$PCC_DIR PORT=$PCC_PORT
server_conf() {	# max_connections
	cat <<EOC
max_connections = $1
shared_buffers = ${shared_buffers_mb}MB
huge_pages = try
fsync = off
full_page_writes = off
synchronous_commit = $([ $UNLOGGED = 1 ] && echo off || echo on)
max_wal_size = 16GB
checkpoint_timeout = 30min
$(gate_limits_conf "$LIMIT" "$ORDER")
pg_concurrency_control.warm_max_wait = $WARM_WAIT
EOC
}
write_conf() {	# max_connections
	server_conf "$1" >"$DIR/data/postgresql.auto.conf"
	chown postgres "$DIR/data/postgresql.auto.conf"
}

# Probe: memory per backend (PSS) under this workload with 64 connections.
write_conf 200
probe_pages=$(reserve_huge_pages 200)
cluster_start native
$PG_BINDIR/pgbench -h "$DIR" -p $PORT -U postgres -i -q -s "$SCALE" \
	$([ $UNLOGGED = 1 ] && echo --unlogged-tables) postgres >/dev/null 2>&1
if [ "$WORKLOAD" = partition-mix ]; then
	$PSQL -v scale="$SCALE" -f "$HERE/partition_mix.sql" >/dev/null
fi
"$HERE/pccload" -h "$DIR" -p $PORT -c 64 -T 5 -P 0 -w "$WORKLOAD" >/dev/null 2>&1 &
probe=$!
sleep 4
# private memory and page tables of each backend; shared memory is counted once
backend_kb=$(for p in $(pgrep -u postgres -f "postgres: postgres postgres"); do
	{ awk '/^Private_(Clean|Dirty):/ {s += $2} END {print s}' /proc/$p/smaps_rollup
	  awk '/^VmPTE:/ {print $2}' /proc/$p/status; } 2>/dev/null | awk '{s += $1} END {print s}' || true; done |
	awk '$1 > 0 {s += $1; n++} END {print n ? int(s / n) : 8192}') || true
wait $probe || true
per_backend_mb=$(( (backend_kb + 1023) / 1024 + 1 ))	# plus socket buffers and slack
cap_mem=$(( (mem_avail_mb - shared_buffers_mb - 2048) / per_backend_mb ))
cap_fd=$(( fd_limit - 200 ))
cap=$(( cap_mem < cap_fd ? cap_mem : cap_fd ))
STEPS=""
for (( c = FROM; c <= TO; c *= FACTOR )); do
	[ "$c" -le "$cap" ] && STEPS="$STEPS $c"
done
STEPS=${STEPS# }
max_step=${STEPS##* }
{
	echo "machine: $(nproc) CPUs, ${mem_avail_mb} MB available, open-files hard limit $fd_limit"
	echo "huge pages: $(awk '/HugePages_Total/ {print $2}' /proc/meminfo) of ${HUGEPAGE_KB} kB"
	[ -z "$probe_pages" ] || echo "$probe_pages (the probe)"
	echo "backend memory (private + page tables, measured at 64 connections): ~${per_backend_mb} MB"
	echo "capacity: $cap connections (memory $cap_mem, file descriptors $cap_fd)"
	echo "steps: $STEPS"
	if [ "$max_step" -lt "$TO" ]; then echo "capped: $TO connections do not fit on this machine"; fi
} | tee "$OUT/capacity.txt"

write_conf $(( max_step + 50 ))
reserve_huge_pages $(( max_step + 50 )) | tee -a "$OUT/capacity.txt"

# PgBouncer 1.26 (Debian sid's), run from the sid chroot of scripts/pgenv.sh
# with the cluster's socket directory mounted at the same path: the system's
# 1.18 stays.  It pools protocol-level prepared statements.
bouncer126_setup() {
	[ -n "$BOUNCER126_ROOT" ] && return 0
	BOUNCER126_ROOT=$(bash "$ROOT/scripts/pgenv.sh" 18) || return 1
	chroot "$BOUNCER126_ROOT" dpkg -s pgbouncer >/dev/null 2>&1 ||
		chroot "$BOUNCER126_ROOT" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq pgbouncer >/dev/null 2>&1 || return 1
	[ "$(id -u postgres)" = "$(chroot "$BOUNCER126_ROOT" id -u postgres)" ] ||
		{ echo "the chroot's postgres user has another uid: cannot share the socket directory" >&2; return 1; }
	mkdir -p "$BOUNCER126_ROOT$DIR"
	mountpoint -q "$BOUNCER126_ROOT$DIR" || mount --bind "$DIR" "$BOUNCER126_ROOT$DIR"
}

start_bouncer() {	# pgbouncer | pgbouncer126
	local cmd=(pgbouncer)
	if [ "$1" = pgbouncer126 ]; then
		bouncer126_setup || { echo "PgBouncer 1.26 is not available" >&2; return 1; }
		cmd=(chroot "$BOUNCER126_ROOT" pgbouncer)
	fi
	cat >"$DIR/pgbouncer.ini" <<EOB
[databases]
postgres = host=$DIR port=$PORT dbname=postgres user=postgres
[pgbouncer]
listen_addr =
listen_port = $BOUNCER_PORT
unix_socket_dir = $DIR
auth_type = trust
auth_file = $DIR/userlist.txt
pool_mode = transaction
default_pool_size = $LIMIT
max_client_conn = $(( max_step + 100 ))
max_db_connections = $LIMIT
logfile = $DIR/pgbouncer.log
pidfile = $DIR/pgbouncer.pid
$([ "$1" = pgbouncer126 ] && echo "max_prepared_statements = 200")
EOB
	echo '"postgres" ""' >"$DIR/userlist.txt"
	chown postgres "$DIR"/pgbouncer.ini "$DIR"/userlist.txt
	"${cmd[@]}" -u postgres "$DIR/pgbouncer.ini" >/dev/null 2>&1 &
	BOUNCER_PID=$!
	for _ in $(seq 50); do [ -S "$DIR/.s.PGSQL.$BOUNCER_PORT" ] && return 0; sleep 0.1; done
	echo "pgbouncer did not start" >&2
	return 1
}
stop_bouncer() {
	# the chroot's pgbouncer is a child of chroot: stop it by its pidfile
	[ -f "$DIR/pgbouncer.pid" ] && kill "$(cat "$DIR/pgbouncer.pid")" 2>/dev/null || true
	kill "$BOUNCER_PID" 2>/dev/null || true
	wait "$BOUNCER_PID" 2>/dev/null || true
	BOUNCER_PID=""
	rm -f "$DIR/pgbouncer.pid"
}

run_step() {	# target protocol clients name (the target's, or target#N for its N-th run in a step)
	local target=$1 proto=$2 c=$3 name=$4 port=$PORT
	case $target in
	module*)
		cluster_start module
		target_turns "$target" | $PSQL -v ON_ERROR_STOP=1 >/dev/null
		$PSQL -c 'SELECT pg_reload_conf()' >/dev/null ;;
	*) cluster_start native ;;
	esac
	check_huge_pages | tee -a "$OUT/capacity.txt" >&2
	$PSQL -c 'VACUUM FREEZE' -c 'CHECKPOINT'
	local wait_close=""
	if [[ $target == pgbouncer* ]]; then start_bouncer "$target"; port=$BOUNCER_PORT; wait_close=--no-wait-close; fi
	echo "== $target, $proto, $c connections" >&2
	"$HERE/pccload" -h "$DIR" -p "$port" -c "$c" -T "$DURATION" --warmup "$WARMUP" -P 10 -w "$WORKLOAD" -M "$proto" \
		-s "$SCALE" -L "$target" $wait_close ${THINK:+--think "$THINK"} \
		--csv "$CSV" --json "$OUT/$name-$proto-$c.json" \
		>"$OUT/$name-$proto-$c.txt" 2>"$OUT/$name-$proto-$c.progress" ||
		echo "   (no transactions completed)" >&2
	grep -E '^tps steady' "$OUT/$name-$proto-$c.txt" >&2 || true
	if [[ $target == pgbouncer* ]]; then stop_bouncer; fi
	return 0
}

for c in $STEPS; do
	for proto in $PROTOCOLS; do
		declare -A runs=()
		for target in $TARGETS; do
			# Debian's PgBouncer 1.18 cannot pool protocol-level prepared statements
			if [ "$target" = pgbouncer ] && [ "$proto" = prepared ]; then continue; fi
			runs[$target]=$(( ${runs[$target]:-0} + 1 ))
			# as report.py names a repeat
			name=$target
			[ "${runs[$target]}" -eq 1 ] || name="$target#${runs[$target]}"
			run_step "$target" "$proto" "$c" "$name"
		done
		unset runs
	done
done

{
	echo "PostgreSQL: $($PG_BINDIR/postgres --version)"
	echo "PgBouncer: $(pgbouncer --version 2>&1 | head -1)"
	[ -z "$BOUNCER126_ROOT" ] ||
		echo "PgBouncer (sid): $(chroot "$BOUNCER126_ROOT" pgbouncer --version 2>&1 | head -1)"
	echo "workload $WORKLOAD, scale $SCALE, steady ${DURATION}s per step after a ${WARMUP}s warm-up, unlogged=$UNLOGGED, think ${THINK:-0} ms"
	echo "module limits $LIMIT (all four gates), queue_order $ORDER, warm_max_wait ${WARM_WAIT}ms, turns of \"module\": $([ "$QUANTUM" = default ] && echo "the module's defaults" || echo "quantum ${QUANTUM}ms") (module-qN-gG-wW-mM: quantum N ms, turn_grace G us, max_turn_wait W ms, turn_grace_max M us)"
	echo "PgBouncer: transaction pooling, pool size $LIMIT"
	echo "server settings (module targets add their turn settings with ALTER SYSTEM):"
	server_conf $(( max_step + 50 )) | sed 's/^/    /'
} >"$OUT/config.txt"
python3 "$HERE/report.py" "$OUT"
echo "report: $OUT/report.md"
