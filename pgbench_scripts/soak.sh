#!/usr/bin/env bash
# Soak: many connections mixing all four gates while a controller cancels
# and terminates random backends, sets statement timeouts, and reloads with
# shrinking and growing limits.  The gates' invariants are checked every few
# seconds under load, and all of them once the load has stopped; the first
# violation stops the soak with exit status 1.  Not part of the test suite.
#
#   pgbench_scripts/soak.sh                      2000 connections, 10 minutes
#   pgbench_scripts/soak.sh --clients 500 --minutes 2
#   pgbench_scripts/soak.sh --quantum 0        turns off (default 2, the module's; reloads vary
#                                                   the turn settings, the quantum half of the
#                                                   time around it, half up to 200 ms)
#   pgbench_scripts/soak.sh --mixed            workload groups, priorities, and
#                                                   reloads that set auto limits (-1) and
#                                                   add, resize and remove groups
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

CLIENTS=2000 MINUTES=10 QUANTUM=2 MIXED=0
while [ $# -gt 0 ]; do
	case $1 in
	--clients) CLIENTS=$2; shift ;;
	--minutes) MINUTES=$2; shift ;;
	--quantum) QUANTUM=$2; shift ;;
	--mixed) MIXED=1 ;;
	-h|--help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
prepare_as_root
ulimit -n "$(ulimit -Hn)"

cluster_create pcc-soak 55497
DIR=$PCC_DIR PORT=$PCC_PORT
BENCH=""
cleanup() {
	[ -n "$BENCH" ] && kill $BENCH 2>/dev/null || true
	cluster_destroy
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cat >>"$DIR/data/postgresql.conf" <<EOC
max_connections = $((CLIENTS + 30))
shared_buffers = 1GB
fsync = off
deadlock_timeout = 200ms
pg_concurrency_control.max_waiters = $((CLIENTS - 100))
pg_concurrency_control.quantum = $QUANTUM
pg_concurrency_control.groups = '$([ "$MIXED" = 1 ] && echo 'a=8, b=4')'
EOC
cluster_start module
MON="$PSQL -v ON_ERROR_STOP=1"
$MON -c 'CREATE EXTENSION pg_concurrency_control' \
	-c 'ALTER DATABASE postgres SET pg_concurrency_control.bypass = on' \
	-c 'CREATE ROLE soak LOGIN SUPERUSER'
$PG_BINDIR/pgbench -h "$DIR" -p $PORT -U postgres -i -q -s 10 postgres >/dev/null 2>&1
$MON -c 'CREATE DATABASE soak TEMPLATE postgres'
make -s -C "$ROOT/pgbench_scripts" pccload >/dev/null

# One load per gate, each with its own timeout behaviour; connections the
# controller terminates are reopened.
secs=$((MINUTES * 60))
PIDS=()
load() {	# share workload PGOPTIONS
	PGOPTIONS="$3" "$ROOT/pgbench_scripts/pccload" -h "$DIR" -p $PORT -U soak -d soak -s 10 \
		-c $((CLIENTS * $1 / 100)) -j 1 -T "$secs" -P 0 -w "$2" --reconnect \
		>"$DIR/load-$2.out" 2>&1 &
	PIDS+=($!)
}
to() { echo "-c pg_concurrency_control.$1"; }
# with --mixed: groups a and b, and all three priorities
mixed() { [ "$MIXED" = 1 ] && echo "$(to workload_group=$1) $(to priority=$2)"; }
load 40 tpcb "$(to control_timeout=500ms) $(to timeout_action=error) $(mixed a high)"
load 25 autocommit-update "$(to control_timeout=200ms) $(to timeout_action=wait) $(mixed b low)"
load 25 select-only "$(to control_timeout=200ms) $(to timeout_action=proceed) -c statement_timeout=150ms $(mixed a normal)"
load 10 bigsql "-c statement_timeout=300ms $(to bigsql_control_timeout=100ms) $(to bigsql_timeout_action=error)"
BENCH="${PIDS[*]}"
running() { for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }

violation() {
	echo "VIOLATION at $(( $(date +%s) - start ))s: $*" >&2
	exit 1
}
# Queue invariants hold at every instant; the counting ones only at rest.
live_check="SELECT string_agg(gate || ': ' || problem, '; ') FROM pg_concurrency_control_check()
	WHERE problem LIKE 'queue%' OR problem LIKE 'a queued backend%' OR problem LIKE 'the lingering list%'"
start=$(date +%s) cancels=0 terms=0 reloads=0 checks=0
while running; do
	$MON -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		WHERE usename = 'soak' ORDER BY random() LIMIT 20" >/dev/null
	cancels=$((cancels + 20))
	if [ $((RANDOM % 3)) -eq 0 ]; then
		$MON -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE usename = 'soak' ORDER BY random() LIMIT 5" >/dev/null
		terms=$((terms + 5))
	fi
	if [ $((RANDOM % 4)) -eq 0 ]; then
		for g in transaction autocommit query bigquery; do
			limit=$((RANDOM % 32 + 1))
			[ "$MIXED" = 1 ] && [ $((RANDOM % 3)) -eq 0 ] && limit=-1
			$MON -c "ALTER SYSTEM SET pg_concurrency_control.${g}_concurrency = $limit"
		done
		if [ "$MIXED" = 1 ]; then
			groups=("a=$((RANDOM % 16 + 1)), b=$((RANDOM % 8 + 1))" "a=$((RANDOM % 16 + 1))"
				"b=$((RANDOM % 8 + 1)), c=3" "")
			$MON -c "ALTER SYSTEM SET pg_concurrency_control.groups = '${groups[RANDOM % 4]}'"
		fi
		if [ "$QUANTUM" -gt 0 ]; then
			# short turns like the default's, and long ones
			quantum=$((RANDOM % 2 ? RANDOM % (2 * QUANTUM) : RANDOM % 200))
			$MON -c "ALTER SYSTEM SET pg_concurrency_control.quantum = $quantum" \
				-c "ALTER SYSTEM SET pg_concurrency_control.turn_grace = '$((RANDOM % 400))us'" \
				-c "ALTER SYSTEM SET pg_concurrency_control.turn_grace_max = '$((RANDOM % 8000))us'" \
				-c "ALTER SYSTEM SET pg_concurrency_control.max_turn_wait = $((RANDOM % 1000))"
		fi
		$MON -c 'SELECT pg_reload_conf()' >/dev/null
		reloads=$((reloads + 1))
	fi
	problems=$($MON -c "$live_check")
	checks=$((checks + 1))
	[ -z "$problems" ] || violation "$problems"
	sleep 1
done
for p in "${PIDS[@]}"; do wait "$p" || true; done
BENCH=""

# At rest: nothing running, nothing waiting, every invariant exact.
for _ in $(seq 100); do
	idle=$($MON -c "SELECT sum(running + waiting) FROM pg_concurrency_control")
	[ "$idle" = 0 ] && break
	sleep 0.1
done
[ "$idle" = 0 ] || violation "after the load, running + waiting = $idle"
problems=$($MON -c "SELECT string_agg(gate || ': ' || problem, '; ') FROM pg_concurrency_control_check()")
[ -z "$problems" ] || violation "$problems"
leaks=$($MON -c "SELECT count(*) FROM pg_concurrency_control_backends()")
[ "$leaks" = 0 ] || violation "$leaks backends still hold or wait for a slot"

echo "soak: $CLIENTS connections, $MINUTES min, $checks live checks, $cancels cancels," \
	"$terms terminations, $reloads reloads: no violation"
$MON -c "SELECT gate, admitted, resumed, queued, timeouts, rejected, lock_escapes, round(max_wait_ms) AS max_wait_ms
	FROM pg_concurrency_control ORDER BY gate" -P footer=off -F ' | '
for f in "$DIR"/load-*.out; do
	echo "== $(basename "$f" .out)"
	grep -E '^(tps steady|failed|  SQLSTATE)' "$f" || tail -5 "$f"
done
