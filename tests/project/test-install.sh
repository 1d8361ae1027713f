#!/bin/bash
# `make install` into a DESTDIR stage never overwrites an operator's edited
# /etc/evictd/evictd.conf: a first install puts conf/evictd.conf there; after an edit, a second
# install leaves the edited file byte for byte and puts the new default beside it as
# evictd.conf.dist (README, Makefile).
. "$(dirname "$0")/../lib.sh"
command -v make >/dev/null || skip_all "make missing"
[ -x "$BUILD/evictd" ] || skip_all "$BUILD/evictd not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The install of the build under test: same build directory (and sanitizer flags) as make check.
san=
case "$BUILD" in *-san) san=SANITIZE=1 ;; esac
# A make started from `make check` must not join its parent's jobserver or inherit its goals.
inst() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory $san B="$BUILD" \
		install DESTDIR="$tmp/stage" PREFIX=/usr >>"$tmp/log" 2>&1 || { sed 's/^/# /' "$tmp/log"; return 1; }
}
CONF=$tmp/stage/etc/evictd/evictd.conf

ok "first install" inst
ok "...puts conf/evictd.conf at /etc/evictd/evictd.conf" cmp -s conf/evictd.conf "$CONF"
ok "...and no .dist beside it" test ! -e "$CONF.dist"
printf '\n# edited by the operator\n[agent]\ndry-run = yes\n' >>"$CONF"
cp "$CONF" "$tmp/edited"
ok "second install over the edited file" inst
ok "...leaves the edited evictd.conf byte for byte" cmp -s "$tmp/edited" "$CONF"
ok "...and puts the shipped default beside it as evictd.conf.dist" cmp -s conf/evictd.conf "$CONF.dist"
ok "...the binaries are installed again all the same" test -x "$tmp/stage/usr/sbin/evictd" -a -x "$tmp/stage/usr/sbin/evictd-kube"
done_testing
