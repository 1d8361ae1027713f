#!/bin/sh
# Makes sure the Debian packages a make target needs are present.  As root it installs what is
# missing with apt-get; otherwise it stops and prints the exact command to run.
# Usage: ensure-deps.sh build|check|fuzz|e2e ...
set -eu

pkgs_for() {
	case "$1" in
	build) echo "make gcc pkg-config libsystemd-dev libcgroup-dev libinih-dev libfyaml-dev" ;;
	check) echo "libcmocka-dev systemd cppcheck util-linux iproute2 python3 jq" ;;
	fuzz)  echo "clang libclang-rt-14-dev" ;;
	e2e)   echo "qemu-system-x86 qemu-utils mmdebstrap e2fsprogs zstd" ;;
	*) echo "ensure-deps: unknown set '$1'" >&2; exit 2 ;;
	esac
}

missing=""
for set in "$@"; do
	for p in $(pkgs_for "$set"); do
		# dpkg-query is the cheap, exact test; "install ok installed" only for real installs.
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
			missing="$missing $p"
		fi
	done
done
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
