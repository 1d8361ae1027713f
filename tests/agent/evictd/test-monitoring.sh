#!/bin/bash
# What `make run` says: one "evictd: monitoring ..." entry (what is watched, thresholds, pods, dry
# run, then each unavailable signal once with its reason on a line of its own) or "evictd:
# monitoring nothing: ..." with a line per reason — and no configuration line or per-signal
# warnings repeating it before —, a first heartbeat at once (issue 29: a run with nothing to watch
# said one line and then nothing for a minute), a heartbeat line on SIGUSR1, and on SIGINT a
# "stopped" line and a clean exit 0 even when started in the background (where a shell leaves
# SIGINT ignored).
. "$(dirname "$0")/../../lib.sh"
EVICTD=$PWD/$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
FX=$PWD/tests/fixtures/cgroup/systemd
tmp=$(mktemp -d); D=
cleanup() { [ -n "$D" ] && { kill -9 "$D" 2>/dev/null; wait "$D" 2>/dev/null; }; rm -rf "$tmp"; }
trap cleanup EXIT

wait_line() {	# wait_line SECONDS REGEX
	local i
	for ((i = 0; i < $1 * 10; i++)); do grep -qE "$2" "$tmp/err" && return 0; sleep 0.1; done
	sed 's/^/# /' "$tmp/err"; return 1
}
run_bg() {	# run_bg CONFIG ARGS...: evictd in the background, stderr in $tmp/err
	"$EVICTD" --config "$@" --dry-run --log-target stderr 2>"$tmp/err" &
	D=$!
}
stop_int() {	# SIGINT, as Ctrl-C or CI's bounded run: exit 0, and the last line says so
	kill -INT "$D"; wait "$D"; local rc=$?; D=
	[ "$rc" -eq 0 ] || { echo "# exit $rc"; return 1; }
	tail -n1 "$tmp/err" | grep -qE '^evictd: stopped on SIGINT after [0-9]+s; [0-9]+ evictions?, [0-9]+ in flight(, [^;]*)?; dry run$' ||
		{ echo "# last line:"; tail -n1 "$tmp/err" | sed 's/^/# /'; return 1; }
}
first_beat() {	# the first heartbeat comes at once, right after the monitoring entry, with the hint
	wait_line 10 "^evictd: heartbeat: .*; dry run; the next in a minute, or on kill -USR1 $D; Ctrl-C stops$"
}

# This machine, the shipped configuration (as `make run`), its status file kept in $tmp.
cp conf/evictd.conf "$tmp/shipped.conf"
printf '[agent]\nstatus-file = %s/status.json\n' "$tmp" >>"$tmp/shipped.conf"
run_bg "$tmp/shipped.conf"
ok "this machine: a 'monitoring' line" wait_line 10 '^evictd: monitoring '
ok "this machine: exactly one" test "$(grep -c '^evictd: monitoring' "$tmp/err")" -eq 1
# The first screen: nothing before the monitoring line says what it says.
short_screen() {
	! sed '/^evictd: monitoring/q' "$tmp/err" | grep -E 'Configuration loaded|Signal .* unavailable' |
		sed 's/^/# repeated: /' | grep .
}
ok "this machine: no configuration line or per-signal warning repeats the monitoring line" short_screen
ok "this machine: a first heartbeat at once" first_beat
ok "this machine: SIGINT to a background run stops it with exit 0 and a 'stopped' line" stop_int

cat >"$tmp/fixture.conf" <<CONF
[agent]
nodefs-path = /
imagefs-path = /
status-file = $tmp/status.json
CONF
run_bg "$tmp/fixture.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" --metadata-dir "$FX/pods"
ok "fixture: names each signal with its thresholds, the pods, dry run" wait_line 10 \
	'^evictd: monitoring memory\.available \(hard 100Mi\), allocatableMemory\.available \(hard 100Mi\), nodefs\.available \(hard 10%\), nodefs\.inodesFree \(hard 5%\), imagefs\.available \(hard 15%\), imagefs\.inodesFree \(hard 5%\); 6 pods; fall rates for 2 CPUs: memory 12Gi/s, pids 20000/s; disk 4Gi/s, inodes 100000/s; dry run$'
kill -USR1 "$D"
ok "fixture: SIGUSR1 gives a heartbeat with observed values against thresholds" wait_line 10 \
	'^evictd: heartbeat: memory\.available 80Mi \(hard 100Mi: met\), .*; 6 pods; [0-9]+ evictions?, [0-9]+ in flight(, [^;]*)?; dry run$'
ok "fixture: SIGINT, exit 0, a 'stopped' line" stop_int

cat >"$tmp/nothing.conf" <<CONF
[agent]
nodefs-path = $tmp/no-such-dir
imagefs-path = $tmp/no-such-dir
status-file = $tmp/status.json
[eviction-hard]
memory.available = 0%
CONF
run_bg "$tmp/nothing.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" --metadata-dir "$FX/pods"
nothing_screen() {	# the entry, a line per reason, then the first heartbeat
	first_beat || return 1
	grep -A2 '^evictd: monitoring' "$tmp/err" | head -3 | diff - <(cat <<EOF
evictd: monitoring nothing: no signal that has a threshold can be read here (tried again every 1s):
  nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree: statvfs($tmp/no-such-dir): No such file or directory
evictd: heartbeat: no signal monitored; 6 pods; 0 evictions, 0 in flight; dry run; the next in a minute, or on kill -USR1 $D; Ctrl-C stops
EOF
) | sed 's/^/# /' | { ! grep .; }
}
ok "nothing readable: 'monitoring nothing', each reason on a line, then a heartbeat" nothing_screen
ok "nothing readable: each reason once on the screen" \
	test "$(grep -c "statvfs($tmp/no-such-dir)" "$tmp/err")" -eq 1
ok "nothing readable: no configuration line or per-signal warning repeats it" short_screen
ok "nothing readable: SIGINT, exit 0, a 'stopped' line" stop_int

cat >"$tmp/partial.conf" <<CONF
[agent]
nodefs-path = $tmp/no-such-dir
imagefs-path = $tmp/no-such-dir
status-file = $tmp/status.json
CONF
run_bg "$tmp/partial.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" --metadata-dir "$FX/pods"
ok "some unavailable: the watched signals, then each unavailable one once with its reason" wait_line 10 \
	"^evictd: monitoring memory\.available \(hard 100Mi\), allocatableMemory\.available \(hard 100Mi\); 6 pods; fall rates for [0-9]+ CPUs?: memory [0-9.]+[KMGT]i/s, pids [0-9]+/s; disk [0-9.]+[KMGT]i/s, inodes [0-9]+/s; dry run; unavailable here \(tried again every 1s\):$"
ok "some unavailable: the reason on the next line" \
	grep -qx "  nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree: statvfs($tmp/no-such-dir): No such file or directory" "$tmp/err"
ok "some unavailable: each reason once on the screen" test "$(grep -c "statvfs($tmp/no-such-dir)" "$tmp/err")" -eq 1
ok "some unavailable: SIGINT, exit 0, a 'stopped' line" stop_int
done_testing
