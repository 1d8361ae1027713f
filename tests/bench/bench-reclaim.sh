#!/bin/bash
# evictd while an evicted pod reclaims (issue 21), on the real cgroup v2 hierarchy with nodefs
# pressure on a tmpfs laid out as the kubelet lays it out (tests/agent/evictd/test-reclaim.sh's
# scene: batch 3 MiB emptyDir, web 5 MiB, nodefs.available = 6Mi with 4 MiB available):
#   1. reaction to new pressure while a reclaim is pending: batch is evicted and reclaiming (its
#      3 MiB pending, no kubelet to remove it); then one fallocate() of 3 MiB takes available to
#      1 MiB, 2 MiB beyond what is pending; latency = that write -> web's process gone (pidfd);
#   2. kill -> "reclaimed": a kubelet-like cleaner removes batch's volume and cgroup as soon as its
#      processes are gone (polling every 10 ms); evictd's reclaim time (its "Reclaimed" line), i.e. its detection
#      delay on top of the cleanup.
# RUNS (default 10) runs each. Needs root and a writable cgroup v2 hierarchy.
#   tests/bench/bench-reclaim.sh [BUILD_DIR]        (make bench runs it)
cd "$(dirname "$0")/../.."
B=${1:-${BUILD:-build}}
RUNS=${RUNS:-10}
EVICTD=$PWD/$B/evictd
REC=$PWD/$B/tests/helpers/sigrecorder
[ "$(id -u)" = 0 ] || { echo "bench-reclaim: skipped: needs root"; exit 0; }
[ -x "$EVICTD" ] && [ -x "$REC" ] || { echo "bench-reclaim: $EVICTD or $REC not built" >&2; exit 1; }
CG2=
for c in /sys/fs/cgroup/unified /sys/fs/cgroup; do [ "$(stat -f -c %T "$c" 2>/dev/null)" = cgroup2fs ] && { CG2=$c; break; }; done
[ -n "$CG2" ] || { echo "bench-reclaim: skipped: no cgroup v2 hierarchy"; exit 0; }
T=$(mktemp -d /tmp/bench-reclaim.XXXXXX)
ROOT=$CG2/evictd-bench-reclaim-$$
BATCH=$ROOT/kubepods/besteffort/podaaaa-0010
WEB=$ROOT/kubepods/besteffort/podbbbb-1000
DPID=""; CPID=""; PIDS=()

stop_all() {
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null; [ -n "$CPID" ] && kill -9 "$CPID" 2>/dev/null
	for cg in "$BATCH" "$WEB"; do [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill"; done
	wait 2>/dev/null; DPID=""; CPID=""
	for d in "$BATCH" "$WEB"; do rmdir "$d" 2>/dev/null; done
	PIDS=()
}
cleanup() { stop_all; for d in "$ROOT/kubepods/besteffort" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done; umount "$T/nodefs" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
mkdir -p "$ROOT/kubepods/besteffort" "$T/nodefs" "$T/meta" || exit 1
mount -t tmpfs -o size=16m tmpfs "$T/nodefs" || { echo "bench-reclaim: skipped: cannot mount a tmpfs"; exit 0; }
for p in aaaa-0010:batch:10 bbbb-1000:web:1000; do
	IFS=: read -r uid name prio <<<"$p"
	printf '[pod]\nnamespace = default\nname = %s\npriority = %s\ntermination-grace-period = 2s\n' "$name" "$prio" >"$T/meta/$uid.conf"
	chmod 0644 "$T/meta/$uid.conf"
done

setup() {	# setup: pods, emptyDirs, 4 MiB available, the daemon started
	stop_all
	rm -rf "${T:?}/nodefs"/*
	mkdir -p "$BATCH" "$WEB" "$T/nodefs/logs"
	for p in aaaa-0010:3 bbbb-1000:5; do
		d=$T/nodefs/kubelet/pods/${p%%:*}/volumes/kubernetes.io~empty-dir/data; mkdir -p "$d"
		dd if=/dev/zero of="$d/f" bs=1M count="${p##*:}" status=none
	done
	rm -f "$T"/*.rec
	"$REC" --cgroup "$BATCH" "$T/batch.rec" & PIDS+=($!)
	"$REC" --cgroup "$WEB" "$T/web.rec" & PIDS+=($!)
	for _ in $(seq 100); do grep -q ready "$T/batch.rec" 2>/dev/null && grep -q ready "$T/web.rec" 2>/dev/null && break; sleep 0.02; done
	local avail; avail=$(df -B1 --output=avail "$T/nodefs" | tail -1)
	dd if=/dev/zero of="$T/nodefs/fill" bs=4K count=$(( (avail - (4 << 20)) / 4096 )) status=none
	cat >"$T/evictd.conf" <<EOC
[agent]
interval = 1s
status-file = $T/status.json
nodefs-path = $T/nodefs
imagefs-path = $T/nodefs
pod-metadata-dir = $T/meta
kubelet-root-dir = $T/nodefs/kubelet
pod-logs-dir = $T/nodefs/logs
[eviction-hard]
memory.available = 0%
imagefs.available = 0%
imagefs.inodesFree = 0%
nodefs.inodesFree = 0%
nodefs.available = 6Mi
[eviction]
pressure-transition-period = 0s
reclaim-timeout = 60s
EOC
}
cleaner() {	# the kubelet's part, as fast as a poll every 10 ms allows
	( while grep -q "populated 1" "$BATCH/cgroup.events" 2>/dev/null; do sleep 0.01; done
	  rm -rf "$T/nodefs/kubelet/pods/aaaa-0010"; rmdir "$BATCH" ) &
	CPID=$!
}
stats() {	# stats LABEL < values (ms): n min median p90 max
	sort -n | awk -v l="$1" '{ v[NR] = $1 } END { if (!NR) { print l ": no sample"; exit }
		printf "%s: n=%d min %.1f median %.1f p90 %.1f max %.1f ms\n", l, NR, v[1], v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.999)], v[NR] }'
}

: >"$T/lat1"; : >"$T/lat2"
for ((i = 0; i < RUNS; i++)); do
	setup
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr 2>"$T/err" & DPID=$!
	for _ in $(seq 100); do grep -q "Evicted default/batch in" "$T/err" && break; sleep 0.05; done
	sleep 1	# batch reclaiming, 3 MiB pending; the daemon polls near the threshold
	python3 - "$T/nodefs/fill2" "${PIDS[1]}" >>"$T/lat1" <<'PY' || echo "run $i: web not evicted" >&2
import os, select, sys, time
fd = os.pidfd_open(int(sys.argv[2]))
f = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
t0 = time.monotonic()
os.posix_fallocate(f, 0, 3 << 20)
if not select.select([fd], [], [], 5)[0]:
    sys.exit(1)
print("%.3f" % ((time.monotonic() - t0) * 1000))
PY
	stop_all
	setup
	cleaner
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr 2>"$T/err" & DPID=$!
	for _ in $(seq 100); do grep -q "Reclaimed:" "$T/err" && break; sleep 0.05; done
	# "Reclaimed: ... is gone, 0.012s after its processes" (the journal's EVICTD_RECLAIM_MSEC)
	grep -o 'is gone, [0-9.]*s after its processes' "$T/err" | head -1 | awk '{ sub(/s$/, "", $3); printf "%d\n", $3 * 1000 + 0.5 }' >>"$T/lat2"
	stop_all
done
echo "bench-reclaim ($RUNS runs, $(date -u +%H:%M) UTC)"
stats "new pressure while a reclaim is pending: write -> next victim gone" <"$T/lat1"
stats "kill -> reclaimed (cleaner polling 10 ms; evictd polls 100 ms while reclaiming)" <"$T/lat2"
