#!/bin/bash
# Node-level reclaim's image step made safe (issue 34), the daemon against the stand-in CRI runtime
# (tests/cri/cri-standin.py: real gRPC and CRI messages, a test double, not containerd) on a tmpfs
# nodefs that is also the image filesystem. One writer pod (priority 0, a 2 MiB emptyDir) is the
# eviction candidate; nodefs.available = 6Mi with 4 MiB available: 2 MiB are needed.
#   1. several images: in use by the running container, used only by an exited container, pinned,
#      the runtime's sandbox image (named only by Status verbose, as containerd 1.6.20 does: not
#      pinned), one in use at start and unused since, two never used (1.5 MiB each), and one whose
#      container starts after evictd's first listing: the two never-used ones are removed, in order,
#      after a new listing; every other survives; the images kept are journaled with why;
#  1b. the need is larger than every unused image: the one used only by an exited container stays
#      all the same (and the writer is evicted);
#   2. the runtime refuses one image: journaled once with its status, not asked again, the next
#      images are removed instead, no pod evicted;
#   3. the runtime refuses every removal: each image is asked once, then the writer is evicted;
#   4. the only unused image is younger than image-minimum-gc-age: the writer is evicted and one
#      line says which image was kept and why, as does --once;
#   5. a directory where node-reclaim.json belongs (the run directory's): moved aside once, said
#      so, the state saved in its place;
#   6. image-usage-refresh = 1s: a container using image X comes and goes between evictd's start
#      and the disk pressure (no full listing in between), image Y was used at the start only: at
#      the pressure X counts as used more recently, Y is removed first (LRU), the refresh asked
#      ListImages and ListContainers only, and X's use is saved in node-reclaim.json.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (creates cgroups, mounts a tmpfs)"
find_cgroup2
PY=$(cri_python) || skip_all "no python3 with grpc here (python3-grpcio)"

EVICTD=$BUILD/evictd
REC=$BUILD/tests/helpers/sigrecorder
[ -x "$EVICTD" ] && [ -x "$REC" ] || skip_all "evictd or the helpers are not built"
T=$(mktemp -d -t evictd-imgsafe.XXXXXX)
ROOT=$CG2/evictd-imgsafe-$TEST_TAG
W_UID=wwww-0001-img
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
[ -n "${KEEP:-}" ] && trap 'cp -r "$T" /tmp/imgsafe-keep 2>/dev/null; cleanup' EXIT
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
MB15=1572864

# img ID TAG [EXTRA-JSON]: an image of 1.5 MiB; with a file (its "layer", unlinked by RemoveImage) when asked
img() { printf '{"id": "%s", "tags": ["%s"], "size": %s%s}' "$1" "$2" "$MB15" "${3:+, $3}"; }
layer() {	# layer NAME: a 1.5 MiB file on nodefs, the JSON naming it
	dd if=/dev/zero of="$T/nodefs/images/$1" bs=512K count=3 status=none
	printf '"file": "%s"' "$T/nodefs/images/$1"
}
# state IMAGES-JSON [EXTRA-CONTAINERS-JSON] [EXTRA-TOP-LEVEL-JSON]
state() {
	cat > "$T/cri.json.new" <<EOF
{"image_filesystems": [{"mountpoint": "$T/nodefs", "used_bytes": 1}],
 "images": [{"id": "sha256:used", "tags": ["localhost/app:1"], "size": 1000}, $1],
 "sandboxes": [{"id": "s1", "uid": "$W_UID", "name": "writer", "namespace": "default", "created_at": 1}],
 "containers": [{"id": "c-run", "sandbox": "s1", "name": "app", "image_ref": "sha256:used", "created_at": 30,
                 "log_path": "$LOGDIR/2.log"}${2:+, $2}]${3:+, $3}}
EOF
	mv "$T/cri.json.new" "$T/cri.json"
}
setup() {	# setup [CONF-LINES...]: the writer running with its emptyDir
	stop_all
	[ -e "$T/stderr" ] && mv "$T/stderr" "$T/stderr.$((++CASE))"
	rm -rf "${T:?}/nodefs"/* "$T/status.json" "$T/calls.jsonl" "$T/inflight" "$T/node-reclaim.json"*
	mkdir -p "$W" "$T/nodefs/kubelet/pods/$W_UID/volumes/kubernetes.io~empty-dir/data" "$LOGDIR" "$T/nodefs/images"
	dd if=/dev/zero of="$T/nodefs/kubelet/pods/$W_UID/volumes/kubernetes.io~empty-dir/data/f" bs=1M count=2 status=none
	: > "$LOGDIR/2.log"
	rm -f "$T/w.rec"
	"$REC" --cgroup "$W" "$T/w.rec" & WPID=$!
	daemon_conf
	sed -i 's/^interval = 1s/interval = 100ms/' "$T/evictd.conf"
	printf '%s\n' "nodefs.available = 6Mi" "[agent]" "kubelet-root-dir = $T/nodefs/kubelet" \
		"pod-logs-dir = $T/nodefs/logs" "container-runtime-endpoint = unix://$T/cri.sock" \
		"runtime-request-timeout = 1s" \
		"[eviction]" "pressure-transition-period = 0s" "image-minimum-gc-age = 0s" "$@" >> "$T/evictd.conf"
	wait_for 5 test -s "$T/w.rec"
}
fill_to_4mi() {
	local avail
	avail=$(df -B1 --output=avail "$T/nodefs" | tail -1)
	dd if=/dev/zero of="$T/nodefs/fill" bs=4K count=$(( (avail - (4 << 20)) / 4096 )) status=none
}
standin() {
	rm -f "$T/cri.sock"
	"$PY" tests/cri/cri-standin.py --socket "$T/cri.sock" --state "$T/cri.json" --log "$T/calls.jsonl" &
	SPID=$!
	wait_for 10 test -S "$T/cri.sock"
}
start_daemon() {
	: > "$T/stderr"	# there before the first look at it
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >"$T/out" 2>>"$T/stderr" &
	DPID=$!
}
calls() { grep -c "\"method\": \"$1\"" "$T/calls.jsonl" 2>/dev/null; }
# the images RemoveImage was asked for, in order, one line each
removed() { "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    c = json.loads(l)
    if c["method"] == "RemoveImage": print(c["request"]["image"]["image"])' "$T/calls.jsonl"; }
kept() { [ "$(removed | grep -c "$1")" = 0 ]; }	# kept ID: RemoveImage never asked for it
gone_both() { local r; r=$(removed); grep -q "$1" <<< "$r" && grep -q "$2" <<< "$r"; }
evicted() { grep -q "Evicting default/writer (nodefs.available" "$T/stderr"; }
listings() { calls ListContainers; }

# --- 1. which images go, in which order, from which listing ----------------------------------------
setup
SB='"sandbox_image": "localhost/sandbox:1"'
IMAGES="$(img sha256:a-exited localhost/exited:1), $(img sha256:a-late localhost/late:1),
  $(img sha256:a-pinned localhost/pinned:1 '"pinned": true'), $(img sha256:a-sandbox localhost/sandbox:1),
  $(img sha256:b-n1 localhost/n1:1 "$(layer n1)"), $(img sha256:b-n2 localhost/n2:1 "$(layer n2)"),
  $(img sha256:c-l1 localhost/l1:1 "$(layer l1)")"
EXITED="{\"id\": \"c-init\", \"sandbox\": \"s1\", \"name\": \"init\", \"image_ref\": \"sha256:a-exited\", \"state\": \"EXITED\", \"created_at\": 5}"
OLD="{\"id\": \"c-old\", \"sandbox\": \"s1\", \"name\": \"old\", \"image_ref\": \"sha256:c-l1\", \"created_at\": 6}"
LATE="{\"id\": \"c-late\", \"sandbox\": \"s1\", \"name\": \"late\", \"image_ref\": \"sha256:a-late\", \"created_at\": 40}"
state "$IMAGES" "$EXITED, $OLD" "$SB"
standin
start_daemon
ok "1: the runtime's sandbox image is read from its verbose Status" wait_for 8 grep -q \
	"Container runtime's sandbox image: localhost/sandbox:1; never removed" "$T/stderr"
ok "1: evictd's first listing" wait_for 8 bash -c "[ \$(grep -c '\"method\": \"ListContainers\"' '$T/calls.jsonl') -ge 1 ]"
sleep 0.5
n_before=$(listings)
# since that listing: c-old is gone (localhost/l1:1 was last used then), c-late started with localhost/late:1
state "$IMAGES" "$EXITED, $LATE" "$SB"
fill_to_4mi
ok "1: two unused images removed for the 2 MiB needed" wait_for 8 grep -q \
	"Node-level reclaim for nodefs.available: removed 2 unused images (3Mi: localhost/n1:1, localhost/n2:1)" "$T/stderr"
sleep 1.5
ok "1: ...never used first, in order, and nothing else ($(removed | head -6 | tr '\n' ' '))" \
	test "$(removed | head -6 | tr '\n' ' ')" = "sha256:b-n1 sha256:b-n2 "
ok "1: the image of a container started after the last listing survives (listed again before removing)" \
	kept a-late
ok "1: ...a new listing came before the removal" test "$(listings)" -gt "$n_before"
ok "1: the sandbox image survives (not pinned: named by the runtime's Status)" kept a-sandbox
ok "1: the pinned image survives" kept a-pinned
ok "1: the image used only by an exited container survives" kept a-exited
ok "1: the least recently used image (used at the first listing) survives: not needed" kept c-l1
ok "1: the images kept are journaled with why" grep -q \
	"unused images may not be removed (yet): localhost/pinned:1 (1.5Mi, pinned by the runtime), localhost/sandbox:1 (1.5Mi, the runtime's sandbox image)" "$T/stderr"
ok "1: no pod evicted" bash -c "! grep -q 'Evicting' '$T/stderr'"
"$EVICTD" --once --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >"$T/once.txt" 2>/dev/null
ok "1: --once leaves the sandbox image out too" grep -q "may not remove localhost/sandbox:1: the runtime's sandbox image" "$T/once.txt"
ok "1: the writer runs" alive "$WPID"

# --- 1b. more needed than the unused images give: the exited container's image still stays ------
setup
state "$(img sha256:a-exited localhost/exited:1), $(img sha256:b-n1 localhost/n1:1 "$(layer n1)")" "$EXITED"
standin
fill_to_4mi
start_daemon
ok "1b: the one unused image is removed" wait_for 8 grep -q "removed 1 unused image (1.5Mi: localhost/n1:1)" "$T/stderr"
ok "1b: still short: the writer is evicted" wait_for 8 evicted
ok "1b: the image only an exited container uses survives ($(removed | head -6 | tr '\n' ' '))" kept a-exited

# --- 2. the runtime refuses one image ----------------------------------------------------------
setup
IMAGES="$(img sha256:b-n1 localhost/n1:1 "$(layer n1)"), $(img sha256:b-n2 localhost/n2:1 "$(layer n2)"),
  $(img sha256:b-n3 localhost/n3:1 "$(layer n3)")"
state "$IMAGES" "" '"remove_refused": {"sha256:b-n1": {"status": 9, "message": "image is in use by a container"}}'
standin
fill_to_4mi
start_daemon
ok "2: the refusal is journaled with the runtime's status" wait_for 8 grep -q \
	"The container runtime did not remove image localhost/n1:1 (sha256:b-n1):.*image is in use by a container; not tried again for 300 s" "$T/stderr"
ok "2: the next images are removed instead" wait_for 8 gone_both b-n2 b-n3
sleep 2
ok "2: the refused image was asked once ($(removed | head -6 | tr '\n' ' '))" test "$(removed | grep -c b-n1)" = 1
ok "2: ...and journaled once" test "$(grep -c 'did not remove image localhost/n1:1' "$T/stderr")" = 1
ok "2: no pod evicted" bash -c "! grep -q 'Evicting' '$T/stderr'"

# --- 3. the runtime refuses every removal ------------------------------------------------------
setup
IMAGES="$(img sha256:b-n1 localhost/n1:1 "$(layer n1)"), $(img sha256:b-n2 localhost/n2:1 "$(layer n2)")"
state "$IMAGES" "" '"remove_refused": {"*": {"status": 13, "message": "stand-in: internal error"}}'
standin
fill_to_4mi
t0=$(date +%s%3N)
start_daemon
ok "3: no image can help: the writer is evicted" wait_for 8 evicted
t1=$(date +%s%3N)
sleep 2
ok "3: ...each image asked once ($(removed | head -6 | tr '\n' ' '); $((t1 - t0)) ms from start to eviction)" \
	test "$(removed | head -6 | tr '\n' ' ')" = "sha256:b-n1 sha256:b-n2 "
ok "3: ...each refusal journaled once" test "$(grep -c 'The container runtime did not remove image' "$T/stderr")" = 2
ok "3: ...listings stay few ($(listings))" test "$(listings)" -le 6

# --- 4. an image too young: evicted, and said why --------------------------------------------
setup
sed -i 's/^image-minimum-gc-age = 0s/image-minimum-gc-age = 2m/' "$T/evictd.conf"
state "$(img sha256:b-young localhost/young:1 "$(layer young)")"
standin
fill_to_4mi
start_daemon
ok "4: the writer is evicted" wait_for 8 evicted
ok "4: one line names the image kept and why" grep -Eq \
	"Node-level reclaim for nodefs.available: 1 unused image may not be removed \(yet\): localhost/young:1 \(1.5Mi, younger than image-minimum-gc-age, first seen [0-9]+ s ago\); image-minimum-gc-age = 120 s" "$T/stderr"
ok "4: ...once" test "$(grep -c 'may not be removed (yet)' "$T/stderr")" = 1
ok "4: nothing removed" test "$(calls RemoveImage)" = 0
"$EVICTD" --once --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >"$T/once.txt" 2>/dev/null
ok "4: --once says it too" grep -q "may not remove localhost/young:1: younger than image-minimum-gc-age" "$T/once.txt"

# --- 5. a directory where the state file belongs ------------------------------------------------
setup
mkdir -p "$T/node-reclaim.json/something"
state "$(img sha256:b-n1 localhost/n1:1)"
standin
start_daemon
ok "5: the directory is moved aside once, said so" wait_for 8 grep -q \
	"$T/node-reclaim.json was not node-level reclaim's state file (a directory or another kind of file): moved to $T/node-reclaim.json~unusable" "$T/stderr"
ok "5: the state is saved in its place" wait_for 8 test -f "$T/node-reclaim.json"
ok "5: ...and no save fails" bash -c "! grep -q 'Cannot save' '$T/stderr'"
rm -rf "$T/node-reclaim.json~unusable"

# --- 6. images' use refreshed between disk episodes ----------------------------------------------
setup "image-usage-refresh = 1s"
IMAGES="$(img sha256:b-x localhost/x:1 "$(layer x)"), $(img sha256:b-y localhost/y:1 "$(layer y)")"
CY="{\"id\": \"c-y\", \"sandbox\": \"s1\", \"name\": \"y\", \"image_ref\": \"sha256:b-y\", \"created_at\": 6}"
CX="{\"id\": \"c-x\", \"sandbox\": \"s1\", \"name\": \"x\", \"image_ref\": \"sha256:b-x\", \"state\": \"EXITED\", \"created_at\": 40}"
state "$IMAGES" "$CY"
standin
start_daemon
ok "6: evictd's first listing (Y in use)" wait_for 8 bash -c "[ \$(grep -c '\"method\": \"ListContainers\"' '$T/calls.jsonl') -ge 1 ]"
sleep 0.3
n_status=$(calls ContainerStatus); n_stats=$(calls ListContainerStats); n_sb=$(calls ListPodSandbox)
n_before=$(listings)
# a job's container with image X runs (and exits) between listings; Y's container is gone
state "$IMAGES" "$CX"
listed_again() { [ "$(listings)" -gt "$n_before" ]; }
ok "6: the image usage is refreshed while no disk threshold is met" wait_for 5 listed_again
x_used() { "$PY" -c 'import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if any(i["id"] == "sha256:b-x" and i["last_used_monotonic_usec"] for i in d["images"]) else 1)' \
	"$T/node-reclaim.json" 2>/dev/null; }
ok "6: X's use is saved with the images' history" wait_for 3 x_used
ok "6: ...the refresh asks no ContainerStatus, ListContainerStats or ListPodSandbox" \
	test "$(calls ContainerStatus) $(calls ListContainerStats) $(calls ListPodSandbox)" = "$n_status $n_stats $n_sb"
state "$IMAGES"
fill_to_4mi
ok "6: both unused images removed for the 2 MiB needed" wait_for 8 grep -q \
	"Node-level reclaim for nodefs.available: removed 2 unused images" "$T/stderr"
ok "6: ...the one unused for longer first: Y, then X ($(removed | head -4 | tr '\n' ' '))" \
	test "$(removed | head -4 | tr '\n' ' ')" = "sha256:b-y sha256:b-x "

done_testing
