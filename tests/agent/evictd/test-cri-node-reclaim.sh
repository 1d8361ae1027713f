#!/bin/bash
# Node-level reclaim before disk evictions (issue 31), the daemon against the stand-in CRI runtime
# (tests/cri/cri-standin.py: real gRPC and CRI messages, a test double, not containerd) on a tmpfs
# nodefs laid out as the kubelet's, with the runtime's image filesystem on it (single layout). One
# writer pod (priority 0, a 2 MiB emptyDir) is the eviction candidate; nodefs.available = 6Mi with
# 4 MiB available.
#   1. an unused 3 MiB image (its "layer" a file on nodefs): removed through RemoveImage, the step
#      logged with the signal before and after, the pod not evicted;
#   2. no unused image: the pod is evicted, nothing removed;
#   3. a dead container's 3 MiB log (not the newest dead instance): counted as the kubelet's pending
#      reclaim, the pod not evicted, nothing removed;
#   4. the same below the kubelet's own threshold (its configuration says 5Mi): the pod is evicted;
#   5. no runtime socket: one line at start says what is not done, the pod is evicted as before;
#   6. a runtime slower than runtime-request-timeout: the pod is evicted all the same, at most a
#      deadline later (the loop was never blocked).
# Takes about 25 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (creates cgroups, mounts a tmpfs)"
find_cgroup2
PY=$(cri_python) || skip_all "no python3 with grpc here (python3-grpcio)"

EVICTD=$BUILD/evictd
REC=$BUILD/tests/helpers/sigrecorder
[ -x "$EVICTD" ] && [ -x "$REC" ] || skip_all "evictd or the helpers are not built"
T=$(mktemp -d -t evictd-cri.XXXXXX)
ROOT=$CG2/evictd-cri-$TEST_TAG
W_UID=wwww-0001-cri
W=$ROOT/kubepods/besteffort/pod$W_UID
DPID=""; SPID=""; WPID=""; CASE=0

stop_all() {
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	[ -n "$WPID" ] && kill -9 "$WPID" 2>/dev/null
	wait "$DPID" "$SPID" "$WPID" 2>/dev/null
	DPID=""; SPID=""; WPID=""
	[ -e "$W/cgroup.kill" ] && echo 1 > "$W/cgroup.kill"
	wait_for 5 bash -c "! [ -d '$W' ] || rmdir '$W' 2>/dev/null"
}
cleanup() {
	stop_all
	for d in "$ROOT/kubepods/besteffort" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap 'cp -r "$T" /tmp/cri-keep 2>/dev/null; cleanup' EXIT
wait_for() {	# wait_for SECONDS COMMAND...
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done
}
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

mkdir -p "$ROOT/kubepods/besteffort" || skip_all "cannot create cgroups under $CG2"
mkdir -p "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=16m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"
printf '[pod]\nnamespace = default\nname = writer\npriority = 0\ntermination-grace-period = 1s\n' > "$T/meta/$W_UID.conf"
chmod 0644 "$T/meta/$W_UID.conf"
LOGDIR=$T/nodefs/logs/default_writer_$W_UID/app

# state [IMAGES-JSON] [EXTRA-CONTAINERS-JSON] [FAULTS-JSON]: the stand-in's view of the node
state() {
	cat > "$T/cri.json" <<EOF
{"image_filesystems": [{"mountpoint": "$T/nodefs", "used_bytes": 1}],
 "images": [{"id": "sha256:used", "tags": ["localhost/app:1"], "size": 1000}${1:+, $1}],
 "sandboxes": [{"id": "s1", "uid": "$W_UID", "name": "writer", "namespace": "default", "created_at": 1}],
 "containers": [{"id": "c-run", "sandbox": "s1", "name": "app", "image_ref": "sha256:used", "created_at": 30,
                 "writable_bytes": 1048576, "writable_inodes": 3, "log_path": "$LOGDIR/2.log"}${2:+, $2}],
 "faults": {${3:-}}}
EOF
}
# setup [CONF-LINES...]: the writer running with its emptyDir, nodefs filled to 4 MiB available
setup() {
	stop_all
	[ -e "$T/stderr" ] && mv "$T/stderr" "$T/stderr.$((++CASE))"
	# a new node each case: no eviction record of the previous daemon to resume (it would kill the writer)
	rm -rf "$T/nodefs"/* "$T/status.json" "$T/calls.jsonl" "$T/inflight"
	mkdir -p "$W" "$T/nodefs/kubelet/pods/$W_UID/volumes/kubernetes.io~empty-dir/data" "$LOGDIR" "$T/nodefs/images"
	dd if=/dev/zero of="$T/nodefs/kubelet/pods/$W_UID/volumes/kubernetes.io~empty-dir/data/f" bs=1M count=2 status=none
	: > "$LOGDIR/2.log"
	rm -f "$T/w.rec"
	"$REC" --cgroup "$W" "$T/w.rec" & WPID=$!
	daemon_conf
	sed -i 's/^interval = 1s/interval = 100ms/' "$T/evictd.conf"
	printf '%s\n' "nodefs.available = 6Mi" "[agent]" "kubelet-root-dir = $T/nodefs/kubelet" \
		"pod-logs-dir = $T/nodefs/logs" "container-runtime-endpoint = unix://$T/cri.sock" \
		"runtime-request-timeout = 1s" "metrics-file = $T/m.prom" \
		"[eviction]" "pressure-transition-period = 0s" "image-minimum-gc-age = 0s" "$@" >> "$T/evictd.conf"
	wait_for 5 test -s "$T/w.rec"
}
fill_to_4mi() {
	local avail
	avail=$(df -B1 --output=avail "$T/nodefs" | tail -1)
	dd if=/dev/zero of="$T/nodefs/fill" bs=4K count=$(( (avail - (4 << 20)) / 4096 )) status=none
}
standin() {	# standin [--refuse]
	rm -f "$T/cri.sock"
	"$PY" tests/cri/cri-standin.py --socket "$T/cri.sock" --state "$T/cri.json" --log "$T/calls.jsonl" "$@" &
	SPID=$!
	wait_for 10 test -S "$T/cri.sock"
}
start_daemon() {
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >"$T/out" 2>"$T/stderr" &
	DPID=$!
}
calls() { grep -c "\"method\": \"$1\"" "$T/calls.jsonl" 2>/dev/null; }
evicted() { grep -q "Evicting default/writer (nodefs.available" "$T/stderr"; }

# --- 1. an unused image covers the need ---------------------------------------------------------
setup
dd if=/dev/zero of="$T/nodefs/images/old" bs=1M count=3 status=none
state "{\"id\": \"sha256:old\", \"tags\": [\"localhost/old:1\"], \"size\": 3145728, \"file\": \"$T/nodefs/images/old\"}"
standin
fill_to_4mi
start_daemon
ok "1: the unused image is removed, logged with the signal before and after" wait_for 8 grep -q \
	"Node-level reclaim for nodefs.available: removed 1 unused image (3Mi: localhost/old:1); nodefs.available 4Mi -> 7Mi" "$T/stderr"
sleep 1.5
ok "1: ...through RemoveImage of that image alone" bash -c \
	"[ \$(grep -c '\"method\": \"RemoveImage\"' '$T/calls.jsonl') = 1 ] && grep -q 'sha256:old' '$T/calls.jsonl'"
ok "1: the in-use image stays" bash -c "! grep -q 'RemoveImage.*sha256:used' '$T/calls.jsonl'"
ok "1: no pod evicted" bash -c "! grep -q 'Evicting' '$T/stderr'"
ok "1: the writer runs" alive "$WPID"
ok "1: metrics count the image and its bytes" wait_for 16 grep -q "^evictd_node_reclaim_images_removed_total 1$" "$T/m.prom"
ok "1: ...and the runtime as up" grep -q "^evictd_runtime_up 1$" "$T/m.prom"
ok "1: the runtime's start line names it" grep -q "Container runtime standin 0 (CRI v1) at $T/cri.sock" "$T/stderr"

# --- 2. no unused image: the writer is evicted -------------------------------------------------
setup
state
standin
fill_to_4mi
start_daemon
ok "2: no unused image: the writer is evicted" wait_for 8 evicted
ok "2: nothing removed" test "$(calls RemoveImage)" = 0
ok "2: the ranking saw its writable layer (1Mi) beside emptyDir and logs" grep -q \
	"Evicting default/writer (nodefs.available.*" "$T/stderr"

# --- 3. a dead container's log is the kubelet's pending reclaim --------------------------------
DEAD="{\"id\": \"c-dead0\", \"sandbox\": \"s1\", \"name\": \"app\", \"image_ref\": \"sha256:used\", \"state\": \"EXITED\",
       \"created_at\": 10, \"log_path\": \"$LOGDIR/0.log\"},
      {\"id\": \"c-dead1\", \"sandbox\": \"s1\", \"name\": \"app\", \"image_ref\": \"sha256:used\", \"state\": \"EXITED\",
       \"created_at\": 20, \"log_path\": \"$LOGDIR/1.log\"}"
setup
dd if=/dev/zero of="$LOGDIR/0.log" bs=1M count=3 status=none
: > "$LOGDIR/1.log"
state "" "$DEAD"
standin
fill_to_4mi
start_daemon
ok "3: the dead containers' reclaim covers the need: logged (the older one of the live pod, its log), no pod evicted" \
	wait_for 8 grep -Eq "No pod evicted for nodefs.available \(4Mi\): the kubelet's own node-level reclaim \(1 dead container, 3(\.[0-9]+)?Mi\) covers the need" "$T/stderr"
sleep 1.5
ok "3: the writer runs" alive "$WPID"
ok "3: no eviction" bash -c "! grep -q 'Evicting' '$T/stderr'"
ok "3: evictd removed nothing (dead containers are the kubelet's)" test "$(calls RemoveImage)" = 0

# --- 4. the same, below the kubelet's own threshold: the kubelet evicts, so does evictd ----------
setup "[kubernetes]" "kubelet-config = $T/kubelet.yaml"
printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  nodefs.available: 5Mi\n' > "$T/kubelet.yaml"
dd if=/dev/zero of="$LOGDIR/0.log" bs=1M count=3 status=none
state "" "$DEAD"
standin
fill_to_4mi
start_daemon
ok "4: below the kubelet's threshold nothing pending counts: the writer is evicted" wait_for 8 evicted

# --- 5. no runtime socket -------------------------------------------------------------------
setup
sed -i "s|^container-runtime-endpoint = .*|container-runtime-endpoint = unix://$T/none.sock|" "$T/evictd.conf"
sed -i "s|^container-runtime-endpoint = .*|container-runtime-endpoint = none|" "$T/evictd.conf"
fill_to_4mi
start_daemon
ok "5: one line at start says what is not done and why" wait_for 5 grep -q \
	"No container runtime: container-runtime-endpoint = none. Not done: node-level reclaim before disk evictions (unused images, dead containers)" "$T/stderr"
ok "5: the writer is evicted as without a runtime" wait_for 8 evicted

# --- 6. a slow runtime ------------------------------------------------------------------------
setup
state "" "" "\"*\": {\"delay\": 6}"
standin
fill_to_4mi
t0=$(date +%s%3N)
start_daemon
ok "6: a runtime slower than its deadline: the writer is evicted all the same" wait_for 8 evicted
t1=$(date +%s%3N)
ok "6: ...within the deadline and a tick, not the runtime's 6 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 4000
ok "6: the runtime's silence is logged once" test "$(grep -c 'did not answer usably' "$T/stderr")" = 1

done_testing
