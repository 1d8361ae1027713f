#!/bin/bash
# The systemd unit as `make install` writes it: every command it runs is evictd itself (nothing
# from procps, which a minimal system lacks), `systemd-analyze verify` accepts it with neither
# /bin/kill nor man(1) on PATH, and both units' offline exposure ratings are exactly README's.
. "$(dirname "$0")/../../lib.sh"
UNIT=$BUILD/evictd.service
[ -f "$UNIT" ] || skip_all "$UNIT not built"
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze missing (package systemd)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# systemd-analyze needs /run/systemd (it creates it as root); a user in a chroot without systemd's
# runtime directory cannot run it at all, which says nothing about the unit.
printf '[Service]\nExecStart=/bin/true\n' >"$tmp/probe.service"
if ! systemd-analyze verify "$tmp/probe.service" >"$tmp/probe.out" 2>&1; then
	skip_all "systemd-analyze cannot run here: $(head -n 1 "$tmp/probe.out")"
fi
sbindir=$(sed -n 's|^ExecStart=\(.*\)/evictd$|\1|p' "$UNIT")

only_evictd() {
	local bad
	bad=$(grep -E '^Exec[A-Za-z]*=' "$UNIT" | sed -E 's/^Exec[A-Za-z]*=[-@:+!]*//; s/ .*//' | grep -vx "$sbindir/evictd")
	[ -z "$bad" ] || { echo "# runs: $bad"; return 1; }
}
ok "ExecStart= and ExecReload= run evictd only (ExecReload is evictd --reload)" only_evictd
ok "ExecReload= waits for the daemon: evictd --reload=\${MAINPID}" grep -qx "ExecReload=$sbindir/evictd --reload=\${MAINPID}" "$UNIT"

verify_minimal() {
	# The unit pointed at the built binary; a PATH holding only systemd-analyze itself.
	mkdir -p "$tmp/bin"
	ln -s "$(command -v systemd-analyze)" "$tmp/bin/systemd-analyze"
	sed "s|$sbindir/evictd|$PWD/$BUILD/evictd|g" "$UNIT" >"$tmp/evictd.service"
	PATH=$tmp/bin systemd-analyze verify "$tmp/evictd.service" >"$tmp/out" 2>&1 || { sed 's/^/# /' "$tmp/out"; return 1; }
}
ok "systemd-analyze verify passes without procps and man on PATH" verify_minimal

# Both units' offline exposure exactly as README.md states it ("`systemd-analyze security` rates
# both units N"): not "at most" a looser figure, so a hardening line removed is a failure. The
# second check of each unit removes one scored line and expects the rating to change, so that
# the pin is shown to see a removal at all.
readme_rating=$(sed -n 's/.*`systemd-analyze security` rates both units \([0-9.]*\)\..*/\1/p' README.md docs/*.md | head -n1)
sed "s|@SBINDIR@|$sbindir|g" systemd/evictd-kube.service >"$tmp/evictd-kube.service"
rating() {	# rating UNIT-FILE: the overall exposure of UNIT-FILE, offline
	systemd-analyze security --offline=yes "$1" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
exposure_is() {	# exposure_is UNIT-FILE RATING
	local score; score=$(rating "$1")
	echo "# $(basename "$1"): exposure ${score:-none} (README: $2)"
	[ -n "$score" ] && [ -n "$2" ] && [ "$score" = "$2" ]
}
exposure_sees() {	# exposure_sees UNIT-FILE LINE: without LINE, the rating is another one
	local base less
	base=$(rating "$1")
	grep -vx "$2" "$1" >"$tmp/less-$(basename "$1")"
	less=$(rating "$tmp/less-$(basename "$1")")
	echo "# without $2: ${less:-none} (with it: ${base:-none})"
	[ -n "$base" ] && [ -n "$less" ] && [ "$base" != "$less" ]
}
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	ok "README states the units' exposure rating" test -n "$readme_rating"
	ok "evictd.service: exposure exactly as README states ($readme_rating)" exposure_is "$UNIT" "$readme_rating"
	ok "...and without PrivateNetwork=yes it is not" exposure_sees "$UNIT" PrivateNetwork=yes
	ok "evictd-kube.service: exposure exactly as README states ($readme_rating)" exposure_is "$tmp/evictd-kube.service" "$readme_rating"
	ok "...and without CapabilityBoundingSet= it is not" exposure_sees "$tmp/evictd-kube.service" CapabilityBoundingSet=
else
	skip "systemd-analyze security --offline=yes rates the units as README states" "systemd-analyze has no --offline"
fi
done_testing
