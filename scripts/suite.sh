#!/usr/bin/env bash
# Runs the test suites of pg_concurrency_control against one PostgreSQL
# version installed here (PCC_PG, default 15): installs what is missing,
# builds with -Werror, installs, then runs pg_regress and the TAP tests as
# the postgres OS user on throwaway instances.  scripts/test.sh calls it, on
# the host for 15 and inside a chroot for 17 and 18.
# Ends with a line "N passed, N failed"; exits non-zero if anything failed.
#
#   scripts/suite.sh                   everything (as root)
#   scripts/suite.sh t/001_gates.pl    one TAP file (and pg_regress)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "run as root (it installs packages and switches to postgres)" >&2; exit 2; }
ensure_packages "${PCC_PACKAGES[@]}" || exit 2
build_and_install "$ROOT" &&
	make -s -C "$ROOT/pgbench_scripts" pccload >/dev/null ||
	{ echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

# pg_regress and initdb refuse root: run from a copy postgres owns.
WORK=$(mktemp -d /tmp/pcc-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/ext"
(cd "$ROOT" && cp -r Makefile ./*.control ./*.sql pg_concurrency_control sql expected t monitoring "$WORK/ext/")
cp "$ROOT/pgbench_scripts/pccload" "$WORK/"
chown -R postgres "$WORK"
as_pg() { runuser -u postgres -- "$@"; }

passed=0 failed=0
LOG="$WORK/regress.log"
as_pg make -C "$WORK/ext" regresscheck >"$LOG" 2>&1
# pg_regress prints "test x ... ok" up to 15 and TAP lines from 16 on
p=$(grep -cE '^(test | +)?[a-z_0-9]+ +\.\.\. ok|^ok [0-9]+ +- ' "$LOG")
f=$(grep -cE '\.\.\. FAILED|\.\.\. failed|^not ok [0-9]+ +- ' "$LOG")
grep -E '\.\.\. |^(not )?ok [0-9]+ +- ' "$LOG"
if [ "$f" -gt 0 ]; then cat "$WORK/ext/regression.diffs" 2>/dev/null | head -100; fi
if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then tail -20 "$LOG"; f=1; fi
passed=$((passed + p)) failed=$((failed + f))

LOG="$WORK/tap.log"
tests=${*:-}
as_pg env PCCLOAD="$WORK/pccload" PCC_EXPORTER="${PCC_EXPORTER:-}" \
	make -C "$WORK/ext" tapcheck PROVE_FLAGS=-v ${tests:+PROVE_TESTS="$tests"} >"$LOG" 2>&1
p=$(grep -cE '^ok [0-9]+' "$LOG")
f=$(grep -cE '^not ok [0-9]+' "$LOG")
# a script that dies without reporting counts as one failure
d=$(grep -cE 'Parse errors|No subtests run' "$LOG")
grep -E '^(not )?ok [0-9]+|^t/.*\.pl|^# +(Failed|at |got:|expected:)' "$LOG"
if [ "$f" -gt 0 ] || [ "$d" -gt 0 ]; then
	sed -n '/Test Summary Report/,$p' "$LOG"
	for l in "$WORK"/ext/tmp_check/log/*.log; do echo "== $l"; tail -30 "$l"; done 2>/dev/null | tail -200
fi
passed=$((passed + p)) failed=$((failed + f + d))

# the Debian package, built, installed and checked in a fresh cluster
if [ -z "$tests" ]; then
	LOG="$WORK/package.log"
	bash "$ROOT/scripts/package_test.sh" >"$LOG" 2>&1
	cat "$LOG"
	p=$(grep -cE '^ok [0-9]+' "$LOG")
	f=$(grep -cE '^not ok [0-9]+' "$LOG")
	[ "$p" -gt 0 ] || f=$((f + 1))
	passed=$((passed + p)) failed=$((failed + f))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
