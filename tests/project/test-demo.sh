#!/bin/bash
# The demonstration `./run` gives on a machine without pods (scripts/demo.sh), as a person sees it:
# started like `./run --demo`, left to reach its heartbeat, then Ctrl-C (SIGINT to its process
# group). Asserts the ranking table before the crossing, that the real daemon (not dry-run) evicts
# the right pod first (lowest priority, over its ephemeral-storage request) with its reason, the
# timing and reclaim summary, the heartbeat; that while it runs evictd is confined (own PID and
# mount namespaces, the sandbox as its only cgroup file system, no CAP_SYS_ADMIN); and that after
# Ctrl-C it exits 0 and no cgroup, mount, process or file of it is left.
. "$(dirname "$0")/../lib.sh"

EVICTD=$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
why=$(scripts/demo.sh --check "$EVICTD") || skip_all "the demonstration cannot run here: $why"

T=$(mktemp -d)
OUT=$T/out
DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL -- "-$DPID" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

wait_for() {	# wait_for SECONDS COMMAND...: polls until COMMAND succeeds
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done
}
out_has() { grep -qE -- "$1" "$OUT"; }

# As a terminal runs a foreground job: its own process group, SIGINT not ignored.
set -m
scripts/demo.sh "$EVICTD" > "$OUT" 2>&1 < /dev/null &
DPID=$!
set +m
ok "the demonstration reaches its heartbeat stage (within 60 s)" wait_for 60 out_has '^evictd keeps running on the sandbox'
WORK=$(sed -n 's/^  sandbox: cgroup .* directory \(.*\)$/\1/p' "$OUT")
SB_CG=$(sed -n 's/^  sandbox: cgroup \([^ ]*\) .*/\1/p' "$OUT")
ok "it names its sandbox (cgroup and directory)" test -n "$WORK" -a -n "$SB_CG"

# --- confinement, read from the running daemon -----------------------------------------------------
epid=
for f in /proc/[0-9]*/cmdline; do
	c=$(tr '\0' ' ' 2> /dev/null < "$f") || continue
	case $c in "$(cd "$(dirname "$EVICTD")" && pwd)/evictd --config $WORK/"*) f=${f#/proc/}; epid=${f%/cmdline}; break ;; esac
done
ok "the daemon is running" test -n "$epid"
ok "evictd is in a PID namespace of its own" \
	test "$(readlink "/proc/$epid/ns/pid")" != "$(readlink /proc/self/ns/pid)"
ok "evictd is in a mount namespace of its own" \
	test "$(readlink "/proc/$epid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)"
cgroup_mounts() {	# the cgroup file systems evictd's namespace holds: "ROOT MOUNTPOINT" each
	awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) ~ /^cgroup2?$/) print $4, $5 }' "/proc/$epid/mountinfo"
}
ok "its only cgroup file system is the sandbox subtree" \
	test "$(cgroup_mounts)" = "/${SB_CG##*/} $WORK/cgroup"
no_sys_admin() {	# CAP_SYS_ADMIN is bit 21, in neither the effective nor the bounding set
	local eff bnd
	eff=$(awk '/^CapEff:/ { print $2 }' "/proc/$epid/status")
	bnd=$(awk '/^CapBnd:/ { print $2 }' "/proc/$epid/status")
	[ -n "$eff" ] && (((0x$eff >> 21) & 1)) && return 1
	[ -n "$bnd" ] && ! (((0x$bnd >> 21) & 1))
}
ok "evictd has no CAP_SYS_ADMIN (cannot mount its way out)" no_sys_admin
ok "evictd is not in dry-run" bash -c "! grep -q -- --dry-run /proc/$epid/cmdline"

# --- what the person saw -------------------------------------------------------------------------
ok "the ranking table before the crossing puts batch/report-builder first" \
	out_has '^ +1\. batch/report-builder +emptyDir\+logs [0-9.]+Mi exceeds ephemeral-storage request 4Mi; priority 0$'
ok "...and shop/checkout (highest priority) last" out_has '^ +4\. shop/checkout '
ok "evictd says what it monitors" out_has 'evictd: monitoring nodefs\.available \(hard 10%\)'
ok "the threshold is met (evictd's line)" out_has 'evictd: warning: Threshold met: nodefs\.available .* < 6\.4Mi \(hard\)'
first_evicted() { grep -m1 -oE 'Evicting [a-z/-]+ \(priority' "$OUT" | sed 's/Evicting \(.*\) (priority/\1/'; }
ok "the first pod evicted is batch/report-builder" test "$(first_evicted)" = batch/report-builder
ok "...with its reason (over its ephemeral-storage request)" \
	out_has 'Evicting batch/report-builder \(priority 0\): nodefs\.available .* < 6\.4Mi; emptyDir\+logs .* exceeds ephemeral-storage request 4Mi'
ok "...for real: cgroup.kill at once (hard threshold)" \
	out_has 'Evicting batch/report-builder \(nodefs\.available, hard threshold\): no grace period, cgroup\.kill at once'
ok "the kubelet (demo) cleans the evicted pod up" out_has 'kubelet \(demo\): batch/report-builder cleaned up'
ok "the time from the crossing to the eviction is printed" \
	out_has '^  threshold crossed at \+[0-9.]+s .*evictd started evicting batch/report-builder -?[0-9]+ ms later'
reclaim_seen() {	# the free space once the victim's volumes were removed is back above the threshold
	local line before after
	line=$(grep -m1 '^  reclaim: nodefs.available' "$OUT") || return 1
	before=$(echo "$line" | sed -n 's/.*available \([0-9.]*\)Mi while.*/\1/p')
	after=$(echo "$line" | sed -n 's/.*there, \([0-9.]*\)Mi once.*/\1/p')
	awk -v b="$before" -v a="$after" 'BEGIN { exit !(a > 6.4 && a - b >= 30) }'
}
# (Before: under the threshold when only this pod was evicted; a few MiB more where other pods'
# volumes went first.)
ok "the reclaim is measured: 30 MiB or more back, above the threshold" reclaim_seen
if "$EVICTD" --dump-config-keys | grep -qw reclaim-timeout; then
	ok "the higher-priority pods survive, and the other over-request pod too" out_has '^  evicted: batch/report-builder; still running: shop/checkout shop/web batch/log-shipper$'
else
	skip "the higher-priority pods survive" "this evictd has no reclaim tracking (reclaim-timeout): it evicts the next pod while the kubelet (demo) still removes the first one's volumes"
fi
ok "a heartbeat after the reclaim" wait_for 10 out_has 'evictd: heartbeat: nodefs\.available'

# --- Ctrl-C ----------------------------------------------------------------------------------------
kill -INT -- "-$DPID"
rc=
for _ in $(seq 300); do kill -0 "$DPID" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$DPID" 2> /dev/null; then
	ok "Ctrl-C ends the demonstration within 30 s" false
else
	wait "$DPID"; rc=$?
	DPID=
fi
ok "exit status 0 after Ctrl-C" test "$rc" = 0
ok "evictd stopped cleanly (status 0), the sandbox's cgroups and mounts gone" out_has '^stopping: evictd exited with status 0; pods still running, killed: [0-4]; the sandbox.s cgroups removed and its mounts gone$'
ok "the demonstration says it checked that nothing is left" out_has '^teardown checked: no cgroup .* no mount, no process'
ok "no sandbox cgroup is left" test ! -e "$SB_CG"
ok "no mount of it is left" bash -c "! grep -qE 'evictd-demo' /proc/self/mountinfo"
ok "its directory is gone" test ! -e "$WORK"
no_process() {	# nothing runs with the sandbox's directory on its command line
	local f
	for f in /proc/[0-9]*/cmdline; do
		tr '\0' ' ' 2> /dev/null < "$f" | grep -qF -- "$WORK" && { echo "# left: $f"; return 1; }
	done
	return 0
}
ok "no process of it is left" no_process
ok "evictd is gone" bash -c "! kill -0 $epid 2> /dev/null"
done_testing
