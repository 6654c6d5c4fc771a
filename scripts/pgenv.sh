#!/usr/bin/env bash
# Ensures a Debian chroot with PostgreSQL NN for building and testing the
# module on that version, and prints its directory.  Cached: a second call
# returns at once, unless the packages below changed.  15 is the host's own
# (bookworm); 17 comes from trixie, 18 from sid, through Debian's package
# registry only.
#
#   scripts/pgenv.sh 17        -> /var/cache/pg_concurrency_control/chroot-17
#
# A fresh chroot downloads a minimal Debian (debootstrap --variant=minbase)
# plus the server, its headers, the client, the test tools and what builds
# the Debian package: about 2 GB on disk (the server headers bring clang and
# LLVM), a few minutes.  The system's packages are untouched.  sid's Release
# file may be past its Valid-Until on the registry's copy: that check is off
# inside the chroots.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

v=${1:?usage: pgenv.sh 17|18}
case $v in
	17) release=trixie ;;
	18) release=sid ;;
	*) echo "pgenv.sh: no chroot for PostgreSQL $v (15 is the host's)" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "pgenv.sh: run as root" >&2; exit 2; }
packages="postgresql-$v postgresql-server-dev-$v postgresql-client-$v
	libpq-dev libkrb5-dev libipc-run-perl libfaketime make gcc
	dpkg-dev debhelper fakeroot postgresql-server-dev-all"
want=$(echo $packages)
dir=$PCC_CHROOTS/chroot-$v
if [ "$(cat "$dir/.pcc-ready" 2>/dev/null)" = "$want" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$PCC_CHROOTS"
if [ ! -f "$dir/.pcc-base" ]; then
	ensure_packages debootstrap >&2 || exit 2
	# a half-made chroot of an interrupted run: never delete through its mounts
	chroot_umounts "$dir"
	rm -rf --one-file-system "$dir"
	echo "pgenv: creating $dir ($release, PostgreSQL $v)" >&2
	debootstrap --variant=minbase "$release" "$dir" http://deb.debian.org/debian >"$dir.log" 2>&1 ||
		{ echo "debootstrap failed, see $dir.log" >&2; exit 1; }
	# no services start inside, and no default cluster is created
	printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
	chmod +x "$dir/usr/sbin/policy-rc.d"
	mkdir -p "$dir/etc/postgresql-common"
	echo "create_main_cluster = false" >"$dir/etc/postgresql-common/createcluster.conf"
	echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99pcc"
	touch "$dir/.pcc-base"
fi
echo "pgenv: installing PostgreSQL $v and the tools in $dir" >&2
chroot_mounts "$dir"
trap 'chroot_umounts "$dir"' EXIT
chroot "$dir" env DEBIAN_FRONTEND=noninteractive sh -c "
	apt-get update -qq &&
	apt-get install -y -qq -o Dpkg::Options::=--force-confold $want" >>"$dir.log" 2>&1 ||
	{ echo "installing PostgreSQL $v in $dir failed, see $dir.log" >&2; exit 1; }
echo "$want" >"$dir/.pcc-ready"
echo "$dir"
