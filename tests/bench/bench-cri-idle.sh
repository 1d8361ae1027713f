#!/bin/bash
# evictd's idle cost with and without a container runtime, side by side in the same windows: two
# evictd of this build on the idle configuration of bench-idle.sh (interval 1s, one nodefs
# threshold with plenty of headroom), one with container-runtime-endpoint = none, one with the
# stand-in runtime's socket (tests/cri/cri-standin.py: a test double, not containerd). Per window:
# CPU ms/min (schedstat), wake-ups/min (voluntary context switches), and the CRI calls the second
# one made in the window: the runtime is listed at start and then only while a disk threshold is
# met; in between, ListImages + ListContainers every image-usage-refresh (IMAGE_USAGE_REFRESH,
# default the shipped 5m: a window of 30 s mostly sees none, one of 300 s one).
#   tests/bench/bench-cri-idle.sh [BUILD_DIR]     WINDOWS (default 2) of SECONDS (default 30); about 70 s
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-${BUILD:-build}}
WINDOWS=${WINDOWS:-2}
SECONDS_PER_WINDOW=${SECONDS:-30}
[ -x "$B/evictd" ] || { echo "bench-cri-idle: $B/evictd not built" >&2; exit 1; }
[ -r /proc/self/schedstat ] || { echo "bench-cri-idle: skipped: no /proc/PID/schedstat"; exit 0; }
PY=
for p in python3 /usr/bin/python3; do
	command -v "$p" >/dev/null && "$p" -c 'import grpc' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "bench-cri-idle: skipped: no python3 with grpc (python3-grpcio)"; exit 0; }

cg=
for c in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	[ "$(stat -f -c %T "$c" 2>/dev/null)" = cgroup2fs ] && cg=$c
done
tmp=$(mktemp -d /dev/shm/bench-cri-idle.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# 110 pods × 3 containers over 50 images, as bench-cri lists: what a refresh of images' use decodes
"$PY" - "$tmp/cri.json" <<'PY'
import json, sys
images = [{"id": "sha256:%064x" % i, "tags": ["localhost/app%d:1" % i], "size": 1 << 20} for i in range(50)]
sandboxes = [{"id": "s%d" % p, "uid": "u%d" % p, "name": "p%d" % p, "namespace": "default", "created_at": 1}
             for p in range(110)]
containers = [{"id": "c%d-%d" % (p, k), "sandbox": "s%d" % p, "name": "c%d" % k,
               "image_ref": images[(p * 3 + k) % 50]["id"], "created_at": 2} for p in range(110) for k in range(3)]
json.dump({"image_filesystems": [{"mountpoint": "/dev/shm", "used_bytes": 1}], "images": images,
           "sandboxes": sandboxes, "containers": containers}, open(sys.argv[1], "w"))
PY
"$PY" tests/cri/cri-standin.py --socket "$tmp/cri.sock" --state "$tmp/cri.json" --log "$tmp/calls.jsonl" &
pids+=($!)
for i in $(seq 100); do [ -S "$tmp/cri.sock" ] && break; sleep 0.1; done

conf() {	# conf NAME ENDPOINT
	mkdir -p "$tmp/$1"
	cat >"$tmp/$1/evictd.conf" <<CONF
[agent]
interval = 1s
nodefs-path = /dev/shm
imagefs-path = /dev/shm
status-file = $tmp/$1/status.json
run-directory = $tmp/$1
pod-metadata-dir = $tmp/$1
container-runtime-endpoint = $2
[eviction]
image-usage-refresh = ${IMAGE_USAGE_REFRESH:-5m}
[eviction-hard]
nodefs.available = 64Mi
memory.available = 0%
nodefs.inodesFree = 0%
imagefs.available = 0%
imagefs.inodesFree = 0%
CONF
	"$B/evictd" --config "$tmp/$1/evictd.conf" ${cg:+--cgroup-root "$cg"} --log-target stderr 2>"$tmp/$1/log" &
	pids+=($!)
}
conf none none
np=${pids[-1]}
conf cri "unix://$tmp/cri.sock"
cp=${pids[-1]}
sleep 5
grep -m1 'Container runtime' "$tmp/cri/log" || { cat "$tmp/cri/log" >&2; echo "bench-cri-idle: no runtime line" >&2; exit 1; }

cpu() { awk '{print $1}' "/proc/$1/schedstat"; }
wake() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/status"; }
per_min() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { printf "%.2f", (b - a) / 1e6 * 60e9 / t }'; }
wake_min() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { printf "%.1f", (b - a) * 60e9 / t }'; }
calls() { wc -l <"$tmp/calls.jsonl"; }
printf '%-8s %-28s %-28s %s\n' window "no runtime ms/min (wakes)" "with runtime ms/min (wakes)" "CRI calls in window"
for ((w = 1; w <= WINDOWS; w++)); do
	t0=$(date +%s%N); n0=$(cpu "$np"); nw0=$(wake "$np"); c0=$(cpu "$cp"); cw0=$(wake "$cp"); k0=$(calls)
	sleep "$SECONDS_PER_WINDOW"
	t1=$(date +%s%N); n1=$(cpu "$np"); nw1=$(wake "$np"); c1=$(cpu "$cp"); cw1=$(wake "$cp"); k1=$(calls)
	dt=$((t1 - t0))
	printf '%-8s %-28s %-28s %s\n' "$w" "$(per_min "$n0" "$n1" $dt) ($(wake_min "$nw0" "$nw1" $dt))" \
		"$(per_min "$c0" "$c1" $dt) ($(wake_min "$cw0" "$cw1" $dt))" "$((k1 - k0))"
done
echo "CRI calls in all: $(calls) (at start: Version, Status and one listing; then ListImages + ListContainers every ${IMAGE_USAGE_REFRESH:-5m})"
