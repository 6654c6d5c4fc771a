#!/usr/bin/env bash
# Native PostgreSQL vs PostgreSQL with pg_concurrency_control, side by side
# on one throwaway cluster (restarted with and without the preload), with
# stock pgbench TPC-B -M prepared.  Builds and installs the module first.
#
#   pgbench_scripts/compare.sh --quick        64 and 1024 clients, 20 s steps
#   pgbench_scripts/compare.sh --clients "8 64 256 1024" --duration 60 --limit 16 --quantum 100
#
# Prints a table and writes it to pgbench_scripts/results/<timestamp>/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

CLIENTS="64 1024" DURATION=20 SCALE=10 LIMIT=64 ORDER=fifo QUANTUM= PROTOCOL=prepared
while [ $# -gt 0 ]; do
	case $1 in
	--quick) CLIENTS="64 1024" DURATION=20 ;;
	--clients) CLIENTS=$2; shift ;;
	--duration) DURATION=$2; shift ;;
	--scale) SCALE=$2; shift ;;
	--limit) LIMIT=$2; shift ;;
	--queue-order) ORDER=$2; shift ;;
	--quantum) QUANTUM=$2; shift ;;
	--protocol) PROTOCOL=$2; shift ;;
	-h|--help) sed -n '2,9p' "$0"; exit 0 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
prepare_as_root

max_clients=$(tr ' ' '\n' <<<"$CLIENTS" | sort -n | tail -1)
# about 10 MB per backend under TPC-B, plus shared_buffers: refuse what cannot fit
need_mb=$((max_clients * 10 + 1024 + 1024))
have_mb=$(awk '/MemAvailable/ {print int($2/1024)}' /proc/meminfo)
[ "$need_mb" -lt "$have_mb" ] || { echo "$max_clients clients need ~${need_mb} MB, ${have_mb} MB available" >&2; exit 2; }
fd_limit=$(ulimit -Hn)
[ "$fd_limit" -gt $((max_clients + 100)) ] || { echo "open-files hard limit $fd_limit is below $max_clients clients" >&2; exit 2; }
ulimit -n "$fd_limit"

cluster_create pcc-bench 55498
trap cluster_destroy EXIT
trap 'exit 130' INT TERM
cat >>"$PCC_DIR/data/postgresql.conf" <<EOC
max_connections = $((max_clients + 20))
shared_buffers = 1GB
fsync = off
synchronous_commit = off
full_page_writes = off
max_wal_size = 8GB
$(gate_limits_conf "$LIMIT" "$ORDER" "$QUANTUM")
EOC
cluster_start native
$PG_BINDIR/pgbench -h "$PCC_DIR" -p $PCC_PORT -U postgres -i -q -s "$SCALE" postgres >/dev/null 2>&1

OUT="$ROOT/pgbench_scripts/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
CSV="$OUT/compare.csv"
echo "clients,target,tps,latency_ms,failed" >"$CSV"
for c in $CLIENTS; do
	j=$(( c >= 8 ? 8 : c ))
	for target in native module; do
		cluster_start $target
		$PSQL -c 'VACUUM FREEZE' -c 'CHECKPOINT'
		r=$($PG_BINDIR/pgbench -h "$PCC_DIR" -p $PCC_PORT -U postgres -M "$PROTOCOL" -c "$c" -j "$j" -T "$DURATION" postgres 2>&1)
		tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$r" | tail -1)
		lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$r")
		failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$r")
		echo "$c,$target,${tps:-0},${lat:-0},${failed:-0}" >>"$CSV"
		echo "  $c clients, $target: ${tps:-?} tps" >&2
	done
done

{
	echo "pgbench TPC-B -M $PROTOCOL, scale $SCALE, ${DURATION}s per step, limits $LIMIT, queue_order $ORDER, $(nproc) CPUs"
	printf '%8s | %12s | %12s | %7s | %14s | %14s\n' clients "native tps" "module tps" ratio "native lat ms" "module lat ms"
	awk -F, 'NR > 1 { tps[$1, $2] = $3; lat[$1, $2] = $4; if (!($1 in seen)) { seen[$1]; order[++n] = $1 } }
		END { for (i = 1; i <= n; i++) { c = order[i]; r = tps[c, "native"] > 0 ? tps[c, "module"] / tps[c, "native"] : 0;
			printf "%8d | %12.0f | %12.0f | %6.2fx | %14.1f | %14.1f\n", c, tps[c, "native"], tps[c, "module"], r, lat[c, "native"], lat[c, "module"] } }' "$CSV"
} | tee "$OUT/compare.txt"
