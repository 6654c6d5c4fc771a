#!/usr/bin/env bash
# Ensures Debian bookworm's postgres_exporter binary (package
# prometheus-postgres-exporter, 0.11) in a private folder, without
# installing the package (no service, no user), and prints its path.
# Cached: the second call returns at once.  Run as root.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/lib.sh"

dir=$PCC_CHROOTS/exporter
bin=$dir/usr/bin/prometheus-postgres-exporter
if [ ! -x "$bin" ]; then
	mkdir -p "$dir"
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download prometheus-postgres-exporter >/dev/null 2>&1) ||
		{ apt-get update -qq >/dev/null && (cd "$tmp" && apt-get download prometheus-postgres-exporter >/dev/null); } ||
		{ echo "exporter.sh: cannot download prometheus-postgres-exporter" >&2; rm -rf "$tmp"; exit 1; }
	dpkg -x "$tmp"/prometheus-postgres-exporter_*.deb "$dir"
	rm -rf "$tmp"
fi
echo "$bin"
