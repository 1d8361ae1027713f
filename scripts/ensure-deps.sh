#!/bin/sh
# Makes sure the Debian packages a make target needs are present.  As root it installs what is
# missing with apt-get; otherwise it stops and prints the exact command to run.
# Usage: ensure-deps.sh build|check|fuzz|e2e ...
set -eu

pkgs_for() {
	case "$1" in
	build) echo "make gcc pkg-config libsystemd-dev libcgroup-dev libinih-dev libfyaml-dev libcurl4-openssl-dev libyajl-dev" ;;
	check) echo "libcmocka-dev systemd cppcheck util-linux iproute2 python3 jq curl openssl" ;;
	fuzz)  echo "clang libclang-rt-14-dev" ;;
	# e2e is optional: without these, tests/e2e/run.sh says why and skips (exit 0).
	e2e)   echo "qemu-system-x86 mmdebstrap e2fsprogs xz-utils" ;;
	*) echo "ensure-deps: unknown set '$1'" >&2; exit 2 ;;
	esac
}

missing=""
optional=""
for set in "$@"; do
	for p in $(pkgs_for "$set"); do
		# dpkg-query is the cheap, exact test; "install ok installed" only for real installs.
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
			if [ "$set" = e2e ]; then optional="$optional $p"; else missing="$missing $p"; fi
		fi
	done
done
if [ -n "$optional" ]; then
	# Never a reason to fail the build: `make e2e` then skips with the reason.
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "ensure-deps: installing (e2e):$optional" >&2
		# shellcheck disable=SC2086
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $optional >&2 ||
		  { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive \
		    apt-get install -y -q --no-install-recommends $optional >&2; }; } ||
			echo "ensure-deps: could not install$optional; the end-to-end test will be skipped" >&2
	else
		echo "ensure-deps: missing for the end-to-end test (it will be skipped):$optional" >&2
	fi
fi
[ -z "$missing" ] && exit 0

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "ensure-deps: not a Debian system; install the equivalents of:$missing" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "ensure-deps: missing packages:$missing" >&2
	echo "ensure-deps: run: sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
echo "ensure-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
