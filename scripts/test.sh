#!/usr/bin/env bash
# The whole test suite, on every PostgreSQL version the module supports:
# 15 on this machine (Debian bookworm's), 17 and 18 each in a Debian chroot
# that scripts/pgenv.sh creates on first use and keeps (trixie's and sid's
# packages).  Each version runs scripts/suite.sh: build with -Werror,
# install, pg_regress and the TAP tests.  Run as root.
# Ends with a line "N passed, N failed" summing all versions; exits non-zero
# if anything failed.
#
#   scripts/test.sh                          15, 17 and 18
#   scripts/test.sh --pg 17                  one version
#   scripts/test.sh --pg 15 t/001_gates.pl   one TAP file (and pg_regress)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

versions="15 17 18"
if [ "${1:-}" = --pg ]; then
	versions=${2:?--pg needs 15, 17 or 18}
	shift 2
fi
[ "$(id -u)" -eq 0 ] || { echo "run as root (it installs packages and switches to postgres)" >&2; exit 2; }

# the Prometheus test runs Debian bookworm's postgres_exporter everywhere
exporter=$(bash "$ROOT/scripts/exporter.sh") || exporter=""

passed=0 failed=0 summary=""
for v in $versions; do
	echo "=== PostgreSQL $v"
	start=$(date +%s)
	out=$(mktemp)
	if [ "$v" = 15 ]; then
		PCC_PG=15 PCC_EXPORTER="$exporter" bash "$ROOT/scripts/suite.sh" "$@" 2>&1 | tee "$out"
	elif dir=$(bash "$ROOT/scripts/pgenv.sh" "$v"); then
		# the tree as committed or edited, without git's and the records' bulk
		rm -rf --one-file-system "$dir/src"
		mkdir "$dir/src"
		(cd "$ROOT" && tar --exclude=.git --exclude=docs --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=pgbench_scripts/pccload -cf - .) | tar -xf - -C "$dir/src"
		[ -z "$exporter" ] || cp "$exporter" "$dir/usr/local/bin/"
		# an interrupted run must not leave the host's /dev mounted inside
		trap 'chroot_umounts "$dir"' EXIT
		trap 'exit 130' INT TERM
		chroot_mounts "$dir"
		chroot "$dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			PCC_PG="$v" PCC_EXPORTER="${exporter:+/usr/local/bin/${exporter##*/}}" \
			bash /src/scripts/suite.sh "$@" 2>&1 | tee "$out"
		chroot_umounts "$dir"
		trap - EXIT
	else
		echo "0 passed, 1 failed" | tee "$out"
	fi
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
	[ -n "$line" ] || line="0 passed, 1 failed"
	rm -f "$out"
	p=${line%% passed*}
	f=${line#*passed, }
	f=${f%% failed*}
	passed=$((passed + p)) failed=$((failed + f))
	summary="$summary
PostgreSQL $v: $line ($(( $(date +%s) - start )) s)"
done
echo "$summary"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
