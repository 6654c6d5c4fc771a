#!/usr/bin/env bash
# Adaptive limits against a sweep of static ones, side by side in one run.
# For each workload and connection count, one pccload run on one server with
# the module; its steady state is cut into phases, and before each phase
# every gate's limit is reloaded: the static limits in turn, then -1 (auto,
# starting from the last static one). A phase's TPS is the mean of its
# per-second progress but the first three seconds (a reload at a thousand
# connections takes a few). A sampler records the
# limits every 200 ms. With --shift, one more run holds auto for three
# phases and hogs both CPUs from outside PostgreSQL in the middle one (a
# noisy neighbour); with --burst, another adds a burst of big queries (32
# sessions summing 20000 accounts each) in its second phase, and again in
# its fourth with the bigquery limit static at its default of 8 (the
# burst against an auto bigquery gate that yields, side by side); with --grow,
# another runs TPC-B on a database of scale --grow-scale (150: twice
# shared_buffers) whose accounts drawn widen from those of --scale to all
# of them in its middle phase, a working set that outgrows shared_buffers
# and shrinks again: the limit over time shows the controller follow.
# --workloads "" runs only these. With --abba, every setting runs twice, the
# second pass in reverse order (static 4 8 16 32, auto, auto, 32 16 8 4),
# and the report takes the mean of both: a drift of the machine's speed
# during the run then favours no setting. With --rounds N, the sequence
# runs N times in one pccload run, rotated by one setting each round
# (round 2: 8 16 32 auto 4, ...): over as many rounds as settings every
# setting runs once at every position, so neither a drift of the
# machine's speed nor the setting before it (an auto phase starts from the
# last limit) favours one; the report gives the spread of auto / best
# static over the rounds.
# --quantum MS sets every phase's quantum (default: the module's turn defaults).
# Writes results/auto-<timestamp>/report.md, phases.csv, limits.csv,
# gate-readings.csv, controller.log (the controller's probes and trials:
# log_auto) and limits-<workload>-<conns>.svg.
#
#   pgbench_scripts/auto_sweep.sh --quick     64 and 1024, three workloads, 10 s phases, shift, burst
#   options: --conns "64 256 1024" --workloads "tpcb select-only simple-update"
#            --limits "4 8 16 32" --phase S (12) --scale N (10) --shift --burst
#            --grow --grow-scale N (150) --abba --rounds N (1)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

ARGS="$*"
CONNS="64 1024" WORKLOADS="tpcb select-only simple-update" LIMITS="4 8 16 32"
PHASE=12 SCALE=10 SHIFT=0 BURST=0 GROW=0 GROW_SCALE=150 ABBA=0 ROUNDS=1 QUANTUM=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) PHASE=10 SHIFT=1 BURST=1 ;;
	--conns) CONNS=$2; shift ;;
	--workloads) WORKLOADS=$2; shift ;;
	--limits) LIMITS=$2; shift ;;
	--phase) PHASE=$2; shift ;;
	--scale) SCALE=$2; shift ;;
	--shift) SHIFT=1 ;;
	--burst) BURST=1 ;;
	--grow) GROW=1 ;;
	--abba) ABBA=1 ;;
	--rounds) ROUNDS=$2; shift ;;
	--quantum) QUANTUM=$2; shift ;;
	--grow-scale) GROW_SCALE=$2; shift ;;
	-h|--help) sed -n '2,35p' "$0"; exit 0 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
prepare_as_root gnuplot
make -s -C "$ROOT/pgbench_scripts" pccload >/dev/null
ulimit -n "$(ulimit -Hn)"

OUT="$ROOT/pgbench_scripts/results/auto-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
max_conns=0
for c in $CONNS; do [ "$c" -gt "$max_conns" ] && max_conns=$c; done

cluster_create pcc-auto 55496
DIR=$PCC_DIR
SAMPLER="" BENCH="" HOGS=""
cleanup() {
	for p in $SAMPLER $HOGS; do kill "$p" 2>/dev/null || true; done
	[ -z "$BENCH" ] || kill -KILL $BENCH 2>/dev/null || true	# TERM would let it drain
	# the controller's probes and trials (log_auto), before the log goes
	grep -h 'LOG:  pg_concurrency_control: .* gate: ' "$DIR/server.log" >"$OUT/controller.log" 2>/dev/null || true
	cluster_destroy
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cat >>"$DIR/data/postgresql.conf" <<EOC
max_connections = $((max_conns + 64))
shared_buffers = 1GB
huge_pages = try
fsync = off
synchronous_commit = off
include_if_exists = 'limits.conf'
pg_concurrency_control.log_auto = on
EOC
# write_limits LIMIT [BIGQUERY]: every gate's limit, the bigquery gate's apart
write_limits() {
	{
		gate_limits_conf "$1" fifo "$QUANTUM"
		[ -z "${2:-}" ] || echo "pg_concurrency_control.bigquery_concurrency = $2"
	} >"$DIR/data/limits.conf"
	chown postgres "$DIR/data/limits.conf"
}
set_limits() {
	write_limits "$@"
	$PSQL -c 'SELECT pg_reload_conf()' >/dev/null
}
write_limits 64
reserve_huge_pages $((max_conns + 64)) >"$OUT/huge_pages.txt"
cluster_start module
check_huge_pages | tee -a "$OUT/huge_pages.txt" >&2
runuser -u postgres -- "$PG_BINDIR/pgbench" -h "$DIR" -p "$PCC_PORT" -i -s "$SCALE" -q postgres >/dev/null 2>&1
$PSQL -c 'CREATE EXTENSION pg_concurrency_control'
if [ "$GROW" = 1 ]; then
	echo "== initialising the grow database at scale $GROW_SCALE" >&2
	$PSQL -c 'CREATE DATABASE grow' >/dev/null
	runuser -u postgres -- "$PG_BINDIR/pgbench" -h "$DIR" -p "$PCC_PORT" -i -s "$GROW_SCALE" -q grow >/dev/null 2>&1
fi

# limits.csv: epoch, gate, limit, running, waiting, and the admitted and
# queued totals (every 200 ms): their differences between two readings
# show a queue that formed and drained between them
echo "epoch,gate,limit,running,waiting,admitted,queued" >"$OUT/limits.csv"
( while :; do
	$PSQL -F, -c "SET pg_concurrency_control.bypass = on;
		SELECT extract(epoch FROM clock_timestamp()), gate, max_concurrency, running, waiting,
		       admitted, queued
		  FROM pg_concurrency_control" 2>/dev/null >>"$OUT/limits.csv" || true
	sleep 0.2
done ) &
SAMPLER=$!

echo "run,workload,conns,phase,limit,start,end,round" >"$OUT/phases.csv"
# run_phases RUN WORKLOAD CONNS SPEC...: one pccload run, one phase per SPEC
# (a limit, "auto", "auto+hog", "auto+big", "auto+bigstatic" or "auto+wide",
# or "/" between rounds), progress stamped with the epoch, after a warm-up
# as long as a phase (without it the first phase ran on cold backends: at
# 4096 connections, 0.4-0.85 of the same limit's later phases). LOAD_ARGS are
# passed to pccload.
LOAD_ARGS=""
run_phases() {
	local run=$1 workload=$2 conns=$3
	shift 3
	local n=$# log="$OUT/progress-$run.log" round=1
	# shellcheck disable=SC2086
	"$ROOT/pgbench_scripts/pccload" -h "$DIR" -p "$PCC_PORT" -U postgres -c "$conns" -j 2 \
		-T $((n * (PHASE + 30) + 60)) -P 1 -w "$workload" -M prepared -s "$SCALE" -L "$run" \
		--warmup "$PHASE" --term-ends-steady --no-wait-close $LOAD_ARGS \
		>"$OUT/pccload-$run.txt" 2> >(while read -r l; do echo "$(date +%s.%N) $l"; done >"$log") &
	BENCH=$!
	until grep -q steady "$log" 2>/dev/null; do
		kill -0 $BENCH 2>/dev/null || { echo "pccload failed: see $log" >&2; exit 1; }
		sleep 0.5
	done
	for spec in "$@"; do
		local limit=${spec%+*} start end
		if [ "$spec" = / ]; then round=$((round + 1)); continue; fi
		[ "$limit" = auto ] && limit=-1
		if [ "$spec" = auto+bigstatic ]; then set_limits "$limit" 8; else set_limits "$limit"; fi
		case $LOAD_ARGS in
		*--wide-scale*) [ "${spec#*+}" = wide ] && kill -USR1 $BENCH || kill -USR2 $BENCH ;;
		esac
		case $spec in
		*+hog) for _ in 1 2; do timeout "$PHASE" sh -c 'while :; do :; done' & HOGS="$HOGS $!"; done ;;
		*+big|*+bigstatic) timeout $((PHASE + 30)) "$ROOT/pgbench_scripts/pccload" -h "$DIR" -p "$PCC_PORT" -U postgres \
				-c 32 -j 1 -T $((PHASE > 2 ? PHASE - 1 : 1)) -P 0 -w bigsql -M prepared -s "$SCALE" --no-wait-close \
				>"$OUT/pccload-$run-big.txt" 2>&1 & HOGS="$HOGS $!" ;;
		esac
		start=$(date +%s.%N)
		sleep "$PHASE"
		end=$(date +%s.%N)
		echo "$run,$workload,$conns,$spec,$limit,$start,$end,$round" >>"$OUT/phases.csv"
	done
	# reloads at many connections take seconds: the run outlasts the phases
	# pccload ends its steady phase and prints its summary (async jobs of a
	# script ignore SIGINT)
	kill -TERM $BENCH 2>/dev/null || true
	wait $BENCH 2>/dev/null || true
	BENCH="" HOGS=""
}

# the phases of all rounds, "/" between them
SPECS="" ORDER="$LIMITS auto"
for _ in $(seq "$ROUNDS"); do
	[ -z "$SPECS" ] || SPECS="$SPECS /"
	SPECS="$SPECS $ORDER"
	if [ "$ABBA" = 1 ]; then
		REVERSED=""
		for l in $ORDER; do REVERSED="$l $REVERSED"; done
		SPECS="$SPECS $REVERSED"
	fi
	read -r first rest <<<"$ORDER"
	ORDER="$rest $first"
done
for conns in $CONNS; do
	for workload in $WORKLOADS; do
		echo "== $workload, $conns connections: $SPECS" >&2
		$PSQL -c 'VACUUM FREEZE' -c 'CHECKPOINT' >/dev/null
		# shellcheck disable=SC2086
		run_phases "$workload-$conns" "$workload" "$conns" $SPECS
	done
done
if [ "$SHIFT" = 1 ]; then
	conns=${CONNS##* }
	echo "== shift: tpcb, $conns connections, auto; both CPUs hogged in the middle phase" >&2
	run_phases "shift-$conns" tpcb "$conns" auto auto+hog auto
fi
if [ "$BURST" = 1 ]; then
	conns=${CONNS##* }
	echo "== burst: tpcb, $conns connections, auto; 32 big queries at a time in phases 2 and 4 (4: bigquery static 8)" >&2
	run_phases "burst-$conns" tpcb "$conns" auto auto+big auto auto+bigstatic auto
fi
if [ "$GROW" = 1 ]; then
	conns=${CONNS##* }
	echo "== grow: tpcb, $conns connections, auto; the accounts of scale $GROW_SCALE in the middle phase" >&2
	LOAD_ARGS="-d grow --wide-scale $GROW_SCALE"
	run_phases "grow-$conns" tpcb "$conns" auto auto+wide auto
	LOAD_ARGS=""
fi
kill $SAMPLER 2>/dev/null || true
SAMPLER=""

{
	echo "# Adaptive limits against static limits ($(date -u +%Y-%m-%d))"
	echo
	echo "Command: \`pgbench_scripts/auto_sweep.sh $ARGS\`; PostgreSQL $($PG_BINDIR/postgres -V | awk '{print $3}'),"
	echo "$(nproc) CPUs, scale $SCALE, ${PHASE} s phases (TPS over each phase but its first 3 s),"
	echo "shared_buffers 1GB, fsync off, all four limits set alike; auto: auto_min 2, auto_max 64."
	echo
	python3 "$ROOT/pgbench_scripts/auto_report.py" "$OUT"
} >"$OUT/report.md"
cat "$OUT/report.md"
echo "report: $OUT/report.md" >&2
