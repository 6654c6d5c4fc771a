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

# Packages every script of the project needs.
PCC_PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-client-15
	libipc-run-perl make gcc)

PG_BINDIR=/usr/lib/postgresql/15/bin

# Build and install the extension into the server's directories.
build_and_install() {
	local src=$1
	make -s -C "$src" clean >/dev/null
	make -s -C "$src" >/dev/null && make -s -C "$src" install >/dev/null
}
