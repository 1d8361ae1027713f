#!/bin/bash
# How long a runtime that refuses every image removal delays a disk eviction: the time from a fill
# crossing nodefs.available (6Mi, 4 MiB left on a 16 MiB tmpfs) to "Evicting" in evictd's log, for
# one writer pod (a sigrecorder in a pod cgroup with a 2 MiB emptyDir), three ways: no runtime
# (container-runtime-endpoint = none), the stand-in runtime (tests/cri/cri-standin.py: a test
# double, not containerd) with no unused image, and the stand-in refusing every RemoveImage
# (INTERNAL) of IMAGES unused images (default 8). evictd has listed once at start and waits idle
# before each fill. Needs root (cgroups, a tmpfs).
#   tests/bench/bench-cri-refuse.sh [BUILD_DIR]      RUNS (default 5) per way; about 1 min
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-${BUILD:-build}}
RUNS=${RUNS:-5}
IMAGES=${IMAGES:-8}
[ -x "$B/evictd" ] && [ -x "$B/tests/helpers/sigrecorder" ] || { echo "bench-cri-refuse: $B/evictd or its helpers not built" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench-cri-refuse: skipped: needs root (cgroups, a tmpfs)"; exit 0; }
PY=
for p in python3 /usr/bin/python3; do
	command -v "$p" >/dev/null && "$p" -c 'import grpc' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "bench-cri-refuse: skipped: no python3 with grpc (python3-grpcio)"; exit 0; }
CG=
for c in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	[ "$(stat -f -c %T "$c" 2>/dev/null)" = cgroup2fs ] && CG=$c
done
[ -n "$CG" ] || { echo "bench-cri-refuse: skipped: no cgroup2"; exit 0; }

T=$(mktemp -d -t bench-cri-refuse.XXXXXX)
ROOT=$CG/bench-cri-refuse-$$
UID_W=wwww-0001-bench
W=$ROOT/kubepods/besteffort/pod$UID_W
DPID=""; SPID=""; WPID=""
stop_all() {
	for p in $DPID $SPID $WPID; do kill -9 "$p" 2>/dev/null; done
	for p in $DPID $SPID $WPID; do wait "$p" 2>/dev/null; done
	DPID=""; SPID=""; WPID=""
	[ -e "$W/cgroup.kill" ] && echo 1 > "$W/cgroup.kill"
	for i in $(seq 100); do [ -d "$W" ] && ! rmdir "$W" 2>/dev/null || break; sleep 0.05; done
}
cleanup() {
	stop_all
	for d in "$ROOT/kubepods/besteffort" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$ROOT/kubepods/besteffort" "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=16m tmpfs "$T/nodefs" || { echo "bench-cri-refuse: skipped: cannot mount a tmpfs"; exit 0; }
printf '[pod]\nnamespace = default\nname = writer\npriority = 0\ntermination-grace-period = 1s\n' > "$T/meta/$UID_W.conf"
ms() { date +%s%3N; }

# one WAY: RESULT = the milliseconds from the fill to the eviction (not a $(...): its children would hold it open)
one() {
	local way=$1 avail t0
	stop_all
	rm -rf "${T:?}/nodefs"/* "$T/status.json" "$T/inflight" "$T/node-reclaim.json" "$T/cri.sock"
	mkdir -p "$W" "$T/nodefs/kubelet/pods/$UID_W/volumes/kubernetes.io~empty-dir/data"
	dd if=/dev/zero of="$T/nodefs/kubelet/pods/$UID_W/volumes/kubernetes.io~empty-dir/data/f" bs=1M count=2 status=none
	"$B/tests/helpers/sigrecorder" --cgroup "$W" "$T/w.rec" & WPID=$!
	local endpoint="unix://$T/cri.sock" images="" faults=""
	case $way in
	none) endpoint=none ;;
	refuse-all)
		for i in $(seq "$IMAGES"); do images+=", {\"id\": \"sha256:unused-$i\", \"tags\": [\"localhost/unused-$i:1\"], \"size\": 1048576}"; done
		faults=', "remove_refused": {"*": {"status": 13, "message": "stand-in: internal error"}}' ;;
	esac
	cat > "$T/cri.json" <<J
{"image_filesystems": [{"mountpoint": "$T/nodefs", "used_bytes": 1}],
 "images": [{"id": "sha256:used", "tags": ["localhost/app:1"], "size": 1000}$images],
 "sandboxes": [{"id": "s1", "uid": "$UID_W", "name": "writer", "namespace": "default", "created_at": 1}],
 "containers": [{"id": "c-run", "sandbox": "s1", "name": "app", "image_ref": "sha256:used", "created_at": 30}]$faults}
J
	if [ "$way" != none ]; then
		"$PY" tests/cri/cri-standin.py --socket "$T/cri.sock" --state "$T/cri.json" & SPID=$!
		for i in $(seq 100); do [ -S "$T/cri.sock" ] && break; sleep 0.05; done
	fi
	cat > "$T/evictd.conf" <<C
[agent]
interval = 100ms
status-file = $T/status.json
nodefs-path = $T/nodefs
imagefs-path = $T/nodefs
pod-metadata-dir = $T/meta
kubelet-root-dir = $T/nodefs/kubelet
pod-logs-dir = $T/nodefs/logs
container-runtime-endpoint = $endpoint
runtime-request-timeout = 1s
[eviction-hard]
memory.available = 0%
imagefs.available = 0%
imagefs.inodesFree = 0%
nodefs.inodesFree = 0%
nodefs.available = 6Mi
[eviction]
pressure-transition-period = 0s
image-minimum-gc-age = 0s
C
	: > "$T/stderr"
	"$B/evictd" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >/dev/null 2>>"$T/stderr" & DPID=$!
	sleep 2
	avail=$(df -B1 --output=avail "$T/nodefs" | tail -1)
	t0=$(ms)
	dd if=/dev/zero of="$T/nodefs/fill" bs=4K count=$(( (avail - (4 << 20)) / 4096 )) status=none
	for i in $(seq 2000); do grep -q "Evicting default/writer (nodefs.available" "$T/stderr" && break; sleep 0.005; done
	RESULT=$(( $(ms) - t0 ))
}

echo "bench-cri-refuse: fill crossing nodefs.available -> writer evicted, $RUNS runs each"
for way in none no-unused-image refuse-all; do
	v=()
	for r in $(seq "$RUNS"); do one "$way" 2>/dev/null; v+=("$RESULT"); done
	sorted=$(printf '%s\n' "${v[@]}" | sort -n | tr '\n' ' ')
	med=$(printf '%s\n' "${v[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
	label=$way; [ "$way" = refuse-all ] && label="refuse-all ($IMAGES images)"
	printf '  %-28s median %6s ms   runs: %s\n' "$label" "$med" "$sorted"
done
