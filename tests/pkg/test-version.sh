#!/bin/bash
# One version everywhere: the Makefile's VERSION is debian/changelog's top entry (dpkg-buildpackage
# versions the packages from it; debian/rules also refuses to build when they differ), what
# `evictd`, `evictd-kube`, `preemptctl` and `preemptd --version` (and `preemptd -V`) print, the
# shared library's file name and libpreempt.pc's Version (as `make install` writes it).
. "$(dirname "$0")/../lib.sh"
version=$(sed -n 's/^VERSION *:= *//p' Makefile)
[ -n "$version" ] || skip_all "no VERSION := line in Makefile"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

changelog_agrees() {
	local top
	top=$(sed -n '1s/^evictd (\([^)]*\)) .*/\1/p' debian/changelog)
	echo "# Makefile $version, debian/changelog ${top:-?}"
	[ "$top" = "$version" ]
}
ok "debian/changelog's top entry is the Makefile's VERSION" changelog_agrees

prints() {	# prints PROGRAM FLAG: its version line names the Makefile's VERSION
	local out
	out=$("$BUILD/$1" "$2") || return 1
	echo "# $out"
	[ "${out%% (*}" = "$1 $version" ]
}
for pf in evictd:--version evictd-kube:--version preemptctl:--version preemptd:--version preemptd:-V; do
	p=${pf%%:*} f=${pf#*:}
	if [ -x "$BUILD/$p" ]; then ok "$p $f prints $p $version" prints "$p" "$f"
	else skip "$p $f prints $p $version" "$BUILD/$p not built"; fi
done
if [ -e "$BUILD/libpreempt.so.$version" ]; then
	ok "the shared library is libpreempt.so.$version" test -e "$BUILD/libpreempt.so.$version"
else
	skip "the shared library is libpreempt.so.$version" "$BUILD/libpreempt.so.$version not built"
fi

pc_version() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory B="$BUILD" \
		DESTDIR="$tmp/stage" PREFIX=/usr install-lib >/dev/null 2>"$tmp/err" || { sed 's/^/# /' "$tmp/err"; return 1; }
	grep -qx "Version: $version" "$tmp/stage/usr/lib/pkgconfig/libpreempt.pc"
}
if command -v make >/dev/null && [ -e "$BUILD/libpreempt.a" ]; then
	ok "libpreempt.pc says Version: $version" pc_version
else
	skip "libpreempt.pc says Version: $version" "make or the library is missing"
fi
done_testing
