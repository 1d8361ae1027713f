#!/bin/bash
# evictd as a daemon against the cases of issue 12, on the real cgroup v2 hierarchy (pods are
# cgroups this test creates, their processes sigrecorder helpers counting every SIGTERM, the
# threshold nodefs.available on a small tmpfs the test fills):
#   - an empty pod cgroup is not evicted again and again, and the next pod is chosen;
#   - a failing eviction is reported once, backs off, and the next pod is chosen meanwhile;
#   - kill -9 of evictd mid-grace, restart: the pod is killed at its original deadline, SIGTERM
#     not sent again, with pressure still there and with pressure gone;
#   - a second evictd on the node refuses to start and names the pid holding the lock.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (creates cgroups, mounts a tmpfs)"
find_cgroup2

EVICTD=$BUILD/evictd
REC=$BUILD/tests/helpers/sigrecorder
T=$(mktemp -d /tmp/evictd-hostile.XXXXXX)
ROOT=$CG2/evictd-hostile-$$
PODS=$ROOT/kubepods/besteffort
PIDS=()
DPID=

cleanup() {
	[ -n "${DPID:-}" ] && kill -9 "$DPID" 2>/dev/null
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for cg in "$PODS"/pod*; do [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill"; done
	sleep 0.2
	for cg in "$PODS"/pod*; do rmdir "$cg" 2>/dev/null; done
	for d in "$PODS" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	[ -n "${KEEP:-}" ] && cp -r "$T" /tmp/evictd-hostile-kept
	rm -rf "$T"
}
trap cleanup EXIT

mkdir_cg "$PODS"
[ -e "$ROOT/cgroup.kill" ] || skip_all "no cgroup.kill (kernel < 5.14)"
mkdir -p "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=8m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"

pod() {	# pod UID NAME PRIORITY [GRACE]: cgroup and descriptor
	mkdir -p "$PODS/pod$1"
	printf '[pod]\nnamespace = default\nname = %s\npriority = %s\ntermination-grace-period = %s\n' \
		"$2" "$3" "${4:-4s}" > "$T/meta/$1.conf"
	chmod 0644 "$T/meta/$1.conf"
}
unpod() {	# unpod UID: kill, remove the cgroup, the descriptor and what evictd recorded of it
	echo 1 > "$PODS/pod$1/cgroup.kill"
	for _ in $(seq 100); do rmdir "$PODS/pod$1" 2>/dev/null && break; sleep 0.02; done
	rm -f "$T/meta/$1.conf"
	# Kubernetes never gives a new pod an old UID; these cases do, so the old pod's record goes
	rm -f "$T/inflight/$1.json"
}
start_proc() {	# start_proc UID [--ignore-term]: a sigrecorder in the pod, records in $T/UID.rec
	rm -f "$T/$1.rec"
	"$REC" --cgroup "$PODS/pod$1" $2 "$T/$1.rec" &
	PIDS+=($!)
	for _ in $(seq 250); do
		grep -q ready "$T/$1.rec" 2>/dev/null && grep -qx "${PIDS[-1]}" "$PODS/pod$1/cgroup.procs" && return 0
		kill -0 "${PIDS[-1]}" 2>/dev/null || { wait "${PIDS[-1]}"; return $?; }
		sleep 0.02
	done
	return 1
}
wait_for() {	# wait_for SECONDS COMMAND...
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done
}
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
dead() { ! alive "$1"; }
terms() { grep -c '^TERM ' "$1" 2>/dev/null || true; }
has_term() { [ "$(terms "$1")" -ge 1 ]; }
logged() { grep -q -- "$1" "$T/stderr"; }
count_log() { grep -c -- "$1" "$T/stderr" || true; }
json() { python3 -c "import json,sys; d=json.load(open('$T/status.json')); sys.exit(0 if ($1) else 1)"; }
decisions() {	# decisions UID: how many status.json decisions name the pod
	python3 -c "import json; print(sum(1 for x in json.load(open('$T/status.json'))['decisions'] if x['uid']=='$1'))"
}
fill() { dd if=/dev/zero of="$T/nodefs/fill" bs=1M count=6 status=none; }
unfill() { rm -f "$T/nodefs/fill"; }
start_daemon() {
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr 2>> "$T/stderr" &
	DPID=$!
	wait_for 5 test -s "$T/status.json"
}
stop_daemon() { kill -TERM "$DPID"; wait "$DPID" 2>/dev/null; DPID=; }
conf() {	# conf hard|exec|soft
	daemon_conf
	case $1 in
	hard) printf '%s\n' "nodefs.available = 4Mi" "[eviction]" "pressure-transition-period = 0s" >> "$T/evictd.conf" ;;
	exec) printf '%s\n' "nodefs.available = 4Mi" "[agent]" "action = exec" "exec = $T/fail.sh {uid}" \
		"exec-fallback = none" "[eviction]" "pressure-transition-period = 0s" "retry-backoff = 2s" \
		"retry-backoff-max = 4s" >> "$T/evictd.conf" ;;
	soft) printf '%s\n' "nodefs.available = 0%" "[eviction-soft]" "nodefs.available = 4Mi" \
		"[eviction-soft-grace-period]" "nodefs.available = 200ms" "[eviction]" "pressure-transition-period = 0s" \
		>> "$T/evictd.conf" ;;
	esac
}

# A critical pod: ranked, never chosen, so what is chosen is only ever the pods under test.
pod 9999-0000 guard 2000000000
start_proc 9999-0000 || env_or_fail $? "cannot move a process into $PODS/pod9999-0000"
GUARD=${PIDS[-1]}

# --- an empty pod is not evicted again, the next pod is chosen ---------------------------------
pod cccc-3333 empty 0		# no process at all: its containers ended, the directory stays
pod aaaa-1111 low 10
ok "the low pod's process runs in its cgroup" start_proc aaaa-1111
LOW=${PIDS[-1]}
conf hard
fill
start_daemon
ok "the next pod in the ranking is evicted" wait_for 5 dead "$LOW"
sleep 2	# pressure lasts: both cgroups stay, with no process
ok "the empty pod: one decision in status.json (outcome empty)" json \
	"[x['outcome'] for x in d['decisions'] if x['uid']=='cccc-3333']==['empty']"
ok "the killed pod: one decision in status.json, not chosen again" json \
	"[x['outcome'] for x in d['decisions'] if x['uid']=='aaaa-1111']==['done']"
ok "the empty pod is chosen once" test "$(count_log 'Evicting default/empty (priority')" = 1
ok "...and said to have no process left, once" test "$(count_log 'Eviction of default/empty not started: .* no process left')" = 1
ok "the killed pod is chosen once" test "$(count_log 'Evicting default/low (priority')" = 1
ok "...and killed once" test "$(count_log 'Evicting default/low (nodefs.available, hard threshold)')" = 1
# (how quickly the death is noticed is a wall-clock figure: tests/bench/bench-reaction.c measures it)
ok "the critical pod survived" alive "$GUARD"

# --- a second evictd on the node --------------------------------------------------------------
"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr 2> "$T/second" &
SECOND=$!
wait_for 5 dead "$SECOND"
wait "$SECOND"; RC=$?
ok "a second evictd refuses to start (exit $RC)" test "$RC" = 1
ok "...naming the pid holding the lock" grep -q "Another evictd (pid $DPID) holds $T/evictd.lock" "$T/second"
ok "the lock file holds the running daemon's pid" test "$(cat "$T/evictd.lock")" = "$DPID"
ok "the first evictd is still running" alive "$DPID"
ok "--once takes no lock: it runs beside the daemon" timeout 10 "$EVICTD" --once --dry-run \
	--config "$T/evictd.conf" --cgroup-root "$ROOT"
stop_daemon
unfill
unpod aaaa-1111
unpod cccc-3333

# --- a failing eviction backs off; the next pod is chosen meanwhile ---------------------------
cat > "$T/fail.sh" <<EOF
#!/bin/sh
echo "\$1" >> "$T/exec.calls"
echo "API server unreachable" >&2
exit 1
EOF
chmod 0755 "$T/fail.sh"
pod aaaa-1111 low 10
pod dddd-4444 next 20
start_proc aaaa-1111; r1=$?
start_proc dddd-4444; r2=$?
ok "both pods' processes run in their cgroups" test "$r1:$r2" = 0:0
conf exec
: > "$T/stderr"
fill
T0=$SECONDS
start_daemon
ok "the failing pod's command ran" wait_for 5 grep -q aaaa-1111 "$T/exec.calls"
ok "while it fails, the next pod is chosen" wait_for 5 grep -q dddd-4444 "$T/exec.calls"
ok "the failure is reported with its reason" logged "Eviction of default/low failed"
ok "...and the retry with its back-off" logged "The eviction of default/low is retried in 2s at the earliest"
ok "not retried in a tight loop (once in the first back-off)" test "$(grep -c aaaa-1111 "$T/exec.calls")" = 1
wait_for 8 bash -c "[ \$(grep -c aaaa-1111 '$T/exec.calls') -ge 2 ]"
ok "retried after its back-off" test "$(grep -c aaaa-1111 "$T/exec.calls")" -ge 2
sleep 1
N=$(wc -l < "$T/exec.calls")
ok "a bounded number of tries ($N in $((SECONDS - T0)) s)" test "$N" -le 6
ok "a repeated failure is not logged again" test "$(count_log 'Eviction of default/low failed')" = 1
stop_daemon
unfill
unpod aaaa-1111
unpod dddd-4444

# --- kill -9 mid-grace, restart with pressure still there -------------------------------------
crash_case() {	# crash_case UID NAME PRESSURE-AT-RESTART(yes|no)
	pod "$1" "$2" 0 4s
	ok "$2: the pod's process runs in its cgroup" start_proc "$1" --ignore-term
	local victim=${PIDS[-1]}
	conf soft
	: > "$T/stderr"
	fill
	start_daemon
	ok "$2: SIGTERM sent" wait_for 5 has_term "$T/$1.rec"
	ok "$2: in-flight record written" test -s "$T/inflight/$1.json"
	sleep 1
	kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
	[ "$3" = no ] && unfill
	start_daemon
	ok "$2: resumed after the restart" wait_for 3 logged "Resumed the eviction of default/$2"
	ok "$2: status.json shows it in flight, resumed" wait_for 2 json \
		"any(x['uid']=='$1' and x['resumed'] and x['phase']=='terminating' for x in d['evictions'])"
	ok "$2: still alive before its original deadline" alive "$victim"
	ok "$2: killed" wait_for 10 dead "$victim"
	# At the original deadline, not a new grace period: the test waited 1 s after SIGTERM before
	# the kill -9, so what is left at the resume is under 3 s (load only makes it less); a grace
	# restarted at the resume would say 4 s. Read from evictd's own line, not a wall-clock window.
	local left; left=$(sed -n "s/.*Resumed the eviction of default\/$2 .*cgroup.kill in \([0-9.]*\)s.*/\1/p" "$T/stderr" | head -n1)
	ok "$2: kept its original deadline (cgroup.kill in ${left:-?}s at the resume, < 3s)" \
		awk -v l="$left" 'BEGIN { exit !(l != "" && l + 0 < 3.0) }'
	ok "$2: SIGTERM not sent again" test "$(terms "$T/$1.rec")" = 1
	ok "$2: status.json: one decision, done" wait_for 3 json \
		"[x['outcome'] for x in d['decisions'] if x['uid']=='$1']==['done']"
	# its processes are gone, its cgroup is not (no kubelet here): the record now holds its reclaim
	ok "$2: the record now holds its pending reclaim" wait_for 3 python3 -c "
import json, sys; r = json.load(open('$T/inflight/$1.json'))
sys.exit(0 if r['phase'] == 'reclaiming' and r['reclaim']['reclaiming'] else 1)"
	ok "$2: the journal line has its MESSAGE_ID's text" logged "begun by a previous evictd: terminating (SIGTERM not sent again), cgroup.kill in"
	ok "$2: the critical pod survived" alive "$GUARD"
	stop_daemon
	unfill
	unpod "$1"
}
crash_case eeee-5555 pressure-lasts yes
crash_case ffff-6666 pressure-gone no

# --- kill -9 mid-grace, and the pod's processes die while no evictd runs (the kubelet, the OOM
# killer): the record is resumed over an empty cgroup and ends at once — before the daemon had
# its metrics, which crashed it (a NULL dereference found by test-reclaim.sh's restarts) ---------
pod 9999-7777 gone-meanwhile 0 4s
ok "gone-meanwhile: the pod's process runs in its cgroup" start_proc 9999-7777 --ignore-term
victim=${PIDS[-1]}
conf soft
: > "$T/stderr"
fill
start_daemon
ok "gone-meanwhile: SIGTERM sent" wait_for 5 has_term "$T/9999-7777.rec"
ok "gone-meanwhile: in-flight record written" test -s "$T/inflight/9999-7777.json"
kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=
kill -9 "$victim"
ok "gone-meanwhile: its process is gone before the restart" wait_for 5 dead "$victim"
unfill
start_daemon
sleep 1
ok "gone-meanwhile: the restarted evictd runs" kill -0 "$DPID"
# the eviction ends at once; what follows it, its reclaim, is recorded (its cgroup is still there)
ok "gone-meanwhile: the eviction's record ends, its reclaim's follows" wait_for 5 python3 -c "
import json, sys; r = json.load(open('$T/inflight/9999-7777.json'))
sys.exit(0 if r['phase'] == 'reclaiming' else 1)"
stop_daemon
unpod 9999-7777
done_testing
