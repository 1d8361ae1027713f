#!/bin/bash
# systemd/preemptd.service as `make install` writes it: it starts preemptd with the shipped
# configuration file and the kubeconfig handed over as a credential, `systemd-analyze verify`
# accepts it, it runs without root, and its offline exposure rating is exactly the one its header
# and README.md state (at most 2.0); removing one hardening line changes the rating, so the pin
# sees a removal.
cd "$(dirname "$0")/../../.." || exit 1
. tests/lib.sh
UNIT=systemd/preemptd.service
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze missing (package systemd)"
[ -x "$BUILD/preemptd" ] || skip_all "$BUILD/preemptd not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '[Service]\nExecStart=/bin/true\n' >"$tmp/probe.service"
if ! systemd-analyze verify "$tmp/probe.service" >"$tmp/probe.out" 2>&1; then
	skip_all "systemd-analyze cannot run here: $(head -n 1 "$tmp/probe.out")"
fi
sed "s|@SBINDIR@|$PWD/$BUILD|g" "$UNIT" >"$tmp/preemptd.service"

exec_start=$(sed -n 's/^ExecStart=//p' "$tmp/preemptd.service")
ok "ExecStart runs preemptd with --config /etc/evictd/preemptd.conf" \
	test "$exec_start" = "$PWD/$BUILD/preemptd --config /etc/evictd/preemptd.conf --kubeconfig %d/kubeconfig"
ok "the kubeconfig is a credential (LoadCredential=, read as %d/kubeconfig)" \
	grep -qx 'LoadCredential=kubeconfig:/etc/evictd/preemptd.kubeconfig' "$UNIT"
ok "Type=notify (preemptd sends READY=1)" grep -qx 'Type=notify' "$UNIT"
ok "no root: DynamicUser=yes, no User=root, no capability" eval '
	grep -qx DynamicUser=yes "$UNIT" && ! grep -q "^User=" "$UNIT" && grep -qx CapabilityBoundingSet= "$UNIT"'
verify() {	# the unit pointed at the built binary; a PATH holding only systemd-analyze itself
	mkdir -p "$tmp/bin"
	ln -sf "$(command -v systemd-analyze)" "$tmp/bin/systemd-analyze"
	PATH=$tmp/bin systemd-analyze verify "$tmp/preemptd.service" >"$tmp/out" 2>&1 || { sed 's/^/# /' "$tmp/out"; return 1; }
}
ok "systemd-analyze verify accepts it" verify

stated=$(sed -n 's/^# `systemd-analyze security` rates this unit \([0-9.]*[0-9]\).*/\1/p' "$UNIT")
rating() {	# rating UNIT-FILE: the overall exposure, offline
	systemd-analyze security --offline=yes "$1" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	score=$(rating "$tmp/preemptd.service")
	echo "# preemptd.service: exposure ${score:-none} (stated: ${stated:-none})"
	ok "the unit states its rating" test -n "$stated"
	readme=$(sed -n 's/.*`systemd-analyze security` rates the unit \([0-9.]*[0-9]\)\..*/\1/p' README.md docs/*.md | head -n1)
	ok "README.md states the same rating ($readme)" test -n "$readme" -a "$readme" = "$stated"
	ok "exposure exactly as stated ($stated)" test -n "$score" -a "$score" = "$stated"
	ok "... and at most 2.0" awk -v s="${score:-9}" 'BEGIN { exit !(s <= 2.0) }'
	sees() {	# sees LINE: without LINE the rating is another one
		grep -vx "$1" "$tmp/preemptd.service" >"$tmp/less.service"
		local less; less=$(rating "$tmp/less.service")
		echo "# without $1: ${less:-none}"
		[ -n "$less" ] && [ "$less" != "$score" ]
	}
	ok "... and without DynamicUser=yes it is not" sees DynamicUser=yes
	ok "... and without RestrictAddressFamilies= it is not" sees "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"
else
	skip "systemd-analyze security --offline=yes rates the unit as stated" "systemd-analyze has no --offline"
fi
done_testing
