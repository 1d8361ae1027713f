#!/bin/bash
# build-deb.sh OUTDIR [--version V] [--no-lintian] — `make deb`: the Debian packages of the
# committed HEAD.
#
# HEAD is exported (`git archive`) to OUTDIR/src and built there with `dpkg-buildpackage -us -uc
# -b`, so the .debs, .changes and .buildinfo land in OUTDIR, never beside the source tree, and
# nothing uncommitted or left in build/ gets in. OUTDIR is emptied first; OUTDIR/commit names
# the commit built.
#
# --version V  builds HEAD as version V instead: the copy's Makefile VERSION and a new top
#              debian/changelog entry both say V (tests/pkg/run.sh builds a lower version to
#              upgrade from). The copy only; the tree is not touched.
# --no-lintian skips lintian, which otherwise runs on the .changes and must report no error and
#              no warning (overrides live in debian/*.lintian-overrides, each with its reason).
# Exit status: 0 built (and lintian-clean); 1 the build or lintian failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { echo "usage: $0 OUTDIR [--version V] [--no-lintian]" >&2; exit 2; }
[ $# -ge 1 ] || usage
OUT=$1
shift
VERSION='' LINTIAN=yes
while [ $# -gt 0 ]; do
	case $1 in
	--version) [ $# -ge 2 ] || usage; VERSION=$2; shift 2 ;;
	--no-lintian) LINTIAN=no; shift ;;
	*) usage ;;
	esac
done

say() { echo "build-deb: $*"; }
dirty=$(git -C "$ROOT" status --porcelain --untracked-files=no | head -n1)
[ -z "$dirty" ] || say "note: uncommitted changes are not packaged (the package is built from HEAD)"

rm -rf "$OUT"
mkdir -p "$OUT/src"
OUT=$(cd "$OUT" && pwd)
git -C "$ROOT" archive --format=tar HEAD | tar -x -C "$OUT/src"

if [ -n "$VERSION" ]; then
	sed -i "s/^VERSION *:= .*/VERSION      := $VERSION/" "$OUT/src/Makefile"
	# The maintainer and distribution of the entry below it; the date RFC 5322 as dpkg wants.
	trailer=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$OUT/src/debian/changelog" | head -n1)
	dist=$(sed -n '1s/^[^ ]* ([^)]*) \([^;]*\);.*/\1/p' "$OUT/src/debian/changelog")
	{
		printf 'evictd (%s) %s; urgency=medium\n\n  * Built by scripts/build-deb.sh --version.\n\n' "$VERSION" "$dist"
		printf ' -- %s  %s\n\n' "$trailer" "$(date -R)"
		cat "$OUT/src/debian/changelog"
	} > "$OUT/src/debian/changelog.new"
	mv "$OUT/src/debian/changelog.new" "$OUT/src/debian/changelog"
	# A symbol cannot be newer than the library that has it: an older build must not make its
	# users depend on a version above its own.
	sym=$OUT/src/debian/libpreempt0.symbols
	while IFS= read -r line; do
		v=${line##* }
		case $line in " "*) dpkg --compare-versions "$v" gt "$VERSION" && line="${line% *} $VERSION" ;; esac
		printf '%s\n' "$line"
	done < "$sym" > "$sym.new"
	mv "$sym.new" "$sym"
fi

version=$(cd "$OUT/src" && dpkg-parsechangelog -S Version)
say "building $version in $OUT/src"
t0=$(date +%s)
if ! (cd "$OUT/src" && dpkg-buildpackage -us -uc -b) > "$OUT/build.log" 2>&1; then
	tail -n 40 "$OUT/build.log"
	say "FAIL: dpkg-buildpackage (whole log: $OUT/build.log)"
	exit 1
fi
# Which commit these packages are (scripts/build-image.sh reuses them only for the same HEAD).
git -C "$ROOT" rev-parse HEAD > "$OUT/commit"
say "built in $(($(date +%s) - t0))s:"
(cd "$OUT" && ls -1 ./*.deb ./*.changes | sed 's|^\./|    |')

[ $LINTIAN = yes ] || exit 0
changes=$(ls "$OUT"/*.changes)
# --fail-on error,warning: a warning fails the build as an error does. Informational tags are
# printed (-I) but allowed.
if ! lintian --allow-root -I --fail-on error,warning "$changes" > "$OUT/lintian.log" 2>&1; then
	cat "$OUT/lintian.log"
	say "FAIL: lintian reports errors or warnings ($OUT/lintian.log)"
	exit 1
fi
sed 's/^/    /' "$OUT/lintian.log"
say "lintian: no error, no warning ($(grep -c '^[IP]:' "$OUT/lintian.log" || true) informational tags)"
