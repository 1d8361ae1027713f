#!/bin/bash
# mkrootfs.sh CACHEROOT — build (or reuse) the bare Debian 12 root tree tests/fresh/run.sh starts
# from: `mmdebstrap --variant=minbase` plus git and ca-certificates, from this machine's apt
# sources — what a new user has on a minimal Debian 12 before typing the README's two commands.
#
# The tree is a tarball CACHEROOT/<key>.tar, <key> a hash of this recipe, the apt sources and
# today's date (UTC): a new day starts from the packages the mirror serves that day; the same day
# and recipe reuse the tarball. Prints the tarball's path on stdout.
# Exit status: 0 ready; 77 it cannot be built here (not root, no mmdebstrap, no bookworm source,
# mirror unreachable) — the reason is printed on stdout; anything else is a real failure.
# Concurrent callers: CACHEROOT/<key>.lock, exclusive while building.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUITE=bookworm
INCLUDE=git,ca-certificates

log() { echo "mkrootfs: $*" >&2; }
cannot() { echo "cannot build the root tree: $*"; exit 77; }

[ $# -eq 1 ] || { echo "usage: $0 CACHEROOT" >&2; exit 2; }
mkdir -p "$1"
CACHEROOT=$(cd "$1" && pwd)
# shellcheck source=../../scripts/debian-mirror.sh
. "$HERE/../../scripts/debian-mirror.sh"

sources=$(debian_sources "$SUITE")
[ -n "$sources" ] || cannot "no '$SUITE' Debian source in the local apt configuration"
key=$( { cat "$HERE/mkrootfs.sh"; echo "$sources"; date -u +%F; } | sha256sum | cut -c1-16)
OUT=$CACHEROOT/$key.tar

exec 9>"$CACHEROOT/$key.lock"
flock -x 9
if [ -s "$OUT" ]; then
	echo "$OUT"
	exit 0
fi
[ "$(id -u)" = 0 ] || cannot "building it needs root (mmdebstrap --mode=root)"
command -v mmdebstrap >/dev/null || cannot "mmdebstrap is not installed"

tmp=$(mktemp -d "$CACHEROOT/.build-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
debian_mirror_reachable "$sources" "$SUITE" "$tmp" || cannot "package mirror not reachable"
debian_aptopts
echo "$sources" > "$tmp/sources.list"
t0=$(date +%s)
log "building $key ($SUITE minbase + $INCLUDE)"
mmdebstrap --mode=root --variant=minbase --format=tar --quiet --include="$INCLUDE" \
	"${APTOPTS[@]}" "$SUITE" "$tmp/rootfs.tar" "$tmp/sources.list"
mv "$tmp/rootfs.tar" "$OUT"   # last: a half-written tarball is never taken for current
log "built in $(($(date +%s) - t0))s: $(du -h "$OUT" | cut -f1)"

# Trees of other days or recipes: removed unless another run is building one right now.
for f in "$CACHEROOT"/*.tar; do
	old=${f##*/}; old=${old%.tar}
	[ "$old" = "$key" ] && continue
	( flock -x -n 8 && rm -f "$f" "$CACHEROOT/$old.lock" ) 8>"$CACHEROOT/$old.lock" 2>/dev/null || true
done
echo "$OUT"
