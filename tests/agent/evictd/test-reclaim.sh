#!/bin/bash
# Reclaim (issue 21) on the real cgroup v2 hierarchy, with nodefs pressure on a tmpfs laid out as
# the kubelet lays it out (pods/<uid>/volumes/kubernetes.io~empty-dir/ under kubelet-root-dir on
# nodefs). Pods: batch (priority 10, 3 MiB emptyDir), web (priority 1000, 5 MiB), a critical
# static pod; nodefs.available = 6Mi with 4 MiB available.
#   1. with a kubelet-like cleaner (volumes, then the pod cgroup, removed 1.5 s after the processes
#      are gone): only batch is evicted, web survives, "reclaimed" is logged with the measured change
#      once the cgroup is gone, and nothing says "reclaimed" before;
#   2. a victim stays a victim: processes started in batch's cgroup while it reclaims are killed
#      again at once, logged once, not counted as an eviction;
#   3. new pressure during the reclaim (the signal falls further) is acted on at once;
#   4. no kubelet: the next pod only after reclaim-timeout, with "reclaim timed out" logged;
#   5. dry run: the real run's sequence once (hard: cgroup.kill at once, batch then nothing).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (creates cgroups, mounts a tmpfs)"
find_cgroup2

EVICTD=$BUILD/evictd
REC=$BUILD/tests/helpers/sigrecorder
T=$(mktemp -d -t evictd-reclaim.XXXXXX)
ROOT=$CG2/evictd-reclaim-$TEST_TAG
BATCH_UID=aaaa-0010
WEB_UID=bbbb-1000
CRIT_UID=cccc-crit
BATCH=$ROOT/kubepods/besteffort/pod$BATCH_UID
WEB=$ROOT/kubepods/besteffort/pod$WEB_UID
CRIT=$ROOT/kubepods/besteffort/pod$CRIT_UID
PIDS=()
DPID=""; CPID=""

stop_all() {
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
	[ -n "$CPID" ] && kill -9 "$CPID" 2>/dev/null
	wait "$DPID" "$CPID" 2>/dev/null
	DPID=""; CPID=""
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for cg in "$BATCH" "$WEB" "$CRIT"; do [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill"; done
	sleep 0.2
	for d in "$BATCH" "$WEB" "$CRIT"; do rmdir "$d" 2>/dev/null; done
	PIDS=()
}
cleanup() {
	[ -n "${KEEP:-}" ] && cp -r "$T" /tmp/reclaim-keep 2>/dev/null
	stop_all
	for d in "$ROOT/kubepods/besteffort" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
wait_for() {	# wait_for SECONDS COMMAND...: polls until COMMAND succeeds
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done
}
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
dead() { ! alive "$1"; }

mkdir -p "$ROOT/kubepods/besteffort" || skip_all "cannot create cgroups under $CG2"
mkdir -p "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=16m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"
[ -e "$ROOT/cgroup.kill" ] || skip_all "no cgroup.kill (kernel < 5.14)"

pod_conf() {	# pod_conf UID NAME PRIORITY
	printf '[pod]\nnamespace = default\nname = %s\npriority = %s\ntermination-grace-period = 2s\n' "$2" "$3" \
		> "$T/meta/$1.conf"
	chmod 0644 "$T/meta/$1.conf"
}
pod_conf $BATCH_UID batch 10
pod_conf $WEB_UID web 1000
pod_conf $CRIT_UID static-critical 2000001000

emptydir() {	# emptydir UID MiB: the pod's emptyDir volume on nodefs
	local d=$T/nodefs/kubelet/pods/$1/volumes/kubernetes.io~empty-dir/data
	mkdir -p "$d"
	dd if=/dev/zero of="$d/f" bs=1M count="$2" status=none
}

# setup [CONF-LINES...]: pods started, emptyDirs written, nodefs filled to 4 MiB available
setup() {
	rm -rf "$T/nodefs"/* "$T"/*.rec "$T/status.json" "$T/inflight"
	mkdir -p "$BATCH" "$WEB" "$CRIT" "$T/nodefs/logs"
	emptydir $BATCH_UID 3
	emptydir $WEB_UID 5
	for p in "$BATCH:batch" "$WEB:web" "$CRIT:crit"; do
		"$REC" --cgroup "${p%%:*}" "$T/${p##*:}.rec" & PIDS+=($!)
	done
	local avail
	avail=$(df -B1 --output=avail "$T/nodefs" | tail -1)
	dd if=/dev/zero of="$T/nodefs/fill" bs=4K count=$(( (avail - (4 << 20)) / 4096 )) status=none
	daemon_conf
	sed -i 's/^interval = 1s/interval = 100ms/' "$T/evictd.conf"
	printf '%s\n' "nodefs.available = 6Mi" "[agent]" "kubelet-root-dir = $T/nodefs/kubelet" \
		"pod-logs-dir = $T/nodefs/logs" "[eviction]" "pressure-transition-period = 0s" "$@" >> "$T/evictd.conf"
	wait_for 5 bash -c "[ -s '$T/batch.rec' ] && [ -s '$T/web.rec' ] && [ -s '$T/crit.rec' ]"
}
start_daemon() {
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >"$T/out" 2>"$T/stderr" &
	DPID=$!
}
# The kubelet's part: once a pod's processes are gone (and its API object would be), after a
# while (Event, PATCH, DELETE, SyncTerminatedPod), its volumes are removed, then its cgroup.
cleaner() {	# cleaner UID CGROUP DELAY
	( while grep -q "populated 1" "$2/cgroup.events" 2>/dev/null; do sleep 0.05; done
	  sleep "$3"
	  rm -rf "$T/nodefs/kubelet/pods/$1"
	  rmdir "$2" ) &
	CPID=$!
}
count() { grep -c -- "$1" "$T/stderr"; }
ms() { date +%s%3N; }

# --- 1. a kubelet-like cleaner: one eviction, reclaimed, web survives ------------------------
setup
BPID=${PIDS[0]}; WPID=${PIDS[1]}
cleaner $BATCH_UID "$BATCH" 1.5
start_daemon
ok "batch evicted" wait_for 5 grep -q "Evicted default/batch in" "$T/stderr"
ok "...reclaimed once its cgroup is gone, with the signal's measured change" wait_for 10 grep -q \
	"Reclaimed: what evicted default/batch held is back (pod cgroup, emptyDir volumes), 1\.[5-9][0-9]*s after its processes; nodefs.available 4Mi -> 7Mi (+3Mi, expected 3Mi)" "$T/stderr"
# (the heartbeat's counters, "0 reclaimed", claim nothing)
ok "nothing said \"reclaimed\" before the cgroup was gone" bash -c \
	"! sed -n '1,/Reclaimed:/p' '$T/stderr' | head -n -1 | grep -v '^evictd: heartbeat: ' | grep -qi reclaimed"
sleep 1
ok "web survived (one pod was enough)" alive "$WPID"
ok "web was never chosen" test "$(count 'default/web')" = 0
ok "the critical static pod survived" alive "${PIDS[2]}"
ok "status.json: batch's decision says reclaimed, with the measured change" python3 -c "
import json; d = json.load(open('$T/status.json'))
b = [x for x in d['decisions'] if x['pod'] == 'default/batch']
assert len(b) == 1 and b[0]['outcome'] == 'done' and b[0]['reclaim'] == 'reclaimed', b
assert b[0]['reclaimed'] == 3 << 20 and b[0]['reclaim_usec'] >= 1500000, b
assert d['reclaiming'] == [], d['reclaiming']"
RECLAIM1_MS=$(grep -o 'is gone, [0-9.]*s after its processes' "$T/stderr" | head -1 | awk '{ sub(/s$/, "", $3); printf "%d\n", $3 * 1000 + 0.5 }')
[ -n "${KEEP:-}" ] && cp "$T/stderr" "$T/stderr.$((++N))"; stop_all

# --- 2 + 3. a victim stays a victim; new pressure during the reclaim is acted on at once -------
setup "reclaim-timeout = 30s"
BPID=${PIDS[0]}; WPID=${PIDS[1]}
start_daemon
ok "no kubelet: batch evicted" wait_for 5 grep -q "Evicted default/batch in" "$T/stderr"
ok "...and reclaiming in status.json" wait_for 3 python3 -c "
import json; d = json.load(open('$T/status.json'))
assert [r['pod'] for r in d['reclaiming']] == ['default/batch'], d['reclaiming']
assert d['reclaiming'][0]['expected_reclaim'] == 3 << 20"
"$REC" --cgroup "$BATCH" "$T/batch2.rec" & R1=$!; PIDS+=($R1)
ok "a process back in batch's cgroup (container restart) is killed again at once" wait_for 2 dead "$R1"
"$REC" --cgroup "$BATCH" "$T/batch3.rec" & R2=$!; PIDS+=($R2)
ok "...every time" wait_for 2 dead "$R2"
ok "...logged once" test "$(count 'Processes reappeared in evicted pod default/batch')" = 1
ok "...not a new eviction" test "$(count 'Evicting default/batch (nodefs')" = 1
sleep 1
ok "web alive while batch's 3Mi are pending" alive "$WPID"
T0=$(ms)
dd if=/dev/zero of="$T/nodefs/fill2" bs=1M count=3 status=none   # 1 MiB left: 2Mi beyond the pending 3Mi
ok "new pressure beyond the pending reclaim: web evicted at once" wait_for 3 dead "$WPID"
NEW_PRESSURE_MS=$(( $(ms) - T0 ))
ok "...within 1 s" test "$NEW_PRESSURE_MS" -lt 1000
[ -n "${KEEP:-}" ] && cp "$T/stderr" "$T/stderr.$((++N))"; stop_all

# --- 4. no kubelet, pressure from outside the pods: the next pod only after reclaim-timeout -------
setup "reclaim-timeout = 3s"
WPID=${PIDS[1]}
start_daemon
ok "batch evicted" wait_for 5 grep -q "Evicted default/batch in" "$T/stderr"
T0=$(ms)
sleep 2
ok "web not chosen before the reclaim timeout" alive "$WPID"
ok "reclaim timed out after 3 s, logged" wait_for 5 grep -q \
	"Reclaim of evicted default/batch timed out after 3s, still outstanding: pod cgroup, emptyDir volumes $T/nodefs/kubelet/pods/$BATCH_UID/volumes/kubernetes.io~empty-dir (3Mi for nodefs.available)" "$T/stderr"
ok "then web, the next pod" wait_for 3 grep -q "Evicting default/web (" "$T/stderr"
ok "...not before 3 s" test $(( $(ms) - T0 )) -ge 2500
ok "status.json: batch's reclaim timed out" python3 -c "
import json; d = json.load(open('$T/status.json'))
b = [x for x in d['decisions'] if x['pod'] == 'default/batch']
assert b and b[0]['reclaim'] == 'timeout', b"
[ -n "${KEEP:-}" ] && cp "$T/stderr" "$T/stderr.$((++N))"; stop_all

# --- 5. dry run: the real run's sequence, once ------------------------------------------------
setup "reclaim-timeout = 30s" "[agent]" "dry-run = yes"
start_daemon
ok "dry run: hard threshold logged as the real action" wait_for 5 grep -q \
	"Dry run: would evict default/batch (nodefs.available, hard threshold): no grace period, cgroup.kill at once" "$T/stderr"
sleep 3
ok "dry run: no SIGTERM claim" bash -c "! grep -q 'Dry run.*SIGTERM' '$T/stderr'"
ok "dry run: batch 'evicted' once, then reclaiming: nothing more (as the real run)" \
	test "$(count 'Dry run: would evict')" = 1
ok "dry run: nothing touched" alive "${PIDS[0]}"
ok "dry run: status.json shows batch reclaiming" python3 -c "
import json; d = json.load(open('$T/status.json'))
assert [(r['pod'], r['dry_run']) for r in d['reclaiming']] == [('default/batch', True)], d['reclaiming']"
[ -n "${KEEP:-}" ] && cp "$T/stderr" "$T/stderr.$((++N))"; stop_all

echo "# figures: kill -> reclaimed with a 1.5 s cleaner: ${RECLAIM1_MS} ms; new pressure while reclaiming -> victim dead: ${NEW_PRESSURE_MS} ms"
done_testing
