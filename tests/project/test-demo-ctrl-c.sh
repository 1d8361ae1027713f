#!/bin/bash
# Ctrl-C stops `./run`'s demonstration at any moment, clean, within 2 s (issue 36.7): SIGINT to
# its process group, as a terminal sends it, (a) while the sandbox is still being built, (b) one
# second after "Ctrl-C stops it and removes the sandbox" (once ignored altogether: heartbeats for
# ten more minutes). Each time: the process group is gone within 2 s, exit status 0, "teardown
# checked", and no cgroup, mount, directory or process of it left. The heartbeat line it prints
# names no pid to signal (evictd's pid in its own namespace is another process on the host).
. "$(dirname "$0")/../lib.sh"

EVICTD=$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
why=$(scripts/demo.sh --check "$EVICTD") || skip_all "the demonstration cannot run here: $why"

T=$(mktemp -d)
DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL -- "-$DPID" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

wait_for() {	# wait_for SECONDS COMMAND...: polls until COMMAND succeeds
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done
}
no_process() {	# nothing runs with the sandbox's directory on its command line
	local f
	for f in /proc/[0-9]*/cmdline; do
		tr '\0' ' ' 2> /dev/null < "$f" | grep -qF -- "$1" && { echo "# left: $f"; return 1; }
	done
	return 0
}
group_alive() { kill -0 -- "-$DPID" 2> /dev/null; }

# one_stop NAME OUT WHEN-REGEX DELAY: starts the demonstration, waits for WHEN-REGEX in its output,
# DELAY seconds more, then SIGINT to the group; checks the stop.
one_stop() {
	local name=$1 out=$2 when=$3 delay=$4 t0 ms rc work sb
	set -m
	scripts/demo.sh "$EVICTD" > "$out" 2>&1 < /dev/null &
	DPID=$!
	set +m
	if ! wait_for 90 grep -sqE -- "$when" "$out"; then
		ok "$name: the demonstration reached '$when'" false
		sed 's/^/# /' "$out"
		return
	fi
	sleep "$delay"
	work=$(sed -n 's/^  sandbox: cgroup .* directory \(.*\)$/\1/p' "$out")
	sb=$(sed -n 's/^  sandbox: cgroup \([^ ]*\) .*/\1/p' "$out")
	t0=$EPOCHREALTIME
	kill -INT -- "-$DPID"
	wait_for 30 bash -c "! kill -0 -- -$DPID 2> /dev/null"
	ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
	echo "# $name: stopped ${ms} ms after SIGINT"
	if group_alive; then
		ok "$name: Ctrl-C stops it (still running 30 s later)" false
		kill -KILL -- "-$DPID"
		wait "$DPID"
		DPID=
		return
	fi
	wait "$DPID"; rc=$?
	DPID=
	tail -n 8 "$out" | sed 's/^/#   /'
	ok "$name: Ctrl-C stops it within 2 s (took ${ms} ms)" test "$ms" -le 2000
	ok "$name: exit status 0 (got $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || sed 's/^/#   /' "$out"
	ok "$name: it says it checked that nothing is left" grep -q '^teardown checked: no cgroup .* no mount, no process' "$out"
	ok "$name: no sandbox cgroup is left" test -n "$sb" -a ! -e "$sb"
	ok "$name: no mount of it is left" bash -c "! grep -qE 'evictd-demo' /proc/self/mountinfo"
	ok "$name: its directory is gone" test -n "$work" -a ! -e "$work"
	ok "$name: no process of it is left" no_process "$work"
}

one_stop "while the sandbox is built" "$T/early" '^  sandbox: cgroup ' 0.3
one_stop "1 s after 'Ctrl-C stops it'" "$T/late" '^evictd keeps running on the sandbox' 1
ok "the heartbeat names no pid to signal (that pid is another process on the host)" \
	bash -c "grep -q 'evictd: heartbeat: ' '$T/late' && ! grep -q 'kill -USR1' '$T/late'"
done_testing
