# shellcheck shell=bash
# Sourced by tests/fresh/run.sh and tests/pkg/run.sh: a fresh copy of the cached Debian 12 minbase
# tree (tests/fresh/mkrootfs.sh) under a work directory of its own, removed on exit unless mounts
# are still there. The caller defines say() and cannot() (exit 77 with a reason).
#   machine_unpack NAME KEEP   -> WORK, M (the root tree); KEEP non-empty keeps it for a look
machine_unpack() {
	local name=$1 rc
	MACHINE_KEEP=$2
	CACHE=${FRESH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/evictd-fresh}
	set +e
	TARBALL=$("$(dirname "${BASH_SOURCE[0]}")/mkrootfs.sh" "$CACHE")
	rc=$?
	set -e
	case $rc in 0) ;; 77) cannot "$TARBALL" ;; *) say "ERROR: building the root tree failed (exit $rc)"; exit 1 ;; esac
	WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/evictd-$name.XXXXXX")
	M=$WORK/machine
	trap machine_cleanup EXIT
	trap 'exit 130' INT TERM
	mkdir "$M"
	tar -C "$M" -xf "$TARBALL"
	cp /etc/resolv.conf "$M/etc/resolv.conf" 2> /dev/null || true   # the network this machine has
}
machine_cleanup() {
	if awk -v w="$WORK/" 'index($5 "/", w) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		say "ERROR: mounts left under $WORK; not removing it"
		return
	fi
	if [ -n "$MACHINE_KEEP" ]; then say "kept $M"; else rm -rf --one-file-system "$WORK"; fi
}
