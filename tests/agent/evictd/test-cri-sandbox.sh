#!/bin/bash
# The container runtime as the kubelet trusts it (issue 34, items 7 and 8), the daemon against the
# stand-in CRI runtime (tests/cri/cri-standin.py: real gRPC and CRI messages, a test double, not
# containerd) on a tmpfs nodefs laid out as the kubelet's, the runtime's image filesystem on it.
# Pods a and b (priority 0, no request), nodefs.available = 6Mi with 4 MiB available.
#   1. a's emptyDir holds 2 MiB, b's 1 MiB; a container in b's sandbox with a 3 MiB writable layer
#      is labelled with a's uid: its layer is b's (the kubelet goes container -> sandbox -> uid), so
#      b (4 MiB) is evicted, not a (2 MiB; 5 MiB were the label believed), and one line says so;
#   2. evictd starts before the runtime's socket exists: when the socket appears, one line says
#      node-level reclaim is on, and the disk pressure that follows removes an unused image
#      through it instead of evicting a pod.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

node_init cri-sandbox
PY=$(cri_python) || skip_all "no python3 with grpc here (python3-grpcio)"
A=aaaa-0001-cri B=bbbb-0002-cri
SPID=""
stop_standin() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null; SPID=""; }
trap 'stop_standin; node_cleanup' EXIT

# state [IMAGES-JSON] [CONTAINERS-JSON]: the stand-in's view of the node, a's and b's sandboxes
state() {
	cat > "$T/cri.json" <<EOF
{"image_filesystems": [{"mountpoint": "$T/nodefs", "used_bytes": 1}],
 "images": [{"id": "sha256:used", "tags": ["localhost/app:1"], "size": 1000}${1:+, $1}],
 "sandboxes": [{"id": "sa", "uid": "$A", "name": "a", "namespace": "default", "created_at": 1},
               {"id": "sb", "uid": "$B", "name": "b", "namespace": "default", "created_at": 2}],
 "containers": [{"id": "ca", "sandbox": "sa", "name": "main", "image_ref": "sha256:used", "created_at": 3,
                 "writable_bytes": 4096, "writable_inodes": 1}${2:+, $2}]}
EOF
}
standin() {
	rm -f "$T/cri.sock"
	"$PY" tests/cri/cri-standin.py --socket "$T/cri.sock" --state "$T/cri.json" --log "$T/calls.jsonl" &
	SPID=$!
	node_wait 10 test -S "$T/cri.sock"
}
conf() {
	node_conf 6Mi "image-minimum-gc-age = 0s" "[agent]" "container-runtime-endpoint = unix://$T/cri.sock" \
		"runtime-request-timeout = 5s"	# the stand-in is python: slow on a loaded machine
}
pods() {
	stop_standin
	node_reset
	[ -s "$T/stderr" ] && mv "$T/stderr" "$T/stderr.$((++CASE))"
	: > "$T/stderr"
	rm -f "$T/calls.jsonl" "$T/node-reclaim.json"
	node_pod $A a 0; APID=$NODE_PID
	node_pod $B b 0; BPID=$NODE_PID
	node_emptydir $A 2
	node_emptydir $B 1
}
CASE=0

# --- 1. a container labelled with another pod's uid than its sandbox's ---------------------------
pods
state "" "{\"id\": \"cx\", \"sandbox\": \"sb\", \"name\": \"side\", \"image_ref\": \"sha256:used\", \"created_at\": 4,
           \"writable_bytes\": 3145728, \"writable_inodes\": 5,
           \"labels\": {\"io.kubernetes.pod.uid\": \"$A\", \"io.kubernetes.container.name\": \"side\"}}"
standin
conf
node_fill_to 4
node_start
ok "label: b, whose sandbox holds the 3 MiB layer, is evicted" node_wait 8 node_logged "Evicting default/b (nodefs.available"
sleep 1.5
ok "label: a is not evicted" bash -c "! grep -q 'Evicting default/a' '$T/stderr'"
ok "label: a runs" node_alive "$APID"
ok "label: one line says the label disagreed with the sandbox" test "$(node_count \
	"Container cx (side) in sandbox sb of pod default/b (uid $B) is labelled io.kubernetes.pod.uid=$A: its disk usage is counted for the sandbox's pod")" = 1

# --- 2. the runtime's socket appears after evictd started -----------------------------------------
pods
mkdir -p "$T/nodefs/images"
dd if=/dev/zero of="$T/nodefs/images/old" bs=1M count=3 status=none
state "{\"id\": \"sha256:old\", \"tags\": [\"localhost/old:1\"], \"size\": 3145728, \"file\": \"$T/nodefs/images/old\"}"
rm -f "$T/cri.sock"
conf
node_start
ok "late: at start the runtime is not there, and its socket is followed" node_wait 5 node_logged \
	"Container runtime at $T/cri.sock: .*(asked again when a disk threshold is met, and when its socket appears)"
sleep 0.5
standin
ok "late: one line says node-level reclaim turns on when the socket appears" node_wait 5 node_logged \
	"Container runtime standin 0 (CRI v1) at $T/cri.sock (its socket appeared: node-level reclaim turns on): node-level reclaim before disk evictions"
ok "late: ...once" test "$(node_count "its socket appeared")" = 1
ok "late: the new runtime is listed at once, before any disk pressure" node_wait 5 grep -q '"method": "ListImages"' "$T/calls.jsonl"
node_fill_to 4
ok "late: the disk pressure that follows removes the unused image through it" node_wait 8 node_logged \
	"Node-level reclaim for nodefs.available: removed 1 unused image (3Mi: localhost/old:1); nodefs.available [0-9.]*Mi -> 7Mi"
sleep 1
ok "late: no pod evicted" bash -c "! grep -q 'Evicting' '$T/stderr'"
node_stop

done_testing
