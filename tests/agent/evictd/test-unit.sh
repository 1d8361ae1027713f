#!/bin/bash
# The systemd unit as `make install` writes it: every command it runs is evictd itself (nothing
# from procps, which a minimal system lacks), `systemd-analyze verify` accepts it with neither
# /bin/kill nor man(1) on PATH, and its offline exposure rating stays at or below 2.0.
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

exposure_ok() {
	local score
	score=$(systemd-analyze security --offline=yes "$UNIT" 2>/dev/null | sed -n 's/.*Overall exposure level for evictd.service: \([0-9.]*\).*/\1/p')
	echo "# exposure $score"
	[ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'
}
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	ok "systemd-analyze security --offline=yes rates the unit <= 2.0" exposure_ok
else
	skip "systemd-analyze security --offline=yes rates the unit <= 2.0" "systemd-analyze has no --offline"
fi
done_testing
